// The Redis Cluster session of the addon: the suite shared with shardroute-wasm
// (conformance/js/session-suite.mjs), whose messages it compares with this package's.
import * as api from 'shardroute';
import { ADDON } from '../../conformance/js/runtimes.mjs';
import { sessionSuite } from '../../conformance/js/session-suite.mjs';

sessionSuite(api, ADDON);

// The steady path shardroute/redis takes (not public API): command + poll in one native
// call (the core's send_now, whose equality with command + poll core/tests/session_send_now.rs
// checks over random histories), and the Command of such an attempt when it gets more than
// a reply (command_sent).
import assert from 'node:assert/strict';
import { test } from 'node:test';

const FAST_PATH = Symbol.for('shardroute.ClusterSession.fastPath');
const node = (port, role) => ({ id: String(port).repeat(8), endpoint: '127.0.0.1', ip: '127.0.0.1', port, role,
  health: 'online', 'replication-offset': 0 });
const twoMasters = [
  { slots: [0, 8191], nodes: [node(7000, 'master'), node(7002, 'replica')] },
  { slots: [8192, 16383], nodes: [node(7001, 'master'), node(7003, 'replica')] },
];

test('the fast path: no table, then the send poll gives, then the targets after a MOVED', () => {
  const session = new api.ClusterSession(['127.0.0.1:7000']);
  const fast = session[FAST_PATH];
  assert.equal(fast.send(['a'], 'write', 0), null, 'no table: the general path');
  assert.equal(session.stats.commands, 0n, 'a declined send counts nothing');
  session.refreshed(twoMasters, 0);
  // "a" is slot 15495 (Redis' own example of CLUSTER KEYSLOT), "b" slot 3300.
  assert.deepEqual(fast.send(['a'], 'write', 1), { address: '127.0.0.1:7001', readonly: false });
  assert.deepEqual(fast.send(['b'], 'read', 1), { address: '127.0.0.1:7000', readonly: false });
  assert.equal(session.stats.commands, 2n);
  assert.throws(() => fast.send(['a', 'b'], 'read', 1), { code: 'cross_slot' });
  assert.throws(() => fast.send(['a'], 'sideways', 1), { code: 'invalid_argument' });

  // The attempt to 7001 is answered MOVED: the rebuilt command follows it as a polled one would.
  const command = fast.command(['a'], 'write', '127.0.0.1:7001');
  assert.equal(command.slot, 15495);
  const next = session.failed(command, 'MOVED 15495 127.0.0.1:7000', ['ReplyError'], 2);
  assert.equal(next.kind, 'send');
  assert.equal(next.address, '127.0.0.1:7000');
  // The table moved slot 15495: the next steady send goes to its new master.
  assert.deepEqual(fast.send(['a'], 'write', 3), { address: '127.0.0.1:7000', readonly: false });
  // A refresh is now due (MOVED asks for one after the interval): the general path again.
  assert.equal(fast.send(['a'], 'write', 10_000), null);
  assert.throws(() => fast.command(['a'], 'write', 'no port'), { code: 'invalid_argument' });
});

test('the fast path with auto-pipelining: pipelineQueued, and the pipelineDone of a write that ended, in the same call', () => {
  const declined = new api.ClusterSession(['127.0.0.1:7000'])[FAST_PATH];
  assert.equal(declined.send(['a'], 'write', 0, true, '127.0.0.1:7000', false), null, 'no table: the general path');
  assert.equal(declined.done, 0, 'the write that ended is told even so (no write in flight: none to start)');
  assert.equal(declined.queued, -1, 'not sent: not queued');

  const session = new api.ClusterSession(['127.0.0.1:7000']);
  session.refreshed(twoMasters, 0);
  const fast = session[FAST_PATH];
  // "b" is slot 3300 (7000), "a" slot 15495 (7001).
  assert.deepEqual(fast.send(['b'], 'read', 1, true), { address: '127.0.0.1:7000', readonly: false });
  assert.equal(fast.queued, 2, 'an idle connection: written now, alone');
  assert.equal(fast.done, -1, 'no write that ended was given');
  assert.deepEqual(session.pipelinePending('127.0.0.1:7000', false), [0, 1], 'one write in flight, none queued');
  // That write ended; the next send (to the other node) tells it first.
  assert.deepEqual(fast.send(['a'], 'write', 2, true, '127.0.0.1:7000', false), { address: '127.0.0.1:7001', readonly: false });
  assert.equal(fast.done, 0, 'nothing queued behind it: no write');
  assert.deepEqual(session.pipelinePending('127.0.0.1:7000', false), [0, 0]);
  assert.equal(fast.queued, 2);
  assert.deepEqual(session.pipelinePending('127.0.0.1:7001', false), [0, 1]);
  // Without `queued`, the send joins no queue.
  assert.deepEqual(fast.send(['a'], 'write', 3), { address: '127.0.0.1:7001', readonly: false });
  assert.equal(fast.queued, -1);
  assert.deepEqual(session.pipelinePending('127.0.0.1:7001', false), [0, 1]);
  // A send refused (keys in two slots) after the ended write was told: `done` says so.
  assert.throws(() => fast.send(['a', 'b'], 'read', 4, true, '127.0.0.1:7001', false), { code: 'cross_slot' });
  assert.equal(fast.done, 0);
  assert.deepEqual(session.pipelinePending('127.0.0.1:7001', false), [0, 0]);
});

test('the fast path with replica reads: the replicas in turn, over READONLY connections', () => {
  const session = new api.ClusterSession(['127.0.0.1:7000'], { read_from_replicas: true });
  session.refreshed(twoMasters, 0);
  const fast = session[FAST_PATH];
  assert.deepEqual(fast.send(['b'], 'read', 1), { address: '127.0.0.1:7002', readonly: true });
  assert.deepEqual(fast.send(['b'], 'write', 1), { address: '127.0.0.1:7000', readonly: false });
});
