// The package's JavaScript API as a user sees it (through its own `exports`): types
// crossing the boundary, errors, the conversions the conformance vectors do not exercise,
// and that no bad argument ever traps the WebAssembly instance.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import * as shardroute from 'shardroute-wasm';
import {
  Router, ShardrouteError, apply, decodeDictionary, diff, encodeDictionary, hashKey, jump, moduloMoves,
} from 'shardroute-wasm';
import { packageDir } from './support.mjs';

const TOPOLOGY = {
  format: 'shardroute/1',
  epoch: 7,
  nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c', weight: 2 }, { id: 'd' }],
  strategy: { type: 'ring', points_per_node: 40 },
};
const router = new Router(TOPOLOGY);
const CODES = ['invalid_topology', 'invalid_key', 'no_nodes', 'limit_exceeded', 'invalid_argument', 'stale_epoch',
  'read_only'];
/**
 * A vbucket dictionary in motion: vbucket 0 and 3 migrating (`map` -> `forward_map`), 2
 * read-only, 1 active.
 */
const DICTIONARY = {
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

describe('package', () => {
  test('the node condition of `exports` loads the nodejs build, for import and require', () => {
    const require = createRequire(import.meta.url);
    assert.equal(require.resolve('shardroute-wasm'), join(packageDir, 'pkg', 'node', 'shardroute_wasm.js'));
    assert.equal(require('shardroute-wasm').Router, Router, 'require and import share one instance');
  });

  test('index.d.ts declares exactly the exported names', () => {
    const declarations = readFileSync(join(packageDir, 'index.d.ts'), 'utf8');
    const declared = [...declarations.matchAll(/^export declare (?:class|function) (\w+)/gm)].map((m) => m[1]);
    const exported = Object.keys(shardroute).filter((name) => name !== 'default' && name !== 'module.exports');
    assert.deepEqual(declared.sort(), exported.sort());
    const methods = [...declarations.matchAll(/^ {2}(?:get )?(\w+)\(/gm)].map((m) => m[1]).filter((n) => n !== 'constructor');
    for (const method of ['route', 'node', 'replicas', 'routeMany', 'epoch', 'toJson', 'shardsForRange', 'decodeId',
      'locate', 'fanout', 'saltedKey', 'saltedKeys', 'routeRead', 'routeWrite', 'replace']) {
      assert.ok(methods.includes(method), `index.d.ts declares Router.${method}`);
      assert.ok(method in Router.prototype, `Router.prototype.${method} exists`);
    }
  });
});

describe('ShardrouteError', () => {
  test('is a real Error subclass with code, name, message and stack', () => {
    const err = throwsCode(() => router.route(2 ** 53), 'invalid_key');
    assert.equal(err.name, 'ShardrouteError');
    assert.equal(Object.getPrototypeOf(err), ShardrouteError.prototype);
    assert.match(err.message, /safe non-negative integer/);
    assert.ok(!err.message.startsWith('invalid_key'), 'the code is not repeated in the message');
    assert.match(String(err), /^ShardrouteError: /);
    assert.equal(typeof err.stack, 'string');
    assert.deepEqual(Object.keys(err), ['code']);
  });

  test('messages are the native build\'s, also where std\'s sort differs (optimize_for_size)', () => {
    // Two slot ranges starting at one slot: core breaks the sort tie by position, so the
    // message names the later range here as in Rust, Python and the Node addon.
    const slots = [{ start: 0, end: 100, nodes: ['a'] }, { start: 0, end: 16383, nodes: ['b'] }];
    const doc = { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'redis_cluster', slots } };
    const err = throwsCode(() => new Router(doc), 'invalid_topology');
    assert.equal(err.message, 'strategy.slots[1]: slots 0..=16383 overlap another range (slot 0 is listed twice)');
  });

  test('can be constructed by users', () => {
    const err = new ShardrouteError('invalid_key', 'made by hand', { cause: 1 });
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'invalid_key');
    assert.equal(err.message, 'made by hand');
    assert.equal(err.cause, 1);
  });

  test('every core error code is thrown as a ShardrouteError', () => {
    const seen = new Set([
      throwsCode(() => new Router('{'), 'invalid_topology'),
      throwsCode(() => router.route('\ud800'), 'invalid_key'),
      throwsCode(() => new Router({ ...TOPOLOGY, nodes: [] }), 'no_nodes'),
      throwsCode(() => new Router({ ...TOPOLOGY, strategy: { type: 'ring', points_per_node: 100000 } }), 'limit_exceeded'),
      throwsCode(() => router.replicas('k', 0), 'invalid_argument'),
      throwsCode(() => router.replace({ ...TOPOLOGY, epoch: 6 }), 'stale_epoch'),
      throwsCode(() => new Router(DICTIONARY).routeWrite(keyOnShard(new Router(DICTIONARY), 2)), 'read_only'),
    ].map((err) => err.code));
    assert.deepEqual([...seen].sort(), [...CODES].sort());
  });
});

