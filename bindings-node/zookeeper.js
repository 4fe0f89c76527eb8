'use strict';
// shardroute/zookeeper: follow a topology kept in a ZooKeeper node, and publish one, over
// the core's ZooKeeper SourceSession (`{ source: 'zookeeper' }`). Node only: ZooKeeper
// speaks its own protocol over TCP, which a browser or an edge runtime cannot open, so
// shardroute-wasm has no zookeeper entry (this file is not made from bindings-js/).
//
// Every decision is the core's ZooKeeper session (core/src/session/zookeeper.rs): the jute
// codec, the handshake and its deadline, the session timeout, pings, when a silent member
// is left for the next, digest authentication, the watches and the reads they call for
// (one at a time), the reconnect backoff, and publish's compare-and-swap (`setData` at the
// version read, `create` with its parents when absent) and repair. This shell is transport
// only: shared.mjs's SourceDriver opens each TCP connection an action asks for
// (`node:net`), writes the bytes it is given, hands every read back as it came (buffering
// nothing), keeps one timer at `session.deadline`, and calls the application back (a
// callback that throws is reported to `onError`, and the follower goes on). The API is the
// shape of shardroute/etcd's; the Python twin is `shardroute.zookeeper`.

const net = require('node:net');

const { Offered, ShardrouteError, SourceSession, TopologyFollower } = require('./index.js');
const { EpochWaiters, SourceDriver, callSafely, sourceOffered, sourceStats } = require('./shared.js');

/**
 * What ZooKeeper or the session said went wrong, with the session's stable code
 * (`unreachable`, `malformed`, `conflict`, `closed`, `unauthenticated`, or a core code such
 * as `limit_exceeded`, `invalid_topology` or `stale_epoch`): a ShardrouteError, so one
 * `catch` and `.code` serve for both.
 */
class ZooKeeperError extends ShardrouteError {
  constructor(code, message, { cause } = {}) {
    super(code, message, cause === undefined ? undefined : { cause });
  }
}
Object.defineProperty(ZooKeeperError.prototype, 'name', { value: 'ZooKeeperError', writable: true, configurable: true });

/** The ZooKeeperError of the session's `{code, message}` (`cause`: the transport's error behind it). */
const errorOf = ({ code, message }, cause) => new ZooKeeperError(code, message, { cause });

/** The package's Offered of the session's result. */
const offeredOf = (result) => sourceOffered((...fields) => new Offered(...fields), result);

/** The members as given: one connection string (`'host:port,host:port'`) or a list. */
const memberList = (hosts) => (typeof hosts === 'string' ? hosts.split(',').map((each) => each.trim()) : [...hosts].map(String));

/** The session settings of `hosts` and the options every entry takes (omitted: the core's defaults). */
function settingsOf(hosts, { sessionTimeoutMs, timeoutMs, user, password } = {}) {
  return {
    source: 'zookeeper', members: memberList(hosts), session_timeout_ms: sessionTimeoutMs, request_timeout_ms: timeoutMs, user, password,
  };
}

/** A driver of a session made from `settings`, over `node:net`. */
const driverOf = (settings, hooks) => new SourceDriver(new SourceSession(settings), null, errorOf, hooks, net);

/**
 * Follows the topology document at a ZooKeeper node (see the top of this file;
 * zookeeper.d.ts documents the API).
 */
class ZooKeeperFollower {
  #driver;
  #onChange;
  #onRefused;
  #onError;
  /** The router installed last, one object until the next (reading it is a field read). */
  #router = null;
  #waiters = new EpochWaiters();
  #closed = false;
  /** `{ resolve, reject }` of `start` until the first read ends. */
  #starting = null;

