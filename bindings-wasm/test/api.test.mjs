// The package's JavaScript API as a user sees it (through its own `exports`): types
// crossing the boundary, errors, the conversions the conformance vectors do not exercise,
// and that no bad argument ever traps the WebAssembly instance.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import * as shardroute from 'shardroute-wasm';
import { Router, ShardrouteError, hashKey, jump } from 'shardroute-wasm';
import { packageDir } from './support.mjs';

const TOPOLOGY = {
  format: 'shardroute/1',
  epoch: 7,
  nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c', weight: 2 }, { id: 'd' }],
  strategy: { type: 'ring', points_per_node: 40 },
};
const router = new Router(TOPOLOGY);
const CODES = ['invalid_topology', 'invalid_key', 'no_nodes', 'limit_exceeded', 'invalid_argument'];

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
    for (const method of ['route', 'node', 'replicas', 'routeMany', 'epoch', 'toJson']) {
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
    ].map((err) => err.code));
    assert.deepEqual([...seen].sort(), [...CODES].sort());
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

describe('the WebAssembly instance survives bad input', () => {
  test('after every kind of error, the same Router and functions still work', () => {
    const local = new Router(TOPOLOGY);
    const before = { shards: Array.from(local.routeMany(['x', 1n, 2])), hash: hashKey('x'), bucket: jump(9n, 10) };
    const bad = [
      () => local.route('\udfff'), () => local.route(2 ** 60), () => local.route({}), () => local.route(-5n),
      () => local.replicas('x', -1), () => local.replicas('x', 1e300), () => local.routeMany('x'),
      () => local.routeMany([1, 2, Symbol('x')]), () => new Router('{"format": "shardroute/1"'),
      () => hashKey('k', { seed: 'zz' }), () => jump(1n, 0), () => jump(-1n, 3),
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
