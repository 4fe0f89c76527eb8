// shardroute/etcd against a real etcd: one member of Debian's etcd (3.4, `etcd-server`) on
// two reserved 127.0.0.1 ports (bindings-wasm/test/edge/ports.mjs: outside the ephemeral
// range, locked per run, fresh ones while one is taken) with its data in a temp dir, stopped by PID when the tests end,
// also on failure. The client's reads and writes; a follower installing what `publish`
// writes, refusing what it must not install while keeping its router, reading companions
// with the document; and coming back after etcd is killed and started again on the same
// ports and data. Then a cluster of three members (each its own ports and data dir): a
// follower rides out its member, the leader, SIGKILLed, and then the member it moved to
// SIGSTOPped (which neither answers nor closes its connections: only the watch's idle time
// tells). Waits are for events (callbacks, waitForEpoch), never fixed sleeps.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ShardrouteError } from 'shardroute';
import { Etcd, EtcdError, EtcdFollower, prefixEnd, publish, sameRevision, sameValue } from 'shardroute/etcd';

import { reservePorts, startOnPorts } from '../../bindings-wasm/test/edge/ports.mjs';

const LONG = 30000; // generous: the test machine may be slow and busy

/** Every etcd this file started, for the last-resort stop on exit. */
const started = new Set();

const running = (child) => child !== null && child.exitCode === null && child.signalCode === null;

