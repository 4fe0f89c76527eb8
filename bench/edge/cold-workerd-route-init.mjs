// A part of the route build's cold start (bench/edge/bench.mjs): the worker of
// cold-workerd-route.mjs whose first request instantiates the module through the glue
// (`initSync`) and builds no router, so that the router's share of the first request is
// the difference.
import { initSync, Router } from '../../bindings-wasm/js/route/index.mjs';
import module from '../../bindings-wasm/pkg-route/web/shardroute_route_bg.wasm';

let ready = false;

export default {
  async fetch() {
    if (!ready) {
      initSync(module);
      ready = true;
    }
    return Response.json({ ms: 0, shard: typeof Router === 'function' ? 0 : -1 });
  },
};
