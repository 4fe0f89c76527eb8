'use strict';
// shardroute/zookeeper: follow a topology kept in a ZooKeeper node, and publish one, with
// the core's follower deciding. Built on node-zookeeper-client (an optional peer
// dependency: `npm install node-zookeeper-client`), a pure JavaScript client: it installs
// with no compiler on any platform Node runs on, where the better-kept `zookeeper` package
// builds the C client at install time.
//
// `ZooKeeperFollower` reads one node with a watch and hands every value to the core's
// `TopologyFollower` as plain bytes (`offerBytes`: a binary dictionary by its magic,
// otherwise JSON text that must be UTF-8), with the node's `mzxid` (the ensemble-wide id of
// its last write, a bigint) as the revision. Every watch event, and every reconnection, is
// answered by reading the node again, one read at a time. The client moves to another
// member when one stops answering; a lost session (expired) is followed by a new client
// after the wait the core's follower says. `publish` writes with ZooKeeper's
// compare-and-swap (`setData` at the version read, `create` when absent) after the core's
// follower checked the document. The Python twin is `shardroute.zookeeper`, with the same
// names in snake_case.

const { TopologyFollower } = require('./index.js');
const { EpochWaiters, callSafely, monotonicMs: now, sleepUntil } = require('./shared.js');

/** node-zookeeper-client, required when first used (an optional peer dependency). */
function zookeeperClient() {
  try {
    return require('node-zookeeper-client');
  } catch (err) {
    throw new Error('shardroute/zookeeper needs node-zookeeper-client: npm install node-zookeeper-client', { cause: err });
  }
}

/**
 * ZooKeeper could not be reached or lost the session (`code` `'unreachable'`), or refused a
 * compare-and-swap of `publish` (`'conflict'`). `cause` is the client's error, where there is one.
 */
