// shardroute/http (the Node addon) and shardroute-wasm/http (WebAssembly): follow a
// topology served over HTTP, with the core's follower deciding. Written once, here;
// bindings-wasm/build.sh copies it as it is (http.mjs), bindings-node/build.sh makes it
// CommonJS (http.js): `export ` dropped, and the import below a `require('./index.js')`.
//
// Any URL that answers `GET` with the document and an `ETag` serves: a static file behind
// a CDN, object storage, a key-value store's HTTP face. `HttpFollower` asks again with
// `If-None-Match` (`304 Not Modified`: nothing to read) and `Prefer: wait=N` (RFC 7240): a
// server that supports it holds the request until the document changes or N seconds pass
// (a long poll); one that does not answers at once, and the follower asks again after
// `intervalMs`. A body served as `application/octet-stream` is a binary dictionary
// (`encodeDictionary`); any other body is offered as plain bytes (`offerBytes`): the core
// tells a dictionary by its magic and refuses text that is not UTF-8 (`invalid_topology`,
// counted, `onRefused` called, the router kept), never decoding it with U+FFFD in it.
//
// Every body read is offered to the core's `TopologyFollower` with a revision that counts
// the bodies read (HTTP has no revision of its own): it installs a newer epoch, refuses an
// invalid document or an older epoch (counted by code in `stats`) and keeps the last good
// router, and says how long to wait before asking again after the server is lost. This
// shell only asks (with `fetch`), sets timers and calls back. The Python twin is
// `shardroute.http`, with the same names in snake_case.

// The package's main entry, by the package's own name (a package may import itself
// through its `exports`): the runtime's condition picks it, so this module uses the one
// instance of the WebAssembly module that entry loads (workerd's, Deno's, Node's, or the
// web entry the page `init`s).
import { MAX_DOCUMENT_BYTES, ShardrouteError, TopologyFollower } from 'shardroute-wasm';

/** How long a long poll asks the server to hold a request (seconds): Python's `WAIT_S`. */
const WAIT_S = 30;
/** How long to wait between two requests a server answered at once (ms): Python's `INTERVAL_S`. */
const INTERVAL_MS = 1000;
/** Each request's limit (ms), for the whole request (headers and body); a long poll's is this plus its wait. */
const TIMEOUT_MS = 10000;
/**
 * The longest body read: the core's limit on a document (`limits::MAX_DOCUMENT_BYTES`),
 * as the package's main entry exports it. A body announced longer, or that grows
 * longer as it is read (chunked, or to the end of the connection), is refused with a
 * `limit_exceeded` ShardrouteError and its connection closed, never read whole.
 */
const MAX_BODY_BYTES = MAX_DOCUMENT_BYTES;

/** The shell's clock for the follower: monotonic integer milliseconds (wall-clock jumps do not move it). */
const now = () => Math.floor(performance.now());

/** The words of a `fetch` failure: its cause's, which name the socket error (ECONNREFUSED, ...). */
const reason = (err) => (err && err.cause && err.cause.message) || (err && err.message) || String(err);

/** The global `fetch`, looked up at each call (a test or a polyfill may replace it). */
const globalFetch = (url, init) => globalThis.fetch(url, init);

/**
 * The server could not be reached (`code` `'unreachable'`: no connection, a timeout, the
 * follower closed) or answered with a status other than 200 and 304 (`'http'`, with
 * `status`). `cause` is the error underneath, where there is one.
 */
export class HttpError extends Error {
  constructor(code, message, { status = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.status = status;
  }
}
Object.defineProperty(HttpError.prototype, 'name', { value: 'HttpError', writable: true, configurable: true });

/** The `limit_exceeded` error of a body past MAX_BODY_BYTES (`length`: as announced). */
function tooLong(url, length = null) {
  const size = length === null ? `more than ${MAX_BODY_BYTES} bytes` : `${length} bytes`;
  return new ShardrouteError('limit_exceeded', `GET ${url}: ${size}; the limit is ${MAX_BODY_BYTES}`);
}

/**
 * The body of `response`, read a piece at a time and refused (tooLong) as soon as it is
 * known to pass MAX_BODY_BYTES: by its `Content-Length` before any of it is read, else
 * once the bytes read pass it. The caller aborts the request, which closes the connection.
 */
async function readBody(response, url) {
  const announced = response.headers.get('content-length');
  if (announced !== null && /^\s*\d+\s*$/.test(announced) && Number(announced) > MAX_BODY_BYTES) {
    throw tooLong(url, announced.trim());
  }
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  const pieces = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > MAX_BODY_BYTES) throw tooLong(url);
      pieces.push(value);
    }
  } catch (err) {
    reader.cancel().catch(() => {});
    throw err;
  }
  if (pieces.length === 1) return pieces[0];
  const body = new Uint8Array(total);
  let at = 0;
  for (const piece of pieces) {
    body.set(piece, at);
    at += piece.byteLength;
  }
  return body;
}

