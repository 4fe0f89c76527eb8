// A MOVED through the session's steady path (what shardroute/redis does): the targets the
// fast path hands out are kept while the table's nodes stay (a MOVED to a node of the table
// converts no addresses again), and made anew when a MOVED adds a node or a refresh
// installs a table (the core's endpointsVersion).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as api from 'shardroute';

const FAST_PATH = Symbol.for('shardroute.ClusterSession.fastPath');
const node = (port) => ({ id: String(port).repeat(8), endpoint: '127.0.0.1', ip: '127.0.0.1', port, role: 'master',
  health: 'online', 'replication-offset': 0 });
const twoMasters = [
  { slots: [0, 8191], nodes: [node(7000)] },
  { slots: [8192, 16383], nodes: [node(7001)] },
];

/** The steady send of `key`, answered MOVED to `address`, then the resend's reply. */
function moved(session, key, slot, address, nowMs) {
  const fast = session[FAST_PATH];
  const sent = fast.send([key], 'write', nowMs);
  const command = fast.command([key], 'write', sent.address, nowMs);
  const next = session.failed(command, `MOVED ${slot} ${address}`, ['ReplyError'], nowMs);
  assert.equal(next.kind, 'send');
  assert.equal(next.address, address);
  session.succeeded(command, nowMs);
}

test('a MOVED to a node of the table keeps the targets; a new node or a refresh makes them anew', () => {
  const session = new api.ClusterSession(['127.0.0.1:7000']);
  session.refreshed(twoMasters, 0);
  const fast = session[FAST_PATH];
  // "a" is slot 15495, "b" slot 3300.
  const to7000 = fast.send(['b'], 'write', 1);
  const to7001 = fast.send(['a'], 'write', 1);
  assert.deepEqual(to7000, { address: '127.0.0.1:7000', readonly: false });
  const epoch = session.router.epoch;

  moved(session, 'a', 15495, '127.0.0.1:7000', 2);
  // The same target object as before the MOVED: the targets were not made again.
  assert.equal(fast.send(['a'], 'write', 3), to7000);
  assert.equal(fast.send(['b'], 'write', 3), to7000);
  moved(session, 'a', 15495, '127.0.0.1:7001', 4);
  assert.equal(fast.send(['a'], 'write', 5), to7001);
  assert.equal(session.router.epoch, epoch + 2n, 'each MOVED is the next epoch');

  // A MOVED to an address the table lacks adds a node: the targets follow it.
  moved(session, 'a', 15495, '127.0.0.1:7005', 6);
  assert.deepEqual(fast.send(['a'], 'write', 7), { address: '127.0.0.1:7005', readonly: false });
  assert.equal(fast.send(['b'], 'write', 7).address, '127.0.0.1:7000');

  // A refresh installs the table it read: slot 15495 is 7001's again.
  session.refreshed(twoMasters, 10_000);
  assert.deepEqual(fast.send(['a'], 'write', 10_001), { address: '127.0.0.1:7001', readonly: false });
});
