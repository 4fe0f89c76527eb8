// The Redis Cluster session of both JavaScript packages (`ClusterSession`, `Command`,
// `Action`, `sessionDefaults`, `parseAddress`), as a user sees it: the types its calls
// return, and every call's bad arguments, each with the code it must throw, word for word
// the same in the addon and the WASM build. What the session decides is the conformance
// scenarios' (conformance/vectors/session_redis.json, run by runner.mjs); this checks the
// boundary. The session's calls are covered here rather than in the hostile table
// (hostile-suite.mjs), whose calls hold no state between them; the last test checks that
// every call index.d.ts declares for the session's classes has cases here.
//
// Each package's test/session.test.mjs calls `sessionSuite(api, runtime)`; the other
// package is loaded from its directory, so both must be built.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { SESSION_CLASSES, otherPackage, outcome } from './hostile-suite.mjs';

const MASTER = 'a'.repeat(40);
/** A CLUSTER SHARDS reply (RESP3 maps): one master over every slot, with one replica. */
const SHARDS = [{
  slots: [0, 16383],
  nodes: [
    { id: MASTER, ip: '127.0.0.1', port: 7000, endpoint: '127.0.0.1', role: 'master', health: 'online' },
    { id: 'b'.repeat(40), ip: '127.0.0.1', port: 7001, endpoint: '127.0.0.1', role: 'replica', health: 'online' },
  ],
}];

/** Values that are not times (nor revisions): each is invalid_argument. */
export const NOT_TIMES = [
  ['negative', -1], ['fraction', 1.5], ['nan', NaN], ['infinity', Infinity], ['unsafe', 2 ** 53], ['negative_bigint', -1n],
  ['huge_bigint', 2n ** 64n], ['text', '1'], ['null', null], ['undefined', undefined], ['object', {}], ['symbol', Symbol('t')],
];

/** A proxy of an array whose `length` getter throws. */
const throwingLength = (items) => new Proxy(items, { get: (t, n) => { if (n === 'length') throw new Error('no'); return t[n]; } });
/** An array whose element `index` has a getter that throws. */
const throwingElement = (items, index) => Object.defineProperty([...items], index, { get() { throw new Error('no'); } });
/** An object that contains itself. */
const cyclic = () => {
  const object = { slots: [0, 16383] };
  object.nodes = [object];
  return [object];
};

/**
 * Bad arguments for every call of the session's classes, by call: `[label, call, code]`,
 * `call(api, made)` with `made` a session with its table and a command begun on it, fresh
 * for each case; `code` null for a call that must succeed.
 */
