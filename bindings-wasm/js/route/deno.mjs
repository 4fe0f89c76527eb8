// The `deno` entry of `shardroute-wasm/route`, as js/deno.mjs is the package's: a source
// phase import gives the compiled `WebAssembly.Module` of the route build's .wasm from
// Deno's module graph (no read permission), instantiated here synchronously, so the entry
// is ready on import with no top-level `await`; `init` and `initSync` are no-ops.
import source module from '../../pkg-route/web/shardroute_route_bg.wasm';
import { initSync } from './index.mjs';

initSync(module);

export * from './index.mjs';