class ZooKeeperError extends Error {
  constructor(code, message, { cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
  }
}
Object.defineProperty(ZooKeeperError.prototype, 'name', { value: 'ZooKeeperError', writable: true, configurable: true });

/** A stat's `mzxid` (8 big-endian bytes) as a bigint. */
const zxid = (stat) => Buffer.from(stat.mzxid).readBigUInt64BE(0);

/** `call(callback)`'s answer as a promise, a ZooKeeperError after `timeoutMs` (a client holds calls while disconnected). */
function answer(call, timeoutMs, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new ZooKeeperError('unreachable', `zookeeper ${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
    call((err, ...results) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(results);
    });
  });
}

/** A connected client of `hosts` (a connection string), or a ZooKeeperError after `timeoutMs`. */
function connect(hosts, { sessionTimeoutMs, spinDelayMs }) {
  const zookeeper = zookeeperClient();
  const client = zookeeper.createClient(hosts, { sessionTimeout: sessionTimeoutMs, spinDelay: spinDelayMs, retries: 0 });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.close();
      reject(new ZooKeeperError('unreachable', `zookeeper ${hosts}: not connected within ${sessionTimeoutMs} ms`));
    }, sessionTimeoutMs);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve(client);
    });
    client.connect();
  });
}

/** The client's error as ours: a lost connection or session is `unreachable`. */
function unreachable(err, what) {
  if (err instanceof ZooKeeperError) return err;
  return new ZooKeeperError('unreachable', `zookeeper ${what}: ${err && err.message}`, { cause: err });
}

/**
 * Follows the topology document at `path` (see the top of this file; zookeeper.d.ts
 * documents the API).
 */
class ZooKeeperFollower {
  #hosts;
  #path;
  #native;
  #client = null;
  /** The router installed last, one object until the next (reading it is a field read). */
  #router = null;
  #sessionTimeoutMs;
  #onChange;
  #onRefused;
  #onError;
  #reads = 0n;
  #events = 0n;
  #sessionsLost = 0n;
  /** True from a lost connection until the client is connected again. */
  #away = false;
  /** When to try again after the last loss (the core's answer). */
  #wakeAt = 0n;
  /** A probe of the watchdog is out. */
  #probing = false;
  /** When the connection was lost (or last moved on), on `now()`'s clock. */
  #awaySince = 0;
  /** Reads and offers run one at a time, in order, so revisions reach the core ascending. */
  #reading = Promise.resolve();
  #closing = new AbortController();
  #waiters = new EpochWaiters();
  /** The watch, one function for the follower's life (the client keeps each function once a path). */
  #fired = (event) => {
    if (this.#closing.signal.aborted) return;
    this.#events += 1n;
    this.#readAgain();
  };

  /** Use `ZooKeeperFollower.start`. */
  constructor(hosts, path, { config = null, onChange = null, onRefused = null, onError = null, sessionTimeoutMs = 10000 } = {}) {
    this.#hosts = hosts;
    this.#path = path;
    this.#native = new TopologyFollower(config);
    this.#sessionTimeoutMs = sessionTimeoutMs;
    this.#onChange = onChange;
    this.#onRefused = onRefused;
    this.#onError = onError;
  }

  /**
   * A follower connected to `hosts` (`'host:port,host:port'`) that has read `path` once (a
   * `ZooKeeperError` when ZooKeeper cannot be reached; an absent node leaves `router` null
   * until it is created) and follows it from then on.
   */
  static async start(hosts, path, options) {
    const follower = new ZooKeeperFollower(hosts, path, options);
    await follower.#connect();
    follower.#watch();
    try {
      await follower.refresh();
    } catch (err) {
      follower.close();
      throw err;
    }
    return follower;
  }

  async #connect() {
    const spinDelayMs = Number(this.#native.config.reconnect_first_ms);
    const client = await connect(this.#hosts, { sessionTimeoutMs: this.#sessionTimeoutMs, spinDelayMs });
    if (this.#closing.signal.aborted) {
      client.close();
      return;
    }
    this.#client = client;
    // Events of a client replaced after its session expired are not this follower's.
    const mine = (handler) => (...args) => {
      if (client === this.#client && !this.#closing.signal.aborted) handler(...args);
    };
    client.on('disconnected', mine(() => this.#lost(new ZooKeeperError('unreachable', `zookeeper ${this.#hosts}: disconnected`))));
    client.on('connected', mine(() => {
      if (!this.#away) return;
      this.#away = false;
      this.#native.connected();
      this.#readAgain(); // a change missed while away
    }));
    client.on('expired', mine(() => {
      this.#sessionsLost += 1n;
      this.#replace(client, 'session expired');
    }));
  }

  /**
   * Every third of the session timeout, a probe (`exists`) while connected: node-zookeeper-client
   * pings but never notices a member that stops answering (paused, or cut off with its
   * connections open), so an answer missing for two thirds of the session timeout is a
   * loss, as kazoo and the C client take it. The client's connection is dropped so that it
   * moves to the next member with its session (node-zookeeper-client has no public call for
   * that: its socket, where it is found; otherwise the client is replaced, a new session).
   * While it reconnects, a member that holds it that long without an answer is left the
   * same way.
   */
  #watch() {
    const every = Math.max(1, Math.floor(this.#sessionTimeoutMs / 3));
    const timer = setInterval(() => {
      const client = this.#client;
      if (client === null || this.#probing) return;
      if (this.#away) {
        // Reconnecting: a member that takes the connection but never answers the session
        // request (paused) holds node-zookeeper-client for ever. Move it on.
        if (now() - this.#awaySince >= 2 * every) {
          this.#awaySince = now();
          client.connectionManager?.socket?.destroy?.();
        }
        return;
      }
      this.#probing = true;
      answer((done) => client.exists(this.#path, done), 2 * every, 'probe')
        .then(() => {}, (err) => {
          if (!(err instanceof ZooKeeperError) || client !== this.#client || this.#away) return;
          const socket = client.connectionManager?.socket;
          if (typeof socket?.destroy === 'function') {
            this.#lost(new ZooKeeperError('unreachable', `zookeeper ${this.#hosts}: no answer within ${2 * every} ms`));
            socket.destroy(); // 'connected' again once another member took the session
          } else {
            this.#replace(client, `no answer within ${2 * every} ms`);
          }
        })
        .finally(() => { this.#probing = false; });
    }, every);
    timer.unref?.();
    this.#closing.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  /** The source was lost (once per loss): counted by the core, which says when to try again. */
  #lost(err) {
    if (this.#away) return;
    this.#away = true;
    this.#awaySince = now();
    this.#wakeAt = this.#native.disconnected(now());
    callSafely(this.#onError, null, err);
  }

  /** The client is done (its session expired, or its member answers nothing): a new one, after the wait the core says. */
  async #replace(client, why) {
    if (this.#closing.signal.aborted || client !== this.#client) return;
    this.#client = null;
    this.#lost(new ZooKeeperError('unreachable', `zookeeper ${this.#hosts}: ${why}`));
    client.close();
    const signal = this.#closing.signal;
    let wakeAt = this.#wakeAt;
    while (await sleepUntil(wakeAt, signal)) {
      try {
        await this.#connect();
        this.#away = false;
        this.#native.connected();
        await this.refresh();
        return;
      } catch (err) {
        if (signal.aborted) return;
        callSafely(this.#onError, null, unreachable(err, 'reconnect'));
        wakeAt = this.#native.disconnected(now());
      }
    }
  }

  /** The router installed last (a new `Router` each time), or null before the first document. */
  get router() {
    return this.#router;
  }

  /** The `mzxid` of the document installed last (a bigint), or null. */
  get revision() {
    return this.#native.revision;
  }

  /** The core's counters, and the shell's: `reads`, `events` (watches fired), `sessionsLost`; every count a bigint. */
  get stats() {
    return { ...this.#native.stats, reads: this.#reads, events: this.#events, sessionsLost: this.#sessionsLost };
  }

  /**
   * Reads the node now (setting the watch again) and offers its value: the `Offered`, or
   * null when the node is absent. A `ZooKeeperError` when ZooKeeper cannot be reached (the
   * router held is kept).
   */
  refresh() {
    const read = this.#reading.then(() => this.#readAndOffer());
    this.#reading = read.catch(() => {});
    return read;
  }

  #readAgain() {
    this.refresh().catch((err) => {
      // Lost mid-read: the client's 'connected' reads again.
      if (!this.#closing.signal.aborted) callSafely(this.#onError, null, unreachable(err, `read ${this.#path}`));
    });
  }

  async #readAndOffer() {
    const client = this.#client;
    if (client === null) throw new ZooKeeperError('unreachable', `zookeeper ${this.#hosts}: not connected`);
    const { Exception } = zookeeperClient();
    let data;
    let stat;
    for (;;) {
      try {
        [data, stat] = await answer((done) => client.getData(this.#path, this.#fired, done), this.#sessionTimeoutMs, `read ${this.#path}`);
        break;
      } catch (err) {
        if (!(err instanceof Exception) || err.getCode() !== Exception.NO_NODE) throw unreachable(err, `read ${this.#path}`);
      }
      // Absent: a watch on its existence brings its creation (created meanwhile: read it).
      let exists;
      try {
        [exists] = await answer((done) => client.exists(this.#path, this.#fired, done), this.#sessionTimeoutMs, `read ${this.#path}`);
      } catch (err) {
        throw unreachable(err, `read ${this.#path}`);
      }
      if (!exists) {
        this.#reads += 1n;
        return null;
      }
    }
    this.#reads += 1n;
    // An empty node (made as a parent, or emptied) holds no document, as an absent one:
    // nothing offered (the CLI reads it the same way).
    if (!data || data.length === 0) return null;
    const offered = this.#native.offerBytes(data, zxid(stat), now());
    if (this.#closing.signal.aborted) return offered;
    if (offered.kind === 'installed') {
      this.#router = this.#native.router;
      this.#waiters.reached(offered.epoch);
      callSafely(this.#onChange, this.#onError, this);
    } else if (offered.kind === 'refused') {
      callSafely(this.#onRefused, this.#onError, this, offered);
    }
    return offered;
  }

  /** Resolves true once the router's epoch is at least `epoch`, false after `timeoutMs` (omitted: never) or on `close`. */
  waitForEpoch(epoch, timeoutMs) {
    return this.#waiters.wait(epoch, timeoutMs);
  }

  /** Stops following and closes the client; idempotent. */
  close() {
    this.#closing.abort();
    this.#waiters.closeAll();
    if (this.#client !== null) this.#client.close();
  }
}

/**
 * Writes `document` (text or an object) to the node at `path` with a compare-and-swap on
 * the value read (`setData` at its version; `create`, parents included, when it is absent):
 * the write's `mzxid` (a bigint, the revision followers see). The core's follower checks it
 * first (`ShardrouteError`: `invalid_topology`, `no_nodes`, `limit_exceeded`, or
 * `stale_epoch` unless its epoch is the stored one + 1; the first document may have any
 * epoch); a stored value it refuses is that refusal, not overwritten. A `ZooKeeperError`
 * with code `'conflict'` when someone wrote the node between the read and the write,
 * `'unreachable'` when ZooKeeper cannot be reached.
 */
async function publish(hosts, path, document, { timeoutMs = 10000 } = {}) {
  const { Exception } = zookeeperClient();
  const client = await connect(hosts, { sessionTimeoutMs: timeoutMs, spinDelayMs: 100 });
  try {
    const follower = new TopologyFollower();
    let stat = null;
    try {
      let data;
      [data, stat] = await answer((done) => client.getData(path, done), timeoutMs, `read ${path}`);
      // An empty node holds no document: written over at its version, any epoch.
      const error = data && data.length > 0 ? follower.offerBytes(data, zxid(stat), now()).error() : null;
      // Not overwritten: the epoch that follows a document nobody can read is unknown.
      if (error !== null) throw error;
    } catch (err) {
      if (!(err instanceof Exception) || err.getCode() !== Exception.NO_NODE) throw err instanceof Exception ? unreachable(err, `read ${path}`) : err;
    }
    const write = follower.publish(document);
    const value = Buffer.from(write.document);
    try {
      if (stat === null) {
        const parent = path.slice(0, path.lastIndexOf('/'));
        if (parent !== '') await answer((done) => client.mkdirp(parent, done), timeoutMs, `create ${parent}`);
        await answer((done) => client.create(path, value, done), timeoutMs, `create ${path}`);
        // This client has no create-with-stat: the node as read right after.
        const [created] = await answer((done) => client.exists(path, done), timeoutMs, `read ${path}`);
        return zxid(created);
      }
      const [written] = await answer((done) => client.setData(path, value, stat.version, done), timeoutMs, `write ${path}`);
      return zxid(written);
    } catch (err) {
      const code = err instanceof Exception ? err.getCode() : null;
      if (code === Exception.BAD_VERSION || code === Exception.NODE_EXISTS) {
        throw new ZooKeeperError('conflict', `publish: ${path} changed since it was read (epoch ${write.epoch} not written)`, { cause: err });
      }
      throw unreachable(err, `publish ${path}`);
    }
  } finally {
    client.close();
  }
}

// Shorthand properties only: Node's ES module loader finds the names of a CommonJS
// module's exports by reading this statement (cjs-module-lexer), for `import { publish }`.
module.exports = { ZooKeeperError, ZooKeeperFollower, publish };
