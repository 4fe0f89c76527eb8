// The topology follower of both JavaScript packages (`TopologyFollower`, `Offered`,
// `followerDefaults`), as a user sees it: the types its calls return, and every call's
// bad arguments, each with the code it must throw (or the Offered it must return), word
// for word the same in the addon and the WASM build. What the follower decides is the
// conformance scenarios' (conformance/vectors/session_follower.json, run by runner.mjs);
// this checks the boundary. Its calls are covered here rather than in the hostile table
// (hostile-suite.mjs), whose calls hold no state between them; a test checks that every
// call index.d.ts declares for the follower's classes has cases here.
//
// Each package's test/follower.test.mjs calls `followerSuite(api, runtime)`; the other
// package is loaded from its directory, so both must be built.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { FOLLOWER_CLASSES, otherPackage, outcome } from './hostile-suite.mjs';
import { NOT_TIMES, boundaryTests, membersTest } from './session-suite.mjs';

/** A topology document of `epoch` (an object, as a user's JSON.parse gives it). */
const doc = (epoch) => ({ format: 'shardroute/1', epoch, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'jump' } });
/** The vbucket document whose binary dictionary the tests offer. */
const DICTIONARY = {
  format: 'shardroute/1', epoch: 5, nodes: [{ id: 'n0' }, { id: 'n1' }], strategy: { type: 'vbucket', vbuckets: 8 },
};
/** The epoch and revision of the document `made` installs. */
const HELD = { epoch: 3, revision: 7 };

/** An object that contains itself. */
const cyclic = () => {
  const object = doc(9);
  object.nodes = [object];
  return object;
};
/** `object` with a getter of `name` that throws. */
const throwingGetter = (object, name) => Object.defineProperty({ ...object }, name, {
  enumerable: true, get() { throw new Error(`no ${name}`); },
});
/** A Uint8Array whose buffer was transferred away. */
const detached = () => {
  const bytes = Uint8Array.of(1, 2);
  structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
  return bytes;
};

/**
 * Bad arguments for every call of the follower's classes, by call: `[label, call, code]`,
 * `call(api, made)` with `made` a follower holding `doc(HELD.epoch)` at `HELD.revision`,
 * fresh for each case; `code` null for a call that must return (a refused document is an
 * Offered, not a throw).
 */
