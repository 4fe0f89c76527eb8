// Issue 35, defect 2, in Node: a member answering HTTP 503 (or an etcd gateway error body
// with gRPC code 14, UNAVAILABLE: a member shutting down or restarting) is left for the
// next one, as an unreachable one is, round the list once: in an `Etcd` call, in the
// follower's read and in its watch's opening; the error after the last member keeps its
// code and status; another HTTP error (400) does not move. (The rule is the core etcd
// session's, the same in every language; these check the shell hands it what came.)
// And the shell's own duties: a watch line without end is refused before it is buffered
// past the limit, and a callback that throws is reported while the follower goes on. Fake etcd members are started here with
// node:http on 127.0.0.1, each listening on port 0 and handing its port to the client.
// Waits are for events, never fixed sleeps.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';

import { MAX_DOCUMENT_BYTES, ShardrouteError } from 'shardroute';
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
 * says `created`, then, with `event`, KEY holds NEXT at revision 8 and the watch says one
 * put of it, then stays quiet), 'watch503' (healthy, but a watch is answered 503),
 * 'endlessLine' (healthy, but a watch says `created`, then sends one line without end, as
 * fast as the client reads, counted in `sent`, until the client hangs up),
 * 'unavailable' (503 with the UNAVAILABLE body), 'grpc14' (500 with that body) or
 * 'badRequest' (400). `requests`: the paths asked, in order.
 */
async function member(mode, { event = false } = {}) {
  const requests = [];
  const streams = new Set();
  let stored = [DOCUMENT, 7];
  const counted = { sent: 0 };
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
      const header = { revision: String(stored[1]) };
      if (request.url === '/v3/kv/range') return send(200, JSON.stringify({ header, kvs: [kv(KEY, ...stored)] }));
      if (request.url === '/v3/kv/txn') {
        const responses = (body.success ?? []).map(({ request_range: range }) => (
          { response_range: { kvs: range.key === b64(KEY) ? [kv(KEY, ...stored)] : [] } }));
        return send(200, JSON.stringify({ header, succeeded: true, responses }));
      }
      if (mode === 'watch503' && request.url === '/v3/watch') return send(503, UNAVAILABLE);
      if (request.url === '/v3/watch') {
        streams.add(response);
        response.on('close', () => streams.delete(response));
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(`${JSON.stringify({ result: { header, created: true } })}\n`);
        if (mode === 'endlessLine') {
          const piece = Buffer.alloc(2 ** 20, 0x61);
          const more = () => {
            while (!response.destroyed && counted.sent < 8 * MAX_DOCUMENT_BYTES) {
              counted.sent += piece.length;
              if (!response.write(piece)) return response.once('drain', more);
            }
            return undefined;
          };
          more();
        }
        if (event) {
          stored = [NEXT, 8];
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
    get sent() {
      return counted.sent;
    },
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

test("a follower's watch answered 503 at its creation opens on the next member", async () => {
  const going = await member('watch503');
  const healthy = await member('healthy', { event: true });
  const errors = [];
  const follower = await EtcdFollower.start([going.url, healthy.url], KEY, { onError: (err) => errors.push(err) });
  try {
    assert.equal(follower.router?.epoch, 1n);
    assert.equal(await follower.waitForEpoch(2, 30000), true); // the event on the healthy member, its value offered
    assert.equal(follower.etcd.url, healthy.url);
  } finally {
    follower.close();
  }
  assert.deepEqual(errors, []);
  assert.deepEqual(going.requests, ['/v3/kv/txn', '/v3/watch']);
  assert.deepEqual(healthy.requests.slice(0, 1), ['/v3/watch']); // no read after the event: the key has no companions
});

test("a follower's watch answered 503 by every member is a loss with the last one's code and status", async () => {
  const first = await member('watch503');
  const second = await member('watch503');
  const errors = [];
  const follower = await EtcdFollower.start([first.url, second.url], KEY, { onError: (err) => errors.push(err) });
  try {
    await until(() => errors.length > 0, 'a loss');
  } finally {
    follower.close();
  }
  assert.ok(errors[0] instanceof EtcdError && errors[0].code === 'http' && errors[0].status === 503, String(errors[0]));
  assert.deepEqual(first.requests.slice(0, 2), ['/v3/kv/txn', '/v3/watch']);
  assert.deepEqual(second.requests[0], '/v3/watch');
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

test('a watch line without end is a loss with limit_exceeded, never buffered past the limit', async () => {
  const endless = await member('endlessLine');
  const errors = [];
  const follower = await EtcdFollower.start(endless.url, KEY, { onError: (err) => errors.push(err) });
  try {
    await until(() => errors.length > 0, 'a loss');
  } finally {
    follower.close();
  }
  assert.ok(errors[0] instanceof ShardrouteError && errors[0].code === 'limit_exceeded', String(errors[0]));
  // Twice the document limit (a document in base64 and its companions), and what loopback's
  // socket buffers hold on top of what the client read (generous).
  assert.ok(endless.sent < 2 * MAX_DOCUMENT_BYTES + 32 * 2 ** 20, `${endless.sent} bytes sent`);
});

test('a callback that throws is reported to onError, and the follower goes on', async () => {
  const healthy = await member('healthy', { event: true });
  const thrown = new Error('a bug in onChange');
  const epochs = [];
  const errors = [];
  const follower = await EtcdFollower.start(healthy.url, KEY, {
    onChange: (changed) => {
      epochs.push(changed.router.epoch);
      if (epochs.length === 1) throw thrown;
    },
    onError: (err) => errors.push(err),
  });
  try {
    assert.equal(await follower.waitForEpoch(2, 30000), true);
  } finally {
    follower.close();
  }
  assert.deepEqual(epochs, [1n, 2n]);
  assert.deepEqual(errors, [thrown]);
});
