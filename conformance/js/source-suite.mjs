// The source sessions of both JavaScript packages (`SourceSession`: etcd's JSON gateway,
// an HTTP endpoint polled with If-None-Match, ZooKeeper over TCP), as a user sees it: the
// types its calls return, and every call's bad arguments, each with the code it must
// throw, word for word the same in the addon and the WASM build. What the session decides
// is the conformance scenarios' (conformance/vectors/session_source.json, run by
// runner.mjs); this checks the boundary. Its calls are covered here rather than in the
// hostile table (hostile-suite.mjs), whose calls hold no state between them; a test checks
// that every call index.d.ts declares for `SourceSession` has cases here.
//
// Each package's test/source.test.mjs calls `sourceSuite(api, runtime)`; the other package
// is loaded from its directory, so both must be built.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { SOURCE_CLASSES, otherPackage, outcome } from './hostile-suite.mjs';
import { NOT_TIMES, boundaryTests, membersTest } from './session-suite.mjs';

/** A topology document of `epoch` (an object, as a user's JSON.parse gives it). */
const doc = (epoch) => ({ format: 'shardroute/1', epoch, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'jump' } });
/** An HTTP follower's config, and an etcd calls-only one. */
const HTTP = { source: 'http', url: 'http://127.0.0.1:1/topology' };
const ETCD = { source: 'etcd', members: ['http://127.0.0.1:2379'] };
/** The bytes of `text`. */
const bytes = (text) => new TextEncoder().encode(text);

/** An object that contains itself. */
const cyclic = () => {
  const object = { source: 'http' };
  object.self = object;
  return object;
};
/** A Uint8Array whose buffer was transferred away. */
const detached = () => {
  const view = Uint8Array.of(1, 2);
  structuredClone(view.buffer, { transfer: [view.buffer] });
  return view;
};

/** Values that are not request ids: each is invalid_argument. */
const NOT_IDS = NOT_TIMES;
/** Values that are not HTTP statuses. */
const NOT_STATUSES = [['negative', -1], ['fraction', 200.5], ['too big', 65536], ['nan', NaN], ['text', '200'],
  ['bigint', 200n], ['null', null], ['undefined', undefined], ['object', {}]];
/** Values that are not JSON objects' data (headers, op, config): each is invalid_argument. */
const NOT_DATA = [['nan', { a: NaN }], ['a function', { a: () => 1 }], ['a cycle', cyclic()], ['a symbol', Symbol('d')]];
/** Values that are not bytes. */
const NOT_BYTES = [['text', 'x'], ['an array', [1]], ['an ArrayBuffer', new ArrayBuffer(1)], ['a Uint16Array', Uint16Array.of(1)],
  ['null', null], ['undefined', undefined], ['detached', detached()]];
/** Values that are not text (code, message). */
const NOT_TEXT = [['a number', 7], ['null', null], ['undefined', undefined], ['bytes', bytes('x')]];

/**
 * Bad arguments for every call of `SourceSession`, by call: `[label, call, code]`,
 * `call(api, made)` with `made` an HTTP session that made its first request (id 1), fresh
 * for each case; `code` null for a call that must succeed.
 */
