// The browser benchmark: the WASM package's web build (pkg/web, through its
// browser entry js/index.mjs) timed in headless Chromium, next to the Node addon and the
// WASM package's nodejs build timed in this Node process, in one run. Chromium cannot load
// the addon, so the WASM targets ("batch within 2x of the Node addon; one call
// within 1.5x") are measured across the two processes: each contender is timed once per run
// in each runtime back to back (the runtime order rotating from run to run), so machine
// noise hits all three alike, and ratios are of medians over the runs.
//
//   node bench/browser/bench.mjs      (BENCH_KEYS=1000000 BENCH_RUNS=5 by default)
//
// Serves the repository root read-only on 127.0.0.1 (an ephemeral port, with the COOP/COEP
// headers that give the page cross-origin isolation and so a 5 us performance.now()),
// opens bench.html in Debian's Chromium (CHROMIUM_PATH to override) through the
// playwright-core that bindings-wasm's devDependencies install, and writes
// target/bench/browser.md (a Markdown fragment for docs/benchmarks.md) and prints it.
// Builds nothing: run bindings-node/build.sh and bindings-wasm/build.sh first (`make bench`).
// Every wait is bounded and the browser is closed on any error.
import { existsSync, readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { cell, median } from '../stats.mjs';
import { CALLS, FLOORS, TABLES, makeKeys, makeTimer } from './workloads.mjs';

const NAME = 'bench/browser';
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const KEYS = Number(process.env.BENCH_KEYS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Loading the page: the .wasm and the key set. */
const PAGE_TIMEOUT_MS = 120_000;
/** One contender over every key in the page (about a second at the defaults). */
const CALL_TIMEOUT_MS = 120_000;
/** The whole script; about two minutes at the defaults on an idle 2-core machine. */
const OVERALL_TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 1200) * 1000;

const fail = (message) => {
  console.error(`${NAME}: ${message}`);
  process.exit(1);
};
if (!Number.isInteger(KEYS) || KEYS < 1) fail(`BENCH_KEYS must be a positive integer, not ${process.env.BENCH_KEYS}`);
if (!Number.isInteger(RUNS) || RUNS < 1) fail(`BENCH_RUNS must be a positive integer, not ${process.env.BENCH_RUNS}`);

// ---- what the script needs, with the command that provides it ----
const need = [
  [CHROMIUM, 'Chromium: `apt-get install chromium` (make setup), or set CHROMIUM_PATH'],
  [join(root, 'bindings-wasm', 'pkg', 'web', 'shardroute_wasm_bg.wasm'), 'the WASM web build: bindings-wasm/build.sh'],
  [join(root, 'bindings-wasm', 'pkg', 'node', 'shardroute_wasm.js'), 'the WASM nodejs build: bindings-wasm/build.sh'],
  [join(root, 'bindings-node', 'shardroute.node'), 'the Node addon: bindings-node/build.sh'],
  [join(root, 'bindings-wasm', 'node_modules', 'playwright-core', 'package.json'), 'playwright-core: `npm ci` in bindings-wasm (make setup)'],
];
for (const [path, how] of need) {
  const shown = path.startsWith(`${root}${sep}`) ? relative(root, path) : path;
  if (!existsSync(path)) fail(`missing ${shown}; get it with ${how}`);
}

// The server and browser of bindings-wasm's browser test, through the playwright-core its
// devDependencies pin.
const { launchChromium, openPage, startServer } = await import('../../bindings-wasm/test/chromium.mjs');
const playwrightVersion = JSON.parse(
  readFileSync(join(root, 'bindings-wasm', 'node_modules', 'playwright-core', 'package.json'), 'utf8'),
).version;
const require = createRequire(import.meta.url);
const addon = require(join(root, 'bindings-node', 'index.js'));
const nodeWasm = require(join(root, 'bindings-wasm', 'pkg', 'node', 'shardroute_wasm.js'));

/** `promise`, or a rejection naming `what` after `ms`. */
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}


