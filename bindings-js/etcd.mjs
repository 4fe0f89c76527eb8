// shardroute/etcd (the Node addon) and shardroute-wasm/etcd: follow a topology kept in
// etcd, publish one, and make etcd calls, over the core's SourceSession.
//
// Every decision is the core's etcd session (core/src/session/etcd.rs): the requests and
// their codec (base64, decimal revisions, watch lines), the request and idle deadlines,
// member rotation (unreachable, HTTP 503, gRPC UNAVAILABLE, no leader), authentication,
// the watch policy and reconnect backoff, and publish's compare-and-swap and repair. This
// shell is transport only: it makes each HTTP request an action asks for, reading at most
// `request.limit` bytes of an answer before buffering it, hands back what came, keeps one
// timer at `session.deadline`, and calls the application back (a callback that throws is
// reported to `onError`, and the follower goes on).
//
// Transport: the runtime's `fetch` (Node's, an edge worker's, a browser's) unless the
// options name TLS files or PEM (`ca`, `cert`, `key`), which `fetch` cannot take without
// undici's dispatcher: those requests go through `node:https` (Node only), adapted to
// `fetch`'s shape so the rest of the shell has one path. An edge runtime's `fetch` trusts
// the runtime's own CAs; a `fetch` option replaces the transport altogether.
//
// The transport and the loop are shared.mjs's SourceDriver (http.mjs's too). Written once
// for both packages: bindings-node/build.sh makes it CommonJS (etcd.js),
// bindings-wasm/build.sh ships it as it is (etcd.mjs). It imports the package's main
// entry by name, and from shared.mjs only what holds none of the package's classes (the
// WASM package ships a second copy of that file, so its classes are taken from the main
// entry, never from it).

import { Offered, ShardrouteError, SourceSession, TopologyFollower } from 'shardroute-wasm';
import { EpochWaiters, SourceDriver, callSafely, globalFetch, nodeFetch, sourceOffered, sourceStats } from './shared.mjs';

/**
 * What etcd or the session said went wrong, with the session's stable code
 * (`unreachable`, `http` with `status`, `malformed`, `conflict`, `idle`,
 * `unauthenticated`, or a core code such as `limit_exceeded`, `invalid_topology` or
 * `stale_epoch`): a ShardrouteError, so one `catch` and `.code` serve for both.
 */
export class EtcdError extends ShardrouteError {
  constructor(code, message, { status = null, cause } = {}) {
    super(code, message, cause === undefined ? undefined : { cause });
    this.status = status;
  }
}
Object.defineProperty(EtcdError.prototype, 'name', { value: 'EtcdError', writable: true, configurable: true });

/** The EtcdError of the session's `{code, message, status}` (`cause`: the transport's error behind it). */
const errorOf = ({ code, message, status }, cause) => new EtcdError(code, message, { status: status ?? null, cause });

/** A key or value as the session takes it: text (bytes are read as UTF-8, strictly). */
function text(value) {
  if (typeof value === 'string') return value;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(value);
  } catch (err) {
    throw new ShardrouteError('invalid_argument', `etcd: keys and values are text or UTF-8 bytes: ${err.message}`);
  }
}

/** The end of the range of keys that start with `prefix` (etcd's `range_end`), as bytes. */
export function prefixEnd(prefix) {
  const bytes = typeof prefix === 'string' ? new TextEncoder().encode(prefix) : Uint8Array.from(prefix);
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0xff) end -= 1;
  if (end === 0) return Uint8Array.of(0); // every key from `prefix` on
  const next = bytes.slice(0, end);
  next[end - 1] += 1;
  return next;
}

/** A txn compare: `key`'s `mod_revision` is `modRevision` (`0n`: the key is absent). */
export function sameRevision(key, modRevision) {
  return { key: text(key), target: 'mod', modRevision: String(modRevision) };
}

/** A txn compare: `key` holds `value` (it fails for an absent key). */
export function sameValue(key, value) {
  return { key: text(key), target: 'value', value: text(value) };
}

/**
 * The session's op field of an `EtcdCompare`: its `modRevision` is the core's
 * `mod_revision`. Only an EtcdCompare's own fields pass: anything else (the core's own
 * spelling `mod_revision` included) is refused here, not handed to the session as if the
 * caller had used a builder.
 */
