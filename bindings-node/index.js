'use strict';
// shardroute for Node.js: the public module over the native addon (shardroute.node,
// built from src/ by build.sh). Everything here is conversion: object documents become
// JSON text, and errors the addon throws with a shardroute code become ShardrouteError.
// Every routing and hashing decision is made by the Rust core.

function loadAddon() {
  try {
    return require('./shardroute.node');
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND') {
      throw new Error('shardroute: the native addon shardroute.node is missing; build it with bindings-node/build.sh', {
        cause: err,
      });
    }
    throw err;
  }
}

const addon = loadAddon();

/** The codes of shardroute's errors, from the core (`ErrorKind::ALL`). */
const ERROR_CODES = new Set(addon.errorCodes());

/** The error every failed call throws: `code` is the core's stable error code. */
class ShardrouteError extends Error {
  /**
   * @param {string} code one of the core's codes, such as 'invalid_key'
   * @param {string} message what went wrong, for people
   * @param {{cause?: unknown}} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    /**
     * The stable error code: 'invalid_topology', 'invalid_key', 'no_nodes', 'limit_exceeded',
     * 'invalid_argument', 'stale_epoch' or 'read_only'.
     */
    this.code = code;
  }
}
Object.defineProperty(ShardrouteError.prototype, 'name', {
  value: 'ShardrouteError',
  writable: true,
  configurable: true,
});

/** Rethrows an error from the addon: as a ShardrouteError when it carries a shardroute code. */
function rethrow(err) {
  if (err instanceof Error && !(err instanceof ShardrouteError) && ERROR_CODES.has(err.code)) {
    const error = new ShardrouteError(err.code, err.message);
    Error.captureStackTrace(error, rethrow); // the stack starts at the method the user called
    throw error;
  }
  throw err;
}

/** BigInt fields (such as an epoch above 2^53) become decimal strings, which the core accepts. */
function bigintAsDecimal(_key, value) {
  return typeof value === 'bigint' ? value.toString() : value;
}

/**
 * A document argument as the addon takes it: objects become JSON text; other values pass
 * unchanged. `code` is the error of an object that cannot be serialized.
 */
function documentText(value, what, code = 'invalid_topology') {
  if (typeof value !== 'object' || value === null) return value;
  try {
    return JSON.stringify(value, bigintAsDecimal);
  } catch (err) {
    throw new ShardrouteError(code, `${what} cannot be serialized as JSON: ${err && err.message}`, {
      cause: err,
    });
  }
}

/** Below this many keys, routeMany and nodeMany convert each key natively (packing would not pay). */
const PACK_MIN_KEYS = 8;
/** Most UTF-16 code units packStrings packs (V8's string limit is 2^29 - 24 units). */
const PACK_MAX_UNITS = 2 ** 28;

/**
 * A Uint16Array of `length` units whose contents are not cleared (packStrings writes
 * every unit it passes on before the addon reads it, so zeroing would be wasted work).
 */
function scratchUnits(length) {
  // allocUnsafeSlow: a fresh ArrayBuffer of its own (never the shared pool), at offset 0.
  return new Uint16Array(Buffer.allocUnsafeSlow(length * 2).buffer, 0, length);
}

/**
 * The keys of routeMany / nodeMany as `[units, offsets]` when every key is a string: the
 * UTF-16 code units of all keys in one Uint16Array, key i being
 * units[offsets[i]..offsets[i + 1]], which the addon converts to UTF-8 key by key (a lone
 * surrogate is refused as for a single key). `undefined` otherwise, for short arrays, and
 * when reading the array throws: the addon then reads each key itself, with the same
 * results and errors. Copying code units here costs a few ns per key; reading each
 * element through N-API costs several times more, and so did joining the keys into one
 * string (V8 then flattens a rope of a million pieces). Each element is read once.
 */
function packStrings(keys) {
  if (!Array.isArray(keys)) return undefined;
  try {
    const count = keys.length; // a proxy's trap may throw
    if (!(count >= PACK_MIN_KEYS)) return undefined;
    const offsets = new Uint32Array(count + 1);
    let units = scratchUnits(Math.min(count * 12, PACK_MAX_UNITS));
    let at = 0;
    for (let i = 0; i < count; i++) {
      const key = keys[i];
      if (typeof key !== 'string') return undefined;
      const length = key.length;
      if (at + length > units.length) {
        if (at + length > PACK_MAX_UNITS) return undefined;
        const grown = scratchUnits(Math.min(Math.max(units.length * 2, at + length), PACK_MAX_UNITS));
        grown.set(units.subarray(0, at));
        units = grown;
      }
      for (let j = 0; j < length; j++) units[at++] = key.charCodeAt(j);
      offsets[i + 1] = at;
    }
    // Only the written units: the rest of the buffer was never cleared.
    return [units.subarray(0, at), offsets];
  } catch {
    return undefined;
  }
}

