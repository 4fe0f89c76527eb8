// Routers in worker_threads while another thread swaps epochs: no torn answer, no crash,
// no deadlock. Shared by the Node addon and the WASM package (each package's
// test/threads.test.mjs calls `threadsSuite(api, runtime)`).
//
// A JavaScript router belongs to the thread that built it (an addon object lives in one
// N-API environment, a WASM router in one instance's memory), so "swapping an epoch" is
// per thread: a swapper thread publishes epoch after epoch through a SharedArrayBuffer, and
// each reader thread, between two batches, replaces its router with the published epoch's
// (`router.replace`), exactly as a service with one router per worker would. What runs
// concurrently is the package itself: eight copies of the addon (one per worker
// environment) or eight WASM instances, each routing 200,000 keys in batches on its own
// thread while the others do, and each swapping 100 times. Every batch must equal, key for
// key, what a router built alone from the same document answers in the main thread: a
// batch that mixed two topologies, or a router that changed under a reader, fails. The
// swapper and the readers pace each other (as in bindings-py/tests/test_threads.py) so
// that the swaps are spread over the whole run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

import { doc } from './documents.mjs';

const READERS = 8;
const ROUTES_PER_READER = 200_000;
const SWAPS = 100;
const BATCH = 2_000;

/** Epoch `epoch`'s document: 3 to 10 nodes, every epoch different from the last. */
const topology = (epoch) => doc({ nodes: 3 + (epoch % 8), strategy: { type: 'ring', points_per_node: 40 }, epoch });

/** Shared state, in Int32 slots: the swaps published, then each reader's routes done. */
const SWAPPED = 0;
const PROGRESS = 1;

/**
 * The code of a worker thread, a reader or the swapper. An `eval` worker is CommonJS: it
 * loads the package with require from the package's directory, as a user's code would.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
const { role, index, packageDir, packageName, documents, keys, expected, state, readers, routes, swaps, batch } = workerData;
const slots = new Int32Array(state);
const wait = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const api = createRequire(packageDir + '/package.json')(packageName);
if (role === 'swapper') {
  // Publish epoch i once every reader has done i/(swaps+1) of its routes.
  let router = new api.Router(documents[0]);
  for (let swap = 1; swap <= swaps; swap++) {
    for (;;) {
      let least = Infinity;
      for (let r = 0; r < readers; r++) least = Math.min(least, Atomics.load(slots, ${PROGRESS} + r));
      if (least >= Math.floor(routes * swap / (swaps + 1))) break;
      wait(1);
    }
    router = router.replace(documents[swap]); // the swapper checks every document too
    Atomics.store(slots, ${SWAPPED}, swap);
  }
  parentPort.postMessage({ epoch: Number(router.epoch) });
} else {
  let router = new api.Router(documents[0]);
  const failures = [];
  const seen = new Set();
  let done = 0;
  let last = 0n;
  while (done < routes) {
    // Go no further than one swap's share ahead of the swapper.
    while (done >= Math.floor(routes * (Atomics.load(slots, ${SWAPPED}) + 1) / swaps) && Atomics.load(slots, ${SWAPPED}) < swaps) wait(1);
    const published = Atomics.load(slots, ${SWAPPED});
    if (BigInt(published + 1) !== router.epoch) router = router.replace(documents[published]);
    const epoch = router.epoch;
    if (epoch < last) failures.push('epoch ' + epoch + ' after ' + last);
    last = epoch;
    const got = router.routeMany(keys);
    const want = expected[Number(epoch) - 1];
    if (got.length !== want.length || got.some((shard, at) => shard !== want[at]) || router.epoch !== epoch) {
      failures.push('a torn answer at epoch ' + epoch);
    }
    // One key at a time too, on every tenth batch.
    if (done % (batch * 10) === 0 && keys.some((key, at) => router.route(key) !== want[at])) {
      failures.push('a torn single route at epoch ' + epoch);
    }
    seen.add(Number(epoch));
    done += keys.length;
    Atomics.store(slots, ${PROGRESS} + index, done);
  }
  parentPort.postMessage({ failures, seen: seen.size, done });
}
`;

/** Runs one worker to its message; rejects on its error or an exit without one. */
function run(workerData) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData });
    let answer;
    worker.once('message', (message) => { answer = message; });
    worker.once('error', reject);
    worker.once('exit', (code) => (answer !== undefined ? resolve(answer) : reject(new Error(`worker exited ${code}`))));
  });
}

/** Defines the worker_threads tests for one package (`runtime`: its column of runtimes.mjs). */
export function threadsSuite(api, runtime) {
  const { packageDir, packageName } = runtime;

  test(`${READERS} worker threads route ${ROUTES_PER_READER} keys each while another swaps ${SWAPS} epochs: no torn answer`,
    { timeout: 120_000 }, async () => {
      const documents = Array.from({ length: SWAPS + 1 }, (_, i) => topology(i + 1));
      const keys = Array.from({ length: BATCH }, (_, i) => `user:${i}`);
      const expected = documents.map((document) => Array.from(new api.Router(document).routeMany(keys)));
      assert.ok(new Set(expected.map(String)).size > 1, 'the epochs must route differently');
      const state = new SharedArrayBuffer(4 * (PROGRESS + READERS));
      const common = { packageDir, packageName, documents, keys, expected, state, readers: READERS,
        routes: ROUTES_PER_READER, swaps: SWAPS, batch: BATCH };

      const readers = Array.from({ length: READERS }, (_, index) => run({ ...common, role: 'reader', index }));
      const swapper = run({ ...common, role: 'swapper', index: -1 });
      const [swapped, ...results] = await Promise.all([swapper, ...readers]);

      assert.equal(swapped.epoch, SWAPS + 1);
      assert.deepEqual(results.flatMap((result) => result.failures), []);
      for (const { seen, done } of results) {
        assert.ok(done >= ROUTES_PER_READER);
        // Every reader met most of the epochs: the swaps happened while it routed.
        assert.ok(seen >= SWAPS / 2, `a reader met only ${seen} epochs`);
      }
    });

  test('a worker terminated in the middle of routing ends cleanly, and the package goes on working', { timeout: 60_000 },
    async () => {
      const document = topology(1);
      const keys = Array.from({ length: 200_000 }, (_, i) => `user:${i}`);
      const source = `
        const { parentPort, workerData: { packageDir, packageName, document, keys } } = require('node:worker_threads');
        const api = require('node:module').createRequire(packageDir + '/package.json')(packageName);
        const router = new api.Router(document);
        parentPort.postMessage('routing');
        for (;;) router.routeMany(keys);
      `;
      for (let round = 0; round < 4; round++) {
        const worker = new Worker(source, { eval: true, workerData: { packageDir, packageName, document, keys } });
        await new Promise((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        });
        assert.equal(await worker.terminate(), 1);
      }
      const router = new api.Router(document);
      assert.deepEqual(Array.from(router.routeMany(['a', 'b'])), [router.route('a'), router.route('b')]);
    });
}