function cases() {
  const times = (call) => NOT_TIMES.map(([label, now]) => [`nowMs ${label}`, (api, made) => call(made, now), 'invalid_argument']);
  const revisions = (call) => NOT_TIMES.map(([label, revision]) => [`revision ${label}`, (api, made) => call(made, revision),
    'invalid_argument']);
  // Values that are not documents (invalid_topology, thrown), and documents the follower
  // refuses (a result).
  const notDocuments = [
    ['a number', 5], ['undefined', undefined], ['null', null], ['a boolean', true], ['a bigint', 5n], ['a symbol', Symbol('d')],
    ['a function', () => doc(4)], ['bytes', Uint8Array.of(123)], ['a map', new Map()], ['a boxed string', new String('{}')],
    ['a NaN weight', { ...doc(4), nodes: [{ id: 'a', weight: NaN }] }], ['a cycle', cyclic()],
    ['a throwing getter', throwingGetter(doc(4), 'nodes')], ['a lone surrogate', '{"format": "\ud800"}'],
  ];
  const refused = [
    ['not JSON', '{'], ['no fields', {}], ['an older epoch', doc(2)], ['no nodes', { ...doc(4), nodes: [] }],
    ['too deep', `${'['.repeat(70)}${']'.repeat(70)}`],
  ];
  const configs = [
    ['unknown field', { nope: 1 }], ['negative', { reconnect_first_ms: -1 }], ['zero first', { reconnect_first_ms: 0 }],
    ['max below first', { reconnect_first_ms: 100, reconnect_max_ms: 10 }], ['fraction', { reconnect_first_ms: 1.5 }],
    ['past 2^53', { reconnect_max_ms: 2 ** 53 + 2 }], ['nan', { reconnect_first_ms: NaN }], ['a bigint', { reconnect_first_ms: 2n }],
    ['an array', [1]], ['text', '{}'], ['a number', 5], ['a symbol', Symbol('c')], ['a function', () => 1], ['a map', new Map()],
    ['a cycle', cyclic()], ['a throwing getter', throwingGetter({}, 'reconnect_first_ms')],
  ];
  const notBytes = [
    ['undefined', undefined], ['text', '5352'], ['an array', [0x53, 0x52]], ['a Uint16Array', new Uint16Array(2)],
    ['an ArrayBuffer', new ArrayBuffer(2)], ['a DataView', new DataView(new ArrayBuffer(2))], ['detached', detached()],
  ];
  const dictionary = (api) => api.encodeDictionary(DICTIONARY);
  return {
    TopologyFollower: [
      ...configs.map(([label, config]) => [`config ${label}`, (api) => new api.TopologyFollower(config), 'invalid_argument']),
      ['config null', (api) => new api.TopologyFollower(null), null],
      ['config undefined member', (api) => new api.TopologyFollower({ reconnect_first_ms: undefined }), null],
      ['config every field', (api) => new api.TopologyFollower({ reconnect_first_ms: 1, reconnect_max_ms: 2 ** 53 }), null],
    ],
    offer: [
      ...notDocuments.map(([label, document]) => [`document ${label}`, (api, made) => made.offer(document, 8, 0),
        'invalid_topology']),
      ['document text past the limit', (api, made) => made.offer({ ...doc(4), nodes: [{ id: 'x'.repeat(64 * 2 ** 20) }] }, 8, 0),
        'limit_exceeded'],
      ...refused.map(([label, document]) => [`refused: ${label}`, (api, made) => made.offer(document, 8, 0), null]),
      ['refused: an older revision', (api, made) => made.offer(doc(4), HELD.revision - 1, 0), null],
      ...revisions((made, revision) => made.offer(doc(4), revision, 0)),
      ...times((made, now) => made.offer(doc(4), 8, now)),
      ['all bad: the document first', (api, made) => made.offer(5, -1, -1), 'invalid_topology'],
      ['both bad: the revision first', (api, made) => made.offer(doc(4), -1, -1), 'invalid_argument'],
      ['a proxy of a document', (api, made) => made.offer(new Proxy(doc(4), {}), 8, 0), null],
      ['the largest revision and time', (api, made) => made.offer(doc(4), 2n ** 64n - 1n, 2n ** 64n - 1n), null],
    ],
    offerDictionary: [
      ...notBytes.map(([label, bytes]) => [`bytes ${label}`, (api, made) => made.offerDictionary(bytes, 8, 0), 'invalid_argument']),
      ['refused: damaged bytes', (api, made) => made.offerDictionary(Uint8Array.of(0x53, 0x52), 8, 0), null],
      ['a buffer', (api, made) => made.offerDictionary(Buffer.from(dictionary(api)), 8, 0), null],
      ...revisions((made, revision) => made.offerDictionary(Uint8Array.of(), revision, 0)),
      ...times((made, now) => made.offerDictionary(Uint8Array.of(), 8, now)),
      ['all bad: the bytes first', (api, made) => made.offerDictionary('x', -1, -1), 'invalid_argument'],
    ],
    offerBytes: [
      ...notBytes.map(([label, bytes]) => [`bytes ${label}`, (api, made) => made.offerBytes(bytes, 8, 0), 'invalid_argument']),
      ['refused: not UTF-8', (api, made) => made.offerBytes(Uint8Array.of(0x7b, 0xff), 8, 0), null],
      ['refused: a lone surrogate (CESU-8)', (api, made) => made.offerBytes(Uint8Array.of(0x22, 0xed, 0xa0, 0x80, 0x22), 8, 0), null],
      ['refused: damaged dictionary', (api, made) => made.offerBytes(Uint8Array.of(0x53, 0x52, 0x56, 0x42), 8, 0), null],
      ['a dictionary in a buffer', (api, made) => made.offerBytes(Buffer.from(dictionary(api)), 8, 0), null],
      ['a document as UTF-8', (api, made) => made.offerBytes(new TextEncoder().encode(JSON.stringify(doc(4))), 8, 0), null],
      ...revisions((made, revision) => made.offerBytes(Uint8Array.of(), revision, 0)),
      ...times((made, now) => made.offerBytes(Uint8Array.of(), 8, now)),
      ['all bad: the bytes first', (api, made) => made.offerBytes('x', -1, -1), 'invalid_argument'],
    ],
    disconnected: [...times((made, now) => made.disconnected(now)),
      ['the largest time', (api, made) => made.disconnected(2n ** 64n - 1n), null]],
    connected: [['no arguments', (api, made) => made.connected(), null]],
    nextDeadline: [['no arguments', (api, made) => made.nextDeadline(), null]],
    publish: [
      ...notDocuments.map(([label, document]) => [`document ${label}`, (api, made) => made.publish(document), 'invalid_topology']),
      ['not JSON', (api, made) => made.publish('{'), 'invalid_topology'],
      ['no nodes', (api, made) => made.publish({ ...doc(4), nodes: [] }), 'no_nodes'],
      ['the held epoch', (api, made) => made.publish(doc(HELD.epoch)), 'stale_epoch'],
      ['an epoch past the next', (api, made) => made.publish(doc(HELD.epoch + 2)), 'stale_epoch'],
      ['the next epoch', (api, made) => made.publish(doc(HELD.epoch + 1)), null],
    ],
    router: [['no arguments', (api, made) => made.router, null]],
    revision: [['no arguments', (api, made) => made.revision, null]],
    stats: [['no arguments', (api, made) => made.stats, null]],
    config: [['no arguments', (api, made) => made.config, null]],
    error: [['of a refusal', (api, made) => made.offer('{', 8, 0).error(), null],
      ['of an installation', (api, made) => made.offer(doc(4), 8, 0).error(), null]],
  };
}

