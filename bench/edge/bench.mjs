// The WebAssembly package where edge workers and browsers start it, for docs/benchmarks.md:
//   - the .wasm's size, raw and gzip -9, for the full package, two slim builds
//     (build.sh's SHARDROUTE_WASM_FEATURES) and the route build (`shardroute-wasm/route`,
//     pkg-route/), and what weighs most in the full and route builds (function sizes
//     from rustc's own output, which still has its `name` section, grouped by crate and
//     module: bench/edge/wasm-sizes.mjs);
//   - cold start, module compile + instantiate + first route, median over 20 fresh
//     isolates: in workerd (npm), one process serving 20 copies of cold-workerd.mjs (the
//     route build: cold-workerd-route.mjs), started 9 times against a worker without the
//     package (compile and load per isolate), each copy's first request timed from
//     outside; for the route build also workers with one part of it each
//     (cold-workerd-route-*.mjs) and, with EDGE_FLOOR=1 (bench/edge/floor.sh), its floor;
//     in Chromium (Debian's, through playwright-core), 20 dedicated workers (cold.html);
//   - batch routing per key, the WASM package's nodejs build against the Node addon.
// Writes target/bench/wasm-edge.md (with EDGE_BUILDS, wasm-edge-partial.md) and prints it.
// Runs build.sh for the slim builds and the full one again at the end (every run of it
// builds the route build too). Needs bindings-wasm's npm dev dependencies (make setup)
// and, for the batch rows, the Node addon (bindings-node/build.sh; `make bench` builds it).
//
//   node bench/edge/bench.mjs      (COLD_RUNS=20 BATCH_KEYS=200000 BATCH_RUNS=7 by default)
//   EDGE_BUILDS='full route' BATCH_RUNS=0 node bench/edge/bench.mjs
//                                  (only the builds named, space-separated: `full`, `route` or
//                                  a slim build's feature list; no batch rows: a quick look)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { median } from '../stats.mjs';
import { makeKeys, makeTimer } from '../browser/workloads.mjs';
import { functionSizes, grouped, identifiers, origin, sections } from './wasm-sizes.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = resolve(here, '..', '..');
const wasmDir = join(root, 'bindings-wasm');
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 20);
const BATCH_KEYS = Number(process.env.BATCH_KEYS ?? 200_000);
const BATCH_RUNS = Number(process.env.BATCH_RUNS ?? 7);
const SLIM = [
  { features: 'jump,redis_cluster,vbucket,operations', what: '`jump`, `redis_cluster`, `vbucket`, with the operations' },
  { features: 'jump,redis_cluster,vbucket', what: '`jump`, `redis_cluster`, `vbucket`, without the operations (`apply` and `Router.moved` refused)' },
];
const ROUTE = {
  features: 'route', route: true,
  what: 'route: `shardroute-wasm/route`, the calls an edge routing tier makes over `modulo`, `jump`, `vbucket`, `redis_cluster`',
};
const KB = 1000;
const TARGETS = { raw: 250 * KB, gzip: 90 * KB, coldMs: 5, batchRatio: 1.5 };
/** The route build's own targets (issue 24): smaller and faster to start than the full one. */
const ROUTE_TARGETS = { raw: 150 * KB, gzip: 60 * KB, coldMs: 2 };
/**
 * Workers with a piece of the route build each, measured with it in one run, which say what
 * its cold start is made of; with EDGE_FLOOR set (bench/edge/floor.sh), also the route
 * build's floor (the core without its JSON reader and writer).
 */
