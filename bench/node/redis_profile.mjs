// Issue 37's profile of one command at a time (redis_profile.py starts the cluster and
// runs this): shardroute/redis' ClusterClient (auto-pipelining as configured, the default
// on) next to ioredis' Cluster, steady GET/SET awaited one by one, the passes interleaved
// (the order rotating), medians in µs per command and the ratio (> 1: ours is faster).
//
//   node redis_profile.mjs --seeds host:port [--keys N] [--passes P] [--client ours|ioredis] [--mode off]
//
// `--keys`: commands per pass; with `--client`, that client alone runs every pass (for
// `node --cpu-prof`); `--mode off`: ours with the session's auto-pipelining off; `--mode
// count`: no timing, but what one command makes, per client (promises and timers made, by
// async_hooks; ours' calls into the native session, by name).
import { createHook } from 'node:async_hooks';
import { createRequire } from 'node:module';

import { ClusterSession, args, ioredis, median, ours } from '../../examples/redis-cluster/bench_clients.mjs';

/** Counts of ClusterSession's calls (each a call into the addon), by name. */
const calls = {};
{
  const { prototype } = ClusterSession;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const { value } = Object.getOwnPropertyDescriptor(prototype, name);
    if (typeof value !== 'function' || name === 'constructor') continue;
    prototype[name] = function counted(...rest) {
      calls[name] = (calls[name] ?? 0) + 1;
      return value.apply(this, rest);
    };
  }
  const fastPath = Symbol.for('shardroute.ClusterSession.fastPath');
  const getter = Object.getOwnPropertyDescriptor(prototype, fastPath).get;
  Object.defineProperty(prototype, fastPath, {
    get() {
      const fast = getter.call(this);
      const { send } = fast;
      fast.send = function counted(...rest) {
        calls['fast.send'] = (calls['fast.send'] ?? 0) + 1;
        return send.apply(this, rest);
      };
      return fast;
    },
  });
}

// bench_clients.mjs reads the command line (strictly): its `--keys` is the commands per
// pass here, `--client` the one client to run alone, `--mode off` ours without auto-pipelining.
const ops = args.keys.length;
const values = { only: args.client, off: args.mode === 'off', passes: args.passes };
const keys = Array.from({ length: 1000 }, (_, i) => `profile:${i}`);

const makers = { ours: () => ours(values.off ? { auto_pipeline: false } : undefined), ioredis: () => ioredis({}) };
// SHARDROUTE_PROFILE_BASELINE: another build of redis.js (a copy of an older one, beside
// links to this index.js and node_modules) as a third contender, `baseline`.
if (process.env.SHARDROUTE_PROFILE_BASELINE) {
  const { ClusterClient } = createRequire(import.meta.url)(process.env.SHARDROUTE_PROFILE_BASELINE);
  makers.baseline = async () => {
    const config = values.off ? { auto_pipeline: false } : undefined;
    const client = await ClusterClient.connect(args.seeds, config ? { config } : undefined);
    return { client, close: () => client.close() };
  };
}
const names = values.only ? [values.only] : Object.keys(makers);
const made = {};
for (const name of names) made[name] = await makers[name]();

/**
 * `ops` GET/SET awaited one by one: µs per command, of the wall clock and of this
 * process' CPU time (user + system: what the client costs, less moved by other load on
 * the machine than the wall clock).
 */
async function run(client) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < ops; i += 1) {
    const key = keys[i % keys.length];
    if (i & 1) await client.get(key);
    else await client.set(key, key);
  }
  const wall = Number(process.hrtime.bigint() - start) / 1e3 / ops;
  const { user, system } = process.cpuUsage(cpu);
  return [wall, (user + system) / ops];
}

for (const name of names) await run(made[name].client); // warm-up
if (args.mode === 'count') {
  const made_ = { PROMISE: 0, Timeout: 0 };
  const hook = createHook({ init(id, type) { if (type in made_) made_[type] += 1; } });
  for (const name of names) {
    for (const key of Object.keys(made_)) made_[key] = 0;
    for (const key of Object.keys(calls)) delete calls[key];
    hook.enable();
    await run(made[name].client);
    hook.disable();
    const per = (n) => (n / ops).toFixed(2);
    console.log(`${name}: per command ${per(made_.PROMISE)} promises, ${per(made_.Timeout)} timers; native session calls ${
      JSON.stringify(Object.fromEntries(Object.entries(calls).map(([call, n]) => [call, Number(per(n))])))}`);
  }
  for (const name of names) await made[name].close();
  process.exit(0);
}
const walls = Object.fromEntries(names.map((name) => [name, []]));
const cpus = Object.fromEntries(names.map((name) => [name, []]));
for (let pass = 0; pass < Number(values.passes); pass += 1) {
  for (let i = 0; i < names.length; i += 1) {
    const name = names[(pass + i) % names.length];
    const [wall, cpu] = await run(made[name].client);
    walls[name].push(wall);
    cpus[name].push(cpu);
  }
}
for (const [what, samples] of [['wall', walls], ['cpu', cpus]]) {
  const medians = Object.fromEntries(names.map((name) => [name, median(samples[name])]));
  const line = names.map((name) => `${name} ${medians[name].toFixed(2)} µs/op [${samples[name].map((s) => s.toFixed(1)).join(' ')}]`);
  for (const other of ['ioredis', 'baseline']) {
    if (medians.ours && medians[other]) line.push(`${other}/ours ${(medians[other] / medians.ours).toFixed(3)}x`);
  }
  console.log(`${what}: ${line.join('; ')}`);
}
for (const name of names) await made[name].close();
process.exit(0);
