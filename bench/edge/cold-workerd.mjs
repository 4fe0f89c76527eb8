// The cold-start worker of bench/edge/bench.mjs for workerd: the .wasm arrives compiled
// (workerd compiles a .wasm module import when it loads the worker), and the first
// request instantiates it, builds a router and routes one key; later requests only route
// (cold-first-route.mjs). cold-workerd-baseline.mjs is the same worker without the
// package, whose start-up and requests the bench subtracts.
import { initSync, Router } from '../../bindings-wasm/js/index.mjs';
import module from '../../bindings-wasm/pkg/web/shardroute_wasm_bg.wasm';
import { coldWorker } from './cold-first-route.mjs';

export default coldWorker(initSync, Router, module);
