// A part of the route build's cold start (bench/edge/bench.mjs): the worker of
// cold-workerd-route.mjs with its JavaScript (the glue and the package's support code)
// and without the .wasm, so that workerd loads the glue and compiles no module.
import { Router } from '../../bindings-wasm/js/route/index.mjs';

export default {
  async fetch() {
    return Response.json({ ms: 0, shard: typeof Router === 'function' ? 0 : -1 });
  },
};
