'use strict';
// shardroute/etcd: follow a topology kept in etcd, and publish one, with the core's
// follower deciding.
//
// `Etcd` is a small etcd v3 client over etcd's JSON gateway (`/v3/kv/...`, `/v3/watch`;
// etcd 3.4 and later) on Node's global `fetch`, so it needs no npm package: keys and
// values are strings (base64 on the wire), revisions `bigint`s (decimal strings on the
// wire). It knows the members of a cluster and uses one at a time, moving to the next
// when the one in use cannot be reached or answers that it cannot serve now (HTTP 503, or
// gRPC code 14, UNAVAILABLE: a member shutting down or restarting). `EtcdFollower` hands every value it reads to the core's `TopologyFollower`, which
// decides: it installs a newer epoch, refuses an invalid document, a lower epoch or an
// older revision (counted by code in `stats`) while keeping the last good router, and
// says how long to wait before reconnecting to a lost etcd. `publish` writes a document
// with the compare-and-swap the same follower builds. This shell only sends HTTP
// requests, sets timers and calls back. The Python twin is `shardroute.etcd`, with the
// same names in snake_case.

const { MAX_DOCUMENT_BYTES, ShardrouteError, TopologyFollower } = require('./index.js');
const { EpochWaiters, callSafely, monotonicMs: now, sleepUntil } = require('./shared.js');

/**
 * The longest answer read from etcd, and the longest line of a watch stream, derived
 * from the core's limit (the package's MAX_DOCUMENT_BYTES) rather than held here: a
 * document at that limit in base64 is 4/3 of it; twice the limit leaves room for the
 * companions and the JSON around them. Longer is refused (`limit_exceeded`)
 * before it is buffered, and the connection closed. The same figure as Python's
 * `shardroute.etcd.MAX_ANSWER_BYTES`.
 */
const MAX_ANSWER_BYTES = 2 * MAX_DOCUMENT_BYTES;
/** How much of an error answer is read, for its message (and its gRPC code). */
const ERROR_TEXT_BYTES = 4096;
/**
 * etcd's gateway answers a member that cannot serve now (shutting down, restarting) with
 * gRPC code 14, UNAVAILABLE, as HTTP 503, the code in its error body (`{"code": 14, ...}`).
 */
const HTTP_UNAVAILABLE = 503;
const GRPC_UNAVAILABLE = 14;

/** The `limit_exceeded` error of `what` past `limit` bytes (`length`: as announced). */
function tooLong(what, limit, length = null) {
  return new ShardrouteError('limit_exceeded',
    `${what}: ${length === null ? `more than ${limit} bytes` : `${length} bytes`}; the limit is ${limit}`);
}

/**
 * The body of `response` as text, read a piece at a time: refused (tooLong) as soon as it
 * is known to pass `limit` bytes (its `Content-Length` before any is read, else the bytes
 * read); with `truncate`, cut at `limit` instead. The caller's abort closes the connection.
 */
async function readText(response, limit, what, truncate = false) {
  const announced = response.headers.get('content-length');
  if (!truncate && announced !== null && /^\s*\d+\s*$/.test(announced) && Number(announced) > limit) {
    throw tooLong(what, limit, announced.trim());
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const pieces = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        if (!truncate) throw tooLong(what, limit);
        pieces.push(value.subarray(0, value.byteLength - (total - limit)));
        break;
      }
      pieces.push(value);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(pieces).toString('utf8');
}

/** A key (or value) on the wire: its UTF-8 bytes (a string) or its bytes, base64. */
const b64 = (key) => Buffer.from(key).toString('base64');
const unb64 = (text) => Buffer.from(text ?? '', 'base64').toString('utf8');

/** The words of a `fetch` failure: its cause's, which name the socket error (ECONNREFUSED, ...). */
const reason = (err) => (err && err.cause && err.cause.message) || (err && err.message) || String(err);

