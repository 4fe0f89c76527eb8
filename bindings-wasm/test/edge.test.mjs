// The package where edge workers, browsers and bundlers run it, each in the real runtime,
// from an `npm pack` tarball installed into a scratch project (target/wasm-edge/app) the
// way a user installs it. Every example of examples/edge/ (the code docs/edge.md
// shows, linked from the README) routes the same slice of the conformance vectors
// (edge/slice.mjs), and each answer must be the vectors' one: Node (ESM import and CJS
// require; the web entry without FinalizationRegistry; no top-level await in any entry),
// Deno and workerd from npm, and in Debian's Chromium a module service worker, a dedicated
// worker, and pages bundled by esbuild and by webpack. Every wait is bounded and every
// process started here is stopped by its own handle.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { repoRoot } from '../../conformance/js/vectors.mjs';
import { launchChromium, openPage, startServer } from './chromium.mjs';
import { bundleForWorkerd, denoBinary, denoListening, installPacked, startServing, startWorkerd, stop } from './edge/runtimes.mjs';
import { sliceSize, vectorSlice } from './edge/slice.mjs';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const examplesDir = join(packageDir, 'examples', 'edge');
const pagesDir = fileURLToPath(new URL('./edge/pages/', import.meta.url));
const scratch = join(repoRoot, 'target', 'wasm-edge');
const app = join(scratch, 'app');
const require = createRequire(import.meta.url);
const PAGE_TIMEOUT_MS = 60_000;

const batches = vectorSlice();
const requests = batches.map(({ topology, keys }) => ({ topology, keys }));

/** The package as the scratch project installed it. */
const installed = join(app, 'node_modules', 'shardroute-wasm');

/** Every file the installed package's `exports` name, once each. */
function exportTargets() {
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  const targets = (value) => (typeof value === 'string' ? [value] : Object.values(value).flatMap(targets));
  return [...new Set(targets(manifest.exports))];
}

/** Asserts that `answers` (one per batch, `{ shards, nodes }`) are the vectors' answers. */
function assertAnswers(answers) {
  assert.equal(answers.length, batches.length);
  batches.forEach((batch, i) => assert.deepEqual(answers[i], batch.expect, batch.name));
}

/** Each batch POSTed to `url` as JSON, in order: the answers. */
async function postBatches(url) {
  const answers = [];
  for (const request of requests) {
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(request), signal: AbortSignal.timeout(10_000) });
    assert.equal(response.status, 200, await response.clone().text());
    answers.push(await response.json());
  }
  return answers;
}

/** Every batch, one JSON line each, on the stdin of `node script` run in the scratch project: the answers. */
function runNode(script) {
  const output = execFileSync(process.execPath, [script], {
    cwd: app, input: requests.map((request) => `${JSON.stringify(request)}\n`).join(''), encoding: 'utf8', timeout: 30_000,
  });
  return output.trimEnd().split('\n').map((line) => JSON.parse(line));
}

before(() => {
  // The package as npm publishes it, installed into a project of its own.
  installPacked(packageDir, scratch, app, 'edge-app');
  for (const name of readdirSync(examplesDir)) copyFileSync(join(examplesDir, name), join(app, name));
  const { keys, strategies } = sliceSize(batches);
  console.log(`# the slice: ${keys} keys in ${batches.length} batches over ${strategies} strategies`);
});

