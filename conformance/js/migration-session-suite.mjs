// The migration session of both JavaScript packages (`MigrationSession`), as a user sees
// it: the types its calls return, and every call's bad arguments, each with the code it
// must throw, word for word the same in the addon and the WASM build (and what a call
// returns, value for value). What the session decides is the conformance scenarios'
// (conformance/vectors/session_migration.json, run by runner.mjs); this checks the
// boundary. Its calls are covered here rather than in the hostile table
// (hostile-suite.mjs), whose calls take no Migration; a test checks that every call
// index.d.ts declares for the class has cases here.
//
// Each package's test/migration-session.test.mjs calls `migrationSessionSuite(api,
// runtime)`; the other package is loaded from its directory, so both must be built.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { MIGRATION_SESSION_CLASSES, otherPackage, outcome } from './hostile-suite.mjs';
import { NOT_TIMES, boundaryTests, membersTest } from './session-suite.mjs';

/** The 1-based `user_id % n ?: n` over `n` shards at `epoch` (an object, as a user's JSON.parse gives it). */
const shards = (n, epoch) => ({
  format: 'shardroute/1', epoch, hashing: { integers: 'identity' },
  nodes: Array.from({ length: n }, (_, i) => ({ id: `shard_${i + 1}` })), strategy: { type: 'modulo', one_based: true },
});
/** A vbucket dictionary in motion (session_migration.json's `moving`): units 1, 3, 5 and 6 move. */
const MOVING = {
  format: 'shardroute/1', epoch: 9, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], strategy: {
    type: 'vbucket', vbuckets: 8, map: [['a'], ['a'], ['b'], ['b'], ['c'], ['c'], ['a'], ['b']],
    forward_map: [['a'], ['c'], ['b'], ['a'], ['c'], ['b'], ['c'], ['b']],
  },
};
/** The fence epoch of the lazy session `made` gives (the new topology's). */
const FENCE = 2;
/** The deadline of the expiration session `made` gives. */
const DEADLINE = 60_000;

/** Values that are not keys: each is invalid_key. */
const NOT_KEYS = [
  ['undefined', undefined], ['null', null], ['an object', {}], ['an array', ['k']], ['a fraction', 1.5], ['negative', -1],
  ['a negative bigint', -1n], ['a huge bigint', 2n ** 64n], ['a lone surrogate', '\ud800'], ['a symbol', Symbol('k')],
  ['a boolean', true], ['a Uint16Array', new Uint16Array(1)],
];
/** Values that are not counts (u32): each is invalid_argument. */
const NOT_COUNTS = [
  ['negative', -1], ['fraction', 1.5], ['nan', NaN], ['infinity', Infinity], ['2^32', 2 ** 32], ['a bigint', 0n],
  ['text', '0'], ['null', null], ['undefined', undefined], ['an object', {}], ['a symbol', Symbol('c')],
];

/**
 * Bad arguments for every call of the migration session, by call: `[label, call, code]`,
 * `call(api, made)` with `made` fresh for each case: `lazy`, a lazy session of the 1-based
 * 5 -> 10 shards; `background`, a background session of the dictionary in motion;
 * `migration`, the lazy one's migration; `foreign`, a migration of the other package.
 * `code` null for a call that must return.
 */
