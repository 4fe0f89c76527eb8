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

/** Below this many keys, routeMany converts each key in Rust (packing would not pay). */
const PACK_MIN_KEYS = 8;
/** Longest text packAscii joins (V8's string limit is 2^29 - 24 UTF-16 units). */
const PACK_MAX_UNITS = 2 ** 28;
const encoder = new TextEncoder();

/**
 * The keys of routeMany as one buffer plus offsets, `[data, offsets]`, when every key is
 * an ASCII string (so UTF-16 and UTF-8 offsets agree); `undefined` otherwise, and for
 * short arrays, and when reading the array throws: routeMany then converts each key in
 * Rust, with the same errors as `route`. Each element is read once. Never throws.
 */
export function packAscii(keys) {
  if (!Array.isArray(keys)) return undefined;
  try {
    const count = keys.length; // a proxy's trap may throw
    if (!(count >= PACK_MIN_KEYS)) return undefined;
    const offsets = new Uint32Array(count + 1);
    let text = '';
    for (let i = 0; i < count; i++) {
      const key = keys[i];
      if (typeof key !== 'string') return undefined;
      text += key;
      if (text.length > PACK_MAX_UNITS) return undefined;
      offsets[i + 1] = text.length;
    }
    const data = new Uint8Array(text.length);
    const { read, written } = encoder.encodeInto(text, data);
    // One byte per code unit: every unit was ASCII (other characters, lone surrogates
    // included, take two or more bytes), so `offsets` are byte offsets too.
    return read === text.length && written === text.length ? [data, offsets] : undefined;
  } catch {
    return undefined;
  }
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
