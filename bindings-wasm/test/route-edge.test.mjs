// The route build, `shardroute-wasm/route`, in every runtime the full package is tested in,
// from an `npm pack` tarball installed into a scratch project (target/wasm-route/app) the
// way a user installs it: its share of the conformance vectors (route/subset.mjs) under
// Node (`require` by the package's name), in workerd and Deno from npm (route/worker.mjs,
// each runtime's condition of the `./route` export), and in Debian's Chromium
// (route/page.html, the `browser` entry and `init()`). Each runtime reports its count;
// every one must pass the same cases, none failing. Every wait is bounded and every
// process started here is stopped by its own handle.
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { runVectors, summaryLine } from '../../conformance/runner.mjs';
import { repoRoot } from '../../conformance/js/vectors.mjs';
import { launchChromium, openPage, startServer } from './chromium.mjs';
import { bundleForWorkerd, denoBinary, denoListening, installPacked, startServing, startWorkerd, stop } from './edge/runtimes.mjs';
import { routeSubset, skipSummary } from './route/subset.mjs';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const routeDir = fileURLToPath(new URL('./route/', import.meta.url));
const scratch = join(repoRoot, 'target', 'wasm-route');
const app = join(scratch, 'app');
const PAGE_TIMEOUT_MS = 120_000;

const { files, skipped } = routeSubset();
const body = JSON.stringify(files);
/** Each runtime's `{ passed, failed }`, by runner name. */
const counts = new Map();

/** What route.d.ts declares, `init` and `initSync` among them (every entry has both), and its constants. */
const declared = [...readFileSync(join(packageDir, 'route.d.ts'), 'utf8').matchAll(/^export declare (?:class|function|const) (\w+)/gm)]
  .map((match) => match[1]).sort();

/**
 * Records and prints one runtime's result (its summary line), and asserts it passed and
 * that the entry the runtime's condition picked exports what route.d.ts declares.
 */
function check(runner, { passed, failed, failures, exports }) {
  for (const { name, reason } of failures) console.error(`FAIL ${name}: ${reason}`);
  assert.deepEqual(exports.filter((name) => name !== 'default'), declared, `${runner}: the entry's exports`);
  console.log(summaryLine(runner, { passed, failed, skipped: skipped.length }));
  counts.set(runner, { passed, failed });
  assert.equal(failed, 0, `${runner}: ${failed} case(s) failed`);
  assert.ok(passed > 1000, `${runner}: only ${passed} cases ran`);
}

/** The vector files POSTed to `url`: the runner's counts there. */
async function postFiles(url) {
  const response = await fetch(url, { method: 'POST', body, signal: AbortSignal.timeout(120_000) });
  assert.equal(response.status, 200, await response.clone().text());
  return response.json();
}

before(() => {
  installPacked(packageDir, scratch, app, 'route-app');
  copyFileSync(join(repoRoot, 'conformance', 'runner.mjs'), join(app, 'runner.mjs'));
  for (const name of readdirSync(routeDir).filter((file) => file !== 'subset.mjs')) {
    copyFileSync(join(routeDir, name), join(app, name));
  }
  console.log(`${files.reduce((sum, file) => sum + file.cases.length, 0)} cases of ${files.length} vector files; ${skipped.length} skipped:`);
  console.log(skipSummary(skipped).join('\n'));
});

test('Node: require(\'shardroute-wasm/route\') from the installed tarball', () => {
  const api = createRequire(join(app, 'package.json'))('shardroute-wasm/route');
  check('wasm-route-node', { ...runVectors(api, files), exports: Object.keys(api).sort() });
});

test('workerd (npm workerd): a module worker importing shardroute-wasm/route, bundled as wrangler bundles', async () => {
  const out = join(scratch, 'workerd');
  const wasmModules = await bundleForWorkerd(join(app, 'worker.mjs'), out);
  assert.deepEqual(wasmModules, ['shardroute_route_bg.wasm'], 'the route build\'s .wasm only');
  const { child, urls } = await startWorkerd(out);
  try {
    check('wasm-route-workerd', await postFiles(urls[0]));
  } finally {
    await stop(child);
  }
});

test('Deno (npm deno): a Deno.serve server importing shardroute-wasm/route', async () => {
  // PORT=0: Deno.serve binds a port itself and prints it ("Listening on ...").
  const env = { ...process.env, PORT: '0', DENO_DIR: join(scratch, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
  const { child, url } = await startServing(denoBinary(),
    ['run', '--no-prompt', '--allow-net=127.0.0.1', '--allow-env=PORT', 'deno-server.mjs'], denoListening, { cwd: app, env });
  try {
    check('wasm-route-deno', await postFiles(url));
  } finally {
    await stop(child);
  }
});

test('Chromium (Debian chromium, playwright-core): the browser entry in a page, after init()', async () => {
  const server = await startServer({ routes: { '/__route_vectors': () => files } });
  let browser;
  try {
    browser = await launchChromium();
    const page = await openPage(browser, PAGE_TIMEOUT_MS);
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`http://127.0.0.1:${server.address().port}/${relative(repoRoot, app)}/page.html`,
      { timeout: PAGE_TIMEOUT_MS, waitUntil: 'load' });
    await page.waitForFunction(() => typeof window.runRoute === 'function', null, { timeout: PAGE_TIMEOUT_MS });
    const result = await page.evaluate(() => window.runRoute());
    assert.deepEqual(errors, []);
    check('wasm-route-chromium', result);
  } finally {
    await browser?.close().catch(() => {});
    await new Promise((done) => server.close(done));
  }
});

test('every runtime passed the same number of cases', () => {
  console.log(`route build: ${[...counts].map(([runner, count]) => `${runner} ${count.passed}`).join(', ')}`);
  assert.deepEqual([...counts.keys()], ['wasm-route-node', 'wasm-route-workerd', 'wasm-route-deno', 'wasm-route-chromium']);
  assert.equal(new Set([...counts.values()].map((count) => count.passed)).size, 1);
});