const ROUTE_PARTS = [
  { worker: 'cold-workerd-route-glue.mjs', what: 'its JavaScript alone (glue and support code, no .wasm)' },
  { worker: 'cold-workerd-route-module.mjs', what: 'its .wasm alone, compiled and not instantiated (no JavaScript)' },
  { worker: 'cold-workerd-route-instance.mjs', what: 'its .wasm alone, instantiated by the first request with do-nothing imports' },
  { worker: 'cold-workerd-route-init.mjs', what: 'glue and .wasm, the first request instantiating through the glue (`initSync`), no router' },
  ...(process.env.EDGE_FLOOR ? [{ worker: 'cold-workerd-route-floor.mjs', what: 'the floor: the whole worker over the core without its JSON reader and writer (bench/edge/floor.sh)', floor: true }] : []),
];
/** Only the builds EDGE_BUILDS names, space-separated (`full`, `route`, a slim build's features), or every one. */
const ONLY = process.env.EDGE_BUILDS ? new Set(process.env.EDGE_BUILDS.split(/\s+/).filter(Boolean)) : null;

const { launchChromium, openPage, startServer } = await import('../../bindings-wasm/test/chromium.mjs');
const { bundleForWorkerd, startWorkerd, stop } = await import('../../bindings-wasm/test/edge/runtimes.mjs');
const wasmRequire = createRequire(join(wasmDir, 'package.json'));

const shipped = join(wasmDir, 'pkg', 'web', 'shardroute_wasm_bg.wasm');
const shippedRoute = join(wasmDir, 'pkg-route', 'web', 'shardroute_route_bg.wasm');
/** The route build's floor, where bench/edge/floor.sh puts it (cold-workerd-route-floor.mjs imports it). */
const FLOOR_WASM = join(root, 'target', 'bench', 'wasm-edge', 'floor', 'shardroute_route_bg.wasm');
/** rustc's output for a build variant (build.sh keeps one copy per variant). */
const rustcOutput = (variant) => join(root, 'target', 'wasm', 'wasm32-unknown-unknown', 'wasm-release', `shardroute_wasm.${variant}.wasm`);

function build(features) {
  const env = { ...process.env };
  if (features) env.SHARDROUTE_WASM_FEATURES = features;
  else delete env.SHARDROUTE_WASM_FEATURES;
  execFileSync(join(wasmDir, 'build.sh'), { env, stdio: 'inherit' });
}

function sizes(path) {
  const bytes = readFileSync(path);
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}

const bytesText = (n) => n.toLocaleString('en-US');
const verdict = (ok) => (ok ? 'met' : '**not met**');
const ms = (value) => value.toFixed(value >= 10 ? 1 : 2);

// ---- sizes, and cold start of each build ----
const FULL = { features: undefined, what: 'full: every strategy and the topology operations' };
const nameOf = (variant) => variant.features ?? 'full';
const BUILDS = [FULL, ROUTE, ...SLIM].filter((variant) => !ONLY || ONLY.has(nameOf(variant)));

/**
 * Each build's sizes and cold starts (build.sh makes the full or a slim one in pkg/, and
 * the route build in pkg-route/ each time; the full one again last).
 */
async function measureBuilds() {
  const results = [];
  try {
    for (const variant of BUILDS) {
      // The route build comes with every build.sh run: the full one's just before, or its own.
      if (!variant.route) build(variant.features);
      else if (!BUILDS.includes(FULL)) build();
      const file = variant.route ? shippedRoute : shipped;
      const workerd = variant.route
        ? await coldWorkerd('cold-workerd-route.mjs', ROUTE_PARTS)
        : await coldWorkerd('cold-workerd.mjs');
      results.push({ ...variant, ...sizes(file), workerd, chromium: await coldChromium(variant.route) });
    }
  } finally {
    if (BUILDS.some((variant) => variant.features && !variant.route)) build();
  }
  return results;
}

/** The weight table: crates and modules of a build (`full`, `route`), and the largest functions. */
function weights(variant = 'full', file = shipped) {
  const bytes = readFileSync(rustcOutput(variant));
  const functions = functionSizes(bytes);
  const total = functions.reduce((sum, f) => sum + f.size, 0);
  const groups = grouped(functions, origin).slice(0, 14);
  const largest = [...functions].sort((a, b) => b.size - a.size).slice(0, 8);
  const shippedSections = sections(readFileSync(file)).filter((s) => s.size > 1000);
  return { total, groups, largest, shippedSections };
}

