// Routes the demo keys through the demo topology with the Node addon and prints one JSON
// array: [{"key", "shard", "node", "replicas"}, ...] (two replicas each), nothing else.
import { Router } from 'shardroute';
import { demoRows } from '../../conformance/js/demo.mjs';

process.stdout.write(`${JSON.stringify(demoRows(Router))}\n`);