/** Waits until `atMs` on `now()`'s clock: true, or false as soon as `signal` aborts. */
function sleepUntil(atMs, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(false);
      return;
    }
    const done = (slept) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', aborted);
      resolve(slept);
    };
    const aborted = () => done(false);
    const timer = setTimeout(() => done(true), Math.max(0, Number(atMs) - now()));
    signal.addEventListener('abort', aborted, { once: true });
  });
}

/** Calls `callback(...args)`, handing what it throws to `onError` (whose own throws are dropped). */
function callSafely(callback, onError, ...args) {
  if (typeof callback !== 'function') return;
  try {
    callback(...args);
  } catch (err) {
    if (callback === onError || typeof onError !== 'function') return;
    try {
      onError(err);
    } catch {
      // Nowhere left to report it; never an unhandled rejection.
    }
  }
}

/** `value` when it is a finite number >= 0 (an integer if `integer`), else a RangeError naming `name`. */
function checked(name, value, integer = false) {
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value) || (integer && !Number.isSafeInteger(value))) {
    throw new RangeError(`HttpFollower: ${name} must be a finite ${integer ? 'integer' : 'number'} >= 0, got ${String(value)}`);
  }
  return value;
}

/**
 * Follows the document at `url` (see the top of this file; http.d.ts documents the API):
 * every decision is the core's `TopologyFollower`.
 */
export class HttpFollower {
  #url;
  #fetch;
  #intervalMs;
  #waitS;
  #timeoutMs;
  #native;
  #onChange;
  #onRefused;
  #onError;
  /** The validator of the last body read (its `ETag`), or null. */
  #etag = null;
  /** The revision offered: the bodies read so far. */
  #bodies = 0n;
  #requests = 0n;
  #notModified = 0n;
  /** The epoch installed last (the router's), or null. */
  #epoch = null;
  /** The router installed last, one object until the next (reading it is a field read). */
  #router = null;
  #closing = new AbortController();
  /** waitForEpoch's pending promises: { epoch, resolve }. */
  #waiters = new Set();

  /** Use `HttpFollower.start`. */
  constructor(url, {
    config = null, intervalMs = INTERVAL_MS, waitS = WAIT_S, timeoutMs = TIMEOUT_MS,
    onChange = null, onRefused = null, onError = null, fetch = null,
  } = {}) {
    this.#url = String(url);
    this.#intervalMs = checked('intervalMs', intervalMs);
    this.#waitS = checked('waitS', waitS, true);
    this.#timeoutMs = checked('timeoutMs', timeoutMs);
    if (fetch !== null && typeof fetch !== 'function') throw new TypeError('HttpFollower: fetch must be a function');
    this.#fetch = fetch ?? globalFetch;
    this.#native = new TopologyFollower(config);
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
    await follower.refresh();
    // Never rejects (every failure goes to onError); the catch is for a bug in this file.
    follower.#follow().catch((err) => callSafely(follower.#onError, null, err));
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
    return this.#etag;
  }

