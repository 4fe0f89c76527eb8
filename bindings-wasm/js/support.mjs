// The JavaScript half of the Rust binding (src/errors.rs, src/topology.rs and src/router.rs
// import it).
// wasm-bindgen copies this file next to the generated glue (pkg/*/snippets/), and the glue
// re-exports ShardrouteError, so the class thrown is the class the package exports.

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
     * 'invalid_topology', 'invalid_key', 'no_nodes', 'limit_exceeded', 'invalid_argument',
     * 'stale_epoch' or 'read_only'.
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
 * The JSON text of a topology or hashing object; a BigInt becomes its decimal string, which
 * the core reads as a u64. Throws what JSON.stringify throws (a cycle, a throwing toJSON).
 */
export function documentToJson(value) {
  return JSON.stringify(value, (_name, item) => (typeof item === 'bigint' ? item.toString() : item));
}

/**
 * Calls `lend(router)`, for a Rust call that takes a Router argument (`diff`): the glue of
 * the callback checks that `router` is a live Router and lends it to Rust, which leaves it
 * with its owner; when the check throws, the Rust side reports `invalid_argument`.
 */
export function lendRouter(router, lend) {
  lend(router);
}

/** Below this many keys, routeMany and nodeMany convert each key in Rust (packing would not pay). */
const PACK_MIN_KEYS = 8;
/** Most UTF-16 code units packStrings packs (V8's string limit is 2^29 - 24 units). */
const PACK_MAX_UNITS = 2 ** 28;

/**
 * The keys of routeMany / nodeMany as `[units, offsets]` when every key is a string: the
 * UTF-16 code units of all keys in one typed array, key i being
 * units[offsets[i]..offsets[i + 1]], which Rust copies into WebAssembly memory in one step.
 * A Uint8Array while every unit is ASCII (the common batch: the units are then the UTF-8
 * bytes, and Rust routes them as they are); a Uint16Array once one is not, which Rust
 * converts to UTF-8 key by key (a lone surrogate is refused as for a single key).
 * `undefined` otherwise, for short arrays, and when reading the array throws: Rust then
 * reads each key itself, with the same results and errors. Copying code units here costs
 * a few ns per key; reading each element from Rust costs several imported calls, and
 * joining the keys into one string makes V8 flatten a rope of a million pieces (measured:
 * 1.5-2.5x the cost of this copy; the Node addon packs the same way,
 * bindings-node/index.js). Each element is read once. Never throws.
 */
export function packStrings(keys) {
  if (!Array.isArray(keys)) return undefined;
  try {
    const count = keys.length; // a proxy's trap may throw
    if (!(count >= PACK_MIN_KEYS)) return undefined;
    const offsets = new Uint32Array(count + 1);
    let units = new Uint8Array(Math.min(count * 12, PACK_MAX_UNITS));
    let limit = 0x7f; // the largest unit `units` holds as is: ASCII in a Uint8Array
    let at = 0;
    for (let i = 0; i < count; i++) {
      const key = keys[i];
      if (typeof key !== 'string') return undefined;
      const length = key.length;
      if (at + length > units.length) {
        if (at + length > PACK_MAX_UNITS) return undefined;
        units = copied(units.constructor, units, at, Math.min(Math.max(units.length * 2, at + length), PACK_MAX_UNITS));
      }
      for (let j = 0; j < length; j++) {
        const unit = key.charCodeAt(j);
        if (unit > limit) {
          // The first unit beyond ASCII: from here on every unit takes two bytes.
          units = copied(Uint16Array, units, at, units.length);
          limit = 0xffff;
        }
        units[at++] = unit;
      }
      offsets[i + 1] = at;
    }
    // Only the written units cross into WebAssembly memory.
    return [units.subarray(0, at), offsets];
  } catch {
    return undefined;
  }
}

/** A new `Type` array of `length` elements holding the first `used` elements of `from`. */
function copied(Type, from, used, length) {
  const to = new Type(length);
  to.set(from.subarray(0, used));
  return to;
}

/**
 * `key` when it is a string without lone surrogates, else `undefined`: the string key
 * whose UTF-8 the glue's one-step copy gets exactly (it would replace a lone surrogate
 * with U+FFFD, so such keys take the code-unit path in Rust, which refuses them). One
 * imported call instead of a type check plus a copy. Never throws.
 */
