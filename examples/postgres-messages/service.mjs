// The Node service of the example: writes and reads users' messages on the shard
// databases (`pg`), routing every statement with shardroute, while the topology in etcd
// changes under it. The same protocol, answers and rules as the Python service,
// service.py (README.md, "The service protocol"; docs/rebalancing.md):
//
//     node service.mjs --postgres 127.0.0.1:5432 --etcd http://127.0.0.1:2379 \
//         --service node --users 5000 --log acknowledged-node.log
//
// stdin, one command a line: `write <seconds>`, `read-all`, `quit`; stdout, one JSON line
// each, after `{"event": "ready", "epoch": N}`. Log lines go to stderr.
//
// Routing, by what etcd holds:
//
// - `topology` only, no forward map: `router.node(user)`;
// - `topology` a vbucket dictionary with a `forward_map` (run A):
//   `Migration.ofDictionary(router)`: writes to the new owner, reads new and old;
// - `topology` and `previous` (run B): `new Migration(previous, topology)`; the first
//   read of a user that moves, with no moved flag on the new owner, moves the user's rows.
//
// etcd is reached through its v3 JSON gateway with fetch (keys and values base64,
// revisions decimal strings), so the service needs nothing but `pg` and shardroute.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import pg from 'pg';
import { Migration, Router, ShardrouteError, apply } from 'shardroute';

const PREFIX = '/shardroute/messages/';
const TOPOLOGY = `${PREFIX}topology`;
const PREVIOUS = `${PREFIX}previous`;
const WATCH_END = `${TOPOLOGY}\0`; // the watched range [previous, topology]: both documents
const SHARD_NAMES = Array.from({ length: 10 }, (_, i) => `shard_${i + 1}`);
const COLUMNS = 'id, user_id, vbucket, time, body, sender';

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
const b64 = (text) => Buffer.from(text).toString('base64');
const unb64 = (text) => Buffer.from(text ?? '', 'base64').toString();
const bodyDigest = (body) => createHash('sha256').update(body).digest('hex');

/** etcd over its v3 JSON gateway: reads at one revision, compare-and-swap, watches. */
class Etcd {
  constructor(url) {
    this.url = url.replace(/\/+$/, '');
  }

  async call(path, body, signal = AbortSignal.timeout(10000)) {
    const response = await fetch(`${this.url}${path}`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal,
    });
    if (!response.ok) throw new Error(`etcd ${path}: HTTP ${response.status}: ${(await response.text()).slice(0, 500)}`);
    return response;
  }

  /** The values of `keys` (null when absent) and their `mod_revision`s (0), read at one revision. */
  async getMany(keys) {
    const answer = await (await this.call('/v3/kv/txn', {
      success: keys.map((key) => ({ request_range: { key: b64(key) } })),
    })).json();
    const found = new Map();
    keys.forEach((key, i) => {
      const kv = answer.responses[i].response_range.kvs?.[0];
      found.set(key, kv === undefined ? [null, 0n] : [unb64(kv.value), BigInt(kv.mod_revision)]);
    });
    return { found, revision: BigInt(answer.header.revision) };
  }

  /**
   * Writes `key` only if its `mod_revision` is still the one read (0: absent); true if it
   * did, false when someone wrote it since.
   */
  async cas(key, value, modRevision) {
    const answer = await (await this.call('/v3/kv/txn', {
      compare: [{ key: b64(key), target: 'MOD', result: 'EQUAL', mod_revision: String(modRevision) }],
      success: [{ request_put: { key: b64(key), value: b64(value) } }],
    })).json();
    return answer.succeeded === true;
  }

  /**
   * Calls `onChange()` after every change of the keys in `[key, rangeEnd)` from
   * `revision` on, until `signal` aborts. A lost stream is opened again from the revision
   * after the last one seen, with a call to `onChange()`, so a change missed meanwhile is
   * not lost.
   */
  async watch(key, rangeEnd, revision, onChange, signal) {
    let start = revision;
    while (!signal.aborted) {
      try {
        const response = await this.call('/v3/watch', {
          create_request: { key: b64(key), range_end: b64(rangeEnd), start_revision: String(start) },
        }, signal);
        const decoder = new TextDecoder();
        let buffered = '';
        for await (const chunk of response.body) {
          buffered += decoder.decode(chunk, { stream: true });
          for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
            const line = buffered.slice(0, end);
            buffered = buffered.slice(end + 1);
            const events = line.trim() ? JSON.parse(line).result?.events ?? [] : [];
            for (const event of events) {
              const next = BigInt(event.kv.mod_revision) + 1n;
              if (next > start) start = next;
            }
            if (events.length) await onChange();
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        log(`the watch of ${key} broke (${err.message}); watching again`);
      }
      if (signal.aborted) return;
      await sleep(200);
      await onChange();
    }
  }
}

