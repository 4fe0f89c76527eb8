// shardroute/zookeeper against a real ZooKeeper (Debian's zookeeper 3.8, standalone on a
// reserved 127.0.0.1 port (bindings-wasm/test/edge/ports.mjs: outside the ephemeral range,
// locked per run, a fresh one while it is taken) with its data in a temp dir, stopped by PID when the tests end, also
// on failure) through the real node-zookeeper-client: a follower installing what `publish`
// writes, refusing what it must not install (invalid UTF-8 and damaged dictionaries told
// apart by the core) while keeping its router, two publishers racing for one epoch, and
// coming back after ZooKeeper is killed and started again on the same port and data.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import zookeeper from 'node-zookeeper-client';
import { ShardrouteError, encodeDictionary } from 'shardroute';
import { publish, ZooKeeperError, ZooKeeperFollower } from 'shardroute/zookeeper';

import { ADDRESS_IN_USE, heldElsewhere, reservePorts, startOnPorts } from '../../bindings-wasm/test/edge/ports.mjs';

const LONG = 30000; // generous: the test machine may be slow and busy
const JARS = '/etc/zookeeper/conf:/usr/share/java/zookeeper.jar';

const running = (child) => child !== null && child.exitCode === null && child.signalCode === null;

/** The end of a log; a port taken shows however long the stack trace after it (startOnPorts reads it). */
function logTail(path) {
  const text = readFileSync(path, 'utf8');
  const tail = text.slice(-3000);
  const taken = text.split('\n').find((line) => ADDRESS_IN_USE.test(line));
  return taken && !ADDRESS_IN_USE.test(tail) ? `${taken}\n...\n${tail}` : tail;
}

/** ZooKeeper's `srvr` on `port`: its answer, or '' when it does not answer. */
function srvr(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setTimeout(2000, () => socket.destroy());
    socket.on('connect', () => socket.write('srvr'));
    socket.on('data', (chunk) => { text += chunk; });
    socket.on('error', () => resolve(''));
    socket.on('close', () => resolve(text));
  });
}

/** One standalone ZooKeeper on a fixed port and data dir: `start()` (again after `kill()`), `kill()`. */
class ZooKeeperServer {
  constructor(root, port) {
    this.root = root;
    this.port = port;
    this.hosts = `127.0.0.1:${port}`;
    this.child = null;
    this.log = join(root, 'zk.log');
    this.config = join(root, 'zk.cfg');
    mkdirSync(join(root, 'data'), { recursive: true });
    writeFileSync(this.config, [
      'tickTime=200', `dataDir=${join(root, 'data')}`, `clientPort=${port}`, 'clientPortAddress=127.0.0.1',
      'admin.enableServer=false', '4lw.commands.whitelist=ruok,srvr', 'maxSessionTimeout=20000', '',
    ].join('\n'));
  }

  async start() {
    const log = openSync(this.log, 'a');
    this.child = spawn('java', ['-Xmx128m', '-XX:+UseSerialGC', '-cp', JARS, '-Dzookeeper.root.logger=WARN,CONSOLE',
      'org.apache.zookeeper.server.quorum.QuorumPeerMain', this.config], { stdio: ['ignore', log, log] });
    closeSync(log);
    const deadline = Date.now() + LONG;
    while (!(await srvr(this.port)).includes('Mode:')) {
      if (!running(this.child)) throw new Error(`zookeeper exited:\n${await heldElsewhere([this.port])}${logTail(this.log)}`);
      if (Date.now() > deadline) throw new Error(`zookeeper did not serve:\n${logTail(this.log)}`);
      await new Promise((resolve) => { setTimeout(resolve, 100); });
    }
  }

  kill() {
    const { child } = this;
    if (!running(child)) return Promise.resolve();
    const exited = new Promise((resolve) => { child.once('exit', resolve); });
    process.kill(child.pid, 'SIGCONT');
    process.kill(child.pid, 'SIGKILL');
    return exited;
  }
}

function document(epoch, nodes = 3) {
  return {
    format: 'shardroute/1', epoch, nodes: Array.from({ length: nodes }, (_, i) => ({ id: `n${i}` })), strategy: { type: 'jump' },
  };
}

/** A plain client for the test's own writes. */
async function plainClient(hosts) {
  const client = zookeeper.createClient(hosts, { sessionTimeout: 5000 });
  await new Promise((resolve) => { client.once('connected', resolve); client.connect(); });
  const call = (method, ...args) => new Promise((resolve, reject) => {
    client[method](...args, (err, ...results) => (err ? reject(err) : resolve(results)));
  });
  return { client, call };
}