function compareOp({ key, target, value, modRevision, ...rest }) {
  const unknown = Object.keys(rest);
  if (unknown.length > 0) {
    throw new ShardrouteError('invalid_argument',
      `etcd: a compare has key, target, value and modRevision, not ${unknown.join(', ')}; build it with sameRevision or sameValue`);
  }
  const op = { key, target };
  if (value !== undefined) op.value = value;
  if (modRevision !== undefined) op.mod_revision = modRevision;
  return op;
}

/** The package's Offered of the session's result. */
const offeredOf = (result) => sourceOffered((...fields) => new Offered(...fields), result);

/** `{ value, modRevision }` of a session's `{ value, mod_revision }`. */
const entry = ({ value, mod_revision: modRevision }) => ({ value, modRevision: BigInt(modRevision) });

/** A driver of a session made from `settings`, with the transport `fetch`. */
function driverOf(settings, fetch, hooks) {
  return Object.assign(new SourceDriver(new SourceSession(settings), fetch, errorOf, hooks), { settings });
}

/** Each client's driver (its session, the settings it was made from, its transport). */
const links = new WeakMap();

/** The members' URLs as given: one string (several separated by commas) or a list. */
const memberList = (urls) => (typeof urls === 'string' ? urls.split(',').map((each) => each.trim()) : [...urls].map(String));

/**
 * A client of one etcd cluster through its members' JSON gateways (etcd.d.ts documents
 * it): every call is one call of its session, which picks the member and the requests.
 */
export class Etcd {
  constructor(urls, { timeoutMs, user, password, ca, cert, key, fetch } = {}) {
    let link = urls;
    if (!(urls instanceof SourceDriver)) {
      const settings = { source: 'etcd', members: memberList(urls), request_timeout_ms: timeoutMs, user, password };
      if (fetch !== undefined && fetch !== null && typeof fetch !== 'function') throw new TypeError('etcd: fetch must be a function');
      const transport = fetch ?? (ca || cert || key ? nodeFetch({ ca, cert, key }) : globalFetch);
      if (transport === null) {
        throw new ShardrouteError('invalid_argument',
          'etcd: ca, cert and key need Node.js 20.16 or later (node:https); elsewhere fetch trusts the runtime\'s CAs');
      }
      link = driverOf(settings, transport);
    }
    links.set(this, link);
    const config = link.session.config;
    /** Every member's URL (frozen). */
    this.urls = Object.freeze([...config.members]);
    /** Each request's limit, in milliseconds. */
    this.timeoutMs = config.request_timeout_ms;
  }

  /** The URL of the member in use: calls and new watches go there. */
  get url() {
    return links.get(this).session.state.member;
  }

