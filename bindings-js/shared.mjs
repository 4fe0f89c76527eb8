// The JavaScript both npm packages run: the error class, the session's Action, the
// follower's Offered, the serialization of document objects, the packing of string
// batches and the unpacking of node groups. An installed package cannot reach a sibling
// directory, so each package's build.sh copies this file into the package: bindings-node
// as CommonJS (shared.js, for index.js), bindings-wasm next to the snippet its glue loads
// (pkg/*/snippets/*/js/shared.mjs, for js/support.mjs).
//
// Plain declarations only, each public one starting its line with `export class`,
// `export function` or `export const`, and no imports (the source shells' driver gets
// its session and its errors from the shell, which imports the package's classes): bindings-node/build.sh makes the
// CommonJS copy by removing those `export`s, and refuses any other form.

/** The error every failed call throws: a real `Error` whose `code` is the core's stable code. */
export class ShardrouteError extends Error {
  /**
   * @param {string} code one of the core's codes, such as 'invalid_key'
   * @param {string} message what went wrong, for people
   * @param {{cause?: unknown}} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    /**
     * The stable error code: 'invalid_topology', 'invalid_key', 'no_nodes', 'limit_exceeded',
     * 'invalid_argument', 'stale_epoch', 'read_only', 'cross_slot', 'too_many_redirects' or
     * 'unavailable'.
     */
    this.code = code;
  }
}
Object.defineProperty(ShardrouteError.prototype, 'name', {
  value: 'ShardrouteError',
  writable: true,
  configurable: true,
});

/**
 * What a shell does next for a command of a ClusterSession: the core's action
 * (`session::redis::Action`), made by the package from the fields the native side gives
 * (`FlatAction` in bindings-js/session.rs, in this constructor's order). Every field is
 * an own property; those that do not apply to `kind` are `null`.
 */
export class Action {
  constructor(kind, address, host, port, asking, readonly, untilMs, delayMs, code, message) {
    /** 'send', 'wait', 'refresh', 'done' or 'fail'. */
    this.kind = kind;
    /** send: the node's 'host:port' (an IPv6 host bracketed). */
    this.address = address ?? null;
    /** send: the node's host. */
    this.host = host ?? null;
    /** send: the node's port, a number. */
    this.port = port ?? null;
    /** send: send ASKING first, on the same connection. */
    this.asking = asking ?? null;
    /** send: over a connection that sent READONLY (a replica read). */
    this.readonly = readonly ?? null;
    /** wait: when to poll again on the shell's clock, a bigint (a u64). */
    this.untilMs = untilMs ?? null;
    /** wait: how long that is from the time given, a number. */
    this.delayMs = delayMs ?? null;
    /** fail: the error's code ('too_many_redirects', 'unavailable', ...). */
    this.code = code ?? null;
    /** fail: the error's message. */
    this.message = message ?? null;
  }

  /** The ShardrouteError of a 'fail' action, to throw or to chain; null for other kinds. */
  error() {
    return this.code === null ? null : new ShardrouteError(this.code, this.message);
  }
}

/**
 * What became of a document offered to a TopologyFollower: the core's outcome
 * (`session::follower::Offered`), made by the package from the fields the native side
 * gives (`FlatOffered` in bindings-js/follower.rs, in this constructor's order). Every
 * field is an own property; those that do not apply to `kind` are `null`.
 */
export class Offered {
  constructor(kind, epoch, code, message) {
    /** 'installed', 'unchanged' or 'refused'. */
    this.kind = kind;
    /** installed: the new router's epoch, a bigint (a u64). */
    this.epoch = epoch ?? null;
    /** refused: the error's code ('invalid_topology', 'stale_epoch', ...). */
    this.code = code ?? null;
    /** refused: the error's message. */
    this.message = message ?? null;
  }

  /** The ShardrouteError of a refusal, to throw or to log; null for other kinds. */
  error() {
    return this.code === null ? null : new ShardrouteError(this.code, this.message);
  }
}

