// Node on one real Redis Cluster, side by side in one run (issue 37): shardroute/redis with
// the session's auto-pipelining on and off, next to ioredis' Cluster with and without
// `enableAutoPipelining`, and Valkey GLIDE's GlideClusterClient; passes interleaved (the
// order rotates), medians. redis_cluster.py starts the cluster, reshards it and runs this script:
//
//   node redis_cluster.mjs --seeds host:port --keys N --passes P --mode steady
//       prints {"rows": {row: {client: median seconds per op}}, "session": {call: median
//       seconds per command}, "versions", "failures": {client: text}}
//   node redis_cluster.mjs --seeds host:port --keys N --mode loop --client NAME --inflight K
//       reads every key once, prints {"event": "ready"}; then for each line `run MS` on
//       stdin runs GET/SET with K commands in flight for MS ms (a slice) and prints {"ops",
//       "seconds"}; any other line ends it: it prints {"moved", "ask", "refreshes",
//       "errors"} (null: not reported)
//
// The clients come from examples/redis-cluster (its package.json pins ioredis and GLIDE;
// shardroute is linked there as a user installs it). GLIDE is optional: when it cannot be
// loaded or connected, its column carries the error text, never a number.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const example = createRequire(new URL('../../examples/redis-cluster/package.json', import.meta.url));
const Redis = example('ioredis');
const { ClusterSession, sessionDefaults } = example('shardroute');
const { ClusterClient } = example('shardroute/redis');

const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    keys: { type: 'string', default: '5000' },
    passes: { type: 'string', default: '5' },
    mode: { type: 'string', default: 'steady' },
    client: { type: 'string', default: 'on' },
    inflight: { type: 'string', default: '1' },
  },
});
const seeds = values.seeds.split(',');
const [host, port] = seeds[0].split(':');
const keys = Array.from({ length: Number(values.keys) }, (_, i) => `bench:${i}`);
// What the Python side calls TASKS.
const INFLIGHT = 50;

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
const message = (err) => `${err?.name ?? 'Error'}: ${err?.message ?? String(err)}`;
const now = () => Math.floor(performance.now());

async function ioredis(options) {
  const client = new Redis.Cluster([{ host, port: Number(port) }], { enableReadyCheck: true, ...options });
  await new Promise((resolve) => client.once('ready', resolve));
  return { client, close: () => client.disconnect() };
}

async function glide() {
  const { GlideClusterClient, Logger } = example('@valkey/valkey-glide');
  // Its core logs every redirect it follows as a warning, on stdout.
  Logger.setLoggerConfig('error');
  // The same command timeout as ours (the session's default; GLIDE's own is 250 ms).
  const requestTimeout = Number(sessionDefaults().command_timeout_ms);
  const client = await GlideClusterClient.createClient({ addresses: [{ host, port: Number(port) }], requestTimeout });
  return { client, close: () => client.close() };
}

async function ours(config) {
  const client = await ClusterClient.connect(seeds, { config });
  return { client, close: () => client.close() };
}

/** The contenders, by the names redis_cluster.py's table uses. */
const CLIENTS = {
  on: () => ours({ auto_pipeline: true }),
  off: () => ours({ auto_pipeline: false }),
  ioredis: () => ioredis({}),
  'ioredis-ap': () => ioredis({ enableAutoPipelining: true }),
  glide,
};

/** GET/SET over every key, `inflight` commands at a time (1: await each): how many ops. */
function work(client, inflight) {
  return async () => {
    await Promise.all(Array.from({ length: inflight }, async (_, t) => {
      for (let i = t; i < keys.length; i += inflight) {
        if (i % 2) await client.get(keys[i]);
        else await client.set(keys[i], keys[i]);
      }
    }));
    return keys.length;
  };
}

/** Median seconds per op of each side ({name: run}) over the passes, rotating which goes first. */
async function interleaved(sides, passes) {
  const names = Object.keys(sides);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < passes; round += 1) {
    for (let i = 0; i < names.length; i += 1) {
      const name = names[(round + i) % names.length];
      const start = process.hrtime.bigint();
      const ops = await sides[name]();
      samples[name].push(Number(process.hrtime.bigint() - start) / 1e9 / ops);
    }
  }
  return Object.fromEntries(names.map((name) => [name, median(samples[name])]));
}

/** A CLUSTER SHARDS reply with its Buffers decoded, as a session reads it. */
function text(value) {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (Array.isArray(value)) return value.map(text);
  return value;
}