describe('string keys: the fast paths (installFastPaths in js/support.mjs) answer as the general ones', () => {
  const bytes = (text) => new TextEncoder().encode(text);
  const TEXTS = ['', 'a', 'user:1', 'caf\u00e9', 'ключ', '\ud83d\udd11', '\ufffd', 'x'.repeat(300), '{tag}.rest'];
  const plain = { ...TOPOLOGY, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] };
  const routers = [router, new Router({ ...plain, strategy: { type: 'jump' } }),
    new Router({ ...plain, hashing: { function: 'crc32', hash_tag: 'redis' }, strategy: { type: 'modulo' } })];

  test('route and node of a string are those of its UTF-8 bytes', () => {
    for (const r of routers) {
      for (const text of TEXTS) {
        assert.equal(r.route(text), r.route(bytes(text)), JSON.stringify(text));
        assert.equal(r.node(text), r.node(bytes(text)), JSON.stringify(text));
      }
    }
  });

  test('still right after WebAssembly memory grew (which detaches the buffer the fast path writes to)', () => {
    const before = TEXTS.map((text) => [router.route(text), router.node(text)]);
    // A batch of 2^21 keys of 40 bytes needs far more memory than the module has yet.
    const big = new Router({ ...TOPOLOGY, strategy: { type: 'ring', points_per_node: 10000 } });
    assert.equal(big.routeMany(Array.from({ length: 2 ** 21 }, (_, i) => `${'k'.repeat(32)}:${i}`)).length, 2 ** 21);
    assert.deepEqual(TEXTS.map((text) => [router.route(text), router.node(text)]), before);
    assert.deepEqual(TEXTS.map((text) => big.route(text)), TEXTS.map((text) => big.route(bytes(text))));
  });

  test('a core error for a well-formed string is the general path\'s, code and message', () => {
    const idOnly = new Router({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }],
      strategy: { type: 'id_bits', layout: 'shard_high' } });
    const expected = throwsCode(() => idOnly.route(bytes('text')), 'invalid_key').message;
    assert.equal(throwsCode(() => idOnly.route('text'), 'invalid_key').message, expected);
    assert.equal(throwsCode(() => idOnly.node('text'), 'invalid_key').message, expected);
  });

  test('batches of strings (packed as UTF-16) give the single calls\' results and errors', () => {
    const keys = Array.from({ length: 12 }, (_, i) => `${TEXTS[i % TEXTS.length]}:${i}`);
    for (const r of routers) {
      assert.deepEqual(Array.from(r.routeMany(keys)), keys.map((key) => r.route(key)));
      assert.deepEqual(r.nodeMany(keys), keys.map((key) => r.node(key)));
    }
    // A surrogate pair split between two keys is two lone surrogates, as for single keys.
    for (const bad of ['\ud800', 'ok\ud83d', '\ude00x']) {
      const single = throwsCode(() => router.route(bad), 'invalid_key').message;
      const batch = [...keys.slice(0, 9), bad, '\ude00'];
      assert.equal(throwsCode(() => router.routeMany(batch), 'invalid_key').message, `keys[9]: ${single}`);
      assert.equal(throwsCode(() => router.nodeMany(batch), 'invalid_key').message, `keys[9]: ${single}`);
    }
  });

  test('the Rust helpers behind the fast paths are not part of the API', () => {
    for (const name of ['__routeBuffered', '__nodeIndexBuffered', '__nodeIds', '__nodeIndexMany']) {
      assert.equal(name in Router.prototype, false, name);
    }
    assert.equal('__keyBuffer' in Router, false);
    for (const name of ['route', 'node', 'nodeMany']) {
      const descriptor = Object.getOwnPropertyDescriptor(Router.prototype, name);
      assert.deepEqual([descriptor.writable, descriptor.enumerable, descriptor.configurable], [true, false, true], name);
    }
    const freed = new Router(TOPOLOGY);
    freed.node('warm'); // the node ids are now cached on the router
    freed.free();
    assert.throws(() => freed.route('k'), /null pointer/);
    assert.throws(() => freed.node('k'), /null pointer/);
  });
});

describe('keys', () => {
  test('numbers must be safe non-negative integers', () => {
    assert.equal(router.route(2 ** 53 - 1), router.route(2n ** 53n - 1n));
    assert.equal(router.route(42), router.route(42n));
    assert.equal(hashKey(0), hashKey(0n));
    assert.equal(hashKey(-0), hashKey(0n));
    for (const bad of [2 ** 53, 2 ** 64, -1, 1.5, NaN, Infinity, -Infinity]) {
      throwsCode(() => router.route(bad), 'invalid_key');
      throwsCode(() => hashKey(bad), 'invalid_key');
    }
  });

  test('bigints must be in 0..2^64', () => {
    assert.equal(typeof router.route(2n ** 64n - 1n), 'number');
    assert.equal(hashKey(0n), hashKey(new Uint8Array(8)), 'integers hash as 8 little-endian bytes by default');
    throwsCode(() => router.route(-1n), 'invalid_key');
    throwsCode(() => router.route(2n ** 64n), 'invalid_key');
    throwsCode(() => router.route(2n ** 128n + 5n), 'invalid_key');
  });

  test('lone surrogates are rejected, high and low, never replaced with U+FFFD', () => {
    for (const bad of ['\ud800', '\udbff', '\udc00', '\udfff', 'a\ud800b', 'x\udc00', '\udc00\ud800', 'ok\ud83d']) {
      const err = throwsCode(() => router.route(bad), 'invalid_key');
      assert.match(err.message, /surrogate/);
      throwsCode(() => router.node(bad), 'invalid_key');
      throwsCode(() => router.replicas(bad, 1), 'invalid_key');
      throwsCode(() => hashKey(bad), 'invalid_key');
    }
    assert.equal(typeof hashKey('\ufffd'), 'bigint', 'U+FFFD itself is a valid key');
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
    const others = [null, undefined, true, {}, [], [1], Symbol('k'), () => 1, new String('k'), new Uint16Array(2),
      new Int8Array(2), new ArrayBuffer(2), new DataView(new ArrayBuffer(2))];
    for (const bad of others) {
      throwsCode(() => router.route(bad), 'invalid_key');
      throwsCode(() => router.node(bad), 'invalid_key');
      throwsCode(() => hashKey(bad), 'invalid_key');
    }
  });
});

