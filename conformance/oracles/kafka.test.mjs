// Oracle test of the `kafka` profile against kafkajs (npm `kafkajs`, pinned in
// conformance/oracles/package.json): partitioner "java" against kafkajs'
// Partitioners.DefaultPartitioner and its alias JavaCompatiblePartitioner, partitioner
// "kafkajs_legacy" against Partitioners.LegacyPartitioner, each called as a producer
// calls it, with topic metadata of N partitions, all available. >= 10,000 keys per
// partition count (empty, every byte, every tail length, 0x80-0xFF, long, unicode,
// integers); any difference fails.
//
// Run: cd conformance/oracles && npm install && node --test kafka.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let kafkajs;
try {
  kafkajs = require('kafkajs');
} catch (err) {
  // Never a skip: the oracle is the point of the test.
  throw new Error('kafkajs is not installed: run `npm install` in conformance/oracles', { cause: err });
}
const { Router } = require('../../bindings-node/index.js');
const { Partitioners } = kafkajs;

const PARTITIONS = [1, 2, 3, 7, 12, 100, 1000, 65536];

function rng(seed) {
  let state = BigInt(seed) | 1n;
  return (bound) => {
    state ^= (state << 13n) & 0xffffffffffffffffn;
    state ^= state >> 7n;
    state ^= (state << 17n) & 0xffffffffffffffffn;
    return Number(state % BigInt(bound));
  };
}

function keys() {
  const next = rng(5);
  const out = [Buffer.alloc(0)];
  for (let b = 0; b < 256; b++) out.push(Buffer.from([b]));
  for (const a of [0x00, 0x7f, 0x80, 0xff]) for (let b = 0; b < 256; b++) out.push(Buffer.from([a, b]));
  for (let length = 3; length <= 64; length++) {
    for (let i = 0; i < 100; i++) out.push(Buffer.from(Array.from({ length }, () => next(256))));
  }
  for (const length of [255, 256, 257, 1000, 1023, 4096, 65537]) {
    out.push(Buffer.from(Array.from({ length }, () => next(256))), Buffer.alloc(length, 0xff), Buffer.alloc(length, 'x'));
  }
  const unicode = ['', 'a', 'ключ', '🔑', '😀😀', '日本語のキー', 'e\u0301', '\u00e9', '\uffff', '\u{10ffff}', '\u0000', 'tab\tnew\nline', '{user1000}.following'];
  out.push(...unicode);
  for (let i = 0; i < 2000; i++) out.push(`user:${i}`);
  const alphabet = [...'abcXYZ019 -_:{}/ключ🔑日本é\u0000\uffff\u{1f600}'];
  for (let length = 1; length <= 40; length++) {
    for (let i = 0; i < 25; i++) out.push(Array.from({ length }, () => alphabet[next(alphabet.length)]).join(''));
  }
  out.push('k'.repeat(300), 'ключ'.repeat(200), '🔑'.repeat(500));
  for (const n of [0n, 1n, 9n, 10n, 42n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n]) out.push(n);
  for (let i = 0; i < 1000; i++) out.push(BigInt(i));
  for (let i = 0; i < 500; i++) out.push((BigInt(next(2 ** 32)) << 32n) | BigInt(next(2 ** 32)));
  return out;
}

const KEYS = keys();

function router(partitions, partitioner) {
  return new Router({
    format: 'shardroute/1',
    epoch: 1,
    nodes: [{ id: 'broker-0' }, { id: 'broker-1' }, { id: 'broker-2' }],
    strategy: { type: 'kafka', partitions, partitioner },
  });
}

function compare(partitions, partitioner, oracle) {
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: partitionId % 3 }));
  const ours = router(partitions, partitioner).routeMany(KEYS);
  const differences = [];
  KEYS.forEach((key, index) => {
    // kafkajs sends a non-Buffer key as Buffer.from(String(key)): a BigInt as its decimal digits.
    const want = oracle({ topic: 'orders', partitionMetadata, message: { key, value: null } });
    if (want !== ours[index]) differences.push({ key: String(key).slice(0, 40), want, have: ours[index] });
  });
  assert.equal(differences.length, 0, `${differences.length} of ${KEYS.length} keys differ, first: ${JSON.stringify(differences.slice(0, 5))}`);
}

test('oracle version and key count', () => {
  assert.equal(require('kafkajs/package.json').version, '2.2.4');
  assert.ok(KEYS.length >= 10_000, `${KEYS.length} keys`);
});

for (const partitions of PARTITIONS) {
  test(`java: DefaultPartitioner, ${partitions} partitions`, () => compare(partitions, 'java', Partitioners.DefaultPartitioner()));
  test(`java: JavaCompatiblePartitioner, ${partitions} partitions`, () => compare(partitions, 'java', Partitioners.JavaCompatiblePartitioner()));
  test(`kafkajs_legacy: LegacyPartitioner, ${partitions} partitions`, () => compare(partitions, 'kafkajs_legacy', Partitioners.LegacyPartitioner()));
}

test('safe Number keys route as their decimal string, like kafkajs', () => {
  const oracle = Partitioners.LegacyPartitioner();
  const partitionMetadata = Array.from({ length: 12 }, (_, partitionId) => ({ partitionId, leader: 0 }));
  const r = router(12, 'kafkajs_legacy');
  for (const n of [0, 1, 42, 2 ** 31, 2 ** 53 - 1]) {
    assert.equal(r.route(n), oracle({ topic: 't', partitionMetadata, message: { key: n } }));
  }
});

test('the legacy partitioner differs from Java', () => {
  const java = router(1000, 'java').routeMany(KEYS);
  const legacy = router(1000, 'kafkajs_legacy').routeMany(KEYS);
  const same = java.filter((p, i) => p === legacy[i]).length;
  assert.ok(same < KEYS.length / 50, `${same} of ${KEYS.length} keys agree`);
});
