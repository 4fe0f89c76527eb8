// The browser entry of shardroute-wasm (the package's `browser` and `default` export).
// It instantiates the WebAssembly module (fetching pkg/web/shardroute_wasm_bg.wasm, next to
// the glue) before it exports anything, so the API is exactly the Node one: no init call.
import init from '../pkg/web/shardroute_wasm.js';

export {
  Migration, Router, ShardrouteError, apply, decodeDictionary, diff, encodeDictionary, hashKey, jump, moduloMoves,
  parseRedirect,
} from '../pkg/web/shardroute_wasm.js';

await init();
