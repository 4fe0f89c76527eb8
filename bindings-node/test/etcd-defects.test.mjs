// Issue 35, defect 2, in Node: a member answering HTTP 503 (or an etcd gateway error body
// with gRPC code 14, UNAVAILABLE: a member shutting down or restarting) is left for the
// next one, as an unreachable one is, round the list once: in `Etcd.call`, in a watch's
// opening, and so in `EtcdFollower`; the error after the last member keeps its code and
// status; another HTTP error (400) does not move. Fake etcd members are started here with
// node:http on 127.0.0.1, each listening on port 0 and handing its port to the client.
// Waits are for events, never fixed sleeps.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';

import { Etcd, EtcdError, EtcdFollower } from 'shardroute/etcd';

const KEY = '/app/topology';
const DOCUMENT = JSON.stringify({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: { type: 'jump' } });
const NEXT = JSON.stringify({ format: 'shardroute/1', epoch: 2, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'jump' } });
/** etcd's gateway while a member shuts down (grpc-gateway's error body, gRPC code 14). */
const UNAVAILABLE = JSON.stringify({ error: 'etcdserver: server stopped', code: 14, message: 'etcdserver: server stopped' });

const b64 = (text) => Buffer.from(text).toString('base64');
const kv = (key, value, revision) => ({ key: b64(key), value: b64(value), mod_revision: String(revision) });

/** Every fake member, closed when the tests end. */
const members = [];

/**
 * A fake etcd member. `mode`: 'healthy' (KEY holds DOCUMENT at revision 7; a watch opens,
 * says `created`, then, with `event`, one put of NEXT at revision 8, then stays quiet),
 * 'unavailable' (503 with the UNAVAILABLE body), 'grpc14' (500 with that body) or
 * 'badRequest' (400). `requests`: the paths asked, in order.
 */
async function member(mode, { event = false } = {}) {
  const requests = [];
  const streams = new Set();
  const server = createServer((request, response) => {
    const pieces = [];
    request.on('data', (piece) => pieces.push(piece));
    request.on('end', () => {
      requests.push(request.url);
      const body = JSON.parse(Buffer.concat(pieces).toString() || '{}');
      const send = (status, text) => {
        response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        response.end(text);
      };
      if (mode === 'unavailable') return send(503, UNAVAILABLE);
      if (mode === 'grpc14') return send(500, UNAVAILABLE);
      if (mode === 'badRequest') return send(400, '{"error":"bad","code":3,"message":"bad"}');
      const header = { revision: '7' };
      if (request.url === '/v3/kv/range') return send(200, JSON.stringify({ header, kvs: [kv(KEY, DOCUMENT, 7)] }));
      if (request.url === '/v3/kv/txn') {
        const responses = (body.success ?? []).map(({ request_range: range }) => (
          { response_range: { kvs: range.key === b64(KEY) ? [kv(KEY, DOCUMENT, 7)] : [] } }));
        return send(200, JSON.stringify({ header, responses }));
      }
      if (request.url === '/v3/watch') {
        streams.add(response);
        response.on('close', () => streams.delete(response));
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(`${JSON.stringify({ result: { header, created: true } })}\n`);
        if (event) {
          const events = [{ type: 'PUT', kv: kv(KEY, NEXT, 8) }];
          response.write(`${JSON.stringify({ result: { header: { revision: '8' }, events } })}\n`);
        }
        return undefined; // then quiet, the stream held open
      }
      return send(404, '{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake = {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close() {
      for (const stream of streams) stream.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
  members.push(fake);
  return fake;
}

after(() => {
  for (const fake of members) fake.close();
});

/** Resolves once `done()` holds (checked at each `tick`), rejects after 30 s. */
async function until(done, what) {
  const ends = Date.now() + 30000;
  while (!done()) {
    if (Date.now() > ends) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('a call moves past a member answering 503, and stays on the one that answered', async () => {
  const going = await member('unavailable');
  const healthy = await member('healthy');
  const etcd = new Etcd([going.url, healthy.url]);
  assert.deepEqual(await etcd.get(KEY), { value: DOCUMENT, modRevision: 7n });
  assert.equal(etcd.url, healthy.url);
  assert.deepEqual(await etcd.get(KEY), { value: DOCUMENT, modRevision: 7n });
  assert.deepEqual(going.requests, ['/v3/kv/range']);
  assert.deepEqual(healthy.requests, ['/v3/kv/range', '/v3/kv/range']);
});

test('a call moves past a gateway error body with gRPC code 14', async () => {
  const going = await member('grpc14');
  const healthy = await member('healthy');
  assert.deepEqual(await new Etcd([going.url, healthy.url]).get(KEY), { value: DOCUMENT, modRevision: 7n });
  assert.deepEqual(going.requests, ['/v3/kv/range']);
});

test('another HTTP error does not move to the next member', async () => {
  const refusing = await member('badRequest');
  const healthy = await member('healthy');
  await assert.rejects(new Etcd([refusing.url, healthy.url]).get(KEY),
    (err) => err instanceof EtcdError && err.code === 'http' && err.status === 400);
  assert.deepEqual(healthy.requests, []);
});

test("after the last member, its 503 keeps code 'http' and status 503", async () => {
  const first = await member('unavailable');
  const second = await member('unavailable');
  await assert.rejects(new Etcd([first.url, second.url]).get(KEY),
    (err) => err instanceof EtcdError && err.code === 'http' && err.status === 503);
  assert.deepEqual(first.requests, ['/v3/kv/range']); // round the list once
  assert.deepEqual(second.requests, ['/v3/kv/range']);
});

test('a watch answered 503 at its creation opens on the next member', async () => {
  const going = await member('unavailable');
  const healthy = await member('healthy', { event: true });
  const signal = new AbortController();
  let batch = null;
  for await (const events of new Etcd([going.url, healthy.url]).watch(KEY, { startRevision: 8n, signal: signal.signal })) {
    batch = events;
    break;
  }
  signal.abort();
  assert.deepEqual(batch?.map(({ value, modRevision }) => [value, modRevision]), [[NEXT, 8n]]);
  assert.deepEqual(going.requests, ['/v3/watch']);
});

test('a watch answered 503 by every member throws the last one\'s error', async () => {
  const first = await member('unavailable');
  const second = await member('unavailable');
  await assert.rejects((async () => {
    for await (const _ of new Etcd([first.url, second.url]).watch(KEY)) break;
  })(), (err) => err instanceof EtcdError && err.code === 'http' && err.status === 503);
  assert.deepEqual(first.requests, ['/v3/watch']);
  assert.deepEqual(second.requests, ['/v3/watch']);
});

test('an EtcdFollower with a 503 member listed first reads and watches the healthy second', async () => {
  const going = await member('unavailable');
  const healthy = await member('healthy');
  const errors = [];
  const follower = await EtcdFollower.start([going.url, healthy.url], KEY, { onError: (err) => errors.push(err) });
  try {
    assert.equal(follower.router?.epoch, 1n);
    assert.equal(follower.etcd.url, healthy.url);
    await until(() => healthy.requests.includes('/v3/watch'), 'a watch on the healthy member');
  } finally {
    follower.close();
  }
  assert.deepEqual(errors, []);
  assert.deepEqual(going.requests, ['/v3/kv/txn']);
});
