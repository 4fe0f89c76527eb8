// Node on one real Redis Cluster, side by side in one run (issue 37): shardroute/redis with
// the session's auto-pipelining on and off, next to ioredis' Cluster with and without
// `enableAutoPipelining`, and Valkey GLIDE's GlideClusterClient; passes interleaved (the
// order rotates), medians. redis_cluster.py starts the cluster, moves slots and runs this script:
//
//   node redis_cluster.mjs --seeds host:port --keys N --passes P --mode steady
//       prints {"rows": {row: {client: median seconds per op}}, "session": {call: median
//       seconds per command}, "versions", "failures": {client: text}}
//   node redis_cluster.mjs --seeds host:port --keys N --mode loop --client NAME --inflight K
//       the slices of GET/SET while slots move (examples/redis-cluster/bench_clients.mjs,
//       shared with the example's bench.mjs; examples/redis-cluster/migration.py moves the slots)
//
// The clients come from examples/redis-cluster (its package.json pins ioredis and GLIDE;
// shardroute is linked there as a user installs it). GLIDE is optional: when it cannot be
// loaded or connected, its column carries the error text, never a number.
import {
  ClusterSession, INFLIGHT, args, connectAll, glide, interleaved, ioredis, main, median, now, ours, text, versions, work,
} from '../../examples/redis-cluster/bench_clients.mjs';

const { keys, seeds } = args;

/** The contenders, by the names redis_cluster.py's table uses. */
const CLIENTS = {
  on: () => ours({ auto_pipeline: true }),
  off: () => ours({ auto_pipeline: false }),
  ioredis: () => ioredis({}),
  'ioredis-ap': () => ioredis({ enableAutoPipelining: true }),
  glide,
};

/**
 * What the session adds per command with auto-pipelining on, no I/O, as the shell calls
 * it: the steady path's one call (`send`: command + poll), `pipelineQueued`, and a
 * 50-command write's `pipelineTake` and `pipelineDone` shared by its commands. CPU time
 * (`process.cpuUsage`), not wall time: on a shared machine the loop's wall time is mostly
 * the other processes'.
 */
async function sessionCost(client) {
  const session = new ClusterSession(seeds);
  session.refreshed(text(await (await client.connection(seeds[0])).callBuffer('CLUSTER', 'SHARDS')), now());
  const fast = session[Symbol.for('shardroute.ClusterSession.fastPath')];
  const run = () => {
    for (let i = 0; i < keys.length; i += INFLIGHT) {
      const written = [];
      for (let j = i; j < Math.min(i + INFLIGHT, keys.length); j += 1) {
        const target = fast.send([keys[j]], j % 2 ? 'read' : 'write', now());
        session.pipelineQueued(target.address, target.readonly);
        if (!written.includes(target)) written.push(target);
      }
      for (const { address, readonly } of written) {
        while (session.pipelineTake(address, readonly) > 0);
        session.pipelineDone(address, readonly);
      }
    }
  };
  run(); // Untimed: V8 optimizes the loop first.
  const samples = [];
  for (let pass = 0; pass < args.passes; pass += 1) {
    const start = process.cpuUsage();
    for (let round = 0; round < 4; round += 1) run();
    const { user, system } = process.cpuUsage(start);
    samples.push((user + system) / 1e6 / (4 * keys.length));
  }
  return { on: median(samples) };
}

async function steady() {
  const { made, failures } = await connectAll(CLIENTS);
  for (const key of keys) await made.on.client.set(key, key);
  const each = (inflight) => Object.fromEntries(Object.entries(made).map(([name, { client }]) => [name, work(client, inflight)]));
  for (const run of Object.values(each(INFLIGHT))) await run(); // Untimed: connections made, code warm.
  const rows = {
    sequential: await interleaved(each(1)),
    inflight: await interleaved(each(INFLIGHT)),
  };
  const session = await sessionCost(made.on.client);
  console.log(JSON.stringify({ rows, session, versions: versions(), failures }));
  await Promise.all(Object.values(made).map(({ close }) => close()));
}

await main(steady, CLIENTS);
