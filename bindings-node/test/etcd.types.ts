// Type-checked by test.sh (`tsc --noEmit`) against etcd.d.ts, never run: the calls of
// shardroute/etcd as a TypeScript user writes them.
import { Etcd, EtcdError, EtcdFollower, prefixEnd, publish, sameRevision, sameValue } from '../etcd.js';
import type { EtcdErrorCode, EtcdFollowerStats, EtcdValue } from '../etcd.js';
import type { Offered, Router } from '../index.js';
import { ShardrouteError } from '../index.js';

export async function typed(): Promise<void> {
  const etcd = new Etcd('http://127.0.0.1:2379', { timeoutMs: 5000 });
  new Etcd('https://127.0.0.1:2379', { ca: '/etc/ca.crt', cert: '/etc/client.crt', key: new Uint8Array(0), user: 'app', password: 'secret' });
  new Etcd('http://127.0.0.1:2379', { fetch: async (url: string, init) => ({ url, method: init.method, body: init.body ?? null }) });
  const cluster = new Etcd(['http://127.0.0.1:2379', 'http://127.0.0.1:22379'] as const);
  new Etcd('http://127.0.0.1:2379,http://127.0.0.1:22379');
  const inUse: string = cluster.url;
  const members: readonly string[] = cluster.urls;
  const got: EtcdValue = await etcd.get('/a');
  const value: string | null = got.value;
  const modRevision: bigint = got.modRevision;
  const { values, revision }: { values: Map<string, EtcdValue>; revision: bigint } = await etcd.getMany(['/a', '/b']);
  const put: bigint = await etcd.put('/a', '1');
  const swapped: bigint = await etcd.cas('/a', '2', put);
  const written: bigint = await etcd.txn([sameRevision('/a', 0n), Etcd.sameValue('/b', 'x'), sameValue('/c', 'y')], { '/a': '1' }, ['/b']);
  await etcd.txn([Etcd.sameRevision('/a', 3)], new Map([['/a', new Uint8Array([1])]]));
  const deleted: bigint = await etcd.deletePrefix('/app/');
  const end: Uint8Array = prefixEnd('/app/');
  const follower: EtcdFollower = await EtcdFollower.start(etcd, '/app/topology', {
    also: ['/app/previous'],
    config: { reconnect_first_ms: 50 },
    onChange: (changed) => void changed.router,
    onRefused: (refusing: EtcdFollower, offered: Offered) => void [refusing.router, offered.code],
    onError: (err) => void err,
  });
  await EtcdFollower.start('http://127.0.0.1:2379', '/app/topology');
  await EtcdFollower.start(['http://127.0.0.1:2379', 'http://127.0.0.1:22379'], '/app/topology', { idleMs: 1000 });
  await EtcdFollower.start(cluster, '/app/topology', { idleMs: null });
  const router: Router | null = follower.router;
  const previous: string | null | undefined = follower.companions.get('/app/previous');
  const held: bigint | null = follower.revision;
  const stats: EtcdFollowerStats = follower.stats;
  const counts: bigint[] = [stats.reads, stats.watchRestarts, stats.installed, stats.disconnects, stats.refused['stale_epoch'] ?? 0n];
  const offered: Offered | null = await follower.refresh();
  const reached: boolean = await follower.waitForEpoch(3n, 1000);
  await follower.waitForEpoch(4);
  follower.close();
  const next: bigint = await publish(etcd, '/app/topology', { format: 'shardroute/1', epoch: 2, nodes: [{ id: 'a' }], strategy: { type: 'jump' } });
  await publish('http://127.0.0.1:2379', '/app/topology', '{}');
  await publish(members, '/app/topology', '{}', { replace: true, also: { '/app/previous': '{}' } });
  const error = new EtcdError('conflict', 'lost', { cause: new Error('x') });
  const code: EtcdErrorCode = error.code;
  const base: ShardrouteError = error;
  const idle: EtcdErrorCode = new EtcdError('idle', 'quiet').code;
  const status: number | null = error.status;
  // @ts-expect-error: the members are read-only
  cluster.urls.push('http://127.0.0.1:1');
  // @ts-expect-error: the member in use is the client's to choose
  cluster.url = 'http://127.0.0.1:1';
  void [end, base, revision, inUse, idle, value, modRevision, values, swapped, written, deleted, router, previous, held, counts, offered, reached, next, code, status];
}
