// The route build's floor (bench/edge/floor.sh: the core without its JSON reader and
// writer) in the worker of cold-workerd-route.mjs, measured beside the route build in one
// run. The glue is the route build's own: the floor exports the same calls, so wasm-bindgen
// writes the same glue (floor.sh checks; a mismatch fails instantiation, and the bench).
import { initSync, Router } from '../../bindings-wasm/js/route/index.mjs';
import module from '../../target/bench/wasm-edge/floor/shardroute_route_bg.wasm';
import { coldWorker } from './cold-first-route.mjs';

export default coldWorker(initSync, Router, module);
