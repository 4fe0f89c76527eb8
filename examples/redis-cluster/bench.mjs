// The Node side of the Redis Cluster benchmark: ClusterClient of shardroute/redis next
// to ioredis' Cluster and Valkey GLIDE's GlideClusterClient, same workload, passes
// interleaved (the order rotates). bench.py starts the cluster and runs this script:
//
//   node bench.mjs --seeds host:port --keys N --passes P --mode steady
//       prints {"rows": {row: {client: median seconds per op or per key}}, "calls": {session
//       method: median seconds per call}, "versions", "failures": {client: text}}
//   node bench.mjs --seeds host:port --keys N --mode loop --client ours|ioredis|glide --inflight K
//       the slices of GET/SET while slots move (bench_clients.mjs, shared with
//       bench/node/redis_cluster.mjs; migration.py moves the slots)
//
// GLIDE is optional: when it cannot be loaded or connected, its columns carry the error
// text ("failures"; in loop mode {"event": "failed", "error"}), never a number.
import calculateSlot from 'cluster-key-slot';

import {
  ClusterSession, INFLIGHT, args, connectAll, glide, interleaved, ioredis, main, now, ours, text, versions, work,
} from './bench_clients.mjs';

const { keys, seeds } = args;
// What the Python side calls MGET_BATCH.
const BATCH = 1000;
const batches = Array.from({ length: Math.ceil(keys.length / BATCH) }, (_, i) => keys.slice(i * BATCH, (i + 1) * BATCH));

/** The contenders, by the names bench.py's table uses. */
const CLIENTS = { ours: () => ours(), ioredis: () => ioredis(), glide };

/** Every batch of keys through `read(batch)`: seconds per key. */
function perKey(read) {
  return async () => {
    for (const batch of batches) await read(batch);
    return keys.length;
  };
}

/** ioredis' Cluster refuses an MGET across slots: one MGET per slot, all in flight. */
async function ioredisMget(client, batch) {
  const slots = new Map();
  for (const key of batch) {
    const slot = calculateSlot(key);
    if (!slots.has(slot)) slots.set(slot, []);
    slots.get(slot).push(key);
  }
  await Promise.all([...slots.values()].map((group) => client.mget(...group)));
}

async function steady() {
  const { made, failures } = await connectAll(CLIENTS);
  const clients = Object.fromEntries(Object.entries(made).map(([name, { client }]) => [name, client]));
  const { ours: client, ioredis: cluster } = clients;
  const { glide: valkey } = made;
  for (const key of keys) await client.set(key, key);
  const rows = {};

  // Routing alone: ours is Router.node and a Map lookup (node id -> address, built once
  // per table as the Python client's address_of caches it); ioredis' is the slot, then
  // the slot's node key. GLIDE routes inside its Rust core: not reachable from here.
  const router = client.router;
  const address = new Map(JSON.parse(router.toJson()).nodes.map((entry) => [entry.id, entry.address ?? entry.id]));
  rows.routing = await interleaved({
    ours: () => {
      for (const key of keys) address.get(router.node(key));
      return keys.length;
    },
    ioredis: () => {
      for (const key of keys) cluster.slots[calculateSlot(key)];
      return keys.length;
    },
  });

  // What the session adds per command, no I/O, as the shell's steady path calls it: the
  // fast path's one call (the core's send_now: command + poll), nothing after the reply,
  // the clock read each time.
  const session = new ClusterSession(seeds);
  session.refreshed(text(await (await client.connection(seeds[0])).callBuffer('CLUSTER', 'SHARDS')), now());
  const fast = session[Symbol.for('shardroute.ClusterSession.fastPath')];
  if (fast.send([keys[0]], 'read', now()) === null) throw new Error('session: expected the fast path after a refresh');
  const steadyPath = () => {
    for (let round = 0; round < 4; round += 1) {
      for (let i = 0; i < keys.length; i += 1) fast.send([keys[i]], i % 2 ? 'read' : 'write', now());
    }
    return 4 * keys.length;
  };
  steadyPath(); // Untimed: V8 optimizes the loop first (one pass of 5,000 calls is ~2 ms).
  rows.session = await interleaved({ ours: steadyPath });

  // Each call alone (a fixed now), for where the time goes.
  const commands = keys.map((key) => session.command([key], 'read', 0));
  const calls = await interleaved({
    command: () => {
      for (const key of keys) session.command([key], 'read', 0);
      return keys.length;
    },
    poll: () => {
      for (const command of commands) session.poll(command, 0);
      return keys.length;
    },
    succeeded: () => {
      for (const command of commands) session.succeeded(command, 0);
      return keys.length;
    },
    sendNow: () => {
      for (const key of keys) fast.send([key], 'read', 0);
      return keys.length;
    },
  });

  const each = (inflight) => Object.fromEntries(Object.entries(clients).map(([name, c]) => [name, work(c, inflight)]));
  rows.sequential = await interleaved(each(1));
  rows.inflight = await interleaved(each(INFLIGHT));
  rows.mget = await interleaved({
    ours: perKey((part) => client.mget(part)),
    ioredis: perKey((part) => ioredisMget(cluster, part)),
    ...(valkey ? { glide: perKey((part) => valkey.client.mget(part)) } : {}),
  });
  rows.pipeline = await interleaved({
    ours: perKey((part) => client.pipelineGet(part)),
    ioredis: perKey((part) => Promise.all(part.map((key) => cluster.get(key)))),
    ...(valkey ? {
      glide: perKey((part) => {
        const pipeline = new valkey.glide.ClusterBatch(false);
        for (const key of part) pipeline.get(key);
        return valkey.client.exec(pipeline, false);
      }),
    } : {}),
  });

  console.log(JSON.stringify({ rows, calls, versions: versions(), failures }));
  await Promise.all(Object.values(made).map(({ close }) => close()));
}

await main(steady, CLIENTS);
