// Headless Chromium for the pages that load the web build: a read-only static server of
// the repository root, and Debian's Chromium launched through playwright-core (this
// package's devDependency). Used by test/browser.mjs (the conformance vectors) and
// bench/browser/bench.mjs. Every wait is bounded.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LAUNCH_TIMEOUT_MS = 60_000;

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
};

/**
 * Serves the repository root read-only on 127.0.0.1, on an ephemeral port (`server.address().port`).
 * `headers` go with every response; `routes` maps a path to a function giving the JSON
 * value served there (`/__vectors`, say).
 */
export function startServer({ headers = {}, routes = {} } = {}) {
  const root = resolve(repoRoot);
  const server = createServer(async (request, response) => {
    const head = (type) => ({ 'content-type': type, 'cache-control': 'no-store', ...headers });
    const send = (status, body, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, head(type));
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'read-only\n');
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
    } catch {
      return send(400, 'bad path\n');
    }
    if (Object.hasOwn(routes, pathname)) return send(200, JSON.stringify(routes[pathname]()), TYPES['.json']);
    const path = resolve(root, `.${pathname}`);
    const inside = relative(root, path);
    if (inside.startsWith('..') || inside.split(sep).includes('..') || pathname.includes('\0')) {
      return send(403, 'outside the repository\n');
    }
    try {
      const info = await stat(path);
      if (!info.isFile()) return send(404, 'not a file\n');
      response.writeHead(200, { ...head(TYPES[extname(path)] ?? 'application/octet-stream'), 'content-length': info.size });
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

/** Debian's Chromium (CHROMIUM_PATH to override), headless. */
export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
    timeout: LAUNCH_TIMEOUT_MS,
  });
}

/** A new page of `browser` whose uncaught errors, console errors and warnings go to stderr. */
export async function openPage(browser, timeoutMs) {
  const page = await browser.newPage();
  page.setDefaultTimeout(timeoutMs);
  page.on('pageerror', (err) => console.error(`[page error] ${err.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') console.error(`[page ${message.type()}] ${message.text()}`);
  });
  return page;
}