/**
 * The JSON text of a topology, hashing spec or operation given as an object (`what`
 * names it in messages), for the core to parse as it parses text. Strict where
 * JSON.stringify is lenient, so that an object means what its JSON text would, in both
 * packages and as Python's `json.dumps(..., allow_nan=False)` reads a dict:
 *
 * - a bigint is its decimal string, which the core reads as a u64;
 * - NaN and the infinities are refused (JSON.stringify writes `null`, which the core
 *   reads as an absent field: a NaN weight would have been weight 1); -0 is 0, as
 *   JSON.stringify and `==` have it;
 * - a function or a symbol is refused (JSON.stringify drops it: it would have been
 *   absent too); `undefined` is absent in an object, as JSON.stringify has it (Python's
 *   None, JSON's null, is absent to the core too), and `null` in an array;
 * - only plain objects (prototype Object.prototype or null) and arrays are objects:
 *   another class (Map, Date, a typed array) is refused, and `toJSON` is not called;
 * - a string with a lone surrogate is refused (the core reads text as UTF-8);
 * - a cycle, nesting deeper than MAX_JSON_NESTING, and text longer than MAX_DOCUMENT_BYTES
 *   (counted in UTF-16 units, never more than UTF-8 bytes, so the core would refuse it
 *   too) are refused as soon as they are met, in bounded time and memory: a sparse
 *   array of length 2^32-1 is not written out;
 * - a getter or proxy trap that throws is an error, not an unwind.
 *
 * Throws a ShardrouteError: `code` (invalid_topology for documents, invalid_argument for
 * operations) naming the field by the core's path syntax (`nodes[2].weight: ...`), or
 * limit_exceeded for text past the limit or nesting past MAX_JSON_NESTING.
 *
 * `limits` holds the core's `MAX_DOCUMENT_BYTES` and `MAX_JSON_NESTING` as the package's
 * native module gives them (the addon's exports; the WASM build's Rust passes its own):
 * this file holds no copy of either.
 */
export function documentToJson(value, what, code, limits) {
  const { MAX_DOCUMENT_BYTES, MAX_JSON_NESTING } = limits;
  const parts = [];
  let size = 0;
  const ancestors = [];
  const fail = (path, problem) => {
    throw new ShardrouteError(code, `${path || what}: ${problem}`);
  };
  const tooLong = () => {
    throw new ShardrouteError('limit_exceeded',
      `${what} is more than ${MAX_DOCUMENT_BYTES} bytes of JSON; the limit is ${MAX_DOCUMENT_BYTES}`);
  };
  const push = (text) => {
    size += text.length;
    if (size > MAX_DOCUMENT_BYTES) tooLong();
    parts.push(text);
  };
  /** `holder[name]`, whose getter or proxy trap may throw: an error naming `path`. */
  const read = (holder, name, path) => {
    try {
      return holder[name];
    } catch (err) {
      return fail(path, `reading it threw: ${describeThrown(err)}`);
    }
  };
  const write = (item, path) => {
    switch (typeof item) {
      case 'string':
        if (!item.isWellFormed()) fail(path, 'a string with a lone surrogate is not text');
        return push(JSON.stringify(item));
      case 'number':
        if (!Number.isFinite(item)) fail(path, `${item} is not a JSON number`);
        return push(JSON.stringify(item));
      case 'bigint':
        return push(`"${item}"`);
      case 'boolean':
        return push(item ? 'true' : 'false');
      case 'undefined':
        return push('null');
      case 'function':
      case 'symbol':
        return fail(path, `a ${typeof item} is not JSON data`);
      default:
        break;
    }
    if (item === null) return push('null');
    if (ancestors.includes(item)) fail(path, 'the object contains itself (a cycle)');
    if (ancestors.length >= MAX_JSON_NESTING) {
      // The core's words for the same text (limit_exceeded at the same path).
      throw new ShardrouteError('limit_exceeded',
        `${path}: nested in ${MAX_JSON_NESTING} arrays and objects; the limit is ${MAX_JSON_NESTING} (limits::MAX_JSON_NESTING)`);
    }
    ancestors.push(item);
    if (Array.isArray(item)) {
      // Every element takes a character and a comma: a longer array cannot fit, and is
      // refused before a sparse one's holes are walked.
      if (item.length > MAX_DOCUMENT_BYTES / 2) tooLong();
      push('[');
      for (let i = 0, length = item.length; i < length; i++) {
        if (i > 0) push(',');
        write(read(item, i, `${path}[${i}]`), `${path}[${i}]`);
      }
      push(']');
    } else {
      const prototype = Object.getPrototypeOf(item);
      if (prototype !== Object.prototype && prototype !== null) {
        const name = prototype?.constructor?.name;
        fail(path, `${typeof name === 'string' && name ? `a ${name}` : 'an object of a class'} is not JSON data `
          + '(only plain objects, arrays, strings, finite numbers, bigints, booleans and null are)');
      }
      push('{');
      let first = true;
      for (const name of Object.keys(item)) {
        if (!name.isWellFormed()) fail(path, 'a field name with a lone surrogate is not text');
        const member = read(item, name, path ? `${path}.${name}` : name);
        if (member === undefined) continue;
        if (!first) push(',');
        first = false;
        push(`${JSON.stringify(name)}:`);
        write(member, path ? `${path}.${name}` : name);
      }
      push('}');
    }
    ancestors.pop();
    return undefined;
  };
  try {
    write(value, '');
  } catch (err) {
    if (err instanceof ShardrouteError) throw err;
    // A proxy trap (ownKeys, getPrototypeOf, length): user code threw while the object was read.
    throw new ShardrouteError(code, `${what}: reading it threw: ${describeThrown(err)}`);
  }
  return parts.join('');
}

