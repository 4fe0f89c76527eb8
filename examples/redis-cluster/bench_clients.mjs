// What the two Node Redis Cluster benches share (examples/redis-cluster/bench.mjs, the
// "Redis Cluster clients (Node)" area, and bench/node/redis_cluster.mjs, its
// auto-pipelining area): the command line, the clients (shardroute/redis, ioredis'
// Cluster, Valkey GLIDE) with their redirect counts, the interleaved passes, and the loop
// mode that runs GET/SET in slices while migration.py moves slots:
//
//   node SCRIPT --seeds host:port --keys N --mode loop --client NAME --inflight K
//       reads and writes every key once, prints {"event": "ready"} (or {"event":
//       "failed", "error"}); then for each line `run MS` on stdin runs GET/SET with K
//       commands in flight for MS ms (a slice) and prints {"ops", "seconds"}; any other
//       line ends it: it prints {"moved", "ask", "refreshes", "errors"} (null: not reported)
//
// It lives here so that its bare imports resolve in this example's node_modules (its
// package.json pins ioredis and GLIDE; shardroute is linked as a user installs it). GLIDE
// is optional: when it cannot be loaded or connected, its column carries the error text.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import Redis from 'ioredis';
import { ClusterSession, sessionDefaults } from 'shardroute';
import { ClusterClient } from 'shardroute/redis';

export { ClusterSession, Redis };

/** The command line both scripts take. */
export const args = (() => {
  const { values } = parseArgs({
    options: {
      seeds: { type: 'string' },
      keys: { type: 'string', default: '5000' },
      passes: { type: 'string', default: '5' },
      mode: { type: 'string', default: 'steady' },
      client: { type: 'string' },
      inflight: { type: 'string', default: '1' },
    },
  });
  const seeds = values.seeds.split(',');
  const [host, port] = seeds[0].split(':');
  const keys = Array.from({ length: Number(values.keys) }, (_, i) => `bench:${i}`);
  return { ...values, seeds, host, port: Number(port), keys, passes: Number(values.passes), inflight: Number(values.inflight) };
})();

// What the Python side calls TASKS.
export const INFLIGHT = 50;

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

export const median = (samples) => samples.slice().sort((a, b) => a - b)[samples.length >> 1];
export const message = (err) => `${err?.name ?? 'Error'}: ${err?.message ?? String(err)}`;
export const now = () => Math.floor(performance.now());

/**
 * A connected client: `client`, `close()`, `reset()` (its redirect counts to 0) and
 * `counts()` ({moved, ask, refreshes}, null where the client keeps no count).
 */
export async function ours(config = undefined) {
  const client = await (config ? ClusterClient.connect(args.seeds, { config }) : ClusterClient.connect(args.seeds));
  return {
    client,
    close: () => client.close(),
    reset: () => client.stats.reset(),
    counts: () => ({ moved: client.stats.moved, ask: client.stats.ask, refreshes: client.stats.refreshes }),
  };
}

export async function ioredis(options = {}) {
  const client = new Redis.Cluster([{ host: args.host, port: args.port }], { enableReadyCheck: true, ...options });
  await new Promise((resolve) => client.once('ready', resolve));
  return {
    client,
    close: () => client.disconnect(),
    reset: () => Object.assign(seen, { moved: 0, ask: 0 }),
    counts: () => ({ moved: seen.moved, ask: seen.ask, refreshes: null }),
  };
}

/** GLIDE's client, and its module as `glide` (for `ClusterBatch`). */
export async function glide() {
  const module = createRequire(import.meta.url)('@valkey/valkey-glide');
  // Its core logs every redirect it follows as a warning, on stdout.
  module.Logger.setLoggerConfig('error');
  // The same command timeout as ours (the session's default; GLIDE's own is 250 ms).
  const requestTimeout = Number(sessionDefaults().command_timeout_ms);
  const client = await module.GlideClusterClient.createClient({
    addresses: [{ host: args.host, port: args.port }], requestTimeout,
  });
  return {
    client,
    glide: module,
    close: () => client.close(),
    reset: () => {},
    counts: () => ({ moved: null, ask: null, refreshes: null }),
  };
}

/** Each of `makers` ({name: () => client}) connected; the ones that failed, by name, with their error text. */
export async function connectAll(makers) {
  const made = {};
  const failures = {};
  for (const [name, make] of Object.entries(makers)) {
    try {
      made[name] = await make();
    } catch (err) {
      failures[name] = message(err);
    }
  }
  return { made, failures };
}

/** Median seconds per op (or key) of each side ({name: run}; `run()` returns how many) over the passes, rotating which goes first. */
export async function interleaved(sides, passes = args.passes) {
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

/** GET/SET over every key, `inflight` commands at a time (1: await each): how many ops. */
export function work(client, inflight, keys = args.keys) {
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

/** A CLUSTER SHARDS reply with its Buffers decoded, as a session reads it. */
export function text(value) {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (Array.isArray(value)) return value.map(text);
  return value;
}

/** The installed version of a package of this example ('not installed' when it is absent). */
export function version(name) {
  try {
    return JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
  } catch {
    return 'not installed';
  }
}

export const versions = () => ({ node: process.version, ioredis: version('ioredis'), glide: version('@valkey/valkey-glide') });

/** The loop mode (see the top of this file) of client `make`. */
async function loop(make) {
  const { inflight, keys } = args;
  let made;
  try {
    made = await make();
  } catch (err) {
    console.log(JSON.stringify({ event: 'failed', error: message(err) }));
    return;
  }
  const { client } = made;
  // Every key once: what earlier migrations moved is known before this one starts.
  await work(client, INFLIGHT)();
  made.reset();
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
  console.log(JSON.stringify({ ...made.counts(), errors }));
  await made.close();
}

/** Runs `steady()` (--mode steady) or the loop of the client `clients[--client]` names (--mode loop), then exits. */
export async function main(steady, clients) {
  if (args.mode === 'steady') await steady();
  else await loop(clients[args.client]);
  // stdin (the loop's stop line) and GLIDE's native threads would keep the process alive.
  process.exit(0);
}