/** The shard's fence is above the statement's epoch: re-read etcd and retry. */
class Fenced extends Error {
  constructor(shard, epoch, minEpoch) {
    super(`${shard} refused epoch ${epoch}: its fence is at ${minEpoch}`);
    this.name = 'Fenced';
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
 * One connection per shard database. Every statement runs in a transaction that first
 * reads the shard's fence; a write takes the fence row `FOR SHARE`, so raising the fence
 * (an `UPDATE`, which needs the row lock) waits for every write in flight and no write
 * chosen under an older epoch commits after it.
 */
class Shards {
  static async connect(postgres, names) {
    const at = postgres.lastIndexOf(':');
    const [host, port] = [postgres.slice(0, at), Number(postgres.slice(at + 1))];
    const shards = new Shards();
    shards.connections = new Map();
    await Promise.all(names.map(async (name) => {
      const client = new pg.Client({ host, port, user: 'postgres', database: name, types: TYPES });
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

  /** `body(client)` in one transaction on `shard`, after the fence check. */
  async transaction(shard, epoch, lock, body) {
    const client = this.connections.get(shard);
    await client.query('BEGIN');
    try {
      const { rows } = await client.query(`SELECT min_epoch FROM fence${lock ? ' FOR SHARE' : ''}`);
      if (BigInt(rows[0].min_epoch) > epoch) throw new Fenced(shard, epoch, rows[0].min_epoch);
      const result = await body(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  }

  async read(shard, epoch, sql, params = []) {
    return (await this.transaction(shard, epoch, false, (client) => client.query(sql, params))).rows;
  }

  /** One fenced write; its row count. */
  async write(shard, epoch, sql, params = []) {
    return (await this.transaction(shard, epoch, true, (client) => client.query(sql, params))).rowCount;
  }

  /**
   * Copies rows in (`ON CONFLICT DO NOTHING`: a row already there is skipped), and with
   * `movedUnit` marks that unit moved in the same transaction, so the flag never exists
   * without the rows. Returns the rows actually inserted.
   */
  async insertRows(shard, epoch, rows, movedUnit = null) {
    return this.transaction(shard, epoch, true, async (client) => {
      let inserted = 0;
      for (const row of rows) {
        const result = await client.query(
          `INSERT INTO messages (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
          [row.id, row.user_id, row.vbucket, row.time, row.body, row.sender],
        );
        inserted += result.rowCount;
      }
      if (movedUnit !== null) await client.query('INSERT INTO moved (unit) VALUES ($1) ON CONFLICT DO NOTHING', [movedUnit]);
      return inserted;
    });
  }

  /**
   * The shard refuses every statement below `epoch` from now on; returns once the writes
   * in flight (which hold the fence row `FOR SHARE`) have committed.
   */
  async raiseFence(shard, epoch) {
    await this.connections.get(shard).query('UPDATE fence SET min_epoch = greatest(min_epoch, $1)', [String(epoch)]);
  }

  /**
   * The lazy move of docs/rebalancing.md, run B: raise the old owner's fence, copy the
   * user's rows to the new owner with the moved flag, delete them from the old one. Every
   * step is idempotent, so two movers of one user (two services, or a service and the
   * sweep) neither lose nor duplicate a row. Returns the rows this call inserted.
   */
  async moveUser(user, old, now, epoch) {
    await this.raiseFence(old, epoch);
    const rows = await this.read(old, epoch, `SELECT ${COLUMNS} FROM messages WHERE user_id = $1`, [user]);
    const inserted = await this.insertRows(now, epoch, rows, user);
    await this.write(old, epoch, 'DELETE FROM messages WHERE user_id = $1', [user]);
    return inserted;
  }

  async isMoved(shard, epoch, user) {
    return (await this.read(shard, epoch, 'SELECT 1 FROM moved WHERE unit = $1', [user])).length > 0;
  }
}

/** The documents in force and what they mean for each statement (immutable). */
class Routing {
  constructor(topology, previous, strategy) {
    this.router = topology;
    this.epoch = topology.epoch;
    this.lazy = previous !== null;
    this.migration = null;
    if (previous !== null) this.migration = new Migration(previous, topology);
    else if ('forward_map' in strategy) this.migration = Migration.ofDictionary(topology);
    this.vbuckets = strategy.type === 'vbucket';
  }

  /** The column `vbucket`: the user's vbucket in run A, 0 in run B. */
  vbucket(user) {
    return this.vbuckets ? this.router.route(user) : 0;
  }

  writeTarget(user) {
    return this.migration ? this.migration.writeTarget(user) : this.router.node(user);
  }

  moves(user) {
    return this.migration ? this.migration.moves(user) : null;
  }

  readTargets(user, moved) {
    return this.migration ? this.migration.readTargets(user, moved) : [this.router.node(user)];
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
      const [value, revision] = (await this.etcd.getMany([this.key])).found.get(this.key);
      const counter = value ? BigInt(value) : 1n;
      const block = apply(TICKETS, {
        op: 'id_bits_reserve_block', shard: this.server, auto_increment: counter, block_size: size,
      });
      if (await this.etcd.cas(this.key, String(block.auto_increment), revision)) {
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
  constructor(etcd, shards, name, users, logPath) {
    this.name = name;
    this.users = users;
    this.etcd = etcd;
    this.shards = shards;
    this.ids = new Ids(etcd, name);
    this.acknowledged = openSync(logPath, 'a');
    this.mine = new Map(); // user -> ids this process saw acknowledged
    this.refreshing = Promise.resolve(); // refreshes run one at a time, in order
    this.routing = null;
    this.documents = [null, null];
    this.epochs = [];
    this.reset();
  }

  /** The service routing under the topology in etcd, watching it. */
  static async start(postgres, etcdUrl, name, users, logPath) {
    const etcd = new Etcd(etcdUrl);
    const service = new Service(etcd, await Shards.connect(postgres, SHARD_NAMES), name, users, logPath);
    const revision = await service.refresh('start');
    if (service.routing === null) throw new Error(`no usable topology in etcd at ${TOPOLOGY}`);
    service.reset();
    service.watching = new AbortController();
    // From the revision after the one read: a change in between is not missed.
    service.watcher = etcd.watch(PREVIOUS, WATCH_END, revision + 1n, () => service.refresh('watch'), service.watching.signal);
    return service;
  }

  // -- the topology --------------------------------------------------------------------

  /**
   * Reads both documents at one etcd revision and swaps routers if the topology's epoch
   * grew. A document that does not parse, or an older epoch, is logged and the current
   * router kept. Returns the revision read (0n when etcd could not be read).
   */
  refresh(reason) {
    const done = this.refreshing.then(() => this.refreshNow(reason));
    this.refreshing = done.catch(() => {});
    return done;
  }

  async refreshNow(reason) {
    this.count('refreshes');
    let found;
    let revision;
    try {
      ({ found, revision } = await this.etcd.getMany([TOPOLOGY, PREVIOUS]));
    } catch (err) {
      log(`reading the topology failed (${err.message}); keeping epoch ${this.epoch()}`);
      return 0n;
    }
    const [text, previousText] = [found.get(TOPOLOGY)[0], found.get(PREVIOUS)[0]];
    if (text === null || (text === this.documents[0] && previousText === this.documents[1])) return revision;
    let routing;
    try {
      const router = this.routing ? this.routing.router.replace(text) : new Router(text);
      if (this.routing && router.epoch === this.routing.epoch) {
        this.documents = [text, previousText];
        return revision;
      }
      const previous = previousText !== null ? new Router(previousText) : null;
      routing = new Routing(router, previous, JSON.parse(text).strategy);
    } catch (err) {
      if (!(err instanceof ShardrouteError)) throw err;
      log(`refused the topology at etcd revision ${revision} (${reason}): ${err.code}: ${err.message}; keeping epoch ${this.epoch()}`);
      this.documents = [text, previousText];
      return revision;
    }
    this.routing = routing;
    this.documents = [text, previousText];
    const epoch = Number(routing.epoch);
    if (this.epochs.at(-1) !== epoch) this.epochs.push(epoch);
    const lazy = routing.lazy ? ' lazy move from previous' : '';
    const migrating = routing.migration && !routing.lazy ? ' migrating vbuckets' : '';
    log(`epoch ${epoch} (${reason})${lazy}${migrating}`);
    return revision;
  }

  epoch() {
    return this.routing ? Number(this.routing.epoch) : 0;
  }

  /**
   * A shard refused our epoch: etcd has a newer one (the fence is raised only after the
   * document is written), which the watch may not have brought yet.
   */
  async fenced() {
    this.count('refused_by_fence');
    const held = this.epoch();
    this.documents = [null, null];
    await this.refresh('fence');
    if (this.epoch() <= held) await sleep(10);
  }

  // -- statements ----------------------------------------------------------------------

  async insert(user) {
    const id = await this.ids.next();
    const body = `${this.name} says ${randomBytes(8).toString('hex')} to user ${user}`;
    for (;;) {
      const { routing } = this;
      try {
        await this.shards.write(
          routing.writeTarget(user), routing.epoch,
          `INSERT INTO messages (${COLUMNS}) VALUES ($1, $2, $3, now(), $4, $5)`,
          [String(id), user, routing.vbucket(user), body, this.name],
        );
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced();
        continue;
      }
      break;
    }
    // Logged (and written through) before it counts: an insert this process never logged
    // is not acknowledged, whatever the shard holds.
    writeSync(this.acknowledged, `${id} ${user} ${bodyDigest(body)}\n`);
    if (!this.mine.has(user)) this.mine.set(user, new Set());
    this.mine.get(user).add(String(id));
    this.count('writes');
  }

  /** The user's messages, newest first (union by id of the read targets). */
  async timeline(user) {
    for (;;) {
      const { routing } = this;
      const found = new Map();
      try {
        let moved = false;
        if (routing.lazy) {
          const moves = routing.moves(user);
          if (moves !== null) {
            const { from, to } = moves;
            if (!(await this.shards.isMoved(to, routing.epoch, user))) {
              this.count('moved_rows', await this.shards.moveUser(user, from, to, routing.epoch));
              this.count('moved_users');
            }
            moved = true;
          }
        }
        // Old owner first: a copy that finishes between the two reads then leaves every
        // row on the new owner, which is read second.
        for (const shard of routing.readTargets(user, moved).reverse()) {
          for (const row of await this.shards.read(shard, routing.epoch, 'SELECT id, time, body FROM messages WHERE user_id = $1', [user])) {
            found.set(row.id, row);
          }
        }
      } catch (err) {
        if (!(err instanceof Fenced)) throw err;
        await this.fenced();
        continue;
      }
      if (![...(this.mine.get(user) ?? [])].every((id) => found.has(id))) this.count('stale_reads');
      this.count('reads');
      return [...found.values()].sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0)).map((row) => [row.id, row.body]);
    }
  }

  // -- commands ------------------------------------------------------------------------

  count(name, amount = 1) {
    this.counters[name] = (this.counters[name] ?? 0) + amount;
  }

  reset() {
    this.counters = {
      writes: 0, reads: 0, refused_by_fence: 0, refreshes: 0, moved_rows: 0, moved_users: 0, stale_reads: 0,
    };
    this.latencies = [];
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
    const end = performance.now() + seconds * 1000;
    let lastAck = performance.now();
    let longest = 0;
    let ops = 0;
    while (performance.now() < end) {
      await this.timed(this.insert, this.randomUser());
      const now = performance.now();
      longest = Math.max(longest, now - lastAck);
      lastAck = now;
      await this.timed(this.timeline, this.randomUser());
      ops += 2;
    }
    return { ops, longest_stall_ms: Math.round(longest * 10) / 10 };
  }

  async readAll() {
    for (let user = 1; user <= this.users; user += 1) await this.timed(this.timeline, user);
    return { ops: this.users, longest_stall_ms: 0 };
  }

  answer(command, result) {
    const samples = Float64Array.from(this.latencies).sort();
    const percentile = (p) => (samples.length
      ? Math.round(samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] * 10000) / 10 : 0);
    const line = {
      event: 'done', command, ...result, ...this.counters,
      epochs_seen: [...this.epochs], epoch: this.epoch(),
      p50_us: percentile(0.5), p99_us: percentile(0.99),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
    this.reset();
  }

  async close() {
    this.watching.abort();
    await this.watcher;
    closeSync(this.acknowledged);
    await this.shards.close();
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
    },
  });
  for (const required of ['postgres', 'etcd', 'log']) {
    if (args[required] === undefined) throw new Error(`--${required} is required`);
  }
  if (!(args.service in TICKET_SERVER)) throw new Error(`--service must be one of ${Object.keys(TICKET_SERVER).join(', ')}`);
  serviceName = args.service;
  const service = await Service.start(args.postgres, args.etcd, args.service, Number(args.users), args.log);
  process.stdout.write(`${JSON.stringify({ event: 'ready', epoch: service.epoch() })}\n`);
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
