// The package's JavaScript API as a user sees it: types crossing the boundary, errors,
// and the conversions the conformance vectors do not exercise.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as shardroute from '../index.js';
import {
  Router, ShardrouteError, apply, decodeDictionary, diff, encodeDictionary, hashKey, jump, moduloMoves,
} from '../index.js';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const TOPOLOGY = {
  format: 'shardroute/1',
  epoch: 7,
  nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c', weight: 2 }, { id: 'd' }],
  strategy: { type: 'ring', points_per_node: 40 },
};
const router = new Router(TOPOLOGY);

/**
 * A vbucket dictionary in motion: vbucket 0 and 3 migrating (reads from the old owner,
 * writes to the new one first), 2 read-only, 1 stable.
 */
const VBUCKETS = {
  format: 'shardroute/1',
  epoch: 3,
  nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
  strategy: {
    type: 'vbucket',
    vbuckets: 4,
    map: [['a', 'b'], ['b', 'c'], ['c', 'a'], ['a', 'c']],
    forward_map: [['b', 'a'], ['b', 'c'], ['c', 'a'], ['c', 'a']],
    states: { 0: 'migrating', 2: 'read_only', 3: 'migrating' },
  },
};

/** A text key that `topology` routes to `shard` (found by routing candidates). */
function keyIn(topology, shard) {
  const byShard = new Router(topology);
  for (let i = 0; i < 10000; i++) {
    if (byShard.route(`key:${i}`) === shard) return `key:${i}`;
  }
  throw new Error(`no key routes to shard ${shard}`);
}

/** Calls `fn`, asserts it throws a ShardrouteError with `code`, and returns the error. */
function throwsCode(fn, code) {
  let thrown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  assert.notEqual(thrown, undefined, `expected a ShardrouteError ${code}, nothing was thrown`);
  assert.equal(typeof thrown, 'object', `thrown value is a ${typeof thrown}: ${thrown}`);
  assert.ok(thrown instanceof Error, 'thrown value is not an Error');
  assert.ok(thrown instanceof ShardrouteError, `thrown ${thrown.name}: ${thrown.message}`);
  assert.equal(thrown.code, code, thrown.message);
  return thrown;
}

