// A dedicated module worker: post it {topology, keys}, get each key's shard and node back.
//   new Worker('./web-worker.mjs', { type: 'module' })
import { init, Router } from './node_modules/shardroute-wasm/js/index.mjs';

const ready = init();
self.onmessage = async ({ data: { topology, keys } }) => {
  await ready;
  const router = new Router(topology);
  self.postMessage({ shards: [...router.routeMany(keys)], nodes: router.nodeMany(keys) });
};
