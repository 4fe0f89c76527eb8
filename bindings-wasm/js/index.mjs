// The web entry of shardroute-wasm: the package's `browser`, `worker` and `default` export
// and its `./web` subpath. A worker may import it, so it has no top-level `await` (service
// workers refuse one): nothing is loaded until `init` or `initSync` is called, once, before
// the first Router. Both are no-ops once the module is instantiated.
import glueInit, { initSync as glueInitSync } from '../pkg/web/shardroute_wasm.js';
import { instantiate } from './load.mjs';

export {
  MAX_DOCUMENT_BYTES, MAX_JSON_NESTING, Action, ClusterSession, Command, Migration, MigrationSession, Offered, Router, RoutingService,
  ShardrouteError, SourceSession, TopologyFollower, apply, decodeDictionary, diff, encodeDictionary, followerDefaults, hashKey, jump,
  moduloMoves, parseAddress, parseRedirect, sessionDefaults,
} from '../pkg/web/shardroute_wasm.js';

/**
 * Loads and instantiates the WebAssembly module. `input` is where the module comes from:
 * a URL or URL string (fetched), a `Response` or a promise of one (streamed), the bytes
 * (`ArrayBuffer`, typed array), or a compiled `WebAssembly.Module`; omitted, the .wasm
 * beside the glue, `new URL('./shardroute_wasm_bg.wasm', import.meta.url)`, which webpack
 * and Vite see and emit with the bundle. Concurrent and repeated calls share one
 * instantiation.
 */
export async function init(input) {
  await instantiate(glueInit, input, 'shardroute-wasm/shardroute_wasm.wasm');
}

/**
 * Instantiates the module synchronously from a compiled `WebAssembly.Module` (what
 * workerd and other edge runtimes give for `import mod from './x.wasm'`) or from its bytes
 * (compiled here: not allowed on a browser's main thread above 8 MB, nor in workerd).
 */
export function initSync(module) {
  glueInitSync({ module });
}
