// Routes the demo keys (conformance/demo) with the Node.js build of shardroute-wasm and
// prints one JSON array: [{"key", "shard", "node", "replicas"}, ...], replicas with count 2.
import { readFileSync } from 'node:fs';

import { Router } from 'shardroute-wasm';

const demo = new URL('../../conformance/demo/', import.meta.url);
const router = new Router(readFileSync(new URL('topology.json', demo), 'utf8'));
const keys = JSON.parse(readFileSync(new URL('keys.json', demo), 'utf8'));

const rows = keys.map((key) => ({
  key,
  shard: router.route(key),
  node: router.node(key),
  replicas: router.replicas(key, 2),
}));
process.stdout.write(`${JSON.stringify(rows)}\n`);
