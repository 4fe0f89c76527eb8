// Oracle test of the `redis_cluster` profile against npm `cluster-key-slot` (the slot
// function of ioredis and node-redis), pinned in conformance/oracles/package.json.
//
// Routes more than 10,000 keys (hash-tag edge cases, binary Buffers with 0x80-0xFF,
// long keys, text, integers) through the shardroute addon and through cluster-key-slot.
// Every key must agree, except one documented class where cluster-key-slot departs
// from Redis itself (test_redis_cluster.py proves shardroute matches a real
// redis-server there): a key whose first `{` is immediately followed by `}` and that
// has another `}` later. Redis hashes the whole key (empty tag); cluster-key-slot keeps
// scanning and hashes the bytes between the `{}` and the next `}`. For those keys the
// test checks that cluster-key-slot gives exactly that other value, so any other
// difference fails.
//
// Run: cd conformance/oracles && npm install && node --test redis_cluster.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
let keySlot;
try {
  keySlot = require("cluster-key-slot");
} catch (err) {
  throw new Error(
    "the redis_cluster oracle needs npm cluster-key-slot: run `npm install` in conformance/oracles",
    { cause: err },
  );
}
const { Router } = require("../../bindings-node/index.js");
const version = require("cluster-key-slot/package.json").version;

const router = new Router({
  format: "shardroute/1",
  epoch: 1,
  nodes: [{ id: "a" }, { id: "b" }, { id: "c" }],
  strategy: { type: "redis_cluster" },
});

function keys() {
  const out = [
    "", "{", "}", "{}", "}{", "{}}", "{{}}", "{{", "}}", "{a", "a}", "{a}", "a{b}c",
    "{user1000}.following", "{user1000}.followers", "user1000", "foo{}{bar}",
    "foo{{bar}}zap", "foo{bar}{zap}", "foo{bar", "}foo{bar}", "{}{a}", "{}a}", "{a}}",
    "{{a}", "a{}", "a{}b", "{ }", "x{y}", "{x}y", "{{}}{}", "{}{}", "}{}{",
    "foo{hash_tag}", "somekey", "123456789", "ключ", "{ключ}.x", "🔑", "{🔑}key",
  ];
  for (const bytes of [
    [], [0], [0xff], [0x80], [0x7f], [0xff, 0, 0xff], [0xde, 0xad, 0xbe, 0xef],
    [0x7b, 0xff, 0x7d], [0x7b, 0x7d, 0x80, 0x7b, 0x81, 0x7d],
    Array.from({ length: 256 }, (_, i) => i), Array.from({ length: 256 }, (_, i) => 255 - i),
  ]) {
    out.push(Buffer.from(bytes));
  }
  for (const n of [1, 63, 64, 65, 255, 256, 1000, 4096]) out.push("x".repeat(n));
  out.push(Buffer.alloc(100000, 0xab), "{t}" + "y".repeat(50000), "z".repeat(50000) + "{late}");
  for (const n of [0n, 1n, 9n, 10n, 42n, 123456789n, 2n ** 32n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n]) out.push(n);
  // Deterministic xorshift32 keys, heavy in braces.
  let state = 0x2ed15;
  const next = () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state;
  };
  const alphabet = [0x7b, 0x7d, 0x7b, 0x7d, 0x61, 0x62, 0x00, 0xff, 0x80, 0x20];
  for (let i = 0; i < 12000; i++) {
    switch (i % 4) {
      case 0:
        out.push(Buffer.from(Array.from({ length: next() % 12 }, () => alphabet[next() % alphabet.length])));
        break;
      case 1:
        out.push(Buffer.from(Array.from({ length: next() % 40 }, () => next() & 0xff)));
        break;
      case 2: {
        const chars = ["a", "b", "{", "}", "é", "ж", "🔑"];
        const tag = Array.from({ length: next() % 6 }, () => chars[next() % chars.length]).join("");
        out.push(`user:${i}:{${tag}}.${next() % 1000000}`);
        break;
      }
      default:
        out.push(i % 8 === 3 ? BigInt(next()) * BigInt(next()) : `key:${i}`);
    }
  }
  return out;
}

const bytesOf = (key) =>
  typeof key === "bigint" ? Buffer.from(key.toString(), "ascii") : typeof key === "string" ? Buffer.from(key, "utf8") : key;

// cluster-key-slot's departure from Redis: `{}` first, then a later `}`.
function emptyTagThenClose(bytes) {
  const open = bytes.indexOf(0x7b);
  if (open < 0 || bytes[open + 1] !== 0x7d) return null;
  const close = bytes.indexOf(0x7d, open + 2);
  return close < 0 ? null : bytes.subarray(open + 2, close);
}

test(`redis_cluster vs cluster-key-slot ${version}`, () => {
  const all = keys();
  assert.ok(all.length >= 10000);
  const ours = router.routeMany(all);
  let compared = 0;
  let documented = 0;
  const differences = [];
  all.forEach((key, i) => {
    const bytes = bytesOf(key);
    // Text goes through cluster-key-slot's own UTF-8 encoder; an integer as its decimal
    // text, as ioredis sends it.
    const theirs = keySlot(typeof key === "bigint" ? key.toString() : key);
    const between = emptyTagThenClose(bytes);
    compared++;
    if (between === null) {
      if (theirs !== ours[i]) differences.push([key, ours[i], theirs]);
      return;
    }
    documented++;
    // cluster-key-slot hashes the bytes between `{}` and the next `}` (CRC16 of "" is 0).
    const expected = between.length === 0 ? 0 : router.route(Buffer.concat([Buffer.from("{"), between, Buffer.from("}")]));
    if (theirs !== expected) differences.push([key, ours[i], theirs, "documented class", expected]);
  });
  assert.deepEqual(differences.slice(0, 5), [], `${differences.length} of ${compared} keys differ`);
  assert.ok(documented > 100, "the documented class must be exercised");
  console.log(
    `redis_cluster vs cluster-key-slot ${version}: ${compared} keys, 0 differences ` +
      `(${documented} of them in the documented empty-tag class, where cluster-key-slot departs from Redis)`,
  );
});
