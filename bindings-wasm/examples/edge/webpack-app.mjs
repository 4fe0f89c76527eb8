// A page's script, bundled by webpack as it is: webpack emits the .wasm that init()
// fetches (the package names it as `new URL('./….wasm', import.meta.url)`).
import { init, Router } from 'shardroute-wasm/web';

await init();
window.routeKeys = (topology, keys) => {
  const router = new Router(topology);
  return { shards: [...router.routeMany(keys)], nodes: router.nodeMany(keys) };
};