  /** The core's counters, and the shell's: `requests` answered and `notModified` (304) answers; every count a bigint. */
  get stats() {
    return { ...this.#native.stats, requests: this.#requests, notModified: this.#notModified };
  }

  /** Asks now, without a long poll: what became of the body, or null for 304. */
  refresh() {
    return this.#get(false);
  }

  /** Resolves true once the router's epoch is at least `epoch`, false after `timeoutMs` (omitted: never) or on `close`. */
  waitForEpoch(epoch, timeoutMs) {
    const wanted = BigInt(epoch);
    if (this.#epoch !== null && this.#epoch >= wanted) return Promise.resolve(true);
    if (this.#closing.signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      let timer;
      const waiter = {
        epoch: wanted,
        resolve: (reached) => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve(reached);
        },
      };
      if (timeoutMs !== undefined && timeoutMs !== Infinity) timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Stops asking: aborts the request in flight (a `refresh` too) and any wait; idempotent. */
  close() {
    if (!this.#closing.signal.aborted) this.#closing.abort(new DOMException('the follower was closed', 'AbortError'));
    for (const waiter of this.#waiters) waiter.resolve(false);
  }

  /**
   * One GET (a long poll with `Prefer: wait` once a validator is held, when `longPoll`):
   * what became of the body, or null for 304.
   */
  async #get(longPoll) {
    const closing = this.#closing.signal;
    if (closing.aborted) throw new HttpError('unreachable', `GET ${this.#url}: ${reason(closing.reason)}`, { cause: closing.reason });
    const sent = this.#etag;
    const headers = { accept: 'application/json, application/octet-stream' };
    if (sent !== null) {
      headers['if-none-match'] = sent;
      if (longPoll) headers.prefer = `wait=${this.#waitS}`;
    }
    const limitMs = this.#timeoutMs + (longPoll && sent !== null ? this.#waitS * 1000 : 0);
    const request = new AbortController();
    const close = () => request.abort(closing.reason);
    closing.addEventListener('abort', close, { once: true });
    const timer = setTimeout(() => request.abort(new DOMException(`no answer in ${limitMs} ms`, 'TimeoutError')), limitMs);
    let status;
    let etag = null;
    let type = null;
    let body = null;
    try {
      // Called as a plain function: a browser's `fetch` refuses any other `this`.
      const response = await (0, this.#fetch)(this.#url, { method: 'GET', headers, signal: request.signal });
      status = response.status;
      if (status === 200) {
        etag = response.headers.get('etag');
        type = response.headers.get('content-type');
        body = await readBody(response, this.#url);
      } else {
        await response.body?.cancel().catch(() => {});
      }
    } catch (err) {
      if (err instanceof ShardrouteError) {
        request.abort(err); // the connection closes: the rest of the body is never read
        throw err;
      }
      throw new HttpError('unreachable', `GET ${this.#url}: ${reason(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
      closing.removeEventListener('abort', close);
    }
    return this.#answer(status, etag, type, body);
  }

  /** One answer: null for 304, else what the core's follower made of the body. */
  #answer(status, etag, type, body) {
    this.#requests += 1n;
    if (status === 304) {
      this.#notModified += 1n;
      return null;
    }
    if (status !== 200) throw new HttpError('http', `GET ${this.#url}: HTTP ${status}`, { status });
    this.#etag = etag;
    this.#bodies += 1n;
    const binary = (type ?? '').split(';')[0].trim() === 'application/octet-stream';
    const offered = binary
      ? this.#native.offerDictionary(body, this.#bodies, now())
      // Any other type: the core tells a dictionary by its magic, and refuses text that is
      // not UTF-8 (counted, invalid_topology), never decoding it with U+FFFD in it.
      : this.#native.offerBytes(body, this.#bodies, now());
    const closed = this.#closing.signal.aborted;
    if (offered.kind === 'installed') {
      this.#epoch = offered.epoch;
      this.#router = this.#native.router;
      for (const waiter of this.#waiters) if (this.#epoch >= waiter.epoch) waiter.resolve(true);
      if (!closed) callSafely(this.#onChange, this.#onError, this);
    } else if (offered.kind === 'refused' && !closed) {
      callSafely(this.#onRefused, this.#onError, this, offered);
    }
    return offered;
  }

  /**
   * The loop: the first long poll at once; after a change (a body that installed a router)
   * or a request the server held (at least half the wait), ask again at once; after any
   * other answer given at once (a server without long polls, or one that ignores
   * `If-None-Match`: a 304, or the same body again), in `intervalMs` less the time it took.
   * After a failure (to `onError`), when the core's follower says.
   */
  async #follow() {
    const signal = this.#closing.signal;
    let wakeAt = now();
    while (await sleepUntil(wakeAt, signal)) {
      const started = now();
      try {
        const offered = await this.#get(true);
        this.#native.connected();
        const took = now() - started;
        const changed = offered !== null && offered.kind === 'installed';
        const held = this.#waitS > 0 && took >= this.#waitS * 500;
        wakeAt = changed || held ? now() : now() + Math.max(0, this.#intervalMs - took);
      } catch (err) {
        if (signal.aborted) return;
        callSafely(this.#onError, null, err);
        wakeAt = Number(this.#native.disconnected(now()));
      }
    }
  }
}
