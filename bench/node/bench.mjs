// The Node benchmark: shardroute's Node addon and WASM package (nodejs build)
// next to the npm peers users would otherwise pick, in the same process and run, on the
// same keys ("user:<i>"). Every contender of a table is timed once per run, round-robin,
// so machine noise hits them alike; a table reports ns/key medians (min-max) over the runs
// and the ratios the performance targets are stated in.
//
//   npm install && node bench.mjs        (BENCH_KEYS=1000000 BENCH_RUNS=5 by default)
//
// Writes target/bench/node.md (a Markdown fragment for docs/benchmarks.md) and prints it.
// Builds nothing: run bindings-node/build.sh and bindings-wasm/build.sh first (`make bench`).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { cell, fmt, median } from '../stats.mjs';
import { doc } from '../../conformance/js/documents.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(import.meta.url);

const addon = require(join(root, 'bindings-node', 'index.js'));
const wasm = require(join(root, 'bindings-wasm', 'pkg', 'node', 'shardroute_wasm.js'));
const HashRing = require('hashring');
const keySlot = require('cluster-key-slot');
const { Partitioners } = require('kafkajs');

const KEYS = Number(process.env.BENCH_KEYS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SIZES = [10, 1000];

const keys = Array.from({ length: KEYS }, (_, i) => `user:${i}`);
const u64s = BigUint64Array.from({ length: KEYS }, (_, i) => BigInt(i));
const packed = (() => {
  const offsets = new Uint32Array(KEYS + 1);
  const data = Buffer.from(keys.join(''), 'utf8');
  keys.forEach((key, i) => {
    offsets[i + 1] = offsets[i] + key.length; // "user:<i>" is ASCII
  });
  return { data, offsets };
})();

/** Keeps results alive so no loop is optimized away. */
let sink = 0;

/** A loop of one call per key, as a contender. */
const perKey = (fn) => () => {
  let acc = 0;
  for (let i = 0; i < KEYS; i++) {
    const result = fn(keys[i]);
    acc += typeof result === 'number' ? result : result.length;
  }
  sink += acc;
};

/** One batch call over every key, as a contender. */
const batch = (fn) => () => {
  const result = fn();
  sink += result[0];
};

/**
 * Times each contender `RUNS` times, round-robin (plus one untimed warm-up round).
 * Returns { name: [ns/key per run] }.
 */
function race(contenders) {
  const times = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
  for (let run = 0; run <= RUNS; run++) {
    for (const [name, fn] of Object.entries(contenders)) {
      const start = process.hrtime.bigint();
      fn();
      const ns = Number(process.hrtime.bigint() - start) / KEYS;
      if (run > 0) times[name].push(ns);
    }
  }
  return times;
}

const nodes = (n) => Array.from({ length: n }, (_, i) => ({ id: `node-${i}` }));
const topology = (n, strategy) => doc({ nodes: nodes(n), strategy });
const both = (doc) => ({ addon: new addon.Router(doc), wasm: new wasm.Router(doc) });

const results = []; // { size, table, times }
const targets = []; // { target, measured, met }

function check(target, measured, met) {
  targets.push({ target, measured, met });
}

/**
 * One table of a peer library against shardroute on `strategy` over `n` nodes: the peer's
 * lookup of one key (`[name, lookup]`) first, then the addon's `node` (unless `node` is
 * false), the addon's `route`, the WASM package's `route` and the addon's `routeMany`.
 * Returns the median ns/key of a contender by name.
 */
function peerTable(n, title, strategy, [peer, lookup], { node = true } = {}) {
  process.stderr.write(`${n} nodes: ${strategy.type}\n`);
  const routers = both(topology(n, strategy));
  const contenders = { [peer]: perKey(lookup) };
  if (node) contenders['shardroute addon `node`'] = perKey((key) => routers.addon.node(key));
  contenders['shardroute addon `route`'] = perKey((key) => routers.addon.route(key));
  contenders['shardroute wasm `route`'] = perKey((key) => routers.wasm.route(key));
  contenders['shardroute addon `routeMany`'] = batch(() => routers.addon.routeMany(keys));
  const times = race(contenders);
  results.push({ size: n, table: title, times, peer });
  return (name) => median(times[name]);
}

for (const n of SIZES) {
  // Ring: 160 points per node, as npm hashring places them (40 vnodes x 4 points, ketama).
  const peerRing = new HashRing(nodes(n).map((node) => node.id));
  const ring = peerTable(n, 'ring (160 points per node)', { type: 'ring', points_per_node: 160 },
    ['npm hashring `get`', (key) => peerRing.get(key)]);
  const ringRatio = ring('npm hashring `get`') / ring('shardroute addon `node`');
  check(`Node ring \`node(str)\` >= 20x faster than npm hashring (${n} nodes)`, `${ringRatio.toFixed(1)}x faster`, ringRatio >= 20);

  // The peer's whole lookup: the key's slot, then a slot -> node table.
  const slotTable = Array.from({ length: 16384 }, (_, slot) => `node-${slot % n}`);
  const redis = peerTable(n, 'redis_cluster profile', { type: 'redis_cluster' },
    ['cluster-key-slot + table', (key) => slotTable[keySlot(key)]]);
  const redisRatio = redis('shardroute addon `route`') / redis('cluster-key-slot + table');
  check(`Node redis-cluster profile, one call, <= 1.0x cluster-key-slot + table (${n} nodes)`, `${redisRatio.toFixed(2)}x`, redisRatio <= 1.0);

  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: n }, (_, partitionId) => ({ partitionId, leader: partitionId % 3 }));
  const kafka = peerTable(n, 'kafka profile (java partitioner), partitions = nodes',
    { type: 'kafka', partitions: n, partitioner: 'java' },
    ['kafkajs DefaultPartitioner', (key) => partitioner({ topic: 'orders', partitionMetadata, message: { key, value: null } })],
    { node: false });
  const kafkaRatio = kafka('kafkajs DefaultPartitioner') / kafka('shardroute addon `route`');
  check(`Node kafka profile >= 20x faster than kafkajs (${n} partitions)`, `${kafkaRatio.toFixed(1)}x faster`, kafkaRatio >= 20);

  process.stderr.write(`${n} nodes: jump, addon vs wasm\n`);
  const jump = both(topology(n, { type: 'jump' }));
  const jumpTimes = race({
    'addon `route` (one call per key)': perKey((key) => jump.addon.route(key)),
    'wasm `route` (one call per key)': perKey((key) => jump.wasm.route(key)),
    'addon `routeMany(string[])`': batch(() => jump.addon.routeMany(keys)),
    'wasm `routeMany(string[])`': batch(() => jump.wasm.routeMany(keys)),
    'addon `routePacked`': batch(() => jump.addon.routePacked(packed.data, packed.offsets)),
    'wasm `routePacked`': batch(() => jump.wasm.routePacked(packed.data, packed.offsets)),
    'addon `routeU64s`': batch(() => jump.addon.routeU64s(u64s)),
    'wasm `routeU64s`': batch(() => jump.wasm.routeU64s(u64s)),
  });
  results.push({ size: n, table: 'jump: the Node addon and the WASM package', times: jumpTimes, peer: 'addon `route` (one call per key)' });
  const m = (name) => median(jumpTimes[name]);
  const batchNs = m('addon `routeMany(string[])`');
  check(`Node batch <= 30 ns/key for string keys (jump, ${n} nodes)`, `${fmt(batchNs)} ns/key`, batchNs <= 30);
  const wasmBatch = m('wasm `routeMany(string[])`') / batchNs;
  check(`WASM batch within 2x of the addon (routeMany(string[]), jump, ${n} nodes)`, `${wasmBatch.toFixed(2)}x`, wasmBatch <= 2);
  const wasmOne = m('wasm `route` (one call per key)') / m('addon `route` (one call per key)');
  check(`WASM one call within 1.5x of the addon (jump, ${n} nodes)`, `${wasmOne.toFixed(2)}x`, wasmOne <= 1.5);
}

