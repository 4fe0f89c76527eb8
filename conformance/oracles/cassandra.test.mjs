// The `cassandra` profile against the DataStax Node.js driver (npm `cassandra-driver`,
// its `Murmur3Tokenizer.hash`). Tokens are compared exactly through routing: in the
// "token probe" ring node `t<i>` holds the oracle token of key `i` and node `gap` that
// token minus one, so `t<i>` owns the single token and shardroute routes key `i` there
// only if it computes exactly the driver's token.
//
// Run: cd conformance/oracles && node --test cassandra.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ORACLE_VERSION = '4.10.0';

function loadOracle() {
  try {
    return {
      tokenizer: require('cassandra-driver/lib/tokenizer.js'),
      version: require('cassandra-driver/package.json').version,
    };
  } catch (err) {
    throw new Error('the cassandra oracle needs npm cassandra-driver: run `npm install` in conformance/oracles', {
      cause: err,
    });
  }
}

const { tokenizer, version } = loadOracle();
const { Router } = require('../../bindings-node/index.js');
const MIN_LONG = -(1n << 63n);

// A small deterministic generator (xorshift64*), so the keys are the same every run.
function rng(seed) {
  let state = BigInt(seed) || 1n;
  return (bound) => {
    state ^= state >> 12n;
    state ^= (state << 25n) & 0xffffffffffffffffn;
    state ^= state >> 27n;
    const out = (state * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn;
    return Number(out % BigInt(bound));
  };
}

function keys() {
  const out = [Buffer.alloc(0), '', '123', 'user:1', '\u00e9', '\u65e5\u672c', '\u{1f600}', 'a'.repeat(10000)];
  for (let b = 0; b < 256; b++) out.push(Buffer.from([b]));
  for (let length = 0; length < 48; length++) {
    out.push(Buffer.alloc(length, 0xff), Buffer.alloc(length, 0x80), Buffer.alloc(length, 0x7f));
    out.push(Buffer.from(Array.from({ length }, (_, i) => (0x80 + i) & 0xff)));
  }
  for (const value of [0n, 1n, 127n, 128n, 255n, 2n ** 31n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n]) out.push(value);
  const next = rng(20240505);
  const alphabet = ['a', 'z', '\u00e9', '\u00df', '\u0416', '\u65e5', '\u{1f600}', '{', '}', ':'];
  for (let i = 0; i < 12000; i++) {
    switch (i % 4) {
      case 0:
        out.push(Buffer.from(Array.from({ length: next(40) }, () => next(256))));
        break;
      case 1:
        out.push(Array.from({ length: next(24) }, () => alphabet[next(alphabet.length)]).join(''));
        break;
      case 2:
        out.push((BigInt(next(2 ** 32)) << 32n) | BigInt(next(2 ** 32)));
        break;
      default:
        out.push(Buffer.from(Array.from({ length: 1 + next(69) }, () => 0x80 + next(128))));
    }
  }
  return out;
}

/** What the driver hashes: text as UTF-8, a BigInt as a CQL bigint (8 bytes big-endian). */
function keyBytes(key) {
  if (typeof key === 'bigint') {
    const buffer = Buffer.alloc(8);
    buffer.writeBigUInt64BE(key);
    return buffer;
  }
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
}

function oracleToken(murmur, key) {
  const token = BigInt(murmur.hash(keyBytes(key)).getValue().toString());
  // Cassandra maps Long.MIN_VALUE to MAX; the Node driver's hash does not (see
  // docs/compatibility.md). No key here hashes to it; fail loudly if one ever does.
  assert.notEqual(token, MIN_LONG, 'a key hashed to Long.MIN_VALUE: the oracles differ there');
  return token;
}

test(`cassandra-driver is the pinned version ${ORACLE_VERSION}`, () => {
  assert.equal(version, ORACLE_VERSION);
});

test('cassandra profile: tokens match cassandra-driver Murmur3Tokenizer exactly', () => {
  const murmur = new tokenizer.Murmur3Tokenizer();
  const all = keys();
  assert.ok(all.length >= 10000);
  const tokens = [...new Set(all.map((key) => oracleToken(murmur, key)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const ownerOf = new Map(tokens.map((token, index) => [token, `t${index}`]));
  const ring = {};
  for (const [token, name] of ownerOf) ring[name] = [token.toString()];
  ring.gap = tokens.filter((t) => t !== MIN_LONG && !ownerOf.has(t - 1n)).map((t) => (t - 1n).toString());
  const router = new Router({
    format: 'shardroute/1',
    epoch: 1,
    nodes: Object.keys(ring).map((id) => ({ id })),
    strategy: { type: 'cassandra', tokens: ring },
  });
  const differences = [];
  for (const key of all) {
    const expected = ownerOf.get(oracleToken(murmur, key));
    const got = router.node(key);
    if (got !== expected) differences.push([key, expected, got]);
  }
  console.log(`cassandra npm oracle: ${all.length} keys compared, ${differences.length} differences`);
  assert.deepEqual(differences.slice(0, 5), []);
});