/** What a thrown value says, read without running more user code that could throw. */
function describeThrown(thrown) {
  try {
    return thrown instanceof Error ? String(thrown.message) : String(thrown);
  } catch {
    return 'an exception';
  }
}

/** Below this many keys, routeMany and nodeMany convert each key natively (packing would not pay). */
const PACK_MIN_KEYS = 8;
/** Most UTF-16 code units packStrings packs (V8's string limit is 2^29 - 24 units). */
const PACK_MAX_UNITS = 2 ** 28;

/** `new Type(length)`: packStrings's default allocation. */
function zeroed(Type, length) {
  return new Type(length);
}

/**
 * The keys of routeMany / nodeMany as `[units, offsets]` when every key is a string: the
 * UTF-16 code units of all keys in one typed array, key i being
 * units[offsets[i]..offsets[i + 1]], which the binding converts to UTF-8 key by key (a
 * lone surrogate is refused as for a single key). `undefined` otherwise, for short arrays,
 * and when reading the array throws: the binding then reads each key itself, with the same
 * results and errors. Copying code units here costs a few ns per key; reading each element
 * through N-API or from WebAssembly costs several times more, and joining the keys into
 * one string makes V8 flatten a rope of a million pieces (1.5-2.5x the cost of this copy).
 * Each element is read once. Never throws.
 *
 * `narrow`: a Uint8Array while every unit is ASCII (the units are then the UTF-8 bytes,
 * which the WASM build routes as they are), a Uint16Array from the first unit that is not;
 * otherwise always a Uint16Array (all the addon reads). `allocate(Type, length)` makes each
 * buffer; packStrings writes every unit it passes on, so it need not be zeroed.
 */