describe('Router', () => {
  test('text and object topologies give the same router', () => {
    const fromText = new Router(JSON.stringify(TOPOLOGY));
    assert.equal(fromText.toJson(), router.toJson());
    assert.equal(new Router(router.toJson()).toJson(), router.toJson(), 'the canonical JSON round-trips');
    for (const key of ['a', 'user:1', 7n]) assert.equal(fromText.node(key), router.node(key));
  });

  test('epoch is a bigint, exact above 2^53', () => {
    assert.equal(router.epoch, 7n);
    const big = 2n ** 53n + 1n;
    assert.equal(new Router({ ...TOPOLOGY, epoch: big }).epoch, big, 'a bigint field is written as a decimal string');
    assert.equal(new Router({ ...TOPOLOGY, epoch: String(big) }).epoch, big);
    const max = new Router({ ...TOPOLOGY, epoch: 2n ** 64n - 1n });
    assert.equal(max.epoch, 2n ** 64n - 1n);
    assert.match(max.toJson(), /"epoch":"18446744073709551615"/);
    throwsCode(() => new Router({ ...TOPOLOGY, epoch: 2n ** 64n }), 'invalid_topology');
  });

  test('routeMany equals route on each key and returns a Uint32Array', () => {
    const keys = ['a', 'b', '', 'ключ', 0, 42, 2 ** 53 - 1, 0n, 2n ** 64n - 1n, new Uint8Array([1, 2, 3]), Buffer.from('x')];
    const shards = router.routeMany(keys);
    assert.ok(shards instanceof Uint32Array);
    assert.deepEqual(Array.from(shards), keys.map((key) => router.route(key)));
    assert.deepEqual(router.routeMany([]), new Uint32Array(0));
  });

  test('routeMany names the index of a bad key and rejects non-arrays', () => {
    const err = throwsCode(() => router.routeMany(['a', 'b', '\ud800']), 'invalid_key');
    assert.match(err.message, /^keys\[2\]: /);
    throwsCode(() => router.routeMany(['a', 1.5]), 'invalid_key');
    for (const bad of ['abc', new Set(['a']), { length: 1, 0: 'a' }, undefined, null, 3, new Uint8Array(2)]) {
      throwsCode(() => router.routeMany(bad), 'invalid_argument');
    }
  });

  test('replicas: owner first, distinct, count checked', () => {
    const nodes = router.replicas('user:1', 4);
    assert.equal(nodes[0], router.node('user:1'));
    assert.equal(new Set(nodes).size, 4);
    assert.deepEqual(router.replicas('user:1', 2), nodes.slice(0, 2));
    for (const bad of [0, 5, -1, 1.5, NaN, Infinity, 2 ** 32, '2', 2n, null, undefined]) {
      throwsCode(() => router.replicas('user:1', bad), 'invalid_argument');
    }
  });

  test('documents of unsupported types are invalid_topology', () => {
    const cyclic = { ...TOPOLOGY };
    cyclic.self = cyclic;
    const throwing = { toJSON() { throw new Error('no'); } };
    for (const bad of [undefined, null, 5, 5n, true, Symbol('t'), () => TOPOLOGY, cyclic, throwing, [], '', '\ud800']) {
      throwsCode(() => new Router(bad), 'invalid_topology');
    }
  });
});

describe('hashKey and jump', () => {
  test('hashKey: the default spec, and a spec as text or object', () => {
    assert.equal(hashKey(''), 0x726fdb47dd0e0e31n, 'SipHash-2-4 of the empty input under key 00..0f');
    assert.equal(hashKey('', undefined), hashKey(''));
    assert.equal(hashKey('', null), hashKey(''));
    assert.equal(hashKey('123456789', { function: 'crc32' }), 0xcbf43926n);
    assert.equal(hashKey('123456789', '{"function": "crc32"}'), 0xcbf43926n);
    assert.equal(hashKey(2n ** 64n - 1n, { integers: 'identity' }), 2n ** 64n - 1n);
    for (const bad of [5, true, [], { function: 'md5' }, '{', Symbol('h')]) {
      throwsCode(() => hashKey('k', bad), 'invalid_topology');
    }
  });

  test('jump: the hash as a bigint or decimal string, buckets checked', () => {
    assert.equal(jump(1n, 100), 55);
    assert.equal(jump('1', 100), 55);
    assert.equal(jump(2n ** 64n - 1n, 1), 0);
    assert.equal(typeof jump('18446744073709551615', 4294967295), 'number');
    throwsCode(() => jump(7n, 0), 'no_nodes');
    for (const bad of [-1n, 2n ** 64n, '-1', '18446744073709551616', '', ' 1', '1.0', '0x10', 1, null, undefined, '\ud800']) {
      throwsCode(() => jump(bad, 10), 'invalid_key');
    }
    for (const bad of [-1, 1.5, 2 ** 32, NaN, '10', 10n, null, undefined]) {
      throwsCode(() => jump(1n, bad), 'invalid_argument');
    }
  });
});

/** A key (`key:0`, `key:1`, ...) that `router` sends to `shard`: test data, found by trying. */
function keyOnShard(local, shard) {
  for (let i = 0; i < 1000; i++) if (local.route(`key:${i}`) === shard) return `key:${i}`;
  throw new Error(`no key on shard ${shard}`);
}