test('the snippets of docs/edge.md (linked from the README) are the examples these tests run', () => {
  const section = readFileSync(join(repoRoot, 'docs', 'edge.md'), 'utf8');
  const blocks = [...section.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
  const examples = readdirSync(examplesDir).filter((name) => name !== 'node-route.cjs').sort();
  const shown = blocks.map((block) => examples.find((name) => readFileSync(join(examplesDir, name), 'utf8') === block));
  assert.ok(!shown.includes(undefined), `every snippet is a file of ${relative(repoRoot, examplesDir)}, as it is`);
  assert.deepEqual([...shown].sort(), examples, 'one snippet per example');
});

describe('Node, from the packed tarball', () => {
  test('ES module import (examples/edge/node-route.mjs)', () => assertAnswers(runNode('node-route.mjs')));
  test('CommonJS require (examples/edge/node-route.cjs)', () => assertAnswers(runNode('node-route.cjs')));
  test('the web entry works where FinalizationRegistry is missing (initSync from bytes)', () => {
    const script = `
      delete globalThis.FinalizationRegistry;
      const { readFileSync } = await import('node:fs');
      const { initSync, Router } = await import(${JSON.stringify(pathToFileURL(join(installed, 'js', 'index.mjs')).href)});
      initSync(readFileSync(${JSON.stringify(join(installed, 'pkg', 'web', 'shardroute_wasm_bg.wasm'))}));
      const answers = [];
      for (const { topology, keys } of JSON.parse(readFileSync(0, 'utf8'))) {
        const router = new Router(topology);
        answers.push({ shards: [...router.routeMany(keys)], nodes: router.nodeMany(keys) });
        router.free();
      }
      console.log(typeof FinalizationRegistry, JSON.stringify(answers));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '--eval', script], {
      cwd: app, input: JSON.stringify(requests), encoding: 'utf8', timeout: 30_000,
    });
    const [missing, answers] = [output.slice(0, output.indexOf(' ')), output.slice(output.indexOf(' ') + 1)];
    assert.equal(missing, 'undefined');
    assertAnswers(JSON.parse(answers));
  });

  test('no entry has a top-level await (service workers refuse one), the entries\' imports included', async () => {
    const entries = exportTargets().filter((target) => /\.m?js$/.test(target));
    assert.ok(entries.length >= 5, entries.join(', '));
    const options = {
      bundle: true, format: 'esm', write: false, logLevel: 'silent', platform: 'neutral', mainFields: ['module', 'main'],
      external: ['*.wasm', 'node:*', 'fs'], supported: { 'top-level-await': false },
    };
    const esbuild = require('esbuild');
    await assert.rejects(esbuild.build({ ...options, stdin: { contents: 'await 0; export {};' } }), /Top-level await/);
    for (const entry of entries) await esbuild.build({ ...options, entryPoints: [join(installed, entry)] });
  });

  test('each .wasm ships once (the package\'s and the route build\'s), and every file an export names is in the tarball', () => {
    const files = execFileSync('find', ['.', '-type', 'f'], { cwd: installed, encoding: 'utf8' }).split('\n');
    assert.deepEqual(files.filter((file) => file.endsWith('.wasm')).sort(),
      ['./pkg-route/web/shardroute_route_bg.wasm', './pkg/web/shardroute_wasm_bg.wasm']);
    for (const target of exportTargets()) {
      assert.doesNotThrow(() => readFileSync(join(installed, target)), `${target} is in the tarball`);
    }
  });
});

describe('Deno (npm deno)', () => {
  let deno;
  after(() => stop(deno));
  test('a Deno.serve server importing the package (examples/edge/deno-server.mjs)', async () => {
    // PORT=0: Deno.serve binds a port itself and prints it ("Listening on ...").
    const env = { ...process.env, PORT: '0', DENO_DIR: join(scratch, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
    let url;
    ({ child: deno, url } = await startServing(denoBinary(),
      ['run', '--no-prompt', '--allow-net=127.0.0.1', '--allow-env=PORT', 'deno-server.mjs'], denoListening, { cwd: app, env }));
    assertAnswers(await postBatches(url));
  });
});

describe('workerd (npm workerd)', () => {
  let workerd;
  after(() => stop(workerd));
  test('a module worker importing the package (examples/edge/workerd-worker.mjs), bundled as wrangler bundles', async () => {
    const out = join(scratch, 'workerd');
    const wasmModules = await bundleForWorkerd(join(app, 'workerd-worker.mjs'), out);
    assert.deepEqual(wasmModules, ['shardroute_wasm_bg.wasm'], 'the workerd entry imports the .wasm');
    let urls;
    ({ child: workerd, urls } = await startWorkerd(out));
    assertAnswers(await postBatches(urls[0]));
  });
});

describe('Chromium (Debian chromium, playwright-core)', () => {
  let server;
  let browser;
  const site = join(scratch, 'site');
  before(async () => {
    mkdirSync(site, { recursive: true });
    server = await startServer();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close().catch(() => {});
    if (server) await new Promise((resolve) => server.close(resolve));
  });

  /** Opens `dir`/`page` (a directory of the scratch tree) and routes every batch there. */
  async function routeInPage(dir, page) {
    const tab = await openPage(browser, PAGE_TIMEOUT_MS);
    try {
      const errors = [];
      tab.on('pageerror', (err) => errors.push(err.message));
      const url = `http://127.0.0.1:${server.address().port}/${relative(repoRoot, dir)}/${page}`;
      await tab.goto(url, { timeout: PAGE_TIMEOUT_MS, waitUntil: 'load' });
      await tab.evaluate(() => window.ready);
      const answers = await tab.evaluate((batches) => window.routeBatches(batches), requests);
      assert.deepEqual(errors, []);
      return answers;
    } finally {
      await tab.close();
    }
  }

  test('a module service worker (examples/edge/service-worker.mjs) answers fetches', async () => {
    copyFileSync(join(pagesDir, 'service-worker.html'), join(app, 'service-worker.html'));
    assertAnswers(await routeInPage(app, 'service-worker.html'));
  });

  test('a dedicated module worker (examples/edge/web-worker.mjs) answers messages', async () => {
    copyFileSync(join(pagesDir, 'web-worker.html'), join(app, 'web-worker.html'));
    assertAnswers(await routeInPage(app, 'web-worker.html'));
  });

  test('a page bundled by esbuild (examples/edge/esbuild-app.mjs)', async () => {
    const out = join(site, 'esbuild');
    await require('esbuild').build({
      entryPoints: [join(app, 'esbuild-app.mjs')],
      outfile: join(out, 'app.js'),
      bundle: true,
      format: 'esm',
      platform: 'browser',
      loader: { '.wasm': 'file' },
      minify: true,
      logLevel: 'error',
    });
    copyFileSync(join(pagesDir, 'bundle.html'), join(out, 'index.html'));
    assertAnswers(await routeInPage(out, 'index.html'));
  });

  test('a page bundled by webpack (examples/edge/webpack-app.mjs), with no configuration but the entry', async () => {
    const out = join(site, 'webpack');
    const webpack = require('webpack');
    const stats = await new Promise((resolve, reject) => {
      webpack({
        mode: 'production',
        context: app,
        entry: './webpack-app.mjs',
        output: { path: out, filename: 'app.js' },
      }, (err, result) => (err ? reject(err) : resolve(result)));
    });
    assert.ok(!stats.hasErrors(), stats.toString('errors-only'));
    assert.ok(readdirSync(out).some((name) => name.endsWith('.wasm')), 'webpack emitted the .wasm');
    copyFileSync(join(pagesDir, 'bundle.html'), join(out, 'index.html'));
    assertAnswers(await routeInPage(out, 'index.html'));
  });
});
