// The Node service of the example: writes and reads users' messages on the shard
// databases (`pg`), routing every statement with shardroute, while the topology in etcd
// changes under it. The same protocol, answers and rules as the Python service,
// service.py (README.md, "The service protocol"; docs/rebalancing.md):
//
//     node service.mjs --postgres 127.0.0.1:5432 --etcd http://127.0.0.1:2379 \
//         --service node --users 5000 --log acknowledged-node.log
//
// stdin, one command a line: `write <seconds>`, `read-all`, `query <seconds>`, `quit`;
// stdout, one JSON line each, after `{"event": "ready", "epoch": N}`. Log lines go to stderr.
//
// The topology comes from `EtcdFollower` of shardroute/etcd (the core's follower: newer
// epochs installed, bad documents refused and counted, the last good router kept), with
// `previous` read at the same etcd revision. What each statement does is the core's
// migration session, `MigrationSession.ofTopology(topology, previous)`, which decides the
// mode from what etcd holds (docs/rebalancing.md): `plain` (nothing moves), `background`
// (run A: a vbucket dictionary with a `forward_map`), `lazy` (run B: `previous` one epoch
// older; the first read of a user that moves, with no moved flag on the new owner, makes
// the session's `lazySteps`). The service asks it the same questions in every mode (write
// plan, read plan in its order, lazy steps, scan order) and never branches on the mode.
//
// A shard fenced above the statement's epoch refuses it; `session.fenced` says what that
// means (follow the topology: the follower reads etcd again), and the statement is
// planned again. Epochs are bigints end to end (to PostgreSQL as decimal strings).
//
// A message is written to its data shard, then its entry in the global index `by_sender`
// (on the shard the document's index routes the sender to), then to the oracle, the
// unsharded copy; only then is it acknowledged. `query` runs the example's two queries and
// checks each answer against the oracle: messages by sender (the index shard, then the
// data shards of the users its entries name, in the migration's scan order) and messages
// in a time range (scatter/gather over every node in the session's scan order,
// `scanNodes`: old owners before new ones while data moves, each node once), merged by id.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import pg from 'pg';
import { MigrationSession, Router, ShardrouteError, apply } from 'shardroute';
import { Etcd, EtcdError, EtcdFollower } from 'shardroute/etcd';

const PREFIX = '/shardroute/messages/';
const TOPOLOGY = `${PREFIX}topology`;
const PREVIOUS = `${PREFIX}previous`;
const SHARD_NAMES = Array.from({ length: 10 }, (_, i) => `shard_${i + 1}`);
const COLUMNS = 'id, user_id, vbucket, time, body, sender, sender_id';
const LAZY_MOVE_BATCH = 16; // shards.py's LAZY_MOVE_BATCH: a group of pending lazy moves is made once this full
// shards.py's FENCED_READ: the fence row joined to the read's rows, one statement.
const FENCED_READ_HEAD = 'SELECT f.min_epoch, q.* FROM fence f LEFT JOIN (SELECT 1 AS present, row_number() OVER () AS n, s.* FROM (';
const FENCED_READ_TAIL = ') s) q ON true ORDER BY q.n';
// shards.py's fenced(): a fenced write in one statement, the fence row taken FOR SHARE
// (held until the statement's implicit transaction commits, so raising the fence still
// waits for it) and the write `w` made only when the fence is at or below the epoch,
// here the statement's LAST parameter (`epochParam`, e.g. '$8'). The write names FENCE_OK
// where it must hold. Rows: { min_epoch, written }.
const FENCE_OK = '(SELECT ok FROM f)';
const fenced = (parts, epochParam) => `WITH f AS MATERIALIZED (SELECT min_epoch, min_epoch <= ${epochParam}::bigint AS ok FROM fence FOR SHARE), `
  + `${parts} SELECT (SELECT min_epoch FROM f) AS min_epoch, (SELECT count(*) FROM w) AS written`;
// shards.py's INSERT_MESSAGE and INSERT_INDEX: the services' two writes per message.
const INSERT_MESSAGE = `INSERT INTO messages (${COLUMNS}) SELECT $1::bigint, $2::bigint, $3::integer, $4::timestamptz, `
  + `$5::text, $6::text, $7::bigint WHERE ${FENCE_OK}`;
const INSERT_INDEX = `INSERT INTO by_sender (sender_id, message_id, user_id) SELECT $1::bigint, $2::bigint, $3::bigint WHERE ${FENCE_OK} `
  + 'ON CONFLICT DO NOTHING';
// shards.py's INSERT_ROWS and INSERT_MOVED ($8: the moved units, as an array; $9: the epoch).
const INSERT_ROWS = `INSERT INTO messages (${COLUMNS}) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::integer[], `
  + `$4::timestamptz[], $5::text[], $6::text[], $7::bigint[]) WHERE ${FENCE_OK} ON CONFLICT (id) DO NOTHING`;
const INSERT_MOVED = fenced(`w AS (${INSERT_ROWS} RETURNING 1), `
  + `flagged AS (INSERT INTO moved (unit) SELECT u FROM unnest($8::bigint[]) u WHERE ${FENCE_OK} ON CONFLICT DO NOTHING), `
  + `logged AS (INSERT INTO moves (unit) SELECT u FROM unnest($8::bigint[]) u WHERE ${FENCE_OK})`, '$9');
