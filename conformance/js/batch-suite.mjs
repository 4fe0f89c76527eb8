// The batch-call suite shared by the Node addon and the WASM package (their APIs have
// the same shape): routeMany, routeU64s, routePacked and nodeMany against single calls,
// over every route case of conformance/vectors/*.json, plus typed-array paths and errors.
// Each package's test/batch.test.mjs calls `batchSuite(api)` with its own module.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { toKey } from '../runner.mjs';
import { doc } from './documents.mjs';
import { loadVectorFiles, vectorFileNames } from './vectors.mjs';

/** Defines the batch tests for one package's public module. */
export function batchSuite(api) {
  const { Router, ShardrouteError } = api;
  const encoder = new TextEncoder();

  /** Every `route` case of every vector file, grouped by file and topology. */
  function routeGroups() {
    const groups = [];
    const names = vectorFileNames();
    for (const [index, file] of loadVectorFiles().entries()) {
      const name = names[index];
      // One group per topology and table (a case with `table` routes on that family's
      // router; one whose table no family lists fails at `table`, not in the batch).
      const byTopology = new Map();
      for (const kase of file.cases ?? []) {
        if (kase.op !== 'route') continue;
        const label = kase.table === undefined ? kase.topology : `${kase.topology} table ${kase.table}`;
        if (!byTopology.has(label)) byTopology.set(label, { topology: kase.topology, table: kase.table, cases: [] });
        byTopology.get(label).cases.push(kase);
      }
      for (const [label, { topology, table, cases }] of byTopology) {
        groups.push({ name, doc: file.topologies[topology], topology: label, table, cases });
      }
    }
    return groups;
  }

  /** Calls `fn` and returns the ShardrouteError it throws (failing when it throws nothing else). */
  function thrown(fn) {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof ShardrouteError, `not a ShardrouteError: ${err}`);
      return err;
    }
    assert.fail('nothing was thrown');
  }

  /** Bytes of a key for the packed form, or undefined for an integer key. */
  function bytesOf(key) {
    if (typeof key === 'string') return encoder.encode(key);
    if (key instanceof Uint8Array) return key;
    return undefined;
  }

  /** One buffer plus offsets holding `keys` (Uint8Array each). */
  function pack(keys) {
    const offsets = new Uint32Array(keys.length + 1);
    let total = 0;
    keys.forEach((key, i) => {
      total += key.length;
      offsets[i + 1] = total;
    });
    const data = new Uint8Array(total);
    keys.forEach((key, i) => data.set(key, offsets[i]));
    return { data, offsets };
  }

  const groups = routeGroups();

  describe('batch calls equal single calls over every route case of conformance/vectors', () => {
    test('there are route cases in many files', () => {
      assert.ok(new Set(groups.map((g) => g.name)).size >= 10, 'too few vector files with route cases');
    });
    for (const { name, doc, topology, table, cases } of groups) {
      test(`${name} / ${topology}`, () => {
        let router = new Router(doc);
        if (table !== undefined) {
          try {
            router = router.table(table);
          } catch (err) {
            // No family lists the table: every case of the group expects that error.
            assert.ok(err instanceof ShardrouteError);
            for (const kase of cases) assert.equal(kase.expect.error, err.code);
            return;
          }
        }
        const good = cases.filter((kase) => kase.expect.error === undefined).map((kase) => toKey(kase.key));
        const bad = cases.filter((kase) => kase.expect.error !== undefined);
        if (good.length > 0) {
          const single = good.map((key) => router.route(key));
          const nodes = good.map((key) => router.node(key));
          // Mixed array as given (strings, bytes, bigints): the per-key path.
          assert.deepEqual(Array.from(router.routeMany(good)), single);
          assert.deepEqual(router.nodeMany(good), nodes);
          // Repeated to at least 8 keys so the packed ASCII-string path of routeMany runs.
          const strings = good.filter((key) => typeof key === 'string');
          if (strings.length > 0) {
            const many = Array.from({ length: Math.max(8, strings.length) }, (_, i) => strings[i % strings.length]);
            assert.deepEqual(Array.from(router.routeMany(many)), many.map((key) => router.route(key)));
            // The same keys as bytes (Buffer-like Uint8Array each).
            const asBytes = many.map((key) => encoder.encode(key));
            assert.deepEqual(Array.from(router.routeMany(asBytes)), many.map((key) => router.route(key)));
          }
          // Every byte key packed in one buffer.
          const byteKeys = good.filter((key) => bytesOf(key) !== undefined);
          if (byteKeys.length > 0) {
            const { data, offsets } = pack(byteKeys.map(bytesOf));
            const shards = router.routePacked(data, offsets);
            assert.ok(shards instanceof Uint32Array);
            assert.deepEqual(Array.from(shards), byteKeys.map((key) => router.route(key)));
          }
          // Every integer key as one BigUint64Array.
          const ints = good.filter((key) => typeof key === 'bigint');
          if (ints.length > 0) {
            const shards = router.routeU64s(BigUint64Array.from(ints));
            assert.ok(shards instanceof Uint32Array);
            assert.deepEqual(Array.from(shards), ints.map((key) => router.route(key)));
          }
        }
        // A key routing rejects is rejected in a batch with the same code, naming its index.
        for (const kase of bad) {
          const key = toKey(kase.key);
          const batch = [...good.slice(0, 9), key];
          const err = thrown(() => router.routeMany(batch));
          assert.equal(err.code, kase.expect.error);
          assert.equal(err.code, thrown(() => router.route(key)).code);
          assert.match(err.message, new RegExp(`keys\\[${batch.length - 1}\\]`));
          assert.equal(thrown(() => router.nodeMany(batch)).code, kase.expect.error);
        }
      });
    }
  });

  describe('typed-array batch calls', () => {
    const router = new Router(doc({ nodes: ['a', 'b', 'c'], strategy: 'jump' }));

    test('routeU64s covers the whole u64 range and empty arrays', () => {
      const keys = new BigUint64Array([0n, 1n, 42n, 2n ** 53n + 1n, 2n ** 64n - 1n]);
      assert.deepEqual(Array.from(router.routeU64s(keys)), Array.from(keys, (key) => router.route(key)));
      assert.deepEqual(router.routeU64s(new BigUint64Array(0)), new Uint32Array(0));
      // A view into a larger buffer reads only its own elements.
      const view = new BigUint64Array(keys.buffer, 8, 2);
      assert.deepEqual(Array.from(router.routeU64s(view)), [router.route(1n), router.route(42n)]);
    });

    test('routeU64s rejects anything but a BigUint64Array', () => {
      for (const bad of [[1n, 2n], new BigInt64Array(1), new Uint32Array(2), 'x', null, undefined, 7]) {
        assert.equal(thrown(() => router.routeU64s(bad)).code, 'invalid_argument');
      }
    });

    test('routePacked reads subarrays and Buffers, empty keys included', () => {
      const keys = ['user:1', '', 'user:22', '\u00e9t\u00e9', 'user:333'];
      const { data, offsets } = pack(keys.map((key) => encoder.encode(key)));
      const expected = keys.map((key) => router.route(key));
      assert.deepEqual(Array.from(router.routePacked(data, offsets)), expected);
      if (typeof Buffer === 'function') {
        assert.deepEqual(Array.from(router.routePacked(Buffer.from(data), offsets)), expected);
      }
      const padded = new Uint8Array(data.length + 4);
      padded.set(data, 2);
      const shifted = offsets.map((offset) => offset + 2);
      assert.deepEqual(Array.from(router.routePacked(padded, shifted)), expected);
      assert.deepEqual(router.routePacked(new Uint8Array(0), new Uint32Array([0])), new Uint32Array(0));
      assert.deepEqual(Array.from(router.routePacked(data.subarray(0, 6), new Uint32Array([0, 6]))), [expected[0]]);
    });

    test('bad offsets and argument types are invalid_argument', () => {
      const data = encoder.encode('user:1user:2');
      for (const offsets of [[], [0, 13], [6, 0], [0, 6, 3]]) {
        assert.equal(thrown(() => router.routePacked(data, new Uint32Array(offsets))).code, 'invalid_argument');
      }
      assert.equal(thrown(() => router.routePacked(data, [0, 6, 12])).code, 'invalid_argument');
      assert.equal(thrown(() => router.routePacked(data, new Int32Array([0, 6]))).code, 'invalid_argument');
      assert.equal(thrown(() => router.routePacked('user:1', new Uint32Array([0, 6]))).code, 'invalid_argument');
      assert.equal(thrown(() => router.routePacked(new Uint16Array(6), new Uint32Array([0, 6]))).code, 'invalid_argument');
    });

    test('routeMany: non-ASCII, lone surrogates and non-strings leave the packed path with the single-call errors', () => {
      const ascii = Array.from({ length: 10 }, (_, i) => `user:${i}`);
      for (const odd of ['caf\u00e9', '\ud83d\ude00', '\ufffd', 7n, 7, encoder.encode('raw')]) {
        const keys = [...ascii, odd];
        assert.deepEqual(Array.from(router.routeMany(keys)), keys.map((key) => router.route(key)));
      }
      for (const [bad, code] of [['\ud800', 'invalid_key'], [1.5, 'invalid_key'], [-1, 'invalid_key'], [null, 'invalid_key']]) {
        const err = thrown(() => router.routeMany([...ascii, bad]));
        assert.equal(err.code, code);
        assert.equal(err.code, thrown(() => router.route(bad)).code);
        assert.match(err.message, /keys\[10\]/);
      }
      assert.equal(thrown(() => router.routeMany('user:1')).code, 'invalid_argument');
      assert.equal(thrown(() => router.nodeMany(new Uint32Array(3))).code, 'invalid_argument');
    });

    test('nodeMany gives node ids; an empty batch gives empty results', () => {
      const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
      assert.deepEqual(router.nodeMany(keys), keys.map((key) => router.node(key)));
      assert.deepEqual(router.nodeMany([]), []);
      assert.deepEqual(router.routeMany([]), new Uint32Array(0));
    });
  });
}
