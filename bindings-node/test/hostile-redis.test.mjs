// A hostile Redis Cluster node against shardroute/redis (issue 34, findings 1 and 8): a
// fake node started here on 127.0.0.1 (it listens on port 0 and is the client's seed)
// that speaks just enough RESP (CLUSTER SHARDS, PING, and the command under test) to
// name a node with bytes that are not UTF-8, to redirect to an address that cannot be
// split, and to answer the 974 KB CLUSTER SHARDS of finding 1. Invalid UTF-8 is refused,
// never installed with U+FFFD; a redirect the core cannot read is the core's
// `invalid_argument`; the 974 KB reply is refused in bounded memory (a child process's
// peak resident size is read back).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';

import * as shardroute from 'shardroute';
import { ClusterClient } from 'shardroute/redis';

const CONFIG = { command_timeout_ms: 1000, retry_budget_ms: 1500, refresh_interval_ms: 100 };

/** `value` in RESP2 (Buffers and strings as bulk strings, arrays, integers, null). */
export function resp(value) {
  if (typeof value === 'string') value = Buffer.from(value);
  if (Buffer.isBuffer(value)) return Buffer.concat([Buffer.from(`$${value.length}\r\n`), value, Buffer.from('\r\n')]);
  if (typeof value === 'number') return Buffer.from(`:${value}\r\n`);
  if (value === null) return Buffer.from('$-1\r\n');
  return Buffer.concat([Buffer.from(`*${value.length}\r\n`), ...value.map(resp)]);
}

