// The cold-start worker of bench/edge/bench.mjs for Chromium: a dedicated worker (a fresh
// isolate) given the .wasm's bytes, which times the package's own path: `init(bytes)`
// (compile and instantiate), building a router and routing one key.
import { init, Router } from '../../bindings-wasm/js/index.mjs';

const TOPOLOGY = { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], strategy: { type: 'jump' } };

self.onmessage = async ({ data: bytes }) => {
  const started = performance.now();
  await init(bytes);
  const shard = new Router(TOPOLOGY).route('user:42');
  self.postMessage({ ms: performance.now() - started, shard });
};