/**
 * Passed as the topology by `wrap` (module-private): the constructor's second argument is
 * then a native router the addon made, which the new Router holds as it is.
 */
const WRAP = Symbol('shardroute.wrap');

/**
 * The native router of a public Router, any other value unchanged (module-private; set in
 * Router's static block).
 */
let nativeOf;

/** A public Router over a native router the addon made (`replace`). */
function wrap(inner) {
  return new Router(WRAP, inner);
}

/** A router: a topology document compiled for lookups. */
class Router {
  #inner;
  /**
   * The hot single-key calls over #inner: plain N-API functions, much cheaper to call than
   * methods. #nodeIndex gives the index of the owner in #ids, the node ids in document
   * order, made once (returning an existing string is cheaper than making one per call).
   */
  #route;
  #nodeIndex;
  #ids;

  static {
    nativeOf = (value) => (typeof value === 'object' && value !== null && #inner in value ? value.#inner : value);
  }

  /** @param {string | object} topology the topology document, as JSON text or as an object */
  constructor(topology) {
    if (topology === WRAP) {
      this.#inner = arguments[1];
      [this.#route, this.#nodeIndex] = this.#inner.hotFunctions();
      this.#ids = this.#inner.nodeIds();
      return;
    }
    const text = documentText(topology, 'topology');
    try {
      this.#inner = new addon.Router(text);
    } catch (err) {
      rethrow(err);
    }
    [this.#route, this.#nodeIndex] = this.#inner.hotFunctions();
    this.#ids = this.#inner.nodeIds();
  }

  /** The shard of `key` (a node index, or the vbucket number for `vbucket`). */
  route(key) {
    try {
      return this.#route(key);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The id of the node that owns `key`. */
  node(key) {
    try {
      return this.#ids[this.#nodeIndex(key)];
    } catch (err) {
      rethrow(err);
    }
  }

  /** `count` distinct node ids for `key` in preference order, owner first. */
  replicas(key, count) {
    try {
      return this.#inner.replicas(key, count);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The shards of many keys, in order, as a Uint32Array. */
  routeMany(keys) {
    try {
      const packed = packStrings(keys);
      return packed === undefined ? this.#inner.routeMany(keys) : this.#inner.routeManyUtf16(packed[0], packed[1]);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The shards of integer keys given as one BigUint64Array (read in place), as a Uint32Array. */
  routeU64s(keys) {
    try {
      return this.#inner.routeU64s(keys);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The shards of byte keys packed in `data`: key i is data[offsets[i]..offsets[i + 1]]. */
  routePacked(data, offsets) {
    try {
      return this.#inner.routePacked(data, offsets);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The ids of the nodes that own many keys, in order. */
  nodeMany(keys) {
    let indices;
    try {
      const packed = packStrings(keys);
      indices =
        packed === undefined ? this.#inner.nodeIndexMany(keys) : this.#inner.nodeIndexManyUtf16(packed[0], packed[1]);
    } catch (err) {
      rethrow(err);
    }
    // The core's node indices as ids: each id is one shared string.
    const ids = this.#ids;
    const nodes = new Array(indices.length);
    for (let i = 0; i < indices.length; i++) nodes[i] = ids[indices[i]];
    return nodes;
  }

  /** The shards a scan over keys in [start, end) must visit, in key order; `end` omitted or null: to the end. */
  shardsForRange(start, end) {
    try {
      return this.#inner.shardsForRange(start, end);
    } catch (err) {
      rethrow(err);
    }
  }

  /** Decodes an id (a BigInt or a decimal string) that carries its shard: { shard, fields } in field order. */
  decodeId(id) {
    let decoded;
    try {
      decoded = this.#inner.decodeId(id);
    } catch (err) {
      rethrow(err);
    }
    return { shard: decoded.shard, fields: Object.fromEntries(decoded.fields) };
  }

  /** Where `key` lives: { shard, node, address, zone, names }. */
  locate(key) {
    let location;
    try {
      location = this.#inner.locate(key);
    } catch (err) {
      rethrow(err);
    }
    const { shard, node, address, zone, names } = location;
    return { shard, node, address, zone, names: Object.fromEntries(names) };
  }

  /** How many salted keys `key` is spread over (1 when it is not hot). */
  fanout(key) {
    try {
      return this.#inner.fanout(key);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The key to write a hot key's value under for `salt`, of the same type as `key` (numbers give a BigInt). */
  saltedKey(key, salt) {
    try {
      return this.#inner.saltedKey(key, salt);
    } catch (err) {
      rethrow(err);
    }
  }

  /** Every salted form of `key` with its shard, salt 0 first: [key, shard] pairs. */
  saltedKeys(key) {
    try {
      return this.#inner.saltedKeys(key);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The node that serves reads of `key`: `node(key)`, except for a vbucket in motion (its old owner). */
  routeRead(key) {
    try {
      return this.#inner.routeRead(key);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The node ids a write of `key` goes to, the deciding one first; `read_only` for a read-only vbucket. */
  routeWrite(key) {
    try {
      return this.#inner.routeWrite(key);
    } catch (err) {
      rethrow(err);
    }
  }

  /**
   * A new Router for `topology` (JSON text or object) when it is newer than this one's;
   * this router is unchanged. `stale_epoch` for an older epoch, or the same epoch with
   * different content.
   */
  replace(topology) {
    const text = documentText(topology, 'topology');
    let inner;
    try {
      inner = this.#inner.replace(text);
    } catch (err) {
      rethrow(err);
    }
    return wrap(inner);
  }

  /** The topology's epoch, as a BigInt. */
  get epoch() {
    return this.#inner.epoch;
  }

  /** The canonical JSON text of the topology (the same bytes in every language). */
  toJson() {
    return this.#inner.toJson();
  }
}

/** The u64 hash of `key` under a hashing spec (JSON text or object; the default spec when omitted or null), as a BigInt. */
function hashKey(key, hashing) {
  const spec = documentText(hashing, 'hashing spec');
  try {
    return addon.hashKey(key, spec);
  } catch (err) {
    rethrow(err);
  }
}

/** Jump consistent hash: the bucket in 0..buckets of `hash` (a BigInt or a decimal string). */
function jump(hash, buckets) {
  try {
    return addon.jump(hash, buckets);
  } catch (err) {
    rethrow(err);
  }
}

/**
 * Applies a topology operation (JSON text or object) to a topology (JSON text or object):
 * the result object, with the new document under `topology`.
 */
function apply(topology, operation) {
  const topologyText = documentText(topology, 'topology');
  const operationText = documentText(operation, 'operation', 'invalid_argument');
  let result;
  try {
    result = addon.apply(topologyText, operationText);
  } catch (err) {
    rethrow(err);
  }
  return JSON.parse(result);
}

/** Where each shard's keys can go when a modulo cluster goes from `oldCount` to `newCount` shards. */
function moduloMoves(oldCount, newCount) {
  try {
    return addon.moduloMoves(oldCount, newCount);
  } catch (err) {
    rethrow(err);
  }
}

/**
 * Routes every key of an array under two routers and reports what moves:
 * { keys: [{ old_shard, new_shard, old_node, new_node, moved }], total, moved, moved_ppm, flows: [{ from, to, keys }] }.
 */
function diff(oldRouter, newRouter, keys) {
  // Anything but a Router goes to the addon as it is, which refuses it (invalid_argument).
  let result;
  try {
    result = addon.diff(nativeOf(oldRouter), nativeOf(newRouter), keys);
  } catch (err) {
    rethrow(err);
  }
  return JSON.parse(result);
}

/** The compact binary form of a vbucket dictionary (a topology as JSON text or object), as a Uint8Array. */
function encodeDictionary(topology) {
  const text = documentText(topology, 'topology');
  try {
    return addon.encodeDictionary(text);
  } catch (err) {
    rethrow(err);
  }
}

/** Decodes the binary form of a vbucket dictionary (a Uint8Array): the topology's canonical JSON text. */
function decodeDictionary(bytes) {
  try {
    return addon.decodeDictionary(bytes);
  } catch (err) {
    rethrow(err);
  }
}

module.exports = {
  Router,
  hashKey,
  jump,
  apply,
  moduloMoves,
  diff,
  encodeDictionary,
  decodeDictionary,
  ShardrouteError,
};
