// What `shardroute-wasm/route` and `shardroute-wasm/route/http` declare, as an edge routing
// tier uses them, and that route.d.ts leaves out the calls the route build does not have
// (each `@ts-expect-error` fails the check if the call were declared): type-checked by
// `tsc --noEmit -p tsconfig.web.json` (test.sh), never run.
import {
  Migration, MigrationSession, Offered, Router, ShardrouteError, TopologyFollower, decodeDictionary, followerDefaults, init,
  initSync, type InitInput, type LazySteps, type Strategy, type Topology, type WritePlan,
} from 'shardroute-wasm/route';
import * as route from 'shardroute-wasm/route';
import { HttpFollower } from 'shardroute-wasm/route/http';

const TOPOLOGY: Topology = { format: 'shardroute/1', epoch: 1n, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'modulo', one_based: true } };

export async function tier(wasm: URL, module: WebAssembly.Module, dictionary: Uint8Array): Promise<string[]> {
  await init(wasm);
  initSync(module);
  const inputs: InitInput[] = [wasm, module, dictionary];
  const router = new Router(TOPOLOGY);
  const shard: number = router.route(42n);
  const owner: string = router.node('user:1');
  const shards: Uint32Array = router.routeMany(['a', new Uint8Array([1]), 7, 8n]);
  const epoch: bigint = router.epoch;
  const next: Router = router.replace({ ...TOPOLOGY, epoch: 2 });
  const fromBytes = new Router(decodeDictionary(dictionary));
  const reads: string[] = [fromBytes.routeRead('k'), ...fromBytes.routeWrite('k'), fromBytes.readReplica('k', 1), router.shardOwner(1)];
  const session = new MigrationSession(new Migration(router, next), 'lazy');
  const saltedReads: string[] = new Migration(router, next).readKeys('celebrity');
  const saltedWrite: bigint = new Migration(router, next).writeKey(42n, 3);
  const plan: WritePlan = session.writePlan('user:1');
  const steps: LazySteps | null = session.lazySteps('user:1');
  const order: string[] = session.readPlan('user:1', false);
  const routing = MigrationSession.ofTopology(next, router, null);
  const routingMode: 'plain' | 'background' | 'lazy' | 'expiration' | 'catch-up' = routing.mode;
  const expiring = new MigrationSession(new Migration(router, next), 'expiration', 60_000);
  const readAt: string[] = expiring.readPlanAt('user:1', 59_999n, false);
  const wakeAt: bigint | null = expiring.nextDeadline(0);
  const moving = Migration.ofDictionary(fromBytes);
  const follower = new TopologyFollower(followerDefaults());
  const offered: Offered = follower.offer(TOPOLOGY, 1, performance.now() | 0);
  follower.offerBytes(dictionary, 2n, 0);
  const held: Router | null = follower.router;
  const http = await HttpFollower.start('https://cdn.example.com/topology.json', { fetch, onChange: (f) => f.router?.epoch });
  const httpRouter: Router | null = http.router;
  http.close();
  try {
    router.route('\ud800');
  } catch (err) {
    if (err instanceof ShardrouteError) reads.push(err.code);
  }
  // @ts-expect-error the route build has no `locate`
  router.locate('k');
  // @ts-expect-error nor `moved`
  router.moved(1, 'h:1');
  // @ts-expect-error nor `groupByNode`
  router.groupByNode(['k']);
  // @ts-expect-error nor `stats`
  router.stats(['k']);
  // @ts-expect-error nor `routeU64s`
  router.routeU64s(new BigUint64Array(1));
  // @ts-expect-error nor `movingShards`
  moving.movingShards();
  // @ts-expect-error nor `scanNodes`
  moving.scanNodes();
  // @ts-expect-error nor `copyBatch`
  session.copyBatch(0, 10);
  // @ts-expect-error nor the consistency check
  MigrationSession.misplaced(router, 'a', [1]);
  // @ts-expect-error nor the retire step
  expiring.actions(60_000);
  // @ts-expect-error nor `publish`
  follower.publish(TOPOLOGY);
  // @ts-expect-error nor `apply`
  route.apply(TOPOLOGY, { op: 'add_node', node: { id: 'c' } });
  // @ts-expect-error nor `ClusterSession`
  new route.ClusterSession(['127.0.0.1:7000']);
  // @ts-expect-error nor `hashKey`
  route.hashKey('k');
  // Its `Topology` takes the strategies it routes, and only those: each `@ts-expect-error`
  // below fails the check if route.d.ts accepted the strategy (index.d.ts's `Strategy` does).
  const strategies: Strategy[] = [{ type: 'modulo', one_based: true }, { type: 'jump' }, { type: 'vbucket', vbuckets: 64 },
    { type: 'redis_cluster' }];
  for (const strategy of strategies) reads.push(new Router({ ...TOPOLOGY, strategy }).node('k'));
  // @ts-expect-error `ring` is the full package's
  new Router({ ...TOPOLOGY, strategy: { type: 'ring' } });
  // @ts-expect-error so is `rendezvous`
  router.replace({ ...TOPOLOGY, epoch: 3, strategy: { type: 'rendezvous' } });
  // @ts-expect-error and `maglev`, offered to a follower
  follower.offer({ ...TOPOLOGY, strategy: { type: 'maglev' } }, 3, 0);
  return [String(shard), owner, String(shards.length), String(epoch), plan.node, String(steps?.writeTo), routingMode, ...order,
    ...reads, ...saltedReads, String(saltedWrite), offered.kind, String(held?.epoch), String(httpRouter?.epoch),
    String(inputs.length), ...readAt, String(wakeAt)];
}
