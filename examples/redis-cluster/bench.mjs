// The Node side of the Redis Cluster benchmark: ClusterClient of shardroute/redis next
// to ioredis' own Cluster, same workload, passes interleaved. bench.py starts the
// cluster and runs this script (it cannot reshard from here):
//
//   node bench.mjs --seeds host:port --keys N --passes P --mode steady
//       prints {"routing": [ours, theirs], "steady": [ours, theirs]}: median seconds per op
//   node bench.mjs --seeds host:port --keys N --mode loop --client ours|ioredis
//       GET/SET in a loop until a line arrives on stdin, then prints
//       {"ops", "seconds", "moved", "ask", "refreshes"}
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import calculateSlot from 'cluster-key-slot';
import Redis from 'ioredis';
import { ClusterClient } from 'shardroute/redis';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    keys: { type: 'string', default: '20000' },
    passes: { type: 'string', default: '5' },
    mode: { type: 'string', default: 'steady' },
    client: { type: 'string', default: 'ours' },
  },
});
const seeds = values.seeds.split(',');
const keys = Array.from({ length: Number(values.keys) }, (_, i) => `bench:${i}`);
const [host, port] = seeds[0].split(':');

// ioredis keeps no count of the redirects it follows: count the MOVED and ASK replies
// that reach its error handler.
const seen = { moved: 0, ask: 0 };
const handleError = Redis.Cluster.prototype.handleError;
Redis.Cluster.prototype.handleError = function counting(error, ttl, handlers) {
  const kind = String(error?.message ?? '').split(' ')[0];
  if (kind === 'MOVED') seen.moved += 1;
  if (kind === 'ASK') seen.ask += 1;
  return handleError.call(this, error, ttl, handlers);
};

const median = (samples) => samples.slice().sort((a, b) => a - b)[samples.length >> 1];

async function timed(run) {
  const start = process.hrtime.bigint();
  const ops = await run();
  return Number(process.hrtime.bigint() - start) / 1e9 / ops;
}

/** Seconds per op of each side over the passes, alternating which goes first. */
async function interleaved(ours, theirs, passes) {
  const a = [];
  const b = [];
  for (let round = 0; round < passes; round += 1) {
    const sides = round % 2 === 0 ? [[ours, a], [theirs, b]] : [[theirs, b], [ours, a]];
    for (const [run, samples] of sides) samples.push(await timed(run));
  }
  return [median(a), median(b)];
}

function work(get, set) {
  return async () => {
    for (let i = 0; i < keys.length; i += 1) {
      if (i % 2) await get(keys[i]);
      else await set(keys[i], keys[i]);
    }
    return keys.length;
  };
}

const ours = await ClusterClient.connect(seeds);
const theirs = new Redis.Cluster([{ host, port: Number(port) }], { enableReadyCheck: true });
await new Promise((resolve) => theirs.once('ready', resolve));

if (values.mode === 'steady') {
  for (const key of keys) await ours.set(key, key);
  const passes = Number(values.passes);
  const router = ours.router;
  const routing = await interleaved(
    () => {
      for (const key of keys) ours.addressOf(router.node(key));
      return keys.length;
    },
    () => {
      // What ioredis computes per command: the slot, then the slot's node key.
      for (const key of keys) theirs.slots[calculateSlot(key)];
      return keys.length;
    },
    passes,
  );
  const steady = await interleaved(
    work((key) => ours.get(key), (key, value) => ours.set(key, value)),
    work((key) => theirs.get(key), (key, value) => theirs.set(key, value)),
    passes,
  );
  console.log(JSON.stringify({ routing, steady }));
} else {
  let stop = false;
  createInterface({ input: process.stdin }).once('line', () => {
    stop = true;
  });
  console.log(JSON.stringify({ event: 'ready' }));
  ours.stats.reset();
  const client = values.client === 'ours' ? ours : theirs;
  const start = process.hrtime.bigint();
  let ops = 0;
  while (!stop) {
    const key = keys[ops % keys.length];
    if (ops % 2) await client.set(key, key);
    else await client.get(key);
    ops += 1;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const counts = values.client === 'ours'
    ? { moved: ours.stats.moved, ask: ours.stats.ask, refreshes: ours.stats.refreshes }
    : { moved: seen.moved, ask: seen.ask, refreshes: null };
  console.log(JSON.stringify({ ops, seconds, ...counts }));
}
await ours.close();
theirs.disconnect();
// stdin (the loop's stop line) would keep the process alive.
process.exit(0);