/** SIGKILL by PID for each etcd still running, SIGCONT first for a stopped one (synchronous: usable on 'exit'). */
function killAll(children = started) {
  for (const child of children) {
    if (running(child)) {
      try {
        process.kill(child.pid, 'SIGCONT');
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
}

/**
 * One etcd member on fixed ports and data dir (`root/<name>`): `start()` (again after
 * `kill()`), `kill()`. Alone by default; `cluster` (`name=peerUrl,...`) makes it a member
 * of that cluster.
 */
class EtcdServer {
  constructor(root, clientPort, peerPort, { name = 'default', cluster = null } = {}) {
    this.root = root;
    this.name = name;
    this.url = `http://127.0.0.1:${clientPort}`;
    this.peerUrl = `http://127.0.0.1:${peerPort}`;
    this.cluster = cluster ?? `${name}=${this.peerUrl}`;
    this.log = join(root, `${name}.log`);
    this.child = null;
  }

  /** Starts it (an existing data dir keeps its cluster) and, with `wait`, waits until /health says true. */
  async start({ wait = true } = {}) {
    const log = openSync(this.log, 'a');
    this.child = spawn('etcd', [
      '--name', this.name, '--data-dir', join(this.root, this.name),
      '--listen-client-urls', this.url, '--advertise-client-urls', this.url,
      '--listen-peer-urls', this.peerUrl, '--initial-advertise-peer-urls', this.peerUrl,
      '--initial-cluster', this.cluster, '--initial-cluster-state', 'new', '--log-level', 'warn', '--logger', 'zap',
    ], { stdio: ['ignore', log, log] });
    started.add(this.child);
    closeSync(log);
    if (wait) await this.healthy();
  }

  /** Resolves once /health says true; throws if it exits or stays down for LONG. */
  async healthy() {
    const deadline = Date.now() + LONG;
    for (;;) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`etcd exited:\n${readFileSync(this.log, 'utf8').slice(-3000)}`);
      }
      try {
        const health = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(2000) });
        if ((await health.text()).includes('true')) return;
      } catch {
        // Not up yet.
      }
      if (Date.now() > deadline) throw new Error(`etcd did not answer:\n${readFileSync(this.log, 'utf8').slice(-3000)}`);
      await new Promise((resolve) => { setTimeout(resolve, 50); });
    }
  }

  /** Removes its data dir and log (a start that failed: the next try starts afresh). */
  forget() {
    rmSync(join(this.root, this.name), { recursive: true, force: true });
    rmSync(this.log, { force: true });
  }

  /** SIGKILL by PID (SIGCONT first, should it be stopped); resolves once it has exited. */
  kill() {
    const { child } = this;
    if (!running(child)) return Promise.resolve();
    const exited = new Promise((resolve) => { child.once('exit', resolve); });
    process.kill(child.pid, 'SIGCONT');
    process.kill(child.pid, 'SIGKILL');
    return exited;
  }

  /** `/v3/maintenance/status`: its id (`header.member_id`) and the leader's (`leader`), decimal strings. */
  async status() {
    const answer = await fetch(`${this.url}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(2000) });
    if (!answer.ok) throw new Error(`status of ${this.url}: HTTP ${answer.status}`);
    return answer.json();
  }
}

/** `size` members on 127.0.0.1 that form one cluster, their data under `root`; `urls` their client URLs. */
class EtcdCluster {
  constructor(root, size) {
    this.root = root;
    this.size = size;
    this.members = [];
  }

  /**
   * Starts every member (together: none is healthy alone) and waits until each is. Each
   * member's client and peer ports are reserved and known before any starts; when one
   * cannot bind its port, the whole cluster starts again on fresh ones (new data dirs).
   */
  async start() {
    await startOnPorts(this.size * 2, async (ports) => {
      const cluster = Array.from({ length: this.size }, (_, i) => `m${i}=http://127.0.0.1:${ports[2 * i + 1]}`).join(',');
      this.members = Array.from({ length: this.size },
        (_, i) => new EtcdServer(this.root, ports[2 * i], ports[2 * i + 1], { name: `m${i}`, cluster }));
      try {
        for (const member of this.members) await member.start({ wait: false });
        await Promise.all(this.members.map((member) => member.healthy())); // fails at the first that exits
      } catch (err) {
        await this.kill();
        for (const member of this.members) member.forget();
        throw err;
      }
    });
  }

  get urls() {
    return this.members.map((member) => member.url);
  }

  /** The member that leads now, as the running ones report it (waits out an election). */
  async leader() {
    const deadline = Date.now() + LONG;
    for (;;) {
      const ids = new Map();
      let leader = null;
      for (const member of this.members.filter((each) => running(each.child))) {
        try {
          const status = await member.status();
          ids.set(status.header.member_id, member);
          if (status.leader && status.leader !== '0') leader = status.leader;
        } catch {
          // Not answering now.
        }
      }
      if (leader !== null && ids.has(leader)) return ids.get(leader);
      if (Date.now() > deadline) throw new Error('no etcd leader');
      await new Promise((resolve) => { setTimeout(resolve, 50); });
    }
  }

  /** Every member killed by PID (SIGCONT first for a stopped one); resolves once all have exited. */
  kill() {
    return Promise.all(this.members.map((member) => member.kill()));
  }
}

/** Values pushed by a callback, taken in order by awaiting `next()`. */
class Queue {
  #items = [];
  #waiting = [];

  push = (item) => {
    const waiter = this.#waiting.shift();
    if (waiter) waiter(item);
    else this.#items.push(item);
  };