// ---- cold start in workerd ----
/** Start-ups of workerd with COLD_RUNS workers (isolates) of each kind, per kind. */
const WORKERD_STARTS = 9;
/** Requests timed after each isolate's first one: the warm request is the fastest of these. */
const WARM_REQUESTS = 2;

/** One request's round trip from this process, in ms (the body read to its end). */
async function roundTrip(url) {
  const started = process.hrtime.bigint();
  const text = await (await fetch(url)).text();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, text };
}

/**
 * workerd with COLD_RUNS copies of `worker`, one isolate each, against the same with
 * cold-workerd-baseline.mjs (no package) and with each of `parts` (workers with a piece of
 * the package only), started in turn WORKERD_STARTS times each:
 *   - `share`: the compile and load of the package per isolate, the difference of the
 *     median start-ups (process start to first answer) over the isolates (`parts` too);
 *   - `firstRequest`: what the first request costs beyond a warm one, timed from outside
 *     on every copy but the one the start-up polled (its first round trip minus the
 *     fastest of the next WARM_REQUESTS), the package's median less the baseline's: the
 *     instantiation, the first router and the first route, to a fraction of a ms;
 *   - `inIsolate`: the same first request by the worker's own clock (whole ms in workerd).
 */
async function coldWorkerd(worker = 'cold-workerd.mjs', parts = []) {
  const out = join(root, 'target', 'bench', 'wasm-edge', 'workerd', worker.replace(/\.mjs$/, ''));
  const kinds = [['baseline', 'cold-workerd-baseline.mjs'], ['wasm', worker], ...parts.map(({ worker: part }) => [part, part])];
  const configs = {};
  for (const [name, entry] of kinds) {
    // COLD_RUNS sockets on port 0 each: workerd binds them and reports the ports (startWorkerd).
    configs[name] = { dir: join(out, name.replace(/\.mjs$/, '')) };
    await bundleForWorkerd(join(here, entry), configs[name].dir, COLD_RUNS);
  }
  const starts = Object.fromEntries(kinds.map(([name]) => [name, []]));
  const extra = Object.fromEntries(kinds.map(([name]) => [name, []]));
  const inIsolate = [];
  for (let run = 0; run < WORKERD_STARTS; run++) {
    for (const [name] of kinds) {
      const { dir } = configs[name];
      const started = process.hrtime.bigint();
      const { child, urls, response } = await startWorkerd(dir, { sockets: COLD_RUNS, pollMs: 2 });
      starts[name].push(Number(process.hrtime.bigint() - started) / 1e6);
      try {
        const answers = [response];
        for (const url of urls.slice(1)) {
          const first = await roundTrip(url);
          answers.push(first.text);
          let warm = Infinity;
          for (let i = 0; i < WARM_REQUESTS; i++) warm = Math.min(warm, (await roundTrip(url)).ms);
          extra[name].push(first.ms - warm);
        }
        if (name === 'baseline') continue;
        for (const text of answers) {
          const answer = JSON.parse(text);
          // A shard, or 0 from a part's worker; -1 when a part found its piece missing.
          if (!Number.isInteger(answer.shard) || answer.shard < 0) throw new Error(`the workerd worker ${name} answered ${text}`);
          if (name === 'wasm' && run === 0) inIsolate.push(answer.ms);
        }
      } finally {
        await stop(child);
      }
    }
  }
  const share = (name) => (median(starts[name]) - median(starts.baseline)) / COLD_RUNS;
  const firstRequest = (name) => median(extra[name]) - median(extra.baseline);
  return {
    inIsolate,
    starts,
    share: share('wasm'),
    firstRequest: firstRequest('wasm'),
    parts: parts.map((part) => ({ ...part, share: share(part.worker), firstRequest: firstRequest(part.worker) })),
  };
}

