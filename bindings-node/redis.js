'use strict';
// shardroute/redis: a Redis Cluster client whose every routing decision is shardroute's.
//
// It keeps one plain ioredis connection per node (no cluster mode in ioredis), builds its
// slot table from `CLUSTER SHARDS`, and sends each command straight to the node that owns
// the key's slot. When the cluster changes under it, it does what the Redis Cluster
// specification asks of a smart client, with the core's calls:
//
// - `MOVED <slot> <host:port>`: the slot has a new master. The client applies it at once
//   (`router.moved`: a new router, next epoch), retries there, and refreshes the whole
//   table from `CLUSTER SHARDS` (at most once per `refreshIntervalMs`, so a burst of
//   MOVEDs during a reshard costs one refresh, not thousands).
// - `ASK <slot> <host:port>`: the slot is migrating and this key is already on the
//   target: the command goes there once, after `ASKING` (`router.ask`); nothing changes.
// - A lost connection (a primary killed, a failover under way), `TRYAGAIN`,
//   `CLUSTERDOWN` or `LOADING`: the client backs off, refreshes from any node that
//   answers, and retries until `retryMs` run out.
//
// Each command follows at most `maxRedirects` redirects (`TooManyRedirects` past that),
// so two nodes that disagree during a migration cannot bounce it forever. `stats` counts
// commands, MOVED, ASK, refreshes and errors, and the longest redirect chain seen.
// Multi-key commands stay in one slot as Redis requires: `mset` refuses keys of several
// slots (`cross_slot`), `mget` and the pipelines split by node and slot.
//
// Mirrors bindings-py/python/shardroute/redis.py; the two behave the same.

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
const { ReplyError } = ioredis;

/** The empty document a first import replaces: only its epoch (0) carries over. */
const EMPTY = { format: 'shardroute/1', epoch: 0, nodes: [{ id: 'none' }], strategy: { type: 'jump' } };

/** Replies after which a command is retried (after a backoff and a refresh), not thrown. */
const BUSY = ['TRYAGAIN', 'CLUSTERDOWN', 'LOADING'];

/** A command was redirected more than `maxRedirects` times. */
class TooManyRedirects extends Error {}
Object.defineProperty(TooManyRedirects.prototype, 'name', { value: 'TooManyRedirects', writable: true, configurable: true });

/**
 * No node answered within `retryMs`: the cluster, or the part of it that serves a key,
 * could not be reached. `cause` is the last error seen.
 */
class ConnectionError extends Error {}
Object.defineProperty(ConnectionError.prototype, 'name', { value: 'ConnectionError', writable: true, configurable: true });

/** What the client has seen since it was made (or since `reset`). */
class ClusterStats {
  constructor() {
    this.reset();
  }

  reset() {
    this.commands = 0;
    this.moved = 0;
    this.ask = 0;
    this.refreshes = 0;
    this.errors = 0;
    this.longestRedirectChain = 0;
    /** Errors by kind: `ConnectionError`, `TimeoutError`, `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, `refresh`. */
    this.errorKinds = {};
  }

  /** Counts one error of `kind`. */
  error(kind) {
    this.errors += 1;
    this.errorKinds[kind] = (this.errorKinds[kind] || 0) + 1;
  }
}

/**
 * Whether `err` came from the connection rather than from Redis: refused or lost
 * connections, timeouts. ioredis reports every Redis error reply as a ReplyError.
 */
function isTransportError(err) {
  return err instanceof Error && !(err instanceof ReplyError) && !(err instanceof TypeError) &&
    !(err instanceof RangeError) && !(err instanceof shardroute.ShardrouteError);
}

/** The kind `stats.errorKinds` counts a transport error under, as the Python client names it. */
function transportKind(err) {
  return err.code === 'ETIMEDOUT' || /timed out/i.test(err.message) ? 'TimeoutError' : 'ConnectionError';
}