const BAD_KEYS = ['\ud800', 2 ** 53, -1, 1.5, -1n, 2n ** 64n, null, undefined, {}, true];
const BAD_COUNTS = [-1, 1.5, 2 ** 32, NaN, Infinity, '1', 1n, null, undefined];

describe('shardsForRange and decodeId', () => {
  test('shardsForRange: every shard for a hash strategy, as a plain array; end optional', () => {
    const all = router.shardsForRange('a', 'z');
    assert.ok(Array.isArray(all), 'a plain array, not a Uint32Array');
    assert.deepEqual(all, [0, 1, 2, 3]);
    assert.deepEqual(router.shardsForRange('a'), all, 'end omitted');
    assert.deepEqual(router.shardsForRange('a', undefined), all);
    assert.deepEqual(router.shardsForRange('a', null), all);
    assert.deepEqual(router.shardsForRange(0n, 2n ** 64n - 1n), all);
    assert.deepEqual(router.shardsForRange(Uint8Array.of(0), Uint8Array.of(255)), all);
    const oneBased = new Router({ ...TOPOLOGY, nodes: TOPOLOGY.nodes.map(({ id }) => ({ id })),
      strategy: { type: 'modulo', one_based: true } });
    assert.deepEqual(oneBased.shardsForRange(''), [1, 2, 3, 4], 'the shard numbers route can return');
  });

  test('shardsForRange: bad keys are invalid_key, for start and end', () => {
    for (const bad of BAD_KEYS) {
      if (bad === null || bad === undefined) continue; // an end of null/undefined means "to the end"
      throwsCode(() => router.shardsForRange(bad, 'z'), 'invalid_key');
      throwsCode(() => router.shardsForRange('a', bad), 'invalid_key');
    }
    throwsCode(() => router.shardsForRange(null), 'invalid_key');
    throwsCode(() => router.shardsForRange(), 'invalid_key');
  });

  test('decodeId: ids of hash strategies carry no shard (invalid_argument)', () => {
    const err = throwsCode(() => router.decodeId(42n), 'invalid_argument');
    assert.match(err.message, /decode_id/);
    throwsCode(() => router.decodeId('18446744073709551615'), 'invalid_argument');
  });

  test('decodeId: the id is a bigint or decimal string in 0..2^64, else invalid_key', () => {
    for (const bad of [-1n, 2n ** 64n, '-1', '18446744073709551616', '', '0x10', ' 1', 42, null, undefined, {}, '\ud800']) {
      throwsCode(() => router.decodeId(bad), 'invalid_key');
    }
  });
});

describe('locate', () => {
  const PLACED = JSON.stringify({
    format: 'shardroute/1',
    epoch: 1,
    nodes: [{ id: 'a', address: '10.0.0.1:5432', zone: 'eu-1a' }, { id: 'b' }],
    strategy: { type: 'modulo' },
    placement: { database: 'db_{shard}', table: 'comments_{shard:03}', owner: '{node}', brace: '{{x}}' },
  });

  test('shard, node, address, zone and the rendered names', () => {
    const placed = new Router(PLACED);
    const onA = keyOnShard(placed, 0);
    assert.deepEqual(placed.locate(onA), {
      shard: 0,
      node: 'a',
      address: '10.0.0.1:5432',
      zone: 'eu-1a',
      names: { brace: '{x}', database: 'db_0', owner: 'a', table: 'comments_000' },
    });
    const onB = keyOnShard(placed, 1);
    const location = placed.locate(onB);
    assert.deepEqual(location, {
      shard: 1, node: 'b', address: null, zone: null,
      names: { brace: '{x}', database: 'db_1', owner: 'b', table: 'comments_001' },
    });
    assert.equal(Object.getPrototypeOf(location), Object.prototype, 'a plain object');
    for (const key of ['x', 7n, 7, Uint8Array.of(1)]) {
      const { shard, node } = placed.locate(key);
      assert.equal(shard, placed.route(key));
      assert.equal(node, placed.node(key));
    }
  });

  test('without placement, names is empty; a template named __proto__ is an own property', () => {
    assert.deepEqual(router.locate('k').names, {});
    const odd = new Router(PLACED.replace('"database"', '"__proto__"'));
    const { names } = odd.locate(keyOnShard(odd, 1));
    assert.ok(Object.hasOwn(names, '__proto__'));
    assert.equal(names.__proto__, 'db_1'); // eslint-disable-line no-proto
    assert.equal(Object.getPrototypeOf(names), Object.prototype);
  });

  test('bad keys are invalid_key', () => {
    for (const bad of BAD_KEYS) throwsCode(() => router.locate(bad), 'invalid_key');
  });
});