function cases() {
  const times = (call) => NOT_TIMES.map(([label, now]) => [`nowMs ${label}`, (api, made) => call(made, now), 'invalid_argument']);
  const ids = (call) => NOT_IDS.map(([label, id]) => [`id ${label}`, (api, made) => call(made, id), 'invalid_argument']);
  return {
    SourceSession: [
      ['http', (api) => new api.SourceSession(HTTP), null],
      ['etcd', (api) => new api.SourceSession(ETCD), null],
      ['undefined', (api) => new api.SourceSession(), 'invalid_argument'],
      ['null', (api) => new api.SourceSession(null), 'invalid_argument'],
      ['text', (api) => new api.SourceSession(JSON.stringify(HTTP)), 'invalid_argument'],
      ['unknown source', (api) => new api.SourceSession({ source: 'consul' }), 'invalid_argument'],
      ['zookeeper without members', (api) => new api.SourceSession({ source: 'zookeeper' }), 'invalid_argument'],
      ['unknown field', (api) => new api.SourceSession({ ...HTTP, interval: 5 }), 'invalid_argument'],
      ...NOT_DATA.map(([label, value]) => [label, (api) => new api.SourceSession({ ...HTTP, extra: value }), 'invalid_argument']),
    ],
    start: [['a time', (api, made) => made.start(5), null], ['a bigint time', (api, made) => made.start(5n), null],
      ...times((made, now) => made.start(now))],
    call: [
      ['refresh', (api, made) => made.call({ op: 'refresh' }, 0), null],
      ['an unknown op', (api, made) => made.call({ op: 'get', key: 'k' }, 0), 'invalid_argument'],
      ['no op', (api, made) => made.call({}, 0), 'invalid_argument'],
      ['text', (api, made) => made.call('refresh', 0), 'invalid_argument'],
      ...NOT_DATA.map(([label, value]) => [`op ${label}`, (api, made) => made.call({ op: 'refresh', x: value }, 0), 'invalid_argument']),
      ...times((made, now) => made.call({ op: 'refresh' }, now)),
    ],
    response: [
      ['a 200', (api, made) => made.response(1, 1, 200, { 'content-type': 'application/json' }, bytes(JSON.stringify(doc(3)))), null],
      ['an unknown id', (api, made) => made.response(99, 1, 200, {}, bytes('')), null],
      ['a Buffer body', (api, made) => made.response(1, 1, 304, {}, Buffer.from('')), null],
      ...ids((made, id) => made.response(id, 1, 200, {}, bytes(''))),
      ...times((made, now) => made.response(1, now, 200, {}, bytes(''))),
      ...NOT_STATUSES.map(([label, status]) => [`status ${label}`, (api, made) => made.response(1, 1, status, {}, bytes('')),
        'invalid_argument']),
      ...NOT_DATA.map(([label, value]) => [`headers ${label}`, (api, made) => made.response(1, 1, 200, { etag: value }, bytes('')),
        'invalid_argument']),
      ...NOT_BYTES.map(([label, value]) => [`body ${label}`, (api, made) => made.response(1, 1, 200, {}, value), 'invalid_argument']),
    ],
    opened: [
      ['a request id', (api, made) => made.opened(1, 1), null],
      ['an unknown id', (api, made) => made.opened(99, 1), null],
      ['a bigint id', (api, made) => made.opened(99n, 1n), null],
      ...ids((made, id) => made.opened(id, 1)),
      ...times((made, now) => made.opened(1, now)),
    ],
    chunk: [
      ['a piece', (api, made) => made.chunk(1, 1, bytes('{}\n')), null],
      ...ids((made, id) => made.chunk(id, 1, bytes(''))),
      ...times((made, now) => made.chunk(1, now, bytes(''))),
      ...NOT_BYTES.map(([label, value]) => [`data ${label}`, (api, made) => made.chunk(1, 1, value), 'invalid_argument']),
    ],
    failed: [
      ['unreachable', (api, made) => made.failed(1, 1, 'unreachable', 'refused'), null],
      ...ids((made, id) => made.failed(id, 1, 'unreachable', 'x')),
      ...times((made, now) => made.failed(1, now, 'unreachable', 'x')),
      ...NOT_TEXT.map(([label, value]) => [`code ${label}`, (api, made) => made.failed(1, 1, value, 'x'), 'invalid_argument']),
      ...NOT_TEXT.map(([label, value]) => [`message ${label}`, (api, made) => made.failed(1, 1, 'closed', value), 'invalid_argument']),
    ],
    timer: [['a time', (api, made) => made.timer(6000), null], ...times((made, now) => made.timer(now))],
    close: [['a time', (api, made) => made.close(1), null], ...times((made, now) => made.close(now))],
    deadline: [['no arguments', (api, made) => made.deadline, null]],
    state: [['no arguments', (api, made) => made.state, null]],
    stats: [['no arguments', (api, made) => made.stats, null]],
    config: [['no arguments', (api, made) => made.config, null]],
    router: [['no arguments', (api, made) => made.router, null]],
  };
}

/**
 * Defines the source session tests for one package: `api` is its module, `runtime` its
 * column of runtimes.mjs.
 */