describe('ShardrouteError', () => {
  test('is a real Error subclass with code, name, message and stack', () => {
    const err = throwsCode(() => router.route(2 ** 53), 'invalid_key');
    assert.equal(err.name, 'ShardrouteError');
    assert.equal(Object.getPrototypeOf(err), ShardrouteError.prototype);
    assert.match(err.message, /safe non-negative integer/);
    assert.ok(!err.message.startsWith('invalid_key'), 'the code is not repeated in the message');
    assert.match(String(err), /^ShardrouteError: /);
    assert.equal(typeof err.stack, 'string');
  });

  test('can be constructed by users', () => {
    const err = new ShardrouteError('invalid_key', 'made by hand', { cause: 1 });
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'invalid_key');
    assert.equal(err.message, 'made by hand');
    assert.equal(err.cause, 1);
  });

  test('every core error code is thrown as a ShardrouteError', () => {
    throwsCode(() => new Router('{'), 'invalid_topology');
    throwsCode(() => router.route('\ud800'), 'invalid_key');
    throwsCode(() => new Router({ ...TOPOLOGY, nodes: [] }), 'no_nodes');
    throwsCode(() => new Router({ ...TOPOLOGY, strategy: { type: 'ring', points_per_node: 100000 } }), 'limit_exceeded');
    throwsCode(() => router.replicas('k', 0), 'invalid_argument');
    throwsCode(() => jump(1n, 0), 'no_nodes');
    throwsCode(() => router.replace({ ...TOPOLOGY, epoch: 6 }), 'stale_epoch');
    throwsCode(() => new Router(VBUCKETS).routeWrite(keyIn(VBUCKETS, 2)), 'read_only');
  });

  test('a panic in the addon is thrown as an Error, not an abort', () => {
    // A child process, so the panic message Rust prints stays out of this output.
    const script = `
      const addon = require('./shardroute.node');
      try { addon.__panicForTesting(); console.log('no throw'); }
      catch (err) { console.log(JSON.stringify([err instanceof Error, err.message])); }
      console.log(typeof addon.jump(1n, 100));`;
    const child = spawnSync(process.execPath, ['-e', script], { cwd: packageDir, encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const [caught, after] = child.stdout.trim().split('\n');
    assert.deepEqual(JSON.parse(caught), [true, 'shardroute-node: deliberate panic for testing']);
    assert.equal(after, 'number', 'the addon still works after a panic');
  });

  test('every exported Rust function and method catches panics', () => {
    const srcDir = path.join(packageDir, 'src');
    let exported = 0;
    for (const file of fs.readdirSync(srcDir)) {
      const source = fs.readFileSync(path.join(srcDir, file), 'utf8').replace(/\/\/.*$/gm, '');
      // Each #[napi] or #[napi(...)] attribute: when the item it marks (up to its `{`) is a
      // fn, the attribute must say catch_unwind. Bare #[napi] also marks the struct and impl.
      for (const match of source.matchAll(/#\[napi(?:\(([^)]*)\))?\]/g)) {
        const item = source.slice(match.index + match[0].length).split('{', 1)[0];
        const fn = /\bfn (\w+)/.exec(item);
        if (fn === null) continue;
        exported += 1;
        assert.match(match[1] ?? '', /\bcatch_unwind\b/, `${file}: fn ${fn[1]} lacks #[napi(catch_unwind)]`);
      }
    }
    // As many as the addon exports: its functions, and each class's constructor and methods.
    const addon = createRequire(import.meta.url)('../shardroute.node');
    let expected = 0;
    for (const value of Object.values(addon)) {
      if (typeof value !== 'function') continue;
      expected += 1 + Object.getOwnPropertyNames(value.prototype ?? {}).filter((name) => name !== 'constructor').length;
    }
    assert.equal(exported, expected, 'the scan found every exported function and method');
  });
});

describe('keys', () => {
  test('numbers must be safe non-negative integers', () => {
    assert.equal(router.route(2 ** 53 - 1), router.route(2n ** 53n - 1n));
    assert.equal(router.route(42), router.route(42n));
    assert.equal(hashKey(0), hashKey(0n));
    for (const bad of [2 ** 53, 2 ** 64, -1, 1.5, NaN, Infinity, -Infinity]) {
      throwsCode(() => router.route(bad), 'invalid_key');
      throwsCode(() => hashKey(bad), 'invalid_key');
    }
  });

  test('bigints must be in 0..2^64', () => {
    assert.equal(typeof router.route(2n ** 64n - 1n), 'number');
    assert.equal(hashKey(0n), hashKey(Buffer.alloc(8)), 'integers hash as 8 little-endian bytes by default');
    throwsCode(() => router.route(-1n), 'invalid_key');
    throwsCode(() => router.route(2n ** 64n), 'invalid_key');
  });

  test('lone surrogates are rejected, high and low, never replaced with U+FFFD', () => {
    for (const bad of ['\ud800', '\udbff', '\udc00', '\udfff', 'a\ud800b', 'x\udc00', '\udc00\ud800', 'ok\ud83d']) {
      const err = throwsCode(() => router.route(bad), 'invalid_key');
      assert.match(err.message, /surrogate/);
      throwsCode(() => router.node(bad), 'invalid_key');
      throwsCode(() => hashKey(bad), 'invalid_key');
    }
    assert.notEqual(hashKey('\ufffd'), undefined, 'U+FFFD itself is a valid key');
    assert.equal(hashKey('\ud83d\udd11'), hashKey(Buffer.from('🔑', 'utf8')), 'a surrogate pair is one code point');
  });

  test('a string key is its UTF-8 bytes; Uint8Array and Buffer are the same bytes', () => {
    const bytes = new TextEncoder().encode('ключ');
    assert.equal(hashKey('ключ'), hashKey(bytes));
    assert.equal(hashKey(Buffer.from(bytes)), hashKey(bytes));
    assert.equal(router.node('ключ'), router.node(bytes));
    // A view into a larger buffer hashes only its own bytes.
    const view = new Uint8Array([9, 1, 2, 9]).subarray(1, 3);
    assert.equal(hashKey(view), hashKey(Uint8Array.of(1, 2)));
    assert.equal(hashKey(new Uint8Array(0)), hashKey(''));
  });

  test('the integer 42 and the text "42" are different keys', () => {
    assert.notEqual(hashKey(42n), hashKey('42'));
  });

  test('values of other types are invalid_key', () => {
    const values = [undefined, null, true, {}, [], ['a'], Symbol('k'), () => 1, new Uint16Array(2), new Int8Array(1),
      new Uint8ClampedArray(1), new ArrayBuffer(2), new DataView(new ArrayBuffer(2)), new Date(0), new String('a')];
    for (const value of values) {
      throwsCode(() => router.route(value), 'invalid_key');
      throwsCode(() => router.node(value), 'invalid_key');
      throwsCode(() => router.replicas(value, 1), 'invalid_key');
      throwsCode(() => router.routeMany([value]), 'invalid_key');
      throwsCode(() => hashKey(value), 'invalid_key');
    }
    throwsCode(() => router.route(), 'invalid_key');
  });
});

describe('Router', () => {
  test('epoch is a BigInt, exact above 2^53', () => {
    assert.equal(router.epoch, 7n);
    const big = 2n ** 64n - 1n;
    assert.equal(new Router({ ...TOPOLOGY, epoch: big }).epoch, big, 'BigInt field in an object');
    assert.equal(new Router({ ...TOPOLOGY, epoch: '9007199254740993' }).epoch, 9007199254740993n, 'decimal string');
    const text = JSON.stringify(TOPOLOGY).replace('"epoch":7', '"epoch":9007199254740993');
    assert.equal(new Router(text).epoch, 9007199254740993n, 'JSON number in text');
  });

  test('an object topology and its JSON text give identical routers', () => {
    const fromText = new Router(JSON.stringify(TOPOLOGY));
    assert.equal(router.toJson(), fromText.toJson());
    assert.equal(new Router(router.toJson()).toJson(), router.toJson(), 'toJson round-trips');
    for (const key of ['a', 'user:1', 7n, 0]) {
      assert.equal(router.route(key), fromText.route(key));
      assert.deepEqual(router.replicas(key, 3), fromText.replicas(key, 3));
    }
    const demo = fs.readFileSync(path.join(packageDir, '..', 'conformance', 'demo', 'topology.json'), 'utf8');
    assert.equal(new Router(JSON.parse(demo)).toJson(), new Router(demo).toJson());
  });

  test('routeMany is a Uint32Array equal to route on each key', () => {
    const keys = ['user:1', 'user:2', '', 'ключ', 0, 1, 2 ** 53 - 1, 0n, 2n ** 64n - 1n, Uint8Array.of(1, 2, 3), Buffer.from('x')];
    const shards = router.routeMany(keys);
    assert.ok(shards instanceof Uint32Array);
    assert.deepEqual(Array.from(shards), keys.map((key) => router.route(key)));
    assert.deepEqual(router.routeMany([]), new Uint32Array(0));
  });

  test('routeMany names the index of a bad key and rejects non-arrays', () => {
    const err = throwsCode(() => router.routeMany(['a', 'b', 2 ** 60]), 'invalid_key');
    assert.match(err.message, /^keys\[2\]: /);
    for (const notArray of ['ab', null, undefined, 3, { length: 1, 0: 'a' }, new Set(['a']), Uint8Array.of(1)]) {
      throwsCode(() => router.routeMany(notArray), 'invalid_argument');
    }
  });

  test('node and replicas agree; replicas are distinct strings', () => {
    for (const key of ['a', 'b', 'c', 'user:42', 99n]) {
      const replicas = router.replicas(key, 4);
      assert.equal(replicas[0], router.node(key));
      assert.deepEqual(router.replicas(key, 1), [router.node(key)]);
      assert.equal(new Set(replicas).size, 4);
      assert.ok(replicas.every((id) => typeof id === 'string'));
    }
  });

  test('replica counts must be integers in range', () => {
    for (const bad of [0, 5, -1, 1.5, NaN, Infinity, 2 ** 32, '2', 2n, null, undefined, {}]) {
      throwsCode(() => router.replicas('k', bad), 'invalid_argument');
    }
  });

  test('topologies of unsupported types, and unserializable objects, are invalid_topology', () => {
    for (const bad of [undefined, null, 42, 42n, true, Symbol('t'), () => 1, [], [TOPOLOGY], '', 'null']) {
      throwsCode(() => new Router(bad), 'invalid_topology');
    }
    const cyclic = { ...TOPOLOGY };
    cyclic.self = cyclic;
    throwsCode(() => new Router(cyclic), 'invalid_topology');
    throwsCode(() => new Router({ ...TOPOLOGY, epoch: NaN }), 'invalid_topology');
    throwsCode(() => new Router(JSON.stringify(TOPOLOGY).replace('"a"', '"\ud800"')), 'invalid_topology');
    throwsCode(() => new Router({ ...TOPOLOGY, nodes: [{ id: '\ud800' }] }), 'invalid_topology');
  });
});

/** A topology with addresses, zones, placement names and hot keys. */
const PLACED = {
  format: 'shardroute/1',
  epoch: 5,
  nodes: [
    { id: 'n0', address: '10.0.0.1:5432', zone: 'eu-1a' },
    { id: 'n1', address: '10.0.0.2:5432' },
    { id: 'n2', zone: 'eu-1c' },
  ],
  strategy: { type: 'jump' },
  placement: { database: 'db_{shard}', table: 'events_{shard:03}', host: '{node}' },
  hot_keys: { separator: '#', keys: { hot: 4, 'ключ': 3 } },
};
const placed = new Router(PLACED);
const BAD_SALTS = [-1, 1.5, NaN, Infinity, 2 ** 32, '1', 1n, null, undefined, {}];
const NOT_KEYS = [undefined, null, true, {}, [], new Uint16Array(1), '\ud800', -1n, 2n ** 64n, 2 ** 53];

describe('shardsForRange', () => {
  test('hash strategies scatter every range: all shards, a plain array', () => {
    const all = placed.shardsForRange('a', 'b');
    assert.ok(Array.isArray(all));
    assert.deepEqual(all, [0, 1, 2]);
    assert.deepEqual(router.shardsForRange(0n, 10n), [0, 1, 2, 3]);
    const oneBased = new Router({ ...PLACED, strategy: { type: 'modulo', one_based: true } });
    assert.deepEqual(oneBased.shardsForRange(Uint8Array.of(0)), [1, 2, 3]);
  });

  test('an omitted, undefined or null end means to the end of the key space', () => {
    const expected = placed.shardsForRange('m', 'z');
    assert.deepEqual(placed.shardsForRange('m'), expected);
    assert.deepEqual(placed.shardsForRange('m', undefined), expected);
    assert.deepEqual(placed.shardsForRange('m', null), expected);
  });

  test('bounds that are not keys are invalid_key', () => {
    for (const bad of NOT_KEYS) {
      if (bad !== undefined && bad !== null) throwsCode(() => placed.shardsForRange('a', bad), 'invalid_key');
      throwsCode(() => placed.shardsForRange(bad, 'z'), 'invalid_key');
    }
  });
});

describe('decodeId', () => {
  test('ids are bigints or decimal strings in 0..2^64, else invalid_key', () => {
    for (const bad of [-1n, 2n ** 64n, '-1', '18446744073709551616', '0x10', ' 1', '', '\ud800', 1, null, undefined, {}]) {
      throwsCode(() => placed.decodeId(bad), 'invalid_key');
    }
  });

  test('a strategy whose ids do not carry a shard refuses with invalid_argument', () => {
    for (const id of [0n, 42n, 2n ** 64n - 1n, '42', '18446744073709551615']) {
      const err = throwsCode(() => placed.decodeId(id), 'invalid_argument');
      assert.match(err.message, /decode_id/);
    }
  });
});

describe('locate', () => {
  test('gives shard, node, address, zone (null when absent) and rendered names', () => {
    const seen = new Set();
    for (let i = 0; seen.size < 3 && i < 1000; i++) {
      const key = `user:${i}`;
      const location = placed.locate(key);
      assert.deepEqual(Object.keys(location), ['shard', 'node', 'address', 'zone', 'names']);
      assert.equal(location.shard, placed.route(key));
      assert.equal(location.node, placed.node(key));
      const node = PLACED.nodes[location.shard];
      assert.equal(location.node, node.id);
      assert.equal(location.address, node.address ?? null);
      assert.equal(location.zone, node.zone ?? null);
      assert.deepEqual(location.names, {
        database: `db_${location.shard}`,
        host: node.id,
        table: `events_${String(location.shard).padStart(3, '0')}`,
      });
      seen.add(location.shard);
    }
    assert.equal(seen.size, 3, 'every node was located');
  });

  test('without a placement section, names is an empty object', () => {
    const location = router.locate(7n);
    assert.deepEqual(location.names, {});
    assert.equal(location.address, null);
    assert.equal(location.zone, null);
    assert.equal(location.node, router.node(7n));
  });

  test('a template named __proto__ is an own property, not the prototype', () => {
    const text = JSON.stringify({ ...TOPOLOGY, placement: { x: 'x_{shard}' } }).replace('"x"', '"__proto__"');
    const { names } = new Router(text).locate('k');
    assert.equal(Object.getPrototypeOf(names), Object.prototype);
    assert.deepEqual(Object.keys(names), ['__proto__']);
    assert.ok(Object.hasOwn(names, '__proto__'));
  });

  test('keys that are not keys are invalid_key', () => {
    for (const bad of NOT_KEYS) throwsCode(() => placed.locate(bad), 'invalid_key');
  });
});

describe('salting', () => {
  test('fanout is the hot key fanout, 1 for other keys and for integers', () => {
    assert.equal(placed.fanout('hot'), 4);
    assert.equal(placed.fanout(Buffer.from('hot')), 4);
    assert.equal(placed.fanout('ключ'), 3);
    assert.equal(placed.fanout('cold'), 1);
    assert.equal(placed.fanout(42), 1);
    assert.equal(placed.fanout(42n), 1);
    assert.equal(router.fanout('hot'), 1, 'a topology without hot_keys');
    for (const bad of NOT_KEYS) throwsCode(() => placed.fanout(bad), 'invalid_key');
  });

  test('saltedKey returns the type of its key: string, Uint8Array, bigint', () => {
    assert.equal(placed.saltedKey('hot', 1), 'hot#1');
    assert.equal(placed.saltedKey('hot', 7), 'hot#3', 'salt modulo fanout');
    assert.equal(placed.saltedKey('ключ', 4), 'ключ#1', 'non-ASCII text stays a string');
    assert.equal(placed.saltedKey('cold', 5), 'cold', 'a key that is not hot is its own salted key');

    const bytes = placed.saltedKey(Buffer.from('hot'), 2);
    assert.ok(bytes instanceof Uint8Array);
    assert.deepEqual(Array.from(bytes), Array.from(Buffer.from('hot#2')));
    const view = new Uint8Array([9, ...Buffer.from('hot'), 9]).subarray(1, 4);
    assert.deepEqual(Array.from(placed.saltedKey(view, 0)), Array.from(Buffer.from('hot#0')));
    const cold = placed.saltedKey(Uint8Array.of(1, 2), 3);
    assert.ok(cold instanceof Uint8Array);
    assert.deepEqual(Array.from(cold), [1, 2]);

    assert.equal(placed.saltedKey(42n, 1), 42n);
    assert.equal(placed.saltedKey(42, 1), 42n, 'a number key comes back as a bigint');
    assert.equal(placed.saltedKey(2n ** 64n - 1n, 0), 2n ** 64n - 1n);
  });

  test('a salted key routes like any key', () => {
    for (let salt = 0; salt < 4; salt++) {
      const salted = placed.saltedKey('hot', salt);
      assert.equal(placed.route(salted), placed.route(`hot#${salt}`));
    }
  });

  test('salts must be integers in 0..2^32, else invalid_argument; keys must be keys', () => {
    assert.equal(placed.saltedKey('hot', 2 ** 32 - 1), `hot#${(2 ** 32 - 1) % 4}`);
    for (const bad of BAD_SALTS) throwsCode(() => placed.saltedKey('hot', bad), 'invalid_argument');
    for (const bad of NOT_KEYS) throwsCode(() => placed.saltedKey(bad, 0), 'invalid_key');
  });

  test('saltedKeys gives every salted form with its shard, salt 0 first, in the key type', () => {
    const pairs = placed.saltedKeys('hot');
    assert.deepEqual(pairs, [0, 1, 2, 3].map((salt) => [`hot#${salt}`, placed.route(`hot#${salt}`)]));
    const bytePairs = placed.saltedKeys(Buffer.from('ключ'));
    assert.equal(bytePairs.length, 3);
    bytePairs.forEach(([key, shard], salt) => {
      assert.ok(key instanceof Uint8Array);
      assert.deepEqual(Array.from(key), Array.from(Buffer.from(`ключ#${salt}`)));
      assert.equal(shard, placed.route(key));
    });
    assert.deepEqual(placed.saltedKeys('cold'), [['cold', placed.route('cold')]]);
    assert.deepEqual(placed.saltedKeys(7), [[7n, placed.route(7)]]);
    assert.deepEqual(placed.saltedKeys(7n), [[7n, placed.route(7n)]]);
    for (const bad of NOT_KEYS) throwsCode(() => placed.saltedKeys(bad), 'invalid_key');
  });
});

describe('apply', () => {
  test('returns a new object with the new document under topology and the report', () => {
    const result = apply(PLACED, { op: 'add_node', node: { id: 'n3' } });
    assert.deepEqual(Object.keys(result).sort(), ['added', 'topology']);
    assert.equal(result.added, 'n3');
    assert.equal(result.topology.epoch, 6);
    assert.deepEqual(result.topology.nodes.map((node) => node.id), ['n0', 'n1', 'n2', 'n3']);
    assert.equal(PLACED.nodes.length, 3, 'the input is not modified');
    const next = new Router(result.topology);
    assert.equal(next.epoch, 6n);
    assert.equal(next.toJson(), new Router(JSON.stringify(result.topology)).toJson());

    const removed = apply(next.toJson(), '{"op": "remove_node", "id": "n1"}');
    assert.deepEqual(removed, { removed: 'n1', topology: removed.topology });
    assert.deepEqual(removed.topology.nodes.map((node) => node.id), ['n0', 'n2', 'n3']);
  });

  test('text and object forms of topology and operation give the same result', () => {
    const operation = { op: 'add_node', node: { id: 'x', weight: 2 } };
    const expected = apply(TOPOLOGY, operation);
    assert.deepEqual(apply(JSON.stringify(TOPOLOGY), operation), expected);
    assert.deepEqual(apply(TOPOLOGY, JSON.stringify(operation)), expected);
    assert.deepEqual(apply(router.toJson(), JSON.stringify(operation)), expected);
  });

  test('epochs above 2^53 stay exact: bigint in, decimal string out', () => {
    const result = apply({ ...TOPOLOGY, epoch: 2n ** 60n }, { op: 'remove_node', id: 'a' });
    assert.equal(result.topology.epoch, (2n ** 60n + 1n).toString());
    assert.equal(new Router(result.topology).epoch, 2n ** 60n + 1n);
    throwsCode(() => apply({ ...TOPOLOGY, epoch: 2n ** 64n - 1n }, { op: 'remove_node', id: 'a' }), 'invalid_topology');
  });

  test('bad operations are invalid_argument, bad topologies invalid_topology', () => {
    for (const bad of [{ op: 'split' }, { op: 'remove_node', id: 'nobody' }, { op: 'add_node' }, { op: 'add_node', node: { id: 'a' }, extra: 1 },
      {}, [], '{', 'null', '"add_node"', '[]', '\ud800', 42, 42n, null, undefined, true]) {
      throwsCode(() => apply(TOPOLOGY, bad), 'invalid_argument');
    }
    const cyclic = { op: 'add_node' };
    cyclic.node = cyclic;
    throwsCode(() => apply(TOPOLOGY, cyclic), 'invalid_argument');
    throwsCode(() => apply(TOPOLOGY, { op: 'add_node', node: { id: 'a' } }), 'invalid_topology');
    for (const bad of ['{', 'null', '', 42, null, undefined, [], { ...TOPOLOGY, nodes: [{ id: '\ud800' }] }]) {
      throwsCode(() => apply(bad, { op: 'remove_node', id: 'a' }), 'invalid_topology');
    }
    throwsCode(() => apply({ ...TOPOLOGY, nodes: [] }, { op: 'remove_node', id: 'a' }), 'no_nodes');
  });
});

describe('moduloMoves', () => {
  test('whole-factor growth and shrinkage as arrays of arrays of numbers', () => {
    assert.deepEqual(moduloMoves(2, 4), [[0, 2], [1, 3]]);
    assert.deepEqual(moduloMoves(2, 6), [[0, 2, 4], [1, 3, 5]]);
    assert.deepEqual(moduloMoves(4, 2), [[0], [1], [0], [1]]);
    assert.deepEqual(moduloMoves(3, 3), [[0], [1], [2]]);
    assert.deepEqual(moduloMoves(1, 1), [[0]]);
  });

  test('errors: counts not integers in 0..2^32 are invalid_argument; 0 is no_nodes', () => {
    throwsCode(() => moduloMoves(3, 4), 'invalid_argument');
    throwsCode(() => moduloMoves(0, 4), 'no_nodes');
    throwsCode(() => moduloMoves(4, 0), 'no_nodes');
    throwsCode(() => moduloMoves(1, 2 ** 32 - 1), 'limit_exceeded');
    for (const bad of BAD_SALTS) {
      throwsCode(() => moduloMoves(bad, 2), 'invalid_argument');
      throwsCode(() => moduloMoves(2, bad), 'invalid_argument');
    }
  });
});

describe('hashKey and jump', () => {
  test('hashKey returns published reference values as BigInt', () => {
    // SipHash-2-4 paper, empty input, key 00..0f; and the CRC-32 check value.
    assert.equal(hashKey(''), 0x726fdb47dd0e0e31n);
    assert.equal(hashKey('', undefined), 0x726fdb47dd0e0e31n);
    assert.equal(hashKey('', null), 0x726fdb47dd0e0e31n);
    assert.equal(hashKey('123456789', { function: 'crc32' }), 0xcbf43926n);
    assert.equal(hashKey('123456789', '{"function": "crc32"}'), 0xcbf43926n);
  });

  test('hashKey rejects bad hashing specs as invalid_topology', () => {
    for (const bad of [42, 42n, true, [], '{', 'null', '{"function": "md5"}', { function: 'md5' }]) {
      throwsCode(() => hashKey('k', bad), 'invalid_topology');
    }
  });

  test('jump takes a BigInt or a decimal string', () => {
    assert.equal(jump(1n, 100), 55); // Guava's golden value
    assert.equal(jump('1', 100), 55);
    assert.equal(jump(2n ** 64n - 1n, 1), 0);
    assert.equal(jump('18446744073709551615', 7), jump(2n ** 64n - 1n, 7));
  });

  test('jump rejects bad hashes as invalid_key and bad bucket counts as invalid_argument', () => {
    for (const bad of [-1n, 2n ** 64n, '-1', '18446744073709551616', '0x10', ' 1', '', 1, null, undefined, '\ud800']) {
      throwsCode(() => jump(bad, 3), 'invalid_key');
    }
    for (const bad of [-1, 1.5, NaN, 2 ** 32, '3', 3n, null, undefined]) {
      throwsCode(() => jump(1n, bad), 'invalid_argument');
    }
    throwsCode(() => jump(1n, 0), 'no_nodes');
    assert.equal(typeof jump(1n, 2 ** 32 - 1), 'number');
  });
});

describe('routeRead and routeWrite', () => {
  const moving = new Router(VBUCKETS);

  test('a stable vbucket reads and writes at its owner', () => {
    const key = keyIn(VBUCKETS, 1);
    assert.equal(moving.routeRead(key), 'b');
    assert.deepEqual(moving.routeWrite(key), ['b']);
    assert.equal(moving.node(key), 'b');
  });

  test('a migrating vbucket reads from the old owner and writes to the new one first', () => {
    for (const [vbucket, [oldOwner, newOwner]] of [[0, ['a', 'b']], [3, ['a', 'c']]]) {
      const key = keyIn(VBUCKETS, vbucket);
      assert.equal(moving.routeRead(key), oldOwner);
      assert.deepEqual(moving.routeWrite(key), [newOwner, oldOwner]);
    }
  });

  test('a read-only vbucket refuses writes with read_only and still serves reads', () => {
    const key = keyIn(VBUCKETS, 2);
    const err = throwsCode(() => moving.routeWrite(key), 'read_only');
    assert.match(err.message, /vbucket 2/);
    assert.equal(moving.routeRead(key), 'c');
  });

  test('other strategies read and write at the owner; every key type works', () => {
    for (const key of ['user:1', Uint8Array.of(1, 2), 7n, 7]) {
      assert.equal(router.routeRead(key), router.node(key));
      assert.deepEqual(router.routeWrite(key), [router.node(key)]);
    }
  });

  test('values that are not keys are invalid_key', () => {
    for (const bad of NOT_KEYS) {
      throwsCode(() => moving.routeRead(bad), 'invalid_key');
      throwsCode(() => moving.routeWrite(bad), 'invalid_key');
    }
  });
});

describe('replace', () => {
  test('returns a new Router of the package class; the old one is unchanged', () => {
    const before = router.toJson();
    const next = router.replace({ ...TOPOLOGY, epoch: 8, nodes: [...TOPOLOGY.nodes, { id: 'e' }] });
    assert.ok(next instanceof Router);
    assert.equal(Object.getPrototypeOf(next), Router.prototype);
    assert.notEqual(next, router);
    assert.equal(next.epoch, 8n);
    assert.equal(next.toJson(), new Router({ ...TOPOLOGY, epoch: 8, nodes: [...TOPOLOGY.nodes, { id: 'e' }] }).toJson());
    assert.deepEqual(next.replicas('k', 5).sort(), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(router.epoch, 7n);
    assert.equal(router.toJson(), before);
    assert.throws(() => router.replicas('k', 5), ShardrouteError, 'the old router still has four nodes');
  });

  test('takes JSON text or an object, as the constructor does', () => {
    const text = JSON.stringify({ ...TOPOLOGY, epoch: 9 });
    assert.equal(router.replace(text).toJson(), router.replace(JSON.parse(text)).toJson());
    assert.equal(router.replace({ ...TOPOLOGY, epoch: 2n ** 64n - 1n }).epoch, 2n ** 64n - 1n);
  });

  test('the same document again is accepted; a replaced router can be replaced again', () => {
    assert.equal(router.replace(TOPOLOGY).toJson(), router.toJson());
    assert.equal(router.replace({ ...TOPOLOGY, epoch: 8 }).replace({ ...TOPOLOGY, epoch: 10 }).epoch, 10n);
  });

  test('an older epoch, or the same epoch with other content, is stale_epoch naming the held epoch', () => {
    const older = throwsCode(() => router.replace({ ...TOPOLOGY, epoch: 6 }), 'stale_epoch');
    assert.match(older.message, /holds epoch 7\b/);
    assert.match(older.message, /older epoch 6\b/);
    const other = throwsCode(() => router.replace({ ...TOPOLOGY, nodes: TOPOLOGY.nodes.slice(1) }), 'stale_epoch');
    assert.match(other.message, /same epoch/);
    assert.match(other.message, /holds epoch 7\b/);
    const newer = router.replace({ ...TOPOLOGY, epoch: 8 });
    assert.match(throwsCode(() => newer.replace(TOPOLOGY), 'stale_epoch').message, /holds epoch 8\b/);
  });

  test('bad topologies are refused as the constructor refuses them', () => {
    for (const bad of [undefined, null, 42, [], '{', 'null']) throwsCode(() => router.replace(bad), 'invalid_topology');
    throwsCode(() => router.replace({ ...TOPOLOGY, epoch: 8, nodes: [] }), 'no_nodes');
  });
});

describe('diff', () => {
  const modulo = (count) => new Router({
    format: 'shardroute/1',
    epoch: count,
    nodes: Array.from({ length: count }, (_, i) => ({ id: `s${i}` })),
    strategy: { type: 'modulo' },
    hashing: { integers: 'identity' },
  });
  const [five, ten] = [modulo(5), modulo(10)];

  test('reports every key before and after, the moved count and the flows', () => {
    const users = Array.from({ length: 100 }, (_, i) => BigInt(i));
    const result = diff(five, ten, users);
    assert.equal(result.total, 100);
    assert.equal(result.moved, 50, 'id % 5 vs id % 10: the ids with id % 10 >= 5 move');
    assert.equal(result.moved_ppm, 500000);
    assert.deepEqual(result.flows[0], { from: 's0', to: 's5', keys: 10 });
    assert.equal(result.flows.length, 5);
    assert.deepEqual(result.keys[7], { old_shard: 2, new_shard: 7, old_node: 's2', new_node: 's7', moved: true });
    assert.deepEqual(result.keys[3], { old_shard: 3, new_shard: 3, old_node: 's3', new_node: 's3', moved: false });
  });

  test('keys of every type; numbers and bigints are the same keys; no keys is an empty report', () => {
    const mixed = diff(router, router.replace({ ...TOPOLOGY, epoch: 8, nodes: TOPOLOGY.nodes.slice(1) }),
      ['user:1', Uint8Array.of(1, 2), 7n, 7]);
    assert.equal(mixed.keys.length, 4);
    assert.deepEqual(mixed.keys[2], mixed.keys[3]);
    assert.equal(mixed.keys[0].old_node, router.node('user:1'));
    assert.deepEqual(diff(five, ten, []), { keys: [], total: 0, moved: 0, moved_ppm: 0, flows: [] });
  });

  test('arguments that are not Routers are invalid_argument', () => {
    for (const notRouter of [undefined, null, {}, TOPOLOGY, five.toJson(), 5, Object.create(Router.prototype)]) {
      throwsCode(() => diff(notRouter, ten, ['a']), 'invalid_argument');
      throwsCode(() => diff(five, notRouter, ['a']), 'invalid_argument');
    }
  });

  test('keys must be an array of keys: invalid_argument, or invalid_key naming the index', () => {
    for (const notArray of ['ab', null, undefined, 3, new Set(['a']), Uint8Array.of(1)]) {
      throwsCode(() => diff(five, ten, notArray), 'invalid_argument');
    }
    for (const bad of NOT_KEYS) {
      const err = throwsCode(() => diff(five, ten, ['a', bad]), 'invalid_key');
      assert.match(err.message, /^keys\[1\]: /);
    }
  });
});

describe('encodeDictionary and decodeDictionary', () => {
  test('round trip: decoding the bytes gives the canonical JSON of the document', () => {
    const bytes = encodeDictionary(VBUCKETS);
    assert.ok(bytes instanceof Uint8Array);
    assert.deepEqual(Array.from(bytes.subarray(0, 4)), Array.from(Buffer.from('SRVB')));
    assert.equal(decodeDictionary(bytes), new Router(VBUCKETS).toJson());
    assert.deepEqual(encodeDictionary(JSON.stringify(VBUCKETS)), bytes, 'JSON text encodes as the object does');
    assert.equal(decodeDictionary(Buffer.from(bytes)), new Router(VBUCKETS).toJson(), 'a Buffer is bytes too');
    const inside = new Uint8Array(bytes.length + 2);
    inside.set(bytes, 1);
    assert.equal(decodeDictionary(inside.subarray(1, 1 + bytes.length)), decodeDictionary(bytes), 'a view decodes its own bytes');
    const stable = { ...VBUCKETS, epoch: 2n ** 64n - 1n, strategy: { type: 'vbucket', vbuckets: 2, map: [['a'], ['b']] } };
    assert.equal(new Router(decodeDictionary(encodeDictionary(stable))).epoch, 2n ** 64n - 1n);
  });

  test('damaged bytes are invalid_topology', () => {
    const bytes = encodeDictionary(VBUCKETS);
    const flipped = Uint8Array.from(bytes);
    flipped[bytes.length >> 1] ^= 0x01;
    const trailing = Uint8Array.of(...bytes, 0);
    const badMagic = Uint8Array.from(bytes);
    badMagic[0] = 0x58;
    for (const damaged of [flipped, bytes.subarray(0, bytes.length - 1), trailing, badMagic, bytes.subarray(0, 2), new Uint8Array(0)]) {
      throwsCode(() => decodeDictionary(damaged), 'invalid_topology');
    }
  });

  test('only vbucket topologies encode; bad documents are refused as Router refuses them', () => {
    throwsCode(() => encodeDictionary(TOPOLOGY), 'invalid_argument');
    for (const bad of [undefined, null, 42, '{', []]) throwsCode(() => encodeDictionary(bad), 'invalid_topology');
  });

  test('decodeDictionary takes a Uint8Array, else invalid_argument', () => {
    const bytes = encodeDictionary(VBUCKETS);
    for (const bad of [undefined, null, 'SRVB', Array.from(bytes), bytes.buffer, new Uint16Array(4), new DataView(bytes.buffer)]) {
      throwsCode(() => decodeDictionary(bad), 'invalid_argument');
    }
  });
});

describe('package', () => {
  test('index.d.ts declares exactly the runtime exports', () => {
    const declarations = fs.readFileSync(path.join(packageDir, 'index.d.ts'), 'utf8');
    const declared = [...declarations.matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual(declared.sort(), Object.keys(shardroute).filter((name) => name !== 'default').sort());
  });

  test('CommonJS require gives the same module', () => {
    const require = createRequire(import.meta.url);
    const cjs = require('../index.js');
    assert.deepEqual(Object.keys(cjs).sort(), [
      'Router', 'ShardrouteError', 'apply', 'decodeDictionary', 'diff', 'encodeDictionary', 'hashKey', 'jump', 'moduloMoves',
    ]);
    assert.equal(cjs.Router, Router);
  });

  test('the version matches the workspace version', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
    const cargo = fs.readFileSync(path.join(packageDir, '..', 'Cargo.toml'), 'utf8');
    const workspaceVersion = /\[workspace\.package\][^[]*?\nversion = "([^"]+)"/.exec(cargo)?.[1];
    assert.equal(manifest.version, workspaceVersion);
  });
});

test('string keys of every length near the short-string buffer route as their UTF-8 bytes', () => {
  // Regression: a multi-byte string truncated at a character boundary by N-API's UTF-8
  // read looked complete and routed as a prefix of itself.
  const router = new Router({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], strategy: { type: 'rendezvous' } });
  for (const unit of ['a', 'ю', '日', '🔑', 'aю', 'a🔑']) {
    for (let n = 1; n <= 90; n++) {
      const key = unit.repeat(n);
      assert.equal(router.route(key), router.route(Buffer.from(key)), `${JSON.stringify(unit)} x ${n}`);
      assert.equal(router.node(key), router.node(Buffer.from(key)), `${JSON.stringify(unit)} x ${n}`);
    }
  }
});

describe('string batches', () => {
  // routeMany and nodeMany copy an array of strings into one Uint16Array, which the addon
  // converts to UTF-8 key by key: these check that path against the single calls.
  const rendezvous = new Router({
    format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], strategy: { type: 'rendezvous' },
  });
  const ascii = Array.from({ length: 10 }, (_, i) => `user:${i}`);

  test('strings of any text and length route as the single calls do', () => {
    const texts = ['', 'café', 'ключ', '日本語', '\ud83d\udd11', '\ufffd', 'a\u0000b', 'x'.repeat(63), 'é'.repeat(64), '🔑'.repeat(40)];
    // Long keys outgrow the packing buffer's first size (12 units per key) more than once.
    const long = Array.from({ length: 30 }, (_, i) => `${'long key '.repeat(20 + i)}${i}`);
    for (const keys of [[...ascii, ...texts], [...texts, ...ascii], long, [...long, ...texts]]) {
      assert.deepEqual(Array.from(rendezvous.routeMany(keys)), keys.map((key) => rendezvous.route(key)));
      assert.deepEqual(rendezvous.nodeMany(keys), keys.map((key) => rendezvous.node(key)));
    }
  });

  test('a lone surrogate fails the batch with the single call error, prefixed with its index', () => {
    for (const bad of ['\ud800', 'a\udc00', 'ok\ud83d', '\udc00\ud800', '🔑\udfff']) {
      const single = throwsCode(() => rendezvous.route(bad), 'invalid_key');
      for (const at of [0, 4, 10]) {
        const keys = [...ascii];
        keys.splice(at, 0, bad);
        assert.equal(throwsCode(() => rendezvous.routeMany(keys), 'invalid_key').message, `keys[${at}]: ${single.message}`);
        assert.equal(throwsCode(() => rendezvous.nodeMany(keys), 'invalid_key').message, `keys[${at}]: ${single.message}`);
      }
    }
  });

  test('a surrogate pair split across two keys is two lone surrogates', () => {
    assert.equal(rendezvous.routeMany([...ascii, '\ud83d\ude00'])[10], rendezvous.route('\ud83d\ude00'));
    const err = throwsCode(() => rendezvous.routeMany([...ascii, '\ud83d', '\ude00']), 'invalid_key');
    assert.match(err.message, /^keys\[10\]: .*0xD83D/);
  });
});

test('route and node: a missing key is undefined, and routers made by replace route the same', () => {
  assert.equal(throwsCode(() => router.route(), 'invalid_key').message, throwsCode(() => router.route(undefined), 'invalid_key').message);
  throwsCode(() => router.node(), 'invalid_key');
  const next = router.replace({ ...TOPOLOGY, epoch: 8 });
  for (const key of ['a', 'user:42', 7n, Buffer.from('b')]) {
    assert.equal(next.route(key), router.route(key));
    assert.equal(next.node(key), router.node(key));
  }
});

test('collected routers release their native functions, and live ones keep working', () => {
  // A child process with --expose-gc: the finalizers of the route and node functions run
  // while other routers are in use.
  const script = `
    const { Router } = require('./index.js');
    const doc = { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'jump' } };
    const kept = new Router(doc);
    const expected = kept.node('k');
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 200; i++) new Router(doc).node('k');
      global.gc();
      if (kept.node('k') !== expected || kept.route('k') !== kept.routeMany(['k'])[0]) throw new Error('changed');
    }
    console.log('ok');`;
  const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], { cwd: packageDir, encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), 'ok');
});