  /** Use `ZooKeeperFollower.start`. */
  constructor(hosts, path, { config = null, onChange = null, onRefused = null, onError = null, ...options } = {}) {
    this.#driver = driverOf({ ...settingsOf(hosts, options), path: String(path), ...config }, {
      offered: (offered) => this.#offered(offered),
      lost: (error) => this.#lost(error),
      error: (err) => callSafely(this.#onError, null, err), // a bug in shared.mjs
    });
    this.#onChange = onChange;
    this.#onRefused = onRefused;
    this.#onError = onError;
  }

  /**
   * A follower that has read `path` once (a ZooKeeperError when ZooKeeper cannot be
   * reached or refuses the credentials; an absent node leaves `router` null until it is
   * created) and follows it from then on.
   */
  static async start(hosts, path, options) {
    const follower = new ZooKeeperFollower(hosts, path, options);
    await new Promise((resolve, reject) => {
      follower.#starting = { resolve, reject };
      follower.#driver.feed((session, now) => session.start(now));
      // The end of a read of the node: an absent one offers nothing to wait for.
      follower.#driver.call({ op: 'refresh' }).then(() => follower.#started(), (err) => follower.#lost(err));
    });
    return follower;
  }

  #started() {
    this.#starting?.resolve();
    this.#starting = null;
  }

  #offered({ result, changed }) {
    const offered = offeredOf(result);
    const { kind } = offered;
    if (kind === 'installed') this.#router = this.#driver.session.router;
    this.#started();
    if (this.#closed) return;
    if (kind === 'installed') this.#waiters.reached(offered.epoch);
    if (changed) callSafely(this.#onChange, this.#onError, this);
    else if (kind === 'refused') callSafely(this.#onRefused, this.#onError, this, offered);
  }

  #lost(error) {
    if (this.#starting !== null) {
      this.#starting.reject(error);
      this.#starting = null;
      this.close();
    } else if (!this.#closed) {
      callSafely(this.#onError, null, error);
    }
  }

  /** The router installed last (a new `Router` each time), or null before the first document. */
  get router() {
    return this.#router;
  }

  /** The `mzxid` of the document installed last (a bigint), or null. */
  get revision() {
    const { revision } = this.#driver.session.state;
    return revision === null || revision === undefined ? null : BigInt(revision);
  }

  /** The member in use, as given (`'host:port'`): between sessions, the one tried. */
  get member() {
    return this.#driver.session.state.member;
  }

  /** The core's counters: the follower's and its session's, every count a bigint. */
  get stats() {
    return sourceStats(this.#driver.session.state.stats);
  }

  /**
   * Reads the node now (setting the watch again) and offers its value: the `Offered`, or
   * null when the node is absent or empty. A ZooKeeperError when ZooKeeper cannot be
   * reached (the router held is kept).
   */
  async refresh() {
    // Its document is offered (and the callbacks called) before the call ends.
    const { offered } = await this.#driver.call({ op: 'refresh' });
    return offered === null || offered === undefined ? null : offeredOf(offered);
  }

  /** Resolves true once the router's epoch is at least `epoch`, false after `timeoutMs` (omitted: never) or on `close`. */
  waitForEpoch(epoch, timeoutMs) {
    return this.#waiters.wait(epoch, timeoutMs);
  }

  /** Stops following (closes the ZooKeeper session and its connection) and any wait; idempotent. */
  close() {
    this.#closed = true;
    this.#driver.close();
    this.#waiters.closeAll();
  }
}

/**
 * Writes `document` (text or an object) to the node at `path` with the compare-and-swap
 * the core builds from the value read (`setData` at its version; `create`, parents
 * included, when it is absent; with `user` and `password`, created readable and writable by
 * that user only): the write's `mzxid` (a bigint, the revision followers see). An outcome
 * the connection lost is read back. zookeeper.d.ts says what it throws.
 */
function publish(hosts, path, document, { replace = false, ...options } = {}) {
  return (async () => {
    const op = {
      op: 'publish', path: String(path), replace: Boolean(replace),
      // An object's JSON text as the package writes documents (strict, canonical).
      document: typeof document === 'string' ? document : new TopologyFollower().publish(document).document,
    };
    const driver = driverOf(settingsOf(hosts, options));
    try {
      return BigInt((await driver.call(op)).revision);
    } finally {
      driver.close();
    }
  })();
}

// Shorthand properties only: Node's ES module loader finds the names of a CommonJS
// module's exports by reading this statement (cjs-module-lexer), for `import { publish }`.
module.exports = { ZooKeeperError, ZooKeeperFollower, publish };
