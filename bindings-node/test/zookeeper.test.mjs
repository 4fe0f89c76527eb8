// shardroute/zookeeper against a real ZooKeeper (Debian's zookeeper 3.8: a standalone
// member, and a 3-member ensemble for the member-stopped case, on reserved 127.0.0.1 ports
// (bindings-wasm/test/edge/ports.mjs: outside the ephemeral range, locked per run, fresh
// ones while one is taken) with their data in a temp dir, stopped by PID when the tests
// end, also on failure), through the core's ZooKeeper session and the shell's TCP
// transport: a follower installing what `publish` writes (the node absent, then created,
// then changed), refusing what it must not install (invalid UTF-8 and damaged dictionaries
// told apart by the core) while keeping its router, publish's create / setData / conflict /
// replace, digest authentication (the `auth` ACL; a reader without the credentials is
// `unauthenticated`), a member stopped (the follower moves to the next), a standalone
// member paused and one killed and restarted, and a server that is not ZooKeeper. The test's own raw writes (bytes no
// publisher would write, ACL reads) go through `RawZooKeeper` below, a minimal jute
// client of the test's own: not the core's codec, so the two check each other.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ShardrouteError, encodeDictionary } from 'shardroute';
import { publish, ZooKeeperError, ZooKeeperFollower } from 'shardroute/zookeeper';

import { ADDRESS_IN_USE, heldElsewhere, reservePorts, startOnPorts } from '../../bindings-wasm/test/edge/ports.mjs';

const LONG = 30000; // generous: the test machine may be slow and busy
const JARS = '/etc/zookeeper/conf:/usr/share/java/zookeeper.jar';

const running = (child) => child !== null && child.exitCode === null && child.signalCode === null;
const pause = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** Waits until `check()` is truthy (polling), failing with `what()` after LONG. */
async function until(check, what) {
  const deadline = Date.now() + LONG;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(what());
    await pause(50);
  }
}

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

/**
 * One ZooKeeper member on a fixed port and data dir: standalone, or one of an ensemble
 * (`servers`: every member's `server.N=...` line, `myid` its N). `start()` (again after
 * `kill()`), `kill()`, `mode()`.
 */
class ZooKeeperServer {
  constructor(root, port, { name = 'zk', myid = 1, servers = [] } = {}) {
    this.port = port;
    this.hosts = `127.0.0.1:${port}`;
    this.child = null;
    this.log = join(root, `${name}.log`);
    this.config = join(root, `${name}.cfg`);
    this.data = join(root, name);
    mkdirSync(this.data, { recursive: true });
    writeFileSync(join(this.data, 'myid'), `${myid}\n`);
    writeFileSync(this.config, [
      'tickTime=200', 'initLimit=50', 'syncLimit=10', `dataDir=${this.data}`, `clientPort=${port}`,
      'clientPortAddress=127.0.0.1', 'admin.enableServer=false', '4lw.commands.whitelist=ruok,srvr',
      'maxSessionTimeout=20000', ...servers, '',
    ].join('\n'));
  }

  launch() {
    const log = openSync(this.log, 'a');
    this.child = spawn('java', ['-Xmx128m', '-XX:+UseSerialGC', '-cp', JARS, '-Dzookeeper.root.logger=WARN,CONSOLE',
      'org.apache.zookeeper.server.quorum.QuorumPeerMain', this.config], { stdio: ['ignore', log, log] });
    closeSync(log);
  }

  /** `leader`, `follower`, `standalone`, or null while it serves no client. */
  async mode() {
    return /Mode: (\w+)/.exec(await srvr(this.port))?.[1] ?? null;
  }

  async serving() {
    const deadline = Date.now() + LONG;
    while ((await this.mode()) === null) {
      if (!running(this.child)) throw new Error(`zookeeper exited:\n${await heldElsewhere([this.port])}${logTail(this.log)}`);
      if (Date.now() > deadline) throw new Error(`zookeeper did not serve:\n${logTail(this.log)}`);
      await pause(100);
    }
  }