/** The first word of a reply error that is retried after a backoff, or null. */
function busyKind(message) {
  const word = message.split(' ', 1)[0];
  return BUSY.includes(word) ? word : null;
}

function isRedirect(message) {
  return message.startsWith('MOVED ') || message.startsWith('ASK ');
}

/** A raw reply with Buffers decoded: CLUSTER SHARDS as the core's import reads it. */
function text(value) {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (Array.isArray(value)) return value.map(text);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [text(k), text(v)]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, text(v)]));
  }
  return value;
}

/** `"host:port"` of a startup node given as that string or as `{ host, port }`. */
function addressOfSeed(node) {
  if (typeof node === 'string') return node;
  if (node !== null && typeof node === 'object' && typeof node.host === 'string' && node.port !== undefined) {
    return `${node.host}:${node.port}`;
  }
  throw new TypeError(`startupNodes: expected "host:port" or { host, port }, got ${JSON.stringify(node)}`);
}

/** `[host, port]` of `host:port` (the port after the last `:`; an IPv6 host may be bracketed). */
function splitAddress(address) {
  const colon = address.lastIndexOf(':');
  let host = address.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host || '127.0.0.1', Number(address.slice(colon + 1))];
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The replies of a pipeline's `exec`, the first error (in command order) thrown. */
function firstErrorThrown(replies) {
  for (const [err] of replies) {
    if (err) throw err;
  }
  return replies.map(([, value]) => value);
}

/** Runs `command` (name and arguments), after `ASKING` on the same connection when `asking`. */
async function once(connection, asking, command) {
  if (!asking) return connection.call(...command);
  const replies = await connection.pipeline().call('ASKING').call(...command).exec();
  return firstErrorThrown(replies)[1];
}

/** A Redis Cluster client routed by shardroute (see the top of this file; redis.d.ts documents the API). */
class ClusterClient {
  #seeds;
  #connectionOptions;
  /** `address` or `address readonly` -> { redis, ready: Promise<Redis> }. */
  #connections = new Map();
  /** Node id -> `host:port`. */
  #addressOf = new Map();
  #router = new shardroute.Router(EMPTY);
  #lastRefresh = -Infinity;
  #refreshing = null;
  #ready = null;
  #isReady = false;
  #turn = 0;

  constructor(startupNodes, options = {}) {
    const {
      readFromReplicas = false,
      maxRedirects = 5,
      refreshIntervalMs = 200,
      retryMs = 20000,
      connectTimeoutMs = 5000,
      commandTimeoutMs = 5000,
      ...redisOptions
    } = options;
    this.#seeds = [...(startupNodes ?? [])].map(addressOfSeed);
    if (this.#seeds.length === 0) throw new TypeError('startupNodes: give at least one host:port');
    this.readFromReplicas = readFromReplicas;
    this.maxRedirects = maxRedirects;
    this.refreshIntervalMs = refreshIntervalMs;
    this.retryMs = retryMs;
    // One connection per node that fails fast: no offline queue and no reconnection of
    // its own (a dead node's commands fail at once; the client backs off, refreshes
    // and opens a new connection itself), a bounded connect and command time.
    this.#connectionOptions = {
      connectTimeout: connectTimeoutMs,
      commandTimeout: commandTimeoutMs,
      ...redisOptions,
      lazyConnect: true,
      enableOfflineQueue: false,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
      retryStrategy: null,
      autoResubscribe: false,
    };
    this.stats = new ClusterStats();
  }

  /** A client whose table has been read (`ready()` done). */
  static async connect(startupNodes, options) {
    const client = new ClusterClient(startupNodes, options);
    await client.ready();
    return client;
  }