export function packStrings(keys, narrow = false, allocate = zeroed) {
  try {
    if (!Array.isArray(keys)) return undefined; // a revoked proxy throws
    const count = keys.length; // a proxy's trap may throw
    if (!(count >= PACK_MIN_KEYS)) return undefined;
    const offsets = new Uint32Array(count + 1);
    let units = allocate(narrow ? Uint8Array : Uint16Array, Math.min(count * 12, PACK_MAX_UNITS));
    let limit = narrow ? 0x7f : 0xffff; // the largest unit `units` holds as it is
    let at = 0;
    for (let i = 0; i < count; i++) {
      const key = keys[i];
      if (typeof key !== 'string') return undefined;
      const length = key.length;
      if (at + length > units.length) {
        if (at + length > PACK_MAX_UNITS) return undefined;
        const grown = Math.min(Math.max(units.length * 2, at + length), PACK_MAX_UNITS);
        units = copied(allocate(units.constructor, grown), units, at);
      }
      if (limit === 0xffff) {
        // Every unit fits: the plain copy (the only one the addon's packing runs).
        for (let j = 0; j < length; j++) units[at++] = key.charCodeAt(j);
      } else {
        for (let j = 0; j < length; j++) {
          const unit = key.charCodeAt(j);
          if (unit > limit) {
            // The first unit beyond ASCII: from here on every unit takes two bytes.
            units = copied(allocate(Uint16Array, units.length), units, at);
            limit = 0xffff;
          }
          units[at++] = unit;
        }
      }
      offsets[i + 1] = at;
    }
    // Only the written units: the rest of the buffer may never have been cleared.
    return [units.subarray(0, at), offsets];
  } catch {
    return undefined;
  }
}

/** `to` holding the first `used` elements of `from`. */
function copied(to, from, used) {
  to.set(from.subarray(0, used));
  return to;
}

/**
 * A scatter plan of its columns from the binding (`gather`, `shards` and `nodes` as
 * Uint32Arrays, `keys` or null), the node indices named from `ids`: what
 * scatterEvery, scatterRange and scatterKeys return.
 */
export function planOf(columns, ids) {
  return {
    gather: columns.gather,
    shards: Array.from(columns.shards),
    nodes: nodesOf(columns.nodes, ids),
    keys: columns.keys ?? null,
  };
}

/**
 * The node ids of the core's node indices: `ids[index]` for each, one shared string per
 * node (cheaper than making a string per key on the native side).
 */
export function nodesOf(indices, ids) {
  const nodes = new Array(indices.length);
  for (let i = 0; i < indices.length; i++) nodes[i] = ids[indices[i]];
  return nodes;
}

/**
 * The groups of groupByNode as `{ node, indices }` objects, from the one Uint32Array the
 * binding gives (for each group: its node index, its number of keys, then the keys'
 * indices), the node ids looked up in `ids`. One array crosses from native code instead
 * of one value per index; the copy by hand costs a few times less per index than
 * `Array.from` of a subarray.
 */
export function groupsOf(flat, ids) {
  const groups = [];
  for (let at = 0; at < flat.length;) {
    const node = ids[flat[at]];
    const count = flat[at + 1];
    const indices = new Array(count);
    for (let i = 0, from = at + 2; i < count; i++) indices[i] = flat[from + i];
    groups.push({ node, indices });
    at += 2 + count;
  }
  return groups;
}

// -- What the topology sources' shells share: etcd.mjs, http.mjs and bindings-node's
// zookeeper.js (the driver below, their one transport and loop around the core's
// SourceSession; the clock, the callbacks, the waits) --

/** The sources' clock for the follower: monotonic milliseconds (wall-clock jumps do not move it). */
export function monotonicMs() {
  return Math.floor(performance.now());
}

