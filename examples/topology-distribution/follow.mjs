// The Node follower of the live run (run.py), the twin of follow.py: follows the topology
// at --key in the etcd cluster --etcd (every member's URL, comma-separated) with
// `EtcdFollower` of `shardroute/etcd`, or at --path in the ZooKeeper ensemble --zookeeper
// with `ZooKeeperFollower` of `shardroute/zookeeper`, and prints one JSON line per installed epoch
// ({"event": "installed", "epoch", "t"}, t the wall clock in seconds) and per refusal
// ({"event": "refused", "code"}). A line `stats` on stdin prints {"event": "stats", "stats",
// "member"} (the counters now, the member in use); any other line prints
// {"event": "done", "stats", "member"} and exits.
//
//     node follow.mjs --etcd http://127.0.0.1:2379,... --key /app/topology
//         [--ca CA.pem --cert CLIENT.pem --cert-key CLIENT.key] [--user NAME --password-file FILE]
//     node follow.mjs --zookeeper 127.0.0.1:2181,... --path /app/topology
//
// A secure etcd (`https://` members): --ca the CA its certificates are checked against,
// --cert/--cert-key the client certificate it asks for, --user and the password (read from
// --password-file, not the command line) for etcd's authentication.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import { Etcd, EtcdFollower } from 'shardroute/etcd';
import { ZooKeeperFollower } from 'shardroute/zookeeper';

const { values } = parseArgs({
  options: {
    etcd: { type: 'string' }, key: { type: 'string' }, zookeeper: { type: 'string' }, path: { type: 'string' },
    ca: { type: 'string' }, cert: { type: 'string' }, 'cert-key': { type: 'string' }, user: { type: 'string' },
    'password-file': { type: 'string' },
  },
});
const emit = (event, fields = {}) => console.log(JSON.stringify({ event, ...fields },
  (_, value) => (typeof value === 'bigint' ? Number(value) : value)));

// The secure etcd's options for `Etcd` (none for a plain one).
const security = {
  ...(values.ca ? { ca: values.ca, cert: values.cert, key: values['cert-key'] } : {}),
  ...(values.user ? { user: values.user, password: readFileSync(values['password-file'], 'utf8').trim() } : {}),
};
const options = {
  config: { reconnect_first_ms: 50, reconnect_max_ms: 500 },
  onChange: (f) => emit('installed', { epoch: f.router.epoch, t: Date.now() / 1000 }),
  onRefused: (_, offered) => emit('refused', { code: offered.code }),
  onError: (err) => console.error(`follow.mjs: ${err.message}`),
};
const follower = values.zookeeper
  ? await ZooKeeperFollower.start(values.zookeeper, values.path, { ...options, sessionTimeoutMs: 2000 })
  : await EtcdFollower.start(new Etcd(values.etcd, { timeoutMs: 1000, ...security }), values.key, { ...options, idleMs: 1000 });
// The member the follower's session is on (etcd: `follower.etcd`'s URL; ZooKeeper: 'host:port').
const member = () => (values.zookeeper ? follower.member : follower.etcd.url);
const stats = () => {
  const now = follower.stats;
  return { ...now, refused: Object.fromEntries(Object.entries(now.refused).map(([k, v]) => [k, Number(v)])) };
};
emit('ready');
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() !== 'stats') break;
  emit('stats', { stats: stats(), member: member() });
}
emit('done', { stats: stats(), member: member() });
follower.close();
process.exit(0);
