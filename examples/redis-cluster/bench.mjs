// The Node side of the Redis Cluster benchmark: ClusterClient of shardroute/redis next
// to ioredis' Cluster and Valkey GLIDE's GlideClusterClient, same workload, passes
// interleaved (the order rotates). bench.py starts the cluster and runs this script (it
// cannot reshard from here):
//
//   node bench.mjs --seeds host:port --keys N --passes P --mode steady
//       prints {"rows": {row: {client: median seconds per op or per key}}, "calls": {session
//       method: median seconds per call}, "versions", "failures": {client: text}}
//   node bench.mjs --seeds host:port --keys N --mode loop --client ours|ioredis|glide --inflight K
//       reads every key once (the client's table current), prints {"event": "ready"}, then
//       runs GET/SET with K commands in flight until a line arrives on stdin, and prints
//       {"ops", "seconds", "moved", "ask", "refreshes", "errors"} (null: not reported)
//
// GLIDE is optional: when it cannot be loaded or connected, its columns carry the error
// text ("failures"; in loop mode {"event": "failed", "error"}), never a number.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import calculateSlot from 'cluster-key-slot';
import Redis from 'ioredis';
import { ClusterSession, sessionDefaults } from 'shardroute';
import { ClusterClient } from 'shardroute/redis';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    keys: { type: 'string', default: '5000' },
    passes: { type: 'string', default: '5' },
    mode: { type: 'string', default: 'steady' },
    client: { type: 'string', default: 'ours' },
    inflight: { type: 'string', default: '1' },
  },
});
const seeds = values.seeds.split(',');
const keys = Array.from({ length: Number(values.keys) }, (_, i) => `bench:${i}`);
const [host, port] = seeds[0].split(':');
// What the Python side calls TASKS and MGET_BATCH.
const INFLIGHT = 50;
const BATCH = 1000;
const batches = Array.from({ length: Math.ceil(keys.length / BATCH) }, (_, i) => keys.slice(i * BATCH, (i + 1) * BATCH));

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

/** `run()` returns how many ops (or keys) it did: seconds per op. */
async function timed(run) {
  const start = process.hrtime.bigint();
  const ops = await run();
  return Number(process.hrtime.bigint() - start) / 1e9 / ops;
}

/** Median seconds per op of each side ({client: run}) over the passes, rotating which goes first. */
async function interleaved(sides, passes) {
  const names = Object.keys(sides);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < passes; round += 1) {
    for (let i = 0; i < names.length; i += 1) {
      const name = names[(round + i) % names.length];
      samples[name].push(await timed(sides[name]));
    }
  }
  return Object.fromEntries(names.map((name) => [name, median(samples[name])]));
}

/** GET/SET over every key, `inflight` commands at a time (1: await each). */
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

async function connectGlide() {
  const glide = createRequire(import.meta.url)('@valkey/valkey-glide');
  // Its core logs every redirect it follows as a warning, on stdout.
  glide.Logger.setLoggerConfig('error');
  // The same command timeout as ours (the session's default; GLIDE's own is 250 ms).
  const requestTimeout = Number(sessionDefaults().command_timeout_ms);
  const client = await glide.GlideClusterClient.createClient({ addresses: [{ host, port: Number(port) }], requestTimeout });
  return { glide, client };
}

/** The installed version of a dependency of this example ('not installed' when it is absent). */
function version(name) {
  try {
    return JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
  } catch {
    return 'not installed';
  }
}

/** A CLUSTER SHARDS reply with its Buffers decoded, as a session reads it. */
function text(value) {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (Array.isArray(value)) return value.map(text);
  return value;
}

const now = () => Math.floor(performance.now());

