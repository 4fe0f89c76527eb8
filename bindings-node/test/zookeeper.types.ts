// Type-checked by test.sh (`tsc --noEmit`) against zookeeper.d.ts, never run: the calls of
// shardroute/zookeeper as a TypeScript user writes them.
import { publish, ZooKeeperError, ZooKeeperFollower } from '../zookeeper.js';
import type { ZooKeeperErrorCode, ZooKeeperFollowerStats } from '../zookeeper.js';
import { ShardrouteError } from '../index.js';
import type { Offered, Router } from '../index.js';

export async function typed(): Promise<void> {
  const follower: ZooKeeperFollower = await ZooKeeperFollower.start('127.0.0.1:2181,127.0.0.1:2182', '/app/topology', {
    config: { reconnect_first_ms: 50 },
    sessionTimeoutMs: 4000,
    timeoutMs: 2000,
    user: 'app',
    password: 'secret',
    onChange: (changed) => void changed.router,
    onRefused: (_, offered: Offered) => void offered.code,
    onError: (err: unknown) => void err,
  });
  const router: Router | null = follower.router;
  const revision: bigint | null = follower.revision;
  const member: string = follower.member;
  const stats: ZooKeeperFollowerStats = follower.stats;
  const counts: bigint[] = [stats.reads, stats.events, stats.sessions, stats.pings, stats.installed];
  const offered: Offered | null = await follower.refresh();
  const reached: boolean = await follower.waitForEpoch(2n, 1000);
  follower.close();
  const listed = await ZooKeeperFollower.start(['127.0.0.1:2181', '127.0.0.1:2182'], '/app/topology');
  listed.close();
  const written: bigint = await publish('127.0.0.1:2181', '/app/topology', { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: { type: 'jump' } }, { timeoutMs: 5000 });
  const repaired: bigint = await publish(['127.0.0.1:2181'], '/app/topology', '{}', { replace: true, user: 'app', password: 'secret' });
  try {
    await publish('127.0.0.1:2181', '/app/topology', '{}');
  } catch (err) {
    if (err instanceof ZooKeeperError) {
      const code: ZooKeeperErrorCode = err.code;
      const base: ShardrouteError = err;
      void [code, base];
    }
  }
  void [router, revision, member, counts, offered, reached, written, repaired];
  // @ts-expect-error: hosts are text, not numbers
  await ZooKeeperFollower.start(2181, '/app/topology');
  // @ts-expect-error: replace is an option of publish only
  await ZooKeeperFollower.start('127.0.0.1:2181', '/app/topology', { replace: true });
}
