// Type-checked by test.sh (`tsc --noEmit`) against zookeeper.d.ts, never run: the calls of
// shardroute/zookeeper as a TypeScript user writes them.
import { publish, ZooKeeperError, ZooKeeperFollower } from '../zookeeper.js';
import type { ZooKeeperErrorCode, ZooKeeperFollowerStats } from '../zookeeper.js';
import type { Offered, Router } from '../index.js';

export async function typed(): Promise<void> {
  const follower: ZooKeeperFollower = await ZooKeeperFollower.start('127.0.0.1:2181,127.0.0.1:2182', '/app/topology', {
    config: { reconnect_first_ms: 50 },
    sessionTimeoutMs: 4000,
    onChange: (changed) => void changed.router,
    onRefused: (_, offered: Offered) => void offered.code,
    onError: (err: unknown) => void err,
  });
  const router: Router | null = follower.router;
  const revision: bigint | null = follower.revision;
  const stats: ZooKeeperFollowerStats = follower.stats;
  const counts: bigint[] = [stats.reads, stats.events, stats.sessionsLost, stats.installed];
  const offered: Offered | null = await follower.refresh();
  const reached: boolean = await follower.waitForEpoch(2n, 1000);
  follower.close();
  const written: bigint = await publish('127.0.0.1:2181', '/app/topology', { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: { type: 'jump' } }, { timeoutMs: 5000 });
  try {
    await publish('127.0.0.1:2181', '/app/topology', '{}');
  } catch (err) {
    if (err instanceof ZooKeeperError) {
      const code: ZooKeeperErrorCode = err.code;
      void code;
    }
  }
  void [router, revision, counts, offered, reached, written];
  // @ts-expect-error: hosts is one connection string, not an array
  await ZooKeeperFollower.start(['127.0.0.1:2181'], '/app/topology');
}
