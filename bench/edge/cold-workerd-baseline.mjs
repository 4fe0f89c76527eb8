// cold-workerd.mjs without the package: what a worker's start-up and first request cost
// in workerd by themselves (bench/edge/bench.mjs).
export default {
  async fetch() {
    return Response.json({ ms: 0 });
  },
};
