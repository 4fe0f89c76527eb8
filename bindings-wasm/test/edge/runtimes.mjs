// Starting the edge runtimes from npm for test/edge.test.mjs and bench/edge/bench.mjs:
// workerd (a worker bundled as wrangler bundles it) and Deno, as processes serving HTTP on
// 127.0.0.1, each stopped by its own handle. Every wait is bounded. Each binds port 0 itself
// and says which port it got (workerd on its --control-fd, Deno in its "Listening on"
// line): no port is guessed beforehand (issue 41; ./ports.mjs for servers that cannot).
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
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

/** Deno.serve's own line once it listens (on the port it bound: PORT=0 in the env). */
export function denoListening(output) {
  return output.match(/Listening on (http:\/\/127\.0\.0\.1:\d+\/)/)?.[1] ?? null;
}

/**
 * Starts `command` and resolves with `{ child, url, response }` (the first answer of
 * `url`, read as text) once `url` answers, polling every `pollMs`. `url` is a string, or a
 * function of the child's output so far (stdout and stderr) that returns the URL once the
 * child has said where it listens (`denoListening`), else null. Rejects with the
 * process's output after 30 s or when it exits first.
 */
export function startServing(command, args, url, { pollMs = 100, ...options } = {}) {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  return answered(child, basename(command), typeof url === 'function' ? url : () => url, pollMs);
}

/** Waits as `startServing` says, for a `child` spawned with stdout and stderr piped. */
async function answered(child, name, where, pollMs) {
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  child.stderr.on('data', (chunk) => { output += chunk; });
  const deadline = Date.now() + START_TIMEOUT_MS;
  let at = null;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    at = where(output);
    try {
      if (at === null) throw new Error('not listening yet');
      const response = await fetch(at, { signal: AbortSignal.timeout(1000) });
      return { child, url: at, response: await response.text() };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not serve ${at ?? '(it said no URL)'}:\n${output}`);
}

/**
 * `workerd serve config.capnp` in `dir` (a config of `bundleForWorkerd`, whose sockets
 * listen on 127.0.0.1:0): workerd binds each socket's port itself and reports it on its
 * --control-fd (`{"event":"listen","socket":"s0","port":N}`). Resolves with
 * `{ child, urls, response }` (`urls` in the sockets' order, `response` the first answer
 * of the first) once the first answers; rejects as `startServing` does. `sockets`: how
 * many the config has.
 */
export async function startWorkerd(dir, { sockets = 1, pollMs = 100 } = {}) {
  const child = spawn(workerdBinary(), ['serve', 'config.capnp', '--control-fd', '3'],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  const ports = new Map();
  createInterface({ input: child.stdio[3] }).on('line', (line) => {
    try {
      const message = JSON.parse(line);
      if (message.event === 'listen') ports.set(message.socket, message.port);
    } catch {
      // Not a control message of ours.
    }
  });
  const urls = () => Array.from({ length: sockets }, (_, i) => ports.get(`s${i}`)).map((port) => `http://127.0.0.1:${port}/`);
  const { response } = await answered(child, 'workerd', () => (ports.size < sockets ? null : urls()[0]), pollMs);
  return { child, urls: urls(), response };
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
 * `sockets` services, each its own instance of the worker (its own isolate), served on
 * 127.0.0.1 port 0 (`startWorkerd` reads the ports workerd bound). Returns the names of
 * the .wasm modules. With `network`, the workers' `fetch` may reach local and private
 * addresses (workerd lets a worker reach public ones only, by default): for a worker
 * that follows a server on 127.0.0.1.
 */
export async function bundleForWorkerd(entry, out, sockets = 1, { network = false } = {}) {
  if (!Number.isInteger(sockets) || sockets < 1) throw new TypeError('sockets: a count of sockets');
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
  const services = Array.from({ length: sockets }, (_, i) => `(name = "w${i}", worker = (modules = [${modules}], compatibilityDate = "2026-11-01"${outbound}))`);
  if (network) services.push('(name = "net", network = (allow = ["public", "private", "local"]))');
  const listeners = Array.from({ length: sockets }, (_, i) => `(name = "s${i}", address = "127.0.0.1:0", http = (), service = "w${i}")`);
  writeFileSync(join(out, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [${services.join(', ')}],
  sockets = [${listeners.join(', ')}],
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
