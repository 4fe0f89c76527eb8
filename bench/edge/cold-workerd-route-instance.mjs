// A part of the route build's cold start (bench/edge/bench.mjs): its .wasm instantiated
// by the first request with do-nothing imports and without the JavaScript glue, so that
// the first request costs what WebAssembly instantiation costs by itself.
import module from '../../bindings-wasm/pkg-route/web/shardroute_route_bg.wasm';

let instance;

export default {
  async fetch() {
    if (!instance) {
      const imports = {};
      for (const { module: from, name, kind } of WebAssembly.Module.imports(module)) {
        if (kind === 'function') (imports[from] ??= {})[name] = () => 0;
      }
      instance = new WebAssembly.Instance(module, imports);
    }
    return Response.json({ ms: 0, shard: instance.exports.memory ? 0 : -1 });
  },
};