describe('hot-key salting', () => {
  const HOT = { ...TOPOLOGY, hot_keys: { separator: '#', keys: { hot: 4, 'ключ': 3 } } };
  const hot = new Router(HOT);
  const bytes = (text) => new TextEncoder().encode(text);

  test('fanout: the hot keys\' fanout, 1 for every other key', () => {
    assert.equal(hot.fanout('hot'), 4);
    assert.equal(hot.fanout(bytes('hot')), 4, 'bytes and text are the same key');
    assert.equal(hot.fanout('ключ'), 3);
    assert.equal(hot.fanout('cold'), 1);
    assert.equal(hot.fanout(42n), 1, 'integer keys are never hot');
    assert.equal(router.fanout('hot'), 1, 'no hot_keys section');
  });

  test('saltedKey has the type of the key: string, Uint8Array, bigint', () => {
    assert.equal(hot.saltedKey('hot', 1), 'hot#1');
    assert.equal(hot.saltedKey('hot', 6), 'hot#2', 'salt modulo fanout');
    assert.equal(hot.saltedKey('ключ', 2), 'ключ#2');
    assert.equal(hot.saltedKey('cold', 9), 'cold', 'a key that is not hot is its own salted key');
    const salted = hot.saltedKey(bytes('hot'), 3);
    assert.ok(salted instanceof Uint8Array);
    assert.deepEqual(salted, bytes('hot#3'));
    const coldBytes = Uint8Array.of(0, 255);
    const same = hot.saltedKey(coldBytes, 1);
    assert.ok(same instanceof Uint8Array);
    assert.deepEqual(same, coldBytes);
    assert.notEqual(same, coldBytes, 'a copy, not the caller\'s array');
    assert.equal(hot.saltedKey(42n, 1), 42n);
    assert.equal(hot.saltedKey(42, 1), 42n, 'a number key comes back as a bigint');
    assert.equal(hot.saltedKey(2n ** 64n - 1n, 0), 2n ** 64n - 1n);
    assert.equal(hot.saltedKey('hot', 2 ** 32 - 1), `hot#${(2 ** 32 - 1) % 4}`);
  });

  test('saltedKeys: every salted form with its shard, salt 0 first, in the key\'s type', () => {
    const pairs = hot.saltedKeys('hot');
    assert.deepEqual(pairs.map(([key]) => key), ['hot#0', 'hot#1', 'hot#2', 'hot#3']);
    for (const [key, shard] of pairs) assert.equal(shard, hot.route(key));
    const fromBytes = hot.saltedKeys(bytes('hot'));
    assert.equal(fromBytes.length, 4);
    for (const [index, [key, shard]] of fromBytes.entries()) {
      assert.ok(key instanceof Uint8Array);
      assert.deepEqual(key, bytes(`hot#${index}`));
      assert.equal(shard, pairs[index][1]);
    }
    assert.deepEqual(hot.saltedKeys('cold'), [['cold', hot.route('cold')]]);
    assert.deepEqual(hot.saltedKeys(7), [[7n, hot.route(7)]]);
    assert.deepEqual(hot.saltedKeys(7n), [[7n, hot.route(7n)]]);
    assert.ok(Array.isArray(pairs) && Array.isArray(pairs[0]));
  });

  test('a salt that is not an integer in 0..2^32 is invalid_argument; bad keys invalid_key', () => {
    for (const bad of BAD_COUNTS) throwsCode(() => hot.saltedKey('hot', bad), 'invalid_argument');
    for (const bad of BAD_KEYS) {
      throwsCode(() => hot.saltedKey(bad, 0), 'invalid_key');
      throwsCode(() => hot.saltedKeys(bad), 'invalid_key');
      throwsCode(() => hot.fanout(bad), 'invalid_key');
    }
  });
});