function cases() {
  const times = (call) => NOT_TIMES.map(([label, now]) => [`nowMs ${label}`, (api, made) => call(made, now), 'invalid_argument']);
  const notCommands = [
    ['undefined', () => undefined], ['null', () => null], ['object', () => ({})], ['the session', (api, made) => made.session],
    ['a router', (api, made) => made.session.router], ['a command of the other package', (api, made) => made.foreign],
    ['a revoked proxy', () => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy; }],
  ];
  const commands = (call) => notCommands.map(([label, value]) => [`command ${label}`,
    (api, made) => call(made, value(api, made)), 'invalid_argument']);
  const seeds = [
    ['undefined', undefined, 'invalid_argument'], ['text', 'h:1', 'invalid_argument'], ['number', 5, 'invalid_argument'],
    ['empty', [], 'invalid_argument'], ['no port', ['h'], 'invalid_argument'], ['no host', [':1'], 'invalid_argument'],
    ['port 0', ['h:0'], 'invalid_argument'], ['a number seed', [1], 'invalid_argument'],
    ['a bytes seed', [Uint8Array.of(104)], 'invalid_argument'], ['a lone surrogate', ['\ud800:1'], 'invalid_argument'],
    ['throwing length', throwingLength(['h:1']), 'invalid_argument'],
    ['throwing element', throwingElement(['h:1', 'h:2'], 1), 'invalid_argument'],
    ['a proxy of an array', new Proxy(['h:1'], {}), null], ['IPv6', ['[::1]:7000', '::1:7001'], null],
  ];
  const configs = [
    ['unknown field', { nope: 1 }], ['negative', { max_redirects: -1 }], ['too many redirects', { max_redirects: 1001 }],
    ['nan', { retry_budget_ms: NaN }], ['zero backoff', { backoff_first_ms: 0 }], ['backoff order', { backoff_max_ms: 10 }],
    ['past 2^53', { retry_budget_ms: 2 ** 53 + 2 }], ['a bigint', { max_redirects: 2n }], ['not a flag', { read_from_replicas: 1 }],
    ['an array', [1]], ['text', '{}'], ['a number', 5], ['a symbol', Symbol('c')], ['a function', () => 1],
    ['a map', new Map()], ['a cycle', cyclic()[0]], ['a throwing getter', Object.defineProperty({}, 'max_redirects', {
      enumerable: true, get() { throw new Error('no'); } })],
  ].map(([label, config]) => [label, config, 'invalid_argument']);
  const replies = [
    ['empty', []], ['an object', {}], ['text', 'x'], ['a symbol', Symbol('r')], ['nan', [{ slots: [0, NaN], nodes: [] }]],
    ['a cycle', cyclic()], ['a buffer', [Buffer.from('x')]], ['uncovered slots', [{ ...SHARDS[0], slots: [0, 100] }]],
    ['undefined', undefined],
  ];
  return {
    ClusterSession: [
      ...seeds.map(([label, value, code]) => [`seeds ${label}`, (api) => new api.ClusterSession(value), code]),
      ...configs.map(([label, value, code]) => [`config ${label}`, (api) => new api.ClusterSession(['h:1'], value), code]),
      ['config null', (api) => new api.ClusterSession(['h:1'], null), null],
      ['config undefined member', (api) => new api.ClusterSession(['h:1'], { max_redirects: undefined }), null],
      ['both bad: config first', (api) => new api.ClusterSession(5, Symbol('c')), 'invalid_argument'],
    ],
    command: [
      ['keys text', (api, made) => made.session.command('k', 'write', 0), 'invalid_argument'],
      ['keys undefined', (api, made) => made.session.command(undefined, 'write', 0), 'invalid_argument'],
      ['no keys', (api, made) => made.session.command([], 'write', 0), 'invalid_argument'],
      ['a lone surrogate', (api, made) => made.session.command(['\ud800'], 'write', 0), 'invalid_key'],
      ['not a key', (api, made) => made.session.command(['k', {}], 'write', 0), 'invalid_key'],
      ['throwing element', (api, made) => made.session.command(throwingElement(['k', 'k'], 1), 'write', 0), 'invalid_key'],
      ['cross slot', (api, made) => made.session.command(['a', 'b'], 'write', 0), 'cross_slot'],
      ['access append', (api, made) => made.session.command(['k'], 'append', 0), 'invalid_argument'],
      ['access number', (api, made) => made.session.command(['k'], 1, 0), 'invalid_argument'],
      ['all bad: keys first', (api, made) => made.session.command('k', 1, -1), 'invalid_argument'],
      ...times((made, now) => made.session.command(['k'], 'read', now)),
      ['the largest times', (api, made) => made.session.command(['k'], 'read', 2n ** 64n - 1n)
        && made.session.command(['k'], 'read', Number.MAX_SAFE_INTEGER), null],
    ],
    poll: [...commands((made, c) => made.session.poll(c, 0)), ...times((made, now) => made.session.poll(made.command, now)),
      ['both bad: command first', (api, made) => made.session.poll({}, -1), 'invalid_argument'],
      ['the largest time', (api, made) => made.session.poll(made.command, 2n ** 64n - 1n), null]],
    succeeded: [...commands((made, c) => made.session.succeeded(c, 0)),
      ...times((made, now) => made.session.succeeded(made.command, now))],
    stalled: [...commands((made, c) => made.session.stalled(c, 0)),
      ...times((made, now) => made.session.stalled(made.command, now)),
      ['both bad: command first', (api, made) => made.session.stalled(undefined, -1), 'invalid_argument']],
    failed: [
      ...commands((made, c) => made.session.failed(c, 'x', [], 0)),
      ...times((made, now) => made.session.failed(made.command, 'x', [], now)),
      ['text number', (api, made) => made.session.failed(made.command, 1, [], 0), 'invalid_argument'],
      ['text bytes', (api, made) => made.session.failed(made.command, Buffer.from('MOVED 1 h:1'), [], 0), 'invalid_argument'],
      ['text lone surrogate', (api, made) => made.session.failed(made.command, 'MOVED 1 h:1\ud800', [], 0), 'invalid_argument'],
      ['names text', (api, made) => made.session.failed(made.command, 'x', 'MovedError', 0), 'invalid_argument'],
      ['names undefined', (api, made) => made.session.failed(made.command, 'x', undefined, 0), 'invalid_argument'],
      ['names number', (api, made) => made.session.failed(made.command, 'x', ['a', 1], 0), 'invalid_argument'],
      ['names throwing element', (api, made) => made.session.failed(made.command, 'x', throwingElement(['a', 'b'], 0), 0),
        'invalid_argument'],
      ['names throwing length', (api, made) => made.session.failed(made.command, 'x', throwingLength(['a']), 0),
        'invalid_argument'],
      ['all bad: command first', (api, made) => made.session.failed(null, 1, 2, -1), 'invalid_argument'],
      ['all bad but the command: text first', (api, made) => made.session.failed(made.command, 1, 2, -1), 'invalid_argument'],
      ['a proxy of names', (api, made) => made.session.failed(made.command, 'x', new Proxy(['ECONNRESET'], {}), 0), null],
    ],
    unreachable: [
      ...commands((made, c) => made.session.unreachable(c, 'timeout', 0)),
      ...times((made, now) => made.session.unreachable(made.command, 'refused', now)),
      ['why gone', (api, made) => made.session.unreachable(made.command, 'gone', 0), 'invalid_argument'],
      ['why undefined', (api, made) => made.session.unreachable(made.command, undefined, 0), 'invalid_argument'],
      ['why capitalised', (api, made) => made.session.unreachable(made.command, 'Timeout', 0), 'invalid_argument'],
    ],
    refreshCandidates: [['no arguments', (api, made) => made.session.refreshCandidates(), null]],
    refreshed: [
      ...replies.map(([label, reply]) => [`reply ${label}`, (api, made) => made.session.refreshed(reply, 0), 'invalid_argument']),
      ...times((made, now) => made.session.refreshed(SHARDS, now)),
      ['both bad: the reply first', (api, made) => made.session.refreshed(Symbol('r'), -1), 'invalid_argument'],
      ['RESP2 flat arrays', (api, made) => made.session.refreshed([['slots', [0, 16383], 'nodes', [
        ['id', MASTER, 'port', 7000, 'ip', '127.0.0.1', 'endpoint', '127.0.0.1', 'role', 'master']]]], 1), null],
    ],
    deadline: [...commands((made, c) => made.session.deadline(c)),
      ['a command sent', (api, made) => made.session.deadline(made.command), null]],
    replyDeadline: [...commands((made, c) => made.session.replyDeadline(c)),
      ['a command sent', (api, made) => made.session.replyDeadline(made.command), null]],
    onDeadline: [...commands((made, c) => made.session.onDeadline(c, 0)),
      ...times((made, now) => made.session.onDeadline(made.command, now)),
      ['both bad: command first', (api, made) => made.session.onDeadline(undefined, -1), 'invalid_argument']],
    refreshSent: [...times((made, now) => made.session.refreshSent('127.0.0.1:7000', now)),
      ['address number', (api, made) => made.session.refreshSent(7000, 0), 'invalid_argument'],
      ['address without a port', (api, made) => made.session.refreshSent('h', 0), 'invalid_argument'],
      ['both bad: the address first', (api, made) => made.session.refreshSent(1, -1), 'invalid_argument']],
    refreshReplyDeadline: [['no arguments', (api, made) => made.session.refreshReplyDeadline(), null]],
    nextDeadline: [['no arguments', (api, made) => made.session.nextDeadline(), null]],
    batchDeadline: [...times((made, now) => made.session.batchDeadline(now)),
      ['a time', (api, made) => made.session.batchDeadline(40), null]],
    timeout: times((made, now) => made.session.timeout(now)),
    ...Object.fromEntries(['pipelineQueued', 'pipelineTake', 'pipelineDone', 'pipelinePending'].map((name) => [name, [
      ['a connection', (api, made) => made.session[name]('127.0.0.1:7000', false), null],
      ['a READONLY connection', (api, made) => made.session[name]('127.0.0.1:7000', true), null],
      ['an address of no node (an idle queue)', (api, made) => made.session[name]('nowhere', false), null],
      ['address number', (api, made) => made.session[name](7000, false), 'invalid_argument'],
      ['readonly missing', (api, made) => made.session[name]('127.0.0.1:7000'), 'invalid_argument'],
      ['readonly number', (api, made) => made.session[name]('127.0.0.1:7000', 1), 'invalid_argument'],
      ['readonly text', (api, made) => made.session[name]('127.0.0.1:7000', 'false'), 'invalid_argument'],
      ['both bad: the address first', (api, made) => made.session[name](null, null), 'invalid_argument'],
    ]])),
    pipelineWithdrawn: [
      ['a count', (api, made) => made.session.pipelineWithdrawn('127.0.0.1:7000', false, 3), null],
      ['more than queued', (api, made) => made.session.pipelineWithdrawn('127.0.0.1:7000', false, 2 ** 32 - 1), null],
      ['count negative', (api, made) => made.session.pipelineWithdrawn('127.0.0.1:7000', false, -1), 'invalid_argument'],
      ['count fraction', (api, made) => made.session.pipelineWithdrawn('127.0.0.1:7000', false, 1.5), 'invalid_argument'],
      ['count too big', (api, made) => made.session.pipelineWithdrawn('127.0.0.1:7000', false, 2 ** 32), 'invalid_argument'],
      ['count bigint', (api, made) => made.session.pipelineWithdrawn('127.0.0.1:7000', false, 1n), 'invalid_argument'],
      ['count missing', (api, made) => made.session.pipelineWithdrawn('127.0.0.1:7000', false), 'invalid_argument'],
      ['readonly bad', (api, made) => made.session.pipelineWithdrawn('127.0.0.1:7000', 0, 1), 'invalid_argument'],
    ],
    addressOf: [['a node', (api, made) => made.session.addressOf('x'), null],
      ['not a string', (api, made) => made.session.addressOf(1), 'invalid_argument']],
    inFlight: [['no arguments', (api, made) => made.command.inFlight, null]],
    refreshFailed: times((made, now) => made.session.refreshFailed(now)),
    wantsRefresh: times((made, now) => made.session.wantsRefresh(now)),
    plan: [
      ['before the first table', (api) => new api.ClusterSession(['h:1']).plan(['k'], 'read'), 'invalid_argument'],
      ['keys text', (api, made) => made.session.plan('k', 'read'), 'invalid_argument'],
      ['not a key', (api, made) => made.session.plan([1.5], 'read'), 'invalid_key'],
      ['access', (api, made) => made.session.plan(['k'], 'READ'), 'invalid_argument'],
      ['no keys', (api, made) => made.session.plan([], 'read'), null],
    ],
    stats: [['no arguments', (api, made) => made.session.stats, null]],
    resetStats: [['no arguments', (api, made) => made.session.resetStats(), null]],
    config: [['no arguments', (api, made) => made.session.config, null]],
    router: [['no arguments', (api, made) => made.session.router, null]],
    slot: [['no arguments', (api, made) => made.command.slot, null]],
    redirects: [['no arguments', (api, made) => made.command.redirects, null]],
    error: [['no arguments', (api, made) => made.session.poll(made.command, 0).error(), null]],
  };
}