// ---- the Markdown fragment ----
const cpu = (() => {
  try {
    return /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model;
  } catch {
    return os.cpus()[0]?.model;
  }
})();
const version = (name) => require(`${name}/package.json`).version;
const wasmFile = join(root, 'bindings-wasm', 'pkg', 'web', 'shardroute_wasm_bg.wasm');
const wasmBytes = readFileSync(wasmFile);
const wasmRaw = wasmBytes.length;
const wasmGzip = gzipSync(wasmBytes, { level: 9 }).length;
check('WASM `.wasm` <= 200 KB raw (full API, web build)', `${wasmRaw.toLocaleString('en-US')} bytes`, wasmRaw <= 200 * 1024);
check('WASM `.wasm` <= 80 KB gzip (gzip -9)', `${wasmGzip.toLocaleString('en-US')} bytes`, wasmGzip <= 80 * 1024);

const lines = [];
lines.push('## Node.js and WASM (bench/node/bench.mjs)', '');
lines.push(`- machine: ${os.availableParallelism?.() ?? os.cpus().length} CPUs (nproc), ${cpu}; load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
lines.push(`- date: ${new Date().toISOString()}; Node ${process.version}`);
lines.push(`- peers (npm, exact pins in bench/node/package.json): hashring ${version('hashring')}, cluster-key-slot ${version('cluster-key-slot')}, kafkajs ${version('kafkajs')}`);
lines.push(`- ${KEYS.toLocaleString('en-US')} keys \`"user:<i>"\`; ${RUNS} timed runs after one warm-up, contenders of a table round-robin in each run; ns/key median (min-max)`);
lines.push(`- the ratio column is (contender median) / (first row's median): below 1 is faster than the first row`);
lines.push(`- \`.wasm\` (web build): ${wasmRaw.toLocaleString('en-US')} bytes raw, ${wasmGzip.toLocaleString('en-US')} bytes gzip -9`);
lines.push('');
for (const { size, table, times, peer } of results) {
  lines.push(`### ${table}, ${size} nodes`, '');
  lines.push('| contender | ns/key median (min-max) | ratio to first row |', '|---|---|---|');
  const base = median(times[peer]);
  for (const [name, values] of Object.entries(times)) {
    lines.push(`| ${name} | ${cell(values)} | ${(median(values) / base).toFixed(3)}x |`);
  }
  lines.push('');
}
lines.push('### Targets', '', '| target | measured | |', '|---|---|---|');
for (const { target, measured, met } of targets) lines.push(`| ${target} | ${measured} | ${met ? 'met' : 'not met'} |`);
lines.push('');

const fragment = `${lines.join('\n')}\n`;
const outDir = join(root, 'target', 'bench');
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'node.md'), fragment);
process.stdout.write(fragment);
if (sink === 0.5) console.log(''); // keeps `sink` observable