/** Calls `callback(...args)`, handing what it throws to `onError` (whose own throws are dropped). */
export function callSafely(callback, onError, ...args) {
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

/**
 * A follower's `waitForEpoch` promises: `wait(epoch, timeoutMs)` resolves true once
 * `reached(epoch)` has been called with that epoch or a later one, false after `timeoutMs`
 * (omitted: never) or at `closeAll()`.
 */
export class EpochWaiters {
  #epoch = null;
  #closed = false;
  #waiters = new Set();

  wait(epoch, timeoutMs) {
    const wanted = BigInt(epoch);
    if (this.#epoch !== null && this.#epoch >= wanted) return Promise.resolve(true);
    if (this.#closed) return Promise.resolve(false);
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

  reached(epoch) {
    this.#epoch = epoch;
    for (const waiter of this.#waiters) if (epoch >= waiter.epoch) waiter.resolve(true);
  }

  closeAll() {
    this.#closed = true;
    for (const waiter of this.#waiters) waiter.resolve(false);
  }
}

/**
 * A source session's `stats` as the packages give them: names in camelCase, every count
 * a bigint (`refused`: an object of counts by code).
 */
export function sourceStats(stats) {
  const out = {};
  for (const [name, value] of Object.entries(stats)) {
    out[name.replace(/_([a-z])/g, (_, letter) => letter.toUpperCase())] = typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([code, count]) => [code, BigInt(count)]))
      : BigInt(value);
  }
  return out;
}

/**
 * The package's Offered (`make(kind, epoch, code, message)`: the main entry's class, never
 * this file's copy) of a session's result, `{"installed": {"epoch"}} | {"unchanged": {}} |
 * {"refused": {"code", "message"}}`.
 */
export function sourceOffered(make, result) {
  const [kind, { epoch, code, message }] = Object.entries(result)[0];
  return make(kind, epoch === undefined ? null : BigInt(epoch), code ?? null, message ?? null);
}

/** The largest delay `setTimeout` keeps (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;
const NO_BYTES = new Uint8Array(0);

/** The words of a transport failure: its cause's, which name the socket error (ECONNREFUSED, ...). */
function failureOf(err) {
  return (err && err.cause && err.cause.message) || (err && err.message) || String(err);
}

/**
 * The body of `response`, read a piece at a time and refused (an error marked `limit`) as
 * soon as it is known to pass `limit` bytes: by its `Content-Length` before any of it is
 * read, else once the bytes read pass it. The caller aborts the request, which closes the
 * connection.
 */
async function boundedBody(response, limit) {
  const tooLong = (size) => Object.assign(new Error(`${size}; the limit is ${limit}`), { limit: true });
  const announced = response.headers.get('content-length');
  if (announced !== null && /^\s*\d+\s*$/.test(announced) && Number(announced) > limit) throw tooLong(`${announced.trim()} bytes`);
  if (response.body === null) return NO_BYTES;
  const reader = response.body.getReader();
  const pieces = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) throw tooLong(`more than ${limit} bytes`);
    pieces.push(value);
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

/** The bytes of standard base64 text (a `send` action's `data_b64`). */
function fromBase64(text) {
  if (typeof globalThis.Buffer === 'function') return globalThis.Buffer.from(text, 'base64');
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

/**
 * Node's `node:net`, for the `connect` actions of a session over TCP (ZooKeeper's), or
 * null where there is none. Looked up when first needed, never imported: a WASM or browser
 * bundle of this file holds nothing of Node's (`process.getBuiltinModule`, Node 20.16 and
 * later; zookeeper.js hands its own `require('node:net')` to the driver, for older Nodes).
 */
function nodeNet() {
  const builtin = globalThis.process?.getBuiltinModule;
  return typeof builtin === 'function' ? builtin('node:net') : null;
}

/** The global `fetch`, looked up at each call (a test or a polyfill may replace it). */
export function globalFetch(url, init) {
  return globalThis.fetch(url, init);
}

/**
 * A `fetch` over `node:https` (and `node:http`) with the TLS options `ca`, `cert`, `key`
 * (PEM text, or the path of a file holding it): its answers are `Response`s, so the driver
 * has one path. Node only (`process.getBuiltinModule`, Node 20.16 and later): null
 * elsewhere. No import: an edge bundle that does not call it holds nothing of Node's.
 */
export function nodeFetch({ ca, cert, key }) {
  const builtin = globalThis.process?.getBuiltinModule;
  if (typeof builtin !== 'function') return null;
  const pem = (value) => (typeof value === 'string' && !value.includes('-----BEGIN') ? builtin('node:fs').readFileSync(value) : value);
  const modules = { 'https:': builtin('node:https'), 'http:': builtin('node:http') };
  const agents = {
    'https:': new modules['https:'].Agent({ keepAlive: true, ca: pem(ca), cert: pem(cert), key: pem(key) }),
    'http:': new modules['http:'].Agent({ keepAlive: true }),
  };
  return (url, { method, headers, body, signal }) => new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = modules[target.protocol].request(target, { method, headers, signal, agent: agents[target.protocol] }, (answer) => {
      // A Response of these statuses has no body (its constructor refuses one). decisions: ok
      const empty = [204, 205, 304].includes(answer.statusCode);
      try {
        resolve(new Response(empty ? null : ReadableStream.from(answer), { status: answer.statusCode, headers: answer.headersDistinct }));
      } catch (err) {
        answer.destroy();
        reject(err);
      }
    });
    request.on('error', reject);
    request.end(body ?? undefined);
  });
}

/**
 * One source session (the core's `SourceSession`, made by the shell from its package's
 * main entry) and the loop around it, for etcd.mjs, http.mjs and zookeeper.js alike:
 * performs its actions (each request with `fetch`, at most `request.limit` bytes of its
 * answer buffered, a stream's head and pieces handed back as they arrive; each TCP
 * connection with `net`, `opened` once open, every read handed back as it came, the
 * bytes of each `send` written in order; cancels; the calls' promises; the shell's
 * `hooks`: `offered(body)`, `lost(error)`, `request(request)` as it is made, `error(err)`
 * for a bug of this file), keeps one timer at the session's deadline, and stops at
 * `close`. `errorOf(error, cause)` is the shell's error of the session's `{code, message,
 * status}` (`cause`: the transport's error behind it). `net`: `node:net` (omitted: looked
 * up at the first `connect`, see `nodeNet`).
 */
export class SourceDriver {
  #requests = new Map(); // request id -> its AbortController
  #connections = new Map(); // connection id -> its socket
  #calls = new Map(); // call number -> { resolve, reject }
  #timer = null;
  #timerAt = null;
  #closed = false;

  constructor(session, fetch, errorOf, hooks = {}, net = null) {
    this.session = session;
    this.fetch = fetch;
    this.errorOf = errorOf;
    this.hooks = hooks;
    this.net = net;
  }

  get closed() {
    return this.#closed;
  }

  /** Hands `input(session, nowMs)`'s actions to `perform` (nothing once closed). */
  feed(input, cause) {
    if (!this.#closed) this.perform(input(this.session, monotonicMs()), cause);
  }

  /** One call: its result, or the shell's error. */
  call(op) {
    const { call, actions } = this.session.call(op, monotonicMs());
    const settled = new Promise((resolve, reject) => this.#calls.set(Number(call), { resolve, reject }));
    this.perform(actions);
    return settled;
  }

  perform(actions, cause) {
    for (const action of actions) {
      const [kind, body] = Object.entries(action)[0];
      if (kind === 'request') {
        this.hooks.request?.(body);
        if (!this.#closed) this.#send(body).catch((err) => this.hooks.error?.(err));
      } else if (kind === 'connect') {
        if (!this.#closed) this.#connect(body);
      } else if (kind === 'send') {
        // Written even once closed: a session's close may say goodbye on its connection.
        this.#connections.get(body.id)?.write(body.data instanceof Uint8Array ? body.data : fromBase64(body.data_b64));
      } else if (kind === 'cancel') {
        this.#requests.get(body.id)?.abort(new DOMException('cancelled', 'AbortError'));
        this.#requests.delete(body.id);
        this.#hangUp(body.id);
      } else if (kind === 'done' || kind === 'failed') {
        const call = this.#calls.get(Number(body.call));
        this.#calls.delete(Number(body.call));
        if (kind === 'done') call?.resolve(body.result);
        else call?.reject(this.errorOf(body.error, cause));
      } else if (kind === 'lost') {
        this.hooks.lost?.(this.errorOf(body.error, cause));
      } else {
        this.hooks.offered?.(body);
      }
    }
    this.#arm();
  }

  /** Stops everything: the session's close (cancels, failed calls), then no timer and no more input. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.perform(this.session.close(monotonicMs()));
  }

  /** The one timer, at the session's deadline (re-armed when a long wait passes the timer's limit). */
  #arm() {
    const at = this.#closed ? null : this.session.deadline;
    if (at === this.#timerAt) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = at;
    if (at === null || at === undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#timerAt = null;
      if (monotonicMs() >= at) this.feed((session, now) => session.timer(now));
      else this.#arm();
    }, Math.min(MAX_TIMER_MS, Math.max(0, at - monotonicMs())));
  }

  /**
   * Opens connection `id` to `host:port` (no TLS, no timeout: the session's deadline covers
   * it), then hands back its opening, each read as it came, and its end: `closed` when the
   * peer closed it, `unreachable` on an error. Nothing more once it is cancelled.
   */
  #connect({ id, host, port }) {
    // A connection that cannot even start fails after this batch of actions, as any transport's answer comes.
    const refused = (message, cause) => Promise.resolve()
      .then(() => this.feed((session, now) => session.failed(id, now, 'unreachable', message), cause))
      .catch((err) => this.hooks.error?.(err));
    const net = this.net ?? nodeNet();
    if (net === null) {
      refused('a TCP connection needs Node.js (node:net)');
      return;
    }
    let socket;
    try {
      socket = net.connect({ host, port }); // throws for a port out of range
    } catch (err) {
      refused(failureOf(err), err);
      return;
    }
    socket.setNoDelay(true);
    this.#connections.set(id, socket);
    const live = () => this.#connections.get(id) === socket;
    const gone = (code, message, cause) => {
      if (!live()) return;
      this.#connections.delete(id);
      socket.destroy();
      this.feed((session, now) => session.failed(id, now, code, message), cause);
    };
    // An event handler's throw would be the process's uncaught exception: a bug of this file, reported.
    const on = (event, handle) => socket.on(event, (...args) => {
      try {
        handle(...args);
      } catch (err) {
        this.hooks.error?.(err);
      }
    });
    on('connect', () => live() && this.feed((session, now) => session.opened(id, now)));
    on('data', (data) => live() && this.feed((session, now) => session.chunk(id, now, data)));
    on('end', () => gone('closed', 'the server closed the connection'));
    on('close', () => gone('closed', 'the connection closed'));
    on('error', (err) => gone('unreachable', failureOf(err), err));
  }

  /** Closes connection `id` once what was written to it is sent (a socket still connecting: at once). */
  #hangUp(id) {
    const socket = this.#connections.get(id);
    if (socket === undefined) return;
    this.#connections.delete(id);
    socket.unref();
    if (socket.connecting) socket.destroy();
    else socket.end(() => socket.destroy());
  }

  /** Makes `request`, handing its answer (or a stream's head and pieces) or its failure to the session. */
  async #send(request) {
    const { id } = request;
    const aborting = new AbortController();
    this.#requests.set(id, aborting);
    const live = () => this.#requests.get(id) === aborting;
    try {
      // Called as a plain function: a browser's `fetch` refuses any other `this`. A redirect
      // is an answer like any other, for the session (as Python's and the CLI's transports
      // hand it on), never followed.
      const response = await (0, this.fetch)(request.url, {
        method: request.method, headers: request.headers, signal: aborting.signal, redirect: 'manual',
        ...(request.body === null || request.body === undefined ? {} : { body: request.body }),
      });
      const status = response.status;
      const headers = Object.fromEntries(response.headers);
      if (request.stream && status === 200) {
        const reader = response.body.getReader();
        if (live()) this.feed((session, now) => session.response(id, now, status, headers, NO_BYTES));
        for (;;) {
          const { done, value } = await reader.read();
          if (!live()) return;
          if (done) break;
          this.feed((session, now) => session.chunk(id, now, value));
        }
        this.#requests.delete(id);
        this.feed((session, now) => session.failed(id, now, 'closed', 'the server ended the stream'));
        return;
      }
      const body = await boundedBody(response, request.limit);
      if (!live()) return;
      this.#requests.delete(id);
      this.feed((session, now) => session.response(id, now, status, headers, body));
    } catch (err) {
      if (!live()) return;
      this.#requests.delete(id);
      aborting.abort(err); // a refused answer's connection is closed, never read to its end
      const code = err && err.limit === true ? 'limit_exceeded' : 'unreachable';
      this.feed((session, now) => session.failed(id, now, code, code === 'unreachable' ? failureOf(err) : err.message), err);
    }
  }
}
