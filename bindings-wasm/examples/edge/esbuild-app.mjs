// A page's script, bundled by esbuild: `--loader:.wasm=file` copies the imported .wasm
// to the output directory and gives its path, which init() fetches.
import { init, Router } from 'shardroute-wasm/web';
import wasm from 'shardroute-wasm/shardroute_wasm.wasm';

await init(new URL(wasm, import.meta.url));
window.routeKeys = (topology, keys) => {
  const router = new Router(topology);
  return { shards: [...router.routeMany(keys)], nodes: router.nodeMany(keys) };
};