/**
 * What the session adds per command with auto-pipelining on, no I/O, as the shell calls
 * it: the steady path's one call (`send`: command + poll), `pipelineQueued`, and a
 * 50-command write's `pipelineTake` and `pipelineDone` shared by its commands. CPU time
 * (`process.cpuUsage`), not wall time: on a shared machine the loop's wall time is mostly
 * the other processes'.
 */
async function sessionCost(client, passes) {
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
  for (let pass = 0; pass < passes; pass += 1) {
    const start = process.cpuUsage();
    for (let round = 0; round < 4; round += 1) run();
    const { user, system } = process.cpuUsage(start);
    samples.push((user + system) / 1e6 / (4 * keys.length));
  }
  return { on: median(samples) };
}

/** The installed version of a package of examples/redis-cluster ('not installed' when it is absent). */
function version(name) {
  try {
    const file = new URL(`../../examples/redis-cluster/node_modules/${name}/package.json`, import.meta.url);
    return JSON.parse(readFileSync(file, 'utf8')).version;
  } catch {
    return 'not installed';
  }
}

async function steady() {
  const passes = Number(values.passes);
  const failures = {};
  const made = {};
  for (const [name, make] of Object.entries(CLIENTS)) {
    try {
      made[name] = await make();
    } catch (err) {
      failures[name] = message(err);
    }
  }
  for (const key of keys) await made.on.client.set(key, key);
  const each = (inflight) => Object.fromEntries(Object.entries(made).map(([name, { client }]) => [name, work(client, inflight)]));
  for (const run of Object.values(each(INFLIGHT))) await run(); // Untimed: connections made, code warm.
  const rows = {
    sequential: await interleaved(each(1), passes),
    inflight: await interleaved(each(INFLIGHT), passes),
  };
  const session = await sessionCost(made.on.client, passes);
  const versions = { node: process.version, ioredis: version('ioredis'), glide: version('@valkey/valkey-glide') };
  console.log(JSON.stringify({ rows, session, versions, failures }));
  await Promise.all(Object.values(made).map(({ close }) => close()));
}

async function loop() {
  const inflight = Number(values.inflight);
  let made;
  try {
    made = await CLIENTS[values.client]();
  } catch (err) {
    console.log(JSON.stringify({ event: 'failed', error: message(err) }));
    return;
  }
  const { client } = made;
  // Every key once: what earlier migrations moved is known before this one starts.
  await work(client, INFLIGHT)();
  const isOurs = values.client === 'on' || values.client === 'off';
  if (isOurs) client.stats.reset();
  seen.moved = 0;
  seen.ask = 0;
  console.log(JSON.stringify({ event: 'ready' }));
  const errors = {};
  // Each of the `inflight` loops goes on from its own next key, slice after slice.
  const next = Array.from({ length: inflight }, (_, t) => t);
  /** GET/SET with `inflight` commands in flight for `ms` (the last ones' replies awaited): how many ops, how long. */
  async function slice(ms) {
    let ops = 0;
    const start = performance.now();
    const end = start + ms;
    await Promise.all(next.map(async (_, t) => {
      while (performance.now() < end) {
        const i = next[t];
        next[t] += inflight;
        const key = keys[i % keys.length];
        try {
          if (i % 2) await client.set(key, key);
          else await client.get(key);
          ops += 1;
        } catch (err) {
          // The kind: its class and text, without the slots and addresses a redirect names.
          const kind = `${err?.name ?? 'Error'} (${String(err?.message ?? err).replace(/\s[\d.:]+/g, '').slice(0, 60)})`;
          errors[kind] = (errors[kind] ?? 0) + 1;
        }
      }
    }));
    return { ops, seconds: (performance.now() - start) / 1000 };
  }
  // `run MS` runs a slice and answers {"ops", "seconds"}; any other line ends the loop.
  for await (const line of createInterface({ input: process.stdin })) {
    const [verb, ms] = line.trim().split(' ');
    if (verb !== 'run') break;
    console.log(JSON.stringify(await slice(Number(ms))));
  }
  let counts = { moved: null, ask: null, refreshes: null };
  if (isOurs) counts = { moved: client.stats.moved, ask: client.stats.ask, refreshes: client.stats.refreshes };
  else if (values.client !== 'glide') counts = { moved: seen.moved, ask: seen.ask, refreshes: null };
  console.log(JSON.stringify({ ...counts, errors }));
  await made.close();
}

if (values.mode === 'steady') await steady();
else await loop();
// stdin (the loop's stop line) and GLIDE's native threads would keep the process alive.
process.exit(0);
