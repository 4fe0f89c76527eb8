// The workloads of the browser benchmark, shared by both sides: bench.mjs imports this
// module in Node (for the Node addon and the nodejs WASM build) and bench.html imports the
// same file in Chromium (for the web WASM build), so every runtime times the same code on
// the same keys. Plain JavaScript with no Node or DOM API: only `performance.now()`,
// `TextEncoder` and typed arrays, which both runtimes have.
import { doc } from '../../conformance/js/documents.mjs';

/** The routers of the tables, as in bench/node/bench.mjs: 10 and 1000 nodes `node-<i>`. */
export const SIZES = [10, 1000];
export const STRATEGIES = [
  { name: 'jump', strategy: { type: 'jump' } },
  { name: 'ring (160 points per node)', strategy: { type: 'ring', points_per_node: 160 } },
  { name: 'redis_cluster profile', strategy: { type: 'redis_cluster' } },
];

/** One table per strategy and size, in the order they are printed. */
export const TABLES = STRATEGIES.flatMap(({ name, strategy }) =>
  SIZES.map((size) => ({
    id: `${strategy.type}-${size}`,
    title: `${name}, ${size} nodes`,
    topology: doc({ nodes: Array.from({ length: size }, (_, i) => `node-${i}`), strategy }),
  })),
);

/**
 * The calls timed in every table; `batch` marks the batch APIs (the "batch within 2x
 * of the addon" target), the others are one call per key ("one call within 1.5x").
 */
export const CALLS = [
  { name: '`route` (one call per key)', batch: false },
  { name: '`node` (one call per key)', batch: false },
  { name: '`routeMany(string[])`', batch: true },
  { name: '`routePacked` (one buffer + offsets)', batch: true },
  { name: '`routeU64s(BigUint64Array)`', batch: true },
];

/** Plain-JS floors, no shardroute call: what a loop over the keys costs by itself. */
export const FLOORS = ['loop over the keys (no call)', 'one JS function per key (`key.length`)'];

/**
 * The key set of bench/node/bench.mjs: `"user:<i>"` as strings, the same keys packed as
 * UTF-8 bytes + offsets (Arrow's layout), and the integers `0..keys` as a BigUint64Array.
 */
export function makeKeys(count) {
  const keys = Array.from({ length: count }, (_, i) => `user:${i}`);
  const offsets = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) offsets[i + 1] = offsets[i] + keys[i].length; // ASCII keys
  const data = new TextEncoder().encode(keys.join(''));
  const u64s = BigUint64Array.from({ length: count }, (_, i) => BigInt(i));
  return { keys, data, offsets, u64s };
}

/**
 * A timer for one runtime: `api` is a shardroute package (the Node addon or either WASM
 * build). `time(tableId, call)` runs one contender over every key and returns its ns/key;
 * `floor(name)` does the same for a plain-JS floor.
 */
export function makeTimer(api, { keys, data, offsets, u64s }) {
  const routers = new Map(TABLES.map((table) => [table.id, new api.Router(table.topology)]));
  const count = keys.length;
  // Results feed `sink`, so the JIT cannot drop a loop or a call whose result is unused.
  let sink = 0;

  const perKey = (fn) => {
    let acc = 0;
    for (let i = 0; i < count; i++) {
      const result = fn(keys[i]);
      acc += typeof result === 'number' ? result : result.length;
    }
    sink += acc;
  };
  const batch = (result) => {
    if (result.length !== count) throw new Error(`a batch call returned ${result.length} results for ${count} keys`);
    sink += result[0];
  };
  const bodies = {
    '`route` (one call per key)': (router) => perKey((key) => router.route(key)),
    '`node` (one call per key)': (router) => perKey((key) => router.node(key)),
    '`routeMany(string[])`': (router) => batch(router.routeMany(keys)),
    '`routePacked` (one buffer + offsets)': (router) => batch(router.routePacked(data, offsets)),
    '`routeU64s(BigUint64Array)`': (router) => batch(router.routeU64s(u64s)),
  };
  const floors = {
    'loop over the keys (no call)': () => {
      let acc = 0;
      for (let i = 0; i < count; i++) acc += keys[i] === '' ? 1 : 0;
      sink += acc;
    },
    'one JS function per key (`key.length`)': () => perKey((key) => key.length),
  };

  const measure = (body) => {
    const start = performance.now();
    body();
    return ((performance.now() - start) * 1e6) / count;
  };
  return {
    time(tableId, call) {
      const router = routers.get(tableId);
      const body = bodies[call];
      if (router === undefined || body === undefined) throw new Error(`no contender ${tableId} / ${call}`);
      return measure(() => body(router));
    },
    floor(name) {
      const body = floors[name];
      if (body === undefined) throw new Error(`no floor ${name}`);
      return measure(body);
    },
    /** Read once at the end, so `sink` stays observable. */
    sink: () => sink,
  };
}