  async start() {
    this.launch();
    await this.serving();
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

/** Every server started, killed when the process exits (also on failure). */
const started = new Set();
process.on('exit', () => {
  for (const server of started) if (running(server.child)) process.kill(server.child.pid, 'SIGKILL');
});

/** `start(ports)` on fresh ports while one was taken; `members` the servers it made, cleaned up when it fails. */
function startFresh(root, count, start) {
  return startOnPorts(count, async (ports) => {
    const members = [];
    try {
      return await start(ports, members);
    } catch (err) {
      await Promise.all(members.map((member) => member.kill()));
      rmSync(root, { recursive: true, force: true }); // the next try starts afresh
      mkdirSync(root, { recursive: true });
      throw err;
    }
  });
}

/** A standalone ZooKeeper in `root`. */
function standalone(root) {
  return startFresh(root, 1, async ([port], members) => {
    const server = new ZooKeeperServer(root, port);
    members.push(server);
    started.add(server);
    await server.start();
    return server;
  });
}

/** A 3-member ensemble in `root`: its members (each serving, one leading). */
function ensemble(root) {
  return startFresh(root, 9, async (ports, members) => {
    const servers = [0, 1, 2].map((i) => `server.${i + 1}=127.0.0.1:${ports[3 + i]}:${ports[6 + i]}`);
    for (const i of [0, 1, 2]) {
      const member = new ZooKeeperServer(root, ports[i], { name: `zk${i + 1}`, myid: i + 1, servers });
      members.push(member);
      started.add(member);
      member.launch();
    }
    await Promise.all(members.map((member) => member.serving()));
    return members;
  });
}

function document(epoch, nodes = 3) {
  return {
    format: 'shardroute/1', epoch, nodes: Array.from({ length: nodes }, (_, i) => ({ id: `n${i}` })), strategy: { type: 'jump' },
  };
}

// -- A minimal jute client of the test's own (ZooKeeper's wire format, written from its
// documentation, not the core's codec): one connection per use, no watch, no ping. --

const OPS = { create: 1, exists: 3, getData: 4, setData: 5, getACL: 6, auth: 100, closeSession: -11 };
const NONODE = -101;
const NODEEXISTS = -110;

/** Jute's writer: ints, longs, bools, buffers and strings (an int length, then the bytes). */
class Jute {
  parts = [];
  int(value) { const b = Buffer.alloc(4); b.writeInt32BE(value); this.parts.push(b); return this; }
  long(value) { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(value)); this.parts.push(b); return this; }
  bool(value) { this.parts.push(Buffer.from([value ? 1 : 0])); return this; }
  buffer(value) {
    if (value === null) return this.int(-1);
    this.int(value.length);
    this.parts.push(Buffer.from(value));
    return this;
  }
  string(value) { return this.buffer(Buffer.from(value, 'utf8')); }
  /** The record as a frame: its 4-byte length first. */
  frame() {
    const body = Buffer.concat(this.parts);
    const head = Buffer.alloc(4);
    head.writeInt32BE(body.length);
    return Buffer.concat([head, body]);
  }
}

/** Jute's reader over one frame. */
class Reader {
  constructor(bytes) { this.bytes = bytes; this.at = 0; }
  int() { const v = this.bytes.readInt32BE(this.at); this.at += 4; return v; }
  long() { const v = this.bytes.readBigInt64BE(this.at); this.at += 8; return v; }
  buffer() {
    const length = this.int();
    if (length < 0) return null;
    const v = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return v;
  }
  string() { return this.buffer()?.toString('utf8') ?? null; }
  stat() {
    const stat = { czxid: this.long(), mzxid: this.long(), ctime: this.long(), mtime: this.long() };
    Object.assign(stat, { version: this.int(), cversion: this.int(), aversion: this.int() });
    Object.assign(stat, { ephemeralOwner: this.long(), dataLength: this.int(), numChildren: this.int(), pzxid: this.long() });
    return stat;
  }
}

class RawError extends Error {
  constructor(err, what) {
    super(`${what}: ZooKeeper error ${err}`);
    this.err = err;
  }
}

/** One ZooKeeper session on the first of `hosts`, requests answered in order. */
class RawZooKeeper {
  #socket;
  #held = Buffer.alloc(0);
  #waiting = [];
  #xid = 0;

