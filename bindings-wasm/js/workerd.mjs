// The `workerd` entry (Cloudflare Workers and `wrangler`, which bundle with the `workerd`
// condition): workerd compiles a `.wasm` module import ahead of time, gives the worker a
// `WebAssembly.Module`, and refuses to compile bytes at run time. Instantiating that
// module synchronously here makes the package ready on import, like the Node build, with
// no top-level `await`. `init` and `initSync` are there for code shared with the web entry;
// both are no-ops here.
import module from '../pkg/web/shardroute_wasm_bg.wasm';
import { initSync } from './index.mjs';

initSync(module);

export * from './index.mjs';