// shards.py's TIMELINE_PAGE (the messages a timeline read returns, newest first: its
// comment says why a page), which run.py passes to both services as `--page`; and its
// READ_PAGE ($2: the page, null for every row: `LIMIT NULL` is no limit).
const TIMELINE_PAGE = 10;
const READ_PAGE = 'SELECT id, time, body FROM messages WHERE user_id = $1 ORDER BY time DESC, id DESC LIMIT $2';
// shards.py's READ_MOVED: a moving user's rows on its new owner (a page of them, $2) and
// its moved flag (one row at least).
const READ_MOVED = 'SELECT m.id, m.time, m.body, f.moved FROM (SELECT EXISTS (SELECT 1 FROM moved WHERE unit = $1) AS moved) f '
  + 'LEFT JOIN LATERAL (SELECT id, time, body FROM messages WHERE user_id = $1 ORDER BY time DESC, id DESC LIMIT $2) m ON true';
const INDEX = 'by_sender';
// Tenants' channels and the reference table (shards.py's TENANT_TABLE, CHANNELS, PLANS,
// PLAN_ROWS; README.md, "Tenants and the reference table").
const TENANT_TABLE = 'tenant_messages';
const TENANT_COLUMNS = 'id, key, tenant, vbucket, time, body, sender';
// shards.py's INSERT_TENANT_MESSAGE.
const INSERT_TENANT_MESSAGE = `INSERT INTO ${TENANT_TABLE} (${TENANT_COLUMNS}) SELECT $1::bigint, $2::text, $3::text, $4::integer, `
  + `$5::timestamptz, $6::text, $7::text WHERE ${FENCE_OK}`;
const CHANNELS = 500; // keys per tenant: "acme:1" .. "acme:500"
const PLANS = 'plans';
const PLAN_ROWS = { free: 100n, startup: 1000n, team: 10000n, nonprofit: 50000n, enterprise: 1000000n }; // plan -> max_messages, seeded by run.py
const UPSERT_PLAN = `INSERT INTO ${PLANS} (plan, max_messages, written_by) SELECT $1::text, $2::bigint, $3::text WHERE ${FENCE_OK} `
  + 'ON CONFLICT (plan) DO UPDATE SET max_messages = EXCLUDED.max_messages, written_by = EXCLUDED.written_by';
const PREPARED = new Map(); // statement text -> the name it is prepared under (Shards.query)
const ORACLE = 'oracle'; // the database with every message, unsharded: what queries are checked against

// Message ids: the ticket layout, one ticket server per service; blocks are reserved by
// a compare-and-swap on the service's counter in etcd.
const TICKETS = {
  format: 'shardroute/1',
  epoch: 1,
  nodes: [{ id: 'python' }, { id: 'node' }],
  strategy: { type: 'id_bits', layout: 'ticket', servers: 2 },
};
const TICKET_SERVER = { python: 0, node: 1 };
const ID_BLOCK = 1000;

let serviceName = 'node';

