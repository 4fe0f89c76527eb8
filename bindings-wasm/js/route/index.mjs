// The web entry of `shardroute-wasm/route`, the route build (route.d.ts): its `browser`,
// `worker` and `default` export, and what js/route/workerd.mjs and js/route/deno.mjs
// re-export once they have loaded the module. As js/index.mjs is for the full package: no
// top-level `await`, nothing is loaded until `init` or `initSync` is called, once, before
// the first Router; both are no-ops once the module is instantiated.
import glueInit, { initSync as glueInitSync } from '../../pkg-route/web/shardroute_route.js';
import { instantiate } from '../load.mjs';

export {
  MAX_DOCUMENT_BYTES, MAX_JSON_NESTING, Migration, MigrationSession, Offered, Router, ShardrouteError,
  SourceSession, TopologyFollower, decodeDictionary, followerDefaults,
} from '../../pkg-route/web/shardroute_route.js';

/**
 * Loads and instantiates the route build's WebAssembly module, from `input` as for the
 * package's `init` (`shardroute-wasm/web`); omitted, the .wasm beside the glue,
 * `new URL('./shardroute_route_bg.wasm', import.meta.url)`, which webpack and Vite emit
 * with the bundle. Concurrent and repeated calls share one instantiation.
 */
export async function init(input) {
  await instantiate(glueInit, input, 'shardroute-wasm/shardroute_route.wasm');
}

/**
 * Instantiates the module synchronously from a compiled `WebAssembly.Module` or from its
 * bytes, as the package's `initSync`.
 */
export function initSync(module) {
  glueInitSync({ module });
}