async function steady() {
  const passes = Number(values.passes);
  const failures = {};
  const ours = await ClusterClient.connect(seeds);
  const ioredis = new Redis.Cluster([{ host, port: Number(port) }], { enableReadyCheck: true });
  await new Promise((resolve) => ioredis.once('ready', resolve));
  let glide = null;
  try {
    glide = await connectGlide();
  } catch (err) {
    failures.glide = message(err);
  }
  const clients = { ours, ioredis, ...(glide ? { glide: glide.client } : {}) };
  for (const key of keys) await ours.set(key, key);
  const rows = {};

  // Routing alone: ours is Router.node and a Map lookup (node id -> address, built once
  // per table as the Python client's address_of caches it); ioredis' is the slot, then
  // the slot's node key. GLIDE routes inside its Rust core: not reachable from here.
  const router = ours.router;
  const address = new Map(JSON.parse(router.toJson()).nodes.map((entry) => [entry.id, entry.address ?? entry.id]));
  rows.routing = await interleaved({
    ours: () => {
      for (const key of keys) address.get(router.node(key));
      return keys.length;
    },
    ioredis: () => {
      for (const key of keys) ioredis.slots[calculateSlot(key)];
      return keys.length;
    },
  }, passes);

  // What the session adds per command, no I/O, as the shell's steady path calls it: the
  // fast path's one call (the core's send_now: command + poll), nothing after the reply,
  // the clock read each time.
  const session = new ClusterSession(seeds);
  session.refreshed(text(await (await ours.connection(seeds[0])).callBuffer('CLUSTER', 'SHARDS')), now());
  const fast = session[Symbol.for('shardroute.ClusterSession.fastPath')];
  if (fast.send([keys[0]], 'read', now()) === null) throw new Error('session: expected the fast path after a refresh');
  const steadyPath = () => {
    for (let round = 0; round < 4; round += 1) {
      for (let i = 0; i < keys.length; i += 1) fast.send([keys[i]], i % 2 ? 'read' : 'write', now());
    }
    return 4 * keys.length;
  };
  steadyPath(); // Untimed: V8 optimizes the loop first (one pass of 5,000 calls is ~2 ms).
  rows.session = await interleaved({ ours: steadyPath }, passes);

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
  }, passes);

  const each = (make) => Object.fromEntries(Object.entries(clients).map(([name, client]) => [name, make(name, client)]));
  rows.sequential = await interleaved(each((_, client) => work(client, 1)), passes);
  rows.inflight = await interleaved(each((_, client) => work(client, INFLIGHT)), passes);
  rows.mget = await interleaved({
    ours: perKey((batch) => ours.mget(batch)),
    ioredis: perKey((batch) => ioredisMget(ioredis, batch)),
    ...(glide ? { glide: perKey((batch) => glide.client.mget(batch)) } : {}),
  }, passes);
  rows.pipeline = await interleaved({
    ours: perKey((batch) => ours.pipelineGet(batch)),
    ioredis: perKey((batch) => Promise.all(batch.map((key) => ioredis.get(key)))),
    ...(glide ? {
      glide: perKey((batch) => {
        const pipeline = new glide.glide.ClusterBatch(false);
        for (const key of batch) pipeline.get(key);
        return glide.client.exec(pipeline, false);
      }),
    } : {}),
  }, passes);

  const versions = { node: process.version, ioredis: version('ioredis'), glide: version('@valkey/valkey-glide') };
  console.log(JSON.stringify({ rows, calls, versions, failures }));
  await ours.close();
  ioredis.disconnect();
  glide?.client.close();
}

async function loop() {
  const inflight = Number(values.inflight);
  let client;
  let glide = null;
  if (values.client === 'ours') client = await ClusterClient.connect(seeds);
  else if (values.client === 'ioredis') {
    client = new Redis.Cluster([{ host, port: Number(port) }], { enableReadyCheck: true });
    await new Promise((resolve) => client.once('ready', resolve));
  } else {
    try {
      glide = await connectGlide();
    } catch (err) {
      console.log(JSON.stringify({ event: 'failed', error: message(err) }));
      return;
    }
    client = glide.client;
  }
  // Every key once: what earlier reshards moved is known before this one starts.
  for (const batch of batches) {
    if (values.client === 'ioredis') await ioredisMget(client, batch);
    else await client.mget(batch);
  }
  if (values.client === 'ours') client.stats.reset();
  seen.moved = 0;
  seen.ask = 0;
  let stop = false;
  createInterface({ input: process.stdin }).once('line', () => {
    stop = true;
  });
  console.log(JSON.stringify({ event: 'ready' }));
  const errors = {};
  let ops = 0;
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: inflight }, async (_, t) => {
    for (let i = t; !stop; i += inflight) {
      const key = keys[i % keys.length];
      try {
        if (i % 2) await client.set(key, key);
        else await client.get(key);
        ops += 1;
      } catch (err) {
        const kind = `${err?.name ?? 'Error'} (${String(err?.message ?? err).slice(0, 60)})`;
        errors[kind] = (errors[kind] ?? 0) + 1;
      }
    }
  }));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const counts = {
    ours: () => ({ moved: client.stats.moved, ask: client.stats.ask, refreshes: client.stats.refreshes }),
    ioredis: () => ({ moved: seen.moved, ask: seen.ask, refreshes: null }),
    glide: () => ({ moved: null, ask: null, refreshes: null }),
  }[values.client]();
  console.log(JSON.stringify({ ops, seconds, ...counts, errors }));
  if (values.client === 'ours') await client.close();
  else if (values.client === 'ioredis') client.disconnect();
  else client.close();
}

if (values.mode === 'steady') await steady();
else await loop();
// stdin (the loop's stop line) and GLIDE's native threads would keep the process alive.
process.exit(0);
