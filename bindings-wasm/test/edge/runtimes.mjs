// Starting the edge runtimes from npm for test/edge.test.mjs and bench/edge/bench.mjs:
// workerd (a worker bundled as wrangler bundles it) and Deno, as processes serving HTTP on
// 127.0.0.1, each stopped by its own handle. Every wait is bounded.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';

const require = createRequire(import.meta.url);
const packageDir = new URL('../..', import.meta.url).pathname;
const START_TIMEOUT_MS = 30_000;

/** The workerd binary of the npm package `workerd` (its platform package's). */
export function workerdBinary() {
  return require('workerd').default;
}

/** The deno binary of the npm package `deno`, found as the package's own launcher finds it. */
export function denoBinary() {
  return require(join(packageDir, 'node_modules', 'deno', 'install_api.cjs')).runInstall();
}

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `command` and resolves with `{ child, response }` (the first answer of `url`,
 * read as text) once `url` answers, polling every `pollMs`; rejects with the process's
 * output after 30 s or when it exits first.
 */
export async function startServing(command, args, url, { pollMs = 100, ...options } = {}) {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  child.stderr.on('data', (chunk) => { output += chunk; });
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      return { child, response: await response.text() };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`${basename(command)} did not serve ${url}:\n${output}`);
}

/** Stops a process started here, and waits until it is gone. */
export async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(timer);
}

/**
 * Bundles the module worker `entry` into `out` as wrangler bundles one (esbuild, the
 * conditions workerd, worker and browser; each `.wasm` import left to workerd as a
 * compiled-module module of the worker, beside the bundle), and writes `out`/config.capnp:
 * one service per port of `ports`, each its own instance of the worker (its own isolate),
 * served on 127.0.0.1 at that port. Returns the names of the .wasm modules. With
 * `network`, the workers' `fetch` may reach local and private addresses (workerd lets a
 * worker reach public ones only, by default): for a worker that follows a server on
 * 127.0.0.1.
 */
export async function bundleForWorkerd(entry, out, ports, { network = false } = {}) {
  const esbuild = require('esbuild');
  mkdirSync(out, { recursive: true });
  const wasmModules = new Map();
  await esbuild.build({
    entryPoints: [entry],
    outfile: join(out, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['browser', 'module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    logLevel: 'error',
    plugins: [{
      name: 'wasm-modules',
      setup(build) {
        build.onResolve({ filter: /\.wasm$/ }, ({ path, resolveDir }) => {
          const name = basename(path);
          wasmModules.set(name, join(resolveDir, path));
          return { path: `./${name}`, external: true };
        });
      },
    }],
  });
  for (const [name, path] of wasmModules) copyFileSync(path, join(out, name));
  const modules = [
    '(name = "worker.js", esModule = embed "worker.js")',
    ...[...wasmModules.keys()].map((name) => `(name = "${name}", wasm = embed "${name}")`),
  ].join(', ');
  const outbound = network ? ', globalOutbound = "net"' : '';
  const services = ports.map((_, i) => `(name = "w${i}", worker = (modules = [${modules}], compatibilityDate = "2026-11-01"${outbound}))`);
  if (network) services.push('(name = "net", network = (allow = ["public", "private", "local"]))');
  const sockets = ports.map((port, i) => `(name = "s${i}", address = "127.0.0.1:${port}", http = (), service = "w${i}")`);
  writeFileSync(join(out, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [${services.join(', ')}],
  sockets = [${sockets.join(', ')}],
);
`);
  return [...wasmModules.keys()];
}

/**
 * The package in `packageDir` as npm publishes it (`npm pack` into `scratch`), installed
 * into a fresh project of its own at `app` named `name`: what the edge tests run against.
 */
export function installPacked(packageDir, scratch, app, name) {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', scratch], {
    cwd: packageDir, encoding: 'utf8', timeout: 60_000,
  }).trim().split('\n').pop();
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name, private: true, type: 'module' })}\n`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', join(scratch, tarball)], {
    cwd: app, stdio: 'inherit', timeout: 120_000,
  });
}