describe('shardroute/zookeeper against a real ZooKeeper', { timeout: 180000 }, () => {
  let root;
  let server;
  let plain;
  let n = 0;
  /** A fresh node path per test. */
  const path = () => `/test/topology-${(n += 1)}`;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'shardroute-zk-node-'));
    process.on('exit', () => { if (server && running(server.child)) process.kill(server.child.pid, 'SIGKILL'); });
    server = await startOnPorts(1, async ([port]) => {
      const starting = new ZooKeeperServer(root, port);
      try {
        await starting.start();
      } catch (err) {
        await starting.kill();
        rmSync(join(root, 'data'), { recursive: true, force: true }); // the next try starts afresh
        rmSync(starting.log, { force: true });
        throw err;
      }
      return starting;
    });
    plain = await plainClient(server.hosts);
  });

  after(async () => {
    plain?.client.close();
    await server?.kill();
    rmSync(root, { recursive: true, force: true });
  });

  test('the follower installs what publish writes, the revision the write\'s mzxid', async () => {
    const at = path();
    const changes = [];
    const follower = await ZooKeeperFollower.start(server.hosts, at, { onChange: (f) => changes.push(f.router.epoch) });
    try {
      assert.equal(follower.router, null); // no node yet: its creation is watched
      for (const epoch of [1, 2, 3]) {
        const revision = await publish(server.hosts, at, document(epoch, 2 + epoch));
        assert.equal(typeof revision, 'bigint');
        assert.equal(await follower.waitForEpoch(epoch, LONG), true, `epoch ${epoch}`);
        assert.equal(follower.revision, revision);
      }
      assert.deepEqual(changes, [1n, 2n, 3n]);
      assert.equal(follower.router, follower.router, 'one Router until the next is installed');
      assert.equal(JSON.parse(follower.router.toJson()).nodes.length, 5);
      const { stats } = follower;
      assert.equal(stats.installed, 3n);
      assert.deepEqual(stats.refused, {});
      assert.ok(stats.events >= 3n, `${stats.events} events`);
    } finally {
      follower.close();
    }
  });

  test('publish refuses what a follower would not follow, and leaves the node', async () => {
    const at = path();
    await publish(server.hosts, at, document(7));
    for (const epoch of [7, 9, 6]) {
      await assert.rejects(publish(server.hosts, at, document(epoch)), (err) => err instanceof ShardrouteError && err.code === 'stale_epoch');
    }
    await assert.rejects(publish(server.hosts, at, { ...document(8), strategy: { type: 'nope' } }),
      (err) => err instanceof ShardrouteError && err.code === 'invalid_topology');
    const [data] = await plain.call('getData', at);
    assert.equal(JSON.parse(data.toString()).epoch, 7);
  });

  test('two publishers racing for one epoch: one writes, the other loses (conflict, or stale_epoch if it read late)', async () => {
    const at = path();
    await publish(server.hosts, at, document(1));
    const results = await Promise.allSettled([publish(server.hosts, at, document(2, 4)), publish(server.hosts, at, document(2, 5))]);
    const won = results.filter((result) => result.status === 'fulfilled');
    const lost = results.filter((result) => result.status === 'rejected').map((result) => result.reason);
    assert.equal(won.length, 1, String(lost));
    assert.ok((lost[0] instanceof ZooKeeperError && lost[0].code === 'conflict')
      || (lost[0] instanceof ShardrouteError && lost[0].code === 'stale_epoch'), String(lost[0]));
    const [data] = await plain.call('getData', at);
    assert.equal(JSON.parse(data.toString()).epoch, 2);
  });

  test('refusals keep the last good router: bad JSON, invalid UTF-8, a lower epoch, a damaged dictionary', async () => {
    const at = path();
    await publish(server.hosts, at, document(4));
    const told = [];
    const follower = await ZooKeeperFollower.start(server.hosts, at, { onRefused: (_, offered) => told.push(offered.code) });
    try {
      const bad = [
        [Buffer.from('{not json'), 'invalid_topology'],
        [Buffer.concat([Buffer.from('{"format": "shardroute/1", "epoch": 5, "nodes": [{"id": "a'), Buffer.from([0xff]), Buffer.from('"}], "strategy": {"type": "jump"}}')]), 'invalid_topology'],
        [Buffer.from(JSON.stringify(document(3))), 'stale_epoch'],
        [Buffer.from('SRVB\x00garbage'), 'invalid_topology'],
      ];
      for (const [value, code] of bad) {
        await plain.call('setData', at, value, -1);
        const offered = await follower.refresh();
        assert.equal(offered.kind, 'refused');
        assert.equal(offered.code, code);
        assert.equal(follower.router.epoch, 4n);
      }
      const dictionary = encodeDictionary({
        format: 'shardroute/1', epoch: 5, nodes: [{ id: 'a' }, { id: 'b' }],
        strategy: { type: 'vbucket', vbuckets: 4, map: [['a'], ['b'], ['a'], ['b']] },
      });
      await plain.call('setData', at, Buffer.from(dictionary), -1);
      assert.equal(await follower.waitForEpoch(5, LONG), true);
      const { refused } = follower.stats;
      assert.ok(refused.invalid_topology >= 3n && refused.stale_epoch >= 1n, JSON.stringify(refused, (_, v) => String(v)));
      assert.deepEqual(told.sort(), Object.entries(refused).flatMap(([code, count]) => Array(Number(count)).fill(code)).sort());
    } finally {
      follower.close();
    }
  });

  test('an empty node holds no document, as in the CLI: nothing offered, and publish writes over it', async () => {
    const at = path();
    await plain.call('mkdirp', at);
    const follower = await ZooKeeperFollower.start(server.hosts, at);
    try {
      assert.equal(await follower.refresh(), null);
      assert.equal(follower.router, null);
      assert.equal(follower.stats.offered, 0n);
      await publish(server.hosts, at, document(5));
      assert.equal(await follower.waitForEpoch(5, LONG), true);
    } finally {
      follower.close();
    }
  });

  test('an unreachable ZooKeeper is a ZooKeeperError', async () => {
    const [nobody] = await reservePorts(1); // reserved for this run: nothing listens there
    await assert.rejects(ZooKeeperFollower.start(`127.0.0.1:${nobody}`, '/x', { sessionTimeoutMs: 1000 }),
      (err) => err instanceof ZooKeeperError && err.code === 'unreachable');
  });

  test('a member that answers nothing (SIGSTOP) is noticed by the probe, and the follower comes back after it', async () => {
    const at = path();
    await publish(server.hosts, at, document(1));
    const errors = [];
    const follower = await ZooKeeperFollower.start(server.hosts, at, {
      config: { reconnect_first_ms: 50, reconnect_max_ms: 400 }, sessionTimeoutMs: 1500, onError: (err) => errors.push(err),
    });
    try {
      process.kill(server.child.pid, 'SIGSTOP');
      try {
        const deadline = Date.now() + LONG;
        while (!errors.some((err) => /no answer within/.test(err.message)) && Date.now() < deadline) {
          await new Promise((resolve) => { setTimeout(resolve, 50); });
        }
        assert.ok(errors.some((err) => err instanceof ZooKeeperError && /no answer within/.test(err.message)), String(errors));
        assert.equal(follower.router.epoch, 1n); // kept while its member is silent
      } finally {
        process.kill(server.child.pid, 'SIGCONT');
      }
      await publish(server.hosts, at, document(2));
      assert.equal(await follower.waitForEpoch(2, LONG), true, `no epoch 2 after SIGCONT: ${errors}`);
      assert.ok(follower.stats.disconnects >= 1n);
    } finally {
      follower.close();
    }
  });

  test('the follower comes back after ZooKeeper is killed and restarted', async () => {
    const at = path();
    await publish(server.hosts, at, document(1));
    const errors = [];
    const follower = await ZooKeeperFollower.start(server.hosts, at, {
      config: { reconnect_first_ms: 50, reconnect_max_ms: 400 }, sessionTimeoutMs: 4000, onError: (err) => errors.push(err),
    });
    try {
      plain.client.close();
      await server.kill();
      await assert.rejects(follower.refresh(), (err) => err instanceof ZooKeeperError && err.code === 'unreachable');
      assert.equal(follower.router.epoch, 1n); // kept while ZooKeeper is away
      await server.start();
      plain = await plainClient(server.hosts);
      await publish(server.hosts, at, document(2));
      assert.equal(await follower.waitForEpoch(2, LONG), true, `no epoch 2 after the restart: ${errors}`);
      assert.ok(follower.stats.disconnects >= 1n);
      assert.ok(errors.length >= 1 && errors.every((err) => err instanceof ZooKeeperError && err.code === 'unreachable'), String(errors));
    } finally {
      follower.close();
    }
  });
});
