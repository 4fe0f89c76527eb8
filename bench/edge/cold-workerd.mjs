// The cold-start worker of bench/edge/bench.mjs for workerd: the .wasm arrives compiled
// (workerd compiles a .wasm module import when it loads the worker), and the first
// request instantiates it, builds a router and routes one key; later requests only route.
// The bench times the first request against the later ones from outside, and reads the
// worker's own clock too (workerd's ticks in whole milliseconds). cold-workerd-baseline.mjs
// is the same worker without the package, whose start-up and requests the bench subtracts.
import { initSync, Router } from '../../bindings-wasm/js/index.mjs';
import module from '../../bindings-wasm/pkg/web/shardroute_wasm_bg.wasm';

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
