// cold-worker.mjs for the route build (`shardroute-wasm/route`, bindings-wasm/pkg-route):
// the same dedicated worker, timed the same way (cold.html?build=route).
import { init, Router } from '../../bindings-wasm/js/route/index.mjs';

const TOPOLOGY = { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], strategy: { type: 'jump' } };

self.onmessage = async ({ data: bytes }) => {
  const started = performance.now();
  await init(bytes);
  const shard = new Router(TOPOLOGY).route('user:42');
  self.postMessage({ ms: performance.now() - started, shard });
};
