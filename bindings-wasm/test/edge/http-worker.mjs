// A module worker that follows a topology with `shardroute-wasm/http`, through its own
// `fetch` (a Response made here: the runtime's network is not involved), and answers what
// it installed: [epoch, node of 'user:1', etag, an HttpError's code, typeof the main
// entry's encodeDictionary]. test/edge-http.test.mjs runs it in workerd (bundled) and Deno.
import { encodeDictionary } from 'shardroute-wasm';
import { HttpError, HttpFollower } from 'shardroute-wasm/http';

const DOCUMENT = JSON.stringify({ format: 'shardroute/1', epoch: 4, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'jump' } });

export default {
  async fetch() {
    const follower = await HttpFollower.start('https://topology.invalid/topology.json', {
      intervalMs: 60_000,
      fetch: async () => new Response(DOCUMENT, { headers: { etag: '"4"', 'content-type': 'application/json' } }),
    });
    try {
      const { router } = follower;
      return Response.json([String(router.epoch), router.node('user:1'), follower.etag, new HttpError('http', 'x').code,
        typeof encodeDictionary]);
    } finally {
      follower.close();
    }
  },
};