  #call(op) {
    return links.get(this).call(op);
  }

  async get(key) {
    return entry(await this.#call({ op: 'get', key: text(key) }));
  }

  async getMany(keys) {
    keys = [...keys];
    const { values, revision } = await this.#call({ op: 'get_many', keys: keys.map(text) });
    return { values: new Map(keys.map((key) => [key, entry(values[text(key)])])), revision: BigInt(revision) };
  }

  async put(key, value) {
    return BigInt((await this.#call({ op: 'put', key: text(key), value: text(value) })).revision);
  }

  async deletePrefix(prefix) {
    return BigInt((await this.#call({ op: 'delete_prefix', prefix: text(prefix) })).deleted);
  }

  async txn(compare, puts, deletes = []) {
    const entries = puts instanceof Map ? [...puts] : Object.entries(puts);
    const op = {
      op: 'txn', compare: [...compare].map(compareOp), puts: Object.fromEntries(entries.map(([key, value]) => [text(key), text(value)])), deletes: [...deletes].map(text),
    };
    try {
      return BigInt((await this.#call(op)).revision);
    } catch (err) {
      if (err instanceof EtcdError && err.code === 'conflict') return 0n;
      throw err;
    }
  }

  cas(key, value, modRevision) {
    return this.txn([sameRevision(key, modRevision)], new Map([[key, value]]));
  }
}

/** The same compare builders as the module's functions. */
Etcd.sameRevision = sameRevision;
Etcd.sameValue = sameValue;

/** `etcd` itself, or a client of the members' URLs it is (a string or an array). */
const client = (etcd) => (etcd instanceof Etcd ? etcd : new Etcd(etcd));

/**
 * Follows the topology document at `key` (and the `also` keys, its companions) in etcd:
 * the core's etcd session reads, watches and decides; this class calls back (etcd.d.ts
 * documents the API).
 */
export class EtcdFollower {
  #driver;
  #etcd;
  #also;
  #onChange;
  #onRefused;
  #onError;
  #router = null;
  #companions;
  #waiters = new EpochWaiters();
  #closed = false;
  /** `{ resolve, reject }` of `start` until the first read ends. */
  #starting = null;

  /** Use `EtcdFollower.start`. */
  constructor(etcd, key, { also = [], config = null, onChange = null, onRefused = null, onError = null, idleMs } = {}) {
    const from = links.get(client(etcd));
    this.#also = [...also].map(String);
    const settings = {
      ...from.settings, key: String(key), also: this.#also, ...config,
      // Omitted: the core's default; null or Infinity: none (0).
      idle_ms: idleMs === null || idleMs === Infinity ? 0 : idleMs,
    };
    this.#driver = driverOf(settings, from.fetch, {
      offered: (offered) => this.#offered(offered),
      lost: (error) => this.#lost(error),
      request: (request) => request.stream && this.#started(), // a watch opens after a read
      error: (err) => callSafely(this.#onError, null, err), // a bug in shared.mjs
    });
    this.#etcd = new Etcd(this.#driver);
    this.#onChange = onChange;
    this.#onRefused = onRefused;
    this.#onError = onError;
    this.#companions = new Map(this.#also.map((name) => [name, null]));
  }

  /**
   * A follower that has read `key` and the `also` keys once (an EtcdError when etcd
   * cannot be reached; an absent key leaves `router` null) and watches them from then on.
   */
  static async start(etcd, key, options) {
    const follower = new EtcdFollower(etcd, key, options);
    await new Promise((resolve, reject) => {
      follower.#starting = { resolve, reject };
      follower.#driver.feed((session, now) => session.start(now));
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
    if (changed) {
      const { companions } = this.#driver.session.state;
      this.#companions = new Map(this.#also.map((name) => [name, companions[name] ?? null]));
    }
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

  /** A client over this follower's session: its member in use is the follower's. */
  get etcd() {
    return this.#etcd;
  }

  get router() {
    return this.#router;
  }

  get companions() {
    return this.#companions;
  }

  get revision() {
    const { revision } = this.#driver.session.state;
    return revision === null || revision === undefined ? null : BigInt(revision);
  }

  get stats() {
    return sourceStats(this.#driver.session.state.stats);
  }

  /**
   * Reads the key and its companions now, at one revision, and offers the document: the
   * Offered, or null when the key is absent. An EtcdError when etcd cannot be reached.
   */
  async refresh() {
    // The session's one read (shared with the watch's): its document is offered (and the
    // callbacks called) before the call ends.
    const { offered } = await this.#driver.call({ op: 'refresh' });
    return offered === null ? null : offeredOf(offered);
  }

  waitForEpoch(epoch, timeoutMs) {
    return this.#waiters.wait(epoch, timeoutMs);
  }

  /** Stops following (cancels every request) and any wait; idempotent. */
  close() {
    this.#closed = true;
    this.#driver.close();
    this.#waiters.closeAll();
  }
}

/**
 * Writes `document` (text or an object) to `key` under compare-and-swap, as the core's
 * etcd session builds it: the new revision. With `replace`, a stored document followers
 * refuse is replaced by one whose epoch is above every epoch they may hold.
 */
export function publish(etcd, key, document, { replace = false, also } = {}) {
  return (async () => {
    const op = {
      op: 'publish', key: text(key), replace: Boolean(replace),
      // An object's JSON text as the package writes documents (strict, canonical).
      document: typeof document === 'string' ? document : new TopologyFollower().publish(document).document,
    };
    if (also !== undefined) op.also = Object.fromEntries((also instanceof Map ? [...also] : Object.entries(also)).map(([name, value]) => [text(name), text(value)]));
    return BigInt((await links.get(client(etcd)).call(op)).revision);
  })();
}