// ---- cold start in Chromium ----
async function coldChromium(route = false) {
  const server = await startServer();
  let browser;
  try {
    browser = await launchChromium();
    const page = await openPage(browser, 60_000);
    await page.goto(`http://127.0.0.1:${server.address().port}/bench/edge/cold.html${route ? '?build=route' : ''}`, { waitUntil: 'load' });
    const runs = { inWorker: [], total: [] };
    for (let run = 0; run < COLD_RUNS; run++) {
      const answer = await page.evaluate(() => window.coldStart());
      if (typeof answer.shard !== 'number') throw new Error(`the worker answered ${JSON.stringify(answer)}`);
      runs.inWorker.push(answer.ms);
      runs.total.push(answer.total);
    }
    return { ...runs, version: browser.version() };
  } finally {
    await browser?.close().catch(() => {});
    await new Promise((done) => server.close(done));
  }
}

// ---- batch routing: WASM (nodejs build) against the addon ----
function batch() {
  if (BATCH_RUNS === 0) return undefined;
  const addonPath = join(root, 'bindings-node', 'index.js');
  if (!existsSync(join(root, 'bindings-node', 'shardroute.node'))) return undefined;
  const addon = createRequire(import.meta.url)(addonPath);
  const wasm = wasmRequire('shardroute-wasm');
  const data = makeKeys(BATCH_KEYS);
  const timers = { addon: makeTimer(addon, data), wasm: makeTimer(wasm, data) };
  const rows = [];
  for (const table of ['jump-10', 'jump-1000']) {
    for (const call of ['`routeMany(string[])`', '`routePacked` (one buffer + offsets)', '`routeU64s(BigUint64Array)`']) {
      const times = { addon: [], wasm: [] };
      for (const name of ['addon', 'wasm']) timers[name].time(table, call); // warm-up
      for (let run = 0; run < BATCH_RUNS; run++) {
        for (const name of run % 2 ? ['wasm', 'addon'] : ['addon', 'wasm']) times[name].push(timers[name].time(table, call));
      }
      rows.push({ table, call, addon: median(times.addon), wasm: median(times.wasm) });
    }
  }
  return rows;
}

// ---- the fragment ----
/** The weight table of a build as lines: crates and modules, then the largest functions. */
function weightLines(name, weight) {
  const lines = [`What weighs most, by the code of each function in rustc's output for the ${name} build (${bytesText(weight.total)} bytes of code before wasm-opt and wasm-bindgen, whose \`name\` section says whose each function is; functions the compiler inlined count where they were inlined). The shipped file: ${weight.shippedSections.map((s) => `${s.name} ${bytesText(s.size)}`).join(', ')} bytes.`, ''];
  lines.push('| crate or module | bytes of code | share |', '|---|---:|---:|');
  for (const [group, size] of weight.groups) lines.push(`| \`${group}\` | ${bytesText(size)} | ${(100 * size / weight.total).toFixed(1)}% |`);
  lines.push('', '| largest functions | bytes |', '|---|---:|');
  for (const f of weight.largest) lines.push(`| \`${identifiers(f.name).slice(0, 9).join('::')}\` | ${bytesText(f.size)} |`);
  lines.push('');
  return lines;
}