describe('apply', () => {
  test('add_node and remove_node: the new document and the report; inputs unchanged', () => {
    const before = structuredClone(TOPOLOGY);
    const added = apply(TOPOLOGY, { op: 'add_node', node: { id: 'e', zone: 'z' } });
    assert.deepEqual(TOPOLOGY, before, 'the topology object is not modified');
    assert.deepEqual(Object.keys(added).sort(), ['added', 'topology']);
    assert.equal(added.added, 'e');
    assert.equal(added.topology.epoch, 8);
    assert.deepEqual(added.topology.nodes.map((node) => node.id), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(new Router(added.topology).epoch, 8n, 'the result is a valid document');
    const removed = apply(added.topology, { op: 'remove_node', id: 'b' });
    assert.equal(removed.removed, 'b');
    assert.deepEqual(removed.topology.nodes.map((node) => node.id), ['a', 'c', 'd', 'e']);
    assert.equal(removed.topology.epoch, 9);
  });

  test('text and object arguments give the same result; the document is canonical', () => {
    const operation = { op: 'remove_node', id: 'c' };
    const fromObjects = apply(TOPOLOGY, operation);
    assert.deepEqual(apply(JSON.stringify(TOPOLOGY), JSON.stringify(operation)), fromObjects);
    assert.deepEqual(apply(router.toJson(), operation), fromObjects);
    const next = new Router(fromObjects.topology);
    assert.deepEqual(fromObjects.topology, JSON.parse(next.toJson()), 'the canonical document, parsed');
  });

  test('bigint inputs are written as decimal strings; u64 above 2^53 come back as strings', () => {
    const result = apply({ ...TOPOLOGY, epoch: 2n ** 60n }, { op: 'remove_node', id: 'a' });
    assert.equal(result.topology.epoch, String(2n ** 60n + 1n));
    throwsCode(() => apply({ ...TOPOLOGY, epoch: 2n ** 64n - 1n }, { op: 'remove_node', id: 'a' }), 'invalid_topology');
  });

  test('bad operations are invalid_argument; bad documents as for new Router', () => {
    for (const bad of [{ op: 'split' }, { op: 'add_node' }, { op: 'remove_node', id: 'zz' }, { op: 'remove_node', id: 1 },
      { op: 'add_node', node: { id: 'e' }, extra: 1 }, {}, [], 5, null, undefined, true, Symbol('op'), '{', '"add_node"',
      '\ud800', { toJSON() { throw new Error('no'); } }]) {
      throwsCode(() => apply(TOPOLOGY, bad), 'invalid_argument');
    }
    throwsCode(() => apply(TOPOLOGY, { op: 'add_node', node: { id: 'a' } }), 'invalid_topology'); // a duplicate id
    throwsCode(() => apply('{', { op: 'remove_node', id: 'a' }), 'invalid_topology');
    throwsCode(() => apply(5, { op: 'remove_node', id: 'a' }), 'invalid_topology');
    throwsCode(() => apply({ ...TOPOLOGY, nodes: [] }, { op: 'add_node', node: { id: 'a' } }), 'no_nodes');
    throwsCode(() => apply('{', 5), 'invalid_topology'); // the topology is checked first
    const table = { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: { type: 'vbucket', vbuckets: 1, map: [['a']] } };
    throwsCode(() => apply(table, { op: 'add_node', node: { id: 'b' } }), 'invalid_argument');
  });
});

describe('moduloMoves', () => {
  test('whole-factor growth and shrinkage, as arrays of numbers', () => {
    const moves = moduloMoves(2, 4);
    assert.deepEqual(moves, [[0, 2], [1, 3]]);
    assert.ok(Array.isArray(moves) && Array.isArray(moves[0]), 'plain arrays, not typed arrays');
    assert.deepEqual(moduloMoves(4, 2), [[0], [1], [0], [1]]);
    assert.deepEqual(moduloMoves(3, 3), [[0], [1], [2]]);
    assert.deepEqual(moduloMoves(1, 3), [[0, 1, 2]]);
  });

  test('errors: not a whole factor, zero, too large, not a count', () => {
    throwsCode(() => moduloMoves(3, 4), 'invalid_argument');
    throwsCode(() => moduloMoves(0, 4), 'no_nodes');
    throwsCode(() => moduloMoves(4, 0), 'no_nodes');
    throwsCode(() => moduloMoves(2 ** 32 - 1, 1), 'limit_exceeded');
    for (const bad of BAD_COUNTS) {
      throwsCode(() => moduloMoves(bad, 2), 'invalid_argument');
      throwsCode(() => moduloMoves(2, bad), 'invalid_argument');
    }
  });
});

describe('routeRead and routeWrite', () => {
  const dictionary = new Router(DICTIONARY);

  test('a vbucket in motion: reads from the old owner, writes to the new owner then the old', () => {
    const migrating = keyOnShard(dictionary, 0);
    assert.equal(dictionary.routeRead(migrating), 'a');
    assert.deepEqual(dictionary.routeWrite(migrating), ['b', 'a']);
    assert.deepEqual(dictionary.routeWrite(keyOnShard(dictionary, 3)), ['c', 'a']);
    const active = keyOnShard(dictionary, 1);
    assert.equal(dictionary.routeRead(active), 'b');
    assert.deepEqual(dictionary.routeWrite(active), ['b']);
    assert.ok(Array.isArray(dictionary.routeWrite(active)), 'a plain array');
  });

  test('a read-only vbucket serves reads and refuses writes with read_only', () => {
    const frozen = keyOnShard(dictionary, 2);
    assert.equal(dictionary.routeRead(frozen), 'c');
    const err = throwsCode(() => dictionary.routeWrite(frozen), 'read_only');
    assert.match(err.message, /read.only/);
    assert.equal(dictionary.node(frozen), 'c', 'the router still works');
  });

  test('without a dictionary in motion, reads and writes go to the owner', () => {
    for (const key of ['x', 7n, 7, Uint8Array.of(1, 2)]) {
      assert.equal(router.routeRead(key), router.node(key));
      assert.deepEqual(router.routeWrite(key), [router.node(key)]);
    }
  });

  test('bad keys are invalid_key', () => {
    for (const bad of BAD_KEYS) {
      throwsCode(() => dictionary.routeRead(bad), 'invalid_key');
      throwsCode(() => dictionary.routeWrite(bad), 'invalid_key');
    }
  });
});

describe('replace', () => {
  test('returns a new Router for a newer document; the old router is unchanged', () => {
    const old = new Router(TOPOLOGY);
    const before = old.toJson();
    const grown = { ...TOPOLOGY, epoch: 8, nodes: [...TOPOLOGY.nodes, { id: 'e' }] };
    const next = old.replace(grown);
    assert.ok(next instanceof Router);
    assert.notEqual(next, old);
    assert.equal(next.epoch, 8n);
    assert.equal(next.toJson(), new Router(grown).toJson());
    assert.equal(old.epoch, 7n);
    assert.equal(old.toJson(), before);
    assert.equal(old.node('user:1'), router.node('user:1'));
    assert.equal(old.replace(JSON.stringify(grown)).toJson(), next.toJson(), 'JSON text, as for the constructor');
    next.free();
    assert.equal(old.route('x'), router.route('x'), 'the routers are independent');
  });

  test('the same document again is accepted', () => {
    assert.equal(router.replace(TOPOLOGY).toJson(), router.toJson());
    assert.equal(router.replace(router.toJson()).epoch, 7n);
  });

  test('an older epoch, or the same epoch with other content, is stale_epoch naming the held epoch', () => {
    const older = throwsCode(() => router.replace({ ...TOPOLOGY, epoch: 6 }), 'stale_epoch');
    assert.match(older.message, /holds epoch 7\b/);
    assert.match(older.message, /\b6\b/);
    const other = throwsCode(() => router.replace({ ...TOPOLOGY, nodes: TOPOLOGY.nodes.slice(1) }), 'stale_epoch');
    assert.match(other.message, /holds epoch 7\b/);
    const big = new Router({ ...TOPOLOGY, epoch: 2n ** 64n - 1n });
    const err = throwsCode(() => big.replace({ ...TOPOLOGY, epoch: 2n ** 64n - 2n }), 'stale_epoch');
    assert.match(err.message, /holds epoch 18446744073709551615\b/, 'a u64 epoch, exact');
    assert.equal(router.epoch, 7n);
  });

  test('the document is checked as by the constructor', () => {
    for (const bad of [undefined, null, 5, '{', '', [], '\ud800']) throwsCode(() => router.replace(bad), 'invalid_topology');
    throwsCode(() => router.replace({ ...TOPOLOGY, epoch: 9, nodes: [] }), 'no_nodes');
    throwsCode(() => router.replace(router), 'invalid_topology'); // a Router is not a document
  });
});

describe('diff', () => {
  const five = new Router({ format: 'shardroute/1', epoch: 1, hashing: { integers: 'identity' },
    nodes: [0, 1, 2, 3, 4].map((i) => ({ id: `s${i}` })), strategy: { type: 'modulo' } });
  const ten = new Router({ format: 'shardroute/1', epoch: 2, hashing: { integers: 'identity' },
    nodes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => ({ id: `s${i}` })), strategy: { type: 'modulo' } });

  test('every key before and after, the moved count and the flows between nodes', () => {
    const users = Array.from({ length: 100 }, (_, id) => BigInt(id));
    const report = diff(five, ten, users);
    assert.deepEqual(Object.keys(report).sort(), ['flows', 'keys', 'moved', 'moved_ppm', 'total']);
    assert.equal(report.total, 100);
    assert.equal(report.moved, 50, 'user_id % 5 vs % 10: ids with id % 10 >= 5 move');
    assert.equal(report.moved_ppm, 500000);
    assert.deepEqual(report.flows[0], { from: 's0', to: 's5', keys: 10 });
    assert.equal(report.flows.length, 5);
    assert.deepEqual(report.keys[7], { old_shard: 2, new_shard: 7, old_node: 's2', new_node: 's7', moved: true });
    for (const [index, entry] of report.keys.entries()) {
      assert.equal(entry.old_node, five.node(users[index]));
      assert.equal(entry.new_node, ten.node(users[index]));
      assert.equal(entry.old_shard, five.route(users[index]));
    }
  });

  test('neither router is modified or taken: both keep working; the same router twice moves nothing', () => {
    const before = [five.toJson(), ten.toJson()];
    diff(five, ten, ['a', 1n, 2, Uint8Array.of(3)]);
    assert.deepEqual([five.toJson(), ten.toJson()], before);
    assert.equal(typeof five.route('a'), 'number');
    assert.deepEqual(diff(five, five, ['a', 'b']), {
      keys: ['a', 'b'].map((key) => ({ old_shard: five.route(key), new_shard: five.route(key),
        old_node: five.node(key), new_node: five.node(key), moved: false })),
      total: 2, moved: 0, moved_ppm: 0, flows: [],
    });
    assert.deepEqual(diff(five, ten, []), { keys: [], total: 0, moved: 0, moved_ppm: 0, flows: [] });
  });

  test('an argument that is not a live Router is invalid_argument', () => {
    const freed = new Router(TOPOLOGY);
    freed.free();
    const fake = Object.create(Router.prototype);
    for (const bad of [TOPOLOGY, JSON.stringify(TOPOLOGY), {}, { __wbg_ptr: 8 }, fake, freed, null, undefined, 5, []]) {
      const err = throwsCode(() => diff(bad, ten, ['a']), 'invalid_argument');
      assert.match(err.message, /^oldRouter must be a Router/);
      assert.match(throwsCode(() => diff(five, bad, ['a']), 'invalid_argument').message, /^newRouter must be a Router/);
    }
    assert.equal(diff(five, ten, ['a']).total, 1, 'the routers survive');
  });

  test('keys: an array, else invalid_argument; a bad key is invalid_key naming its index', () => {
    for (const bad of ['abc', new Set(['a']), { length: 1, 0: 'a' }, undefined, null, 3]) {
      throwsCode(() => diff(five, ten, bad), 'invalid_argument');
    }
    for (const bad of BAD_KEYS) {
      const err = throwsCode(() => diff(five, ten, ['a', bad]), 'invalid_key');
      assert.match(err.message, /^keys\[1\]: /);
    }
    const idOnly = new Router({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }],
      strategy: { type: 'id_bits', layout: 'shard_high' } });
    throwsCode(() => idOnly.route('text'), 'invalid_key');
    throwsCode(() => diff(five, idOnly, ['text']), 'invalid_key');
  });
});

