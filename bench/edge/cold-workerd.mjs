// The cold-start worker of bench/edge/bench.mjs for workerd: the .wasm arrives compiled
// (workerd compiles a .wasm module import when it loads the worker), and the first
// request times instantiating it, building a router and routing one key (workerd's clock
// ticks in whole milliseconds). cold-workerd-baseline.mjs is the same worker without the
// package, whose start-up the bench subtracts.
import { initSync, Router } from '../../bindings-wasm/js/index.mjs';
import module from '../../bindings-wasm/pkg/web/shardroute_wasm_bg.wasm';

const TOPOLOGY = { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], strategy: { type: 'jump' } };

export default {
  async fetch() {
    const started = performance.now();
    initSync(module);
    const shard = new Router(TOPOLOGY).route('user:42');
    return Response.json({ ms: performance.now() - started, shard });
  },
};