function cases() {
  const notMigrations = [
    ['undefined', () => undefined], ['null', () => null], ['an object', () => ({})], ['a number', () => 5],
    ['text', () => 'lazy'], ['a router', (api, made) => made.migration.after], ['the session', (api, made) => made.lazy],
    ['a migration of the other package', (api, made) => made.foreign], ['a fake pointer', () => ({ __wbg_ptr: 8 })],
    ['a revoked proxy', () => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy; }],
  ];
  const notModes = [
    ['eager', 'eager'], ['capitalised', 'Lazy'], ['empty', ''], ['undefined', undefined], ['null', null], ['a number', 1],
    ['a symbol', Symbol('m')], ['a boxed string', new String('lazy')], ['an array', ['lazy']], ['a lone surrogate', 'lazy\ud800'],
  ];
  const keys = (call) => NOT_KEYS.map(([label, key]) => [`key ${label}`, (api, made) => call(made, key), 'invalid_key']);
  const counts = (call) => NOT_COUNTS.map(([label, count]) => [label, (api, made) => call(made, count), 'invalid_argument']);
  return {
    MigrationSession: [
      ...notMigrations.map(([label, value]) => [`migration ${label}`,
        (api, made) => new api.MigrationSession(value(api, made), 'lazy'), 'invalid_argument']),
      ...notModes.map(([label, mode]) => [`mode ${label}`, (api, made) => new api.MigrationSession(made.migration, mode),
        'invalid_argument']),
      ['both bad: the migration first', (api) => new api.MigrationSession({}, 1), 'invalid_argument'],
      ['lazy', (api, made) => new api.MigrationSession(made.migration, 'lazy'), null],
      ['background without fixed partitions', (api, made) => new api.MigrationSession(made.migration, 'background'),
        'invalid_argument'],
      ['plain is decided, not asked for', (api, made) => new api.MigrationSession(made.migration, 'plain'), 'invalid_argument'],
      ['of a dictionary', (api) => new api.MigrationSession(api.Migration.ofDictionary(new api.Router(MOVING)), 'lazy'), null],
      ...NOT_TIMES.filter(([label]) => !['null', 'undefined'].includes(label)).map(([label, until]) => [`untilMs ${label}`,
        (api, made) => new api.MigrationSession(made.migration, 'expiration', until), 'invalid_argument']),
      ['expiration without untilMs', (api, made) => new api.MigrationSession(made.migration, 'expiration'), 'invalid_argument'],
      ['expiration, untilMs null', (api, made) => new api.MigrationSession(made.migration, 'expiration', null), 'invalid_argument'],
      ['untilMs with lazy', (api, made) => new api.MigrationSession(made.migration, 'lazy', 5), 'invalid_argument'],
      ['lazy, untilMs undefined', (api, made) => new api.MigrationSession(made.migration, 'lazy', undefined), null],
      ['expiration', (api, made) => new api.MigrationSession(made.migration, 'expiration', 0), null],
      ['expiration, the largest deadline', (api, made) => new api.MigrationSession(made.migration, 'expiration', 2n ** 64n - 1n), null],
    ],
    untilMs: [
      ['expiration', (api, made) => made.expiration.untilMs, null],
      ['lazy', (api, made) => made.lazy.untilMs, null],
    ],
    readPlanAt: [
      ...keys((made, key) => made.expiration.readPlanAt(key, 0)),
      ...NOT_TIMES.map(([label, now]) => [`nowMs ${label}`, (api, made) => made.expiration.readPlanAt(7, now), 'invalid_argument']),
      ...[['null', null], ['a number', 1]].map(([label, moved]) => [`moved ${label}`,
        (api, made) => made.expiration.readPlanAt(7, 0, moved), 'invalid_argument']),
      ['both bad: the key first', (api, made) => made.expiration.readPlanAt(-1, -1), 'invalid_key'],
      ['before the deadline', (api, made) => made.expiration.readPlanAt(7, DEADLINE - 1), null],
      ['at the deadline', (api, made) => made.expiration.readPlanAt(7n, BigInt(DEADLINE)), null],
      ['lazy, moved', (api, made) => made.lazy.readPlanAt('7', 0, true), null],
    ],
    nextDeadline: [
      ...NOT_TIMES.map(([label, now]) => [`nowMs ${label}`, (api, made) => made.expiration.nextDeadline(now), 'invalid_argument']),
      ['before the deadline', (api, made) => made.expiration.nextDeadline(0), null],
      ['at the deadline', (api, made) => made.expiration.nextDeadline(DEADLINE), null],
      ['lazy', (api, made) => made.lazy.nextDeadline(0n), null],
    ],
    actions: [
      ...NOT_TIMES.map(([label, now]) => [`nowMs ${label}`, (api, made) => made.expiration.actions(now), 'invalid_argument']),
      ...[['null', null], ['a number', 1], ['text', 'true']].map(([label, moved]) => [`moved ${label}`,
        (api, made) => made.lazy.actions(0, moved), 'invalid_argument']),
      ['expiration, before the deadline', (api, made) => made.expiration.actions(DEADLINE - 1, true), null],
      ['expiration, at the deadline (growing: nothing emptied)', (api, made) => made.expiration.actions(DEADLINE), null],
      ['background, moved', (api, made) => made.background.actions(0, true), null],
    ],
    misplaced: [
      ...notMigrations.filter(([label]) => label !== 'a router').map(([label, value]) => [`router ${label}`,
        (api, made) => api.MigrationSession.misplaced(value(api, made), 'shard_1', [1]), 'invalid_argument']),
      ...[['null', null], ['undefined', undefined], ['a boolean', true], ['a bigint', 1n], ['an object', {}],
        ['a fraction', 1.5], ['negative', -1], ['2^32', 2 ** 32]].map(([label, holder]) => [`holder ${label}`,
        (api, made) => api.MigrationSession.misplaced(made.migration.after, holder, [1]), 'invalid_argument']),
      ['a node the topology does not list', (api, made) => api.MigrationSession.misplaced(made.migration.after, 'shard_11', [1]),
        'invalid_argument'],
      ['a shard outside the range', (api, made) => api.MigrationSession.misplaced(made.migration.after, 0, [1]), 'invalid_argument'],
      ['keys not an array', (api, made) => api.MigrationSession.misplaced(made.migration.after, 'shard_1', 1), 'invalid_argument'],
      ...NOT_KEYS.filter(([label]) => label !== 'an array').map(([label, key]) => [`key ${label}`,
        (api, made) => api.MigrationSession.misplaced(made.migration.after, 'shard_1', [1, key]), 'invalid_key']),
      ['by node', (api, made) => api.MigrationSession.misplaced(made.migration.after, 'shard_2', [2, 7, 12n, '17']), null],
      ['by shard', (api, made) => api.MigrationSession.misplaced(made.migration.after, 1, [1, 11, 2]), null],
      ['no keys', (api, made) => api.MigrationSession.misplaced(made.migration.after, 10, []), null],
    ],
    fenceEpoch: [['no arguments', (api, made) => made.lazy.fenceEpoch, null]],
    ofTopology: [
      ...notMigrations.filter(([label]) => label !== 'a router').map(([label, value]) => [`topology ${label}`,
        (api, made) => api.MigrationSession.ofTopology(value(api, made)), 'invalid_argument']),
      ...[['an object', {}], ['a number', 5], ['text', 'previous'], ['a migration', 'migration']].flatMap(([label, value]) => [
        [`previous ${label}`, (api, made) => api.MigrationSession.ofTopology(made.migration.after,
          value === 'migration' ? made.migration : value), 'invalid_argument'],
        [`held ${label}`, (api, made) => api.MigrationSession.ofTopology(made.migration.after, null,
          value === 'migration' ? made.migration : value), 'invalid_argument'],
      ]),
      ['a router of the other package', (api, made) => api.MigrationSession.ofTopology(made.foreign.after), 'invalid_argument'],
      ['plain', (api, made) => api.MigrationSession.ofTopology(made.migration.after).mode, null],
      ['plain, previous and held undefined', (api, made) => api.MigrationSession.ofTopology(made.migration.after, undefined, undefined).mode, null],
      ['lazy', (api, made) => api.MigrationSession.ofTopology(made.migration.after, made.migration.before).mode, null],
      ['catch-up', (api, made) => api.MigrationSession.ofTopology(made.migration.after, null, made.migration.before).mode, null],
      ['background', (api) => api.MigrationSession.ofTopology(new api.Router(MOVING)).mode, null],
    ],
    mode: [
      ['lazy', (api, made) => made.lazy.mode, null],
      ['background', (api, made) => made.background.mode, null],
    ],
    scanNodes: [
      ['lazy 5 -> 10', (api, made) => made.lazy.scanNodes(), null],
      ['background', (api, made) => made.background.scanNodes(), null],
      ['plain', (api, made) => api.MigrationSession.ofTopology(made.migration.before).scanNodes(), null],
    ],
    readPlan: [
      ...keys((made, key) => made.lazy.readPlan(key)),
      ...[['null', null], ['a number', 1], ['text', 'true'], ['an object', {}]].map(([label, moved]) => [`moved ${label}`,
        (api, made) => made.lazy.readPlan(7, moved), 'invalid_argument']),
      ['both bad: the key first', (api, made) => made.lazy.readPlan(-1, 1), 'invalid_key'],
      ['moved omitted', (api, made) => made.lazy.readPlan(7), null],
      ['moved undefined', (api, made) => made.lazy.readPlan(7n, undefined), null],
      ['moved', (api, made) => made.lazy.readPlan('7', true), null],
      ['bytes in background', (api, made) => made.background.readPlan(Uint8Array.of(1, 2), false), null],
    ],
    writePlan: [
      ...keys((made, key) => made.lazy.writePlan(key)),
      ['a number', (api, made) => made.lazy.writePlan(7), null],
      ['in background', (api, made) => made.background.writePlan('k'), null],
    ],
    lazySteps: [
      ...keys((made, key) => made.lazy.lazySteps(key)),
      ['in background', (api, made) => made.background.lazySteps('k'), null],
      ['in background, a bad key: the key first', (api, made) => made.background.lazySteps(-1), 'invalid_key'],
      ['a key that moves', (api, made) => made.lazy.lazySteps(7), null],
      ['a key that stays', (api, made) => made.lazy.lazySteps(12n), null],
    ],
    lazyGroups: [
      ['keys not an array', (api, made) => made.lazy.lazyGroups(7), 'invalid_argument'],
      ['keys undefined', (api, made) => made.lazy.lazyGroups(), 'invalid_argument'],
      ...NOT_KEYS.filter(([label]) => label !== 'an array').map(([label, key]) => [`key ${label}`,
        (api, made) => made.lazy.lazyGroups([7, key]), 'invalid_key']),
      ['keys of every form', (api, made) => made.lazy.lazyGroups([7, 12n, '17', 10, 20n]), null],
      ['no keys', (api, made) => made.lazy.lazyGroups([]), null],
      ['in background', (api, made) => made.background.lazyGroups([1, 3]), null],
    ],
    resumeAt: [
      ...NOT_TIMES.map(([label, time]) => [`startedMs ${label}`, (api, made) => made.lazy.resumeAt(time, 10), 'invalid_argument']),
      ...NOT_TIMES.map(([label, time]) => [`finishedMs ${label}`, (api, made) => made.lazy.resumeAt(0, time), 'invalid_argument']),
      ...NOT_COUNTS.filter(([label]) => !['null', 'undefined'].includes(label)).map(([label, duty]) => [`dutyPerMille ${label}`,
        (api, made) => made.lazy.resumeAt(0, 10, duty), 'invalid_argument']),
      ...NOT_TIMES.filter(([label]) => !['null', 'undefined'].includes(label)).map(([label, pause]) => [`minPauseMs ${label}`,
        (api, made) => made.lazy.resumeAt(0, 10, 50, pause), 'invalid_argument']),
      ['a duty of 0', (api, made) => made.lazy.resumeAt(0, 10, 0), 'invalid_argument'],
      ['a duty over 1000', (api, made) => made.lazy.resumeAt(0, 10, 1001), 'invalid_argument'],
      ['finished before started', (api, made) => made.lazy.resumeAt(10, 0), 'invalid_argument'],
      ['both bad: startedMs first', (api, made) => made.lazy.resumeAt(-1, 10, 0), 'invalid_argument'],
      ['the defaults', (api, made) => made.lazy.resumeAt(1000, 1010), null],
      ['the defaults, null', (api, made) => made.lazy.resumeAt(1000n, 1001n, null, null), null],
      ['a duty and a pause', (api, made) => made.background.resumeAt(0, 1, 250, 20n), null],
      ['saturating', (api, made) => made.lazy.resumeAt(0n, 2n ** 64n - 1n, 1), null],
    ],
    copyBatch: [
      ...counts((made, cursor) => made.background.copyBatch(cursor, 1)).map(([label, ...rest]) => [`cursor ${label}`, ...rest]),
      ...counts((made, max) => made.background.copyBatch(0, max)).map(([label, ...rest]) => [`max ${label}`, ...rest]),
      ['max 0', (api, made) => made.background.copyBatch(0, 0), 'invalid_argument'],
      ['a cursor past the moving units', (api, made) => made.background.copyBatch(5, 1), 'invalid_argument'],
      ['the largest cursor', (api, made) => made.background.copyBatch(2 ** 32 - 1, 1), 'invalid_argument'],
      ['lazy', (api, made) => made.lazy.copyBatch(0, 1), 'invalid_argument'],
      ['lazy, a bad cursor: the cursor first', (api, made) => made.lazy.copyBatch(-1, 1), 'invalid_argument'],
      ['both bad: the cursor first', (api, made) => made.background.copyBatch(-1, 'x'), 'invalid_argument'],
      ['plain', (api, made) => api.MigrationSession.ofTopology(made.migration.after).copyBatch(0, 1), 'invalid_argument'],
      ['the first batch', (api, made) => made.background.copyBatch(0, 3), null],
      ['the largest max', (api, made) => made.background.copyBatch(1, 2 ** 32 - 1), null],
      ['the cursor at the end', (api, made) => made.background.copyBatch(4, 1), null],
    ],
    fenced: [
      ...NOT_TIMES.map(([label, epoch]) => [`minEpoch ${label}`, (api, made) => made.lazy.fenced(epoch), 'invalid_argument']),
      ['the fence epoch', (api, made) => made.lazy.fenced(FENCE), 'invalid_argument'],
      ['an older epoch', (api, made) => made.lazy.fenced(0n), 'invalid_argument'],
      ['a newer epoch', (api, made) => made.lazy.fenced(FENCE + 1), null],
      ['the largest epochs', (api, made) => made.lazy.fenced(2n ** 64n - 1n) + made.lazy.fenced(Number.MAX_SAFE_INTEGER), null],
    ],
  };
}