/**
 * etcd could not be reached (`code` `'unreachable'`: no connection, a timeout, a stream cut
 * off or cancelled), answered with an HTTP error (`'http'`, with `status`), a
 * compare-and-swap of `publish` lost (`'conflict'`), or nothing arrived on a watch for its
 * idle time (`'idle'`). `cause` is the error underneath, where there is one.
 */
class EtcdError extends Error {
  constructor(code, message, { status = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.status = status;
  }
}
Object.defineProperty(EtcdError.prototype, 'name', { value: 'EtcdError', writable: true, configurable: true });

/** The `'http'` errors whose body carried gRPC code 14 (UNAVAILABLE), whatever their status. */
const grpcUnavailable = new WeakSet();

/** The gRPC code of an etcd gateway error body (`{"code": 14, "message": ...}`), or null. */
function grpcCode(text) {
  try {
    const answer = JSON.parse(text);
    return answer !== null && typeof answer === 'object' && Number.isInteger(answer.code) ? answer.code : null;
  } catch {
    return null;
  }
}

/**
 * Whether a request that failed with `err` goes to the next member: the member could not be
 * reached, or answered that it cannot serve now (HTTP 503, or gRPC code 14 UNAVAILABLE).
 */
const movesOn = (err) => err instanceof EtcdError
  && (err.code === 'unreachable' || (err.code === 'http' && (err.status === HTTP_UNAVAILABLE || grpcUnavailable.has(err))));

/** The end of the range of keys that start with `prefix` (etcd's `range_end`), as bytes. */
function prefixEnd(prefix) {
  const bytes = Buffer.from(prefix);
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0xff) end -= 1;
  if (end === 0) return Buffer.from([0]); // every key from `prefix` on
  const next = Buffer.from(bytes.subarray(0, end));
  next[end - 1] += 1;
  return next;
}

/** A txn compare: `key`'s `mod_revision` is `modRevision` (`0n`: the key is absent). */
function sameRevision(key, modRevision) {
  return { key: b64(key), target: 'MOD', result: 'EQUAL', mod_revision: String(modRevision) };
}

/** A txn compare: `key` holds `value` (it fails for an absent key). */
function sameValue(key, value) {
  return { key: b64(key), target: 'VALUE', result: 'EQUAL', value: b64(value) };
}

/** `{ value, modRevision }` of a range answer's first kv; `{ value: null, modRevision: 0n }` for none. */
function entry(kvs) {
  const kv = kvs && kvs[0];
  return kv === undefined ? { value: null, modRevision: 0n } : { value: unb64(kv.value), modRevision: BigInt(kv.mod_revision) };
}

/** A watch event as `watch` yields it. */
function event({ type, kv }) {
  const deleted = type === 'DELETE';
  return { type: deleted ? 'delete' : 'put', key: unb64(kv.key), value: deleted ? null : unb64(kv.value), modRevision: BigInt(kv.mod_revision) };
}

/** Whether a stream broke only because undici's idle limit (`bodyTimeout`, 300 s) passed. */
const bodyTimedOut = (err) => Boolean(err && err.cause && err.cause.code === 'UND_ERR_BODY_TIMEOUT');

/**
 * The members' URLs: one `http://host:port` (or `https://`), several separated by commas,
 * or an array of them; each checked (a `TypeError`), trailing slashes dropped.
 */
function memberUrls(urls) {
  const list = typeof urls === 'string' ? urls.split(',').map((each) => each.trim()) : [...urls];
  const checked = list.map((each) => {
    let parsed = null;
    try {
      parsed = new URL(each);
    } catch {
      // Said below.
    }
    if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new TypeError(`etcd: expected http://host:port URLs, got ${JSON.stringify(each)}`);
    }
    return String(each).replace(/\/+$/, '');
  });
  if (checked.length === 0) throw new TypeError('etcd: no URL');
  return Object.freeze(checked);
}

