// cold-workerd.mjs for the route build (`shardroute-wasm/route`, bindings-wasm/pkg-route):
// the same worker and the same first request, timed the same way by bench/edge/bench.mjs.
import { initSync, Router } from '../../bindings-wasm/js/route/index.mjs';
import module from '../../bindings-wasm/pkg-route/web/shardroute_route_bg.wasm';

const TOPOLOGY = { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], strategy: { type: 'jump' } };

let router;

export default {
  async fetch() {
    const started = performance.now();
    if (!router) {
      initSync(module);
      router = new Router(TOPOLOGY);
    }
    const shard = router.route('user:42');
    return Response.json({ ms: performance.now() - started, shard });
  },
};