  next(timeoutMs = LONG) {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nothing arrived in ${timeoutMs} ms`)), timeoutMs);
      this.#waiting.push((item) => {
        clearTimeout(timer);
        resolve(item);
      });
    });
  }
}

function document(epoch, nodes = 3) {
  return {
    format: 'shardroute/1', epoch, nodes: Array.from({ length: nodes }, (_, i) => ({ id: `n${i}` })), strategy: { type: 'jump' },
  };
}

const delay = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

const throwsCode = (code) => (err) => err instanceof ShardrouteError && err.code === code;

describe('shardroute/etcd against a real etcd', () => {
  const root = mkdtempSync(join(tmpdir(), 'shardroute-etcd-test-'));
  let server;
  let etcd;
  const stop = () => {
    killAll();
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', stop);

  before(async () => {
    server = await startOnPorts(2, async ([clientPort, peerPort]) => {
      const member = new EtcdServer(root, clientPort, peerPort);
      try {
        await member.start();
      } catch (err) {
        await member.kill();
        member.forget();
        throw err;
      }
      return member;
    });
    etcd = new Etcd(server.url, { timeoutMs: 10000 });
  });

  after(async () => {
    await server?.kill();
    stop();
  });

  test('get, put, compare-and-swap, transactions, getMany, deletePrefix', async () => {
    assert.deepEqual(await etcd.get('/kv/a'), { value: null, modRevision: 0n });
    const first = await etcd.put('/kv/a', '1');
    assert.equal(typeof first, 'bigint');
    assert.deepEqual(await etcd.get('/kv/a'), { value: '1', modRevision: first });
    assert.equal(await etcd.cas('/kv/a', '2', first - 1n), 0n); // a revision the key does not hold
    assert.deepEqual(await etcd.get('/kv/a'), { value: '1', modRevision: first });
    const second = await etcd.cas('/kv/a', '2', first);
    assert.ok(second > first);
    assert.ok((await etcd.cas('/kv/b', 'created', 0n)) > second); // 0n: the key must be absent
    assert.equal(await etcd.cas('/kv/b', 'again', 0n), 0n);

    const { values, revision } = await etcd.getMany(['/kv/a', '/kv/b', '/kv/none']);
    assert.deepEqual(values, new Map([
      ['/kv/a', { value: '2', modRevision: second }],
      ['/kv/b', { value: 'created', modRevision: revision }],
      ['/kv/none', { value: null, modRevision: 0n }],
    ]));

    assert.equal(await etcd.txn([sameValue('/kv/a', '1')], { '/kv/c': 'x' }), 0n);
    const both = await etcd.txn([Etcd.sameValue('/kv/a', '2'), sameRevision('/kv/c', 0n)], new Map([['/kv/c', 'x'], ['/kv/d', 'é']]), ['/kv/b']);
    assert.ok(both > revision);
    assert.deepEqual(await etcd.get('/kv/b'), { value: null, modRevision: 0n });
    assert.deepEqual(await etcd.get('/kv/d'), { value: 'é', modRevision: both });
    assert.equal(await etcd.txn([Etcd.sameRevision('/kv/c', both - 1n)], { '/kv/c': 'y' }), 0n);

    assert.deepEqual(prefixEnd('/kv/'), new TextEncoder().encode('/kv0'));
    assert.deepEqual(prefixEnd(Uint8Array.of(0x61, 0xff, 0xff)), Uint8Array.of(0x62));
    assert.equal(await etcd.deletePrefix('/kv/'), 3n);
    assert.equal(await etcd.deletePrefix('/kv/'), 0n);
  });

  test('an unreachable etcd and an HTTP error are EtcdErrors', async () => {
    const [nobodyPort] = await reservePorts(1); // reserved for this run: nothing listens there
    const nobody = new Etcd(`http://127.0.0.1:${nobodyPort}`, { timeoutMs: 2000 });
    await assert.rejects(nobody.get('/x'), (err) => err instanceof EtcdError && err.code === 'unreachable' && err.message.includes(String(nobodyPort)));
    await assert.rejects(EtcdFollower.start(nobody, '/x'), (err) => err instanceof EtcdError && err.code === 'unreachable');
    // etcd refuses an empty key (gRPC InvalidArgument: HTTP 400).
    await assert.rejects(etcd.get(''),
      (err) => err instanceof EtcdError && err instanceof ShardrouteError && err.code === 'http' && err.status === 400 && err.name === 'EtcdError');
    assert.throws(() => new Etcd('redis://127.0.0.1:1'), throwsCode('invalid_argument'));
  });

  test('several members: the next one when the one in use cannot be reached, and it stays in use', async () => {
    const dead = (await reservePorts(2)).map((port) => `http://127.0.0.1:${port}`); // nothing listens there
    const listed = new Etcd(` ${dead[0]}/, ${server.url} `, { timeoutMs: 2000 });
    assert.deepEqual(listed.urls, [dead[0], server.url]);
    assert.ok(Object.isFrozen(listed.urls));
    assert.equal(listed.url, dead[0]);
    await listed.put('/members/a', '1');
    assert.equal(listed.url, server.url); // the one that answered
    assert.equal((await listed.get('/members/a')).value, '1');
    assert.equal(listed.url, server.url);

    // An HTTP error is an answer: no other member is tried.
    const answering = new Etcd([server.url, dead[0]], { timeoutMs: 2000 });
    await assert.rejects(answering.get(''), (err) => err instanceof EtcdError && err.code === 'http');
    assert.equal(answering.url, server.url);

    // Round the list once: every member down is the last one's error.
    const none = new Etcd(dead, { timeoutMs: 2000 });
    await assert.rejects(none.get('/members/a'), (err) => err instanceof EtcdError && err.code === 'unreachable' && err.message.includes(dead[1]));

    // The follower and publish take the members' URLs too, and a watch opens on the member in use.
    const follower = await EtcdFollower.start([dead[1], server.url], '/members/topology');
    try {
      assert.deepEqual(follower.etcd.urls, [dead[1], server.url]);
      assert.equal(follower.etcd.url, server.url);
      await publish([dead[0], server.url], '/members/topology', document(1));
      assert.equal(await follower.waitForEpoch(1, LONG), true);
      assert.equal(follower.stats.watchRestarts, 0n);
    } finally {
      follower.close();
    }
    assert.throws(() => new Etcd([]), throwsCode('invalid_argument'));
    assert.throws(() => new Etcd(`${server.url},`), throwsCode('invalid_argument'));
    assert.throws(() => new Etcd([server.url, 'redis://127.0.0.1:1']), throwsCode('invalid_argument'));
    await etcd.deletePrefix('/members/');
  });

  test('a follower with idleMs answers a quiet watch with a read and a new watch, not a loss', async () => {
    const key = '/quiet/topology';
    await publish(etcd, key, document(1));
    const errors = [];
    const follower = await EtcdFollower.start(etcd, key, { idleMs: 100, onError: (err) => errors.push(err) });
    try {
      const deadline = Date.now() + LONG;
      while (follower.stats.reads < 4n) { // the first read, and one per idle time
        assert.ok(Date.now() < deadline, `${follower.stats.reads} reads`);
        await delay(20);
      }
      await publish(etcd, key, document(2));
      assert.equal(await follower.waitForEpoch(2, LONG), true);
      const stats = follower.stats;
      assert.equal(stats.watchRestarts, 0n);
      assert.equal(stats.disconnects, 0n);
      assert.deepEqual(errors, []);
    } finally {
      follower.close();
    }
    // The core checks the option (a negative idle time is no time).
    await assert.rejects(EtcdFollower.start(etcd, key, { idleMs: -1 }), throwsCode('invalid_argument'));
  });

  test('a follower installs epochs 1, 2, 3 as publish writes them; publish refuses what it must not write', async () => {
    const key = '/publish/topology';
    const epochs = [];
    const follower = await EtcdFollower.start(etcd, key, { onChange: (changed) => epochs.push(changed.router.epoch) });
    try {
      assert.equal(follower.router, null);
      assert.equal(follower.revision, null);
      for (const epoch of [1, 2, 3]) {
        const revision = await publish(etcd, key, document(epoch, 2 + epoch));
        assert.equal(typeof revision, 'bigint');
        assert.equal(await follower.waitForEpoch(epoch, LONG), true, `epoch ${epoch} never arrived`);
      }
      assert.deepEqual(epochs, [1n, 2n, 3n]);
      assert.equal(follower.router.epoch, 3n);
      assert.equal(follower.router.node('user:1'), follower.router.node('user:1'));
      assert.equal(follower.revision, (await etcd.get(key)).modRevision);

      await assert.rejects(publish(etcd, key, document(3)), throwsCode('stale_epoch'));
      await assert.rejects(publish(etcd, key, document(5)), throwsCode('stale_epoch'));
      await assert.rejects(publish(server.url, key, { ...document(4), strategy: { type: 'no such strategy' } }), throwsCode('invalid_topology'));
      assert.equal(JSON.parse((await etcd.get(key)).value).epoch, 3);

      const stats = follower.stats;
      assert.equal(stats.installed, 3n);
      assert.deepEqual(stats.refused, {});
      assert.equal(typeof stats.reads, 'bigint');
      assert.ok(stats.reads >= 1n, `${stats.reads} reads`); // the first: each change comes in its watch event, no read after it
      assert.equal(stats.watchRestarts, 0n);
      assert.equal(await follower.waitForEpoch(4, 50), false);
    } finally {
      follower.close();
      follower.close();
    }
    assert.equal(await follower.waitForEpoch(4, LONG), false); // closed: at once
  });

  test('publish loses a race as a conflict; a stored value a follower refuses is not overwritten', async () => {
    const key = '/race/topology';
    await publish(etcd, key, document(1));
    // Another publisher writes between our read and our write: the transport sees the
    // compare-and-swap (a txn with a compare) and lets the other write go first.
    let interrupted = false;
    const interrupting = async (url, init) => {
      if (!interrupted && url.endsWith('/v3/kv/txn') && (JSON.parse(init.body).compare ?? []).length > 0) {
        interrupted = true;
        await etcd.put(key, JSON.stringify(document(2)));
      }
      return fetch(url, init);
    };
    await assert.rejects(publish(new Etcd(server.url, { fetch: interrupting }), key, document(2, 4)),
      (err) => err instanceof EtcdError && err.code === 'conflict');
    assert.equal(interrupted, true);
    assert.equal(JSON.parse((await etcd.get(key)).value).nodes.length, 3); // the other publisher's

    await etcd.put(key, '{not json');
    await assert.rejects(publish(etcd, key, document(3)), (err) => throwsCode('invalid_topology')(err) && err.message.includes('replace'));
    assert.equal((await etcd.get(key)).value, '{not json');
  });

  test('publish with replace repairs a stored document followers refuse, above every epoch they may hold', async () => {
    const key = '/repair/topology';
    await publish(etcd, key, document(1));
    await publish(etcd, key, document(2));
    const refusals = new Queue();
    const follower = await EtcdFollower.start(etcd, key, { onRefused: (_, offered) => refusals.push(offered) });
    try {
      await etcd.put(key, '{"format": "shardroute/1", "epoch": 7, "nodes": [');
      assert.equal((await refusals.next()).code, 'invalid_topology');
      await assert.rejects(publish(etcd, key, document(3)), throwsCode('invalid_topology')); // not overwritten
      // The damaged value's own epoch cannot be read; history says followers hold 2 at most.
      await assert.rejects(publish(etcd, key, document(2), { replace: true }), throwsCode('stale_epoch'));
      const broken = (await etcd.get(key)).value;
      assert.ok(broken.endsWith('['));
      const revision = await publish(etcd, key, document(3, 4), { replace: true });
      assert.equal((await etcd.get(key)).modRevision, revision);
      assert.equal(await follower.waitForEpoch(3, LONG), true);
      assert.equal(follower.router.epoch, 3n);
      assert.deepEqual(follower.stats.refused, { invalid_topology: 1n });
      // Repaired: the next publish is the plain one again.
      await publish(etcd, key, document(4));
      assert.equal(await follower.waitForEpoch(4, LONG), true);
    } finally {
      follower.close();
    }
  });

  test('refusals are counted by code and the last good router kept', async () => {
    const key = '/refused/topology';
    await publish(etcd, key, document(4));
    const refusals = new Queue();
    const errors = [];
    const follower = await EtcdFollower.start(etcd, key, { onRefused: (_, offered) => refusals.push(offered), onError: (err) => errors.push(err) });
    try {
      assert.equal(follower.router.epoch, 4n);
      await etcd.put(key, '{"format": "shardroute/1", "epoch": 5, "nodes": [');
      const garbage = await refusals.next();
      assert.equal(garbage.kind, 'refused');
      assert.equal(garbage.code, 'invalid_topology');
      assert.equal(follower.stats.refused.invalid_topology, 1n);
      assert.equal(follower.router.epoch, 4n);

      await etcd.put(key, JSON.stringify(document(3)));
      assert.equal((await refusals.next()).code, 'stale_epoch');
      assert.deepEqual(follower.stats.refused, { invalid_topology: 1n, stale_epoch: 1n });
      assert.equal(follower.router.epoch, 4n);

      // refresh() is the session's read, now: what is stored is offered again, and what
      // became of it is said (refused again, and counted as any read's refusal).
      const again = await follower.refresh();
      assert.equal(again.code, 'stale_epoch');
      assert.deepEqual(follower.stats.refused, { invalid_topology: 1n, stale_epoch: 2n });
      assert.equal((await refusals.next()).code, 'stale_epoch'); // onRefused, before refresh ended

      await etcd.put(key, JSON.stringify(document(5)));
      assert.equal(await follower.waitForEpoch(5, LONG), true);
      assert.equal(follower.stats.installed, 2n);
      assert.deepEqual(errors, []);
    } finally {
      follower.close();
    }
  });

  test('companions come from the read of the topology, at one revision', async () => {
    const [key, previous] = ['/companions/topology', '/companions/previous'];
    const changes = new Queue();
    const refusals = new Queue();
    const follower = await EtcdFollower.start(etcd, key, {
      also: [previous],
      onChange: (changed) => changes.push([changed.router?.epoch ?? null, changed.companions.get(previous)]),
      onRefused: (_, offered) => refusals.push(offered),
    });
    try {
      assert.deepEqual(follower.companions, new Map([[previous, null]]));
      assert.equal(await follower.refresh(), null); // no document yet
      // Both in one transaction: the follower sees them together.
      await etcd.txn([], { [key]: JSON.stringify(document(2, 10)), [previous]: JSON.stringify(document(1, 5)) });
      assert.deepEqual(await changes.next(), [2n, JSON.stringify(document(1, 5))]);

      // The companion alone changes under the same router: onChange, the topology unchanged.
      await etcd.txn([], {}, [previous]);
      assert.deepEqual(await changes.next(), [2n, null]);
      assert.equal(follower.stats.unchanged >= 1n, true);

      // A refused document does not bring its companions.
      await etcd.txn([], { [key]: '[]', [previous]: 'written with a refused document' });
      assert.equal((await refusals.next()).code, 'invalid_topology');
      assert.equal(follower.companions.get(previous), null);
      await etcd.txn([], { [key]: JSON.stringify(document(3, 10)) });
      assert.deepEqual(await changes.next(), [3n, 'written with a refused document']);
      assert.equal(follower.stats.refused.invalid_topology, 1n);
    } finally {
      follower.close();
    }
  });

  test('the follower comes back after etcd is killed and started again on the same ports and data', async () => {
    const key = '/restart/topology';
    await publish(etcd, key, document(1));
    const errors = new Queue();
    const follower = await EtcdFollower.start(server.url, key, {
      config: { reconnect_first_ms: 50, reconnect_max_ms: 400 }, onError: errors.push,
    });
    try {
      assert.equal(follower.router.epoch, 1n);
      await server.kill();
      const lost = await errors.next();
      assert.ok(lost instanceof EtcdError && lost.code === 'unreachable', String(lost));
      await server.start();
      await publish(etcd, key, document(2));
      assert.equal(await follower.waitForEpoch(2, LONG), true);
      const stats = follower.stats;
      assert.ok(stats.disconnects >= 1n, `${stats.disconnects} disconnects`);
      assert.ok(stats.watchRestarts >= 1n, `${stats.watchRestarts} watch restarts`);
      // And it watches again: the next epoch arrives through the new watch.
      await publish(etcd, key, document(3));
      assert.equal(await follower.waitForEpoch(3, LONG), true);
    } finally {
      follower.close();
    }
  });
});

