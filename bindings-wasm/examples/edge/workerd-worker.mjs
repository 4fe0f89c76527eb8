// A Cloudflare Worker: POST {topology, keys}, get each key's shard and node.
import { Router } from 'shardroute-wasm'; // ready on import: workerd compiled the .wasm

export default {
  async fetch(request) {
    const { topology, keys } = await request.json();
    const router = new Router(topology);
    return Response.json({ shards: [...router.routeMany(keys)], nodes: router.nodeMany(keys) });
  },
};
