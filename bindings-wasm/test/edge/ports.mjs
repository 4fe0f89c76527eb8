// Ports for the servers the JS tests, benches and examples start, without a race (issue 41).
// Never "listen on port 0, read the number, close, let a server bind it later": port 0 hands
// out numbers of the kernel's ephemeral range, where every outgoing connection takes its
// local port too, so the number may be gone when the server binds it. Instead:
//   - a server that can bind port 0 itself and say which port it got does so: workerd
//     (runtimes.mjs's startWorkerd: --control-fd), Deno (its "Listening on" line),
//     `shardroute serve --listen 127.0.0.1:0`, Node servers (listen(0) + address().port);
//   - a server that can only be handed a number (etcd, ZooKeeper, redis-server; one
//     restarted on its old port) gets one of `reservePorts()`: ports outside the ephemeral
//     range, each locked for this process by a file in PORT_LOCKS (the same locks as
//     examples/harness.py's and cli/tests/ports/mod.rs's, so parallel runs never share a
//     port), and `startOnPorts()` starts it again on fresh ports when it failed because
//     something else held one (ADDRESS_IN_USE in its error).
// scripts/check-ports.py keeps the old pattern out.
import { closeSync, chmodSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const PORT_LOCKS = '/tmp/shardroute-ports';
const PREFERRED = [20000, 32000];
/** What etcd, ZooKeeper, redis-server, postgres, workerd and Node say when a port is taken. */
export const ADDRESS_IN_USE = /address already in use|could not bind|BindException|EADDRINUSE|errno 98/i;

const held = new Set(); // locked by this process, unlocked on exit
let cursor = null; // the next port to try: a random start per process, then counting up

/** [low, high): the ports `reservePorts` hands out, PREFERRED less the kernel's ephemeral range. */
export function portRange() {
  let first = 32768;
  let last = 60999;
  try {
    [first, last] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  } catch {
    // Not Linux: the usual range.
  }
  const [low, high] = PREFERRED;
  if (last < low || first >= high) return [low, high];
  if (first - low >= 1000) return [low, first];
  if (65536 - (last + 1) >= 1000) return [last + 1, 65536];
  throw new Error(`no 1000 ports outside the ephemeral range ${first}-${last}`);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Takes PORT_LOCKS/<port> for this process (its PID inside); a dead process's lock is taken over. */
function lock(port) {
  const path = join(PORT_LOCKS, String(port));
  for (let i = 0; i < 2; i += 1) {
    let fd;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let holder = 0;
      try {
        holder = Number(readFileSync(path, 'utf8').trim()) || 0;
      } catch {
        // Gone meanwhile, or unreadable: try again.
      }
      if (holder && alive(holder)) return false;
      try {
        unlinkSync(path);
      } catch {
        // Someone else took it over first.
      }
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  }
  return false;
}

/** Whether nothing listens on 127.0.0.1:`port` now (a filter: the server's own bind decides). */
function bindable(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * For a server of ours that exited: "Address already in use" naming each of its `ports`
 * that something else holds now, else '' (Debian's ZooKeeper logs nothing: its exit alone
 * does not say why).
 */
export async function heldElsewhere(ports) {
  let said = '';
  for (const port of ports) {
    if (!(await bindable(port))) said += `127.0.0.1:${port}: Address already in use (held by another process)\n`;
  }
  return said;
}

/** Unlocks `ports` (every port this process holds by default); on exit, all. */
export function releasePorts(ports = [...held]) {
  for (const port of ports) {
    if (!held.delete(port)) continue;
    const path = join(PORT_LOCKS, String(port));
    try {
      if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
    } catch {
      // Gone already.
    }
  }
}

process.on('exit', () => releasePorts());

/**
 * `count` distinct ports of `portRange()`, locked for this process until it exits (or
 * `releasePorts`): no other run of ours is handed them and no outgoing connection takes
 * them, so a server may bind one later, and again after a restart. Nothing listens on one
 * until a server is started there: a port for "nobody answers" too.
 */
export async function reservePorts(count = 1) {
  const [low, high] = portRange();
  mkdirSync(PORT_LOCKS, { recursive: true });
  try {
    chmodSync(PORT_LOCKS, 0o1777); // any user's run shares the locks
  } catch {
    // Not ours to change: it is usable as it is.
  }
  if (cursor === null) cursor = low + Math.floor(Math.random() * (high - low));
  const ports = [];
  for (let tried = 0; tried < high - low && ports.length < count; tried += 1) {
    const port = low + ((cursor - low) % (high - low));
    cursor = port + 1;
    if (held.has(port) || !lock(port)) continue;
    held.add(port);
    // Something outside our runs listens there: it stays locked (skipped) till exit.
    if (await bindable(port)) ports.push(port);
  }
  if (ports.length < count) throw new Error(`no ${count} free ports left in ${low}-${high - 1} (locks in ${PORT_LOCKS})`);
  return ports;
}

/**
 * `await start(ports)` with `count` ports of `reservePorts`; when it throws an error whose
 * message says a port was taken (ADDRESS_IN_USE: put the server's log in it), again with
 * fresh ports, up to `tries` times. `start` cleans up after itself when it fails.
 */
export async function startOnPorts(count, start, { tries = 6 } = {}) {
  for (let attempt = 1; ; attempt += 1) {
    const ports = await reservePorts(count);
    try {
      return await start(ports);
    } catch (err) {
      if (attempt >= tries || !ADDRESS_IN_USE.test(`${err?.message ?? err}`)) throw err;
    }
  }
}
