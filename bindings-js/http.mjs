// shardroute/http (the Node addon) and shardroute-wasm/http (WebAssembly): follow a
// topology served over HTTP, with the core deciding. Written once, here;
// bindings-wasm/build.sh copies it as it is (http.mjs, and route-http.mjs over the route
// build), bindings-node/build.sh makes it CommonJS (http.js): `export ` dropped, and the
// imports below `require('./index.js')` and `require('./shared.js')`.
//
// Any URL that answers `GET` with the document and an `ETag` serves: a static file behind
// a CDN, object storage, a key-value store's HTTP face. The protocol is the core's HTTP
// source session (`SourceSession` with `{ source: 'http', ... }`, core/src/session/http.rs):
// `If-None-Match` (`304 Not Modified`: nothing to read) and `Prefer: wait=N` (RFC 7240,
// a long poll), the poll schedule (`intervalMs` from one request sent to the next), each
// request's deadline, what a status means, the backoff after a lost server, and the
// follower that installs a newer epoch and refuses an invalid document (a body served as
// `application/octet-stream` is a binary dictionary; any other is plain bytes, refused
// `invalid_topology` when it is not UTF-8, never decoded with U+FFFD in it) or an older one,
// keeping the last good router. Its defaults are the core's. This shell makes the
// requests (with `fetch`) and keeps the session's one timer (shared.mjs's SourceDriver,
// etcd.mjs's too), and calls back (a callback that throws is reported to `onError`, and
// the follower goes on). The Python twin is
// `shardroute.http`, with the same names in snake_case.

// The package's main entry, by the package's own name (a package may import itself
// through its `exports`): the runtime's condition picks it, so this module uses the one
// instance of the WebAssembly module that entry loads (workerd's, Deno's, Node's, or the
// web entry the page `init`s).
import { Offered, ShardrouteError, SourceSession } from 'shardroute-wasm';
import { EpochWaiters, SourceDriver, callSafely, globalFetch, sourceOffered, sourceStats } from './shared.mjs';

/**
 * The server could not be reached (`code` `'unreachable'`: no connection, a timeout),
 * answered with a status other than 200 and 304 (`'http'`, with `status`), or the follower
 * was closed (`'closed'`: a `refresh` that `close` ended, or one made after it). `cause`
 * is the error underneath, where there is one.
 */
export class HttpError extends Error {
  constructor(code, message, { status = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.status = status;
  }
}
Object.defineProperty(HttpError.prototype, 'name', { value: 'HttpError', writable: true, configurable: true });

/** The error of the session's `{code, message, status}`: an HttpError for a source's code, else the core's. */
function errorOf({ code, message, status }, cause) {
  if (code === 'unreachable' || code === 'http' || code === 'closed') return new HttpError(code, message, { status: status ?? null, cause });
  return new ShardrouteError(code, message);
}

/** The package's Offered of the session's `{result, changed, revision}`. */
const offeredOf = ({ result }) => sourceOffered((...fields) => new Offered(...fields), result);

/** `value` when it is a finite number >= 0 (an integer if `integer`), else a RangeError naming `name`. */
function checked(name, value, integer = false) {
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value) || (integer && !Number.isSafeInteger(value))) {
    throw new RangeError(`HttpFollower: ${name} must be a finite ${integer ? 'integer' : 'number'} >= 0, got ${String(value)}`);
  }
  return value;
}

/**
 * Follows the document at `url` (see the top of this file; http.d.ts documents the API):
 * every decision is the core's `SourceSession`.
 */
export class HttpFollower {
  #url;
  #driver;
  #onChange;
  #onRefused;
  #onError;
  /** The router installed last, one object until the next (reading it is a field read). */
  #router = null;
  #waiters = new EpochWaiters();

  /** Use `HttpFollower.start`. */
  constructor(url, {
    config = null, intervalMs, waitS, timeoutMs, onChange = null, onRefused = null, onError = null, fetch = null,
  } = {}) {
    this.#url = String(url);
    const settings = { ...(config ?? {}), source: 'http', url: this.#url };
    if (intervalMs !== undefined) settings.interval_ms = Math.round(checked('intervalMs', intervalMs));
    if (waitS !== undefined) settings.wait_s = checked('waitS', waitS, true);
    if (timeoutMs !== undefined) settings.request_timeout_ms = Math.round(checked('timeoutMs', timeoutMs));
    if (fetch !== null && typeof fetch !== 'function') throw new TypeError('HttpFollower: fetch must be a function');
    this.#driver = new SourceDriver(new SourceSession(settings), fetch ?? globalFetch, errorOf, {
      offered: (body) => this.#offered(body),
      lost: (error) => callSafely(this.#onError, null, error),
      error: (err) => callSafely(this.#onError, null, err), // a bug in shared.mjs
    });
    this.#onChange = onChange;
    this.#onRefused = onRefused;
    this.#onError = onError;
  }

  /**
   * A follower that has asked once (an `HttpError` when that failed) and asks on, the
   * first long poll at once.
   */
  static async start(url, options) {
    const follower = new HttpFollower(url, options);
    try {
      await follower.refresh();
    } catch (err) {
      follower.close();
      throw err;
    }
    follower.#driver.feed((session, now) => session.start(now));
    return follower;
  }

  /** The URL it asks. */
  get url() {
    return this.#url;
  }

  /** The router installed last (a new `Router` each time), or null before the first document. */
  get router() {
    return this.#router;
  }

  /** The validator (`ETag`) of the last body read, or null. */
  get etag() {
    return this.#driver.session.state.etag ?? null;
  }

  /** The core's counters: the follower's, `requests` answered and `notModified` (304) answers; every count a bigint. */
  get stats() {
    return sourceStats(this.#driver.session.stats);
  }

  /** Asks now, without a long poll: what became of the body, or null for 304. */
  async refresh() {
    // `{offered: <result> | null (304), revision}`, as etcd's refresh.
    const { offered } = await this.#driver.call({ op: 'refresh' });
    return offered === null ? null : offeredOf({ result: offered });
  }

  /** Resolves true once the router's epoch is at least `epoch`, false after `timeoutMs` (omitted: never) or on `close`. */
  waitForEpoch(epoch, timeoutMs) {
    return this.#waiters.wait(epoch, timeoutMs);
  }

  /** Stops asking: aborts the request in flight (a `refresh` too) and any wait; idempotent. */
  close() {
    this.#driver.close();
    this.#waiters.closeAll();
  }

  /** A body the session's follower read: the router it installed, and the callbacks. */
  #offered(body) {
    const offered = offeredOf(body);
    if (offered.kind === 'installed') {
      this.#router = this.#driver.session.router;
      this.#waiters.reached(offered.epoch);
    }
    if (this.#driver.closed) return;
    if (body.changed) callSafely(this.#onChange, this.#onError, this);
    if (offered.kind === 'refused') callSafely(this.#onRefused, this.#onError, this, offered);
  }
}
