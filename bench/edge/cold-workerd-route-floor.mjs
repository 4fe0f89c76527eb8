// The route build's floor (bench/edge/floor.sh: the core without its JSON reader and
// writer) in the worker of cold-workerd-route.mjs, measured beside the route build in one
// run. The glue is the route build's own: the floor exports the same calls, so wasm-bindgen
// writes the same glue (a mismatch fails instantiation, and the bench with it).
import { initSync, Router } from '../../bindings-wasm/js/route/index.mjs';
import module from '../../target/bench/wasm-edge/floor/shardroute_route_bg.wasm';

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
