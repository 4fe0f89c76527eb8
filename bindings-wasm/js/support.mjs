// The JavaScript half of the Rust binding (src/errors.rs, src/topology.rs, src/key.rs,
// src/router.rs, src/session.rs, src/follower.rs and src/migration_session.rs import it).
// wasm-bindgen copies this file next to the generated glue (pkg/*/snippets/), and
// build.sh copies bindings-js/shared.mjs, the code this package shares with the Node
// addon, beside it.
// The glue re-exports ShardrouteError, Action and Offered, so the classes thrown and
// returned are the classes the package exports.
import {
  Action, Offered, ShardrouteError, documentToJson, groupsOf, nodesOf, packStrings as packStringsAs,
} from './shared.mjs';

export { Action, Offered, ShardrouteError, groupsOf };

/**
 * The package's Action of a session call's fields, in the order of bindings-js/session.rs's
 * FlatAction (src/session.rs calls it; the glue re-exports Action).
 */
export function makeAction(kind, address, host, port, asking, readonly, untilMs, delayMs, code, message) {
  return new Action(kind, address, host, port, asking, readonly, untilMs, delayMs, code, message);
}

/**
 * The package's Offered of a follower call's fields, in the order of
 * bindings-js/follower.rs's FlatOffered (src/follower.rs calls it; the glue re-exports
 * Offered).
 */
export function makeOffered(kind, epoch, code, message) {
  return new Offered(kind, epoch, code, message === undefined ? message : refusal(message));
}

/**
 * The package's ShardrouteError of a core error's code and message (src/errors.rs calls it
 * for every error it throws), the message worded by `refusal`.
 */
export function makeError(code, message) {
  return new ShardrouteError(code, refusal(message));
}

/**
 * The strategies of the route build, `'modulo, jump, vbucket, redis_cluster'`, which
 * build.sh's line at the end of the route build's glues passes to `routeBuild`; `null` in
 * every other build (the full package and a slim one, whose refusals stay the core's).
 */
let routeStrategies = null;

/** Makes this copy of the module the route build's: see `routeStrategies`. */
export function routeBuild(strategies) {
  routeStrategies = strategies;
}

/**
 * The core's refusals of what a build leaves out (its "not built in", which speaks of cargo
 * features), in the route build: what it has and which package has the rest. Every other
 * message, and every message of another build, is returned as it is.
 * test/route.test.mjs and test/init-order.test.mjs check these words against the core's.
 */
function refusal(message) {
  if (routeStrategies === null) return message;
  let found = /^(.*)strategy ("[a-z_]+") is not built in \(cargo feature "[a-z_]+" of shardroute is off\)$/s.exec(message);
  if (found !== null) {
    return `${found[1]}strategy ${found[2]} is not in shardroute-wasm/route, which routes only ${routeStrategies}; `
      + "import 'shardroute-wasm' for every strategy";
  }
  found = /^(.*)the (\w+) session is not built in \(the `\w+` feature\)$/s.exec(message);
  if (found !== null) {
    return `${found[1]}the ${found[2]} session is not in shardroute-wasm/route, which follows only HTTP sources; `
      + "import 'shardroute-wasm' for etcd and ZooKeeper";
  }
  found = /^(.*)table families are not built in \(the `tables` feature\)$/s.exec(message);
  if (found !== null) {
    return `${found[1]}table families are not in shardroute-wasm/route, which routes by the document's one rule; `
      + "import 'shardroute-wasm' for node_groups, table_families and tenants";
  }
  return message;
}

/** The code of a call of a web entry before its module is loaded (`notLoaded`). */
export const NOT_INITIALIZED = 'not_initialized';

/**
 * What the web glue's `wasm` (the module's exports) is until `init` or `initSync` has
 * loaded the module: build.sh puts it there. Every export of the glue reads `wasm` before
 * anything else, so a call before `init` throws the package's ShardrouteError
 * `not_initialized`, which says what to call (`entry`: the package entry, `initFrom`: where
 * its `init` is imported from), rather than a TypeError about a missing property.
 */
