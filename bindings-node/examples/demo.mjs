// Routes the demo keys through the demo topology and prints one JSON array:
// [{"key", "shard", "node", "replicas"}, ...] (two replicas each), nothing else.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Router } from '../index.js';

const demoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'conformance', 'demo');
const router = new Router(fs.readFileSync(path.join(demoDir, 'topology.json'), 'utf8'));
const keys = JSON.parse(fs.readFileSync(path.join(demoDir, 'keys.json'), 'utf8'));

const rows = keys.map((key) => ({
  key,
  shard: router.route(key),
  node: router.node(key),
  replicas: router.replicas(key, 2),
}));
process.stdout.write(`${JSON.stringify(rows)}\n`);
