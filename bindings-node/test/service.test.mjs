// shardroute/service mounted in a node:http server (port 0, read back): the answers are
// the Router's for thousands of keys, one by one and in batches, from several clients at
// once; hostile requests get the core's JSON 4xx; a body past the limit is refused unread,
// one that never comes is closed at its deadline; a server of one's own keeps its paths.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, test } from 'node:test';

import { SERVICE_DOCUMENT, expectedAnswer, hostileServiceRequests } from '../../conformance/js/service-cases.mjs';
import { Router } from '../index.js';
import { BODY_TIMEOUT_MS, MAX_SERVICE_BODY_BYTES, MAX_SERVICE_KEYS, RouteService, handler } from '../service.js';

const router = new Router(SERVICE_DOCUMENT);
const expected = (key) => expectedAnswer(router, key);

function listen(listener) {
  return new Promise((resolve) => {
    const server = http.createServer(listener);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function ask(port, method, target, body = null, headers = {}) {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path: target, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    request.on('error', reject);
    request.end(body ?? undefined);
  });
}

let server;
let port;
before(async () => {
  server = await listen(handler(router));
  port = server.address().port;
});
after(() => server.close());

test('the answers are the router\'s under load', async () => {
  const clients = [0, 1, 2, 3].map(async (client) => {
    for (let i = 0; i < 500; i++) {
      const key = `tenant-${client}/user:${i} é&=+?`;
      const answer = await ask(port, 'GET', `/route?key=${encodeURIComponent(key)}`);
      assert.equal(answer.status, 200, answer.body.toString());
      assert.deepEqual(JSON.parse(answer.body), { ...expected(key), epoch: 12 }, key);
    }
  });
  const keys = Array.from({ length: MAX_SERVICE_KEYS }, (_, i) => `order:${i}`);
  const batch = await ask(port, 'POST', '/route', JSON.stringify({ keys }));
  await Promise.all(clients);
  assert.equal(batch.status, 200);
  assert.equal(batch.headers['content-type'], 'application/json');
  const answer = JSON.parse(batch.body);
  assert.equal(answer.epoch, 12);
  assert.deepEqual(answer.answers, keys.map(expected));
  for (let i = 0; i < 200; i++) {
    const id = (BigInt(i) * 0x9e3779b97f4a7c15n) % 2n ** 64n;
    const byId = JSON.parse((await ask(port, 'GET', `/route?key=${id}&form=u64`)).body);
    assert.equal(byId.shard, router.route(id));
    const raw = Uint8Array.of(0xff, i, 0);
    const byBytes = JSON.parse((await ask(port, 'GET', `/route?key=${Buffer.from(raw).toString('hex')}&form=hex`)).body);
    assert.equal(byBytes.shard, router.route(raw));
  }
});

test('the ETag and 304; the same bytes as the service called directly', async () => {
  const first = await ask(port, 'GET', '/route?key=user%3A1');
  const tag = first.headers.etag;
  assert.match(tag, /^"route-12-[0-9a-f]{8}"$/);
  const again = await ask(port, 'GET', '/route?key=user%3A1', null, { 'if-none-match': tag });
  assert.equal(again.status, 304);
  assert.equal(again.headers.etag, tag);
  const direct = new RouteService(router).answer('GET', '/route?key=user%3A1');
  assert.deepEqual(direct.body, first.body);
});

test('hostile requests get the core\'s JSON refusal', async () => {
  const cases = hostileServiceRequests(MAX_SERVICE_KEYS);
  for (const [method, target, body, status, code] of cases) {
    const answer = await ask(port, method, target, body);
    assert.equal(answer.status, status, `${method} ${target}: ${answer.body}`);
    assert.equal(JSON.parse(answer.body).error.code, code, `${method} ${target}`);
    assert.equal(answer.headers['content-type'], 'application/json');
    if (status === 405) assert.equal(answer.headers.allow, 'GET, POST');
  }
});

/** Sends `head` (and keeps sending `filler` while the server reads); what came back. */
function raw(head, filler = null) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    let sent = 0;
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => resolve({ answer: Buffer.concat(chunks).toString('latin1'), sent }));
    socket.write(head);
    if (filler !== null) {
      const pump = () => {
        while (!socket.destroyed && sent < 64 * MAX_SERVICE_BODY_BYTES) {
          sent += filler.length;
          if (!socket.write(filler)) return socket.once('drain', pump);
        }
      };
      pump();
    }
  });
}

test('a body past the limit is refused unread', async () => {
  const declared = await raw(`POST /route HTTP/1.1\r\nHost: x\r\nContent-Length: ${2 ** 30}\r\n\r\n`);
  assert.match(declared.answer, /^HTTP\/1\.1 413 /);
  assert.equal(JSON.parse(declared.answer.split('\r\n\r\n')[1]).error.code, 'limit_exceeded');
  // Chunked, endless: answered 413 once past the limit and closed, long before the end.
  const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x20), Buffer.from('\r\n')]);
  const chunked = await raw('POST /route HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', chunk);
  assert.ok(chunked.sent < 64 * MAX_SERVICE_BODY_BYTES, `sent ${chunked.sent}`);
  assert.ok(chunked.answer === '' || chunked.answer.startsWith('HTTP/1.1 413 '), chunked.answer);
});

test('a body that never comes is closed at its deadline, unanswered', async () => {
  const started = Date.now();
  const stuck = await raw('POST /route HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"keys": [');
  assert.equal(stuck.answer, '');
  assert.ok(Date.now() - started >= BODY_TIMEOUT_MS * 0.9);
  assert.equal((await ask(port, 'GET', '/route?key=after')).status, 200);
});

test('a server of one\'s own keeps its paths and follows the router', async () => {
  let current = null;
  const service = new RouteService(() => current);
  const own = await listen((req, res) => {
    if (!service.handle(req, res)) res.end('mine');
  });
  const ownPort = own.address().port;
  try {
    const none = await ask(ownPort, 'GET', '/route?key=a');
    assert.equal(none.status, 503);
    assert.equal(JSON.parse(none.body).error.code, 'unavailable');
    assert.equal(none.headers['retry-after'], '1');
    current = router;
    assert.deepEqual(JSON.parse((await ask(ownPort, 'GET', '/route?key=a')).body), { ...expected('a'), epoch: 12 });
    assert.equal((await ask(ownPort, 'GET', '/other')).body.toString(), 'mine');
    current = new Router({ ...SERVICE_DOCUMENT, epoch: 13 });
    assert.equal(JSON.parse((await ask(ownPort, 'GET', '/route?key=a')).body).epoch, 13);
  } finally {
    own.close();
  }
});