function log(message) {
  process.stderr.write(`[${serviceName}] ${message}\n`);
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/**
 * A timestamp as microseconds since 1970 (a bigint), from PostgreSQL's text of a
 * timestamptz ('2026-12-07 23:01:02.123456+00', the fraction and the offset's minutes
 * optional: how the shards' rows come, see TYPES) or from an ISO string of a JS Date (how
 * this service writes them): times compared exactly, as the shards order them.
 */
function micros(text) {
  const pg = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?([+-]\d\d)(?::(\d\d))?$/.exec(text);
  if (pg === null) {
    const ms = Date.parse(text);
    if (Number.isNaN(ms)) throw new Error(`not a timestamp: ${text}`);
    return BigInt(ms) * 1000n;
  }
  const [, day, clock, fraction = '', hours, minutes = '00'] = pg;
  const seconds = Date.parse(`${day}T${clock}${hours}:${minutes}`);
  if (Number.isNaN(seconds)) throw new Error(`not a timestamp: ${text}`);
  return BigInt(seconds) * 1000n + BigInt(fraction.padEnd(6, '0'));
}

/**
 * The page of a timeline from its rows merged by id (Map id -> row with `at`: micros):
 * newest first in the shards' order (time, then id, both descending), the first `page` of
 * them (all with null); service.py's `take_page`.
 */
function takePage(found, page) {
  const ordered = [...found.values()].sort((a, b) => {
    if (a.at !== b.at) return a.at < b.at ? 1 : -1;
    const [x, y] = [BigInt(a.id), BigInt(b.id)];
    return x === y ? 0 : x < y ? 1 : -1;
  });
  return page === null ? ordered : ordered.slice(0, page);
}

/**
 * The page rule (service.py's `missed_in_page` is the same): a message this process
 * acknowledged for the user (`mine`: Map id -> the time it was written with, micros) is
 * expected in the page when the page is not full (fewer than `page` rows, or no limit: the
 * whole timeline), or when it is newer than the page's oldest row in the page's order
 * (time, then id); an older one is rightly left off. Whether an expected message is missing.
 */
function missedInPage(shown, page, mine) {
  const ids = new Set(shown.map((row) => row.id));
  const oldest = page !== null && shown.length >= page ? shown[shown.length - 1] : null;
  const newer = (id, at) => oldest === null || at > oldest.at || (at === oldest.at && BigInt(id) > BigInt(oldest.id));
  return [...mine].some(([id, at]) => newer(id, at) && !ids.has(id));
}
const bodyDigest = (body) => createHash('sha256').update(body).digest('hex');

/** One JSON line on stdout; bigints (epochs) are written as JSON numbers, exactly. */
function emit(line) {
  const text = JSON.stringify(line, (_, value) => (typeof value === 'bigint' ? `${value}n\u0000` : value));
  process.stdout.write(`${text.replace(/"(\d+)n\\u0000"/g, '$1')}\n`);
}

/** The shard's fence is above the statement's epoch: re-read etcd and retry. */
class Fenced extends Error {
  constructor(shard, epoch, minEpoch) {
    super(`${shard} refused epoch ${epoch}: its fence is at ${minEpoch}`);
    this.name = 'Fenced';
    this.epoch = epoch;
    this.minEpoch = minEpoch;
  }
}

/**
 * Timestamps stay PostgreSQL's text (a JS Date would cut microseconds), so a row copied
 * by a lazy move keeps its exact time; bigints are strings already.
 */
const TYPES = {
  getTypeParser: (oid, format) => (oid === pg.types.builtins.TIMESTAMPTZ ? (text) => text : pg.types.getTypeParser(oid, format)),
};

/**
 * One connection per shard database. Every statement reads the shard's fence in the same
 * statement (one round trip); a write takes the fence row `FOR SHARE`, held until its
 * statement commits, so raising the fence (an `UPDATE`, which needs the row lock) waits
 * for every write in flight and no write chosen under an older epoch commits after it.
 */
class Shards {
  static async connect(postgres, names) {
    const at = postgres.lastIndexOf(':');
    const [host, port] = [postgres.slice(0, at), Number(postgres.slice(at + 1))];
    const shards = new Shards();
    shards.connections = new Map();
    shards.statements = 0; // statements sent (each one round trip), for the counters
    shards.raised = new Map(); // shard -> the highest epoch this object saw its fence raised to (a bigint)
    await Promise.all(names.map(async (name) => {
      const client = new pg.Client({ host, port, user: 'postgres', database: name, types: TYPES, application_name: serviceName });
      // A connection that dies fails the statement in flight; the error event must not crash us.
      client.on('error', (err) => log(`${name}: ${err.message}`));
      await client.connect();
      shards.connections.set(name, client);
    }));
    return shards;
  }

  async close() {
    await Promise.all([...this.connections.values()].map((client) => client.end().catch(() => {})));
  }

  /** A `by_sender` entry (idempotent), fenced as every write is. */
  async insertIndex(shard, epoch, sender, id, user) {
    await this.write(shard, epoch, INSERT_INDEX, [sender, id, user]);
  }

  /**
   * A statement through a named prepared statement (one per text, made on first use on
   * each connection): parsed and planned once per connection, as psycopg's automatic
   * preparation does for the Python service.
   */
  async query(shard, text, values) {
    let name = PREPARED.get(text);
    if (name === undefined) {
      name = `s${PREPARED.size}`;
      PREPARED.set(text, name);
    }
    this.statements += 1;
    return this.connections.get(shard).query({ name, text, values });
  }

  /** `sql`'s rows, read in one statement with the fence (shards.py's FENCED_READ): one round trip. */
  async read(shard, epoch, sql, params = []) {
    const { rows } = await this.query(shard, FENCED_READ_HEAD + sql + FENCED_READ_TAIL, params);
    const minEpoch = BigInt(rows[0].min_epoch);
    if (minEpoch > epoch) throw new Fenced(shard, epoch, minEpoch);
    return rows.filter((row) => row.present !== null).map(({ min_epoch: _fence, present: _present, n: _n, ...row }) => row);
  }

  /**
   * One fenced write, one statement (shards.py's `write`): `sql` names FENCE_OK where it
   * must hold, without RETURNING. Its row count.
   */
  async write(shard, epoch, sql, params = []) {
    if (!sql.includes(FENCE_OK)) throw new Error(`a fenced write names FENCE_OK: ${sql}`);
    return this.fencedWrite(shard, epoch, fenced(`w AS (${sql} RETURNING 1)`, `$${params.length + 1}`), params);
  }

  /** Runs a `fenced(...)` statement whose last parameter is the epoch; its rows written. */
  async fencedWrite(shard, epoch, statement, params) {
    const { rows } = await this.query(shard, statement, [...params, String(epoch)]);
    const minEpoch = BigInt(rows[0].min_epoch);
    if (minEpoch > epoch) throw new Fenced(shard, epoch, minEpoch);
    return Number(rows[0].written);
  }

  /**
   * Copies rows in (`ON CONFLICT DO NOTHING`: a row already there is skipped), and marks
   * `movedUnits` moved in the same statement, so a flag never exists without its rows.
   * Returns the rows actually inserted.
   */
  async insertRows(shard, epoch, rows, movedUnits = []) {
    // One statement for the rows (an array per column), the flag and the log of the move,
    // as shards.py's INSERT_MOVED.
    const columns = ['id', 'user_id', 'vbucket', 'time', 'body', 'sender', 'sender_id'].map((name) => rows.map((row) => row[name]));
    if (movedUnits.length > 0) return this.fencedWrite(shard, epoch, INSERT_MOVED, [...columns, movedUnits]);
    return rows.length ? this.write(shard, epoch, INSERT_ROWS, columns) : 0;
  }

  /**
   * The shard refuses every statement below `epoch` from now on; returns once the writes
   * in flight (which hold the fence row `FOR SHARE`) have committed.
   */
  async raiseFence(shard, epoch) {
    // A fence only rises: once raised through this object, not sent again (shards.py's raise_fence).
    if (this.raised.has(shard) && this.raised.get(shard) >= BigInt(epoch)) return;
    // Only a fence below `epoch` is updated (shards.py's RAISE_FENCE says why).
    this.statements += 1;
    await this.connections.get(shard).query('UPDATE fence SET min_epoch = $1 WHERE min_epoch < $1', [String(epoch)]);
    this.raised.set(shard, BigInt(epoch));
  }

  /**
   * The lazy move of docs/rebalancing.md, run B, as the core's migration session gives it
   * (`MigrationSession.lazySteps`), for users whose steps are the same: raise the old
   * owner's fence, copy the users' rows from `readFrom` to `writeTo` with their moved
   * flags, delete them from `retireFrom`, all under `fenceEpoch`, each step one statement
   * for them all. Every step is idempotent, so two movers of one user (two services, or a
   * service and the sweep) neither lose nor duplicate a row. Returns the rows this call
   * inserted.
   */
  async moveUsers(users, steps) {
    const { readFrom: from, writeTo: to, retireFrom: retire, fenceEpoch: epoch } = steps;
    await this.raiseFence(retire, epoch);
    const rows = await this.read(from, epoch, `SELECT ${COLUMNS} FROM messages WHERE user_id = ANY($1)`, [users]);
    const inserted = await this.insertRows(to, epoch, rows, users);
    await this.write(retire, epoch, `DELETE FROM messages WHERE user_id = ANY($1) AND ${FENCE_OK}`, [users]);
    return inserted;
  }

  /**
   * The user's rows on `shard` (the newest `limit`, newest first, or all with null) and its
   * moved flag there, in one statement (shards.py's `read_moved`).
   */
  async readMoved(shard, epoch, user, limit = null) {
    const rows = await this.read(shard, epoch, READ_MOVED, [user, limit]);
    return { rows: rows.filter((row) => row.id !== null), flagged: rows[0].moved };
  }
}

/** Ticket ids from blocks reserved by a compare-and-swap on the service's counter. */
class Ids {
  constructor(etcd, service) {
    this.etcd = etcd;
    this.key = `${PREFIX}ids/${service}`;
    this.server = TICKET_SERVER[service];
    this.pending = [];
  }

  async reserve(size = ID_BLOCK) {
    for (;;) {
      const { value, modRevision } = await this.etcd.get(this.key);
      const counter = value ? BigInt(value) : 1n;
      const block = apply(TICKETS, {
        op: 'id_bits_reserve_block', shard: this.server, auto_increment: counter, block_size: size,
      });
      if ((await this.etcd.cas(this.key, String(block.auto_increment), modRevision)) !== 0n) {
        const [first, last, step] = [BigInt(block.first), BigInt(block.last), BigInt(block.step)];
        const ids = [];
        for (let id = first; id <= last; id += step) ids.push(id);
        return ids;
      }
    }
  }

  async next() {
    if (this.pending.length === 0) this.pending = (await this.reserve()).reverse();
    return this.pending.pop();
  }
}

class Service {
  constructor(etcd, shards, name, users, logPath, page = TIMELINE_PAGE) {
    this.name = name;
    this.users = users;
    this.page = page; // a timeline read's newest messages (shards.py's TIMELINE_PAGE)
    this.etcd = etcd;
    this.shards = shards;
    this.ids = new Ids(etcd, name);
    this.acknowledged = openSync(logPath, 'a');
    // Tenant messages are acknowledged in a log of their own: `id key sha256(body)`.
    this.acknowledgedTenants = openSync(`${logPath}.tenants`, 'a');
    this.mineTenant = new Map(); // tenant key -> ids this process saw acknowledged
    this.planNodes = new Set(); // the nodes the reference reads went to (the core's picks)
    this.quota = null; // the value this process last wrote to its own `plans` row (a bigint)
    this.mine = new Map(); // user -> Map: ids this process saw acknowledged -> their time (micros)
    this.pendingMoves = new Map(); // lazy steps -> { steps, users read unmoved }
    this.moved = { epoch: null, users: new Set() }; // a fence epoch, the users seen moved under it
    this.routing = null;
    this.epochs = []; // bigints, ascending
    this.follower = null;
    this.oracle = null;
    this.readsBefore = 0n; // the follower's etcd reads at the last reset
    this.reset();
  }

  /** The service routing under the topology in etcd, following it. */
  static async start(postgres, etcdUrl, name, users, logPath, page = TIMELINE_PAGE) {
    const etcd = new Etcd(etcdUrl);
    const service = new Service(etcd, await Shards.connect(postgres, SHARD_NAMES), name, users, logPath, page);
    // The unsharded copy, one connection as a shard's.
    service.oracle = (await Shards.connect(postgres, [ORACLE])).connections.get(ORACLE);
    service.follower = await EtcdFollower.start(etcd, TOPOLOGY, {
      also: [PREVIOUS],
      onChange: (follower) => service.follow(follower),
      onRefused: (follower, offered) => log(`refused the topology in etcd: ${offered.code}: ${offered.message}; keeping epoch ${service.epoch()}`),
      onError: (err) => log(`following etcd: ${err.message ?? err}`),
    });
    if (service.routing === null) throw new Error(`no usable topology in etcd at ${TOPOLOGY}`);
    service.reset();
    return service;
  }

  // -- the topology --------------------------------------------------------------------

  /**
   * A new router (or new companions): the statements' routing from now on. A `previous`
   * document that does not parse keeps the routing in force.
   */
  follow(follower) {
    const { router } = follower;
    if (router === null) return;
    const previous = follower.companions.get(PREVIOUS) ?? null;
    let session;
    try {
      session = MigrationSession.ofTopology(router, previous === null ? null : new Router(previous));
    } catch (err) {
      if (!(err instanceof ShardrouteError)) throw err;
      log(`refused epoch ${router.epoch}: previous: ${err.code}: ${err.message}; keeping epoch ${this.epoch()}`);
      return;
    }
    // Swapped whole: the core's session (every routing decision), the global index's
    // router, and the router of the `vbucket` column (run A's dictionary; 0 in run B).
    // The reference table's router (`table("plans")`) when the document has it, and the
    // tenants the document names (its `tenants` entries).
    const document = JSON.parse(router.toJson());
    const vbuckets = document.strategy.type === 'vbucket' ? router : null;
    const families = Object.values(document.table_families ?? {});
    const plans = families.some((family) => family.tables.includes(PLANS)) ? router.table(PLANS) : null;
    const tenants = Object.keys(document.tenants?.entries ?? {}).sort();
    this.routing = { session, index: router.index(INDEX), vbuckets, plans, tenants };
    if (this.epochs.at(-1) !== session.fenceEpoch) this.epochs.push(session.fenceEpoch);
    log(`epoch ${session.fenceEpoch} (${session.mode})`);
  }

  epoch() {
    return this.routing ? this.routing.session.fenceEpoch : 0n;
  }

  /**
   * A shard refused a statement planned under `routing`: etcd has a newer epoch (the fence
   * is raised after the document is written), which the watch may not have brought yet,
   * or is about to (the widening of the reference group fences first: README.md); with
   * nothing newer in etcd, wait a little. What a refusal of a write under the fence epoch means is the session's; either
   * way the follower reads etcd again and the statement is planned again.
   */
  async fenced(routing, err) {
    this.count('refused_by_fence');
    if (err.epoch === routing.session.fenceEpoch) {
      const action = routing.session.fenced(err.minEpoch);
      if (action !== 'refresh') throw new Error(`the migration session answered ${action} to a fence refusal`);
    }
    try {
      await this.follower.refresh();
    } catch (failure) {
      if (!(failure instanceof EtcdError)) throw failure;
      log(`reading the topology failed (${failure.message}); keeping epoch ${this.epoch()}`);
    }
    if (this.epoch() <= routing.session.fenceEpoch) await sleep(10);
  }

  // -- statements ----------------------------------------------------------------------

  async insert(user) {
    const id = await this.ids.next();
    const body = `${this.name} says ${randomBytes(8).toString('hex')} to user ${user}`;
    const sender = this.randomUser();
    let row;
    for (;;) {
      const { routing } = this;
      const { node, fenceEpoch: epoch } = routing.session.writePlan(user);
      const vbucket = routing.vbuckets ? routing.vbuckets.route(user) : 0;
      row = [String(id), user, vbucket, new Date().toISOString(), body, this.name, sender];
      try {
        await this.shards.write(node, epoch, INSERT_MESSAGE, row);
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        continue;
      }
      break;
    }
    for (;;) { // the index entry, where the index routes the sender
      const { routing } = this;
      try {
        await this.shards.insertIndex(routing.index.node(sender), routing.session.fenceEpoch, sender, String(id), user);
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        continue;
      }
      break;
    }
    await this.oracle.query(`INSERT INTO messages (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`, row);
    // Logged (and written through) before it counts: an insert this process never logged
    // is not acknowledged, whatever the shard holds.
    writeSync(this.acknowledged, `${id} ${user} ${bodyDigest(body)}\n`);
    if (!this.mine.has(user)) this.mine.set(user, new Map());
    this.mine.get(user).set(String(id), micros(row[3]));
    this.count('writes');
  }

  /**
   * The lazy moves of the users this process read unmoved since the last call, a group
   * (same steps) at a time (service.py's `move_pending`).
   */
  /** Whether this process saw `user` moved under `fenceEpoch` (service.py's `known_moved`). */
  knownMoved(fenceEpoch, user) {
    if (this.moved.epoch !== String(fenceEpoch)) this.moved = { epoch: String(fenceEpoch), users: new Set() };
    return user === null || this.moved.users.has(user);
  }

  async movePending(only = null) {
    const began = performance.now();
    const { statements } = this.shards;
    try {
      await this.movePendingNow(only);
    } finally {
      this.count('move_us', Math.round((performance.now() - began) * 1000));
      this.count('move_statements', this.shards.statements - statements);
    }
  }

  async movePendingNow(only) {
    let pending = this.pendingMoves;
    if (only === null) {
      this.pendingMoves = new Map();
    } else {
      pending = new Map([[only, pending.get(only)]]);
      this.pendingMoves.delete(only);
    }
    const { routing } = this;
    for (const { steps, users } of pending.values()) {
      const same = (other) => other !== null && other.readFrom === steps.readFrom && other.writeTo === steps.writeTo
        && other.retireFrom === steps.retireFrom && String(other.fenceEpoch) === String(steps.fenceEpoch);
      const still = [...users].filter((user) => same(routing.session.lazySteps(user))).sort((a, b) => a - b);
      if (still.length === 0) continue;
      try {
        this.count('moved_rows', await this.shards.moveUsers(still, steps));
        this.count('moved_users', still.length);
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        continue;
      }
      if (this.knownMoved(steps.fenceEpoch, null)) for (const user of still) this.moved.users.add(user);
    }
  }

  /**
   * A message on a tenant's channel: where the session's write plan says (the core
   * applies the document's tenant rule to the key), then acknowledged (service.py's `insert_tenant`).
   */
  async insertTenant(key, tenant) {
    const id = await this.ids.next();
    const body = `${this.name} says ${randomBytes(8).toString('hex')} on ${key}`;
    for (;;) {
      const { routing } = this;
      const { node, fenceEpoch: epoch } = routing.session.writePlan(key);
      const vbucket = routing.vbuckets ? routing.vbuckets.route(key) : 0;
      const row = [String(id), key, tenant, vbucket, new Date().toISOString(), body, this.name];
      try {
        await this.shards.write(node, epoch, INSERT_TENANT_MESSAGE, row);
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        continue;
      }
      break;
    }
    writeSync(this.acknowledgedTenants, `${id} ${key} ${bodyDigest(body)}\n`);
    if (!this.mineTenant.has(key)) this.mineTenant.set(key, new Set());
    this.mineTenant.get(key).add(String(id));
    this.count('tenant_writes');
  }

  /**
   * A tenant channel's message ids: the union of the session's read plan, in its order
   * (old owner first); no moved flags for tenant keys (service.py's `tenant_channel`).
   */
  async tenantChannel(key) {
    for (;;) {
      const { routing } = this;
      const found = new Set();
      try {
        for (const shard of routing.session.readPlan(key, false)) {
          const rows = await this.shards.read(shard, routing.session.fenceEpoch, `SELECT id FROM ${TENANT_TABLE} WHERE key = $1`, [key]);
          for (const row of rows) found.add(row.id);
        }
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        continue;
      }
      if (![...(this.mineTenant.get(key) ?? [])].every((id) => found.has(id))) this.count('tenant_stale_reads');
      this.count('tenant_reads');
      return found;
    }
  }

  /**
   * A reference row read from the one node the core picks (`node`), checked against the
   * seed (PLAN_ROWS), or `expected` (a bigint): the value this process last wrote to it.
   */
  async readPlanRow(plan, expected = null) {
    for (;;) {
      const { routing } = this;
      const node = routing.plans.node(plan);
      let rows;
      try {
        rows = await this.shards.read(node, routing.session.fenceEpoch, `SELECT max_messages FROM ${PLANS} WHERE plan = $1`, [plan]);
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        continue;
      }
      if (expected === null) this.planNodes.add(node); // the seeded plans' picks (both languages read the same ones)
      this.count('plan_reads');
      if (rows.length !== 1 || BigInt(rows[0].max_messages) !== (expected ?? PLAN_ROWS[plan])) this.count('plan_wrong');
      return;
    }
  }

  /** A reference row written to every node `routeWrite` names; a refusal part way writes it again on all. */
  async writePlanRow(plan, maxMessages) {
    for (;;) {
      const { routing } = this;
      try {
        for (const node of routing.plans.routeWrite(plan)) {
          await this.shards.write(node, routing.session.fenceEpoch, UPSERT_PLAN, [plan, String(maxMessages), this.name]);
        }
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        continue;
      }
      this.quota = BigInt(maxMessages);
      this.count('plan_writes');
      return;
    }
  }

  /** Every fourth turn of `write`: a tenant message and a channel read; every eighth, a reference read. */
  async tenantTurn(turn) {
    const { routing } = this;
    if (routing.tenants.length > 0) {
      const tenant = routing.tenants[Math.floor(turn / 4) % routing.tenants.length];
      await this.insertTenant(`${tenant}:${1 + Math.floor(Math.random() * CHANNELS)}`, tenant);
      await this.tenantChannel(`${tenant}:${1 + Math.floor(Math.random() * CHANNELS)}`);
    }
    if (routing.plans !== null && turn % 8 === 0) {
      const names = Object.keys(PLAN_ROWS).sort();
      await this.readPlanRow(names[Math.floor(turn / 8) % names.length]);
    }
  }

  /**
   * The user's newest `page` messages (all of them with null), newest first: the union by
   * id of the read plan, each shard read a page (READ_PAGE), then the newest `page` of the
   * union (service.py's `timeline`).
   */
  async timeline(user, page = null) {
    for (;;) {
      const { routing } = this;
      const found = new Map();
      let full = null; // a group of pending moves to make now
      try {
        const steps = routing.session.lazySteps(user); // null unless this read moves the user
        const known = steps !== null && this.knownMoved(steps.fenceEpoch, user);
        let flagged = true;
        // In the plan's order (the core's: old owner first, see docs/rebalancing.md).
        const plan = routing.session.readPlan(user, known);
        if (plan.length > 1) this.count('two_shard_reads');
        for (const shard of plan) {
          let rows;
          if (steps !== null && !known && shard === steps.writeTo) {
            // The new owner's rows and its moved flag, in one statement.
            ({ rows, flagged } = await this.shards.readMoved(shard, steps.fenceEpoch, user, page));
          } else {
            rows = await this.shards.read(shard, routing.session.fenceEpoch, READ_PAGE, [user, page]);
          }
          for (const row of rows) found.set(row.id, { ...row, at: micros(row.time) });
        }
        if (steps !== null && !known && flagged) this.moved.users.add(user);
        if (steps !== null && !known && !flagged) {
          // Read from both owners, old first: complete. The move goes with the next few
          // this process meets (movePending; service.py's LAZY_MOVE_BATCH says why).
          const key = JSON.stringify([steps.readFrom, steps.writeTo, steps.retireFrom, String(steps.fenceEpoch)]);
          if (!this.pendingMoves.has(key)) this.pendingMoves.set(key, { steps, users: new Set() });
          this.pendingMoves.get(key).users.add(user);
          if (this.pendingMoves.get(key).users.size >= LAZY_MOVE_BATCH) full = key;
        }
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        continue;
      }
      const shown = takePage(found, page); // merged first, then the page taken
      if (missedInPage(shown, page, this.mine.get(user) ?? new Map())) this.count('stale_reads');
      this.count('reads');
      if (full !== null) await this.movePending(full);
      return shown.map((row) => [row.id, row.body]);
    }
  }

  // -- queries -------------------------------------------------------------------------

  /**
   * Messages sent by `sender`, through the global index: its entries on the index shard,
   * then the rows on the data shards of their users, visited in the scan order (old
   * owners before new ones while data moves), merged by id. Returns `{ found: Map id ->
   * [body, node], dangling: ids of entries no data shard had, moving }`.
   */
  async bySender(sender) {
    for (;;) {
      const { routing } = this;
      try {
        const entries = await this.shards.read(routing.index.node(sender), routing.session.fenceEpoch,
          'SELECT message_id, user_id FROM by_sender WHERE sender_id = $1', [sender]);
        const wanted = new Map();
        for (const { message_id: id, user_id: user } of entries) {
          for (const node of routing.session.readPlan(BigInt(user), false)) {
            if (!wanted.has(node)) wanted.set(node, []);
            wanted.get(node).push(id);
          }
        }
        const found = new Map();
        for (const node of routing.session.scanNodes()) {
          if (!wanted.has(node)) continue;
          for (const row of await this.shards.read(node, routing.session.fenceEpoch, 'SELECT id, body FROM messages WHERE id = ANY($1)', [wanted.get(node)])) {
            if (!found.has(row.id)) found.set(row.id, [row.body, node]);
          }
        }
        const dangling = entries.map((entry) => entry.message_id).filter((id) => !found.has(id));
        return { found, dangling, moving: routing.session.mode !== 'plain' };
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        this.count('query_restarts');
      }
    }
  }

  /**
   * Messages with `start <= time < end`: scatter/gather over every node in the scan
   * order, merged by id. Returns `{ found, merged: rows found on a second node too (a copy
   * under way), moving }`.
   */
  async inRange(start, end) {
    for (;;) {
      const { routing } = this;
      const found = new Map();
      let merged = 0;
      try {
        for (const node of routing.session.scanNodes()) {
          for (const row of await this.shards.read(node, routing.session.fenceEpoch, 'SELECT id, body FROM messages WHERE time >= $1 AND time < $2', [start, end])) {
            const first = found.get(row.id);
            if (first === undefined) found.set(row.id, [row.body, node]);
            else if (first[1] !== node) merged += 1;
          }
        }
        return { found, merged, moving: routing.session.mode !== 'plain' };
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced(routing, err);
        this.count('query_restarts');
      }
    }
  }

  /** The oracle's answer: Map id -> body. */
  async oracleRows(sql, params) {
    return new Map((await this.oracle.query(sql, params)).rows.map((row) => [row.id, row.body]));
  }

  /**
   * Both queries in turn for `seconds`, each checked against the oracle. Writers are
   * paused while queries run (run.py's rounds), so the oracle's answer is fixed; the data
   * still moves under them.
   */
  async query(seconds) {
    const end = performance.now() + seconds * 1000;
    const figures = {
      queries_by_sender: 0, queries_by_time: 0, queries_while_moving: 0, query_rows: 0,
      query_missing: 0, query_extra: 0, query_wrong: 0, query_merged: 0, index_dangling: 0,
    };
    const odd = { missing_ids: new Set(), extra_ids: new Set(), dangling_ids: new Set() };
    const timings = { sender: [], time: [], oracle_sender: [], oracle_time: [] };
    for (let turn = 0; performance.now() < end; turn += 1) {
      let started = performance.now();
      let answer;
      let expected;
      if (turn % 2 === 0) {
        const sender = this.randomUser();
        answer = await this.bySender(sender);
        timings.sender.push(performance.now() - started);
        started = performance.now();
        expected = await this.oracleRows('SELECT id, body FROM messages WHERE sender_id = $1', [sender]);
        timings.oracle_sender.push(performance.now() - started);
        figures.queries_by_sender += 1;
        figures.index_dangling += answer.dangling.length;
        for (const id of answer.dangling) odd.dangling_ids.add(id);
      } else {
        // Every fourth window covers the last minutes (rows written during the
        // rebalance), the others ten minutes of the seeded day.
        const now = Date.now();
        const from = turn % 4 === 1 ? now - 180_000 : now - 1000 * (600 + Math.random() * (26 * 3600 - 600));
        const to = turn % 4 === 1 ? now + 5000 : from + 600_000;
        const [start, stop] = [new Date(from).toISOString(), new Date(to).toISOString()];
        answer = await this.inRange(start, stop);
        timings.time.push(performance.now() - started);
        started = performance.now();
        expected = await this.oracleRows('SELECT id, body FROM messages WHERE time >= $1 AND time < $2', [start, stop]);
        timings.oracle_time.push(performance.now() - started);
        figures.queries_by_time += 1;
        figures.query_merged += answer.merged;
      }
      const { found, moving } = answer;
      figures.queries_while_moving += moving ? 1 : 0;
      figures.query_rows += found.size;
      for (const [id, body] of expected) {
        if (!found.has(id)) {
          figures.query_missing += 1;
          odd.missing_ids.add(id);
        } else if (found.get(id)[0] !== body) {
          figures.query_wrong += 1;
        }
      }
      for (const id of found.keys()) {
        if (!expected.has(id)) {
          figures.query_extra += 1;
          odd.extra_ids.add(id);
        }
      }
    }
    const p50 = (samples) => (samples.length
      ? Math.round(Float64Array.from(samples).sort()[Math.floor(samples.length / 2)] * 10000) / 10 : 0);
    const ids = (set) => [...set].map(BigInt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, 50);
    return {
      ops: figures.queries_by_sender + figures.queries_by_time, longest_stall_ms: 0, ...figures,
      ...Object.fromEntries(Object.entries(odd).map(([name, set]) => [name, ids(set)])),
      ...Object.fromEntries(Object.entries(timings).map(([name, samples]) => [`${name}_p50_us`, p50(samples)])),
    };
  }

  // -- commands ------------------------------------------------------------------------

  count(name, amount = 1) {
    this.counters[name] = (this.counters[name] ?? 0) + amount;
  }

  reset() {
    this.counters = {
      writes: 0, reads: 0, insert_us: 0, read_us: 0, move_us: 0, refused_by_fence: 0, moved_rows: 0, moved_users: 0, stale_reads: 0, query_restarts: 0, two_shard_reads: 0, move_statements: 0,
      tenant_writes: 0, tenant_reads: 0, tenant_stale_reads: 0, plan_reads: 0, plan_wrong: 0, plan_writes: 0,
    };
    this.planNodes = new Set();
    this.readsBefore = this.follower ? this.follower.stats.reads : 0n;
    this.statementsBefore = this.shards.statements;
    this.latencies = [];
    this.writeLatencies = [];
  }

  async timed(call, ...args) {
    const start = performance.now();
    await call.apply(this, args);
    this.latencies.push(performance.now() - start);
  }

  randomUser() {
    return 1 + Math.floor(Math.random() * this.users);
  }

  async write(seconds) {
    if (this.quota !== null && this.routing.plans !== null) {
      // Read your own write: the row this process wrote at the end of its last `write`,
      // perhaps under an older epoch, from the node the core picks now (after the
      // widening of the group, perhaps a node that joined it).
      await this.readPlanRow(`${this.name}-quota`, this.quota);
    }
    const end = performance.now() + seconds * 1000;
    let lastAck = performance.now();
    let longest = 0;
    let parts = []; // the longest gap: the read before the write, the write
    let at = 0;
    let readMs = 0;
    let ops = 0;
    while (performance.now() < end) {
      await this.timed(this.insert, this.randomUser());
      const insertMs = this.latencies[this.latencies.length - 1];
      this.writeLatencies.push(insertMs);
      this.count('insert_us', Math.round(insertMs * 1000));
      const now = performance.now();
      if (now - lastAck > longest) {
        longest = now - lastAck;
        parts = [readMs, insertMs];
        at = Date.now() / 1000;
      }
      lastAck = now;
      await this.timed(this.timeline, this.randomUser(), this.page);
      readMs = this.latencies[this.latencies.length - 1];
      this.count('read_us', Math.round(readMs * 1000));
      if (ops % 8 === 0) await this.tenantTurn(ops / 2);
      ops += 2;
    }
    await this.movePending();
    // The service's own reference row: its writes in this command, on every node of the group.
    if (this.routing.plans !== null) await this.writePlanRow(`${this.name}-quota`, this.counters.writes);
    return {
      ops, longest_stall_ms: Math.round(longest * 10) / 10,
      longest_stall_parts_ms: parts.map((part) => Math.round(part * 10) / 10), longest_stall_at: Math.round(at * 1000) / 1000,
    };
  }

  async readAll() {
    for (let user = 1; user <= this.users; user += 1) await this.timed(this.timeline, user, null); // every row: no page
    await this.movePending();
    return { ops: this.users, longest_stall_ms: 0 };
  }

  answer(command, result) {
    const percentile = (p, latencies = this.latencies) => {
      const samples = Float64Array.from(latencies).sort();
      return samples.length
        ? Math.round(samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] * 10000) / 10 : 0;
    };
    const { reads, refused } = this.follower.stats;
    emit({
      event: 'done', command, ...result, ...this.counters,
      refreshes: reads - this.readsBefore,
      statements: this.shards.statements - this.statementsBefore, // to the shards
      refused_documents: Object.values(refused).reduce((sum, n) => sum + n, 0n),
      epochs_seen: [...this.epochs], epoch: this.epoch(),
      p50_us: percentile(0.5), p99_us: percentile(0.99), write_p99_us: percentile(0.99, this.writeLatencies),
      plan_read_nodes: [...this.planNodes].sort(),
    });
    this.reset();
  }

  async close() {
    this.follower.close();
    closeSync(this.acknowledged);
    closeSync(this.acknowledgedTenants);
    await this.shards.close();
    await this.oracle.end().catch(() => {});
  }
}

