'use strict';
// shardroute/redis: a Redis Cluster client over ioredis whose every decision is
// shardroute's core.
//
// It keeps one plain ioredis connection per node and sends each command straight to the
// node that owns its slot. What to do when the cluster changes under it (MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN, a failover, a lost connection) is decided by the core's sans-IO
// session (`ClusterSession`): this shell only connects, sends, sleeps and throws. The
// rules, the one table of what each error means and the defaults (`sessionDefaults()`)
// are the core's, the same as Python's `shardroute.redis`, and checked by the
// conformance scenarios (conformance/vectors/session_redis.json).

const { isUtf8 } = require('node:buffer');
const shardroute = require('./index.js');

/** ioredis, an optional peer dependency: a project that lacks it is told how to add it. */
function loadIoredis() {
  try {
    return require('ioredis');
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes("'ioredis'")) {
      throw new Error('shardroute/redis needs ioredis, an optional peer dependency of shardroute: npm install ioredis',
        { cause: err });
    }
    throw err;
  }
}

const ioredis = loadIoredis();
const Redis = ioredis.Redis || ioredis;

/** A command was redirected more than `max_redirects` times (code `too_many_redirects`). */
class TooManyRedirects extends Error {}
Object.defineProperty(TooManyRedirects.prototype, 'name', { value: 'TooManyRedirects', writable: true, configurable: true });

/** No node served a command within the retry budget (code `unavailable`); `cause` is the last error. */
class ConnectionError extends Error {}
Object.defineProperty(ConnectionError.prototype, 'name', { value: 'ConnectionError', writable: true, configurable: true });

const FAILURES = { too_many_redirects: TooManyRedirects, unavailable: ConnectionError };

const now = () => Math.floor(performance.now());
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The names the core's table reads: the socket error code, then the class chain. */
function names(err) {
  const found = typeof err.code === 'string' ? [err.code] : [];
  for (let proto = Object.getPrototypeOf(err); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    if (proto.constructor && proto.constructor.name) found.push(proto.constructor.name);
  }
  return found;
}

/** The error of a 'fail' action: of this module's classes where it has one, else the core's ShardrouteError. */
function failure(action, cause) {
  const Class = FAILURES[action.code];
  const error = Class ? new Class(action.message, cause ? { cause } : undefined) : action.error();
  if (Class) error.code = action.code;
  else if (cause) error.cause = cause;
  return error;
}

