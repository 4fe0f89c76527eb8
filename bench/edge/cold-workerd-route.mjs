// cold-workerd.mjs for the route build (`shardroute-wasm/route`, bindings-wasm/pkg-route):
// the same worker and the same first request, timed the same way by bench/edge/bench.mjs.
import { initSync, Router } from '../../bindings-wasm/js/route/index.mjs';
import module from '../../bindings-wasm/pkg-route/web/shardroute_route_bg.wasm';
import { coldWorker } from './cold-first-route.mjs';

export default coldWorker(initSync, Router, module);
