// The conformance vectors in headless Chromium, against the web build: serves the
// repository root read-only on 127.0.0.1 (an ephemeral port), opens test/browser.html in
// Debian's Chromium through playwright-core, reads the page's result, prints the summary
// line (runner `wasm-chromium`) and writes its count file. Run with `node test/browser.mjs`;
// exits non-zero on any failure. Every wait is bounded.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, relative, resolve, sep } from 'node:path';

import { chromium } from 'playwright-core';

import { filter, report, repoRoot, vectorFileNames } from './support.mjs';

const RUNNER = 'wasm-chromium';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LAUNCH_TIMEOUT_MS = 60_000;
const PAGE_TIMEOUT_MS = 120_000;
const OVERALL_TIMEOUT_MS = 300_000;

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** A static, read-only server of the repository root, plus `/__vectors` (the vector URLs). */
function startServer() {
  const root = resolve(repoRoot);
  const server = createServer(async (request, response) => {
    const send = (status, body, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'read-only\n');
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
    } catch {
      return send(400, 'bad path\n');
    }
    if (pathname === '/__vectors') {
      const urls = vectorFileNames().map((name) => `/conformance/vectors/${name}`);
      return send(200, JSON.stringify(urls), TYPES['.json']);
    }
    const path = resolve(root, `.${pathname}`);
    const inside = relative(root, path);
    if (inside.startsWith('..') || inside.split(sep).includes('..') || pathname.includes('\0')) {
      return send(403, 'outside the repository\n');
    }
    try {
      const info = await stat(path);
      if (!info.isFile()) return send(404, 'not a file\n');
      response.writeHead(200, {
        'content-type': TYPES[extname(path)] ?? 'application/octet-stream',
        'content-length': info.size,
        'cache-control': 'no-store',
      });
      if (request.method === 'HEAD') return response.end();
      createReadStream(path).pipe(response);
    } catch {
      send(404, 'not found\n');
    }
  });
  return new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen(server));
  });
}

async function main() {
  const server = await startServer();
  const { port } = server.address();
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run'],
      timeout: LAUNCH_TIMEOUT_MS,
    });
    const page = await browser.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    page.on('pageerror', (err) => console.error(`[page error] ${err.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') console.error(`[page ${message.type()}] ${message.text()}`);
    });
    const url = `http://127.0.0.1:${port}/bindings-wasm/test/browser.html?filter=${encodeURIComponent(filter)}`;
    await page.goto(url, { timeout: PAGE_TIMEOUT_MS, waitUntil: 'load' });
    await page.waitForFunction(() => window.__shardroute && window.__shardroute.done === true, null, {
      timeout: PAGE_TIMEOUT_MS,
    });
    const outcome = await page.evaluate(() => window.__shardroute);
    if (outcome.error !== undefined) {
      console.error(`${RUNNER}: the page failed: ${outcome.error}`);
      return false;
    }
    const ok = report(RUNNER, outcome.result);
    if (outcome.identity !== 'ok') {
      console.error(`${RUNNER}: a thrown error is not the exported ShardrouteError: ${outcome.identity}`);
      return false;
    }
    return ok;
  } finally {
    await browser?.close().catch(() => {});
    await new Promise((done) => server.close(done));
  }
}

const watchdog = setTimeout(() => {
  console.error(`${RUNNER}: no result after ${OVERALL_TIMEOUT_MS / 1000} s`);
  process.exit(2);
}, OVERALL_TIMEOUT_MS);
watchdog.unref();

main().then(
  (ok) => {
    process.exitCode = ok ? 0 : 1;
  },
  (err) => {
    console.error(`${RUNNER}: ${(err && err.stack) || err}`);
    process.exitCode = 1;
  },
);