/** How many bytes the well-formed UTF-8 sequence at `bytes[i]` takes; 0 when there is none. */
function sequenceLength(bytes, i) {
  const first = bytes[i];
  if (first < 0x80) return 1;
  const length = first >= 0xc2 && first <= 0xdf ? 2 : first >= 0xe0 && first <= 0xef ? 3 : first >= 0xf0 && first <= 0xf4 ? 4 : 0;
  if (length === 0 || i + length > bytes.length) return 0;
  for (let k = 1; k < length; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return 0;
  const second = bytes[i + 1];
  // Overlong forms, surrogates and code points past U+10FFFF.
  if ((first === 0xe0 && second < 0xa0) || (first === 0xed && second > 0x9f)
    || (first === 0xf0 && second < 0x90) || (first === 0xf4 && second > 0x8f)) return 0;
  return length;
}

/**
 * A Buffer as text, never with U+FFFD in it: bytes that are not UTF-8 become lone
 * surrogates, each byte b as U+DC00 + b (Python's `surrogateescape`), which the session
 * refuses as it refuses any text that is not Unicode (`invalid_argument`, as the Python
 * client does).
 */
function escapedText(bytes) {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  let text = '';
  let start = 0;
  for (let i = 0; i < bytes.length;) {
    const length = sequenceLength(bytes, i);
    if (length > 0) {
      i += length;
      continue;
    }
    text += bytes.toString('utf8', start, i) + String.fromCharCode(0xdc00 + bytes[i]);
    i += 1;
    start = i;
  }
  return text + bytes.toString('utf8', start);
}

/** A raw reply with Buffers decoded: CLUSTER SHARDS as the core reads it (invalid UTF-8 refused, never replaced). */
function text(value) {
  if (Buffer.isBuffer(value)) return escapedText(value);
  if (Array.isArray(value)) return value.map(text);
  return value;
}

/** `"host:port"` of a startup node given as that string or as `{ host, port }`. */
function seedAddress(node) {
  if (typeof node === 'string') return node;
  if (node !== null && typeof node === 'object' && typeof node.host === 'string' && node.port !== undefined) {
    return `${node.host}:${node.port}`;
  }
  throw new TypeError(`startupNodes: expected "host:port" or { host, port }, got ${JSON.stringify(node)}`);
}

/** `commands` on one connection (after `ASKING` when asking): the last reply; the first error thrown. */
async function once(connection, asking, ...commands) {
  if (!asking && commands.length === 1) return connection.call(...commands[0]);
  const pipeline = connection.pipeline();
  if (asking) pipeline.call('ASKING');
  for (const command of commands) pipeline.call(...command);
  const replies = await pipeline.exec();
  for (const [err] of replies) if (err) throw err;
  return replies.at(-1)[1];
}

/** The session's counters as numbers (ClusterStats in redis.d.ts), read when asked. */
const STATS = {
  commands: (s) => Number(s.commands), moved: (s) => Number(s.moved), ask: (s) => Number(s.ask),
  refreshes: (s) => Number(s.refreshes), longestRedirectChain: (s) => s.longest_redirect_chain,
  stalls: (s) => Number(s.stalls), stallResends: (s) => Number(s.stall_resends),
  errorKinds: (s) => Object.fromEntries(Object.entries(s.errors).map(([kind, n]) => [kind, Number(n)])),
  errors: (s) => Object.values(s.errors).reduce((sum, n) => sum + Number(n), 0) + Number(s.failed),
};

/** What the client has seen since it was made (or since `reset`). */
class ClusterStats {
  constructor(session) {
    for (const [name, read] of Object.entries(STATS)) {
      Object.defineProperty(this, name, { get: () => read(session.stats), enumerable: true });
    }
    Object.defineProperty(this, 'reset', { value: () => session.resetStats() });
  }
}

/** What `within` gives when the session's deadline came first. */
const STALLED = Symbol('stalled');

/** How long until `deadline` (a bigint or number on `now()`'s clock, from the session), never negative. */
const left = (deadline) => Math.max(0, Number(deadline) - now());

/** `promise`'s value, or STALLED at the session's `deadline` (null: none); one timer, cleared when it settles. */
function within(promise, deadline) {
  if (deadline === null) return promise;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, left(deadline), STALLED);
    promise.then((value) => {
      clearTimeout(timer);
      resolve(value);
    }, (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** A Redis Cluster client routed by shardroute (see the top of this file; redis.d.ts documents the API). */
class ClusterClient {
  #session;
  #connectionOptions;
  /** `address` or `address readonly` -> { redis, ready: Promise<Redis> }. */
  /** The session's steady path (index.js, ClusterSession's fast path). */
  #fast;
  #connections = new Map();
  #refreshing = null;

  constructor(startupNodes, options = {}) {
    const { readFromReplicas = false, config = {}, ...redisOptions } = options;
    const seeds = [...(startupNodes ?? [])].map(seedAddress);
    this.#session = new shardroute.ClusterSession(seeds, { ...config, ...(readFromReplicas ? { read_from_replicas: true } : {}) });
    this.#fast = this.#session[Symbol.for('shardroute.ClusterSession.fastPath')];
    const { connect_timeout_ms: connectTimeout } = this.#session.config;
    // One connection per node that fails fast: no offline queue, no reconnection and no
    // command timeout of its own; every failure reaches the session, every wait is its.
    this.#connectionOptions = {
      connectTimeout: Number(connectTimeout), ...redisOptions,
      // decisions: ok (0: ioredis retries nothing itself; the session decides every retry)
      lazyConnect: true, enableOfflineQueue: false, enableReadyCheck: false, maxRetriesPerRequest: 0,
      retryStrategy: null, autoResubscribe: false,
    };
    this.stats = new ClusterStats(this.#session);
  }

  /** A client whose table has been read. */
  static async connect(startupNodes, options) {
    const client = new ClusterClient(startupNodes, options);
    await client.ready();
    return client;
  }

  /** Reads the first table under the session's rules (refresh, backoff, budget). */
  async ready() {
    if (this.#session.router === null) await this.#run(['table'], 'read', async () => null);
  }

  /** The current router (a `redis_cluster` topology), or null before the first table. */
  get router() {
    return this.#session.router;
  }

  /** The connection (an ioredis `Redis`, connected) to `address`; with `readonly`, one that sent `READONLY`. */
  connection(address, { readonly = false } = {}) {
    const name = readonly ? `${address} readonly` : address;
    const known = this.#connections.get(name);
    if (known !== undefined) return known.ready;
    const { host, port } = shardroute.parseAddress(address);
    const redis = new Redis({ ...this.#connectionOptions, host, port });
    // Failures reach the caller through the commands.
    redis.on('error', () => {});
    const entry = { redis, ready: null };
    const forget = () => {
      if (this.#connections.get(name) === entry) this.#connections.delete(name);
    };
    redis.once('end', forget);
    entry.ready = redis.connect().then(async () => {
      if (readonly) await redis.call('READONLY');
      return redis;
    });
    entry.ready.catch(() => {
      forget();
      redis.disconnect();
    });
    this.#connections.set(name, entry);
    return entry.ready;
  }

  /** The `host:port` of a node id of the current router. */
  addressOf(node) {
    const found = this.#session.addressOf(node);
    if (found === null) throw new Error(`shardroute/redis: no node ${JSON.stringify(node)}`);
    return found;
  }

  /** Closes the connection to `address` (a request on it was abandoned: its late reply must not be read). */
  #drop(address, readonly) {
    const name = readonly ? `${address} readonly` : address;
    const entry = this.#connections.get(name);
    if (entry === undefined) return;
    this.#connections.delete(name);
    entry.redis.disconnect();
  }

  /** Reads the table from the first candidate that answers `CLUSTER SHARDS` with a whole table; one at a time. */
  refresh() {
    this.#refreshing ??= this.#refreshOnce().finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  /**
   * Each candidate in turn: connected and answered by the session's deadline for it (ioredis
   * cannot tell a reply begun from none, so the whole request is held to that deadline, as
   * the asyncio client does; a paused node that kept its connection is left then).
   */
  async #refreshOnce() {
    const session = this.#session;
    for (const address of session.refreshCandidates()) {
      try {
        const deadline = session.refreshSent(address, now());
        const connection = await within(this.connection(address), deadline);
        const reply = connection === STALLED ? STALLED : await within(connection.callBuffer('CLUSTER', 'SHARDS'), deadline);
        if (reply !== STALLED) {
          session.refreshed(text(reply), now());
          return true;
        }
        this.#drop(address, false);
      } catch {
        // The next candidate.
      }
      session.timeout(now()); // a silent candidate: given up at its deadline
    }
    session.refreshFailed(now());
    return false;
  }

  /**
   * Runs `attempt(connection, asking)` where the session says, until it is done; `error`:
   * what the command already got. The attempt in flight (its connection and handshake
   * included) is awaited until the session's deadline, then the session says: keep
   * waiting, refresh, send elsewhere (a stall), or give it up (its timeout).
   */
  async #run(keys, access, attempt, error = null) {
    const session = this.#session;
    if (error === null) {
      // The steady path: one call into the core (the target and the attempt's deadline),
      // one timer, and no call after the reply. Its Command is made only for what else
      // comes (an error, the deadline), as `poll` at `sentMs` would have left it.
      const sentMs = now();
      const target = this.#fast.send(keys, access, sentMs);
      if (target !== null) {
        const { address, readonly } = target;
        const deadline = this.#fast.deadline;
        let promise;
        let reply;
        try {
          promise = this.connection(address, { readonly }).then((c) => attempt(c, false));
          reply = await within(promise, deadline);
        } catch (err) {
          if (!(err instanceof Error) || err instanceof shardroute.ShardrouteError) throw err;
          const command = this.#fast.command(keys, access, address, sentMs);
          return this.#follow(command, session.failed(command, err.message, names(err), now()), attempt, err, null);
        }
        if (reply !== STALLED) return reply;
        promise.catch(() => {}); // unread while a refresh runs, or once abandoned
        const command = this.#fast.command(keys, access, address, sentMs);
        return this.#follow(command, session.onDeadline(command, now()), attempt, null, { address, readonly, promise });
      }
    }
    const command = session.command(keys, access, now());
    const action = error === null ? session.poll(command, now()) : session.failed(command, error.message, names(error), now());
    return this.#follow(command, action, attempt, error, null);
  }

  /** Carries out `action` for `command` until the session is done; `error`: the last error it got; `sent`: the attempt in flight. */
  async #follow(command, action, attempt, error, sent) {
    const session = this.#session;
    for (;;) {
      if (sent !== null && (action.kind === 'send' || !command.inFlight)) {
        this.#drop(sent.address, sent.readonly);
        sent = null;
      }
      if (action.kind === 'done') throw error;
      if (action.kind === 'fail') throw failure(action, error);
      try {
        if (action.kind === 'send') {
          const { address, readonly, asking } = action;
          sent = { address, readonly, promise: this.connection(address, { readonly }).then((c) => attempt(c, asking)) };
          sent.promise.catch(() => {}); // read by `within`; unread while a refresh runs, or once abandoned
        }
        if (action.kind === 'refresh') {
          await this.refresh(); // the attempt in flight (a stall's) runs on meanwhile
        } else if (sent !== null) {
          const reply = await within(sent.promise, session.deadline(command));
          if (reply !== STALLED) {
            session.succeeded(command, now());
            return reply;
          }
        } else {
          await sleep(left(session.deadline(command)));
        }
      } catch (err) {
        if (!(err instanceof Error) || err instanceof shardroute.ShardrouteError) throw err;
        sent = null;
        error = err;
        action = session.failed(command, err.message, names(err), now());
        continue;
      }
      action = session.onDeadline(command, now());
    }
  }

  /** Runs one command (`[name, ...arguments]`) for `key` where the session says. */
  execute(command, { key, read = false } = {}) {
    return this.#run([key], read ? 'read' : 'write', (connection, asking) => once(connection, asking, command));
  }

  get(key) {
    return this.execute(['GET', key], { key, read: true });
  }

  set(key, value) {
    return this.execute(['SET', key, value], { key });
  }

  del(key) {
    return this.execute(['DEL', key], { key });
  }

  /** `SET` then `WAIT replicas timeoutMs` (the session's `wait_timeout_ms` when omitted) on one connection: how many replicas acknowledged the write. */
  async setAndWait(key, value, replicas = 1, timeoutMs = this.#session.config.wait_timeout_ms) {
    return Number(await this.#run([key], 'write',
      (connection, asking) => once(connection, asking, ['SET', key, value], ['WAIT', replicas, timeoutMs])));
  }

  /** `MSET` of keys that share a slot (a hash tag); `cross_slot` otherwise. */
  mset(mapping) {
    const entries = mapping instanceof Map ? [...mapping] : Object.entries(mapping);
    return this.#run(entries.map(([key]) => key), 'write',
      (connection, asking) => once(connection, asking, ['MSET', ...entries.flat()]));
  }

  /** Values of `keys` in order: one `MGET` per slot, those of a node pipelined, every node at once. */
  async mget(keys) {
    keys = [...keys];
    const values = new Array(keys.length).fill(null);
    await Promise.all((await this.#plan(keys, 'read')).map(async ({ address, readonly, slots }) => {
      const batches = slots.map(([, indices]) => indices.map((i) => keys[i]));
      const replies = await this.#pipeline(address, readonly, batches.map((batch) => ['MGET', ...batch]));
      await Promise.all(slots.map(async ([, indices], j) => {
        let [err, got] = replies[j];
        if (err) got = await this.#run(batches[j], 'read', (c, asking) => once(c, asking, ['MGET', ...batches[j]]), err);
        indices.forEach((index, k) => {
          values[index] = got[k];
        });
      }));
    }));
    return values;
  }

  /** `GET` of every key, one pipeline per node. */
  pipelineGet(keys) {
    keys = [...keys];
    return this.#pipelined(keys.map((key) => ['GET', key]), keys, 'read');
  }

  /** `SET` of every `[key, value]` pair, one pipeline per node. */
  pipelineSet(pairs) {
    pairs = [...pairs];
    return this.#pipelined(pairs.map(([key, value]) => ['SET', key, value]), pairs.map(([key]) => key), 'write');
  }

  async #plan(keys, access) {
    await this.ready();
    return this.#session.plan(keys, access);
  }

  async #pipelined(commands, keys, access) {
    const results = new Array(commands.length).fill(null);
    await Promise.all((await this.#plan(keys, access)).map(async ({ address, readonly, slots }) => {
      const indices = slots.flatMap(([, members]) => members);
      const replies = await this.#pipeline(address, readonly, indices.map((i) => commands[i]));
      await Promise.all(indices.map(async (index, j) => {
        const [err, value] = replies[j];
        // That command alone takes the session's path, from the error it got.
        results[index] = err ? await this.#run([keys[index]], access, (c, asking) => once(c, asking, commands[index]), err) : value;
      }));
    }));
    return results;
  }

  /** One node's pipeline, one request until the session's batch deadline (a reply past it: every entry a TimeoutError). */
  async #pipeline(address, readonly, commands) {
    const deadline = this.#session.batchDeadline(now());
    try {
      const replies = await within((async () => {
        const pipeline = (await this.connection(address, { readonly })).pipeline();
        for (const command of commands) pipeline.call(...command);
        return pipeline.exec();
      })(), deadline);
      if (replies !== STALLED) return replies;
      this.#drop(address, readonly);
      const timedOut = new Error(`Command timed out: no reply from ${address}`);
      timedOut.code = 'ETIMEDOUT';
      return commands.map(() => [timedOut, null]);
    } catch (err) {
      return commands.map(() => [err, null]);
    }
  }

  /** Closes every connection (waiting for the replies of commands already sent). */
  async close() {
    const entries = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(entries.map(({ redis }) => redis.quit().catch(() => redis.disconnect())));
  }
}

// Shorthand properties only: Node's ES module loader finds the names of a CommonJS
// module's exports by reading this statement (cjs-module-lexer), for `import { ClusterClient }`.
module.exports = {
  ClusterClient,
  ClusterStats,
  TooManyRedirects,
  ConnectionError,
};