export function sourceSuite(api, runtime, other = otherPackage(runtime)) {
  const { Router, ShardrouteError, SourceSession } = api;
  const declarations = readFileSync(join(runtime.packageDir, 'index.d.ts'), 'utf8');

  /** An HTTP session of `pkg` that made its first request (id 1) at time 0. */
  function made(pkg) {
    const session = new pkg.SourceSession(HTTP);
    assert.equal(session.start(0)[0].request.id, 1);
    return session;
  }

  describe('SourceSession: the same boundary in both packages', () => {
    boundaryTests({
      cases: cases(),
      both: (call) => [outcome(api, () => call(api, made(api))), outcome(other, () => call(other, made(other)))],
      minimum: 120,
      classes: SOURCE_CLASSES,
      declarations,
      what: 'source session',
    });

    test('messages say what was wrong', () => {
      const session = made(api);
      const message = (fn) => outcome(api, fn).message;
      assert.equal(message(() => session.response('1', 0, 200, {}, bytes(''))),
        'id must be a request id, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got a string');
      assert.equal(message(() => session.response(1, 0, 70000, {}, bytes(''))),
        'status must be an HTTP status, an integer in 0..=65535, got the number 70000');
      assert.equal(message(() => session.response(1, 0, 200, {}, 'x')), 'body must be a Uint8Array, got a string');
      assert.equal(message(() => session.chunk(1, -1, bytes(''))),
        'nowMs must be milliseconds, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got the number -1');
      // opened reads its id and time as chunk does: the same words.
      for (const [id, now] of [['1', 0], [-1, 0], [1.5, 0], [2n ** 64n, 0], [1, -1], [1, NaN], [1, '0'], [1, 2 ** 53]]) {
        assert.equal(message(() => session.opened(id, now)), message(() => session.chunk(id, now, bytes(''))), `opened(${id}, ${now})`);
      }
      assert.equal(message(() => session.opened('1', 0)),
        'id must be a request id, a safe non-negative integer or a bigint in 0n..=18446744073709551615n, got a string');
      assert.equal(message(() => session.failed(1, 0, 7, 'x')), 'code must be a string, got the number 7');
      assert.equal(message(() => session.response(1, 0, 200, { etag: NaN }, bytes(''))), 'etag: NaN is not a JSON number');
      assert.equal(message(() => new SourceSession({ source: 'consul' })), 'config.source: expected "etcd", "http" or "zookeeper"');
    });

    if (runtime.free) {
      test('a freed session is refused, never a trap', () => {
        const session = made(api);
        session.free();
        assert.throws(() => session.timer(0));
      });
    }
  });

  describe('SourceSession: what its calls return', () => {
    test('actions are plain JSON data: ids and times numbers, revisions and epochs strings', () => {
      const session = new SourceSession(HTTP);
      const [first] = session.start(0);
      assert.deepEqual(Object.keys(first), ['request']);
      assert.equal(first.request.id, 1);
      assert.equal(first.request.method, 'GET');
      assert.equal(typeof first.request.deadline, 'number');
      assert.equal(session.deadline, first.request.deadline);
      assert.equal(session.router, null);
      const actions = session.response(1, 5, 200, { 'Content-Type': 'application/json', ETag: '"v1"' }, bytes(JSON.stringify(doc(3))));
      assert.deepEqual(actions[0], { offered: { result: { installed: { epoch: '3' } }, changed: true, revision: '1' } });
      assert.ok(session.router instanceof Router);
      assert.equal(session.router.epoch, 3n);
      assert.equal(session.state.etag, '"v1"');
      assert.equal(session.state.epoch, '3');
      assert.deepEqual(session.stats, session.state.stats);
      assert.equal(session.config.url, HTTP.url);
      assert.equal(typeof session.config.interval_ms, 'number');
      assert.ok(Array.isArray(session.close(6)));
      assert.equal(session.deadline, null);
    });

    test('a kind that does not connect ignores opened', () => {
      const session = made(api);
      const { deadline } = session;
      assert.deepEqual(session.opened(1, 1), []);
      assert.deepEqual(session.opened(99, 1), []);
      assert.equal(session.deadline, deadline);
    });

    test('a ZooKeeper session connects, and sends once opened: ids and times numbers, bytes base64', () => {
      const session = new SourceSession({ source: 'zookeeper', members: ['127.0.0.1:2181'], path: '/app/topology' });
      const [first, ...more] = session.start(0);
      assert.deepEqual(more, []);
      assert.deepEqual(Object.keys(first), ['connect']);
      const { id, host, port, deadline } = first.connect;
      assert.deepEqual([id, host, port], [1, '127.0.0.1', 2181]);
      assert.equal(typeof deadline, 'number');
      assert.equal(typeof session.deadline, 'number');
      const sends = session.opened(1, 1).filter((action) => 'send' in action).map((action) => action.send);
      assert.ok(sends.length > 0, 'the handshake is sent once the connection is open');
      assert.equal(sends[0].id, 1);
      assert.equal(typeof sends[0].data_b64, 'string');
      const frame = Uint8Array.from(atob(sends[0].data_b64), (c) => c.charCodeAt(0));
      // A jute frame: a 4-byte big-endian length, then that many bytes (the ConnectRequest).
      assert.ok(frame.length > 4);
      assert.equal(new DataView(frame.buffer).getUint32(0), frame.length - 4);
      assert.deepEqual(session.opened(7, 2), [], 'a connection the session never asked for');
    });

    test('a call gives its number and its actions; a refused op throws', () => {
      const session = new SourceSession(ETCD);
      assert.deepEqual(session.start(0), [], 'a calls-only session follows nothing');
      const { call, actions } = session.call({ op: 'get', key: 'k' }, 0);
      assert.equal(typeof call, 'number');
      assert.equal(actions[0].request.url, 'http://127.0.0.1:2379/v3/kv/range');
      assert.throws(() => session.call({ op: 'watch', key: 'k' }, 0), (err) => err instanceof ShardrouteError && err.code === 'invalid_argument');
    });

    // The glue gives `__wrap` only to the classes its calls return: a SourceSession is
    // only constructed.
    const extras = runtime.classExtras;
    membersTest(declarations, [['SourceSession', SourceSession, { ...extras, statics: extras.statics.filter((name) => name !== '__wrap') }]]);
  });
}
