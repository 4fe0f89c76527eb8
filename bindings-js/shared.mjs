// The JavaScript both npm packages run: the error class, the serialization of document
// objects, the packing of string batches and the unpacking of node groups. An installed package cannot reach a sibling
// directory, so each package's build.sh copies this file into the package: bindings-node
// as CommonJS (shared.js, for index.js), bindings-wasm next to the snippet its glue loads
// (pkg/*/snippets/*/js/shared.mjs, for js/support.mjs).
//
// Plain declarations only, each public one starting its line with `export class`,
// `export function` or `export const`, and no imports: bindings-node/build.sh makes the
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
     * 'invalid_argument', 'stale_epoch', 'read_only' or 'cross_slot'.
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
 * The JSON text of a topology, hashing spec or operation object; a BigInt becomes its
 * decimal string, which the core reads as a u64. Throws what JSON.stringify throws (a
 * cycle, a throwing toJSON).
 */
export function documentToJson(value) {
  return JSON.stringify(value, (_name, item) => (typeof item === 'bigint' ? item.toString() : item));
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
  if (!Array.isArray(keys)) return undefined;
  try {
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
