// Node.js, CommonJS: one {topology, keys} per line on stdin, each key's shard and node
// per line on stdout.
const { createInterface } = require('node:readline');

const { Router } = require('shardroute-wasm'); // ready on require

createInterface({ input: process.stdin }).on('line', (line) => {
  const { topology, keys } = JSON.parse(line);
  const router = new Router(topology);
  console.log(JSON.stringify({ shards: [...router.routeMany(keys)], nodes: router.nodeMany(keys) }));
});
