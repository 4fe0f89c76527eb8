// A read-only static server of the repository root on 127.0.0.1, for the pages that load
// the web build: the Chromium tests and benchmarks (chromium.mjs re-exports it) and the
// playground (`make playground`, playground/serve.mjs). No dependency beyond Node.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
};

/**
 * Serves the repository root read-only on 127.0.0.1, on `port` (0, the default: an
 * ephemeral one; `server.address().port`). A path ending in `/` serves its `index.html`; a
 * directory's path without the `/` redirects to it.
 * `headers` go with every response; `routes` maps a path to a function giving the JSON
 * value served there (`/__vectors`, say).
 */
export function startServer({ headers = {}, routes = {}, port = 0 } = {}) {
  const root = resolve(repoRoot);
  const server = createServer(async (request, response) => {
    const head = (type) => ({ 'content-type': type, 'cache-control': 'no-store', ...headers });
    const send = (status, body, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, head(type));
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'read-only\n');
    let pathname, encoded;
    try {
      encoded = new URL(request.url, 'http://localhost').pathname;
      pathname = decodeURIComponent(encoded);
    } catch {
      return send(400, 'bad path\n');
    }
    if (Object.hasOwn(routes, pathname)) return send(200, JSON.stringify(routes[pathname]()), TYPES['.json']);
    const path = resolve(root, `.${pathname}${pathname.endsWith('/') ? 'index.html' : ''}`);
    const inside = relative(root, path);
    if (inside.startsWith('..') || inside.split(sep).includes('..') || pathname.includes('\0')) {
      return send(403, 'outside the repository\n');
    }
    try {
      const info = await stat(path);
      if (info.isDirectory() && !pathname.endsWith('/')) {
        // `/playground` → `/playground/`, so that the page's relative URLs resolve inside it.
        response.writeHead(301, { location: `${encoded}/`, ...headers });
        return response.end();
      }
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
    server.listen(port, '127.0.0.1', () => resolveListen(server));
  });
}