export function notLoaded(entry, initFrom) {
  const fail = () => {
    throw new ShardrouteError(NOT_INITIALIZED, `${entry}: the WebAssembly module is not loaded: call await init() first `
      + `(import { init } from '${initFrom}'), or initSync(module), before any other call`);
  };
  return new Proxy(Object.create(null), { get: fail, has: fail, set: fail });
}

/**
 * The JSON text of a document object (shared.mjs's documentToJson, within the core's
 * limits, which Rust passes), or the ShardrouteError saying why there is none, returned
 * rather than thrown: Rust reads its code and message. Never throws.
 */
export function documentJsonOrError(value, what, code, maxDocumentBytes, maxJsonNesting) {
  try {
    return documentToJson(value, what, code, { MAX_DOCUMENT_BYTES: maxDocumentBytes, MAX_JSON_NESTING: maxJsonNesting });
  } catch (err) {
    return err instanceof ShardrouteError ? err : new ShardrouteError(code, `${what} cannot be read as JSON data`);
  }
}

/**
 * Calls `callback(value)`, for a Rust call that takes a Router, a Command or a Migration
 * argument (`diff`, `ClusterSession.poll`, `new MigrationSession`): the glue of the callback checks that `value` is a live
 * object of the class and lends it to Rust, which leaves it with its owner; when the check
 * throws, the Rust side reports `invalid_argument`.
 */
export function lend(value, callback) {
  callback(value);
}

/**
 * The keys of routeMany / nodeMany as `[units, offsets]` (shared.mjs's packStrings: ASCII
 * in a Uint8Array, which Rust routes as UTF-8 bytes, else a Uint16Array), or `undefined`.
 * Never throws.
 */
export function packStrings(keys) {
  return packStringsAs(keys, true);
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

/** `Array.isArray(value)`, false where it throws (a revoked proxy). Never throws. */
export function isArray(value) {
  try {
    return Array.isArray(value);
  } catch {
    return false;
  }
}

/** The getters every typed array inherits: they read its internal slots, not its own properties. */
const TYPED_ARRAY = Object.getPrototypeOf(Uint8Array.prototype);
const [tagOf, bufferOf, byteOffsetOf, lengthOf] = [Symbol.toStringTag, 'buffer', 'byteOffset', 'length']
  .map((name) => Object.getOwnPropertyDescriptor(TYPED_ARRAY, name).get);
/** The constructors of the typed arrays Rust reads, by name. */
const KINDS = { Uint8Array, Uint16Array, Uint32Array, BigUint64Array };

/**
 * The kind of a typed array ('Uint16Array'; a Buffer is a 'Uint8Array'), of this realm or
 * another, or `undefined` for any other value (a Proxy, a DataView). Never throws, runs no
 * user code.
 */
export function typedArrayName(value) {
  return tagOf.call(value);
}

/**
 * A fresh view of the memory of `value` when it is a typed array of kind `name`, with its
 * real bounds: read through the built-in getters, so an own `length` property cannot make
 * a copy into WebAssembly memory overrun or fall short, and an array of another realm is
 * read. `null` when it cannot be read: its buffer was detached, or it is out of bounds
 * after a resize (a copy of an empty view, which copies nothing, throws for both; the
 * addon asks N-API the same way). `undefined` for any other value. Never
 * throws.
 */
export function typedArrayView(value, name) {
  if (tagOf.call(value) !== name) return undefined;
  const length = lengthOf.call(value);
  if (length === 0) {
    try {
      // Bigint and number elements do not convert, even for an empty view.
      new (name.startsWith('Big') ? BigUint64Array : Uint8Array)(value);
    } catch {
      return null;
    }
  }
  return new KINDS[name](bufferOf.call(value), byteOffsetOf.call(value), length);
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
      return nodesOf(nodeIndexMany.call(this, keys), (this[NODE_IDS] ??= nodeIds.call(this)));
    },
  };
  for (const name of ['route', 'node', 'nodeMany']) {
    // The same attributes as the glue's methods (writable, configurable, not enumerable).
    Object.defineProperty(proto, name, { ...Object.getOwnPropertyDescriptor(proto, name), value: fast[name] });
  }
}
