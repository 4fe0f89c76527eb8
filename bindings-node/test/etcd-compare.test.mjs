// Issue 39, one API shape: the txn compare `sameRevision` returns is a record with
// camelCase fields (`modRevision`, as every record the package returns), and `txn` hands
// it to the core's etcd session as that session's op spells it (`mod_revision`), so the
// gateway is asked the same compare as before. A fake etcd member on 127.0.0.1 (port 0,
// read back) records the txn bodies it is sent.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';

import { Etcd, sameRevision, sameValue } from 'shardroute/etcd';

const b64 = (text) => Buffer.from(text).toString('base64');

/** A member answering every txn with success at revision 9; `bodies`: the txn bodies. */
async function member() {
  const bodies = [];
  const server = createServer((request, response) => {
    const pieces = [];
    request.on('data', (piece) => pieces.push(piece));
    request.on('end', () => {
      if (request.url === '/v3/kv/txn') bodies.push(JSON.parse(Buffer.concat(pieces).toString()));
      const text = JSON.stringify({ header: { revision: '9' }, succeeded: true, responses: [] });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  return { url: `http://127.0.0.1:${server.address().port}`, bodies };
}

test('sameRevision is a record with camelCase fields; sameValue has none to rename', () => {
  assert.deepEqual(sameRevision('/k', 7n), { key: '/k', target: 'mod', modRevision: '7' });
  assert.deepEqual(Etcd.sameRevision('/k', 0), { key: '/k', target: 'mod', modRevision: '0' });
  assert.deepEqual(sameValue('/k', 'v'), { key: '/k', target: 'value', value: 'v' });
});

test('txn sends a modRevision compare to the gateway as etcd names it', async () => {
  const { url, bodies } = await member();
  const etcd = new Etcd(url);
  assert.equal(await etcd.txn([sameRevision('/k', 7n), sameValue('/v', 'x')], { '/k': 'new' }), 9n);
  assert.equal(await etcd.cas('/k', 'newer', 0n), 9n);
  assert.equal(bodies.length, 2);
  const [first, second] = bodies.map((body) => body.compare);
  const revision = first.find((compare) => compare.key === b64('/k'));
  assert.equal(revision.target, 'MOD');
  assert.equal(String(revision.mod_revision), '7');
  assert.ok(!('modRevision' in revision));
  assert.equal(first.find((compare) => compare.key === b64('/v')).target, 'VALUE');
  assert.equal(String(second[0].mod_revision ?? '0'), '0');
});

test('a compare with a field of its own making is refused before anything is sent', async () => {
  const { url, bodies } = await member();
  const etcd = new Etcd(url);
  for (const compare of [
    { key: '/k', target: 'mod', mod_revision: '7' }, // the session's spelling, not the record's
    { ...sameRevision('/k', 7n), result: 'greater' },
  ]) {
    await assert.rejects(etcd.txn([compare], { '/k': 'v' }), (err) => {
      assert.equal(err.code, 'invalid_argument');
      assert.match(err.message, /sameRevision or sameValue/);
      return true;
    });
  }
  assert.equal(bodies.length, 0);
});