/** The largest delay `setTimeout` keeps (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A watch's idle time, checked: null for none (`null`, `undefined` or `Infinity`). */
function idleTime(idleMs) {
  if (idleMs === null || idleMs === undefined || idleMs === Infinity) return null;
  if (typeof idleMs !== 'number' || !(idleMs > 0) || idleMs > MAX_TIMER_MS) {
    throw new RangeError(`etcd: idleMs must be a number of milliseconds in (0, ${MAX_TIMER_MS}], got ${String(idleMs)}`);
  }
  return idleMs;
}

/**
 * A client of one etcd cluster through its members' JSON gateways; every call is one HTTP
 * request, to the member in use.
 */
class Etcd {
  /** Index in `urls` of the member in use. */
  #inUse = 0;

  /**
   * `urls`: a member's `http://` (or `https://`) address, several separated by commas, or
   * an array of them; `timeoutMs`: each request's limit (a watch's: until its stream opens).
   */
  constructor(urls, { timeoutMs = 10000 } = {}) {
    /** Every member's URL, as given (frozen). */
    this.urls = memberUrls(urls);
    this.timeoutMs = timeoutMs;
  }

  /** The URL of the member in use: calls and new watches go there. */
  get url() {
    return this.urls[this.#inUse];
  }

  /** POSTs `body` to `url` + `path` (under `signal`, else the timeout): the response, its status checked. */
  async #post(url, path, body, signal = AbortSignal.timeout(this.timeoutMs)) {
    let response;
    try {
      response = await fetch(`${url}${path}`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal,
      });
    } catch (err) {
      throw new EtcdError('unreachable', `etcd ${url}${path}: ${reason(err)}`, { cause: err });
    }
    if (!response.ok) {
      const text = await readText(response, ERROR_TEXT_BYTES, `etcd ${url}${path}`, true).catch(() => '');
      const error = new EtcdError('http', `etcd ${url}${path}: HTTP ${response.status}: ${text.slice(0, 500)}`,
        { status: response.status });
      if (grpcCode(text) === GRPC_UNAVAILABLE) grpcUnavailable.add(error);
      throw error;
    }
    return response;
  }

  /** Moves past `member` to the next one, unless a concurrent call has moved on already (it must not skip a member). */
  #leave(member) {
    if (this.#inUse === member) this.#inUse = (member + 1) % this.urls.length;
  }

  /**
   * POSTs `body` to `path` on the member in use: the JSON answer. When that member cannot
   * be reached (`'unreachable'`) or answers that it cannot serve now (HTTP 503, or gRPC
   * code 14 UNAVAILABLE: shutting down, restarting), the next one is tried, round the list
   * once, and the one that answered stays in use; the last member's error otherwise (its
   * code and status).
   */
  async call(path, body) {
    for (let tried = 1; ; tried += 1) {
      const member = this.#inUse;
      try {
        return await this.#callOne(this.urls[member], path, body);
      } catch (err) {
        if (!movesOn(err) || tried >= this.urls.length) throw err;
        this.#leave(member);
      }
    }
  }

  /** POSTs `body` to `url` + `path`: the JSON answer. */
  async #callOne(url, path, body) {
    // One signal for the whole request, the answer's body included.
    const signal = AbortSignal.timeout(this.timeoutMs);
    const response = await this.#post(url, path, body, signal);
    let text;
    try {
      text = await readText(response, MAX_ANSWER_BYTES, `etcd ${url}${path}`);
    } catch (err) {
      if (err instanceof ShardrouteError) throw err;
      throw new EtcdError('unreachable', `etcd ${url}${path}: ${reason(err)}`, { cause: err });
    }
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new EtcdError('http', `etcd ${url}${path}: not JSON: ${text.slice(0, 500)}`, { status: response.status, cause: err });
    }
  }

  // -- reads and writes ---------------------------------------------------------------

  /** The value of `key` and its `mod_revision`: `{ value, modRevision }`, `{ value: null, modRevision: 0n }` when absent. */
  async get(key) {
    return entry((await this.call('/v3/kv/range', { key: b64(key) })).kvs);
  }

  /**
   * Several keys read in one transaction, so at one revision: `{ values, revision }`,
   * `values` a Map key -> `{ value, modRevision }` (as `get`), `revision` the store's.
   */
  async getMany(keys) {
    keys = [...keys];
    const answer = await this.call('/v3/kv/txn', { success: keys.map((key) => ({ request_range: { key: b64(key) } })) });
    const responses = answer.responses ?? [];
    const values = new Map(keys.map((key, i) => [key, entry(responses[i]?.response_range?.kvs)]));
    return { values, revision: BigInt(answer.header.revision) };
  }

  /** Writes `key`; the new revision. */
  async put(key, value) {
    return BigInt((await this.call('/v3/kv/put', { key: b64(key), value: b64(value) })).header.revision);
  }

  /** Deletes every key that starts with `prefix`; how many. */
  async deletePrefix(prefix) {
    return Number((await this.call('/v3/kv/deleterange', { key: b64(prefix), range_end: b64(prefixEnd(prefix)) })).deleted ?? 0);
  }

  /**
   * All of `puts` (an object or a Map, key -> value) and `deletes` (keys) in one
   * transaction, when every `compare` holds (build them with `sameRevision` and
   * `sameValue`): the new revision, or `0n` when a compare failed and nothing was written.
   */
  async txn(compare, puts, deletes = []) {
    const entries = puts instanceof Map ? [...puts] : Object.entries(puts);
    const success = [
      ...entries.map(([key, value]) => ({ request_put: { key: b64(key), value: b64(value) } })),
      ...[...deletes].map((key) => ({ request_delete_range: { key: b64(key) } })),
    ];
    const answer = await this.call('/v3/kv/txn', { compare: [...compare], success });
    return answer.succeeded === true ? BigInt(answer.header.revision) : 0n;
  }

  /** Writes `key` only if its `mod_revision` is still `modRevision` (`0n`: absent): the new revision, or `0n`. */
  cas(key, value, modRevision) {
    return this.txn([sameRevision(key, modRevision)], new Map([[key, value]]));
  }

  // -- watch --------------------------------------------------------------------------

  /**
   * The changes of `key` (or of the keys in `[key, rangeEnd)`) from `startRevision` on
   * (omitted or `0n`: from now), as an async iterator of batches (arrays, never empty) of
   * events `{ type, key, value, modRevision }`, from the member in use (its stream opened
   * on the next member when that one cannot be reached or answers 503 / UNAVAILABLE, round
   * the list once, as `call` does). It throws an
   * `EtcdError` when the stream cannot open, breaks, or is cancelled (a compacted
   * `startRevision`), and, with `idleMs`, when nothing arrived for that long (code
   * `'idle'`: quiet, or a member that stopped answering; time the loop spends on a batch
   * does not count); it ends quietly when `signal` aborts or the loop leaves it (either
   * closes the stream). A stream that only went idle past the HTTP client's limit (300 s)
   * is reopened from the revision after the last one yielded, unseen.
   */
  async *watch(key, { rangeEnd = null, startRevision = 0n, signal, idleMs = null } = {}) {
    idleMs = idleTime(idleMs);
    const what = `etcd watch of ${JSON.stringify(String(key))}`;
    let next = BigInt(startRevision);
    // Members whose stream did not open since the last one that did: an opening goes
    // round the list once, as a call does, then throws the last member's error.
    let failedOpens = 0;
    while (!signal?.aborted) {
      const member = this.#inUse;
      const url = this.urls[member];
      const create = { key: b64(key) };
      if (rangeEnd !== null && rangeEnd !== undefined) create.range_end = b64(rangeEnd);
      if (next > 0n) create.start_revision = String(next);
      const stream = new AbortController();
      const stop = () => stream.abort();
      signal?.addEventListener('abort', stop, { once: true });
      const opening = setTimeout(() => stream.abort(new DOMException('the watch did not open in time', 'TimeoutError')), this.timeoutMs);
      // The idle time runs only while the stream is awaited.
      let quiet = null;
      let wentIdle = false;
      const awaiting = () => {
        if (idleMs !== null) {
          quiet = setTimeout(() => {
            wentIdle = true;
            stream.abort(new DOMException(`nothing arrived in ${idleMs} ms`, 'TimeoutError'));
          }, idleMs);
        }
      };
      try {
        let response;
        try {
          response = await this.#post(url, '/v3/watch', { create_request: create }, stream.signal);
        } catch (err) {
          if (signal?.aborted || !movesOn(err)) throw err;
          failedOpens += 1;
          if (failedOpens >= this.urls.length) throw err;
          this.#leave(member);
          continue; // the next member
        } finally {
          clearTimeout(opening);
        }
        failedOpens = 0;
        const decoder = new TextDecoder();
        let buffered = '';
        try {
          awaiting();
          for await (const chunk of response.body) {
            clearTimeout(quiet);
            const piece = decoder.decode(chunk, { stream: true });
            buffered += piece;
            // Only a piece with a newline ends a line (no scan of a long line at each piece).
            for (let end = piece.includes('\n') ? buffered.indexOf('\n') : -1; end >= 0; end = buffered.indexOf('\n')) {
              // A line is at most MAX_ANSWER_BYTES long (UTF-16 units: no more than its bytes).
              if (end > MAX_ANSWER_BYTES) throw tooLong(`${what} at ${url}: a line`, MAX_ANSWER_BYTES);
              const line = buffered.slice(0, end).trim();
              buffered = buffered.slice(end + 1);
              if (!line) continue;
              const message = JSON.parse(line);
              if (message.error !== undefined) {
                throw new EtcdError('http', `${what} at ${url}: ${message.error.message ?? JSON.stringify(message.error)}`, { status: 200 });
              }
              const result = message.result ?? {};
              if (result.canceled) {
                const why = result.cancel_reason || `compacted at revision ${result.compact_revision}`;
                throw new EtcdError('unreachable', `${what} at ${url} cancelled: ${why}`);
              }
              if (result.created && next === 0n) next = BigInt(result.header.revision) + 1n;
              const events = (result.events ?? []).map(event);
              if (events.length > 0) {
                next = events.at(-1).modRevision + 1n;
                yield events;
              }
            }
            if (buffered.length > MAX_ANSWER_BYTES) throw tooLong(`${what} at ${url}: a line`, MAX_ANSWER_BYTES);
            awaiting();
          }
        } catch (err) {
          if (signal?.aborted) return;
          if (err instanceof EtcdError || err instanceof ShardrouteError) throw err;
          if (wentIdle) throw new EtcdError('idle', `${what} at ${url}: nothing arrived in ${idleMs} ms`, { cause: err });
          if (bodyTimedOut(err)) continue; // the next stream, from `next`
          throw new EtcdError('unreachable', `${what} at ${url}: ${reason(err)}`, { cause: err });
        }
        if (signal?.aborted) return;
        throw new EtcdError('unreachable', `${what} at ${url}: the server closed the stream`);
      } catch (err) {
        if (signal?.aborted) return;
        throw err;
      } finally {
        clearTimeout(quiet);
        signal?.removeEventListener('abort', stop);
        stream.abort();
      }
    }
  }
}

