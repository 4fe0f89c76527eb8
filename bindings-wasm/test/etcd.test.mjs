// shardroute-wasm/etcd (bindings-js/etcd.mjs, the shell the Node addon shares) in Node on the
// global fetch, against a real etcd: one member of Debian's etcd (3.4) on two reserved
// 127.0.0.1 ports (test/edge/ports.mjs), its data in a temp dir, stopped by PID when the
// tests end, also on failure. The WASM package's core session reads, watches and publishes;
// its routers and errors are the WASM package's own classes. Waits are for events.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import * as api from 'shardroute-wasm';
import { Etcd, EtcdError, EtcdFollower, publish } from 'shardroute-wasm/etcd';

import { reservePorts, startOnPorts } from './edge/ports.mjs';

const LONG = 30000;
const document = (epoch, nodes = 3) => ({
  format: 'shardroute/1', epoch, nodes: Array.from({ length: nodes }, (_, i) => ({ id: `n${i}` })), strategy: { type: 'jump' },
});

/** One etcd member on `clientPort` and `peerPort`, its data and log under `root`: resolves once /health says true. */
async function startEtcd(root, clientPort, peerPort) {
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const logPath = join(root, `etcd-${clientPort}.log`);
  const log = openSync(logPath, 'a');
  const child = spawn('etcd', [
    '--name', 'wasm', '--data-dir', join(root, `data-${clientPort}`), '--listen-client-urls', url, '--advertise-client-urls', url,
    '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer, '--initial-cluster', `wasm=${peer}`, '--log-level', 'warn',
    '--logger', 'zap',
  ], { stdio: ['ignore', log, log] });
  closeSync(log);
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
  };
  process.once('exit', kill);
  const deadline = Date.now() + LONG;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`etcd exited:\n${readFileSync(logPath, 'utf8').slice(-3000)}`);
    try {
      const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      if ((await health.text()).includes('true')) return { url, kill };
    } catch {
      // Not up yet.
    }
    if (Date.now() > deadline) {
      kill();
      throw new Error(`etcd did not answer:\n${readFileSync(logPath, 'utf8').slice(-3000)}`);
    }
    await new Promise((resolve) => { setTimeout(resolve, 50); });
  }
}

describe('shardroute-wasm/etcd against a real etcd', () => {
  const root = mkdtempSync(join(tmpdir(), 'shardroute-wasm-etcd-'));
  let server;

  before(async () => {
    server = await startOnPorts(2, ([clientPort, peerPort]) => startEtcd(root, clientPort, peerPort));
  });

  after(() => {
    server?.kill();
    rmSync(root, { recursive: true, force: true });
  });

  test('calls, publish (and its repair), and a follower that installs what is published', async () => {
    const etcd = new Etcd(server.url);
    const key = '/wasm/topology';
    const revision = await etcd.put('/wasm/previous', 'p');
    assert.deepEqual(await etcd.get('/wasm/previous'), { value: 'p', modRevision: revision });
    await publish(etcd, key, document(1));
    const changes = [];
    const refusals = [];
    const follower = await EtcdFollower.start(server.url, key, {
      also: ['/wasm/previous'], onChange: (changed) => changes.push(changed.router.epoch), onRefused: (_, offered) => refusals.push(offered.code),
    });
    try {
      assert.ok(follower.router instanceof api.Router);
      assert.equal(follower.router.epoch, 1n);
      assert.equal(follower.companions.get('/wasm/previous'), 'p');
      await publish(etcd, key, document(2, 4));
      assert.equal(await follower.waitForEpoch(2, LONG), true);
      assert.equal(follower.revision, (await etcd.get(key)).modRevision);

      await assert.rejects(publish(etcd, key, document(2)), (err) => err instanceof api.ShardrouteError && err.code === 'stale_epoch');
      await etcd.put(key, '[]');
      await assert.rejects(publish(etcd, key, document(3)), (err) => err instanceof api.ShardrouteError && err.code === 'invalid_topology');
      await publish(etcd, key, document(3), { replace: true });
      assert.equal(await follower.waitForEpoch(3, LONG), true);
      const now = await follower.refresh(); // the stored document read now: installed already
      assert.ok(now instanceof api.Offered && now.kind === 'unchanged', String(now?.kind));
      assert.deepEqual(changes, [1n, 2n, 3n]);
      assert.deepEqual(refusals, ['invalid_topology']);
      assert.equal(follower.stats.installed, 3n);
      assert.equal(typeof follower.stats.reads, 'bigint');
    } finally {
      follower.close();
    }
    assert.equal(await etcd.deletePrefix('/wasm/'), 2n);
    const [nobody] = await reservePorts(1); // reserved for this run: nothing listens there
    await assert.rejects(new Etcd(`http://127.0.0.1:${nobody}`).get('/x'), (err) => err instanceof EtcdError && err.code === 'unreachable');
  });
});
