// The `deno` entry: a source phase import (`import source`) gives the compiled
// `WebAssembly.Module` of the .wasm beside the glue, from Deno's module graph (local
// node_modules, Deno's npm cache or a URL alike, with no read permission), and
// instantiating it synchronously makes the package ready on import, with no top-level
// `await`. `init` and `initSync` are there for code shared with the web entry; both are
// no-ops here.
import source module from '../pkg/web/shardroute_wasm_bg.wasm';
import { initSync } from './index.mjs';

initSync(module);

export * from './index.mjs';