describe('encodeDictionary and decodeDictionary', () => {
  const canonical = new Router(DICTIONARY).toJson();

  test('round trip: the bytes decode to the canonical JSON of the document', () => {
    const bytes = encodeDictionary(DICTIONARY);
    assert.ok(bytes instanceof Uint8Array);
    assert.equal(decodeDictionary(bytes), canonical);
    assert.deepEqual(encodeDictionary(JSON.stringify(DICTIONARY)), bytes, 'text and object documents are the same');
    assert.deepEqual(encodeDictionary(canonical), bytes);
    assert.equal(decodeDictionary(Buffer.from(bytes)), canonical, 'a Buffer is a Uint8Array');
    const framed = new Uint8Array(bytes.length + 2);
    framed.set(bytes, 1);
    assert.equal(decodeDictionary(framed.subarray(1, bytes.length + 1)), canonical, 'a view decodes its own bytes');
    assert.equal(new Router(decodeDictionary(bytes)).routeRead('user:1'), new Router(DICTIONARY).routeRead('user:1'));
    const big = { ...DICTIONARY, epoch: 2n ** 64n - 1n };
    assert.match(decodeDictionary(encodeDictionary(big)), /"epoch":"18446744073709551615"/);
  });

  test('damaged bytes are invalid_topology', () => {
    const bytes = encodeDictionary(DICTIONARY);
    const flipped = bytes.slice();
    flipped[Math.floor(bytes.length / 2)] ^= 0x40;
    const withTrailer = new Uint8Array(bytes.length + 1);
    withTrailer.set(bytes);
    const badMagic = bytes.slice();
    badMagic[0] ^= 0xff;
    for (const bad of [flipped, bytes.subarray(0, bytes.length - 1), bytes.subarray(0, 2), new Uint8Array(0), withTrailer,
      badMagic, Uint8Array.from({ length: 64 }, (_, i) => i)]) {
      throwsCode(() => decodeDictionary(bad), 'invalid_topology');
    }
    assert.equal(decodeDictionary(bytes), canonical, 'the input was not modified');
  });

  test('bytes that are not a readable Uint8Array are invalid_argument', () => {
    const detached = encodeDictionary(DICTIONARY);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    const bytes = encodeDictionary(DICTIONARY);
    for (const bad of [canonical, Array.from(bytes), bytes.buffer, new DataView(bytes.buffer), new Uint16Array(4), null,
      undefined, 5, detached]) {
      throwsCode(() => decodeDictionary(bad), 'invalid_argument');
    }
  });

  test('only vbucket documents encode (invalid_argument); bad documents as for new Router', () => {
    throwsCode(() => encodeDictionary(TOPOLOGY), 'invalid_argument');
    for (const bad of [undefined, null, 5, '{', [], new Uint8Array(2)]) throwsCode(() => encodeDictionary(bad), 'invalid_topology');
    throwsCode(() => encodeDictionary({ ...DICTIONARY, nodes: [] }), 'no_nodes');
  });
});

