// shardroute/redis against a real Redis Cluster: 3 redis-server primaries in cluster mode,
// each on two reserved 127.0.0.1 ports (its port and its cluster bus, --cluster-port;
// bindings-wasm/test/edge/ports.mjs: fresh ones while one is taken), in a temp dir,
// formed by `redis-cli --cluster create`, and stopped by PID when the tests end, also on
// failure. Needs Debian's redis-server and redis-cli (scripts/setup.sh installs them).
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { sessionDefaults } from 'shardroute';
import { ClusterClient, ConnectionError, TooManyRedirects } from 'shardroute/redis';

import { reservePorts, startOnPorts } from '../../bindings-wasm/test/edge/ports.mjs';

// The ioredis that shardroute/redis loads (its connections' prototype).
const Redis = createRequire(import.meta.url)('ioredis');

const packageDir = fileURLToPath(new URL('..', import.meta.url));

function cli(port, ...args) {
  return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' }).trim();
}

/** 3 primaries, no replicas; `stop()` ends each process by its PID and removes the directory. */
async function startCluster() {
  const root = mkdtempSync(join(tmpdir(), 'shardroute-redis-test-'));
  const servers = [];
  const stop = () => {
    for (const { process: child } of servers) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', stop);
  try {
    for (let i = 0; i < 3; i += 1) {
      // Its port and its cluster bus's, reserved; again on fresh ones when one was taken.
      await startOnPorts(2, async ([port, bus]) => {
        const dir = join(root, String(port));
        mkdirSync(dir);
        const child = spawn('redis-server', [
          '--port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'no', '--cluster-enabled', 'yes',
          '--cluster-port', String(bus), '--cluster-config-file', 'nodes.conf', '--save', '', '--appendonly', 'no',
          '--dir', dir, '--logfile', join(dir, 'redis.log'),
        ], { stdio: 'ignore' });
        const server = { port, address: `127.0.0.1:${port}`, process: child };
        servers.push(server);
        const deadline = Date.now() + 20000;
        while (spawnSync('redis-cli', ['-p', String(port), 'PING'], { encoding: 'utf8' }).stdout.trim() !== 'PONG') {
          if (child.exitCode !== null || Date.now() > deadline) {
            if (child.exitCode === null) child.kill('SIGKILL');
            servers.splice(servers.indexOf(server), 1);
            let log = '';
            try {
              log = readFileSync(join(dir, 'redis.log'), 'utf8').slice(-3000);
            } catch {
              // No log written.
            }
            rmSync(dir, { recursive: true, force: true });
            throw new Error(`redis-server on ${port} did not start:\n${log}`);
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      });
    }
    execFileSync('redis-cli', ['--cluster', 'create', ...servers.map((s) => s.address), '--cluster-yes'],
      { stdio: 'ignore' });
    const deadline = Date.now() + 30000;
    while (!servers.every(({ port }) => cli(port, 'CLUSTER', 'INFO').includes('cluster_state:ok'))) {
      if (Date.now() > deadline) throw new Error('the cluster did not form');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const server of servers) server.id = cli(server.port, 'CLUSTER', 'MYID');
    return { servers, stop };
  } catch (err) {
    stop();
    throw err;
  }
}

/** The commands (`"GET key"`) of RESP arrays of bulk strings, as clients write them. */
function commandsOf(bytes) {
  const commands = [];
  const line = (at) => {
    const end = bytes.indexOf('\r\n', at);
    return [bytes.toString('latin1', at + 1, end), end + 2];
  };
  for (let at = 0; at < bytes.length;) {
    let [count, next] = line(at);
    const words = [];
    for (let i = 0; i < Number(count); i += 1) {
      const [length, start] = line(next);
      words.push(bytes.toString('utf8', start, start + Number(length)));
      next = start + Number(length) + 2;
    }
    commands.push(words.join(' '));
    at = next;
  }
  return commands;
}

/** What the connection handshakes and refreshes write, left out of `watchWrites`' lists. */
const UNWATCHED = /^(CLIENT SETINFO|CLUSTER SHARDS|READONLY)/i;

/**
 * The writes to the sockets of this process from now until `stop()` (one `_write` or
 * `_writev` of a socket, that is one write to the kernel): `of(port)` lists each write's
 * commands to that port, in order.
 */
function watchWrites() {
  const { _write: write, _writev: writev } = net.Socket.prototype;
  const writes = [];
  const record = (socket, chunks) => {
    const bytes = Buffer.concat(chunks.map((chunk) => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))));
    const commands = commandsOf(bytes).filter((command) => !UNWATCHED.test(command));
    if (commands.length > 0) writes.push({ port: socket.remotePort, commands });
  };
  net.Socket.prototype._write = function watched(chunk, encoding, callback) {
    record(this, [chunk]);
    return write.call(this, chunk, encoding, callback);
  };
  net.Socket.prototype._writev = function watched(chunks, callback) {
    record(this, chunks.map(({ chunk }) => chunk));
    return writev.call(this, chunks, callback);
  };
  return {
    writes,
    of: (port) => writes.filter((entry) => entry.port === port).map(({ commands }) => commands),
    stop: () => Object.assign(net.Socket.prototype, { _write: write, _writev: writev }),
  };
}

/** Polls `check` every 10 ms until it holds (a state of the servers, not a time). */
async function until(what, check) {
  const deadline = Date.now() + 10000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The server's id of the connection that runs `command` (lower case) on `port` now, or undefined. */
function clientRunning(port, command) {
  const line = cli(port, 'CLIENT', 'LIST').split('\n').find((entry) => entry.includes(` cmd=${command} `));
  return line && /(?:^|\s)id=(\d+)/.exec(line)[1];
}

describe('shardroute/redis on a real cluster', () => {
  let cluster;
  const clients = [];
  const seeds = () => cluster.servers.map((server) => server.address);
  async function connect(options) {
    const client = await ClusterClient.connect(seeds(), options);
    clients.push(client);
    return client;
  }
  /** The server that owns `key` for the client's current table. */
  const ownerOf = (client, key) => cluster.servers.find((s) => s.address === client.addressOf(client.router.node(key)));

  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
    cluster?.stop();
  });

  test('a fresh table sends every key to its node: no MOVED, no ASK', async () => {
    const client = await connect();
    assert.equal(client.stats.refreshes, 1);
    assert.equal(client.router.epoch, 1n);
    // Reading the first table was one command (it sent nothing).
    assert.equal(client.stats.commands, 1);
    client.stats.reset();
    const keys = Array.from({ length: 300 }, (_, i) => `user:${i}`);
    for (const key of keys) assert.equal(await client.set(key, `v${key}`), 'OK');
    for (const key of keys) assert.equal(await client.get(key), `v${key}`);
    assert.deepEqual([client.stats.moved, client.stats.ask, client.stats.errors], [0, 0, 0]);
    assert.equal(client.stats.commands, 600);
    // Every node got its share, and holds the keys the table gives it.
    const owners = new Set(keys.map((key) => ownerOf(client, key).port));
    assert.equal(owners.size, 3);
    for (const key of keys.slice(0, 20)) assert.equal(cli(ownerOf(client, key).port, 'GET', key), `v${key}`);
    assert.equal(await client.del('user:0'), 1);
    assert.equal(await client.get('user:0'), null);
    client.stats.reset();
    assert.deepEqual([client.stats.commands, client.stats.errorKinds], [0, {}]);
  });

  test('a slot moved by hand gives ASK, then MOVED; the client follows both', async () => {
    // Every MOVED refreshes here (the default allows one refresh per 200 ms).
    const client = await connect({ config: { refresh_interval_ms: 0 } });
    const strict = await connect({ config: { max_redirects: 0 } });
    const keys = ['{moving}:a', '{moving}:b'];
    await client.mset({ [keys[0]]: 'a', [keys[1]]: 'b' });
    const slot = client.router.route(keys[0]);
    const source = ownerOf(client, keys[0]);
    const target = cluster.servers.find((server) => server !== source);
    cli(target.port, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', source.id);
    cli(source.port, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', target.id);
    cli(source.port, 'MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'KEYS', keys[0]);
    client.stats.reset();

    // The migrated key: ASK to the target, once; the other is still on the source.
    assert.equal(await client.get(keys[0]), 'a');
    assert.equal(await client.get(keys[1]), 'b');
    assert.deepEqual([client.stats.ask, client.stats.moved, client.stats.longestRedirectChain], [1, 0, 1]);
    // In a pipeline, the redirected GET alone takes the careful path.
    assert.deepEqual(await client.pipelineGet([keys[1], 'user:1', keys[0]]), ['b', 'vuser:1', 'a']);
    assert.equal(client.stats.ask, 2);
    const epoch = client.router.epoch;
    assert.equal(client.router.node(keys[0]), client.router.node(keys[1]), 'ASK changes nothing');

    cli(source.port, 'MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'KEYS', keys[1]);
    for (const server of [target, source, ...cluster.servers.filter((s) => s !== source && s !== target)]) {
      cli(server.port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id);
    }
    client.stats.reset();
    assert.equal(await client.get(keys[1]), 'b');
    // The MOVED updated the slot and the command was resent there at once.
    assert.deepEqual([client.stats.moved, client.stats.ask, client.stats.refreshes], [1, 0, 0]);
    assert.equal(ownerOf(client, keys[0]), target);
    assert.ok(client.router.epoch > epoch);
    // The refresh the MOVED asked for is handed to the next command, which does not wait
    // for it (ioredis' way): here no CLUSTER SHARDS is answered before that command's reply
    // (or before a third one is asked, which the old way came to after each one stalled).
    const shards = { asked: 0 };
    let open;
    const gate = new Promise((resolve) => {
      open = resolve;
    });
    const { callBuffer } = Redis.prototype;
    Redis.prototype.callBuffer = function held(...args) {
      if (String(args[0]).toUpperCase() !== 'CLUSTER') return callBuffer.apply(this, args);
      shards.asked += 1;
      if (shards.asked >= 3) open();
      return gate.then(() => callBuffer.apply(this, args));
    };
    try {
      assert.equal(await client.get(keys[0]), 'a');
      open();
      assert.equal(await client.refresh(), true, 'the running refresh, joined');
    } finally {
      Redis.prototype.callBuffer = callBuffer;
    }
    assert.equal(shards.asked, 1, 'one CLUSTER SHARDS, answered after the command');
    assert.deepEqual([client.stats.moved, client.stats.refreshes], [1, 1], 'the table is current after it');

    // A client that may follow no redirect gives up at the first.
    await assert.rejects(strict.get(keys[0]), (err) => err instanceof TooManyRedirects && /MOVED/.test(err.message));
  });

  test('auto-pipelining: commands issued together go to each node as one write, each with its own reply', async () => {
    const client = await connect();
    const { pipeline_max_commands: most } = sessionDefaults();
    const keys = Array.from({ length: 300 }, (_, i) => `piped:${i}`);
    const perNode = new Map();
    for (const key of keys) perNode.set(ownerOf(client, key).port, (perNode.get(ownerOf(client, key).port) ?? 0) + 1);
    const writes = watchWrites();
    let counts;
    try {
      // INCRBY of a fresh key answers its own increment: every reply tells whose it is.
      counts = await Promise.all(keys.map((key, i) => client.execute(['INCRBY', key, i + 1], { key })));
    } finally {
      writes.stop();
    }
    assert.deepEqual(counts, keys.map((_, i) => i + 1));
    // Per node, the first command alone (its connection was idle: written at once), then
    // the rest in one write (more only past pipeline_max_commands), in the order issued.
    for (const [port, n] of perNode) {
      const issued = keys.map((key, i) => `INCRBY ${key} ${i + 1}`).filter((_, i) => ownerOf(client, keys[i]).port === port);
      assert.equal(writes.of(port).length, 1 + Math.ceil((n - 1) / most));
      assert.equal(writes.of(port)[0].length, 1);
      assert.deepEqual(writes.of(port).flat(), issued);
    }
    assert.deepEqual(await Promise.all(keys.map((key) => client.get(key))), counts.map(String));
    assert.deepEqual([client.stats.moved, client.stats.ask, client.stats.errors], [0, 0, 0]);
  });

  test('auto-pipelining: a long queue goes out pipeline_max_commands at a time, in order', async () => {
    const client = await connect({ config: { pipeline_max_commands: 100 } });
    const key = '{p-long}:counter';
    const port = ownerOf(client, key).port;
    const writes = watchWrites();
    let counts;
    try {
      // One node, 2,500 commands at once: the first alone (an idle connection), then 25
      // writes of the rest, one after the other (two in flight).
      counts = await Promise.all(Array.from({ length: 2500 }, () => client.execute(['INCR', key], { key })));
    } finally {
      writes.stop();
    }
    assert.deepEqual(counts, Array.from({ length: 2500 }, (_, i) => i + 1), 'each its own reply, in the order issued');
    assert.deepEqual(writes.of(port).map((commands) => commands.length), [1, ...Array.from({ length: 24 }, () => 100), 99]);
  });

  test('auto-pipelining: a MOVED and two ASKs in the middle of a pipeline are followed per command', async () => {
    const client = await connect();
    // Keys of one node in three slots: one slot moves to another node (MOVED), one is
    // migrating (ASK for its migrated keys), one stays.
    const source = ownerOf(client, '{p-stay}:1');
    const target = cluster.servers.find((server) => server !== source);
    const tag = (prefix) => {
      for (let i = 0; ; i += 1) if (ownerOf(client, `{${prefix}${i}}`) === source) return `{${prefix}${i}}`;
    };
    const [moving, asking] = [tag('p-moved'), tag('p-ask')];
    const stay = '{p-stay}:1';
    const keys = [stay, `${moving}:a`, `${asking}:a`, `${asking}:b`, `${asking}:c`];
    await Promise.all(keys.map((key) => client.set(key, `v-${key}`)));
    const movedSlot = String(client.router.route(moving));
    const askSlot = String(client.router.route(asking));
    // The moved slot: migrated by hand and given to the target everywhere; the client's table is stale.
    cli(target.port, 'CLUSTER', 'SETSLOT', movedSlot, 'IMPORTING', source.id);
    cli(source.port, 'CLUSTER', 'SETSLOT', movedSlot, 'MIGRATING', target.id);
    cli(source.port, 'MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'KEYS', `${moving}:a`);
    for (const server of cluster.servers) cli(server.port, 'CLUSTER', 'SETSLOT', movedSlot, 'NODE', target.id);
    // The asking slot: two of its keys migrated, one still on the source.
    cli(target.port, 'CLUSTER', 'SETSLOT', askSlot, 'IMPORTING', source.id);
    cli(source.port, 'CLUSTER', 'SETSLOT', askSlot, 'MIGRATING', target.id);
    cli(source.port, 'MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'KEYS', `${asking}:a`, `${asking}:c`);
    client.stats.reset();

    const writes = watchWrites();
    let values;
    try {
      values = await Promise.all(keys.map((key) => client.get(key)));
    } finally {
      writes.stop();
    }
    assert.deepEqual(values, keys.map((key) => `v-${key}`));
    assert.deepEqual([client.stats.moved, client.stats.ask, client.stats.errors], [1, 2, 0]);
    const get = (...names) => names.map((key) => `GET ${key}`);
    // To the source: the first alone (an idle connection), the other four in one write; the
    // redirected three to the target: the moved one alone (idle there), the asked two in one
    // write behind it (after ASKING for each).
    assert.deepEqual(writes.of(source.port), [get(stay), get(...keys.slice(1))]);
    assert.deepEqual(writes.of(target.port), [get(`${moving}:a`), ['ASKING', ...get(`${asking}:a`), 'ASKING', ...get(`${asking}:c`)]]);
    // The moved slot is the target's in the client's table now; the asked one still the source's.
    assert.equal(ownerOf(client, moving), target);
    assert.equal(ownerOf(client, asking), source);

    // The asking slot finishes its move.
    cli(source.port, 'MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'KEYS', `${asking}:b`);
    for (const server of cluster.servers) cli(server.port, 'CLUSTER', 'SETSLOT', askSlot, 'NODE', target.id);
  });

  test('auto-pipelining: a connection killed with replies outstanding fails those; what waited is written anew', async () => {
    // Two writes in flight per connection: what is issued while they are out waits.
    const client = await connect({ config: { pipeline_max_writes: 2 } });
    const list = '{p-killed}:list';
    const keys = Array.from({ length: 5 }, (_, i) => `{p-killed}:${i}`);
    const others = keys.map((key) => `${key}:later`);
    await Promise.all(keys.map((key) => client.set(key, `v-${key}`)));
    const owner = ownerOf(client, list);
    client.stats.reset();
    const writes = watchWrites();
    let popped;
    let values;
    let later;
    try {
      // The BLPOP (the server holds it until an element comes), written alone at once, and
      // the GETs behind it in a second write, whose replies cannot come before its.
      const blocked = client.execute(['BLPOP', list, '0'], { key: list });
      const gets = keys.map((key) => client.get(key));
      await until('the BLPOP blocks', () => clientRunning(owner.port, 'blpop') !== undefined);
      // A turn later (the BLPOP, written at once, may block before this turn's flush).
      await new Promise((resolve) => setImmediate(resolve));
      // Issued while both writes are in flight: they wait in the queue.
      const sets = others.map((key) => client.set(key, `w-${key}`));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(writes.of(owner.port).length, 2, 'nothing written while the writes are in flight');
      cli(owner.port, 'CLIENT', 'KILL', 'ID', clientRunning(owner.port, 'blpop'));
      cli(owner.port, 'RPUSH', list, 'x');
      [popped, values, later] = await Promise.all([blocked, Promise.all(gets), Promise.all(sets)]);
    } finally {
      writes.stop();
    }
    assert.deepEqual(popped, [list, 'x']);
    assert.deepEqual(values, keys.map((key) => `v-${key}`));
    assert.deepEqual(later, keys.map(() => 'OK'));
    assert.deepEqual(writes.of(owner.port)[0], [`BLPOP ${list} 0`]);
    assert.deepEqual(writes.of(owner.port)[1], keys.map((key) => `GET ${key}`));
    assert.deepEqual(writes.of(owner.port)[2].slice(0, others.length), others.map((key) => `SET ${key} w-${key}`),
      'the queued ones first, on the new connection');
    // The six unanswered ones failed once each (a reset) and were sent again; the queued
    // ones never failed.
    assert.deepEqual(client.stats.errorKinds, { reset: 6 });
    assert.deepEqual(await Promise.all(others.map((key) => client.get(key))), others.map((key) => `w-${key}`));
  });

  test('auto-pipelining: a command abandoned in flight does not take the queued ones with it', async () => {
    // The BLPOP times out: the session abandons it (its connection is closed) and sends
    // it again. The GETs queued behind it were issued later, so their time is not up: they
    // are written on a new connection and answered.
    const client = await connect({ config: { command_timeout_ms: 1000, stall_ms: 0, pipeline_max_writes: 1 } });
    const list = '{p-abandoned}:list';
    const keys = Array.from({ length: 3 }, (_, i) => `{p-abandoned}:${i}`);
    await Promise.all(keys.map((key) => client.set(key, `v-${key}`)));
    const owner = ownerOf(client, list);
    client.stats.reset();
    const writes = watchWrites();
    let values;
    let popped;
    try {
      const blocked = client.execute(['BLPOP', list, '0'], { key: list });
      await until('the BLPOP blocks', () => clientRunning(owner.port, 'blpop') !== undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
      values = await Promise.all(keys.map((key) => client.get(key)));
      cli(owner.port, 'RPUSH', list, 'x');
      popped = await blocked;
    } finally {
      writes.stop();
    }
    assert.deepEqual(values, keys.map((key) => `v-${key}`));
    assert.deepEqual(popped, [list, 'x']);
    // The BLPOP alone; after its timeout the queued GETs, on a new connection (the BLPOP
    // sent again with them or after them).
    const [first, second, ...rest] = writes.of(owner.port);
    assert.deepEqual(first, [`BLPOP ${list} 0`]);
    assert.deepEqual(second.slice(0, keys.length), keys.map((key) => `GET ${key}`));
    assert.deepEqual([...second.slice(keys.length), ...rest.flat()], [`BLPOP ${list} 0`]);
    assert.deepEqual(client.stats.errorKinds, { timeout: 1 }, 'the queued GETs never failed');
  });

  test('auto-pipelining: a command given up leaves its connection open while others written on it are awaited', async () => {
    // Two writes in flight: the BLPOP alone, then GETs issued later (behind it on the
    // server). The BLPOP's time is up first: it is given up (and sent again), but the
    // connection stays, and the GETs' replies come on it once the BLPOP is answered.
    const client = await connect({ config: { command_timeout_ms: 1000, stall_ms: 0, pipeline_max_writes: 2 } });
    const list = '{p-given-up}:list';
    const keys = Array.from({ length: 3 }, (_, i) => `{p-given-up}:${i}`);
    await Promise.all(keys.map((key) => client.set(key, `v-${key}`)));
    const owner = ownerOf(client, list);
    client.stats.reset();
    const writes = watchWrites();
    let values;
    let popped;
    try {
      const blocked = client.execute(['BLPOP', list, '0'], { key: list });
      await until('the BLPOP blocks', () => clientRunning(owner.port, 'blpop') !== undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const gets = Promise.all(keys.map((key) => client.get(key)));
      await until('the BLPOP is given up', () => client.stats.errorKinds.timeout === 1);
      // The first BLPOP (given up, its reply dropped) pops x; the one sent again pops y.
      cli(owner.port, 'RPUSH', list, 'x', 'y');
      [values, popped] = await Promise.all([gets, blocked]);
    } finally {
      writes.stop();
    }
    assert.deepEqual(values, keys.map((key) => `v-${key}`));
    assert.deepEqual(popped, [list, 'y']);
    assert.deepEqual(client.stats.errorKinds, { timeout: 1 }, 'the GETs did not fail: their connection stayed');
    assert.deepEqual(writes.of(owner.port), [[`BLPOP ${list} 0`], keys.map((key) => `GET ${key}`), [`BLPOP ${list} 0`]]);
  });

  test('auto-pipelining: close() writes and answers the commands issued before it', async () => {
    // Its connections carry a name (an ioredis option: CLIENT SETNAME), to be found on the servers.
    const client = await connect({ connectionName: 'p-closing' });
    const keys = Array.from({ length: 20 }, (_, i) => `p-closing:${i}`);
    // Not awaited: still queued (a flush is due at the end of this turn) when close() begins.
    const sets = keys.map((key) => client.set(key, 'before close'));
    await client.close();
    assert.deepEqual(await Promise.all(sets), keys.map(() => 'OK'));
    assert.deepEqual([client.stats.errors, client.stats.errorKinds], [0, {}], 'none was written after its QUIT');
    for (const key of keys) assert.equal(cli(ownerOf(client, key).port, 'GET', key), 'before close');
    for (const { port } of cluster.servers) {
      assert.doesNotMatch(cli(port, 'CLIENT', 'LIST'), / name=p-closing /, 'no connection made after close()');
    }
  });

  test('auto_pipeline false: every command is written on its own, each with its own reply', async () => {
    const client = await connect({ config: { auto_pipeline: false } });
    const keys = Array.from({ length: 100 }, (_, i) => `unpiped:${i}`);
    const writes = watchWrites();
    let counts;
    try {
      counts = await Promise.all(keys.map((key, i) => client.execute(['INCRBY', key, i + 1], { key })));
    } finally {
      writes.stop();
    }
    assert.deepEqual(counts, keys.map((_, i) => i + 1));
    // One write per command.
    assert.deepEqual(writes.writes.map(({ commands }) => commands.length), keys.map(() => 1));
    assert.deepEqual(writes.writes.flatMap(({ commands }) => commands).sort(), keys.map((key, i) => `INCRBY ${key} ${i + 1}`).sort());
  });

  test('mset needs one slot: cross_slot otherwise', async () => {
    const client = await connect();
    assert.equal(await client.mset(new Map([['{tag}:1', 'x'], ['{tag}:2', 'y']])), 'OK');
    assert.deepEqual(await client.mget(['{tag}:2', '{tag}:1']), ['y', 'x']);
    const before = client.stats.commands;
    await assert.rejects(client.mset({ 'user:1': 'a', 'user:2': 'b' }), { name: 'ShardrouteError', code: 'cross_slot' });
    assert.equal(client.stats.commands, before, 'a refused mset sends nothing');
  });

  test('mget, pipelineGet and pipelineSet keep key order across nodes', async () => {
    const client = await connect();
    const keys = Array.from({ length: 200 }, (_, i) => `order:${i}`);
    const replies = await client.pipelineSet(keys.map((key, i) => [key, String(i)]));
    assert.deepEqual(replies, keys.map(() => 'OK'));
    const expected = keys.map((_, i) => String(i));
    assert.deepEqual(await client.pipelineGet(keys), expected);
    assert.deepEqual(await client.mget(keys), expected);
    assert.deepEqual(await client.mget([...keys, 'order:missing']), [...expected, null]);
    assert.deepEqual([client.stats.moved, client.stats.ask, client.stats.errors], [0, 0, 0]);
    // Replica reads go over READONLY connections; with no replica, to the owner.
    const reader = await connect({ readFromReplicas: true });
    assert.deepEqual(await reader.pipelineGet(keys), expected);
    assert.deepEqual(await reader.mget(keys.slice(0, 5)), expected.slice(0, 5));
    assert.equal(await reader.get(keys[7]), '7');
    assert.deepEqual([reader.stats.moved, reader.stats.ask, reader.stats.errors], [0, 0, 0]);
  });

  test('setAndWait runs SET and WAIT on one connection', async () => {
    const client = await connect();
    // No replicas here: WAIT 1 times out and says none acknowledged; WAIT 0 needs none.
    assert.equal(await client.setAndWait('waited', 'w', 1, 50), 0);
    assert.equal(await client.setAndWait('waited', 'w2', 0, 50), 0);
    assert.equal(await client.get('waited'), 'w2');
  });

  test('a dead node fails fast, then the client gives up after the retry budget', async () => {
    const [port] = await reservePorts(1); // reserved for this run: nothing listens there
    const started = Date.now();
    const client = new ClusterClient([{ host: '127.0.0.1', port }], { config: { retry_budget_ms: 300 } });
    clients.push(client);
    await assert.rejects(client.get('k'), (err) => err instanceof ConnectionError && /CLUSTER SHARDS/.test(err.message));
    assert.ok(Date.now() - started < 5000, `gave up after ${Date.now() - started} ms`);
  });
});

test('without ioredis, importing shardroute/redis says to install it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardroute-no-ioredis-'));
  try {
    // Resolving 'ioredis' fails as it does in a project that lacks it.
    const hook = join(dir, 'no-ioredis.cjs');
    writeFileSync(hook, `
      const Module = require('node:module');
      const resolve = Module._resolveFilename;
      Module._resolveFilename = function (request, ...rest) {
        if (request === 'ioredis') {
          const err = new Error("Cannot find module 'ioredis'");
          err.code = 'MODULE_NOT_FOUND';
          throw err;
        }
        return resolve.call(this, request, ...rest);
      };`);
    const child = spawnSync(process.execPath, ['--require', hook, '--input-type=module', '--eval',
      "import('shardroute/redis').then(() => console.log('loaded'), (err) => console.log(err.message))"],
    { cwd: packageDir, encoding: 'utf8' });
    assert.equal(child.stdout.trim(),
      'shardroute/redis needs ioredis, an optional peer dependency of shardroute: npm install ioredis');
    // And with ioredis, both module systems load it.
    const loaded = spawnSync(process.execPath, ['-e', "console.log(typeof require('shardroute/redis').ClusterClient)"],
      { cwd: packageDir, encoding: 'utf8' });
    assert.equal(loaded.stdout.trim(), 'function');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
