// Type-checked by test.sh (`tsc --noEmit`) against redis.d.ts, never run: the calls of
// shardroute/redis as a TypeScript user writes them.
import { ClusterClient, ClusterStats, ConnectionError, TooManyRedirects } from '../redis.js';
import type { ClusterClientOptions } from '../redis.js';
import type { Router } from '../index.js';

export async function typed(): Promise<void> {
  const options: ClusterClientOptions = { readFromReplicas: true, config: { max_redirects: 3, retry_budget_ms: 1000 }, password: 'secret' };
  const client: ClusterClient = await ClusterClient.connect(['127.0.0.1:7000', { host: '127.0.0.1', port: 7001 }], options);
  await new ClusterClient(['127.0.0.1:7000'], { config: { auto_pipeline: false, pipeline_max_commands: 64, pipeline_max_writes: 2 } }).ready();
  const router: Router = client.router!;
  const node: string = router.node('user:1');
  const address: string = client.addressOf(node);
  const value: string | null = await client.get('user:1');
  const ok: string | null = await client.set('user:1', value ?? 'v');
  const removed: number = await client.del(new Uint8Array([1, 2]));
  const replicas: number = await client.setAndWait('user:1', 'v', 1, 500);
  await client.mset({ '{u}:a': '1', '{u}:b': 2 });
  await client.mset(new Map([['{u}:a', '1']]));
  const values: Array<string | null> = await client.mget(['a', 'b']);
  const piped: Array<string | null> = await client.pipelineGet(new Set(['a', 'b']));
  await client.pipelineSet([['a', '1'], ['b', 2]]);
  const reply: unknown = await client.execute(['HSET', 'h', 'f', 1], { key: 'h' });
  await (await client.connection(address, { readonly: true })).call('PING');
  const stats: ClusterStats = client.stats;
  const counts: number[] = [stats.commands, stats.moved, stats.ask, stats.refreshes, stats.errors, stats.longestRedirectChain];
  const kinds: Record<string, number> = stats.errorKinds;
  stats.reset();
  const refreshed: boolean = await client.refresh();
  await client.close();
  const errors: Error[] = [new TooManyRedirects('x'), new ConnectionError('y', { cause: 1 })];
  void [refreshed, ok, removed, replicas, values, piped, reply, counts, kinds, errors];
}