describe('shardroute/etcd against a real 3-member etcd cluster', () => {
  const root = mkdtempSync(join(tmpdir(), 'shardroute-etcd-cluster-'));
  const cluster = new EtcdCluster(root, 3);
  const stop = () => {
    killAll(cluster.members.map((member) => member.child));
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', stop);

  before(() => cluster.start());

  after(async () => {
    await cluster.kill();
    stop();
  });

  test('a follower of three members rides out a killed leader and a paused member', { timeout: 120000 }, async () => {
    const key = '/cluster/topology';
    const publisher = new Etcd(cluster.urls, { timeoutMs: 1000 });
    let epoch = 0;
    /** Publishes epoch + 1, trying again on an EtcdError (a member down, an election) for up to LONG. */
    const publishNext = async () => {
      const target = epoch + 1;
      const deadline = Date.now() + LONG;
      let failed = null;
      for (;;) {
        try {
          await publish(publisher, key, document(target, 2 + (target % 5)));
          break;
        } catch (err) {
          // A write whose answer was lost may have been made: then the next try finds the
          // stored epoch is `target` (the only other one it can be is `target - 1`).
          if (failed !== null && err instanceof ShardrouteError && err.code === 'stale_epoch') break;
          if (!(err instanceof EtcdError)) throw err;
          failed = err;
          assert.ok(Date.now() < deadline, `no member took epoch ${target} in ${LONG} ms: ${err.message}`);
          await delay(100);
        }
      }
      epoch = target;
    };
    await publishNext();

    // The follower starts on the leader: the first member of its list.
    const leader = await cluster.leader();
    const client = new Etcd([leader.url, ...cluster.urls.filter((url) => url !== leader.url)], { timeoutMs: 1000 });
    const epochs = [];
    const errors = [];
    const follower = await EtcdFollower.start(client, key, {
      idleMs: 1000, config: { reconnect_first_ms: 50, reconnect_max_ms: 400 },
      onChange: (changed) => epochs.push(changed.router.epoch), onError: (err) => errors.push(err),
    });
    const stuck = (what) => `stuck at epoch ${epochs.at(-1)} of ${epoch} ${what}; errors: ${errors.map((err) => err.message).join(' | ')}`;
    let paused = null;
    try {
      assert.equal(follower.etcd.url, leader.url);
      for (let i = 0; i < 5; i += 1) await publishNext();
      assert.equal(await follower.waitForEpoch(epoch, LONG), true, stuck('with every member up'));

      await leader.kill();
      for (let i = 0; i < 5; i += 1) await publishNext();
      assert.equal(await follower.waitForEpoch(epoch, 15000), true, stuck('after the leader was killed'));
      assert.notEqual(follower.etcd.url, leader.url);
      await leader.start(); // on the same ports and data dir: three again, so a second loss leaves a quorum

      paused = cluster.members.find((member) => member.url === follower.etcd.url);
      process.kill(paused.child.pid, 'SIGSTOP'); // it neither answers nor closes its connections
      for (let i = 0; i < 5; i += 1) await publishNext();
      assert.equal(await follower.waitForEpoch(epoch, 15000), true, stuck('with its member paused'));
      assert.notEqual(follower.etcd.url, paused.url);
    } finally {
      if (paused !== null && running(paused.child)) process.kill(paused.child.pid, 'SIGCONT');
      follower.close();
    }
    assert.equal(epoch, 16);
    assert.equal(epochs.at(-1), 16n);
    assert.ok(epochs.every((seen, i) => i === 0 || seen > epochs[i - 1]), `epochs went back: ${epochs.join(', ')}`);
    assert.deepEqual(follower.stats.refused, {});
  });
});
