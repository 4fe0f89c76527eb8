// A part of the route build's cold start (bench/edge/bench.mjs): the worker of
// cold-workerd-route.mjs with the .wasm and without the JavaScript, so that workerd
// compiles the module when it loads the worker and nothing instantiates it.
import module from '../../bindings-wasm/pkg-route/web/shardroute_route_bg.wasm';

export default {
  async fetch() {
    return Response.json({ ms: 0, shard: WebAssembly.Module.exports(module).length > 0 ? 0 : -1 });
  },
};
