// Deno: POST {topology, keys}, get each key's shard and node.
//   deno run --allow-net=127.0.0.1 --allow-env=PORT deno-server.mjs
import { Router } from 'shardroute-wasm'; // ready on import: Deno compiled the .wasm

Deno.serve({ hostname: '127.0.0.1', port: Number(Deno.env.get('PORT') ?? 8000) }, async (request) => {
  const { topology, keys } = await request.json();
  const router = new Router(topology);
  return Response.json({ shards: [...router.routeMany(keys)], nodes: router.nodeMany(keys) });
});
