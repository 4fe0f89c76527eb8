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
import { Router, ShardrouteError, hashKey, jump } from '../index.js';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const TOPOLOGY = {
  format: 'shardroute/1',
  epoch: 7,
  nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c', weight: 2 }, { id: 'd' }],
  strategy: { type: 'ring', points_per_node: 40 },
};
const router = new Router(TOPOLOGY);

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

describe('package', () => {
  test('index.d.ts declares exactly the runtime exports', () => {
    const declarations = fs.readFileSync(path.join(packageDir, 'index.d.ts'), 'utf8');
    const declared = [...declarations.matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual(declared.sort(), Object.keys(shardroute).filter((name) => name !== 'default').sort());
  });

  test('CommonJS require gives the same module', () => {
    const require = createRequire(import.meta.url);
    const cjs = require('../index.js');
    assert.deepEqual(Object.keys(cjs).sort(), ['Router', 'ShardrouteError', 'hashKey', 'jump']);
    assert.equal(cjs.Router, Router);
  });

  test('the version matches the workspace version', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
    const cargo = fs.readFileSync(path.join(packageDir, '..', 'Cargo.toml'), 'utf8');
    const workspaceVersion = /\[workspace\.package\][^[]*?\nversion = "([^"]+)"/.exec(cargo)?.[1];
    assert.equal(manifest.version, workspaceVersion);
  });
});