  static async open(hosts) {
    const [host, port] = hosts.split(',')[0].split(':');
    const raw = new RawZooKeeper();
    raw.#socket = connect(Number(port), host);
    raw.#socket.on('data', (data) => raw.#read(data));
    const broken = (err) => { for (const waiter of raw.#waiting.splice(0)) waiter.reject(err ?? new Error('connection closed')); };
    raw.#socket.on('error', broken);
    raw.#socket.on('close', () => broken());
    const connected = raw.#next();
    raw.#socket.write(new Jute().int(0).long(0).int(10000).long(0).buffer(Buffer.alloc(16)).bool(false).frame());
    const answer = await connected;
    assert.ok(answer.int() === 0 && answer.int() > 0, 'the raw session was refused');
    return raw;
  }

  #next() {
    return new Promise((resolve, reject) => { this.#waiting.push({ resolve, reject }); });
  }

  #read(data) {
    this.#held = Buffer.concat([this.#held, data]);
    while (this.#held.length >= 4 && this.#held.length >= 4 + this.#held.readInt32BE(0)) {
      const length = this.#held.readInt32BE(0);
      const frame = new Reader(this.#held.subarray(4, 4 + length));
      this.#held = this.#held.subarray(4 + length);
      this.#waiting.shift()?.resolve(frame);
    }
  }

  /** Sends a request of `op` with `body` (a Jute); its reader once it succeeded, else a RawError. */
  async request(op, body, what, xid = (this.#xid += 1)) {
    const reply = this.#next();
    const request = new Jute().int(xid).int(OPS[op]);
    request.parts.push(...body.parts);
    this.#socket.write(request.frame());
    const answer = await reply;
    assert.equal(answer.int(), xid);
    answer.long(); // zxid
    const err = answer.int();
    if (err !== 0) throw new RawError(err, what);
    return answer;
  }

  /** Digest authentication as `user:password`. */
  async auth(user, password) {
    await this.request('auth', new Jute().int(0).string('digest').buffer(Buffer.from(`${user}:${password}`)), 'auth', -4);
  }

  /** `{ data, stat }` of `path`. */
  async getData(path) {
    const answer = await this.request('getData', new Jute().string(path).bool(false), `getData ${path}`);
    return { data: answer.buffer(), stat: answer.stat() };
  }

  /** Writes `data` to `path` whatever its version: its stat. */
  async setData(path, data) {
    return (await this.request('setData', new Jute().string(path).buffer(data).int(-1), `setData ${path}`)).stat();
  }

  /** `path` and its missing parents, empty, open to anyone. */
  async mkdirp(path) {
    const parts = path.split('/').slice(1);
    for (let i = 1; i <= parts.length; i += 1) {
      const at = `/${parts.slice(0, i).join('/')}`;
      const world = new Jute().string(at).buffer(null).int(1).int(31).string('world').string('anyone').int(0);
      try {
        await this.request('create', world, `create ${at}`);
      } catch (err) {
        if (err.err !== NODEEXISTS) throw err;
      }
    }
  }

  /** `path`'s ACL: `[{ perms, scheme, id }]`. */
  async getACL(path) {
    const answer = await this.request('getACL', new Jute().string(path), `getACL ${path}`);
    return Array.from({ length: answer.int() }, () => ({ perms: answer.int(), scheme: answer.string(), id: answer.string() }));
  }

  close() {
    this.#socket.end(new Jute().int(this.#xid + 1).int(OPS.closeSession).frame());
  }
}

/** `use(raw)` over a raw session on `hosts` (authenticated when `credentials` are given), then closed. */
async function withRaw(hosts, use, credentials = null) {
  const raw = await RawZooKeeper.open(hosts);
  try {
    if (credentials !== null) await raw.auth(...credentials);
    return await use(raw);
  } finally {
    raw.close();
  }
}

const epochOf = (data) => JSON.parse(data.toString()).epoch;
const throwsCode = (code) => (err) => err instanceof ShardrouteError && err.code === code;
const zooKeeperError = (code) => (err) => err instanceof ZooKeeperError && err.code === code;

describe('shardroute/zookeeper against a real ZooKeeper', { timeout: 240000 }, () => {
  let root;
  let server;
  let n = 0;
  /** A fresh node path per test. */
  const path = () => `/test/topology-${(n += 1)}`;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'shardroute-zk-node-'));
    server = await standalone(join(root, 'standalone'));
  });

  after(async () => {
    await Promise.all([...started].map((each) => each.kill()));
    rmSync(root, { recursive: true, force: true });
  });

  test('the follower sees the node created, then each change, the revision the write\'s mzxid', async () => {
    const at = path();
    const changes = [];
    const follower = await ZooKeeperFollower.start(server.hosts, at, { onChange: (f) => changes.push(f.router.epoch) });
    try {
      assert.equal(follower.router, null); // no node yet: its creation is watched
      assert.equal(follower.revision, null);
      assert.equal(await follower.refresh(), null);
      for (const epoch of [1, 2, 3]) {
        const revision = await publish(server.hosts, at, document(epoch, 2 + epoch));
        assert.equal(typeof revision, 'bigint');
        assert.equal(await follower.waitForEpoch(epoch, LONG), true, `epoch ${epoch}`);
        assert.equal(follower.revision, revision);
        const { data, stat } = await withRaw(server.hosts, (raw) => raw.getData(at));
        assert.equal(stat.mzxid, revision);
        assert.equal(epochOf(data), epoch);
      }
      assert.deepEqual(changes, [1n, 2n, 3n]);
      assert.equal(follower.router, follower.router, 'one Router until the next is installed');
      assert.equal(JSON.parse(follower.router.toJson()).nodes.length, 5);
      assert.equal(follower.member, server.hosts);
      const { stats } = follower;
      assert.equal(stats.installed, 3n);
      assert.deepEqual(stats.refused, {});
      assert.ok(stats.events >= 3n, `${stats.events} events`);
    } finally {
      follower.close();
    }
  });

  test('publish creates the node and its parents, then writes with setData at the version read', async () => {
    const at = `${path()}/deeper/still`;
    const first = await publish(server.hosts, at, document(1));
    const created = await withRaw(server.hosts, (raw) => raw.getData(at));
    assert.equal(created.stat.version, 0);
    assert.equal(created.stat.mzxid, first);
    assert.deepEqual(await withRaw(server.hosts, (raw) => raw.getACL(at)), [{ perms: 31, scheme: 'world', id: 'anyone' }]);
    const second = await publish(server.hosts, at, JSON.stringify(document(2)));
    const written = await withRaw(server.hosts, (raw) => raw.getData(at));
    assert.equal(written.stat.version, 1);
    assert.equal(written.stat.mzxid, second);
    assert.ok(second > first);
    assert.equal(epochOf(written.data), 2);
  });

  test('publish refuses what a follower would not follow, and leaves the node', async () => {
    const at = path();
    await publish(server.hosts, at, document(7));
    for (const epoch of [7, 9, 6]) {
      await assert.rejects(publish(server.hosts, at, document(epoch)), throwsCode('stale_epoch'));
    }
    await assert.rejects(publish(server.hosts, at, { ...document(8), strategy: { type: 'nope' } }), throwsCode('invalid_topology'));
    assert.equal(epochOf((await withRaw(server.hosts, (raw) => raw.getData(at))).data), 7);
  });

  test('a write between publish\'s read and its setData is a conflict, never overwritten', async () => {
    const at = path();
    await publish(server.hosts, at, document(1));
    // Publishers race until one read lands before the other's write (each round: both
    // read epoch k, one writes k + 1, the other's setData at the old version fails).
    let conflicts = 0;
    for (let epoch = 2; epoch < 40 && conflicts === 0; epoch += 1) {
      const results = await Promise.allSettled([publish(server.hosts, at, document(epoch, 3)), publish(server.hosts, at, document(epoch, 4))]);
      const lost = results.filter((result) => result.status === 'rejected').map((result) => result.reason);
      assert.equal(lost.length, 1, String(lost));
      assert.ok(zooKeeperError('conflict')(lost[0]) || throwsCode('stale_epoch')(lost[0]), String(lost[0]));
      if (zooKeeperError('conflict')(lost[0])) conflicts += 1;
    }
    assert.equal(conflicts, 1, 'no round of two publishers ended in a conflict');
  });

  test('publish with replace repairs a stored value followers refuse, above its epoch', async () => {
    const at = path();
    await publish(server.hosts, at, document(1));
    const refusals = [];
    const follower = await ZooKeeperFollower.start(server.hosts, at, { onRefused: (_, offered) => refusals.push(offered.code) });
    try {
      // Valid JSON with an epoch, but no topology a follower installs.
      await withRaw(server.hosts, (raw) => raw.setData(at, Buffer.from(JSON.stringify({ ...document(7), strategy: { type: 'nope' } }))));
      await until(() => refusals.length > 0, () => 'the damaged value was not refused');
      assert.equal(follower.router.epoch, 1n);
      await assert.rejects(publish(server.hosts, at, document(2)), throwsCode('invalid_topology')); // not overwritten
      await assert.rejects(publish(server.hosts, at, document(7), { replace: true }), throwsCode('stale_epoch'));
      assert.equal(JSON.parse((await withRaw(server.hosts, (raw) => raw.getData(at))).data).strategy.type, 'nope');
      const revision = await publish(server.hosts, at, document(8, 4), { replace: true });
      assert.equal((await withRaw(server.hosts, (raw) => raw.getData(at))).stat.mzxid, revision);
      assert.equal(await follower.waitForEpoch(8, LONG), true);
      // Repaired: the next publish is the plain one again.
      await publish(server.hosts, at, document(9));
      assert.equal(await follower.waitForEpoch(9, LONG), true);
    } finally {
      follower.close();
    }
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
        await withRaw(server.hosts, (raw) => raw.setData(at, value));
        const offered = await follower.refresh();
        assert.equal(offered.kind, 'refused');
        assert.equal(offered.code, code);
        assert.equal(follower.router.epoch, 4n);
      }
      const dictionary = encodeDictionary({
        format: 'shardroute/1', epoch: 5, nodes: [{ id: 'a' }, { id: 'b' }],
        strategy: { type: 'vbucket', vbuckets: 4, map: [['a'], ['b'], ['a'], ['b']] },
      });
      await withRaw(server.hosts, (raw) => raw.setData(at, Buffer.from(dictionary)));
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
    await withRaw(server.hosts, (raw) => raw.mkdirp(at));
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
    await assert.rejects(ZooKeeperFollower.start(`127.0.0.1:${nobody}`, '/x', { sessionTimeoutMs: 1000 }), zooKeeperError('unreachable'));
    await assert.rejects(publish(`127.0.0.1:${nobody}`, '/x', document(1)), zooKeeperError('unreachable'));
  });