describe('the WebAssembly instance survives bad input', () => {
  test('after every kind of error, the same Router and functions still work', () => {
    const local = new Router(TOPOLOGY);
    const before = { shards: Array.from(local.routeMany(['x', 1n, 2])), hash: hashKey('x'), bucket: jump(9n, 10) };
    const bad = [
      () => local.route('\udfff'), () => local.route(2 ** 60), () => local.route({}), () => local.route(-5n),
      () => local.replicas('x', -1), () => local.replicas('x', 1e300), () => local.routeMany('x'),
      () => local.routeMany([1, 2, Symbol('x')]), () => new Router('{"format": "shardroute/1"'),
      () => hashKey('k', { seed: 'zz' }), () => jump(1n, 0), () => jump(-1n, 3),
      () => local.shardsForRange('\ud800'), () => local.decodeId(-1n), () => local.decodeId(1n),
      () => local.locate(Symbol('k')), () => local.fanout(2 ** 60), () => local.saltedKey('x', -1),
      () => local.saltedKeys({}), () => apply(TOPOLOGY, '{'), () => apply(TOPOLOGY, { op: 'nope' }),
      () => moduloMoves(3, 5), () => moduloMoves(1.5, 3), () => local.routeRead({}), () => local.routeWrite(-1n),
      () => local.replace({ ...TOPOLOGY, epoch: 1 }), () => local.replace('{'), () => diff(local, {}, []),
      () => diff(local, local, [Symbol('k')]), () => encodeDictionary(TOPOLOGY), () => decodeDictionary(Uint8Array.of(1)),
      () => decodeDictionary('x'),
    ];
    for (let round = 0; round < 50; round++) {
      for (const fn of bad) assert.throws(fn, ShardrouteError);
    }
    assert.deepEqual(Array.from(local.routeMany(['x', 1n, 2])), before.shards);
    assert.equal(hashKey('x'), before.hash);
    assert.equal(jump(9n, 10), before.bucket);
  });

  test('a throwing getter or proxy in routeMany is an error, not an unwind', () => {
    const local = new Router(TOPOLOGY);
    const getter = ['a', 'b'];
    Object.defineProperty(getter, 1, { get() { throw new Error('from a getter'); } });
    throwsCode(() => local.routeMany(getter), 'invalid_key');
    const proxy = new Proxy(['a'], { get(target, name) { if (name === 'length') throw new Error('trap'); return target[name]; } });
    throwsCode(() => local.routeMany(proxy), 'invalid_argument');
    const sparse = [];
    sparse.length = 2 ** 32 - 1;
    throwsCode(() => local.routeMany(sparse), 'invalid_key');
    assert.deepEqual(Array.from(local.routeMany(new Proxy(['a'], {}))), [local.route('a')]);
    // No call left the router borrowed: it can still be freed.
    local.free();
  });

  test('a Uint8Array is read by its real length; a detached one is invalid_key', () => {
    const lying = Uint8Array.of(1, 2, 3);
    Object.defineProperty(lying, 'length', { value: 0 });
    assert.equal(hashKey(lying), hashKey(Uint8Array.of(1, 2, 3)));
    const inflated = new Uint8Array(16);
    Object.defineProperty(inflated, 'length', { value: 1 << 30 });
    assert.equal(hashKey(inflated), hashKey(new Uint8Array(16)));
    const detached = new Uint8Array(8);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    throwsCode(() => hashKey(detached), 'invalid_key');
    throwsCode(() => router.routeMany([detached]), 'invalid_key');
    assert.equal(typeof router.route(Uint8Array.of(1, 2, 3)), 'number');
  });

  test('a huge key is routed, not a trap', () => {
    const big = 'k'.repeat(1 << 20);
    assert.equal(router.routeMany([big])[0], router.route(big));
    assert.equal(hashKey(new Uint8Array(1 << 22)), hashKey(new Uint8Array(1 << 22)));
  });
});
