// shardroute-wasm/service, the routing service as a `fetch` handler, called with Node's own
// `Request` objects (no socket: what a worker runtime hands its handler): the answers are
// the Router's for thousands of keys, one by one and in batches; hostile requests get the
// core's JSON 4xx; a body past the limit is refused with the rest unread, one that never
// ends gets the core's 408 at its deadline (the timers mocked, so no test waits it out);
// the handler follows a function's router and answers other paths with the core's 404.
// test/edge-service.test.mjs serves the same handler in workerd and Deno over HTTP.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';

import { Router } from 'shardroute-wasm';
import { SERVICE_DOCUMENT, expectedAnswer, hostileServiceRequests } from '../../conformance/js/service-cases.mjs';
import { RouteService, RoutingService, handler, serviceLimits } from 'shardroute-wasm/service';

const router = new Router(SERVICE_DOCUMENT);
const expected = (key) => expectedAnswer(router, key);
const { maxBodyBytes, maxKeys, bodyTimeoutMs } = serviceLimits();
const serve = handler(router);

const get = (target, headers = {}) => serve(new Request(`http://routing.test${target}`, { headers }));
const post = (body, init = {}) => serve(new Request('http://routing.test/route', { method: 'POST', body, duplex: 'half', ...init }));

/** A body stream that yields `chunk` until cancelled (or forever), counting what was pulled. */
function endless(chunk, { stall = false } = {}) {
  const state = { pulled: 0, cancelled: false };
  state.stream = new ReadableStream({
    pull(controller) {
      if (stall) return new Promise(() => {});
      state.pulled += chunk.byteLength;
      controller.enqueue(chunk);
      return undefined;
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return state;
}

test('the limits are the core\'s', () => {
  assert.deepEqual([maxBodyBytes, maxKeys, bodyTimeoutMs], [1024 * 1024, 10_000, 10_000]);
});

test('the answers are the router\'s', async () => {
  for (let i = 0; i < 2000; i++) {
    const key = `tenant-${i % 7}/user:${i} é&=+?`;
    const answer = await get(`/route?key=${encodeURIComponent(key)}`);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/json');
    assert.deepEqual(await answer.json(), { ...expected(key), epoch: 12 }, key);
  }
  const keys = Array.from({ length: maxKeys }, (_, i) => `order:${i}`);
  const batch = await post(JSON.stringify({ keys }));
  assert.equal(batch.status, 200);
  const answer = await batch.json();
  assert.equal(answer.epoch, 12);
  assert.deepEqual(answer.answers, keys.map(expected));
  for (let i = 0; i < 200; i++) {
    const id = (BigInt(i) * 0x9e3779b97f4a7c15n) % 2n ** 64n;
    assert.equal((await (await get(`/route?key=${id}&form=u64`)).json()).shard, router.route(id));
    const raw = Uint8Array.of(0xff, i, 0);
    const hex = Buffer.from(raw).toString('hex');
    assert.equal((await (await get(`/route?key=${hex}&form=hex`)).json()).shard, router.route(raw));
  }
});

test('the ETag and 304; the bytes are the core service\'s', async () => {
  const first = await get('/route?key=user%3A1');
  const tag = first.headers.get('etag');
  assert.match(tag, /^"route-12-[0-9a-f]{8}"$/);
  const again = await get('/route?key=user%3A1', { 'if-none-match': tag });
  assert.equal(again.status, 304);
  assert.equal(again.headers.get('etag'), tag);
  assert.equal(again.body, null);
  const native = new RoutingService(router);
  assert.equal(native.etag, tag);
  assert.deepEqual(new Uint8Array(await first.arrayBuffer()), native.answer('GET', '/route?key=user%3A1').body);
  native.free();
});

test('hostile requests get the core\'s JSON refusal', async () => {
  const cases = hostileServiceRequests(maxKeys);
  for (const [method, target, body, status, code] of cases) {
    const init = body === null ? { method } : { method, body, duplex: 'half' };
    const answer = await serve(new Request(`http://routing.test${target}`, init));
    assert.equal(answer.status, status, `${method} ${target}`);
    assert.equal((await answer.json()).error.code, code, `${method} ${target}`);
    assert.equal(answer.headers.get('content-type'), 'application/json');
    if (status === 405) assert.equal(answer.headers.get('allow'), 'GET, POST');
  }
});

test('a body past the limit is refused with the rest unread', async () => {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  // Declared too long: refused from the header, nothing pulled.
  const declared = endless(chunk);
  const byHeader = await post(declared.stream, { headers: { 'content-length': String(2 ** 30) } });
  assert.equal(byHeader.status, 413);
  assert.equal((await byHeader.json()).error.code, 'limit_exceeded');
  assert.equal(declared.pulled, 0);
  // Endless, undeclared: refused once past the limit, the stream cancelled.
  const stream = endless(chunk);
  const byBytes = await post(stream.stream);
  assert.equal(byBytes.status, 413);
  assert.equal((await byBytes.json()).error.code, 'limit_exceeded');
  assert.ok(stream.pulled <= maxBodyBytes + 4 * chunk.byteLength, `pulled ${stream.pulled}`);
  assert.ok(stream.cancelled);
});

test('a body that never ends gets the core\'s 408 at its deadline', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const stuck = endless(new Uint8Array(1), { stall: true });
    const pending = post(stuck.stream);
    // Let the handler start reading, then move the clock past the deadline.
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    mock.timers.tick(bodyTimeoutMs);
    const answer = await pending;
    assert.equal(answer.status, 408);
    assert.equal(answer.headers.get('connection'), 'close');
    assert.equal((await answer.json()).error.code, 'unavailable');
    assert.ok(stuck.cancelled);
  } finally {
    mock.timers.reset();
  }
});

test('the handler follows a function\'s router; other paths are the core\'s 404', async () => {
  let current = null;
  const follow = handler(() => current);
  const before = await follow(new Request('http://routing.test/route?key=a'));
  assert.equal(before.status, 503);
  assert.equal(before.headers.get('retry-after'), '1');
  current = router;
  assert.equal((await (await follow(new Request('http://routing.test/route?key=a'))).json()).epoch, 12);
  current = new Router({ ...SERVICE_DOCUMENT, epoch: 13 });
  assert.equal((await (await follow(new Request('http://routing.test/route?key=a'))).json()).epoch, 13);
  const service = new RouteService(router);
  assert.equal(await service.handle(new Request('http://routing.test/health')), null);
  assert.ok(RouteService.handles('http://x/route?key=1') && !RouteService.handles('/routes'));
  assert.throws(() => new RoutingService({}), { code: 'invalid_argument' });
  // RouteService.answer passes its arguments on uncoerced: a method or target that is not
  // a string is refused, as RoutingService refuses it, never turned into text.
  assert.throws(() => service.answer(7, '/route?key=a'), { code: 'invalid_argument' });
  assert.throws(() => service.answer('GET', { toString: () => '/route?key=a' }), { code: 'invalid_argument' });
  assert.equal(service.answer('GET', '/route?key=a').status, 200);
});
