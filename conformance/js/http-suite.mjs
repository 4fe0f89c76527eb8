// The HTTP follower of both JavaScript packages (`shardroute/http`, `shardroute-wasm/http`:
// bindings-js/http.mjs) against a real HTTP server on 127.0.0.1 (http-server.mjs, the twin
// of the Python tests' TopologyHttpServer), the cases of bindings-py/tests/test_http.py and
// a few of its own: documents installed as the server changes them (a long poll at once,
// a server without long polls polled), refusals counted with the router kept, binary
// dictionaries, a body that is not UTF-8 never offered, a server that goes away and comes
// back, `close` aborting the request in flight. No mocks, no external server.
//
// Each package's test/http.test.mjs calls `httpSuite(api, http, packageDir)`: `api` the
// package's main entry, `http` its `./http` entry, both imported by the package's name.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';

import { TopologyHttpServer } from './http-server.mjs';
import { repoRoot } from './vectors.mjs';

/** A topology document of `epoch`, as JSON text. */
const doc = (epoch, nodes = 3) => JSON.stringify({
  format: 'shardroute/1', epoch, nodes: Array.from({ length: nodes }, (_, i) => ({ id: `n${i}` })), strategy: { type: 'jump' },
});

/** A JSON document cut by two bytes that are not UTF-8. */
const NOT_UTF8 = Uint8Array.of(...new TextEncoder().encode('{"format": "shardroute/1", "epoch": 7'), 0xff, 0xfe, 0x7d);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `predicate()` holds, polling every 20 ms: false after `timeoutMs`. */
async function eventually(predicate, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** Defines the HTTP follower tests for the package in `packageDir` (`api`: its main entry, `http`: its `./http` entry). */
export function httpSuite(api, http, packageDir) {
  const { HttpError, HttpFollower } = http;

  describe('the ./http entry', () => {
    test('exports HttpFollower and HttpError, as http.d.ts (bindings-js/http.d.ts) declares', () => {
      const declarations = readFileSync(join(packageDir, 'http.d.ts'), 'utf8');
      assert.equal(declarations, readFileSync(join(repoRoot, 'bindings-js', 'http.d.ts'), 'utf8'), 'run build.sh');
      const declared = [...declarations.matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1]);
      assert.deepEqual(declared.sort(), Object.keys(http).filter((name) => name !== 'default').sort());
      const body = /^export declare class HttpFollower \{\n([\s\S]*?)^\}/m.exec(declarations)[1];
      const members = [...body.matchAll(/^ {2}(?:get )?(\w+)\(/gm)].map((m) => m[1]).filter((name) => name !== 'constructor');
      const statics = [...body.matchAll(/^ {2}static (\w+)\(/gm)].map((m) => m[1]);
      assert.deepEqual(Object.getOwnPropertyNames(HttpFollower.prototype).sort(), ['constructor', ...members].sort());
      assert.deepEqual(Object.getOwnPropertyNames(HttpFollower).filter((name) => typeof HttpFollower[name] === 'function').sort(),
        statics.sort());
    });

    test('HttpError is a real Error subclass with code, status and cause', () => {
      const cause = new Error('underneath');
      const err = new HttpError('http', 'GET x: HTTP 503', { status: 503, cause });
      assert.ok(err instanceof Error);
      assert.deepEqual([err.name, err.code, err.status, err.message, err.cause], ['HttpError', 'http', 503, 'GET x: HTTP 503', cause]);
      assert.match(String(err), /^HttpError: GET x/);
      assert.equal(new HttpError('unreachable', 'gone').status, null);
    });

    test('options out of range are refused before any request', async () => {
      for (const options of [{ intervalMs: -1 }, { waitS: 1.5 }, { waitS: NaN }, { timeoutMs: Infinity }, { intervalMs: '5' }]) {
        await assert.rejects(HttpFollower.start('http://127.0.0.1:9/', options), RangeError, JSON.stringify(options));
      }
      await assert.rejects(HttpFollower.start('http://127.0.0.1:9/', { fetch: 'no' }), TypeError);
      await assert.rejects(HttpFollower.start('http://127.0.0.1:9/', { config: { reconnect_first_ms: 0 } }),
        (err) => err instanceof api.ShardrouteError && err.code === 'invalid_argument');
    });
  });

  describe('HttpFollower against a real HTTP server on 127.0.0.1', () => {
    let server;
    const followers = [];
    /** HttpFollower.start, closed after the test whatever happens. */
    const follow = async (options, url = server.url) => {
      const follower = await HttpFollower.start(url, options);
      followers.push(follower);
      return follower;
    };

    beforeEach(async () => {
      server = await TopologyHttpServer.open({ body: doc(1) });
    });
    afterEach(async () => {
      for (const follower of followers.splice(0)) follower.close();
      await server.stop();
    });

    test('a long poll brings each change at once', async () => {
      // intervalMs 30 s: only the held requests can bring the changes this soon.
      const follower = await follow({ intervalMs: 30_000, waitS: 10 });
      assert.equal(follower.router.epoch, 1n);
      const first = follower.router;
      assert.equal(follower.router, first, 'one Router until the next is installed: reading it is a field read');
      assert.equal(follower.etag, server.etag());
      assert.ok(await eventually(() => server.held === 1), 'the first long poll is held by the server');
      for (const epoch of [2, 3]) {
        server.set(doc(epoch));
        const started = performance.now();
        assert.equal(await follower.waitForEpoch(epoch, 5000), true, `epoch ${epoch}`);
        assert.ok(performance.now() - started < 2000);
        await sleep(200);
      }
      assert.equal(follower.stats.installed, 3n);
      assert.notEqual(follower.router, first, 'a new Router for each installed document');
    });

    test('the long poll loop follows without help, and does not busy-loop', async () => {
      const follower = await follow({ intervalMs: 50, waitS: 10 });
      assert.ok(await eventually(() => server.held === 1), 'a long poll is held by the server now');
      const requests = server.requests;
      for (const epoch of [2, 3, 4]) {
        server.set(doc(epoch));
        assert.equal(await follower.waitForEpoch(epoch, 5000), true, `epoch ${epoch}`);
      }
      // Held requests, not a busy loop: a few requests per change.
      assert.ok(server.requests - requests <= 3 * 3, `${server.requests - requests} requests`);
      assert.deepEqual(follower.stats.refused, {});
    });

    test('a server without long polls is polled every intervalMs', async () => {
      server.longPoll = false;
      const follower = await follow({ intervalMs: 100, waitS: 10 });
      server.set(doc(2));
      assert.equal(await follower.waitForEpoch(2, 5000), true);
      await sleep(500);
      const { notModified, installed, requests } = follower.stats;
      assert.ok(notModified >= 2n, `${notModified} not modified`);
      assert.equal(installed, 2n);
      assert.ok(requests <= 12n, `${requests} requests in ~0.6 s at one per 100 ms`);
    });

    test('a server that ignores If-None-Match is polled, not asked in a loop', async () => {
      server.longPoll = false;
      server.conditional = false;
      const follower = await follow({ intervalMs: 100, waitS: 10 });
      await sleep(500);
      const { unchanged, requests } = follower.stats;
      assert.ok(unchanged >= 2n, `${unchanged} unchanged`);
      assert.ok(requests <= 10n, `${requests} requests in ~0.5 s at one per 100 ms`);
    });

    test('bad bodies are refused and the router kept', async () => {
      const refused = [];
      server.longPoll = false; // the loop's first request answered at once, the next in 30 s
      const follower = await follow({ intervalMs: 30_000, onRefused: (_, offered) => refused.push(offered.code) });
      await sleep(300);
      for (const [body, code] of [['{not json', 'invalid_topology'], [doc(0), 'stale_epoch']]) {
        server.set(body);
        const offered = await follower.refresh();
        assert.deepEqual([offered.kind, offered.code], ['refused', code]);
        assert.equal(follower.router.epoch, 1n);
      }
      assert.deepEqual(refused, ['invalid_topology', 'stale_epoch']);
      assert.deepEqual(follower.stats.refused, { invalid_topology: 1n, stale_epoch: 1n });
      server.set(doc(1));
      assert.equal((await follower.refresh()).kind, 'unchanged');
      assert.equal(await follower.refresh(), null, 'the same tag again: 304');
    });

    test('a binary dictionary is offered as one, and a damaged one refused', async () => {
      const dictionary = {
        format: 'shardroute/1', epoch: 2, nodes: [{ id: 'a' }, { id: 'b' }],
        strategy: { type: 'vbucket', vbuckets: 4, map: [['a'], ['b'], ['a'], ['b']] },
      };
      const follower = await follow({ intervalMs: 50, waitS: 10 });
      server.set(api.encodeDictionary(dictionary), 'application/octet-stream');
      assert.equal(await follower.waitForEpoch(2, 5000), true);
      server.set(Uint8Array.of(0, ...new TextEncoder().encode('garbage')), 'application/octet-stream');
      assert.ok(await eventually(() => follower.stats.refused.invalid_topology === 1n), 'the garbage is refused');
      assert.deepEqual(follower.stats.refused, { invalid_topology: 1n });
      assert.equal(follower.router.epoch, 2n);
    });

    test('a JSON body that is not UTF-8 is refused by the core (invalid_topology, counted), the router kept', async () => {
      const errors = [];
      const refused = [];
      const follower = await follow({ intervalMs: 50, waitS: 10, config: { reconnect_first_ms: 20 },
        onError: (err) => errors.push(err), onRefused: (_, offered) => refused.push(offered.code) });
      server.set(NOT_UTF8);
      assert.ok(await eventually(() => refused.length >= 1), 'onRefused heard of it');
      assert.deepEqual(refused, ['invalid_topology']);
      assert.deepEqual(follower.stats.refused, { invalid_topology: 1n });
      assert.deepEqual(errors, [], 'a bad body is a refusal, not a lost source');
      assert.equal(follower.router.epoch, 1n);
      server.set(doc(2));
      assert.equal(await follower.waitForEpoch(2, 5000), true);
    });

    test('refresh of a JSON body that is not UTF-8 answers the refusal, and keeps the router', async () => {
      server.longPoll = false; // the loop's first request answered at once, the next in 30 s
      const follower = await follow({ intervalMs: 30_000 });
      await sleep(300);
      server.set(NOT_UTF8);
      const offered = await follower.refresh();
      assert.equal(offered.kind, 'refused');
      assert.equal(offered.code, 'invalid_topology');
      assert.equal(follower.stats.offered, 2n);
      assert.equal(follower.router.epoch, 1n);
    });

    test('an error status is an HttpError with code http and the status', async () => {
      const errors = [];
      const follower = await follow({ intervalMs: 50, waitS: 1, config: { reconnect_first_ms: 20, reconnect_max_ms: 50 },
        onError: (err) => errors.push(err) });
      server.failWith = 503;
      await assert.rejects(follower.refresh(), (err) => err instanceof HttpError && err.code === 'http' && err.status === 503);
      // Wakes the held long poll (it came before the failures, so it gets the body); the
      // loop's next request fails.
      server.set(doc(2));
      assert.ok(await eventually(() => errors.length >= 1));
      assert.deepEqual([errors[0].name, errors[0].code, errors[0].status], ['HttpError', 'http', 503]);
      server.failWith = null;
      server.set(doc(3));
      assert.equal(await follower.waitForEpoch(3, 5000), true);
      assert.ok(follower.stats.disconnects >= 1n);
    });

    test('the follower comes back with the server', async () => {
      const errors = [];
      const config = { reconnect_first_ms: 50, reconnect_max_ms: 200 };
      const follower = await follow({ intervalMs: 50, waitS: 1, config, onError: (err) => errors.push(err) });
      await server.stop();
      await assert.rejects(follower.refresh(), (err) => err instanceof HttpError && err.code === 'unreachable'
        && err.status === null && err.cause !== undefined);
      await sleep(500);
      server.set(doc(5));
      await server.start();
      assert.equal(await follower.waitForEpoch(5, 10_000), true);
      assert.ok(follower.stats.disconnects >= 1n);
      assert.ok(errors.length > 0 && errors.every((err) => err instanceof HttpError && err.code === 'unreachable'));
    });

    test('a server that is not there is an HttpError', async () => {
      await server.stop();
      await assert.rejects(HttpFollower.start(server.url, { intervalMs: 30_000 }),
        (err) => err instanceof HttpError && err.code === 'unreachable');
    });

    test('callbacks: onChange after each installed router; what they throw goes to onError', async () => {
      const seen = [];
      const errors = [];
      const follower = await follow({
        intervalMs: 50, waitS: 10,
        onChange: (changed) => seen.push(changed.router.epoch),
        onRefused: () => { throw new Error('onRefused threw'); },
        onError: (err) => errors.push(err),
      });
      for (const epoch of [2, 3]) {
        server.set(doc(epoch));
        assert.equal(await follower.waitForEpoch(epoch, 5000), true);
      }
      server.set('{not json');
      assert.ok(await eventually(() => errors.length === 1));
      assert.equal(errors[0].message, 'onRefused threw');
      assert.deepEqual(seen, [1n, 2n, 3n]);
      assert.deepEqual(follower.stats.refused, { invalid_topology: 1n });
    });

    test('close aborts the request in flight and stops asking', async () => {
      const follower = await follow({ intervalMs: 50, waitS: 10 });
      assert.ok(await eventually(() => server.held === 1), 'a long poll is held');
      const waiting = follower.waitForEpoch(2);
      follower.close();
      follower.close();
      assert.equal(await waiting, false);
      assert.ok(await eventually(() => server.held === 0 && server.abandoned === 1, 1000), 'the held request was aborted');
      const requests = server.requests;
      await sleep(300);
      assert.equal(server.requests, requests, 'no request after close');
      assert.equal(await follower.waitForEpoch(2, 10), false);
      await assert.rejects(follower.refresh(), (err) => err instanceof HttpError && err.code === 'closed');
      assert.equal(follower.router.epoch, 1n, 'the router is still there to read');
    });

    test("a request never answered is given up at the core's request timeout (5 s; this shell had 10 s)", async () => {
      // A fetch that answers nothing until it is aborted: only the session's deadline ends it.
      const fetch = (url, init) => new Promise((resolve, reject) => {
        init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true });
      });
      const started = performance.now();
      await assert.rejects(HttpFollower.start(server.url, { fetch }), (err) => err instanceof HttpError
        && err.code === 'unreachable' && err.message === `GET ${server.url}: no whole answer within 5 s`);
      const took = performance.now() - started;
      assert.ok(took >= 4900 && took < 8000, `${took} ms`);
    });

    test('an own fetch is used, called as a plain function', async () => {
      const seen = [];
      const fetch = function (url, init) {
        seen.push([this, url, init.method, { ...init.headers }]);
        return globalThis.fetch(url, init);
      };
      const follower = await follow({ intervalMs: 30_000, waitS: 10, fetch });
      assert.ok(await eventually(() => seen.length === 2));
      assert.deepEqual(seen[0], [undefined, server.url, 'GET', { accept: 'application/json, application/octet-stream' }]);
      assert.deepEqual(seen[1][3], {
        accept: 'application/json, application/octet-stream', 'if-none-match': follower.etag, prefer: 'wait=10',
      });
    });
  });
}