  test('a server that is not ZooKeeper (a frame past the limit) is malformed, and the shell closes its connection', async () => {
    let asked = 0;
    let hungUp = false;
    const hostile = createServer((socket) => {
      socket.on('data', (data) => {
        asked += data.length;
        socket.write(Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2, 3])); // a length of 2^31 - 1, then a little
      });
      socket.on('close', () => { hungUp = true; });
    });
    await new Promise((resolve) => { hostile.listen(0, '127.0.0.1', resolve); }); // ports: ok (it listens until the end)
    try {
      const hosts = `127.0.0.1:${hostile.address().port}`;
      await assert.rejects(ZooKeeperFollower.start(hosts, '/x'), (err) => zooKeeperError('malformed')(err) && /2147483647/.test(err.message));
      assert.equal(asked, 49); // a ConnectRequest, nothing after the refusal
      await until(() => hungUp, () => 'the connection was left open');
    } finally {
      hostile.close();
    }
  });

  test('digest auth: publish creates the node with the auth ACL; a follower without the credentials is unauthenticated', async () => {
    const at = path().replace('/test/', '/secure/');
    const credentials = { user: 'app', password: 'secret' };
    const first = await publish(server.hosts, at, document(1), credentials);
    const digest = createHash('sha1').update('app:secret').digest('base64');
    assert.deepEqual(await withRaw(server.hosts, (raw) => raw.getACL(at), ['app', 'secret']), [{ perms: 31, scheme: 'digest', id: `app:${digest}` }]);
    await assert.rejects(withRaw(server.hosts, (raw) => raw.getData(at)), (err) => err instanceof RawError && err.err === -102);

    await assert.rejects(ZooKeeperFollower.start(server.hosts, at), zooKeeperError('unauthenticated'));
    await assert.rejects(ZooKeeperFollower.start(server.hosts, at, { user: 'app', password: 'wrong' }), zooKeeperError('unauthenticated'));
    await assert.rejects(publish(server.hosts, at, document(2)), zooKeeperError('unauthenticated'));

    const follower = await ZooKeeperFollower.start(server.hosts, at, credentials);
    try {
      assert.equal(follower.router.epoch, 1n);
      assert.equal(follower.revision, first);
      await publish(server.hosts, at, document(2), credentials);
      assert.equal(await follower.waitForEpoch(2, LONG), true);
      assert.equal(follower.router.epoch, 2n);
    } finally {
      follower.close();
    }
  });

  test('a paused member (SIGSTOP) is lost and reported, and the follower comes back after it', async () => {
    const at = path();
    await publish(server.hosts, at, document(1));
    const errors = [];
    const follower = await ZooKeeperFollower.start(server.hosts, at, {
      config: { reconnect_first_ms: 50, reconnect_max_ms: 400 }, sessionTimeoutMs: 1500, onError: (err) => errors.push(err),
    });
    try {
      process.kill(server.child.pid, 'SIGSTOP');
      try {
        await until(() => errors.length > 0, () => 'no loss reported while the only member was paused');
        assert.ok(errors.every(zooKeeperError('unreachable')), String(errors));
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
      await server.kill();
      await assert.rejects(follower.refresh(), zooKeeperError('unreachable'));
      assert.equal(follower.router.epoch, 1n); // kept while ZooKeeper is away
      await server.start();
      await publish(server.hosts, at, document(2));
      assert.equal(await follower.waitForEpoch(2, LONG), true, `no epoch 2 after the restart: ${errors}`);
      assert.ok(follower.stats.disconnects >= 1n);
      assert.ok(errors.length >= 1 && errors.every(zooKeeperError('unreachable')), String(errors));
    } finally {
      follower.close();
    }
  });

  test('a stopped member of an ensemble: the follower moves to the next and follows on', async () => {
    const members = await ensemble(join(root, 'ensemble'));
    try {
      // The follower starts on a member that does not lead, so the other two keep a quorum.
      const modes = await Promise.all(members.map((member) => member.mode()));
      const order = [...members.filter((_, i) => modes[i] !== 'leader'), ...members.filter((_, i) => modes[i] === 'leader')];
      const hosts = order.map((member) => member.hosts).join(',');
      const at = '/ensemble/topology';
      await publish(hosts, at, document(1));
      const errors = [];
      const follower = await ZooKeeperFollower.start(hosts, at, {
        config: { reconnect_first_ms: 50, reconnect_max_ms: 400 }, sessionTimeoutMs: 2000, onError: (err) => errors.push(err),
      });
      try {
        assert.equal(follower.member, order[0].hosts);
        assert.equal(follower.router.epoch, 1n);
        process.kill(order[0].child.pid, 'SIGSTOP');
        try {
          await until(() => follower.member !== order[0].hosts,
            () => `still on ${follower.member} (errors: ${errors})`);
          const rest = order.slice(1).map((member) => member.hosts).join(',');
          const revision = await publish(rest, at, document(2));
          assert.equal(await follower.waitForEpoch(2, LONG), true, `no epoch 2 from the other members: ${errors}`);
          assert.equal(follower.revision, revision);
          assert.notEqual(follower.member, order[0].hosts);
          // Another member answered: the source was never lost as a whole.
          assert.deepEqual(errors, []);
        } finally {
          process.kill(order[0].child.pid, 'SIGCONT');
        }
      } finally {
        follower.close();
      }
    } finally {
      await Promise.all(members.map((member) => member.kill()));
    }
  });
});