/** The same compare builders as the module's functions. */
Etcd.sameRevision = sameRevision;
Etcd.sameValue = sameValue;

/** `etcd` itself, or a client of the members' URLs it is (a string or an array). */
const client = (etcd) => (typeof etcd === 'string' || Array.isArray(etcd) ? new Etcd(etcd) : etcd);

/**
 * Follows the topology document at `key` (and the `also` keys, its companions) in etcd;
 * every decision is the core's `TopologyFollower` (see the top of this file; etcd.d.ts
 * documents the API).
 */
class EtcdFollower {
  #etcd;
  #key;
  #also;
  #native;
  #onChange;
  #onRefused;
  #onError;
  /** The watch's idle time (ms), or null. */
  #idleMs;
  /** The also-keys' values from the last read whose document was not refused (replaced, never mutated). */
  #companions;
  /** The epoch installed last (the router's), or null. */
  #epoch = null;
  /** The router installed last, one object until the next (reading it is a field read). */
  #router = null;
  /** The highest revision of the store a read saw: a watch opens after it. */
  #readRevision = 0n;
  #reads = 0n;
  #watchRestarts = 0n;
  /** Reads and offers run one at a time, in order, so revisions reach the core ascending. */
  #reading = Promise.resolve();
  #closing = new AbortController();
  /** waitForEpoch's pending promises. */
  #waiters = new EpochWaiters();