/** The members index.d.ts (`declarations`) declares for class `name`, getters once; `constructor` for a public one. */
function declaredMembers(declarations, name) {
  const body = new RegExp(`^export declare class ${name} [^{]*\\{\\n([\\s\\S]*?)^\\}`, 'm').exec(declarations)?.[1];
  assert.ok(body, `index.d.ts declares class ${name}`);
  return [...new Set([...body.matchAll(/^ {2}(?:get )?(\w+)\(/gm)].map((m) => m[1]))];
}

/**
 * The tests of the boundary of classes that hold state (the session's, the follower's),
 * which the hostile table leaves out: `cases` by call, each `[label, call, code]`, runs in
 * both packages (`both(call)` gives `[here, there]`, the two outcomes), with the same
 * outcome and the code (null: no throw); at least `minimum` cases; and `cases` has cases
 * for exactly the calls index.d.ts declares for `classes` (a constructor under the class's
 * name).
 */
export function boundaryTests({ cases, both, minimum, classes, declarations, what }) {
  test('every call\'s bad arguments throw their code, word for word as the other package', () => {
    const failures = [];
    let count = 0;
    for (const [name, list] of Object.entries(cases)) {
      for (const [label, call, code] of list) {
        count += 1;
        try {
          const [here, there] = both(call);
          assert.deepEqual(here, there, 'the two packages differ');
          assert.equal(here.code, code ?? undefined, here.message);
        } catch (err) {
          failures.push(`${name}: ${label}: ${err.message}`);
        }
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(count > minimum, `${count} cases`);
  });

  test(`every call of the ${what}'s classes in index.d.ts has cases here`, () => {
    const declared = classes.flatMap((name) => declaredMembers(declarations, name)
      .map((member) => (member === 'constructor' ? name : member)));
    assert.deepEqual([...new Set(declared)].sort(), Object.keys(cases).sort());
  });
}

/**
 * Tests that each class has the members index.d.ts declares, plus only the runtime's own:
 * `classes` are `[name, Class, own]`, `own` the `{ methods, statics }` of the runtime.
 */
export function membersTest(declarations, classes) {
  test('the classes have the declared members, plus only the runtime\'s own', () => {
    for (const [name, Class, own] of classes) {
      const members = declaredMembers(declarations, name).filter((member) => member !== 'constructor');
      assert.deepEqual(Object.getOwnPropertyNames(Class.prototype).sort(), ['constructor', ...members, ...own.methods].sort(), name);
      assert.deepEqual(Object.getOwnPropertyNames(Class).sort(), ['length', 'name', 'prototype', ...own.statics].sort(), name);
    }
  });
}

/**
 * Defines the session tests for one package: `api` is its module, `runtime` its column of
 * runtimes.mjs.
 */
export function sessionSuite(api, runtime) {
  const { Action, ClusterSession, Command, Router, ShardrouteError, parseAddress, sessionDefaults } = api;
  const other = otherPackage(runtime);
  const declarations = readFileSync(join(runtime.packageDir, 'index.d.ts'), 'utf8');

  /** A session of `pkg` with its table and a command begun; `foreign`, a command of the other package. */
  function made(pkg, foreignPkg) {
    const session = new pkg.ClusterSession(['127.0.0.1:7000']);
    session.refreshed(SHARDS, 0);
    const foreign = new foreignPkg.ClusterSession(['127.0.0.1:7000']).command(['k'], 'write', 0);
    return { session, command: session.command(['user:1'], 'write', 0), foreign };
  }

  /** A session with its table (`config` its settings) and its first command's action. */
  function ready(config) {
    const session = new ClusterSession(['127.0.0.1:7000'], config);
    session.refreshed(SHARDS, 0);
    return session;
  }

  describe('ClusterSession: the same boundary in both packages', () => {
    boundaryTests({
      cases: cases(),
      both: (call) => [outcome(api, () => call(api, made(api, other))), outcome(other, () => call(other, made(other, api)))],
      minimum: 150,
      classes: SESSION_CLASSES,
      declarations,
      what: 'session',
    });

    test('messages say what was wrong', () => {
      const session = ready();
      const command = session.command(['k'], 'write', 0);
      const message = (fn) => outcome(api, fn).message;
      assert.equal(message(() => session.poll({}, 0)), 'command must be a Command, got an object');
      assert.equal(message(() => session.poll(command, 1.5)),
        'nowMs must be milliseconds, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got the number 1.5');
      assert.equal(message(() => session.poll(command, -1n)),
        'nowMs must be milliseconds, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got a negative bigint');
      assert.equal(message(() => session.unreachable(command, 'gone', 0)),
        'why must be "refused", "reset" or "timeout", got "gone"');
      assert.equal(message(() => session.failed(command, 'x', ['a', 1], 0)), 'names[1] must be a string, got the number 1');
      assert.equal(message(() => session.command(['k'], 'append', 0)), 'access: expected "read" or "write", got "append"');
      assert.equal(message(() => new ClusterSession('h:1')), 'seeds must be an array, got a string');
      assert.equal(message(() => new ClusterSession(['h:1'], { max_redirects: NaN })), 'max_redirects: NaN is not a JSON number');
      assert.match(message(() => session.refreshed([], 0)), /^CLUSTER SHARDS reply refused, the table kept: /);
    });

    test('a proxy of a command: refused by the addon, passed through by the WASM build (runtimes.mjs)', () => {
      const session = ready();
      const command = session.command(['k'], 'write', 0);
      const got = outcome(api, () => session.poll(new Proxy(command, {}), 0));
      assert.deepEqual(got, runtime.proxiesPass ? { ok: true }
        : { code: 'invalid_argument', message: 'command must be a Command, got an object' });
    });

    if (runtime.free) {
      test('a freed command or session is refused, never a trap', () => {
        const session = ready();
        const command = session.command(['k'], 'write', 0);
        command.free();
        assert.equal(outcome(api, () => session.poll(command, 0)).code, 'invalid_argument');
        session.free();
        assert.throws(() => session.poll(session.command(['k'], 'write', 0), 0));
      });
    }
  });

  describe('ClusterSession: what its calls return', () => {
    test('actions are the package\'s Action: every field an own property, null unless it applies', () => {
      const session = ready({ max_redirects: 0 });
      const command = session.command(['user:1'], 'write', 1);
      assert.ok(command instanceof Command);
      assert.equal(command.slot, 10778);
      assert.equal(command.redirects, 0);
      const send = session.poll(command, 1);
      assert.ok(send instanceof Action);
      assert.deepEqual({ ...send }, { kind: 'send', address: '127.0.0.1:7000', host: '127.0.0.1', port: 7000, asking: false,
        readonly: false, untilMs: null, delayMs: null, code: null, message: null });
      assert.equal(send.error(), null);
      const wait = session.failed(command, 'TRYAGAIN Multiple keys request during rehashing of slot', ['ReplyError'], 2);
      assert.deepEqual({ ...wait }, { kind: 'wait', address: null, host: null, port: null, asking: null, readonly: null,
        untilMs: 22n, delayMs: 20, code: null, message: null });
      assert.equal(session.poll(command, 21n).kind, 'wait');
      assert.equal(session.poll(command, 22n).kind, 'send');
      const fail = session.failed(command, 'MOVED 10778 127.0.0.1:7001', [], 23);
      assert.equal(fail.kind, 'fail');
      assert.equal(fail.code, 'too_many_redirects');
      assert.equal(command.redirects, 1);
      const error = fail.error();
      assert.ok(error instanceof ShardrouteError && error instanceof Error);
      assert.deepEqual([error.code, error.message], [fail.code, fail.message]);
      assert.notEqual(fail.error(), error, 'a new error each time');
      const finished = session.poll(command, 24);
      assert.deepEqual([finished.kind, finished.code], ['fail', 'invalid_argument']);
      assert.equal(session.succeeded(session.command(['k'], 'read', 25), 25).kind, 'done');
    });

    // The steady path shardroute/redis takes (the addon's only, not public API): its one
    // call gives the attempt's deadline, which must be the general path's to the
    // millisecond, and the Command made lazily at that deadline must go on as the general
    // path's does.
    const fastPath = Symbol.for('shardroute.ClusterSession.fastPath');
    test('the fast path\'s deadline is deadline(command) of command + poll, and goes on the same', {
      skip: new ClusterSession(['127.0.0.1:7000'])[fastPath] === undefined && 'no fast path in this package',
    }, () => {
      const configs = [{}, { stall_ms: 0 }, { command_timeout_ms: 0 }, { stall_ms: 0, command_timeout_ms: 0 },
        { stall_ms: 900, command_timeout_ms: 300 }, { stall_ms: 40, command_timeout_ms: 100, read_from_replicas: true }];
      let sent = 0;
      let steps = 0;
      for (const config of configs) {
        // Twins: the same table and history; one takes the fast path, one the general path.
        const fastSession = ready(config);
        const slowSession = ready(config);
        const fast = fastSession[fastPath];
        for (const [key, access, sentMs] of [['user:1', 'write', 5], ['k', 'read', 10_000], ['k', 'read', 1_000_000]]) {
          const target = fast.send([key], access, sentMs);
          const slow = slowSession.command([key], access, sentMs);
          const send = slowSession.poll(slow, sentMs);
          if (send.kind !== 'send') {
            assert.equal(target, null, 'the fast path declines what the general path does not send');
            continue;
          }
          assert.deepEqual(target, { address: send.address, readonly: send.readonly }, JSON.stringify(config));
          sent += 1;
          const expected = slowSession.deadline(slow);
          assert.equal(fast.deadline === null ? null : BigInt(fast.deadline), expected, JSON.stringify(config));
          // The Command made at the deadline: the same deadlines, the same next actions.
          const made = fast.command([key], access, target.address, sentMs);
          assert.equal(fastSession.deadline(made), expected);
          assert.equal(fastSession.replyDeadline(made), slowSession.replyDeadline(slow));
          if (expected === null) continue;
          for (let step = 0; step < 4 && fastSession.deadline(made) !== null; step += 1) {
            const at = fastSession.deadline(made);
            const got = fastSession.onDeadline(made, at);
            const want = slowSession.onDeadline(slow, at);
            assert.deepEqual({ ...got }, { ...want }, `${JSON.stringify(config)} step ${step}`);
            steps += 1;
            if (got.kind === 'refresh') {
              fastSession.refreshed(SHARDS, at);
              slowSession.refreshed(SHARDS, at);
              break;
            }
            assert.equal(fastSession.deadline(made), slowSession.deadline(slow));
          }
        }
        assert.deepEqual(fastSession.stats, slowSession.stats);
      }
      assert.ok(sent >= configs.length && steps >= configs.length, `${sent} sends, ${steps} deadlines compared`);
    });

    test('a bigint time is the number time; times up to 2^64-1 never overflow', () => {
      const steps = (time) => {
        const session = ready();
        const command = session.command(['k'], 'write', time(5));
        return [session.poll(command, time(5)), session.unreachable(command, 'timeout', time(6)),
          session.poll(command, time(7)), session.wantsRefresh(time(8))];
      };
      assert.deepEqual(steps(BigInt), steps(Number));
      const session = ready();
      const command = session.command(['k'], 'write', 0);
      const wait = session.unreachable(command, 'reset', 2n ** 64n - 2n);
      assert.deepEqual([wait.kind, wait.untilMs, wait.delayMs], ['wait', 2n ** 64n - 1n, 1]);
    });

    test('stats: u64 counters are bigints, the longest chain a number; resetStats zeroes them', () => {
      const session = ready();
      const command = session.command(['user:1'], 'write', 0);
      session.poll(command, 0);
      session.failed(command, 'MOVED 10778 127.0.0.1:7002', ['ReplyError'], 1);
      session.failed(command, 'connect ECONNREFUSED 127.0.0.1:7002', ['ECONNREFUSED', 'Error'], 2);
      const stats = session.stats;
      assert.deepEqual(stats, { commands: 1n, moved: 1n, ask: 0n, refreshes: 1n, refreshFailures: 0n, refusedReplies: 0n,
        retries: 1n, failed: 0n, stalls: 0n, stallResends: 0n, longestRedirectChain: 1, errors: { refused: 1n } });
      assert.notEqual(session.stats, stats, 'a new object each time');
      session.resetStats();
      assert.deepEqual(session.stats, { commands: 0n, moved: 0n, ask: 0n, refreshes: 0n, refreshFailures: 0n,
        refusedReplies: 0n, retries: 0n, failed: 0n, stalls: 0n, stallResends: 0n, longestRedirectChain: 0, errors: {} });
    });

    test('sessionDefaults is the core\'s; config is it with the fields given, and makes the same session again', () => {
      const defaults = sessionDefaults();
      assert.deepEqual(defaults, { max_redirects: 5, refresh_interval_ms: 200, retry_budget_ms: 20000, backoff_first_ms: 20,
        backoff_max_ms: 500, connect_timeout_ms: 1000, command_timeout_ms: 5000, stall_ms: 500, wait_timeout_ms: 500, read_from_replicas: false,
        auto_pipeline: true, pipeline_max_commands: 256, pipeline_max_writes: 1 });
      defaults.max_redirects = 9;
      assert.equal(sessionDefaults().max_redirects, 5, 'a new object each time');
      assert.deepEqual(new ClusterSession(['h:1']).config, sessionDefaults());
      const session = new ClusterSession(['h:1'], { max_redirects: 2, read_from_replicas: true });
      assert.deepEqual(session.config, { ...sessionDefaults(), max_redirects: 2, read_from_replicas: true });
      assert.deepEqual(new ClusterSession(['h:1'], session.config).config, session.config);
    });

    test('auto-pipelining: an idle connection writes at once, one flush a turn, two writes in flight, the rest at pipelineDone; numbers and booleans', () => {
      const session = new ClusterSession(['h:1'], { pipeline_max_commands: 2, pipeline_max_writes: 2 });
      // 2: the idle connection's first command, written at once; 1: a flush; 0: it waits.
      assert.deepEqual([1, 2, 3, 4].map(() => session.pipelineQueued('h:1', false)), [2, 1, 0, 0]);
      assert.equal(session.pipelineQueued('h:1', true), 2, 'a READONLY connection is another queue');
      assert.deepEqual([session.pipelineTake('h:1', false), session.pipelineTake('h:1', false)], [2, 0]);
      assert.deepEqual(session.pipelinePending('h:1', false), [1, 2]);
      assert.equal(session.pipelineWithdrawn('h:1', false, 1), undefined);
      assert.equal(session.pipelineDone('h:1', false), 0);
      assert.deepEqual(session.pipelinePending('h:1', false), [0, 1]);
      assert.equal(session.pipelineDone('h:1', false), 0);
      assert.deepEqual(session.pipelinePending('h:1', false), [0, 0]);
      assert.equal(session.pipelineQueued('h:1', false), 2, 'idle again');
      const off = new ClusterSession(['h:1'], { auto_pipeline: false });
      assert.deepEqual([off.pipelineQueued('h:1', false), off.pipelineQueued('h:1', false)], [1, 1]);
      for (const config of [{ pipeline_max_commands: 0 }, { pipeline_max_writes: 1025 }, { auto_pipeline: 'yes' }]) {
        assert.throws(() => new ClusterSession(['h:1'], config), (err) => err instanceof ShardrouteError && err.code === 'invalid_argument');
      }
    });

    test('router is null before the first table, then a Router of the package', () => {
      const session = new ClusterSession(['127.0.0.1:7000']);
      assert.equal(session.router, null);
      assert.equal(session.poll(session.command(['k'], 'read', 0), 0).kind, 'refresh');
      assert.deepEqual(session.refreshCandidates(), ['127.0.0.1:7000']);
      session.refreshed(SHARDS, 1);
      const router = session.router;
      assert.ok(router instanceof Router);
      assert.equal(typeof router.epoch, 'bigint');
      assert.equal(router.node('user:1'), MASTER);
      assert.notEqual(session.router, router, 'a new Router each time');
    });

    test('plan groups keys by node and slot, as plain arrays of numbers', () => {
      const session = ready({ read_from_replicas: true });
      const plan = session.plan(['a', 'b', '{a}x', 7n], 'read');
      assert.deepEqual(plan, [{ address: '127.0.0.1:7001', readonly: true, slots: [[1716, [3]], [3300, [1]], [15495, [0, 2]]] }]);
      assert.deepEqual(session.plan(['a'], 'write')[0].readonly, false);
    });

    test('parseAddress reads host:port as the session does', () => {
      assert.deepEqual(parseAddress('10.0.0.1:6379'), { host: '10.0.0.1', port: 6379 });
      assert.deepEqual(parseAddress('[::1]:7000'), { host: '::1', port: 7000 });
      assert.deepEqual(parseAddress('::1:7000'), { host: '::1', port: 7000 });
      assert.deepEqual(parseAddress(':7000'), { host: '', port: 7000 });
      for (const bad of ['h', 'h:0', 'h:65536', 'a b:1', 7000]) assert.equal(outcome(api, () => parseAddress(bad)).code, 'invalid_argument');
    });

    // The glue gives `__wrap` only to the classes its calls return: a ClusterSession is
    // only constructed. Action is JavaScript in both packages (shared.mjs).
    const extras = runtime.classExtras;
    const constructed = { ...extras, statics: extras.statics.filter((name) => name !== '__wrap') };
    membersTest(declarations, [['ClusterSession', ClusterSession, constructed], ['Command', Command, extras],
      ['Action', Action, { methods: [], statics: [] }]]);
  });
}
