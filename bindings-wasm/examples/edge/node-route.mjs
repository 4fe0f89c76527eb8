// Node.js, ES module: one {topology, keys} per line on stdin, each key's shard and node
// per line on stdout.
import { createInterface } from 'node:readline';

import { Router } from 'shardroute-wasm'; // ready on import

for await (const line of createInterface({ input: process.stdin })) {
  const { topology, keys } = JSON.parse(line);
  const router = new Router(topology);
  console.log(JSON.stringify({ shards: [...router.routeMany(keys)], nodes: router.nodeMany(keys) }));
}