async function main() {
  const builds = await measureBuilds();
  const full = builds.find((b) => b.features === undefined);
  const route = builds.find((b) => b.route);
  const slim = builds.filter((b) => b.features !== undefined && !b.route);
  const batchRows = batch();

  const lines = ['## WASM at the edge: size, cold start, batches (bench/edge/bench.mjs)', ''];
  lines.push(`- machine: ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}; load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  lines.push(`- date: ${new Date().toISOString()}; Node ${process.version}; workerd ${JSON.parse(readFileSync(wasmRequire.resolve('workerd/package.json'), 'utf8')).version} (npm); Chromium ${builds[0].chromium.version} (/usr/bin/chromium, headless)`);
  lines.push(`- command: \`${ONLY ? `EDGE_BUILDS='${[...ONLY].join(' ')}' ` : ''}node bench/edge/bench.mjs\`${ONLY ? '' : ' (in `make bench`)'}; sizes are of \`pkg/web/shardroute_wasm_bg.wasm\` as build.sh makes it (\`SHARDROUTE_WASM_FEATURES\` for the slim builds) and of the route build's \`pkg-route/web/shardroute_route_bg.wasm\`, gzip: zlib at level 9`, '');

  lines.push('### Size of the .wasm', '', '| build | raw bytes | gzip -9 bytes |', '|---|---:|---:|');
  if (full) lines.push(`| full: every strategy and the topology operations | ${bytesText(full.raw)} | ${bytesText(full.gzip)} |`);
  if (route) lines.push(`| ${route.what} | ${bytesText(route.raw)} | ${bytesText(route.gzip)} |`);
  for (const s of slim) lines.push(`| slim: ${s.what} | ${bytesText(s.raw)} | ${bytesText(s.gzip)} |`);
  lines.push('');
  if (full) lines.push(...weightLines('full', weights()));
  if (route) lines.push(...weightLines('route', weights('route', shippedRoute)));

  lines.push(`### Cold start, median over ${COLD_RUNS} fresh isolates (ms)`, '');
  lines.push(`In workerd, ${COLD_RUNS} copies of a worker (bench/edge/cold-workerd.mjs; cold-workerd-route.mjs for the route build), each its own isolate, in one \`workerd serve\`, started ${WORKERD_STARTS} times, and as many copies of a worker without the package (cold-workerd-baseline.mjs) in turn. The module is compiled when workerd loads the worker, before any request: its compile and load per isolate is the difference of the two processes' median start-ups (start to first answer), divided by ${COLD_RUNS}. Each copy's first request then instantiates the module, builds a router and routes one key; later ones only route. That first request is timed from outside (its round trip less the fastest of the next ${WARM_REQUESTS}, median over the copies, less the same for the worker without the package) and by the worker's own clock (whole ms in workerd, so a median of 0 or 1 says little). In Chromium, ${COLD_RUNS} dedicated workers, each a fresh isolate (bench/edge/cold.html): \`await init(bytes)\` (compile + instantiate) + \`new Router\` + first \`route\` timed inside, and \`new Worker\` to its answer (the worker's own start-up, the glue fetched and compiled, and the above).`, '');
  lines.push(`| build | workerd: compile and load, per isolate | workerd: first request beyond a warm one, from outside | workerd: first request, worker's clock | workerd: start-up with ${COLD_RUNS} workers without the package | Chromium: compile + instantiate + first route, in the worker | Chromium: \`new Worker\` to answer |`);
  lines.push('|---|---:|---:|---:|---:|---:|---:|');
  const spread = (values) => `${ms(median(values))} (${ms(Math.min(...values))}-${ms(Math.max(...values))})`;
  for (const b of builds) {
    lines.push(`| ${nameOf(b)} | ${ms(b.workerd.share)} | ${ms(b.workerd.firstRequest)} | ${spread(b.workerd.inIsolate)} | ${spread(b.workerd.starts.baseline)} | ${spread(b.chromium.inWorker)} | ${spread(b.chromium.total)} |`);
  }
  lines.push('');
  if (route) {
    lines.push(`What the route build's cold start in workerd is made of: workers with a part of it each, started in turn with it and the baseline in the same run and measured the same way (ms).`, '');
    lines.push('| worker | compile and load, per isolate | first request beyond a warm one | total |', '|---|---:|---:|---:|');
    const row = (name, w) => `| ${name} | ${ms(w.share)} | ${ms(w.firstRequest)} | ${ms(w.share + w.firstRequest)} |`;
    for (const part of route.workerd.parts) lines.push(row(`${part.what} (${part.worker})`, part));
    lines.push(row('the route build (cold-workerd-route.mjs)', route.workerd), '');
    const floor = route.workerd.parts.find((part) => part.floor);
    if (floor) {
      const size = sizes(FLOOR_WASM);
      lines.push(`The floor's .wasm: ${bytesText(size.raw)} bytes raw, ${bytesText(size.gzip)} gzip (the route build's: ${bytesText(route.raw)} and ${bytesText(route.gzip)}).`, '');
    }
  }

  if (batchRows) {
    lines.push(`### Batch routing, WASM (nodejs build) against the Node addon (ns/key, median of ${BATCH_RUNS} runs over ${bytesText(BATCH_KEYS)} keys)`, '');
    lines.push('| table | call | addon | WASM | WASM / addon |', '|---|---|---:|---:|---:|');
    for (const r of batchRows) lines.push(`| ${r.table} | ${r.call} | ${r.addon.toFixed(1)} | ${r.wasm.toFixed(1)} | ${(r.wasm / r.addon).toFixed(2)}x |`);
    lines.push('');
  }

  const gate = batchRows?.find((r) => r.table === 'jump-1000' && r.call === '`routeMany(string[])`');
  lines.push('### Targets (edge and browsers)', '', '| target | measured | verdict |', '|---|---|---|');
  if (full) {
    lines.push(`| full .wasm <= 250 KB raw | ${bytesText(full.raw)} bytes | ${verdict(full.raw <= TARGETS.raw)} |`);
    lines.push(`| full .wasm <= 90 KB gzip | ${bytesText(full.gzip)} bytes | ${verdict(full.gzip <= TARGETS.gzip)} |`);
  }
  if (route) {
    lines.push(`| route .wasm <= 150 KB raw | ${bytesText(route.raw)} bytes | ${verdict(route.raw <= ROUTE_TARGETS.raw)} |`);
    lines.push(`| route .wasm <= 60 KB gzip | ${bytesText(route.gzip)} bytes | ${verdict(route.gzip <= ROUTE_TARGETS.gzip)} |`);
  }
  for (const s of slim) {
    lines.push(`| slim (${s.features}) <= 250 KB raw, 90 KB gzip | ${bytesText(s.raw)} / ${bytesText(s.gzip)} bytes | ${verdict(s.raw <= TARGETS.raw && s.gzip <= TARGETS.gzip)} |`);
  }
  for (const b of builds) {
    const share = b.workerd.share + b.workerd.firstRequest;
    const inWorker = median(b.chromium.inWorker);
    const coldMs = b.route ? ROUTE_TARGETS.coldMs : TARGETS.coldMs;
    lines.push(`| cold start in workerd <= ${coldMs} ms, ${nameOf(b)} (compile and load per isolate + first request beyond a warm one) | ${ms(share)} ms (${ms(b.workerd.share)} + ${ms(b.workerd.firstRequest)}) | ${verdict(share <= coldMs)} |`);
    lines.push(`| cold start in Chromium <= ${TARGETS.coldMs} ms, ${nameOf(b)} (compile + instantiate + first route, median) | ${ms(inWorker)} ms | ${verdict(inWorker <= TARGETS.coldMs)} |`);
  }
  if (gate) lines.push(`| batch <= 1.5x the addon per key (\`routeMany(string[])\`, jump, 1000 nodes) | ${(gate.wasm / gate.addon).toFixed(2)}x | ${verdict(gate.wasm / gate.addon <= TARGETS.batchRatio)} |`);
  else if (BATCH_RUNS > 0) lines.push('| batch <= 1.5x the addon per key | not measured: no addon (bindings-node/build.sh) | **not met** |');

  const text = `${lines.join('\n')}\n`;
  mkdirSync(join(root, 'target', 'bench'), { recursive: true });
  writeFileSync(join(root, 'target', 'bench', ONLY ? 'wasm-edge-partial.md' : 'wasm-edge.md'), text);
  process.stdout.write(text);
}

main().catch((err) => {
  console.error(`bench/edge: ${(err && err.stack) || err}`);
  process.exitCode = 1;
});