export function wellFormedText(key) {
  // Without isWellFormed (engines older than the package supports) Rust reads every string
  // the general way.
  return typeof key === 'string' && key.isWellFormed?.() === true ? key : undefined;
}

/** The name of an object's constructor (`Int32Array`), or `undefined`. Never throws. */
export function constructorName(value) {
  try {
    const name = Object.getPrototypeOf(value)?.constructor?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Where installFastPaths keeps a router's node ids (made once per router, on first use). */
const NODE_IDS = Symbol('shardroute node ids');

/**
 * Gives Router's hot single-key calls, `route` and `node`, a fast path for the common key,
 * a short ASCII string: its code units are written straight into a buffer in WebAssembly
 * memory (`KEY_BUFFER` in src/router.rs), and the Rust method reads them there
 * (`__routeBuffered`, `__nodeIndexBuffered`): no allocation, no copy of the string by the
 * glue, no imported call to tell the key's type. `node` looks the returned index up in
 * the router's node ids, as `nodeMany` does with the indices of all its keys. Any other
 * key, and a key the core refuses (the Rust method then gives `undefined`), takes the
 * general method, so results and errors are the same. The Rust helpers are removed from
 * the class: the public API stays the one index.d.ts declares.
 *
 * wasm-bindgen has no way to give an exported class a JavaScript method, so build.sh
 * appends a call of this function to the generated glue of both builds.
 */
export function installFastPaths(Router) {
  const proto = Router.prototype;
  const { __keyBuffer: keyBuffer } = Router;
  const {
    route, node, __routeBuffered: routeBuffered, __nodeIndexBuffered: nodeIndexBuffered, __nodeIds: nodeIds,
    __nodeIndexMany: nodeIndexMany,
  } = proto;
  const helpers = [keyBuffer, routeBuffered, nodeIndexBuffered, nodeIds, nodeIndexMany];
  if (helpers.some((fn) => typeof fn !== 'function')) return;
  delete Router.__keyBuffer;
  for (const name of ['__routeBuffered', '__nodeIndexBuffered', '__nodeIds', '__nodeIndexMany']) delete proto[name];

  // A view of the key buffer, made on first use (the browser build instantiates the module
  // after this runs) and again whenever memory has grown (which detaches the old buffer,
  // leaving views of it empty).
  let bytes = new Uint8Array(0);
  /** Writes `key` into the key buffer if it is ASCII and fits: its length, else -1. */
  const writeAscii = (key) => {
    if (bytes.length === 0) {
      const [memory, offset, length] = keyBuffer();
      bytes = new Uint8Array(memory.buffer, offset, length);
    }
    const length = key.length;
    if (length > bytes.length) return -1;
    for (let i = 0; i < length; i++) {
      const unit = key.charCodeAt(i);
      if (unit > 0x7f) return -1;
      bytes[i] = unit;
    }
    return length;
  };
  const fast = {
    route(key) {
      if (typeof key === 'string') {
        const length = writeAscii(key);
        const shard = length < 0 ? undefined : routeBuffered.call(this, length);
        if (shard !== undefined) return shard;
      }
      return route.call(this, key);
    },
    node(key) {
      if (typeof key === 'string') {
        const length = writeAscii(key);
        const index = length < 0 ? undefined : nodeIndexBuffered.call(this, length);
        if (index !== undefined) return (this[NODE_IDS] ??= nodeIds.call(this))[index];
      }
      return node.call(this, key);
    },
    nodeMany(keys) {
      const indices = nodeIndexMany.call(this, keys);
      const ids = (this[NODE_IDS] ??= nodeIds.call(this));
      const nodes = new Array(indices.length);
      for (let i = 0; i < indices.length; i++) nodes[i] = ids[indices[i]];
      return nodes;
    },
  };
  for (const name of ['route', 'node', 'nodeMany']) {
    // The same attributes as the glue's methods (writable, configurable, not enumerable).
    Object.defineProperty(proto, name, { ...Object.getOwnPropertyDescriptor(proto, name), value: fast[name] });
  }
}
