// The `workerd` entry of `shardroute-wasm/route` (Cloudflare Workers, wrangler), as
// js/workerd.mjs is the package's: workerd compiles the route build's .wasm ahead of time
// and gives a `WebAssembly.Module`, instantiated here synchronously, so the entry is ready
// on import with no top-level `await`; `init` and `initSync` are no-ops.
import module from '../../pkg-route/web/shardroute_route_bg.wasm';
import { initSync } from './index.mjs';

initSync(module);

export * from './index.mjs';