/** CRC16-XMODEM, Redis Cluster's key hash: the slot of `key`. */
function slotOf(key) {
  let crc = 0;
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = (crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/** One node of a CLUSTER SHARDS reply, as RESP2's flat field list. */
export function nodeEntry(id, port, role = 'master') {
  return ['id', id, 'port', port, 'ip', '127.0.0.1', 'endpoint', '127.0.0.1', 'role', role, 'replication-offset', 0, 'health', 'online'];
}

/**
 * A fake node: `shards(port)` its CLUSTER SHARDS reply, `command(args)` the reply (a
 * Buffer) to any other command but PING (`+OK` when absent). Resolves once listening.
 */
export async function fakeNode(shards, command = null) {
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    let pending = Buffer.alloc(0);
    socket.on('data', (data) => {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        const parsed = readCommand(pending);
        if (parsed === null) return;
        pending = pending.subarray(parsed.used);
        const [name, sub] = parsed.args.map((arg) => arg.toString().toUpperCase());
        if (name === 'CLUSTER' && sub === 'SHARDS') socket.write(resp(shards(server.address().port)));
        else if (name === 'PING') socket.write('+PONG\r\n');
        else if (name === 'QUIT') socket.end('+OK\r\n');
        else socket.write(command === null ? Buffer.from('+OK\r\n') : command(parsed.args));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${server.address().port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** One command (an array of bulk strings) from the front of `buffer`, or null when incomplete. */
function readCommand(buffer) {
  let at = 0;
  const line = () => {
    const end = buffer.indexOf('\r\n', at);
    if (end < 0) return null;
    const text = buffer.toString('latin1', at, end);
    at = end + 2;
    return text;
  };
  const head = line();
  if (head === null) return null;
  const args = [];
  for (let i = 0, count = Number(head.slice(1)); i < count; i++) {
    const size = line();
    if (size === null) return null;
    const length = Number(size.slice(1));
    if (at + length + 2 > buffer.length) return null;
    args.push(buffer.subarray(at, at + length));
    at += length + 2;
  }
  return { args, used: at };
}

const oneShard = (id) => (port) => [['slots', [0, 16383], 'nodes', [nodeEntry(id, port)]]];

describe('ClusterClient against a hostile node', () => {
  const nodes = [];
  const clients = [];
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
    nodes.forEach((node) => node.close());
  });
  const start = async (...args) => {
    const node = await fakeNode(...args);
    nodes.push(node);
    return node;
  };

  test('a node id that is not UTF-8 is refused, never installed with U+FFFD', async () => {
    const node = await start(oneShard(Buffer.alloc(40, 0xff)));
    const client = new ClusterClient([node.address], { config: CONFIG });
    clients.push(client);
    assert.equal(await client.refresh(), false);
    assert.equal(client.router, null);
    await assert.rejects(client.get('k'), (err) => {
      assert.equal(err.code, 'unavailable');
      return true;
    });
  });

  test('the session refuses the escaped text as invalid_argument', () => {
    const session = new shardroute.ClusterSession(['127.0.0.1:7000']);
    // What the client hands the session for a node id of 0xff bytes: lone surrogates.
    const id = String.fromCharCode(0xdcff).repeat(40);
    assert.throws(() => session.refreshed([['slots', [0, 16383], 'nodes', [nodeEntry(id, 7000)]]], 0), (err) => {
      assert.ok(err instanceof shardroute.ShardrouteError);
      assert.equal(err.code, 'invalid_argument');
      // The words of the Python client too (bindings-py/tests/test_hostile_redis.py).
      assert.match(err.message, /: a string with a lone surrogate is not text$/);
      return true;
    });
  });

  for (const target of ['nocolon', '127.0.0.1:notaport', '127.0.0.1:']) {
    test(`a MOVED to ${JSON.stringify(target)} is the core's invalid_argument`, async () => {
      const node = await start(oneShard('a'.repeat(40)), (args) => Buffer.from(`-MOVED ${slotOf(args[1] ?? '')} ${target}\r\n`));
      const client = new ClusterClient([node.address], { config: CONFIG });
      clients.push(client);
      await assert.rejects(client.get('k'), (err) => {
        assert.ok(err instanceof shardroute.ShardrouteError, String(err));
        assert.equal(err.code, 'invalid_argument');
        return true;
      });
    });
  }
});

/** One shard: a master and 1,000 replicas, the slot pair [0, 0] listed 100,000 times. */
function findingOneShards(port) {
  const replicas = Array.from({ length: 1000 }, (_, i) => nodeEntry((i + 1).toString(16).padStart(40, '0'), port, 'replica'));
  return [['slots', new Array(200000).fill(0), 'nodes', [nodeEntry('0'.repeat(40), port), ...replicas]]];
}

const CHILD = `
const { ClusterClient } = require('shardroute/redis');
const fs = require('node:fs');
(async () => {
  const client = new ClusterClient([process.argv[1]], { config: { retry_budget_ms: 1000, command_timeout_ms: 5000 } });
  let outcome;
  try {
    outcome = String(await client.refresh());
  } catch (err) {
    outcome = err.code ?? 'no code: ' + err;
  }
  const peak = /VmHWM:\\s*(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  console.log(JSON.stringify({ outcome, peakBytes: peak ? Number(peak[1]) * 1024 : null }));
  await client.close();
  process.exit(0);
})();
`;

test('the 974 KB CLUSTER SHARDS of finding 1 is refused in bounded memory', { skip: process.platform !== 'linux' }, async () => {
  assert.ok(resp(findingOneShards(7000)).length > 900000);
  const node = await fakeNode(findingOneShards);
  try {
    // Under a 3 GiB address-space limit (Node idles at 1 GiB of it): a reader that tries to allocate tens of GB aborts
    // the child (the test fails) instead of taking the machine's memory.
    const { stdout } = await promisify(execFile)('/bin/sh', ['-c', 'ulimit -v 3145728 && exec "$0" -e "$1" "$2"',
      process.execPath, CHILD, node.address], { cwd: new URL('..', import.meta.url), timeout: 120000 });
    const { outcome, peakBytes } = JSON.parse(stdout.trim().split('\n').at(-1));
    assert.equal(outcome, 'false');
    assert.ok(peakBytes === null || peakBytes < 2 ** 29, `peak ${peakBytes} bytes`);
  } finally {
    node.close();
  }
});