  /** Use `EtcdFollower.start`. */
  constructor(etcd, key, { also = [], config = null, onChange = null, onRefused = null, onError = null, idleMs = null } = {}) {
    this.#etcd = client(etcd);
    this.#idleMs = idleTime(idleMs);
    this.#key = key;
    this.#also = [...also];
    this.#native = new TopologyFollower(config);
    this.#onChange = onChange;
    this.#onRefused = onRefused;
    this.#onError = onError;
    this.#companions = new Map(this.#also.map((name) => [name, null]));
  }

  /**
   * A follower that has read `key` and the `also` keys once (an `EtcdError` when etcd
   * cannot be reached; an absent key leaves `router` null) and watches them from then on.
   * `etcd`: a client, or its members' URLs (as `new Etcd` takes them).
   */
  static async start(etcd, key, options) {
    const follower = new EtcdFollower(etcd, key, options);
    await follower.refresh();
    // Never rejects (every failure goes to onError); the catch is for a bug in this file.
    follower.#follow().catch((err) => callSafely(follower.#onError, null, err));
    return follower;
  }

  /** The etcd client it reads with. */
  get etcd() {
    return this.#etcd;
  }

  /** The router installed last (a new `Router` each time), or null before the first document. */
  get router() {
    return this.#router;
  }