/**
 * What a call did, as outcome() says, with the value it returned when that is data (a
 * session is not: two packages' sessions are of two classes), so that both packages'
 * results are compared too.
 */
function outcomeWithValue(api, run) {
  let value;
  const got = outcome(api, () => {
    value = run();
  });
  return got.ok && !(value instanceof api.MigrationSession) ? { ...got, value } : got;
}

/**
 * Defines the migration session tests for one package: `api` is its module, `runtime` its
 * column of runtimes.mjs.
 */
export function migrationSessionSuite(api, runtime) {
  const { Migration, MigrationSession, Router } = api;
  const other = otherPackage(runtime);
  const declarations = readFileSync(join(runtime.packageDir, 'index.d.ts'), 'utf8');

  /** The sessions of `pkg` the cases use (cases()); `foreign`, a migration of `foreignPkg`. */
  function made(pkg, foreignPkg) {
    const migration = new pkg.Migration(new pkg.Router(shards(5, FENCE - 1)), new pkg.Router(shards(10, FENCE)));
    return {
      migration,
      lazy: new pkg.MigrationSession(migration, 'lazy'),
      expiration: new pkg.MigrationSession(migration, 'expiration', DEADLINE),
      background: new pkg.MigrationSession(pkg.Migration.ofDictionary(new pkg.Router(MOVING)), 'background'),
      foreign: new foreignPkg.Migration(new foreignPkg.Router(shards(5, 1)), new foreignPkg.Router(shards(10, 2))),
    };
  }

  /** The lazy session of the 1-based 5 -> 10 shards, from epoch `FENCE - 1` to `FENCE`. */
  const seed = () => new MigrationSession(new Migration(new Router(shards(5, FENCE - 1)), new Router(shards(10, FENCE))), 'lazy');

  describe('MigrationSession: the same boundary in both packages', () => {
    boundaryTests({
      cases: cases(),
      both: (call) => [outcomeWithValue(api, () => call(api, made(api, other))),
        outcomeWithValue(other, () => call(other, made(other, api)))],
      minimum: 100,
      classes: MIGRATION_SESSION_CLASSES,
      // The static `ofTopology` is a call of the class too: read as a member here, so
      // that it must have cases (declaredMembers reads instance members only).
      declarations: declarations.replace(/^ {2}static (\w+)\(/gm, '  $1('),
      what: 'migration session',
    });

    test('messages say what was wrong', () => {
      const session = seed();
      const background = new MigrationSession(Migration.ofDictionary(new Router(MOVING)), 'background');
      const migration = new Migration(new Router(shards(5, 1)), new Router(shards(10, 2)));
      const message = (fn) => outcome(api, fn).message;
      assert.equal(message(() => new MigrationSession({}, 'lazy')), 'migration must be a Migration, got an object');
      assert.equal(message(() => new MigrationSession(migration.after, 'lazy')), 'migration must be a Migration, got an object');
      assert.equal(message(() => new MigrationSession(migration, 'eager')), 'mode: expected "background", "lazy" or "expiration", got "eager"');
      assert.equal(message(() => new MigrationSession(migration, 'expiration', 1.5)),
        'untilMs must be milliseconds, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got the number 1.5');
      assert.equal(message(() => new MigrationSession(migration, 'expiration')),
        'mode: "expiration" needs its deadline, the keys\' TTL horizon (until_ms)');
      assert.equal(message(() => MigrationSession.misplaced(migration.after, null, [1])),
        'holder must be a node id (a string) or a shard number, got null');
      assert.equal(message(() => MigrationSession.misplaced(migration.after, 'shard_11', [1])),
        'misplaced: node "shard_11" is not a node of the topology');
      assert.equal(message(() => new MigrationSession(migration, 1)), 'mode must be a string, got the number 1');
      assert.equal(message(() => session.readPlan(7, 1)), 'moved must be a boolean, got the number 1');
      assert.equal(message(() => background.copyBatch(-1, 1)), 'cursor must be an integer in 0..=4294967295, got -1');
      assert.equal(message(() => background.copyBatch(0, '1')), 'max must be a number, got a string');
      assert.equal(message(() => background.copyBatch(5, 1)), 'copy_batch: cursor 5 is past the 4 moving units');
      assert.equal(message(() => session.lazySteps(-1)),
        'number key -1 is not a safe non-negative integer; pass integers above 2^53-1 as BigInt');
      assert.equal(message(() => new MigrationSession(migration, 'background')),
        'background: a copy job moves fixed partitions (vbuckets, slots, partitions) that both topologies share, '
        + 'and modulo to modulo shares none (node numbers, or a different count): move the data lazily (mode "lazy")');
      assert.equal(message(() => session.copyBatch(0, 1)),
        'copy_batch: only a background session copies units; this one is lazy (it moves keys on first read: lazy_steps)');
      assert.equal(message(() => MigrationSession.ofTopology({})), 'topology must be a Router, got an object');
      assert.equal(message(() => session.fenced(1.5)),
        'minEpoch must be a u64, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got the number 1.5');
      assert.equal(message(() => session.fenced(-1n)),
        'minEpoch must be a u64, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got a negative bigint');
      assert.equal(message(() => session.resumeAt(10, 0)),
        'finished_ms 0 is before started_ms 10: a step ends after it starts (one monotonic clock for both)');
      assert.equal(message(() => session.resumeAt(0, 10, 0)),
        'duty_per_mille: the share of the wall time the job works, in thousandths, must be in 1..=1000, got 0');
      assert.equal(message(() => session.resumeAt(0, 10, 50, -1)),
        'minPauseMs must be milliseconds, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got the number -1');
      assert.equal(message(() => session.lazyGroups(7)), 'keys must be an array, got the number 7');
      assert.equal(message(() => session.fenced(FENCE)),
        `fenced: a fence at epoch ${FENCE} admits writes under epoch ${FENCE}; the refusal is not the fence's`);
    });

    test('a proxy of a migration: refused by the addon, passed through by the WASM build (runtimes.mjs)', () => {
      const migration = new Migration(new Router(shards(5, 1)), new Router(shards(10, 2)));
      const got = outcome(api, () => new MigrationSession(new Proxy(migration, {}), 'lazy'));
      assert.deepEqual(got, runtime.proxiesPass ? { ok: true }
        : { code: 'invalid_argument', message: 'migration must be a Migration, got an object' });
    });

    if (runtime.free) {
      test('a freed migration is refused; a freed session throws, never a trap', () => {
        const migration = new Migration(new Router(shards(5, 1)), new Router(shards(10, 2)));
        const session = new MigrationSession(migration, 'lazy');
        migration.free();
        assert.equal(session.writePlan(7).node, 'shard_7', 'the session holds a copy of its migration');
        assert.equal(outcome(api, () => new MigrationSession(migration, 'lazy')).code, 'invalid_argument');
        session.free();
        assert.throws(() => session.writePlan(7));
      });
    }
  });

  describe('MigrationSession: what its calls return', () => {
    test('the seed\'s 5 -> 10 lazily: plans with camelCase fields, the fence epoch a bigint', () => {
      const session = seed();
      assert.equal(session.fenceEpoch, BigInt(FENCE));
      assert.deepEqual(session.readPlan(7), ['shard_2', 'shard_7'], 'old owner first, the core\'s order');
      assert.deepEqual(session.readPlan(7n, true), ['shard_7']);
      assert.deepEqual(session.readPlan(12), ['shard_2'], 'a key that stays has one place');
      const write = session.writePlan(7);
      assert.deepEqual(Object.keys(write), ['node', 'fenceEpoch']);
      assert.deepEqual(write, { node: 'shard_7', fenceEpoch: BigInt(FENCE) });
      assert.notEqual(session.writePlan(7), write, 'a new object each time');
      const steps = session.lazySteps(7);
      assert.deepEqual(Object.keys(steps), ['readFrom', 'writeTo', 'retireFrom', 'fenceEpoch']);
      assert.deepEqual(steps, { readFrom: 'shard_2', writeTo: 'shard_7', retireFrom: 'shard_2', fenceEpoch: BigInt(FENCE) });
      assert.equal(session.lazySteps(12), null);
      assert.equal(session.fenced(FENCE + 1), 'refresh');
      assert.equal(session.fenced(BigInt(FENCE + 1)), 'refresh');
    });

    test('a key is a key: a number, a bigint, text and bytes route as the router routes them', () => {
      const session = seed();
      const router = new Router(shards(10, FENCE));
      for (const key of [7, 7n, 'user:7', Uint8Array.of(7)]) assert.equal(session.writePlan(key).node, router.node(key));
    });

    test('the background copy resumes from its cursor: units as [shard, from, to], next a number or null', () => {
      const migration = Migration.ofDictionary(new Router(MOVING));
      const session = new MigrationSession(migration, 'background');
      assert.equal(session.fenceEpoch, 9n, 'the dictionary in motion is the published document: its epoch fences');
      const first = session.copyBatch(0, 3);
      assert.deepEqual(Object.keys(first), ['units', 'next']);
      assert.deepEqual(first, { units: [[1, 'a', 'c'], [3, 'b', 'a'], [5, 'c', 'b']], next: 3 });
      assert.ok(first.units.every(Array.isArray), 'plain arrays');
      assert.deepEqual(session.copyBatch(first.next, 3), { units: [[6, 'a', 'c']], next: null });
      assert.deepEqual(session.copyBatch(4, 3), { units: [], next: null });
      assert.deepEqual(session.copyBatch(0, 2 ** 32 - 1).units, migration.movingShards().map(({ shard, from, to }) => [shard, from, to]));
      assert.deepEqual(session.readPlan('k'), migration.readTargets('k'));
    });

    test('the session copies its migration, which stays as it was', () => {
      const before = new Router(shards(5, 1));
      const migration = new Migration(before, new Router(shards(10, 2)));
      new MigrationSession(migration, 'lazy');
      assert.equal(migration.before.toJson(), before.toJson());
      assert.deepEqual(migration.readTargets(7), ['shard_2', 'shard_7']);
    });

    test('ofTopology decides the mode; every mode answers every question', () => {
      const five = new Router(shards(5, FENCE - 1));
      const ten = new Router(shards(10, FENCE));
      const plain = MigrationSession.ofTopology(five);
      assert.deepEqual([plain.mode, plain.readPlan(7), plain.lazySteps(7)], ['plain', ['shard_2'], null]);
      assert.deepEqual(plain.writePlan(7), { node: 'shard_2', fenceEpoch: BigInt(FENCE - 1) });
      const lazy = MigrationSession.ofTopology(ten, five);
      assert.deepEqual([lazy.mode, lazy.readPlan(7)], ['lazy', ['shard_2', 'shard_7']]);
      assert.deepEqual(lazy.scanNodes(), Array.from({ length: 10 }, (_, i) => `shard_${i + 1}`), '5 -> 10: each node once');
      const catchUp = MigrationSession.ofTopology(ten, null, five);
      assert.deepEqual([catchUp.mode, catchUp.readPlan(7), catchUp.lazySteps(7)], ['catch-up', ['shard_2', 'shard_7'], null]);
      assert.equal(MigrationSession.ofTopology(new Router(MOVING)).mode, 'background');
    });

    test('expiration: reads the old owner until the deadline, then retires the emptied shards', () => {
      const shrink = new Migration(new Router(shards(10, 1)), new Router(shards(5, 2)));
      const session = new MigrationSession(shrink, 'expiration', DEADLINE);
      assert.deepEqual([session.mode, session.untilMs], ['expiration', BigInt(DEADLINE)]);
      assert.deepEqual(session.writePlan(7), { node: 'shard_2', fenceEpoch: 2n });
      assert.deepEqual(session.readPlanAt(7, DEADLINE - 1), ['shard_7', 'shard_2'], 'old owner first, the new one\'s copy newer');
      assert.deepEqual(session.readPlanAt(7n, BigInt(DEADLINE)), ['shard_2']);
      assert.equal(session.nextDeadline(0), BigInt(DEADLINE), 'a bigint');
      assert.equal(session.nextDeadline(DEADLINE), null);
      assert.deepEqual(session.actions(DEADLINE - 1, true), []);
      const retire = session.actions(DEADLINE);
      assert.deepEqual(Object.keys(retire[0]), ['kind', 'node']);
      assert.deepEqual(retire, [6, 7, 8, 9, 10].map((i) => ({ kind: 'retire', node: `shard_${i}` })));
      assert.equal(new MigrationSession(shrink, 'lazy').untilMs, null);
    });

    test('misplaced: the keys found on a node or shard it does not own, by index', () => {
      const ten = new Router(shards(10, 2));
      const found = MigrationSession.misplaced(ten, 'shard_2', [2, 7, 12n, '17', 22]);
      assert.deepEqual(Object.keys(found), ['misplaced', 'count', 'checked']);
      assert.deepEqual(found, { misplaced: [1, 3], count: 2, checked: 5 }, 'text "17" hashes as text: not user 17');
      assert.deepEqual(MigrationSession.misplaced(ten, 1, [1, 11n, 2]), { misplaced: [2], count: 1, checked: 3 });
    });

    // ofTopology returns a MigrationSession, so the glue gives it `__wrap` as well; the
    // declared statics are own properties of the class.
    const extras = runtime.classExtras;
    membersTest(declarations, [['MigrationSession', MigrationSession,
      { ...extras, statics: [...extras.statics, 'ofTopology', 'misplaced'] }]]);
  });
}