  /**
   * Reads the slot table for the first time, retrying for `retryMs` until a node
   * answers. Commands call it themselves; calling it first surfaces an unreachable
   * cluster early.
   */
  ready() {
    if (this.#ready === null) {
      this.#ready = this.#refreshOrRetry().then(
        () => {
          this.#isReady = true;
        },
        (err) => {
          this.#ready = null;
          throw err;
        },
      );
    }
    return this.#ready;
  }

  /** The current router: a `redis_cluster` topology, replaced on every MOVED and refresh. */
  get router() {
    return this.#router;
  }

  // -- connections and the table ------------------------------------------------

  /**
   * The connection (an ioredis `Redis`, connected) to the node at `address`, made on
   * first use; with `readonly`, one that sent `READONLY` (reads of a replica).
   */
  connection(address, { readonly = false } = {}) {
    const name = readonly ? `${address} readonly` : address;
    const known = this.#connections.get(name);
    if (known !== undefined) return known.ready;
    const [host, port] = splitAddress(address);
    const redis = new Redis({ ...this.#connectionOptions, host, port });
    // Failures reach the caller through the commands; an 'error' event without a
    // listener would be printed by ioredis.
    redis.on('error', () => {});
    const entry = { redis, ready: null };
    const forget = () => {
      if (this.#connections.get(name) === entry) this.#connections.delete(name);
    };
    redis.once('end', forget);
    entry.ready = redis.connect().then(async () => {
      if (readonly) {
        const reply = await redis.call('READONLY');
        if (reply !== 'OK') throw new Error(`READONLY was refused by ${address}: ${reply}`);
      }
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
    const address = this.#addressOf.get(node);
    if (address === undefined) throw new Error(`shardroute/redis: no address for node ${JSON.stringify(node)}`);
    return address;
  }

  /**
   * Reads the slot table from the first node that answers `CLUSTER SHARDS` (known nodes
   * and startup nodes, in random order) and replaces the router. One refresh runs at a
   * time: a call while one runs waits for it.
   */
  refresh() {
    if (this.#refreshing === null) {
      this.#refreshing = this.#refreshOnce().finally(() => {
        this.#refreshing = null;
      });
    }
    return this.#refreshing;
  }

  async #refreshOnce() {
    const candidates = [...new Set([...this.#addressOf.values(), ...this.#seeds])];
    for (let i = candidates.length - 1; i > 0; i -= 1) {
      const j = Math.floor(Math.random() * (i + 1));
      [candidates[i], candidates[j]] = [candidates[j], candidates[i]];
    }
    let failure = null;
    for (const address of candidates) {
      let reply;
      try {
        const connection = await this.connection(address);
        reply = text(await connection.call('CLUSTER', 'SHARDS'));
      } catch (err) {
        if (!(err instanceof ReplyError) && !isTransportError(err)) throw err;
        failure = err;
        continue;
      }
      // Applied to the router of this moment (a MOVED may have replaced it meanwhile).
      const { topology } = shardroute.apply(this.#router.toJson(), { op: 'import_redis_cluster_shards', reply });
      this.#router = this.#router.replace(topology);
      this.#addressOf = new Map(topology.nodes.map((node) => [node.id, node.address]));
      this.#lastRefresh = performance.now();
      this.stats.refreshes += 1;
      return;
    }
    throw new ConnectionError(
      `no node answered CLUSTER SHARDS (tried ${candidates.join(', ')}): ${failure && failure.message}`,
      { cause: failure },
    );
  }

  async #refreshOrRetry() {
    const deadline = performance.now() + this.retryMs;
    let delay = 50;
    for (;;) {
      try {
        await this.refresh();
        return;
      } catch (err) {
        if (!(err instanceof ConnectionError) || performance.now() > deadline) throw err;
        await sleep(delay);
        delay = Math.min(delay * 2, 1000);
      }
    }
  }

  /** After a MOVED: one refresh per `refreshIntervalMs` at most. */
  async #refreshSoon() {
    if (performance.now() - this.#lastRefresh < this.refreshIntervalMs) return;
    try {
      await this.refresh();
    } catch (err) {
      if (!(err instanceof ConnectionError)) throw err;
      // The MOVED already fixed this slot; the next one will try again.
      this.stats.error('refresh');
    }
  }

  // -- one command ---------------------------------------------------------------

  /** `[address, readonly]` of the node a command for `key` goes to. */
  #target(key, read) {
    if (read && this.readFromReplicas) {
      this.#turn = (this.#turn + 1) >>> 0;
      return [this.addressOf(this.#router.readReplica(key, this.#turn)), true];
    }
    return [this.addressOf(this.#router.node(key)), false];
  }

  /**
   * Runs one command (`[name, ...arguments]`) for `key` on the node that owns its slot,
   * following redirects; other Redis errors are thrown as ioredis throws them.
   */
  async execute(command, { key, read = false } = {}) {
    return this.#run(command[0], key, read, (connection, asking) => once(connection, asking, command));
  }

  /**
   * Calls `attempt(connection, asking)` on the key's node until it answers: follows MOVED
   * and ASK (at most `maxRedirects`), backs off and refreshes on lost connections,
   * TRYAGAIN, CLUSTERDOWN and LOADING (for at most `retryMs`). `redirect` is the reply
   * a pipeline already got for this command, if any.
   */
  async #run(name, key, read, attempt, redirect = null) {
    if (!this.#isReady) await this.ready();
    this.stats.commands += 1;
    let redirects = 0;
    let asking = null;
    let deadline = null;
    let delay = 20;
    let last = null;
    for (;;) {
      if (redirect === null) {
        const [address, readonly] = asking !== null ? [asking, false] : this.#target(key, read);
        try {
          return await attempt(await this.connection(address, { readonly }), asking !== null);
        } catch (err) {
          last = err;
          if (err instanceof ReplyError) {
            const busy = busyKind(err.message);
            if (isRedirect(err.message)) redirect = err.message;
            else if (busy === null) throw err;
            else this.stats.error(busy);
          } else if (isTransportError(err)) {
            this.stats.error(transportKind(err));
            asking = null;
          } else {
            throw err;
          }
        }
      }
      if (redirect !== null) {
        redirects += 1;
        this.stats.longestRedirectChain = Math.max(this.stats.longestRedirectChain, redirects);
        if (redirects > this.maxRedirects) {
          throw new TooManyRedirects(`${name}: more than ${this.maxRedirects} redirects, last ${redirect}`);
        }
        const { kind, slot, address } = shardroute.parseRedirect(redirect);
        redirect = null;
        if (kind === 'MOVED') {
          this.stats.moved += 1;
          asking = null;
          await this.#followMoved(slot, address);
        } else {
          this.stats.ask += 1;
          asking = this.#router.ask(slot, address);
        }
        continue;
      }
      // A node is down or busy: back off, refresh, retry until the deadline.
      const now = performance.now();
      deadline ??= now + this.retryMs;
      if (now > deadline) {
        throw new ConnectionError(`${name} for ${String(key)}: no answer within ${this.retryMs} ms: ${last.message}`,
          { cause: last });
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 500);
      try {
        await this.refresh();
      } catch (err) {
        if (!(err instanceof ConnectionError)) throw err;
      }
    }
  }

  async #followMoved(slot, address) {
    this.#router = this.#router.moved(slot, address);
    // A node the table did not know joins under its address as its id.
    if (!this.#addressOf.has(address)) this.#addressOf.set(address, address);
    await this.#refreshSoon();
  }

  // -- commands ------------------------------------------------------------------

  get(key) {
    return this.execute(['GET', key], { key, read: true });
  }

  set(key, value) {
    return this.execute(['SET', key, value], { key });
  }

  del(key) {
    return this.execute(['DEL', key], { key });
  }

  /**
   * `SET` then `WAIT replicas timeoutMs` on the same connection: how many replicas
   * acknowledged the write (Redis replicates asynchronously; a write no replica
   * acknowledged may be lost in a failover).
   */
  async setAndWait(key, value, replicas = 1, timeoutMs = 500) {
    const acknowledged = await this.#run('SET', key, false, async (connection, asking) => {
      const pipeline = connection.pipeline();
      if (asking) pipeline.call('ASKING');
      pipeline.call('SET', key, value).call('WAIT', replicas, timeoutMs);
      return firstErrorThrown(await pipeline.exec()).at(-1);
    });
    return Number(acknowledged);
  }

  /** `MSET` of keys that share a slot (a hash tag); `cross_slot` otherwise. */
  async mset(mapping) {
    if (!this.#isReady) await this.ready();
    const entries = mapping instanceof Map ? [...mapping] : Object.entries(mapping);
    const keys = entries.map(([key]) => key);
    this.#router.sameSlot(keys);
    return this.execute(['MSET', ...entries.flat()], { key: keys[0] });
  }

  /** Values of `keys` in order: one `MGET` per slot, those of one node sent together. */
  async mget(keys) {
    keys = [...keys];
    if (!this.#isReady) await this.ready();
    const slots = this.#router.routeMany(keys);
    const values = new Array(keys.length).fill(null);
    const batches = [];
    for (const { indices } of this.#router.groupByNode(keys)) {
      const bySlot = new Map();
      for (const index of indices) {
        const members = bySlot.get(slots[index]);
        if (members === undefined) bySlot.set(slots[index], [index]);
        else members.push(index);
      }
      batches.push(...bySlot.values());
    }
    await Promise.all(batches.map(async (members) => {
      const got = await this.execute(['MGET', ...members.map((i) => keys[i])], { key: keys[members[0]], read: true });
      members.forEach((index, j) => {
        values[index] = got[j];
      });
    }));
    return values;
  }

  /** `GET` of every key, one pipeline per node (grouped by the core). */
  pipelineGet(keys) {
    keys = [...keys];
    return this.#pipelined(keys.map((key) => ['GET', key]), keys, true);
  }

  /** `SET` of every `[key, value]` pair, one pipeline per node. */
  pipelineSet(pairs) {
    pairs = [...pairs];
    return this.#pipelined(pairs.map(([key, value]) => ['SET', key, value]), pairs.map(([key]) => key), false);
  }

  async #pipelined(commands, keys, read) {
    if (!this.#isReady) await this.ready();
    const results = new Array(commands.length).fill(null);
    const failed = [];
    this.stats.commands += commands.length;
    await Promise.all(this.#router.groupByNode(keys).map(async ({ node, indices }) => {
      let address = this.addressOf(node);
      let readonly = false;
      if (read && this.readFromReplicas) {
        this.#turn = (this.#turn + 1) >>> 0;
        [address, readonly] = [this.addressOf(this.#router.readReplica(keys[indices[0]], this.#turn)), true];
      }
      let replies;
      try {
        const pipeline = (await this.connection(address, { readonly })).pipeline();
        for (const index of indices) pipeline.call(...commands[index]);
        replies = await pipeline.exec();
      } catch (err) {
        if (!isTransportError(err)) throw err;
        replies = indices.map(() => [err, null]);
      }
      const lost = replies.find(([err]) => err && isTransportError(err));
      if (lost !== undefined) this.stats.error(transportKind(lost[0]));
      indices.forEach((index, j) => {
        const [err, value] = replies[j];
        if (err) failed.push([index, err]);
        else results[index] = value;
      });
    }));
    // Redirected or cut off: each such command alone takes the careful path, starting
    // from the redirect it got.
    failed.sort((a, b) => a[0] - b[0]);
    for (const [index, err] of failed) {
      const reply = err instanceof ReplyError ? err.message : null;
      if (reply !== null && !isRedirect(reply) && busyKind(reply) === null) throw err;
      this.stats.commands -= 1;
      const command = commands[index];
      const redirect = reply !== null && isRedirect(reply) ? reply : null;
      results[index] = await this.#run(command[0], keys[index], read,
        (connection, asking) => once(connection, asking, command), redirect);
    }
    return results;
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
