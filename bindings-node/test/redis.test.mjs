// shardroute/redis against a real Redis Cluster: 3 redis-server primaries in cluster mode,
// each on two reserved 127.0.0.1 ports (its port and its cluster bus, --cluster-port;
// bindings-wasm/test/edge/ports.mjs: fresh ones while one is taken), in a temp dir,
// formed by `redis-cli --cluster create`, and stopped by PID when the tests end, also on
// failure. Needs Debian's redis-server and redis-cli (scripts/setup.sh installs them).
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { ClusterClient, ConnectionError, TooManyRedirects } from 'shardroute/redis';

import { reservePorts, startOnPorts } from '../../bindings-wasm/test/edge/ports.mjs';

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
    // The refresh the MOVED asked for runs before the next command.
    assert.equal(await client.get(keys[0]), 'a');
    assert.deepEqual([client.stats.moved, client.stats.refreshes], [1, 1], 'the table is current after the MOVED');

    // A client that may follow no redirect gives up at the first.
    await assert.rejects(strict.get(keys[0]), (err) => err instanceof TooManyRedirects && /MOVED/.test(err.message));
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
