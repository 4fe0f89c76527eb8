// The Node follower of the live run (run.py), the twin of follow.py: follows the topology
// at --key in the etcd cluster --etcd (every member's URL, comma-separated) with
// `EtcdFollower` of `shardroute/etcd`, or at --path in the ZooKeeper ensemble --zookeeper
// with `ZooKeeperFollower` of `shardroute/zookeeper`, and prints one JSON line per installed epoch
// ({"event": "installed", "epoch", "t"}, t the wall clock in seconds) and per refusal
// ({"event": "refused", "code"}). A line on stdin prints {"event": "done", "stats"} and exits.
//
//     node follow.mjs --etcd http://127.0.0.1:2379,... --key /app/topology
//     node follow.mjs --zookeeper 127.0.0.1:2181,... --path /app/topology
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import { Etcd, EtcdFollower } from 'shardroute/etcd';
import { ZooKeeperFollower } from 'shardroute/zookeeper';

const { values } = parseArgs({
  options: { etcd: { type: 'string' }, key: { type: 'string' }, zookeeper: { type: 'string' }, path: { type: 'string' } },
});
const emit = (event, fields = {}) => console.log(JSON.stringify({ event, ...fields },
  (_, value) => (typeof value === 'bigint' ? Number(value) : value)));

const options = {
  config: { reconnect_first_ms: 50, reconnect_max_ms: 500 },
  onChange: (f) => emit('installed', { epoch: f.router.epoch, t: Date.now() / 1000 }),
  onRefused: (_, offered) => emit('refused', { code: offered.code }),
  onError: (err) => console.error(`follow.mjs: ${err.message}`),
};
const follower = values.zookeeper
  ? await ZooKeeperFollower.start(values.zookeeper, values.path, { ...options, sessionTimeoutMs: 2000 })
  : await EtcdFollower.start(new Etcd(values.etcd, { timeoutMs: 1000 }), values.key, { ...options, idleMs: 1000 });
emit('ready');
const lines = createInterface({ input: process.stdin });
for await (const _ of lines) break;
const stats = follower.stats;
emit('done', { stats: { ...stats, refused: Object.fromEntries(Object.entries(stats.refused).map(([k, v]) => [k, Number(v)])) } });
follower.close();
process.exit(0);
