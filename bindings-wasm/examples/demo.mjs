// Routes the demo keys through the demo topology with the Node.js build of shardroute-wasm
// and prints one JSON array: [{"key", "shard", "node", "replicas"}, ...] (two replicas
// each), nothing else.
import { Router } from 'shardroute-wasm';
import { demoRows } from '../../conformance/js/demo.mjs';

process.stdout.write(`${JSON.stringify(demoRows(Router))}\n`);
