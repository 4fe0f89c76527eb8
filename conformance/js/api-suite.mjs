// The API suite shared by the Node addon (`shardroute`) and the WASM package
// (`shardroute-wasm`): their JavaScript API as a user sees it, through the package's own
// name: types crossing the boundary, errors, the conversions the conformance vectors do
// not exercise, and that no bad argument ever breaks a router. Each package's
// test/api.test.mjs calls `apiSuite(api, runtime)` with its module and its column of
// runtimes.mjs, which names every way the two packages differ; nothing else may differ.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, test } from 'node:test';

import { doc } from './documents.mjs';
import { hostileSuite } from './hostile-suite.mjs';
import { repoRoot } from './vectors.mjs';

const CODES = ['invalid_topology', 'invalid_key', 'no_nodes', 'limit_exceeded', 'invalid_argument', 'stale_epoch',
  'read_only', 'cross_slot'];
/** Values that are not keys, for every call that takes one. */
const NOT_KEYS = [undefined, null, true, {}, [], new Uint16Array(1), '\ud800', -1n, 2n ** 64n, 2 ** 53, -1, 1.5];
/** Values that are not counts (salts, shard counts): not integers in 0..2^32. */
const NOT_COUNTS = [-1, 1.5, NaN, Infinity, 2 ** 32, '1', 1n, null, undefined, {}];
const bytes = (text) => new TextEncoder().encode(text);

/**
 * Defines the API tests for one package: `api` is its module, `runtime` its column of
 * runtimes.mjs (ADDON or WASM), every way in which it differs from the other package.
 */