/**
 * What a call did, as outcome() says, with the fields of an Offered it returned (two
 * packages' Offereds are compared field by field).
 */
function outcomeWithOffered(api, run) {
  let value;
  const got = outcome(api, () => {
    value = run();
  });
  return value instanceof api.Offered ? { ...got, offered: { ...value } } : got;
}

/**
 * Defines the follower tests for one package: `api` is its module, `runtime` its column of
 * runtimes.mjs.
 */
export function followerSuite(api, runtime) {
  const { Offered, Router, ShardrouteError, TopologyFollower, followerDefaults } = api;
  const other = otherPackage(runtime);
  const declarations = readFileSync(join(runtime.packageDir, 'index.d.ts'), 'utf8');

  /** A follower of `pkg` holding doc(HELD.epoch) at HELD.revision. */
  function made(pkg) {
    const follower = new pkg.TopologyFollower();
    assert.equal(follower.offer(doc(HELD.epoch), HELD.revision, 0).kind, 'installed');
    return follower;
  }

  describe('TopologyFollower: the same boundary in both packages', () => {
    boundaryTests({
      cases: cases(),
      both: (call) => [outcomeWithOffered(api, () => call(api, made(api))),
        outcomeWithOffered(other, () => call(other, made(other)))],
      minimum: 100,
      classes: FOLLOWER_CLASSES,
      declarations,
      what: 'follower',
    });

    test('messages say what was wrong', () => {
      const follower = made(api);
      const message = (fn) => outcome(api, fn).message;
      assert.equal(message(() => follower.offer(5, 8, 0)), 'document must be JSON text or an object, got the number 5');
      assert.equal(message(() => follower.offer(doc(4), 1.5, 0)),
        'revision must be a u64, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got the number 1.5');
      assert.equal(message(() => follower.offer(doc(4), 8, -1n)),
        'nowMs must be milliseconds, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got a negative bigint');
      assert.equal(message(() => follower.offerDictionary('x', 8, 0)), 'bytes must be a Uint8Array, got a string');
      assert.equal(message(() => follower.publish({ ...doc(4), nodes: [{ id: 'a', weight: NaN }] })),
        'nodes[0].weight: NaN is not a JSON number');
      assert.equal(message(() => new TopologyFollower({ reconnect_ms: 1 })),
        'config: unknown field "reconnect_ms" (reconnect_first_ms, reconnect_max_ms)');
      const refusal = follower.offer(doc(4), HELD.revision - 1, 0);
      assert.equal(refusal.message, `revision ${HELD.revision - 1} is older than the installed document's, ${HELD.revision}`);
    });

    if (runtime.free) {
      test('a freed follower is refused, never a trap', () => {
        const follower = made(api);
        follower.free();
        assert.throws(() => follower.offer(doc(4), 8, 0));
      });
    }
  });

  describe('TopologyFollower: what its calls return', () => {
    test('offers give the package\'s Offered: every field an own property, null unless it applies', () => {
      const follower = new TopologyFollower();
      const installed = follower.offer(JSON.stringify(doc(3)), 7, 0);
      assert.ok(installed instanceof Offered);
      assert.deepEqual({ ...installed }, { kind: 'installed', epoch: 3n, code: null, message: null });
      assert.equal(installed.error(), null);
      assert.deepEqual({ ...follower.offer(doc(3), 8n, 1) }, { kind: 'unchanged', epoch: null, code: null, message: null });
      const refused = follower.offer(doc(2), 9, 2);
      assert.deepEqual([refused.kind, refused.epoch, refused.code], ['refused', null, 'stale_epoch']);
      const error = refused.error();
      assert.ok(error instanceof ShardrouteError && error instanceof Error);
      assert.deepEqual([error.code, error.message], [refused.code, refused.message]);
      assert.notEqual(refused.error(), error, 'a new error each time');
      assert.equal(follower.offer('{', 10, 3).code, 'invalid_topology');
      assert.equal(follower.revision, 8n, 'a refusal keeps the revision of the last good document');
    });

    test('a binary dictionary installs as its document does', () => {
      const follower = new TopologyFollower();
      assert.deepEqual({ ...follower.offerDictionary(api.encodeDictionary(DICTIONARY), 1, 0) },
        { kind: 'installed', epoch: 5n, code: null, message: null });
      assert.equal(follower.offer(DICTIONARY, 2, 0).kind, 'unchanged');
      assert.equal(follower.offerDictionary(Uint8Array.of(1), 3, 0).code, 'invalid_topology');
    });

    test('a bigint revision or time is the number one; both go up to 2^64-1', () => {
      const steps = (int) => {
        const follower = new TopologyFollower();
        return [follower.offer(doc(1), int(5), int(6)), follower.offer(doc(2), int(4), int(7)), follower.disconnected(int(8)),
          follower.revision];
      };
      assert.deepEqual(steps(BigInt).map((x) => (x instanceof Offered ? { ...x } : x)),
        steps(Number).map((x) => (x instanceof Offered ? { ...x } : x)));
      const follower = new TopologyFollower();
      follower.offer(doc(1), 2n ** 64n - 1n, 0);
      assert.equal(follower.revision, 2n ** 64n - 1n);
      assert.equal(follower.disconnected(2n ** 64n - 2n), 2n ** 64n - 1n, 'the reconnect time saturates');
    });

    test('disconnected doubles the wait up to the longest; connected resets it', () => {
      const follower = new TopologyFollower({ reconnect_first_ms: 10, reconnect_max_ms: 25 });
      assert.deepEqual([follower.disconnected(0), follower.disconnected(100), follower.disconnected(200)], [10n, 120n, 225n]);
      assert.equal(follower.connected(), undefined);
      assert.equal(follower.disconnected(300), 310n);
    });

    test('publish: the CAS write as the core names it, bigints and the canonical text', () => {
      const follower = new TopologyFollower();
      assert.deepEqual(follower.publish(doc(1)), { expectedRevision: null, epoch: 1n, document: new Router(doc(1)).toJson() });
      follower.offer(doc(1), 41, 0);
      const write = follower.publish(JSON.stringify(doc(2)));
      assert.deepEqual(Object.keys(write), ['expectedRevision', 'epoch', 'document']);
      assert.deepEqual(write, { expectedRevision: 41n, epoch: 2n, document: new Router(doc(2)).toJson() });
      assert.equal(follower.offer(write.document, 42, 1).kind, 'installed', 'what a publisher writes, a follower installs');
    });

    test('stats: u64 counters are bigints, refusals by code', () => {
      const follower = made(api);
      follower.offer(doc(2), 8, 0);
      follower.offer('{', 9, 0);
      follower.offer(doc(HELD.epoch), 10, 0);
      follower.disconnected(0);
      const stats = follower.stats;
      assert.deepEqual(stats, { offered: 4n, installed: 1n, unchanged: 1n, disconnects: 1n,
        refused: { invalid_topology: 1n, stale_epoch: 1n } });
      assert.notEqual(follower.stats, stats, 'a new object each time');
    });

    test('followerDefaults is the core\'s; config is it with the fields given, and makes the same follower again', () => {
      const defaults = followerDefaults();
      assert.deepEqual(defaults, { reconnect_first_ms: 100, reconnect_max_ms: 5000 });
      defaults.reconnect_first_ms = 9;
      assert.equal(followerDefaults().reconnect_first_ms, 100, 'a new object each time');
      assert.deepEqual(new TopologyFollower().config, followerDefaults());
      const follower = new TopologyFollower({ reconnect_first_ms: 5 });
      assert.deepEqual(follower.config, { ...followerDefaults(), reconnect_first_ms: 5 });
      assert.deepEqual(new TopologyFollower(follower.config).config, follower.config);
    });

    test('router and revision are null before the first document, then a Router of the package and a bigint', () => {
      const follower = new TopologyFollower();
      assert.deepEqual([follower.router, follower.revision], [null, null]);
      follower.offer(doc(3), 7, 0);
      const router = follower.router;
      assert.ok(router instanceof Router);
      assert.equal(router.epoch, 3n);
      assert.equal(router.toJson(), new Router(doc(3)).toJson());
      assert.notEqual(follower.router, router, 'a new Router each time');
      assert.equal(follower.revision, 7n);
    });

    // The glue gives `__wrap` only to the classes its calls return: a TopologyFollower is
    // only constructed. Offered is JavaScript in both packages (shared.mjs).
    const extras = runtime.classExtras;
    const constructed = { ...extras, statics: extras.statics.filter((name) => name !== '__wrap') };
    membersTest(declarations, [['TopologyFollower', TopologyFollower, constructed],
      ['Offered', Offered, { methods: [], statics: [] }]]);
  });
}
