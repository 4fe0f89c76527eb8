// The cold-start worker's request handler, shared by the workerd workers of
// bench/edge/bench.mjs that route (cold-workerd.mjs, cold-workerd-route.mjs,
// cold-workerd-route-floor.mjs): the first request instantiates the module, builds a router
// and routes one key; later requests only route. The worker's own clock times each request
// (workerd's ticks in whole ms); the bench times them from outside too.
const TOPOLOGY = { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], strategy: { type: 'jump' } };

/** A module worker over a build's `initSync`, `Router` and compiled `.wasm` module. */
export function coldWorker(initSync, Router, module) {
  let router;
  return {
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
}