  /** The `also` keys' values (null: absent, or nothing offered yet) from the read of the document last offered and not refused. */
  get companions() {
    return this.#companions;
  }

  /** The `mod_revision` of the document installed last, or null. */
  get revision() {
    return this.#native.revision;
  }

  /** The core's counters, and the shell's: `reads` (etcd reads) and `watchRestarts` (watches reopened after a failure); every count a bigint. */
  get stats() {
    return { ...this.#native.stats, reads: this.#reads, watchRestarts: this.#watchRestarts };
  }

  /**
   * Reads the key and its companions now, at one revision, and offers the document: the
   * `Offered`, or null when the key is absent. An `EtcdError` when etcd cannot be reached
   * (the router held is kept).
   */
  refresh() {
    const read = this.#reading.then(() => this.#readAndOffer());
    this.#reading = read.catch(() => {});
    return read;
  }

  async #readAndOffer() {
    const { values, revision } = await this.#etcd.getMany([this.#key, ...this.#also]);
    this.#reads += 1n;
    if (revision > this.#readRevision) this.#readRevision = revision;
    const { value, modRevision } = values.get(this.#key);
    if (value === null) return null;
    const offered = this.#native.offer(value, modRevision, now());
    let changed = false;
    if (offered.kind === 'installed') {
      this.#epoch = offered.epoch;
      this.#router = this.#native.router;
      changed = true;
    }
    if (offered.kind !== 'refused') {
      const companions = new Map(this.#also.map((name) => [name, values.get(name).value]));
      if ([...companions].some(([name, text]) => this.#companions.get(name) !== text)) {
        this.#companions = companions;
        changed = true;
      }
    }
    if (this.#closing.signal.aborted) return offered;
    if (changed) {
      if (this.#epoch !== null) this.#waiters.reached(this.#epoch);
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

  /** Stops watching (aborts the stream and any wait); idempotent. */
  close() {
    this.#closing.abort();
    this.#waiters.closeAll();
  }

  /**
   * The watch loop: one stream over the smallest range holding the key and its companions
   * (a write to another key inside it costs a read, counted `unchanged`), each batch of
   * events answered by a read of them all at one revision, never by the events' values.
   * A broken stream waits as the core says, reads again, and reopens after that read.
   * A stream quiet for `idleMs` is answered by a read at once (on another member if the
   * one in use does not answer) and a new stream; only a failed read is a loss.
   */
  async #follow() {
    const signal = this.#closing.signal;
    const keys = [this.#key, ...this.#also].map((key) => Buffer.from(key)).sort(Buffer.compare);
    const rangeEnd = keys.length > 1 ? Buffer.concat([keys.at(-1), Buffer.from([0])]) : null;
    while (!signal.aborted) {
      try {
        const changes = this.#etcd.watch(keys[0], { rangeEnd, startRevision: this.#readRevision + 1n, signal, idleMs: this.#idleMs });
        for await (const _ of changes) await this.refresh();
        if (signal.aborted) return;
      } catch (err) {
        if (signal.aborted) return;
        let lost = err;
        if (err instanceof EtcdError && err.code === 'idle') {
          // Quiet, or a member that stopped answering: a read says which (and moves to
          // another member if it must); then a new watch, after that read.
          try {
            await this.refresh();
            continue;
          } catch (failed) {
            if (signal.aborted) return;
            lost = failed;
          }
        }
        callSafely(this.#onError, null, lost);
      }
      if (!(await this.#reconnect(signal))) return;
      this.#watchRestarts += 1n;
    }
  }

  /** Waits as the core's follower says, then reads again until a read succeeds: false once closed. */
  async #reconnect(signal) {
    while (!signal.aborted) {
      if (!(await sleepUntil(this.#native.disconnected(now()), signal))) return false;
      try {
        await this.refresh();
        this.#native.connected();
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        callSafely(this.#onError, null, err);
      }
    }
    return false;
  }
}

/**
 * Writes `document` (text or an object) to `key` with a compare-and-swap on the value
 * read, as the core's follower builds it: the new revision. The follower checks it first
 * (`ShardrouteError`: `invalid_topology`, `no_nodes`, `limit_exceeded`, or `stale_epoch`
 * unless its epoch is the stored one + 1; the first document may have any epoch), and a
 * stored value the follower refuses is that refusal's `ShardrouteError`, not overwritten.
 * An `EtcdError` with code `'conflict'` when someone wrote the key between the read and
 * the write.
 */
async function publish(etcd, key, document) {
  etcd = client(etcd);
  const follower = new TopologyFollower();
  const { value, modRevision } = await etcd.get(key);
  if (value !== null) {
    const error = follower.offer(value, modRevision, now()).error();
    // Not overwritten: the epoch that follows a document nobody can read is unknown.
    if (error !== null) throw error;
  }
  const write = follower.publish(document);
  const revision = await etcd.cas(key, write.document, write.expected_revision ?? 0n);
  if (revision === 0n) {
    throw new EtcdError('conflict', `publish: ${String(key)} changed since it was read (epoch ${write.epoch} not written)`);
  }
  return revision;
}

// Shorthand properties only: Node's ES module loader finds the names of a CommonJS
// module's exports by reading this statement (cjs-module-lexer), for `import { Etcd }`.
module.exports = {
  Etcd,
  EtcdError,
  EtcdFollower,
  prefixEnd,
  publish,
  sameRevision,
  sameValue,
};
