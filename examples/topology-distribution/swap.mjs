// Routing while the router is swapped, in Node (the twin of swap.py): the median time of
// `router.node(key)` on a Router held by the caller and of `follower.router.node(key)`
// through an `EtcdFollower` that installs a new epoch every 10 ms meanwhile, in
// alternating batches (each batch yields to the event loop after it, so the installs
// happen between batches). Prints one JSON object.
//
//     node swap.mjs --etcd URLS --key KEY --epochs N    (bench.py runs it)
import { parseArgs } from 'node:util';
import { setImmediate as yieldToLoop } from 'node:timers/promises';

import { Etcd, EtcdFollower, publish } from 'shardroute/etcd';

const { values } = parseArgs({ options: { etcd: { type: 'string' }, key: { type: 'string' }, epochs: { type: 'string', default: '200' } } });
const BATCH = 20_000;
const KEYS = Array.from({ length: 1024 }, (_, i) => `user:${i}`);
const document = (epoch) => ({ format: 'shardroute/1', epoch, nodes: Array.from({ length: 3 + (epoch % 5) }, (_, i) => ({ id: `n${i}` })),
  strategy: { type: 'vbucket', vbuckets: 1024 } });
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function batch(route) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < BATCH; i += 1) route(KEYS[i & 1023]);
  return Number(process.hrtime.bigint() - started) / BATCH;
}

const etcd = new Etcd(values.etcd, { timeoutMs: 2000 });
const epochs = Number(values.epochs);
const { value } = await etcd.get(values.key);
const stored = value === null ? 0 : JSON.parse(value).epoch;
await publish(etcd, values.key, document(stored + 1));
const follower = await EtcdFollower.start(etcd, values.key);
const held = follower.router;
const first = Number(held.epoch);
let done = false;
const publisher = (async () => {
  for (let epoch = first + 1; epoch <= first + epochs; epoch += 1) {
    await publish(etcd, values.key, document(epoch));
    await new Promise((resolve) => { setTimeout(resolve, 10); });
  }
  done = true;
})();
const direct = [];
const through = [];
while (!done) {
  direct.push(batch((key) => held.node(key)));
  through.push(batch((key) => follower.router.node(key)));
  await yieldToLoop();
}
await publisher;
await follower.waitForEpoch(first + epochs, 10_000);
console.log(JSON.stringify({ runtime: 'node', batches: direct.length, installed: Number(follower.router.epoch) - first,
  direct_ns: median(direct), follower_ns: median(through) }));
follower.close();