export function apiSuite(api, runtime) {
  const {
    Migration, Router, ShardrouteError, apply, decodeDictionary, diff, encodeDictionary, hashKey, jump, moduloMoves,
    parseRedirect,
  } = api;
  const { packageName, packageDir } = runtime;

  const TOPOLOGY = doc({
    epoch: 7, nodes: ['a', 'b', { id: 'c', weight: 2 }, 'd'], strategy: { type: 'ring', points_per_node: 40 },
  });
  const router = new Router(TOPOLOGY);

  /**
   * A vbucket dictionary in motion: vbuckets 0 and 3 migrating (`map` -> `forward_map`:
   * reads from the old owner, writes to the new one first), 2 read-only, 1 active.
   */
  const DICTIONARY = doc({
    epoch: 3,
    nodes: ['a', 'b', 'c'],
    strategy: {
      type: 'vbucket',
      vbuckets: 4,
      map: [['a', 'b'], ['b', 'c'], ['c', 'a'], ['a', 'c']],
      forward_map: [['b', 'a'], ['b', 'c'], ['c', 'a'], ['c', 'a']],
      states: { 0: 'migrating', 2: 'read_only', 3: 'migrating' },
    },
  });

  /** A topology with addresses, zones, placement names and hot keys. */
  const PLACED = doc({
    epoch: 5,
    nodes: [
      { id: 'n0', address: '10.0.0.1:5432', zone: 'eu-1a' },
      { id: 'n1', address: '10.0.0.2:5432' },
      { id: 'n2', zone: 'eu-1c' },
    ],
    strategy: 'jump',
    placement: { database: 'db_{shard}', table: 'events_{shard:03}', host: '{node}' },
    hot_keys: { separator: '#', keys: { hot: 4, 'ключ': 3 } },
  });
  const placed = new Router(PLACED);

  /**
   * Three masters and one replica each, with addresses, as CLUSTER SHARDS gives them (the
   * cluster of core/tests/redis_redirects.rs): what the Redis Cluster client calls read.
   */
  const CLUSTER = doc({
    epoch: 5,
    nodes: ['m1', 'm2', 'm3', 'r1', 'r2', 'r3'].map((id, i) => ({ id, address: `127.0.0.1:${7001 + i}` })),
    strategy: {
      type: 'redis_cluster',
      slots: [
        { start: 0, end: 5460, nodes: ['m1', 'r1'] },
        { start: 5461, end: 10922, nodes: ['m2', 'r2'] },
        { start: 10923, end: 16383, nodes: ['m3', 'r3'] },
      ],
    },
  });
  const cluster = new Router(CLUSTER);

  /** A key (`key:0`, `key:1`, ...) that `local` sends to `shard`: test data, found by trying. */
  function keyOnShard(local, shard) {
    for (let i = 0; i < 10000; i++) if (local.route(`key:${i}`) === shard) return `key:${i}`;
    throw new Error(`no key on shard ${shard}`);
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

  /** A child Node process running `script` (CommonJS) in the package directory: its output lines. */
  function runChild(script, flags = []) {
    const child = spawnSync(process.execPath, [...flags, '-e', script], { cwd: packageDir, encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    return child.stdout.trim().split('\n');
  }

  const declarations = readFileSync(join(packageDir, 'index.d.ts'), 'utf8');
  /**
   * The members index.d.ts declares for class `name`: `methods` (getters included, each
   * once), the `getters` among them, and `statics`.
   */
  function declaredMembers(name) {
    const body = new RegExp(`^export declare class ${name} [^{]*\\{\\n([\\s\\S]*?)^\\}`, 'm').exec(declarations)?.[1];
    assert.ok(body, `index.d.ts declares class ${name}`);
    const names = (pattern) => [...new Set([...body.matchAll(pattern)].map((m) => m[1]))];
    return {
      methods: names(/^ {2}(?:get )?(\w+)\(/gm).filter((member) => member !== 'constructor'),
      getters: names(/^ {2}get (\w+)\(/gm),
      statics: names(/^ {2}static (\w+)\(/gm),
    };
  }
  const declaredMethods = declaredMembers('Router').methods;

  hostileSuite(api, runtime, declarations);

  describe('RoutingService', () => {
    test('the core\'s answers, and bad arguments refused with invalid_argument, never coerced or replaced', () => {
      const { RoutingService } = api;
      const router = new Router({ format: 'shardroute/1', epoch: 4, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'jump' } });
      const service = new RoutingService(router);
      const ok = service.answer('GET', '/route?key=user%3A1');
      assert.equal(ok.status, 200);
      assert.ok(ok.body instanceof Uint8Array);
      assert.deepEqual(JSON.parse(new TextDecoder().decode(ok.body)), { epoch: 4, node: router.node('user:1'), shard: router.route('user:1') });
      assert.equal(ok.headers.find(([name]) => name === 'etag')[1], service.etag);
      assert.equal(service.answer('GET', '/route?key=user%3A1', service.etag).status, 304);
      const batch = service.answer('POST', '/route', null, new TextEncoder().encode('{"keys": ["a", 7]}'));
      assert.deepEqual(JSON.parse(new TextDecoder().decode(batch.body)).answers.map(({ shard }) => shard), [router.route('a'), router.route(7)]);
      // A body made in another realm is a Uint8Array all the same; a view of another
      // element type is not.
      const foreign = runInNewContext('Uint8Array.from(bytes)', { bytes: [...new TextEncoder().encode('{"keys": ["a"]}')] });
      assert.ok(!(foreign instanceof Uint8Array));
      assert.equal(service.answer('POST', '/route', null, foreign).status, 200);
      for (const bad of [
        () => service.answer('POST', '/route', null, new Uint16Array(4)),
        () => new RoutingService({}),
        () => service.answer(1, '/route'),
        () => service.answer('GET', undefined),
        () => service.answer('GET', '/route', 5),
        () => service.answer('POST', '/route', null, 'text'),
        () => service.answer('GET', '/route?key=\ud800'),
        () => RoutingService.handles(7),
        () => RoutingService.bodyTooLarge('x'),
      ]) {
        throwsCode(bad, 'invalid_argument');
      }
      assert.equal(RoutingService.bodyTooLarge(2 ** 21).status, 413);
      assert.equal(RoutingService.bodyTimedOut().status, 408);
      assert.equal(RoutingService.unavailable().status, 503);
      assert.deepEqual(Array.from(RoutingService.limits()), [1024 * 1024, 10_000, 10_000]);
      assert.ok(RoutingService.handles('/route?key=1') && !RoutingService.handles('/'));
    });
  });

  describe('package', () => {
    test('require resolves the package by name, and require and import share one module', () => {
      const require = createRequire(join(packageDir, 'package.json'));
      assert.equal(require.resolve(packageName), join(packageDir, runtime.main));
      const cjs = require(packageName);
      assert.deepEqual(Object.keys(cjs).sort(), [
        'Action', 'ClusterSession', 'Command', 'MAX_DOCUMENT_BYTES', 'MAX_JSON_NESTING', 'Migration', 'MigrationSession',
        'Offered', 'Router', 'RoutingService', 'ShardrouteError', 'SourceSession',
        'TopologyFollower', 'apply', 'decodeDictionary', 'diff', 'encodeDictionary', 'followerDefaults', 'hashKey', 'jump',
        'moduloMoves', 'parseAddress', 'parseRedirect', 'sessionDefaults',
      ]);
      assert.equal(cjs.Migration, Migration);
      assert.equal(cjs.Router, Router);
      assert.equal(cjs.ShardrouteError, ShardrouteError);
    });

    test('index.d.ts is bindings-js/index.d.ts and declares exactly the exports', () => {
      assert.equal(declarations, readFileSync(join(repoRoot, 'bindings-js', 'index.d.ts'), 'utf8'), 'run build.sh');
      const declared = [...declarations.matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1]);
      const exported = Object.keys(api).filter((name) => name !== 'default' && name !== 'module.exports');
      assert.deepEqual(declared.sort(), exported.sort());
      for (const method of ['route', 'node', 'replicas', 'routeMany', 'routeU64s', 'routePacked', 'nodeMany', 'epoch',
        'toJson', 'shardsForRange', 'decodeId', 'locate', 'fanout', 'saltedKey', 'saltedKeys', 'routeRead', 'routeWrite',
        'replace', 'readReplica', 'sameSlot', 'groupByNode', 'stats', 'moved', 'ask', 'shardOwner', 'scatterEvery',
        'scatterRange', 'scatterKeys']) {
        assert.ok(declaredMethods.includes(method), `index.d.ts declares Router.${method}`);
      }
      assert.deepEqual(declaredMembers('Migration'), {
        methods: ['before', 'after', 'moves', 'writeTarget', 'readTargets', 'readKeys', 'writeKey', 'movingShards', 'scanNodes', 'movingKeys'],
        getters: ['before', 'after'],
        statics: ['ofDictionary'],
      });
    });

    for (const [name, Class] of [['Router', Router], ['Migration', Migration]]) {
      test(`${name} has the declared methods, plus only the runtime's own`, () => {
        const { methods, getters, statics } = declaredMembers(name);
        const extras = runtime.classExtras;
        assert.deepEqual(Object.getOwnPropertyNames(Class.prototype).sort(),
          ['constructor', ...methods, ...extras.methods].sort());
        assert.deepEqual(Object.getOwnPropertyNames(Class).sort(),
          ['length', 'name', 'prototype', ...statics, ...extras.statics].sort());
        for (const member of methods) {
          const descriptor = Object.getOwnPropertyDescriptor(Class.prototype, member);
          if (getters.includes(member)) {
            assert.deepEqual([typeof descriptor.get, descriptor.set], ['function', undefined], member);
            continue;
          }
          assert.equal(typeof descriptor.value, 'function', member);
          assert.deepEqual([descriptor.writable, descriptor.enumerable, descriptor.configurable], [true, false, true], member);
        }
        for (const member of statics) {
          const descriptor = Object.getOwnPropertyDescriptor(Class, member);
          assert.equal(typeof descriptor.value, 'function', member);
          assert.deepEqual([descriptor.writable, descriptor.enumerable, descriptor.configurable], [true, false, true], member);
        }
      });
    }

    test('the version is the workspace version', () => {
      const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
      const cargo = readFileSync(join(repoRoot, 'Cargo.toml'), 'utf8');
      const workspaceVersion = /\[workspace\.package\][^[]*?\nversion = "([^"]+)"/.exec(cargo)?.[1];
      assert.equal(manifest.version, workspaceVersion);
      assert.equal(manifest.name, packageName);
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

    test('messages are the core\'s, the same in every build (the WASM build sorts with optimize_for_size)', () => {
      // Two slot ranges starting at one slot: core breaks the sort tie by position, so the
      // message names the later range here as in Rust and Python.
      const slots = [{ start: 0, end: 100, nodes: ['a'] }, { start: 0, end: 16383, nodes: ['b'] }];
      const err = throwsCode(() => new Router(doc({ nodes: ['a', 'b'], strategy: { type: 'redis_cluster', slots } })),
        'invalid_topology');
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
      const dictionary = new Router(DICTIONARY);
      const seen = new Set([
        throwsCode(() => new Router('{'), 'invalid_topology'),
        throwsCode(() => router.route('\ud800'), 'invalid_key'),
        throwsCode(() => new Router({ ...TOPOLOGY, nodes: [] }), 'no_nodes'),
        throwsCode(() => jump(1n, 0), 'no_nodes'),
        throwsCode(() => new Router({ ...TOPOLOGY, strategy: { type: 'ring', points_per_node: 100000 } }), 'limit_exceeded'),
        throwsCode(() => router.replicas('k', 0), 'invalid_argument'),
        throwsCode(() => router.replace({ ...TOPOLOGY, epoch: 6 }), 'stale_epoch'),
        throwsCode(() => dictionary.routeWrite(keyOnShard(dictionary, 2)), 'read_only'),
        throwsCode(() => cluster.sameSlot(['a', 'b']), 'cross_slot'),
      ].map((err) => err.code));
      assert.deepEqual([...seen].sort(), [...CODES].sort());
    });
  });

  describe('string keys: route and node answer for a string as for its UTF-8 bytes', () => {
    const TEXTS = ['', 'a', 'user:1', 'caf\u00e9', 'ключ', '\ud83d\udd11', '\ufffd', 'x'.repeat(300), '{tag}.rest'];
    const plain = { ...TOPOLOGY, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] };
    const routers = [router, new Router({ ...plain, strategy: { type: 'jump' } }),
      new Router({ ...plain, hashing: { function: 'crc32', hash_tag: 'redis' }, strategy: { type: 'modulo' } })];

    test('short, long and non-ASCII strings, under several strategies and hashings', () => {
      for (const r of routers) {
        for (const text of TEXTS) {
          assert.equal(r.route(text), r.route(bytes(text)), JSON.stringify(text));
          assert.equal(r.node(text), r.node(bytes(text)), JSON.stringify(text));
        }
      }
    });

    test('every length near the short-string buffers (the addon\'s stack buffer, the WASM key buffer)', () => {
      // Regression: a multi-byte string truncated at a character boundary by N-API's UTF-8
      // read looked complete and routed as a prefix of itself.
      const rendezvous = new Router(doc({ nodes: ['a', 'b', 'c'], strategy: 'rendezvous' }));
      for (const unit of ['a', 'ю', '日', '🔑', 'aю', 'a🔑']) {
        for (let n = 1; n <= 90; n++) {
          const key = unit.repeat(n);
          assert.equal(rendezvous.route(key), rendezvous.route(bytes(key)), `${JSON.stringify(unit)} x ${n}`);
          assert.equal(rendezvous.node(key), rendezvous.node(bytes(key)), `${JSON.stringify(unit)} x ${n}`);
        }
      }
    });

    test('still right after a batch large enough to grow WebAssembly memory (which detaches its buffers)', () => {
      const before = TEXTS.map((text) => [router.route(text), router.node(text)]);
      // A batch of 2^21 keys of 40 bytes needs far more memory than the module has yet.
      const big = new Router({ ...TOPOLOGY, strategy: { type: 'ring', points_per_node: 10000 } });
      assert.equal(big.routeMany(Array.from({ length: 2 ** 21 }, (_, i) => `${'k'.repeat(32)}:${i}`)).length, 2 ** 21);
      assert.deepEqual(TEXTS.map((text) => [router.route(text), router.node(text)]), before);
      assert.deepEqual(TEXTS.map((text) => big.route(text)), TEXTS.map((text) => big.route(bytes(text))));
    });

    test('a core error for a well-formed string is the one for its bytes, code and message', () => {
      const idOnly = new Router(doc({ nodes: ['a'], strategy: { type: 'id_bits', layout: 'shard_high' } }));
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

    test('a missing key is undefined; routers made by replace route the same', () => {
      assert.equal(throwsCode(() => router.route(), 'invalid_key').message,
        throwsCode(() => router.route(undefined), 'invalid_key').message);
      throwsCode(() => router.node(), 'invalid_key');
      const next = router.replace({ ...TOPOLOGY, epoch: 8 });
      for (const key of ['a', 'user:42', 7n, Buffer.from('b')]) {
        assert.equal(next.route(key), router.route(key));
        assert.equal(next.node(key), router.node(key));
      }
    });
  });

  describe('string batches', () => {
    // routeMany and nodeMany copy an array of strings into one typed array of code units,
    // which the binding converts to UTF-8 key by key: these check that path against the
    // single calls.
    const rendezvous = new Router(doc({ nodes: ['a', 'b', 'c'], strategy: 'rendezvous' }));
    const ascii = Array.from({ length: 10 }, (_, i) => `user:${i}`);

    test('strings of any text and length route as the single calls do', () => {
      const texts = ['', 'café', 'ключ', '日本語', '\ud83d\udd11', '\ufffd', 'a\u0000b', 'x'.repeat(63), 'é'.repeat(64),
        '🔑'.repeat(40)];
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
      const utf8 = bytes('ключ');
      assert.equal(hashKey('ключ'), hashKey(utf8));
      assert.equal(hashKey(Buffer.from(utf8)), hashKey(utf8));
      assert.equal(router.node('ключ'), router.node(utf8));
      // A view into a larger buffer hashes only its own bytes.
      const view = new Uint8Array([9, 1, 2, 9]).subarray(1, 3);
      assert.equal(hashKey(view), hashKey(Uint8Array.of(1, 2)));
      assert.equal(hashKey(new Uint8Array(0)), hashKey(''));
    });

    test('the integer 42 and the text "42" are different keys', () => {
      assert.notEqual(hashKey(42n), hashKey('42'));
    });

    test('values of other types are invalid_key', () => {
      const values = [undefined, null, true, {}, [], ['a'], [1], Symbol('k'), () => 1, new Uint16Array(2), new Int8Array(1),
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
    test('epoch is a bigint, exact above 2^53', () => {
      assert.equal(router.epoch, 7n);
      const big = 2n ** 53n + 1n;
      assert.equal(new Router({ ...TOPOLOGY, epoch: big }).epoch, big, 'a bigint field is written as a decimal string');
      assert.equal(new Router({ ...TOPOLOGY, epoch: String(big) }).epoch, big, 'a decimal string');
      const text = JSON.stringify(TOPOLOGY).replace('"epoch":7', `"epoch":${big}`);
      assert.equal(new Router(text).epoch, big, 'a JSON number in text');
      const max = new Router({ ...TOPOLOGY, epoch: 2n ** 64n - 1n });
      assert.equal(max.epoch, 2n ** 64n - 1n);
      assert.match(max.toJson(), /"epoch":"18446744073709551615"/);
      throwsCode(() => new Router({ ...TOPOLOGY, epoch: 2n ** 64n }), 'invalid_topology');
    });

    test('an object topology and its JSON text give identical routers', () => {
      const fromText = new Router(JSON.stringify(TOPOLOGY));
      assert.equal(router.toJson(), fromText.toJson());
      assert.equal(new Router(router.toJson()).toJson(), router.toJson(), 'toJson round-trips');
      for (const key of ['a', 'user:1', 7n, 0]) {
        assert.equal(router.route(key), fromText.route(key));
        assert.equal(router.node(key), fromText.node(key));
        assert.deepEqual(router.replicas(key, 3), fromText.replicas(key, 3));
      }
      const demo = readFileSync(join(repoRoot, 'conformance', 'demo', 'topology.json'), 'utf8');
      assert.equal(new Router(JSON.parse(demo)).toJson(), new Router(demo).toJson());
    });

    test('routeMany is a Uint32Array equal to route on each key', () => {
      const keys = ['a', 'b', 'user:1', 'user:2', '', 'ключ', 0, 1, 42, 2 ** 53 - 1, 0n, 2n ** 64n - 1n, Uint8Array.of(1, 2, 3),
        Buffer.from('x')];
      const shards = router.routeMany(keys);
      assert.ok(shards instanceof Uint32Array);
      assert.deepEqual(Array.from(shards), keys.map((key) => router.route(key)));
      assert.deepEqual(router.routeMany([]), new Uint32Array(0));
    });

    test('routeMany names the index of a bad key and rejects non-arrays', () => {
      for (const bad of [2 ** 60, '\ud800']) {
        const err = throwsCode(() => router.routeMany(['a', 'b', bad]), 'invalid_key');
        assert.match(err.message, /^keys\[2\]: /);
      }
      throwsCode(() => router.routeMany(['a', 1.5]), 'invalid_key');
      for (const notArray of ['ab', null, undefined, 3, { length: 1, 0: 'a' }, new Set(['a']), Uint8Array.of(1)]) {
        throwsCode(() => router.routeMany(notArray), 'invalid_argument');
      }
    });

    test('node and replicas agree; replicas are distinct strings, owner first', () => {
      for (const key of ['a', 'b', 'c', 'user:1', 'user:42', 99n]) {
        const replicas = router.replicas(key, 4);
        assert.equal(replicas[0], router.node(key));
        assert.deepEqual(router.replicas(key, 1), [router.node(key)]);
        assert.deepEqual(router.replicas(key, 2), replicas.slice(0, 2));
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
      const cyclic = { ...TOPOLOGY };
      cyclic.self = cyclic;
      const throwing = { toJSON() { throw new Error('no'); } };
      for (const bad of [undefined, null, 42, 42n, true, Symbol('t'), () => TOPOLOGY, cyclic, throwing, [], [TOPOLOGY], '',
        'null', '\ud800']) {
        throwsCode(() => new Router(bad), 'invalid_topology');
      }
      throwsCode(() => new Router({ ...TOPOLOGY, epoch: NaN }), 'invalid_topology');
      throwsCode(() => new Router(JSON.stringify(TOPOLOGY).replace('"a"', '"\ud800"')), 'invalid_topology');
      throwsCode(() => new Router({ ...TOPOLOGY, nodes: [{ id: '\ud800' }] }), 'invalid_topology');
    });
  });

  describe('hashKey and jump', () => {
    test('hashKey: published reference values, the default spec, a spec as text or object', () => {
      // SipHash-2-4 paper, empty input, key 00..0f; and the CRC-32 check value.
      assert.equal(hashKey(''), 0x726fdb47dd0e0e31n);
      assert.equal(hashKey('', undefined), 0x726fdb47dd0e0e31n);
      assert.equal(hashKey('', null), 0x726fdb47dd0e0e31n);
      assert.equal(hashKey('123456789', { function: 'crc32' }), 0xcbf43926n);
      assert.equal(hashKey('123456789', '{"function": "crc32"}'), 0xcbf43926n);
      assert.equal(hashKey(2n ** 64n - 1n, { integers: 'identity' }), 2n ** 64n - 1n);
    });

    test('hashKey rejects bad hashing specs as invalid_topology', () => {
      for (const bad of [42, 5, 42n, true, [], '{', 'null', '{"function": "md5"}', { function: 'md5' }, Symbol('h')]) {
        throwsCode(() => hashKey('k', bad), 'invalid_topology');
      }
    });

    test('jump takes a bigint or a decimal string', () => {
      assert.equal(jump(1n, 100), 55); // Guava's golden value
      assert.equal(jump('1', 100), 55);
      assert.equal(jump(2n ** 64n - 1n, 1), 0);
      assert.equal(jump('18446744073709551615', 7), jump(2n ** 64n - 1n, 7));
      assert.equal(typeof jump('18446744073709551615', 4294967295), 'number');
    });

    test('jump rejects bad hashes as invalid_key and bad bucket counts as invalid_argument', () => {
      for (const bad of [-1n, 2n ** 64n, '-1', '18446744073709551616', '0x10', ' 1', '', '1.0', 1, null, undefined, '\ud800']) {
        throwsCode(() => jump(bad, 3), 'invalid_key');
      }
      for (const bad of [-1, 1.5, NaN, 2 ** 32, '3', 3n, null, undefined]) {
        throwsCode(() => jump(1n, bad), 'invalid_argument');
      }
      throwsCode(() => jump(1n, 0), 'no_nodes');
      assert.equal(typeof jump(1n, 2 ** 32 - 1), 'number');
    });
  });

  describe('scatter plans', () => {
    test('in columns of plain arrays, node ids named, keys only for scatterKeys; policies by argument', () => {
      const map = new Router({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a', zone: 'east' }, { id: 'b' }],
        strategy: { type: 'vbucket', vbuckets: 4, map: [['a', 'b'], ['b', 'a'], ['a'], ['b']] } });
      const every = map.scatterEvery();
      assert.deepEqual(every, { gather: 'union', shards: [0, 1, 2, 3], nodes: ['a', 'b', 'a', 'b'], keys: null });
      assert.ok(Array.isArray(every.shards), 'a plain array, not a Uint32Array');
      assert.deepEqual(map.scatterEvery('replicas', 0).nodes, ['b', 'a', 'a', 'b']);
      assert.deepEqual(map.scatterEvery('replicas', null, undefined), map.scatterEvery('replicas'));
      assert.deepEqual(map.scatterEvery('zone', 0, 'east').nodes, ['a', 'a', 'a', 'b']);
      assert.equal(map.scatterRange('a').gather, 'merge');
      const plan = map.scatterKeys(['k1', 'k1', 7n]);
      assert.equal(plan.keys.length, plan.shards.length);
      assert.deepEqual(plan.keys.flat().sort(), [0, 1, 2]);
      throwsCode(() => map.scatterEvery('nearest'), 'invalid_argument');
      throwsCode(() => map.scatterEvery('zone'), 'invalid_argument');
    });
  });

  describe('shardsForRange', () => {
    test('hash strategies scatter every range: all shards, a plain array', () => {
      const all = router.shardsForRange('a', 'z');
      assert.ok(Array.isArray(all), 'a plain array, not a Uint32Array');
      assert.deepEqual(all, [0, 1, 2, 3]);
      assert.deepEqual(router.shardsForRange(0n, 10n), all);
      assert.deepEqual(router.shardsForRange(0n, 2n ** 64n - 1n), all);
      assert.deepEqual(router.shardsForRange(Uint8Array.of(0), Uint8Array.of(255)), all);
      assert.deepEqual(placed.shardsForRange('a', 'b'), [0, 1, 2]);
      const oneBased = new Router({ ...PLACED, strategy: { type: 'modulo', one_based: true } });
      assert.deepEqual(oneBased.shardsForRange(Uint8Array.of(0)), [1, 2, 3], 'the shard numbers route can return');
      const unweighted = new Router({ ...TOPOLOGY, nodes: TOPOLOGY.nodes.map(({ id }) => ({ id })),
        strategy: { type: 'modulo', one_based: true } });
      assert.deepEqual(unweighted.shardsForRange(''), [1, 2, 3, 4]);
    });

    test('an omitted, undefined or null end means to the end of the key space', () => {
      for (const r of [placed, router]) {
        const expected = r.shardsForRange('m', 'z');
        assert.deepEqual(r.shardsForRange('m'), expected);
        assert.deepEqual(r.shardsForRange('m', undefined), expected);
        assert.deepEqual(r.shardsForRange('m', null), expected);
      }
    });

    test('bounds that are not keys are invalid_key, for start and end', () => {
      for (const bad of NOT_KEYS) {
        // An end of null or undefined means "to the end".
        if (bad !== undefined && bad !== null) throwsCode(() => placed.shardsForRange('a', bad), 'invalid_key');
        throwsCode(() => placed.shardsForRange(bad, 'z'), 'invalid_key');
      }
      throwsCode(() => placed.shardsForRange(), 'invalid_key');
    });
  });

  describe('decodeId', () => {
    test('ids are bigints or decimal strings in 0..2^64, else invalid_key', () => {
      for (const bad of [-1n, 2n ** 64n, '-1', '18446744073709551616', '0x10', ' 1', '', '\ud800', 1, 42, null, undefined,
        {}]) {
        throwsCode(() => placed.decodeId(bad), 'invalid_key');
      }
    });

    test('a strategy whose ids do not carry a shard refuses with invalid_argument', () => {
      for (const id of [0n, 42n, 2n ** 64n - 1n, '42', '18446744073709551615']) {
        assert.match(throwsCode(() => placed.decodeId(id), 'invalid_argument').message, /decode_id/);
        assert.match(throwsCode(() => router.decodeId(id), 'invalid_argument').message, /decode_id/);
      }
    });
  });

  describe('locate', () => {
    test('gives shard, node, address, zone (null when absent) and rendered names', () => {
      const seen = new Set();
      for (let i = 0; seen.size < 3 && i < 1000; i++) {
        const key = `user:${i}`;
        const location = placed.locate(key);
        assert.deepEqual(Object.keys(location), runtime.locateKeys);
        assert.equal(Object.getPrototypeOf(location), Object.prototype, 'a plain object');
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

    test('templates render braces; every key type locates where it routes', () => {
      const text = JSON.stringify(doc({
        nodes: [{ id: 'a', address: '10.0.0.1:5432', zone: 'eu-1a' }, 'b'],
        strategy: 'modulo',
        placement: { database: 'db_{shard}', table: 'comments_{shard:03}', owner: '{node}', brace: '{{x}}' },
      }));
      const modulo = new Router(text);
      assert.deepEqual(modulo.locate(keyOnShard(modulo, 0)), {
        shard: 0, node: 'a', address: '10.0.0.1:5432', zone: 'eu-1a',
        names: { brace: '{x}', database: 'db_0', owner: 'a', table: 'comments_000' },
      });
      assert.deepEqual(modulo.locate(keyOnShard(modulo, 1)), {
        shard: 1, node: 'b', address: null, zone: null,
        names: { brace: '{x}', database: 'db_1', owner: 'b', table: 'comments_001' },
      });
      for (const key of ['x', 7n, 7, Uint8Array.of(1)]) {
        const { shard, node } = modulo.locate(key);
        assert.equal(shard, modulo.route(key));
        assert.equal(node, modulo.node(key));
      }
    });

    test('without a placement section, names is an empty object', () => {
      const location = router.locate(7n);
      assert.deepEqual(location.names, {});
      assert.equal(location.address, null);
      assert.equal(location.zone, null);
      assert.equal(location.node, router.node(7n));
      assert.deepEqual(router.locate('k').names, {});
    });

    test('a template named __proto__ is an own property, not the prototype', () => {
      const text = JSON.stringify({ ...TOPOLOGY, placement: { x: 'x_{shard}' } }).replace('"x"', '"__proto__"');
      const odd = new Router(text);
      const { names, shard } = odd.locate('k');
      assert.equal(Object.getPrototypeOf(names), Object.prototype);
      assert.deepEqual(Object.keys(names), ['__proto__']);
      assert.ok(Object.hasOwn(names, '__proto__'));
      assert.equal(names.__proto__, `x_${shard}`); // eslint-disable-line no-proto
    });

    test('values that are not keys are invalid_key', () => {
      for (const bad of NOT_KEYS) {
        throwsCode(() => placed.locate(bad), 'invalid_key');
        throwsCode(() => router.locate(bad), 'invalid_key');
      }
    });
  });

  describe('hot-key salting', () => {
    const hot = new Router({ ...TOPOLOGY, hot_keys: PLACED.hot_keys });

    test('fanout is the hot key fanout, 1 for other keys and for integers', () => {
      for (const r of [placed, hot]) {
        assert.equal(r.fanout('hot'), 4);
        assert.equal(r.fanout(Buffer.from('hot')), 4, 'bytes and text are the same key');
        assert.equal(r.fanout('ключ'), 3);
        assert.equal(r.fanout('cold'), 1);
        assert.equal(r.fanout(42), 1);
        assert.equal(r.fanout(42n), 1, 'integer keys are never hot');
      }
      assert.equal(router.fanout('hot'), 1, 'a topology without hot_keys');
    });

    test('saltedKey returns the type of its key: string, Uint8Array, bigint', () => {
      for (const r of [placed, hot]) {
        assert.equal(r.saltedKey('hot', 1), 'hot#1');
        assert.equal(r.saltedKey('hot', 6), 'hot#2', 'salt modulo fanout');
        assert.equal(r.saltedKey('hot', 7), 'hot#3');
        assert.equal(r.saltedKey('ключ', 2), 'ключ#2');
        assert.equal(r.saltedKey('ключ', 4), 'ключ#1', 'non-ASCII text stays a string');
        assert.equal(r.saltedKey('cold', 5), 'cold', 'a key that is not hot is its own salted key');
        assert.equal(r.saltedKey('cold', 9), 'cold');
        assert.equal(r.saltedKey('hot', 2 ** 32 - 1), `hot#${(2 ** 32 - 1) % 4}`);
        assert.equal(r.saltedKey(42n, 1), 42n);
        assert.equal(r.saltedKey(42, 1), 42n, 'a number key comes back as a bigint');
        assert.equal(r.saltedKey(2n ** 64n - 1n, 0), 2n ** 64n - 1n);
      }
    });

    test('saltedKey of bytes is a new Uint8Array, a view reading only its own bytes', () => {
      const salted = placed.saltedKey(Buffer.from('hot'), 2);
      assert.ok(salted instanceof Uint8Array);
      assert.deepEqual(Array.from(salted), Array.from(bytes('hot#2')));
      assert.deepEqual(hot.saltedKey(bytes('hot'), 3), bytes('hot#3'));
      const view = new Uint8Array([9, ...bytes('hot'), 9]).subarray(1, 4);
      assert.deepEqual(Array.from(placed.saltedKey(view, 0)), Array.from(bytes('hot#0')));
      const unsalted = placed.saltedKey(Uint8Array.of(1, 2), 3);
      assert.ok(unsalted instanceof Uint8Array);
      assert.deepEqual(Array.from(unsalted), [1, 2]);
      const cold = Uint8Array.of(0, 255);
      const same = hot.saltedKey(cold, 1);
      assert.ok(same instanceof Uint8Array);
      assert.deepEqual(Array.from(same), [0, 255]);
      assert.notEqual(same, cold, 'a copy, not the caller\'s array');
    });

    test('a salted key routes like any key', () => {
      for (let salt = 0; salt < 4; salt++) {
        assert.equal(placed.route(placed.saltedKey('hot', salt)), placed.route(`hot#${salt}`));
      }
    });

    test('saltedKeys gives every salted form with its shard, salt 0 first, in the key type', () => {
      const pairs = placed.saltedKeys('hot');
      assert.ok(Array.isArray(pairs) && Array.isArray(pairs[0]), 'plain arrays');
      assert.deepEqual(pairs, [0, 1, 2, 3].map((salt) => [`hot#${salt}`, placed.route(`hot#${salt}`)]));
      for (const r of [placed, hot]) {
        for (const [text, count] of [['ключ', 3], ['hot', 4]]) {
          const fromBytes = r.saltedKeys(Buffer.from(text));
          assert.equal(fromBytes.length, count);
          for (const [salt, [key, shard]] of fromBytes.entries()) {
            assert.ok(key instanceof Uint8Array);
            assert.deepEqual(Array.from(key), Array.from(bytes(`${text}#${salt}`)));
            assert.equal(shard, r.route(key));
            assert.equal(shard, r.route(`${text}#${salt}`));
          }
        }
      }
      for (const r of [placed, hot]) {
        assert.deepEqual(r.saltedKeys('cold'), [['cold', r.route('cold')]]);
        assert.deepEqual(r.saltedKeys(7), [[7n, r.route(7)]]);
        assert.deepEqual(r.saltedKeys(7n), [[7n, r.route(7n)]]);
      }
    });

    test('salts must be integers in 0..2^32, else invalid_argument; keys must be keys', () => {
      for (const bad of NOT_COUNTS) throwsCode(() => placed.saltedKey('hot', bad), 'invalid_argument');
      for (const bad of NOT_KEYS) {
        throwsCode(() => placed.saltedKey(bad, 0), 'invalid_key');
        throwsCode(() => placed.saltedKeys(bad), 'invalid_key');
        throwsCode(() => placed.fanout(bad), 'invalid_key');
      }
    });
  });

  describe('apply', () => {
    test('returns a new object with the new document under topology and the report; inputs unchanged', () => {
      const before = structuredClone(PLACED);
      const result = apply(PLACED, { op: 'add_node', node: { id: 'n3' } });
      assert.deepEqual(PLACED, before, 'the input is not modified');
      assert.deepEqual(Object.keys(result).sort(), ['added', 'topology']);
      assert.equal(result.added, 'n3');
      assert.equal(result.topology.epoch, 6);
      assert.deepEqual(result.topology.nodes.map((node) => node.id), ['n0', 'n1', 'n2', 'n3']);
      const next = new Router(result.topology);
      assert.equal(next.epoch, 6n);
      assert.equal(next.toJson(), new Router(JSON.stringify(result.topology)).toJson());

      const removed = apply(next.toJson(), '{"op": "remove_node", "id": "n1"}');
      assert.deepEqual(removed, { removed: 'n1', topology: removed.topology });
      assert.deepEqual(removed.topology.nodes.map((node) => node.id), ['n0', 'n2', 'n3']);
      assert.equal(removed.topology.epoch, 7);
    });

    test('add_node and remove_node: the new documents, epoch + 1 each, and the reports', () => {
      const added = apply(TOPOLOGY, { op: 'add_node', node: { id: 'e', zone: 'z' } });
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

    test('text and object forms of topology and operation give the same result; the document is canonical', () => {
      for (const operation of [{ op: 'add_node', node: { id: 'x', weight: 2 } }, { op: 'remove_node', id: 'c' }]) {
        const expected = apply(TOPOLOGY, operation);
        assert.deepEqual(apply(JSON.stringify(TOPOLOGY), operation), expected);
        assert.deepEqual(apply(TOPOLOGY, JSON.stringify(operation)), expected);
        assert.deepEqual(apply(JSON.stringify(TOPOLOGY), JSON.stringify(operation)), expected);
        assert.deepEqual(apply(router.toJson(), operation), expected);
        assert.deepEqual(expected.topology, JSON.parse(new Router(expected.topology).toJson()), 'the canonical document');
      }
    });

    test('epochs above 2^53 stay exact: bigint in, decimal string out', () => {
      const result = apply({ ...TOPOLOGY, epoch: 2n ** 60n }, { op: 'remove_node', id: 'a' });
      assert.equal(result.topology.epoch, (2n ** 60n + 1n).toString());
      assert.equal(new Router(result.topology).epoch, 2n ** 60n + 1n);
      throwsCode(() => apply({ ...TOPOLOGY, epoch: 2n ** 64n - 1n }, { op: 'remove_node', id: 'a' }), 'invalid_topology');
    });

    test('bad operations are invalid_argument, bad topologies as for new Router', () => {
      const cyclic = { op: 'add_node' };
      cyclic.node = cyclic;
      for (const bad of [{ op: 'split' }, { op: 'remove_node', id: 'nobody' }, { op: 'remove_node', id: 1 }, { op: 'add_node' },
        { op: 'add_node', node: { id: 'a' }, extra: 1 }, { op: 'add_node', node: { id: 'e' }, extra: 1 }, {}, [], '{', 'null', '"add_node"', '[]', '\ud800', 42, 42n, null,
        undefined, true, Symbol('op'), cyclic, { toJSON() { throw new Error('no'); } }]) {
        throwsCode(() => apply(TOPOLOGY, bad), 'invalid_argument');
      }
      throwsCode(() => apply(TOPOLOGY, { op: 'add_node', node: { id: 'a' } }), 'invalid_topology'); // a duplicate id
      for (const bad of ['{', 'null', '', 42, null, undefined, [], { ...TOPOLOGY, nodes: [{ id: '\ud800' }] }]) {
        throwsCode(() => apply(bad, { op: 'remove_node', id: 'a' }), 'invalid_topology');
      }
      throwsCode(() => apply({ ...TOPOLOGY, nodes: [] }, { op: 'remove_node', id: 'a' }), 'no_nodes');
      throwsCode(() => apply({ ...TOPOLOGY, nodes: [] }, { op: 'add_node', node: { id: 'a' } }), 'no_nodes');
      throwsCode(() => apply('{', 5), 'invalid_topology'); // the topology is checked first
      const table = doc({ nodes: ['a'], strategy: { type: 'vbucket', vbuckets: 1, map: [['a']] } });
      throwsCode(() => apply(table, { op: 'add_node', node: { id: 'b' } }), 'invalid_argument');
    });
  });

  describe('moduloMoves', () => {
    test('whole-factor growth and shrinkage as arrays of arrays of numbers', () => {
      const moves = moduloMoves(2, 4);
      assert.deepEqual(moves, [[0, 2], [1, 3]]);
      assert.ok(Array.isArray(moves) && Array.isArray(moves[0]), 'plain arrays, not typed arrays');
      assert.deepEqual(moduloMoves(2, 6), [[0, 2, 4], [1, 3, 5]]);
      assert.deepEqual(moduloMoves(4, 2), [[0], [1], [0], [1]]);
      assert.deepEqual(moduloMoves(3, 3), [[0], [1], [2]]);
      assert.deepEqual(moduloMoves(1, 3), [[0, 1, 2]]);
      assert.deepEqual(moduloMoves(1, 1), [[0]]);
    });

    test('errors: not a whole factor, zero, too large, not a count', () => {
      throwsCode(() => moduloMoves(3, 4), 'invalid_argument');
      throwsCode(() => moduloMoves(0, 4), 'no_nodes');
      throwsCode(() => moduloMoves(4, 0), 'no_nodes');
      throwsCode(() => moduloMoves(1, 2 ** 32 - 1), 'limit_exceeded');
      throwsCode(() => moduloMoves(2 ** 32 - 1, 1), 'limit_exceeded');
      for (const bad of NOT_COUNTS) {
        throwsCode(() => moduloMoves(bad, 2), 'invalid_argument');
        throwsCode(() => moduloMoves(2, bad), 'invalid_argument');
      }
    });
  });

  describe('routeRead and routeWrite', () => {
    const dictionary = new Router(DICTIONARY);

    test('a stable vbucket reads and writes at its owner', () => {
      const active = keyOnShard(dictionary, 1);
      assert.equal(dictionary.routeRead(active), 'b');
      assert.deepEqual(dictionary.routeWrite(active), ['b']);
      assert.ok(Array.isArray(dictionary.routeWrite(active)), 'a plain array');
      assert.equal(dictionary.node(active), 'b');
    });

    test('a migrating vbucket reads from the old owner and writes to the new one first', () => {
      for (const [vbucket, [oldOwner, newOwner]] of [[0, ['a', 'b']], [3, ['a', 'c']]]) {
        const key = keyOnShard(dictionary, vbucket);
        assert.equal(dictionary.routeRead(key), oldOwner);
        assert.deepEqual(dictionary.routeWrite(key), [newOwner, oldOwner]);
      }
    });

    test('a read-only vbucket refuses writes with read_only and still serves reads', () => {
      const frozen = keyOnShard(dictionary, 2);
      const err = throwsCode(() => dictionary.routeWrite(frozen), 'read_only');
      assert.match(err.message, /vbucket 2/);
      assert.match(err.message, /read.only/);
      assert.equal(dictionary.routeRead(frozen), 'c');
      assert.equal(dictionary.node(frozen), 'c', 'the router still works');
    });

    test('other strategies read and write at the owner; every key type works', () => {
      for (const key of ['user:1', 'x', Uint8Array.of(1, 2), 7n, 7]) {
        assert.equal(router.routeRead(key), router.node(key));
        assert.deepEqual(router.routeWrite(key), [router.node(key)]);
      }
    });

    test('values that are not keys are invalid_key', () => {
      for (const bad of NOT_KEYS) {
        throwsCode(() => dictionary.routeRead(bad), 'invalid_key');
        throwsCode(() => dictionary.routeWrite(bad), 'invalid_key');
      }
    });
  });

  describe('Redis Cluster clients', () => {
    const nodeIds = (local) => JSON.parse(local.toJson()).nodes.map((node) => node.id);
    /** Keys of every type and path: short and long arrays (read key by key, or packed), non-ASCII. */
    const manyKeys = [...Array.from({ length: 300 }, (_, i) => `user:${i}`), 'ключ', '\ud83d\udd11'];
    const mixedKeys = ['user:1', Uint8Array.of(1, 2), 7n, 7, 2n ** 64n - 1n, 'ключ', ''];

    test('moved gives one slot a new master, epoch + 1, and leaves the router it is called on', () => {
      const before = cluster.toJson();
      const slot = cluster.route('user:1');
      assert.equal(cluster.node('user:1'), 'm2');
      const moved = cluster.moved(slot, '127.0.0.1:7003');
      assert.ok(moved instanceof Router);
      assert.equal(Object.getPrototypeOf(moved), Router.prototype);
      assert.deepEqual([moved.epoch, cluster.epoch], [6n, 5n]);
      assert.equal(cluster.toJson(), before, 'the router moved from is unchanged');
      assert.equal(moved.node('user:1'), 'm3');
      assert.deepEqual(moved.replicas('user:1', 1), ['m3'], 'MOVED names no replica: the chain is the master');
      for (let i = 0; i < 200; i++) {
        const key = `key:${i}`;
        if (cluster.route(key) !== slot) assert.equal(moved.node(key), cluster.node(key), key);
      }
      const applied = apply(CLUSTER, { op: 'redis_moved', slot, address: '127.0.0.1:7003' });
      assert.deepEqual([applied.from, applied.to, applied.added], ['m2', 'm3', null]);
      assert.equal(new Router(applied.topology).toJson(), moved.toJson(), 'the same as the redis_moved operation');
    });

    test('moved to an unknown address adds the node, once', () => {
      const slot = cluster.route('user:7');
      const moved = cluster.moved(slot, '10.0.0.9:6379').moved((slot + 1) % 16384, '10.0.0.9:6379');
      assert.equal(moved.epoch, 7n);
      const nodes = JSON.parse(moved.toJson()).nodes;
      assert.equal(nodes.length, 7);
      assert.deepEqual([nodes.at(-1).id, nodes.at(-1).address], ['10.0.0.9:6379', '10.0.0.9:6379']);
      assert.equal(moved.node('user:7'), '10.0.0.9:6379');
      assert.equal(moved.locate('user:7').address, '10.0.0.9:6379');
    });

    test('ask returns the address and changes nothing', () => {
      const before = cluster.toJson();
      assert.equal(cluster.ask(42, '127.0.0.1:7009'), '127.0.0.1:7009');
      assert.equal(cluster.ask(16383, '[::1]:7000'), '[::1]:7000');
      assert.equal(cluster.toJson(), before);
    });

    test('slots must be integers in 0..16384, addresses strings with a port, the topology redis_cluster', () => {
      for (const slot of [16384, ...NOT_COUNTS]) {
        throwsCode(() => cluster.moved(slot, '127.0.0.1:7001'), 'invalid_argument');
        throwsCode(() => cluster.ask(slot, '127.0.0.1:7001'), 'invalid_argument');
      }
      for (const address of ['127.0.0.1', '127.0.0.1:0', '127.0.0.1:65536', 'bad host:1', '', '\ud800:1', 7001, null,
        undefined, bytes('h:1'), {}]) {
        throwsCode(() => cluster.moved(1, address), 'invalid_argument');
        throwsCode(() => cluster.ask(1, address), 'invalid_argument');
      }
      assert.match(throwsCode(() => router.moved(1, '127.0.0.1:7001'), 'invalid_argument').message, /redis_cluster/);
      throwsCode(() => router.ask(1, '127.0.0.1:7001'), 'invalid_argument');
      assert.equal(cluster.epoch, 5n);
    });

    test('parseRedirect reads MOVED and ASK lines as plain objects', () => {
      const moved = parseRedirect('MOVED 3999 127.0.0.1:6381');
      assert.deepEqual(moved, { kind: 'MOVED', slot: 3999, address: '127.0.0.1:6381' });
      assert.deepEqual(Object.keys(moved), ['kind', 'slot', 'address']);
      assert.equal(Object.getPrototypeOf(moved), Object.prototype);
      assert.deepEqual(parseRedirect('-ASK 0 [::1]:7000\r\n'), { kind: 'ASK', slot: 0, address: '[::1]:7000' });
      assert.equal(parseRedirect('MOVED 16383 :7000').address, ':7000');
      // What a client does with them.
      const { slot, address } = parseRedirect(`MOVED ${cluster.route('user:1')} 127.0.0.1:7003`);
      assert.equal(cluster.moved(slot, address).node('user:1'), 'm3');
      const ask = parseRedirect('ASK 3999 127.0.0.1:7009');
      assert.equal(cluster.ask(ask.slot, ask.address), '127.0.0.1:7009');
    });

    test('parseRedirect refuses other lines and values that are not strings', () => {
      for (const line of ['', 'MOVED', 'MOVED 1', 'MOVED abc h:1', 'MOVED -1 h:1', 'MOVED 16384 h:1', 'MOVED 1 127.0.0.1',
        'MOVED 1 h:0', 'MOVED 1 h:1 extra', 'moved 1 h:1', 'ERR unknown command', '\ud800',
        "CROSSSLOT Keys in request don't hash to the same slot", bytes('MOVED 1 h:1'), null, undefined, 5, {}]) {
        throwsCode(() => parseRedirect(line), 'invalid_argument');
      }
    });

    test('sameSlot: keys sharing a hash tag share a slot; other keys are cross_slot', () => {
      const slot = cluster.route('user:1');
      assert.equal(cluster.sameSlot(['{user:1}.name', '{user:1}.mail', 'user:1']), slot);
      assert.equal(cluster.sameSlot([bytes('{user:1}.name'), bytes('user:1')]), slot);
      assert.equal(cluster.sameSlot(Array.from({ length: 20 }, (_, i) => `{user:1}.${i}`)), slot, 'a packed batch');
      assert.equal(cluster.sameSlot([42, 42n]), cluster.route(42));
      assert.equal(cluster.sameSlot(['x']), cluster.route('x'));
      const err = throwsCode(() => cluster.sameSlot(['{user:1}.name', '{user:1}.mail', '{user:2}.name']), 'cross_slot');
      assert.match(err.message, /^key 2 is in shard/);
      throwsCode(() => cluster.sameSlot(['user:1', 42]), 'cross_slot');
      throwsCode(() => cluster.sameSlot([]), 'invalid_argument');
      for (const notArray of ['ab', null, undefined, 3, new Set(['a']), bytes('a')]) {
        throwsCode(() => cluster.sameSlot(notArray), 'invalid_argument');
      }
      for (const bad of NOT_KEYS) {
        assert.match(throwsCode(() => cluster.sameSlot(['a', bad]), 'invalid_key').message, /^keys\[1\]: /);
      }
    });

    test('groupByNode partitions every index once, in node order, each group the keys of node()', () => {
      for (const local of [cluster, router]) {
        const ids = nodeIds(local);
        for (const keys of [manyKeys, mixedKeys, manyKeys.slice(0, 5), [...manyKeys, 7n]]) {
          const groups = local.groupByNode(keys);
          assert.ok(Array.isArray(groups));
          const order = groups.map(({ node }) => ids.indexOf(node));
          assert.deepEqual(order, [...new Set(order)].sort((a, b) => a - b), 'node order, one group a node');
          const seen = groups.flatMap(({ indices }) => indices).sort((a, b) => a - b);
          assert.deepEqual(seen, keys.map((_, i) => i), 'every index exactly once');
          for (const group of groups) {
            assert.deepEqual(Object.keys(group), ['node', 'indices']);
            assert.ok(Array.isArray(group.indices) && group.indices.length > 0);
            assert.deepEqual(group.indices, [...group.indices].sort((a, b) => a - b));
            for (const index of group.indices) assert.equal(local.node(keys[index]), group.node);
          }
        }
        assert.deepEqual(local.groupByNode([]), []);
      }
    });

    test('groupByNode refuses what nodeMany refuses, naming the bad key', () => {
      for (const notArray of ['ab', null, undefined, 3, { length: 1, 0: 'a' }, new Set(['a']), bytes('a')]) {
        throwsCode(() => cluster.groupByNode(notArray), 'invalid_argument');
      }
      for (const bad of NOT_KEYS) {
        assert.match(throwsCode(() => cluster.groupByNode(['a', bad]), 'invalid_key').message, /^keys\[1\]: /);
      }
      const packed = Array.from({ length: 12 }, (_, i) => `k${i}`);
      packed[9] = 'x\ud800';
      assert.match(throwsCode(() => cluster.groupByNode(packed), 'invalid_key').message, /^keys\[9\]: /);
    });

    test('readReplica goes round the replicas of a chain; the owner without one', () => {
      const owner = cluster.node('user:1');
      const replica = cluster.readReplica('user:1');
      assert.notEqual(replica, owner);
      assert.deepEqual(cluster.replicas('user:1', 2), [owner, replica]);
      for (const turn of [0, 1, 2, 3, 2 ** 32 - 1]) assert.equal(cluster.readReplica('user:1', turn), replica);
      const whole = { start: 0, end: 16383, nodes: ['m', 'r1', 'r2'] };
      const chain = new Router(doc({ nodes: ['m', 'r1', 'r2'], strategy: { type: 'redis_cluster', slots: [whole] } }));
      for (const key of mixedKeys) {
        assert.deepEqual([0, 1, 2, 3].map((turn) => chain.readReplica(key, turn)), ['r1', 'r2', 'r1', 'r2']);
        assert.equal(chain.readReplica(key), 'r1', 'turn omitted: 0');
        assert.equal(router.readReplica(key, 3), router.node(key), 'no chain: the owner');
      }
      for (const turn of NOT_COUNTS.filter((value) => value !== undefined)) {
        throwsCode(() => cluster.readReplica('k', turn), 'invalid_argument');
      }
      for (const bad of NOT_KEYS) throwsCode(() => cluster.readReplica(bad), 'invalid_key');
    });
  });

  describe('Migration', () => {
    /** The 1-based `id % n ?: n` over servers shard_1..shard_n, user ids as their own hash. */
    const seed = (servers, epoch) => new Router(doc({
      epoch,
      hashing: { integers: 'identity' },
      nodes: Array.from({ length: servers }, (_, i) => `shard_${i + 1}`),
      strategy: { type: 'modulo', one_based: true },
    }));
    const users = Array.from({ length: 5000 }, (_, i) => i + 1);
    /** The positions of the elements of `items` for which `test` holds. */
    const where = (items, test) => items.flatMap((item, index) => (test(item, index) ? [index] : []));

    test('modulo 5 to 10 moves what diff lists; writes go to the new owner, reads to the new then the old', () => {
      const [five, ten] = [seed(5, 1), seed(10, 2)];
      const migration = new Migration(five, ten);
      assert.ok(migration instanceof Migration);
      const report = diff(five, ten, users, { perKey: true });
      const moving = migration.movingKeys(users);
      assert.ok(Array.isArray(moving), 'a plain array of numbers');
      // Half the users move: those whose id % 10 is 6..9 or 0 (to shards 6..10).
      assert.deepEqual([moving.length, report.moved], [2500, 2500]);
      assert.deepEqual(moving, where(report.keys, (entry) => entry.moved));
      for (const [index, { oldNode: from, newNode: to, moved }] of report.keys.entries()) {
        const user = users[index];
        assert.deepEqual(migration.moves(user), moved ? { from, to } : null);
        assert.equal(migration.writeTarget(user), to);
        assert.deepEqual(migration.readTargets(user), moved ? [from, to] : [to]);
        assert.deepEqual(migration.readTargets(user, false), migration.readTargets(user));
        assert.deepEqual(migration.readTargets(user, true), [to]);
      }
      // The messages example's own case: user 7 goes from shard 2 to shard 7, user 12 stays.
      const seven = migration.moves(7n);
      assert.deepEqual(seven, { from: 'shard_2', to: 'shard_7' });
      assert.deepEqual(Object.keys(seven), ['from', 'to']);
      assert.equal(Object.getPrototypeOf(seven), Object.prototype, 'a plain object');
      assert.equal(migration.moves(12), null);
      // Keys of every type; an array of strings crosses packed, as for routeMany.
      const texts = Array.from({ length: 200 }, (_, i) => `user:${i}`);
      assert.deepEqual(migration.movingKeys(texts), where(texts, (key) => five.node(key) !== ten.node(key)));
      assert.deepEqual(migration.movingKeys(users.map(BigInt)), moving);
      assert.deepEqual(migration.movingKeys(['a', Uint8Array.of(1), 7n, 7]).filter((index) => index >= 2), [2, 3], 'user 7 moves');
      assert.deepEqual(migration.movingKeys([]), []);
      // Node indices are not units a copy job can move.
      assert.match(throwsCode(() => migration.movingShards(), 'invalid_argument').message, /moving_keys/);
    });

    test('a vbucket dictionary in motion: ofDictionary, movingShards and the keys of the moving vbuckets', () => {
      const start = doc({ nodes: Array.from({ length: 5 }, (_, i) => `shard_${i + 1}`), strategy: { type: 'vbucket', vbuckets: 256 } });
      const result = apply(start, { op: 'plan_rebalance', add: [6, 7, 8, 9, 10].map((i) => ({ id: `shard_${i}` })) });
      const dictionary = new Router(result.topology);
      const before = dictionary.toJson();
      const migration = Migration.ofDictionary(dictionary);
      assert.equal(Object.getPrototypeOf(migration), Migration.prototype);
      assert.ok(migration.before instanceof Router && migration.after instanceof Router);
      assert.deepEqual([migration.before.epoch, migration.after.epoch], [2n, 3n]);
      const { map, forward_map: forward } = result.topology.strategy;
      const shards = migration.movingShards();
      assert.ok(Array.isArray(shards));
      assert.deepEqual(shards, map.flatMap((chain, shard) => (chain[0] === forward[shard][0] ? []
        : [{ shard, from: chain[0], to: forward[shard][0] }])));
      assert.equal(shards.length, result.moved_actives, 'the vbuckets whose active copy moves');
      assert.ok(shards.length > 0);
      for (const { shard, from, to } of shards) {
        assert.deepEqual([migration.before.shardOwner(shard), migration.after.shardOwner(shard)], [from, to]);
      }
      const moving = new Map(shards.map(({ shard, from, to }) => [shard, { from, to }]));
      const keys = Array.from({ length: 300 }, (_, i) => `user:${i}`);
      assert.deepEqual(migration.movingKeys(keys), where(keys, (key) => moving.has(dictionary.route(key))));
      for (const key of keys) {
        const move = moving.get(dictionary.route(key)) ?? null;
        assert.deepEqual(migration.moves(key), move);
        assert.equal(migration.writeTarget(key), move ? move.to : migration.after.node(key));
        assert.deepEqual(migration.readTargets(key), move ? [move.from, move.to] : [migration.writeTarget(key)]);
      }
      assert.equal(dictionary.toJson(), before, 'the dictionary is unchanged');
      // Nothing moves in a settled dictionary, or in a topology that is not one.
      for (const settled of [migration.after, new Router(start), router]) {
        throwsCode(() => Migration.ofDictionary(settled), 'invalid_argument');
      }
      // Two dictionaries, before and after the moves: the same vbuckets move.
      const done = apply(result.topology, { op: 'complete_moves' }).topology;
      assert.deepEqual(new Migration(new Router(start), new Router(done)).movingShards(), shards);
    });

    test('a migration goes forward: stale_epoch unless the epoch grows', () => {
      const err = throwsCode(() => new Migration(seed(5, 3), seed(10, 2)), 'stale_epoch');
      assert.match(err.message, /epoch 3\b.*epoch 2\b/);
      throwsCode(() => new Migration(seed(5, 2), seed(10, 2)), 'stale_epoch');
      const five = seed(5, 1);
      throwsCode(() => new Migration(five, five), 'stale_epoch');
      assert.deepEqual(new Migration(seed(10, 1), seed(5, 2)).moves(7), { from: 'shard_7', to: 'shard_2' }, 'shrinking');
    });

    test('the routers passed in are neither taken nor changed, and keep working', () => {
      const [five, ten] = [seed(5, 1), seed(10, 2)];
      const texts = [five.toJson(), ten.toJson()];
      const migration = new Migration(five, ten);
      assert.ok(migration.before instanceof Router && migration.after instanceof Router);
      assert.deepEqual([migration.before.toJson(), migration.after.toJson()], texts);
      assert.deepEqual([five.toJson(), ten.toJson()], texts);
      assert.deepEqual([five.node(7), ten.node(7)], ['shard_2', 'shard_7']);
      assert.deepEqual(diff(five, ten, [7]).moved, 1);
      if (runtime.free) {
        five.free();
        ten.free();
        assert.deepEqual(migration.moves(7), { from: 'shard_2', to: 'shard_7' }, 'the migration holds its own copies');
        assert.equal(migration.before.node(7), 'shard_2');
        migration.free();
        assert.throws(() => migration.moves(7), /null pointer/);
      }
    });

    test('arguments that are not live Routers are invalid_argument naming them', () => {
      const ten = seed(10, 2);
      const notRouters = [undefined, null, {}, 5, [], TOPOLOGY, JSON.stringify(TOPOLOGY), { __wbg_ptr: 8 },
        Object.create(Router.prototype), new Migration(seed(5, 1), ten)];
      if (runtime.free) {
        const freed = seed(5, 1);
        freed.free();
        notRouters.push(freed);
      }
      for (const bad of notRouters) {
        assert.match(throwsCode(() => new Migration(bad, ten), 'invalid_argument').message, /^before must be a Router/);
        assert.match(throwsCode(() => new Migration(ten, bad), 'invalid_argument').message, /^after must be a Router/);
        assert.match(throwsCode(() => Migration.ofDictionary(bad), 'invalid_argument').message, /^router must be a Router/);
      }
      assert.equal(ten.node(7), 'shard_7', 'the router survives');
    });

    test('keys must be keys, keys an array, moved a boolean', () => {
      const migration = new Migration(seed(5, 1), seed(10, 2));
      for (const bad of NOT_KEYS) {
        throwsCode(() => migration.moves(bad), 'invalid_key');
        throwsCode(() => migration.writeTarget(bad), 'invalid_key');
        throwsCode(() => migration.readTargets(bad), 'invalid_key');
        assert.match(throwsCode(() => migration.movingKeys([1, bad]), 'invalid_key').message, /^keys\[1\]: /);
      }
      for (const bad of [1, 0, null, 'true', {}, 1n, NaN, new Boolean(true)]) {
        throwsCode(() => migration.readTargets(7, bad), 'invalid_argument');
      }
      for (const notArray of ['ab', null, undefined, 3, { length: 1, 0: 'a' }, new Set([1]), Uint8Array.of(1)]) {
        throwsCode(() => migration.movingKeys(notArray), 'invalid_argument');
      }
      assert.deepEqual(migration.moves(7), { from: 'shard_2', to: 'shard_7' }, 'the migration still works');
    });

    test('shardOwner names the owner of each shard route can return', () => {
      const five = seed(5, 1);
      assert.deepEqual([1, 2, 3, 4, 5].map((shard) => five.shardOwner(shard)), ['shard_1', 'shard_2', 'shard_3', 'shard_4',
        'shard_5']);
      for (const local of [five, router, cluster, new Router(DICTIONARY)]) {
        for (const key of ['user:1', Uint8Array.of(0), 7n, 7, 2n ** 64n - 1n]) {
          assert.equal(local.shardOwner(local.route(key)), local.node(key));
        }
      }
      for (const bad of [0, 6, ...NOT_COUNTS]) throwsCode(() => five.shardOwner(bad), 'invalid_argument');
      throwsCode(() => router.shardOwner(4), 'invalid_argument');
      throwsCode(() => cluster.shardOwner(16384), 'invalid_argument');
    });
  });

  describe('replace', () => {
    test('returns a new Router of the package class; the old one is unchanged', () => {
      const old = new Router(TOPOLOGY);
      const before = old.toJson();
      const grown = { ...TOPOLOGY, epoch: 8, nodes: [...TOPOLOGY.nodes, { id: 'e' }] };
      const next = old.replace(grown);
      assert.ok(next instanceof Router);
      assert.equal(Object.getPrototypeOf(next), Router.prototype);
      assert.notEqual(next, old);
      assert.equal(next.epoch, 8n);
      assert.equal(next.toJson(), new Router(grown).toJson());
      assert.deepEqual(next.replicas('k', 5).sort(), ['a', 'b', 'c', 'd', 'e']);
      assert.equal(old.epoch, 7n);
      assert.equal(old.toJson(), before);
      assert.equal(old.node('user:1'), router.node('user:1'));
      assert.equal(old.replace(JSON.stringify(grown)).toJson(), next.toJson(), 'JSON text, as for the constructor');
      assert.throws(() => old.replicas('k', 5), ShardrouteError, 'the old router still has four nodes');
      if (runtime.free) {
        next.free();
        assert.equal(old.route('x'), router.route('x'), 'the routers are independent');
      }
    });

    test('takes JSON text or an object, as the constructor does', () => {
      const text = JSON.stringify({ ...TOPOLOGY, epoch: 9 });
      assert.equal(router.replace(text).toJson(), router.replace(JSON.parse(text)).toJson());
      assert.equal(router.replace({ ...TOPOLOGY, epoch: 2n ** 64n - 1n }).epoch, 2n ** 64n - 1n);
    });

    test('the same document again is accepted; a replaced router can be replaced again', () => {
      assert.equal(router.replace(TOPOLOGY).toJson(), router.toJson());
      assert.equal(router.replace(router.toJson()).epoch, 7n);
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
      const big = new Router({ ...TOPOLOGY, epoch: 2n ** 64n - 1n });
      const err = throwsCode(() => big.replace({ ...TOPOLOGY, epoch: 2n ** 64n - 2n }), 'stale_epoch');
      assert.match(err.message, /holds epoch 18446744073709551615\b/, 'a u64 epoch, exact');
      assert.equal(router.epoch, 7n);
    });

    test('bad topologies are refused as the constructor refuses them', () => {
      for (const bad of [undefined, null, 5, 42, [], '{', '', 'null', '\ud800']) {
        throwsCode(() => router.replace(bad), 'invalid_topology');
      }
      throwsCode(() => router.replace({ ...TOPOLOGY, epoch: 8, nodes: [] }), 'no_nodes');
      throwsCode(() => router.replace(router), 'invalid_topology'); // a Router is not a document
    });
  });

  describe('diff', () => {
    const modulo = (count) => new Router(doc({
      epoch: count,
      hashing: { integers: 'identity' },
      nodes: Array.from({ length: count }, (_, i) => `s${i}`),
      strategy: 'modulo',
    }));
    const [five, ten] = [modulo(5), modulo(10)];

    test('Router.stats: a record with camelCase fields, its nodes too (docs/api.md, "The rule")', () => {
      const stats = five.stats(Array.from({ length: 10 }, (_, id) => BigInt(id)));
      assert.deepEqual(Object.keys(stats).sort(), ['cv', 'maxOverMean', 'mean', 'nodes', 'total']);
      assert.deepEqual(Object.keys(stats.nodes[0]).sort(), ['id', 'load', 'loadPerWeight', 'share', 'weight']);
      assert.deepEqual(stats.nodes[0], { id: 's0', weight: 1, load: 2, share: 0.2, loadPerWeight: 2 });
      assert.equal(stats.total, 10);
      assert.equal(stats.maxOverMean, 1, 'ids 0..9 over 5 shards: 2 each');
    });

    test('reports every key before and after (perKey), the moved count and the flows', () => {
      const users = Array.from({ length: 100 }, (_, id) => BigInt(id));
      const result = diff(five, ten, users, { perKey: true });
      assert.deepEqual(Object.keys(result).sort(), ['flows', 'keys', 'moved', 'movedPpm', 'total']);
      assert.equal(result.total, 100);
      assert.equal(result.moved, 50, 'id % 5 vs id % 10: the ids with id % 10 >= 5 move');
      assert.equal(result.movedPpm, 500000);
      assert.deepEqual(result.flows[0], { from: 's0', to: 's5', keys: 10 });
      assert.equal(result.flows.length, 5);
      assert.deepEqual(result.keys[7], { oldShard: 2, newShard: 7, oldNode: 's2', newNode: 's7', moved: true });
      assert.deepEqual(result.keys[3], { oldShard: 3, newShard: 3, oldNode: 's3', newNode: 's3', moved: false });
      for (const [index, entry] of result.keys.entries()) {
        assert.equal(entry.oldNode, five.node(users[index]));
        assert.equal(entry.newNode, ten.node(users[index]));
        assert.equal(entry.oldShard, five.route(users[index]));
      }
      // Without perKey (absent, false, undefined or null options): the same counts, no list.
      const { keys: _listed, ...counts } = result;
      for (const options of [undefined, null, {}, { perKey: false }, { perKey: undefined }]) {
        assert.deepEqual(diff(five, ten, users, options), counts);
      }
    });

    test('options must be {perKey?: boolean}; the per-key list holds at most 65,536 keys, the counts any number', () => {
      for (const bad of [1, 'yes', true, { perKey: 1 }, { perKey: 'true' }, { perKey: null }]) {
        const err = throwsCode(() => diff(five, ten, [1], bad), 'invalid_argument');
        assert.equal(err.message, 'options must be undefined, null or {perKey?: boolean}');
      }
      const ids = (count) => Array.from({ length: count }, (_, id) => id);
      assert.equal(diff(five, ten, ids(65536), { perKey: true }).keys.length, 65536);
      assert.match(throwsCode(() => diff(five, ten, ids(65537), { perKey: true }), 'limit_exceeded').message, /^keys: /);
      assert.equal(diff(five, ten, ids(65537)).total, 65537);
    });

    test('keys of every type; numbers and bigints are the same keys; no keys is an empty report', () => {
      const mixed = diff(router, router.replace({ ...TOPOLOGY, epoch: 8, nodes: TOPOLOGY.nodes.slice(1) }),
        ['user:1', Uint8Array.of(1, 2), 7n, 7], { perKey: true });
      assert.equal(mixed.keys.length, 4);
      assert.deepEqual(mixed.keys[2], mixed.keys[3]);
      assert.equal(mixed.keys[0].oldNode, router.node('user:1'));
      assert.deepEqual(diff(five, ten, [], { perKey: true }), { keys: [], total: 0, moved: 0, movedPpm: 0, flows: [] });
      assert.deepEqual(diff(five, ten, []), { total: 0, moved: 0, movedPpm: 0, flows: [] });
    });

    test('neither router is modified or taken: both keep working; the same router twice moves nothing', () => {
      const before = [five.toJson(), ten.toJson()];
      diff(five, ten, ['a', 1n, 2, Uint8Array.of(3)]);
      assert.deepEqual([five.toJson(), ten.toJson()], before);
      assert.equal(typeof five.route('a'), 'number');
      assert.deepEqual(diff(five, five, ['a', 'b'], { perKey: true }), {
        keys: ['a', 'b'].map((key) => ({ oldShard: five.route(key), newShard: five.route(key),
          oldNode: five.node(key), newNode: five.node(key), moved: false })),
        total: 2, moved: 0, movedPpm: 0, flows: [],
      });
    });

    test('an argument that is not a live Router is invalid_argument naming it', () => {
      const notRouters = [undefined, null, {}, 5, [], TOPOLOGY, JSON.stringify(TOPOLOGY), five.toJson(), { __wbg_ptr: 8 },
        Object.create(Router.prototype)];
      if (runtime.free) {
        const freed = new Router(TOPOLOGY);
        freed.free();
        notRouters.push(freed);
      }
      for (const bad of notRouters) {
        const err = throwsCode(() => diff(bad, ten, ['a']), 'invalid_argument');
        assert.ok(err.message.startsWith('oldRouter must be a Router, got '), err.message);
        assert.ok(throwsCode(() => diff(five, bad, ['a']), 'invalid_argument').message.startsWith('newRouter must be a Router'));
      }
      assert.equal(diff(five, ten, ['a']).total, 1, 'the routers survive');
    });

    test('keys must be an array of keys: invalid_argument, or invalid_key naming the index', () => {
      for (const notArray of ['ab', null, undefined, 3, { length: 1, 0: 'a' }, new Set(['a']), Uint8Array.of(1)]) {
        throwsCode(() => diff(five, ten, notArray), 'invalid_argument');
      }
      for (const bad of NOT_KEYS) {
        assert.match(throwsCode(() => diff(five, ten, ['a', bad]), 'invalid_key').message, /^keys\[1\]: /);
      }
      const idOnly = new Router(doc({ nodes: ['a'], strategy: { type: 'id_bits', layout: 'shard_high' } }));
      throwsCode(() => idOnly.route('text'), 'invalid_key');
      throwsCode(() => diff(five, idOnly, ['text']), 'invalid_key');
    });
  });

  describe('encodeDictionary and decodeDictionary', () => {
    const canonical = new Router(DICTIONARY).toJson();

    test('round trip: decoding the bytes gives the canonical JSON of the document', () => {
      const encoded = encodeDictionary(DICTIONARY);
      assert.ok(encoded instanceof Uint8Array);
      assert.deepEqual(Array.from(encoded.subarray(0, 4)), Array.from(bytes('SRVB')));
      assert.equal(decodeDictionary(encoded), canonical);
      assert.deepEqual(encodeDictionary(JSON.stringify(DICTIONARY)), encoded, 'JSON text encodes as the object does');
      assert.deepEqual(encodeDictionary(canonical), encoded);
      assert.equal(decodeDictionary(Buffer.from(encoded)), canonical, 'a Buffer is bytes too');
      const framed = new Uint8Array(encoded.length + 2);
      framed.set(encoded, 1);
      assert.equal(decodeDictionary(framed.subarray(1, encoded.length + 1)), canonical, 'a view decodes its own bytes');
      assert.equal(new Router(decodeDictionary(encoded)).routeRead('user:1'), new Router(DICTIONARY).routeRead('user:1'));
      const stable = { ...DICTIONARY, epoch: 2n ** 64n - 1n, strategy: { type: 'vbucket', vbuckets: 2, map: [['a'], ['b']] } };
      assert.equal(new Router(decodeDictionary(encodeDictionary(stable))).epoch, 2n ** 64n - 1n);
      const big = { ...DICTIONARY, epoch: 2n ** 64n - 1n };
      assert.match(decodeDictionary(encodeDictionary(big)), /"epoch":"18446744073709551615"/);
    });

    test('damaged bytes are invalid_topology; the input is not modified', () => {
      const encoded = encodeDictionary(DICTIONARY);
      const flipped = encoded.slice();
      flipped[encoded.length >> 1] ^= 0x01;
      const flipped40 = encoded.slice();
      flipped40[encoded.length >> 1] ^= 0x40;
      const badMagic = encoded.slice();
      badMagic[0] = 0x58;
      const inverted = encoded.slice();
      inverted[0] ^= 0xff;
      for (const damaged of [flipped, flipped40, encoded.subarray(0, encoded.length - 1), Uint8Array.of(...encoded, 0),
        badMagic, inverted, encoded.subarray(0, 2), new Uint8Array(0), Uint8Array.from({ length: 64 }, (_, i) => i)]) {
        throwsCode(() => decodeDictionary(damaged), 'invalid_topology');
      }
      assert.equal(decodeDictionary(encoded), canonical, 'the input was not modified');
    });

    test('only vbucket topologies encode (invalid_argument); bad documents are refused as Router refuses them', () => {
      throwsCode(() => encodeDictionary(TOPOLOGY), 'invalid_argument');
      for (const bad of [undefined, null, 5, 42, '{', [], new Uint8Array(2)]) {
        throwsCode(() => encodeDictionary(bad), 'invalid_topology');
      }
      throwsCode(() => encodeDictionary({ ...DICTIONARY, nodes: [] }), 'no_nodes');
    });

    test('decodeDictionary takes a readable Uint8Array, else invalid_argument', () => {
      const encoded = encodeDictionary(DICTIONARY);
      for (const bad of [undefined, null, 5, 'SRVB', canonical, Array.from(encoded), encoded.buffer, new Uint16Array(4),
        new DataView(encoded.buffer)]) {
        throwsCode(() => decodeDictionary(bad), 'invalid_argument');
      }
      // A copy: the addon's result is a buffer the engine cannot detach.
      const detached = Uint8Array.from(encodeDictionary(DICTIONARY));
      structuredClone(detached.buffer, { transfer: [detached.buffer] });
      assert.equal(detached.length, 0, 'detached');
      assert.equal(throwsCode(() => decodeDictionary(detached), 'invalid_argument').message,
        'bytes cannot be read: its ArrayBuffer is detached, or it is out of its bounds');
    });
  });

  describe('bad input never breaks a router', () => {
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
        () => decodeDictionary('x'), () => local.readReplica('x', -1), () => local.sameSlot([]), () => local.groupByNode('x'),
        () => local.groupByNode(['a', 'b', 'c', 'd', 'e', 'f', 'g', '\ud800']), () => local.moved(1, 'h:1'),
        () => cluster.moved(16384, 'h:1'), () => cluster.ask(1, 'h'), () => parseRedirect('MOVED'), () => parseRedirect(5),
        () => local.shardOwner(4), () => new Migration(local, local), () => new Migration(local, {}),
        () => Migration.ofDictionary(local), () => new Migration(local, local.replace({ ...TOPOLOGY, epoch: 8 })).movingShards(),
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
      assert.equal(throwsCode(() => local.routeMany(getter), 'invalid_key').message,
        'keys[1]: cannot be read (a getter or proxy trap threw)');
      const proxy = new Proxy(['a'], { get(target, name) { if (name === 'length') throw new Error('trap'); return target[name]; } });
      throwsCode(() => local.routeMany(proxy), 'invalid_argument');
      const sparse = [];
      sparse.length = 2 ** 32 - 1;
      throwsCode(() => local.routeMany(sparse), 'invalid_key');
      const strings = Array.from({ length: 10 }, (_, i) => `k${i}`);
      assert.deepEqual(Array.from(local.routeMany(new Proxy(strings, {}))), strings.map((key) => local.route(key)));
      // A proxy of an array is an array (Array.isArray), read as one, short or long.
      assert.deepEqual(Array.from(local.routeMany(new Proxy(['a', 1n], {}))), [local.route('a'), local.route(1n)]);
      const trapped = new Proxy(['a', 'b'], { get(target, name) { if (name === '1') throw new Error('trap'); return target[name]; } });
      assert.match(throwsCode(() => local.routeMany(trapped), 'invalid_key').message, /^keys\[1\]: /);
      // No call left the router borrowed: it can still be freed.
      if (runtime.free) local.free();
    });

    test('a Uint8Array is read by its real length; a detached one is no key', () => {
      const lying = Uint8Array.of(1, 2, 3);
      Object.defineProperty(lying, 'length', { value: 0 });
      assert.equal(hashKey(lying), hashKey(Uint8Array.of(1, 2, 3)));
      const inflated = new Uint8Array(16);
      Object.defineProperty(inflated, 'length', { value: 1 << 30 });
      assert.equal(hashKey(inflated), hashKey(new Uint8Array(16)));
      const detached = new Uint8Array(8);
      structuredClone(detached.buffer, { transfer: [detached.buffer] });
      const message = 'the Uint8Array key cannot be read: its ArrayBuffer is detached, or it is out of its bounds';
      assert.equal(throwsCode(() => hashKey(detached), 'invalid_key').message, message);
      assert.equal(throwsCode(() => router.routeMany([detached]), 'invalid_key').message, `keys[0]: ${message}`);
      assert.equal(hashKey(new Uint8Array(0)), hashKey(''), 'an empty Uint8Array is the empty key');
      assert.equal(typeof router.route(Uint8Array.of(1, 2, 3)), 'number');
    });

    test('a huge key is routed', () => {
      const big = 'k'.repeat(1 << 20);
      assert.equal(router.routeMany([big])[0], router.route(big));
      assert.equal(hashKey(new Uint8Array(1 << 22)), hashKey(new Uint8Array(1 << 22)));
    });

    test('a freed router refuses every call; the others work on', { skip: !runtime.free && 'no free() in this runtime' },
      () => {
        const freed = new Router(TOPOLOGY);
        freed.node('warm'); // the node ids are now cached on the router
        freed.free();
        assert.throws(() => freed.route('k'), /null pointer/);
        assert.throws(() => freed.node('k'), /null pointer/);
        assert.equal(typeof router.route('k'), 'number');
      });

    test('collected routers and migrations are released, and live ones keep working', () => {
      // A child process with --expose-gc: the finalizers run while other routers are in use.
      const script = `
        const { Migration, Router } = require(${JSON.stringify(packageName)});
        const doc = ${JSON.stringify(doc({ nodes: ['a', 'b'], strategy: 'jump' }))};
        const kept = new Router(doc);
        const expected = kept.node('k');
        const next = new Router({ ...doc, epoch: 2 });
        for (let round = 0; round < 20; round++) {
          for (let i = 0; i < 200; i++) new Router(doc).node('k');
          for (let i = 0; i < 50; i++) new Migration(kept, next).before.node('k');
          global.gc();
          if (kept.node('k') !== expected || kept.route('k') !== kept.routeMany(['k'])[0]) throw new Error('changed');
        }
        console.log('ok');`;
      assert.deepEqual(runChild(script, ['--expose-gc']), ['ok']);
    });
  });

  // The package's limits are the core's own, exported by the native module rather than held
  // in JavaScript: a document of exactly MAX_DOCUMENT_BYTES loads and one byte more is
  // refused in the core's words naming the same number; nesting of MAX_JSON_NESTING levels
  // is refused naming it, one level less is not. Objects (serialized by shared.mjs, within
  // the limits the package gives it) stop at the same numbers.
  describe('limits', () => {
    const { MAX_DOCUMENT_BYTES: limit, MAX_JSON_NESTING: depth } = api;
    const document = doc({ nodes: 3, strategy: 'jump', epoch: 7 });
    const text = JSON.stringify(document);
    const refused = (fn) => assert.throws(fn, (err) => err instanceof ShardrouteError && err.code === 'limit_exceeded');
    /** `levels` arrays, one inside the other. */
    const nested = (levels) => Array.from({ length: levels - 1 }).reduce((inner) => [inner], []);

    test('MAX_DOCUMENT_BYTES is the core\'s document limit', () => {
      assert.ok(Number.isSafeInteger(limit) && limit > 0);
      assert.equal(new Router(text + ' '.repeat(limit - text.length)).epoch, 7n);
      refused(() => new Router(text + ' '.repeat(limit + 1 - text.length)));
      assert.throws(() => new Router(text + ' '.repeat(limit + 1 - text.length)),
        { message: `the document is ${limit + 1} bytes; the limit is ${limit}` });
      assert.throws(() => new Router({ ...document, extra: 'x'.repeat(limit) }),
        { code: 'limit_exceeded', message: `topology is more than ${limit} bytes of JSON; the limit is ${limit}` });
    });

    test('MAX_JSON_NESTING is the core\'s nesting limit', () => {
      assert.ok(Number.isSafeInteger(depth) && depth > 0);
      const deep = (levels) => `${text.slice(0, -1)},"extra":${'['.repeat(levels)}${']'.repeat(levels)}}`;
      refused(() => new Router(deep(depth)));
      assert.throws(() => new Router(deep(depth)), { message: new RegExp(`nested in ${depth} arrays and objects; the limit is ${depth} `) });
      refused(() => new Router({ ...document, extra: nested(depth) }));
      assert.throws(() => new Router({ ...document, extra: nested(depth) }), { message: new RegExp(`the limit is ${depth} `) });
      for (const below of [deep(depth - 1), { ...document, extra: nested(depth - 1) }]) {
        try {
          new Router(below);
        } catch (err) {
          assert.notEqual(err.code, 'limit_exceeded', err.message);
        }
      }
    });
  });
}