async function main() {
  const { values: args } = parseArgs({
    options: {
      postgres: { type: 'string' },
      etcd: { type: 'string' },
      service: { type: 'string', default: 'node' },
      users: { type: 'string', default: '5000' },
      log: { type: 'string' },
      page: { type: 'string', default: String(TIMELINE_PAGE) }, // messages a timeline read returns, newest first
    },
  });
  for (const required of ['postgres', 'etcd', 'log']) {
    if (args[required] === undefined) throw new Error(`--${required} is required`);
  }
  if (!(args.service in TICKET_SERVER)) throw new Error(`--service must be one of ${Object.keys(TICKET_SERVER).join(', ')}`);
  serviceName = args.service;
  const page = Number(args.page);
  if (!Number.isInteger(page) || page < 1) throw new Error(`--page must be a positive integer: ${JSON.stringify(args.page)}`);
  const service = await Service.start(args.postgres, args.etcd, args.service, Number(args.users), args.log, page);
  emit({ event: 'ready', epoch: service.epoch() });
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const trimmed = line.trim();
    const space = trimmed.indexOf(' ');
    const [command, argument] = space < 0 ? [trimmed, ''] : [trimmed.slice(0, space), trimmed.slice(space + 1)];
    try {
      if (command === 'write') {
        const seconds = Number(argument);
        if (argument === '' || Number.isNaN(seconds)) throw new Error(`write: not a number of seconds: ${JSON.stringify(argument)}`);
        service.answer('write', await service.write(seconds));
      } else if (command === 'read-all') {
        service.answer('read-all', await service.readAll());
      } else if (command === 'query') {
        const seconds = Number(argument);
        if (argument === '' || Number.isNaN(seconds)) throw new Error(`query: not a number of seconds: ${JSON.stringify(argument)}`);
        service.answer('query', await service.query(seconds));
      } else if (command === 'quit') {
        break;
      } else if (command) {
        log(`unknown command ${JSON.stringify(command)}`);
      }
    } catch (err) {
      // Reported to run.py, which fails the run.
      log(`${command} failed: ${err.stack ?? err}`);
      service.answer(command, { ops: 0, longest_stall_ms: 0, failure: String(err) });
    }
  }
  // run.py may hold stdin open after `quit`: an open stdin would keep the process alive.
  process.stdin.destroy();
  await service.close();
}

try {
  await main();
} catch (err) {
  log(String(err.message ?? err));
  process.exit(1); // open connections would keep a failed start alive
}