let browser; // closed by main's `finally`, or by the watchdog
let timedOut = false; // the watchdog's message is the one to show, not the aborted call's
async function main() {
  // Cross-origin isolation: the finer performance.now() (every resource is same-origin).
  const headers = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
  const server = await startServer({ headers });
  try {
    browser = await launchChromium();
    const chromiumVersion = browser.version();
    const page = await openPage(browser, PAGE_TIMEOUT_MS);
    // A crashed or closed page would leave an evaluate() pending: fail the run instead.
    const pageGone = new Promise((_, reject) => {
      page.once('crash', () => reject(new Error('the page crashed (out of memory? try a smaller BENCH_KEYS)')));
      page.once('close', () => reject(new Error('the page closed')));
    });
    pageGone.catch(() => {});
    const inPage = (fn, arg, what) => withTimeout(Promise.race([page.evaluate(fn, arg), pageGone]), CALL_TIMEOUT_MS, what);

    const { port } = server.address();
    await page.goto(`http://127.0.0.1:${port}/bench/browser/bench.html?keys=${KEYS}`, { timeout: PAGE_TIMEOUT_MS, waitUntil: 'load' });
    await page.waitForFunction(() => window.__bench && window.__bench.ready === true, null, { timeout: PAGE_TIMEOUT_MS });
    const setup = await page.evaluate(() => ({ error: window.__bench.error, isolated: window.__bench.isolated }));
    if (setup.error !== undefined) throw new Error(`the page failed to load the package: ${setup.error}`);

    // The three runtimes; each times one contender over every key and returns its ns/key.
    const data = makeKeys(KEYS);
    const addonTimer = makeTimer(addon, data);
    const nodeWasmTimer = makeTimer(nodeWasm, data);
    const runtimes = [
      { name: 'addon', time: async (table, call) => addonTimer.time(table, call) },
      { name: 'nodeWasm', time: async (table, call) => nodeWasmTimer.time(table, call) },
      {
        name: 'chromium',
        time: (table, call) => inPage(([t, c]) => window.__bench.time(t, c), [table, call], `Chromium ${table} ${call}`),
      },
    ];
    const floorRuntimes = [
      { name: 'node', floor: async (name) => addonTimer.floor(name) },
      { name: 'chromium', floor: (name) => inPage((n) => window.__bench.floor(n), name, `Chromium floor ${name}`) },
    ];

    // times[table][call][runtime] = [ns/key per timed run]; run 0 is the untimed warm-up.
    const times = {};
    const floors = Object.fromEntries(FLOORS.map((name) => [name, { node: [], chromium: [] }]));
    for (const table of TABLES) {
      times[table.id] = Object.fromEntries(CALLS.map(({ name }) => [name, { addon: [], nodeWasm: [], chromium: [] }]));
    }
    const started = Date.now();
    for (let run = 0; run <= RUNS; run++) {
      process.stderr.write(`${NAME}: ${run === 0 ? 'warm-up' : `run ${run} of ${RUNS}`} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
      // Rotate which runtime goes first, so none always runs right after another's work.
      const rotate = (list) => list.map((_, i) => list[(i + run) % list.length]);
      for (const name of FLOORS) {
        for (const runtime of rotate(floorRuntimes)) {
          const ns = await runtime.floor(name);
          if (run > 0) floors[name][runtime.name].push(ns);
        }
      }
      for (const table of TABLES) {
        for (const { name: call } of CALLS) {
          for (const runtime of rotate(runtimes)) {
            const ns = await runtime.time(table.id, call);
            if (run > 0) times[table.id][call][runtime.name].push(ns);
          }
        }
      }
    }
    const seconds = (Date.now() - started) / 1000;
    // The sinks are read so no engine may treat the timed results as dead.
    const sinks = [addonTimer.sink(), nodeWasmTimer.sink(), await inPage(() => window.__bench.sink(), undefined, 'sink')];
    if (sinks.some((s) => !Number.isFinite(s))) throw new Error(`a result sink is not a number: ${sinks}`);

    return { chromiumVersion, isolated: setup.isolated, times, floors, seconds };
  } finally {
    await browser?.close().catch(() => {});
    await new Promise((done) => server.close(done));
  }
}

function render({ chromiumVersion, isolated, times, floors, seconds }) {
  const m = (table, call, runtime) => median(times[table][call][runtime]);
  const targets = [];
  const check = (target, ratio, limit) => targets.push({ target, measured: `${ratio.toFixed(2)}x`, met: ratio <= limit });
  const byCall = (batch) => CALLS.filter((call) => call.batch === batch).map((call) => call.name);
  for (const table of TABLES.filter((t) => t.id.startsWith('jump-'))) {
    const size = table.topology.nodes.length;
    const one = '`route` (one call per key)';
    check(`WASM in Chromium, one call within 1.5x of the Node addon (jump \`route\`, ${size} nodes)`, m(table.id, one, 'chromium') / m(table.id, one, 'addon'), 1.5);
    const many = '`routeMany(string[])`';
    check(`WASM in Chromium, batch within 2x of the Node addon (jump \`routeMany(string[])\`, ${size} nodes)`, m(table.id, many, 'chromium') / m(table.id, many, 'addon'), 2);
  }
  // The same targets over every table and call: the worst ratio, named.
  for (const [batch, limit, label] of [[false, 1.5, 'one call within 1.5x'], [true, 2, 'batch within 2x']]) {
    let worst = { ratio: -Infinity };
    for (const table of TABLES) {
      for (const call of byCall(batch)) {
        const ratio = m(table.id, call, 'chromium') / m(table.id, call, 'addon');
        if (ratio > worst.ratio) worst = { ratio, where: `${call}, ${table.title}` };
      }
    }
    check(`WASM in Chromium, ${label} of the Node addon, worst of every table (${worst.where})`, worst.ratio, limit);
  }

  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model;
  const lines = [];
  lines.push('## WASM in headless Chromium (bench/browser/bench.mjs)', '');
  lines.push(`- machine: ${os.availableParallelism?.() ?? os.cpus().length} CPUs (nproc), ${cpu}; load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  lines.push(`- date: ${new Date().toISOString()}; Node ${process.version}; Chromium ${chromiumVersion} (${CHROMIUM}, headless, through playwright-core ${playwrightVersion}); page cross-origin isolated: ${isolated ? 'yes (5 us performance.now())' : 'no (100 us performance.now())'}`);
  lines.push(`- ${KEYS.toLocaleString('en-US')} keys \`"user:<i>"\` (the keys of bench/node/bench.mjs; \`routePacked\` gets them as one UTF-8 buffer + offsets, \`routeU64s\` the integers 0..${KEYS.toLocaleString('en-US')}); ${RUNS} timed runs after one warm-up; ns/key median (min-max); ${seconds.toFixed(0)} s in all`);
  lines.push('- how it is measured: the same workload code (bench/browser/workloads.mjs) runs on the Node addon and the WASM package\'s nodejs build in the Node process, and on its web build (js/index.mjs) in a Chromium page; each contender is timed once per run in each of the three runtimes back to back, the runtime order rotating from run to run, all in one run of this script; `performance.now()` around one pass over every key. The ratio columns are medians divided by the addon\'s median: below 1 is faster than the addon');
  lines.push('');
  lines.push('### Plain-JS floors (no shardroute call)', '', '| loop | Node | Chromium |', '|---|---|---|');
  for (const name of FLOORS) lines.push(`| ${name} | ${cell(floors[name].node)} | ${cell(floors[name].chromium)} |`);
  lines.push('');
  for (const table of TABLES) {
    lines.push(`### ${table.title}`, '');
    lines.push('| call | Node addon | WASM in Node (pkg/node) | WASM in Chromium (pkg/web) | Chromium / addon | Node WASM / addon |', '|---|---|---|---|---|---|');
    for (const { name } of CALLS) {
      const t = times[table.id][name];
      const base = median(t.addon);
      lines.push(`| ${name} | ${cell(t.addon)} | ${cell(t.nodeWasm)} | ${cell(t.chromium)} | ${(median(t.chromium) / base).toFixed(2)}x | ${(median(t.nodeWasm) / base).toFixed(2)}x |`);
    }
    lines.push('');
  }
  lines.push('### Targets', '', '| target | measured | |', '|---|---|---|');
  for (const { target, measured, met } of targets) lines.push(`| ${target} | ${measured} | ${met ? 'met' : '**not met**'} |`);
  lines.push('');
  return `${lines.join('\n')}\n`;
}

const watchdog = setTimeout(async () => {
  timedOut = true;
  console.error(`${NAME}: not done after ${OVERALL_TIMEOUT_MS / 1000} s (BENCH_TIMEOUT_S); giving up`);
  await browser?.close().catch(() => {});
  process.exit(2);
}, OVERALL_TIMEOUT_MS);
watchdog.unref();

main().then(
  (result) => {
    const fragment = render(result);
    const outDir = join(root, 'target', 'bench');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'browser.md'), fragment);
    process.stdout.write(fragment);
  },
  (err) => {
    if (!timedOut) console.error(`${NAME}: ${(err && err.stack) || err}`);
    process.exitCode = 1;
  },
);
