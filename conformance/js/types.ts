// Uses every export of a package with the types its index.d.ts declares; type-checked by
// `tsc --noEmit` in each package (test.sh), never run. `shardroute-package` is the package
// under test: each package's tsconfig.json maps it to the package's own index.d.ts, the
// file it ships. Lines marked @ts-expect-error must stay errors.
import {
  Action, ClusterSession, Command, Migration, MigrationSession, Offered, Router, ShardrouteError, TopologyFollower, apply,
  decodeDictionary, diff, encodeDictionary, followerDefaults, hashKey, jump, moduloMoves, parseAddress, parseRedirect,
  sessionDefaults,
} from 'shardroute-package';
import type {
  Access, CopyBatch, DecodedId, Diff, Endpoint, Flow, FollowerConfig, FollowerStats, Key, KeyMove, LazySteps, Location,
  MigrationAction, MigrationMode, Milliseconds, Misplaced, Move, MovingShard, NodeGroup, PlanGroup, Publish, Redirect, Revision,
  SaltedKey, SessionConfig, SessionStats, Stats, Unreachable, WritePlan,
} from 'shardroute-package';

const router: Router = new Router('{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}');
const fromObject: Router = new Router({ format: 'shardroute/1', epoch: 2n, nodes: [{ id: 'a' }], strategy: { type: 'jump' } });

const keys: Key[] = ['user:1', new Uint8Array([1, 2]), 42n, 42];
const shard: number = router.route(keys[0] ?? 'user:1');
const node: string = router.node(42n);
const replicas: string[] = router.replicas(new Uint8Array([1]), 1);
const preference: string[] = router.replicas('user:1', 1);
const shards: Uint32Array = router.routeMany(keys);
const frozen: readonly Key[] = Object.freeze(['a', 'b']);
const moreShards: Uint32Array = fromObject.routeMany(frozen);
const epoch: bigint = router.epoch;
const objectEpoch: bigint = fromObject.epoch;
const text: string = router.toJson();

const range: number[] = router.shardsForRange('a', 'b');
const toEnd: number[] = router.shardsForRange(new Uint8Array([1]));
const toEndNull: number[] = router.shardsForRange(1n, null);
const scan: number[] = range.concat(router.shardsForRange(1n), router.shardsForRange(0, null));
const decoded: DecodedId = router.decodeId(42n);
const decodedText: DecodedId = router.decodeId('42');
const decodedShard: number = decoded.shard;
const decodedField: bigint | undefined = decoded.fields['timestamp'];
const location: Location = router.locate('user:1');
const locationParts: [number, string, string | null, string | null, string | undefined] = [
  location.shard, location.node, location.address, location.zone, location.names['database']];
const names: Record<string, string> = location.names;
const fanout: number = router.fanout('user:1');
// Salted keys mirror the key's type.
const saltedText: string = router.saltedKey('user:1', 3);
const saltedBytes: Uint8Array = router.saltedKey(new Uint8Array([1]), 0);
const saltedInt: bigint = router.saltedKey(7, 0) + router.saltedKey(42n, 0);
const saltedAny: SaltedKey = router.saltedKey(keys[0] ?? 'k', 1);
const saltedTexts: Array<[string, number]> = router.saltedKeys('user:1');
const saltedBytesList: Array<[Uint8Array, number]> = router.saltedKeys(Uint8Array.of(1));
const saltedInts: Array<[bigint, number]> = router.saltedKeys(7n);
const saltedNumbers: Array<[bigint, number]> = router.saltedKeys(7);
const saltedAnyList: Array<[SaltedKey, number]> = router.saltedKeys(keys[1] ?? 'k');
const applied: Record<string, unknown> = apply(router.toJson(), { op: 'add_node', node: { id: 'b' } });
const appliedText: Record<string, unknown> = apply({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: { type: 'jump' } },
  '{"op": "remove_node", "id": "a"}');
const moves: number[][] = moduloMoves(2, 4);

const readNode: string = router.routeRead('user:1');
const writeNodes: string[] = router.routeWrite(42n);
const replaced: Router = router.replace({ format: 'shardroute/1', epoch: 2n, nodes: [{ id: 'a' }], strategy: { type: 'jump' } });
const replacedText: Router = replaced.replace(replaced.toJson());
const moved: Diff = diff(router, replaced, keys, { perKey: true });
const movedFrozen: Diff = diff(router, replaced, frozen);
const counted: Diff = diff(router, replaced, keys, null);
const firstMove: KeyMove | undefined = moved.keys?.[0];
const moveParts: [number, number, string, string, boolean] | undefined =
  firstMove && [firstMove.oldShard, firstMove.newShard, firstMove.oldNode, firstMove.newNode, firstMove.moved];
const flow: Flow | undefined = moved.flows[0];
const flowParts: [string, string, number] | undefined = flow && [flow.from, flow.to, flow.keys];
const inlineFlow: { from: string; to: string; keys: number } | undefined = moved.flows[0];
const totals: [number, number, number] = [moved.total, moved.moved, moved.movedPpm];
const encoded: Uint8Array = encodeDictionary('{"format": "shardroute/1"}');
const encodedObject: Uint8Array = encodeDictionary({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: { type: 'vbucket' } });
const decodedDictionary: string = decodeDictionary(encoded);

const hash: bigint = hashKey('user:1');
const crc: bigint = hashKey('user:1', { function: 'crc32' });
const seeded: bigint = hashKey(7n, '{"function": "siphash-2-4"}');
const tagged: bigint = hashKey(new Uint8Array(), '{"hash_tag": "redis"}');
const byDefault: bigint = hashKey(Uint8Array.of(1), null);
const bucket: number = jump(hash, 10);
const fromText: number = jump('18446744073709551615', 10);

// Redis Cluster clients.
const replicaRead: string = router.readReplica('user:1') + router.readReplica(7n, 3);
const slot: number = router.sameSlot(['{user:1}.name', new Uint8Array([1]), 7n, 7]);
const slotFrozen: number = router.sameSlot(frozen);
const spread: Stats = router.stats(['a', 7n, 7, new Uint8Array([1])]);
const spreadParts: [number | string, number, string, number | string] = [spread.total, spread.cv, spread.nodes[0]?.id ?? '', spread.nodes[0]?.load ?? 0];
const groups: NodeGroup[] = router.groupByNode(keys);
const group: { node: string; indices: number[] } | undefined = router.groupByNode(frozen)[0];
const redirect: Redirect = parseRedirect('MOVED 3999 127.0.0.1:6381');
const redirectKind: 'MOVED' | 'ASK' = redirect.kind;
const afterMoved: Router = router.moved(redirect.slot, redirect.address);
const askTarget: string = router.ask(parseRedirect('ASK 1 h:1').slot, 'h:1');

// Migrations.
const migration: Migration = new Migration(router, replaced);
const fromDictionary: Migration = Migration.ofDictionary(router);
const sides: [Router, Router] = [migration.before, fromDictionary.after];
const move: Move | null = migration.moves('user:1');
const movedParts: [string, string] | null = move && [move.from, move.to];
const inlineMove: { from: string; to: string } | null = migration.moves(42n);
const writeTarget: string = migration.writeTarget(7);
const readTargets: string[] = migration.readTargets(Uint8Array.of(1)).concat(migration.readTargets('k', true));
const movingShards: MovingShard[] = migration.movingShards();
const movingShard: { shard: number; from: string; to: string } | undefined = movingShards[0];
const scanNodes: string[] = migration.scanNodes();
const movingKeys: number[] = migration.movingKeys(keys).concat(migration.movingKeys(frozen));
const owner: string = router.shardOwner(0);

// Batch calls.
const fromU64s: Uint32Array = router.routeU64s(new BigUint64Array([1n, 2n]));
const fromPacked: Uint32Array = router.routePacked(new Uint8Array(2), new Uint32Array([0, 1, 2]));
const nodeIds: string[] = router.nodeMany(['a', new Uint8Array(1), 1n, 2]);

// The Redis Cluster session.
const defaults: Required<SessionConfig> = sessionDefaults();
const redirectsAllowed: number = defaults.max_redirects;
const replicaReads: boolean = defaults.read_from_replicas;
const session: ClusterSession = new ClusterSession(['127.0.0.1:7000', '[::1]:7001'], { max_redirects: 2, read_from_replicas: true });
const withDefaults: ClusterSession = new ClusterSession(Object.freeze(['h:1']), null);
const copied: ClusterSession = new ClusterSession(['h:1'], session.config);
const access: Access = 'read';
const now: Milliseconds = 1n;
const begun: Command = session.command(['{user:1}.name', new Uint8Array([1]), 7n, 7], access, 0);
const begunFrozen: Command = withDefaults.command(frozen, 'write', now);
const commandSlot: number = begun.slot + begun.redirects;
const polled: Action = session.poll(begun, 0);
const kind: 'send' | 'wait' | 'refresh' | 'done' | 'fail' = polled.kind;
const target: [string | null, string | null, number | null, boolean | null, boolean | null] =
  [polled.address, polled.host, polled.port, polled.asking, polled.readonly];
const until: bigint | null = polled.untilMs;
const delay: number | null = polled.delayMs;
const failure: [string | null, string | null, ShardrouteError | null] = [polled.code, polled.message, polled.error()];
const why: Unreachable = 'timeout';
const afterFailure: Action[] = [
  session.succeeded(begun, 1n), session.failed(begun, 'MOVED 1 h:1', ['ReplyError'], 2),
  session.failed(begun, 'x', Object.freeze(['ECONNRESET']), 2n), session.unreachable(begun, why, 3),
];
const candidates: string[] = session.refreshCandidates();
session.refreshed([{ slots: [0, 16383], nodes: [{ id: 'a', ip: '127.0.0.1', port: 7000, role: 'master' }] }], 4);
session.refreshFailed(5n);
const due: boolean = session.wantsRefresh(6);
const plan: PlanGroup[] = session.plan(keys, 'write');
const planned: { address: string; readonly: boolean; slots: Array<[number, number[]]> } | undefined = plan[0];
const stats: SessionStats = session.stats;
const counters: [bigint, bigint, number, bigint | undefined] =
  [stats.commands, stats.moved, stats.longestRedirectChain, stats.errors['try_again']];
session.resetStats();
const sessionRouter: Router | null = session.router;
const seed: Endpoint = parseAddress('[::1]:7000');
const seedParts: [string, number] = [seed.host, parseAddress(redirect.address).port];

// The topology follower.
const followerConfig: Required<FollowerConfig> = followerDefaults();
const firstWait: number = followerConfig.reconnect_first_ms + followerConfig.reconnect_max_ms;
const follower: TopologyFollower = new TopologyFollower({ reconnect_first_ms: 10 });
const defaultFollower: TopologyFollower = new TopologyFollower(null);
const copiedFollower: TopologyFollower = new TopologyFollower(follower.config);
const revision: Revision = 7n;
const offered: Offered = follower.offer({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: { type: 'jump' } }, 7, 0);
const offeredKind: 'installed' | 'unchanged' | 'refused' = offered.kind;
const offeredParts: [bigint | null, string | null, string | null, ShardrouteError | null] =
  [offered.epoch, offered.code, offered.message, offered.error()];
const offeredAgain: Offered[] = [follower.offer(router.toJson(), revision, now), follower.offerDictionary(encodedObject, 8n, 1), follower.offerBytes(encodedObject, 9n, 1)];
const reconnectAt: bigint = follower.disconnected(2) + defaultFollower.disconnected(3n);
follower.connected();
const write: Publish = follower.publish(router.toJson());
const writeParts: [bigint | null, bigint, string] = [write.expectedRevision, write.epoch, write.document];
const inlineWrite: { expectedRevision: bigint | null; epoch: bigint; document: string } = copiedFollower.publish(fromObject.toJson());
const followed: [Router | null, bigint | null] = [follower.router, follower.revision];
const followerStats: FollowerStats = follower.stats;
const followerCounters: [bigint, bigint, bigint, bigint, bigint, bigint | undefined] = [followerStats.offered,
  followerStats.installed, followerStats.unchanged, followerStats.disconnects, followerStats.refused['stale_epoch'] ?? 0n,
  followerStats.refused['no_nodes']];
// @ts-expect-error: a revision is a number or a bigint, not text
follower.offer(router.toJson(), '7', 0);
// @ts-expect-error: offerDictionary takes bytes, not a document
follower.offerDictionary(router.toJson(), 1, 0);
// @ts-expect-error: the reconnect time is a bigint (a u64), never a number
const reconnectNumber: number = follower.disconnected(0);
// @ts-expect-error: an offered epoch is a bigint
const offeredNumber: number | null = offered.epoch;
// @ts-expect-error: a config's fields are the core's names
new TopologyFollower({ reconnectFirstMs: 10 });
// @ts-expect-error: outcomes are made by the follower
new Offered();
// @ts-expect-error: follower counters are bigints
const offeredCount: number = followerStats.offered;

// The migration session.
const mode: MigrationMode = 'lazy';
const migrationSession: MigrationSession = new MigrationSession(migration, mode);
const backgroundSession: MigrationSession = new MigrationSession(fromDictionary, 'background');
const fenceEpoch: bigint = migrationSession.fenceEpoch;
const readPlan: string[] = migrationSession.readPlan('user:1').concat(migrationSession.readPlan(7n, true));
const writePlan: WritePlan = migrationSession.writePlan(7);
const writePlanParts: [string, bigint] = [writePlan.node, writePlan.fenceEpoch];
const lazySteps: LazySteps | null = migrationSession.lazySteps(new Uint8Array([7]));
const lazyParts: [string, string, string, bigint] | null = lazySteps === null ? null
  : [lazySteps.readFrom, lazySteps.writeTo, lazySteps.retireFrom, lazySteps.fenceEpoch];
const inlineSteps: { readFrom: string; writeTo: string; retireFrom: string; fenceEpoch: bigint } | null =
  migrationSession.lazySteps(7);
const batch: CopyBatch = backgroundSession.copyBatch(0, 16);
const batchUnit: [number, string, string] | undefined = batch.units[0];
const resumeAt: number | null = batch.next;
const refreshed: 'refresh' = migrationSession.fenced(3) === 'refresh' ? backgroundSession.fenced(11n) : 'refresh';
const routed: MigrationSession = MigrationSession.ofTopology(router, null, migration.before);
const routedMode: 'plain' | 'background' | 'lazy' | 'expiration' | 'catch-up' = MigrationSession.ofTopology(router).mode;
const expiring: MigrationSession = new MigrationSession(migration, 'expiration', 60_000);
const expiringUntil: bigint | null = new MigrationSession(migration, 'expiration', 2n ** 63n).untilMs;
const readAt: string[] = expiring.readPlanAt(7, 59_999).concat(expiring.readPlanAt('user:1', 60_000n, true));
const wakeAt: bigint | null = expiring.nextDeadline(0);
const retire: MigrationAction[] = expiring.actions(60_000).concat(backgroundSession.actions(0n, true));
const retireParts: ['retire', string] | undefined = retire[0] && [retire[0].kind, retire[0].node];
const found: Misplaced = MigrationSession.misplaced(router, 'a', [7, 'user:1', 7n]);
const foundParts: [number[], number, number] = [found.misplaced, found.count, MigrationSession.misplaced(router, 3, []).checked];
// @ts-expect-error: a holder is a node id or a shard number, not a Router
MigrationSession.misplaced(router, router, [7]);
// @ts-expect-error: a time is a number or a bigint, not text
expiring.nextDeadline('0');
const routedScan: string[] = routed.scanNodes();
// @ts-expect-error: previous is a Router (or null), not a document
MigrationSession.ofTopology(router, {});
// @ts-expect-error: a mode is 'background' or 'lazy'
new MigrationSession(migration, 'eager');
// @ts-expect-error: a session is made of a Migration, not a Router
new MigrationSession(router, 'lazy');
// @ts-expect-error: the fence epoch is a bigint (a u64), never a number
const fenceNumber: number = migrationSession.fenceEpoch;
// @ts-expect-error: a plan's fields are camelCase, never the core's snake_case names
const snakeEpoch: bigint = writePlan.fence_epoch;
// @ts-expect-error: a cursor is a number (a u32), not a bigint
backgroundSession.copyBatch(0n, 16);
// @ts-expect-error: a fence's epoch is a number or a bigint, not text
migrationSession.fenced('3');
const lazyGroups: { steps: LazySteps; indices: number[] }[] = migrationSession.lazyGroups([7, 'user:1', 7n]);
const nextStart: bigint = migrationSession.resumeAt(1_000, 1_010n) + backgroundSession.resumeAt(0n, 1, 250, null)
  + migrationSession.resumeAt(0, 1, null, 20n);
// @ts-expect-error: the next start is a bigint (a u64), never a number
const nextStartNumber: number = migrationSession.resumeAt(0, 1);
// @ts-expect-error: a duty is a number (thousandths), not a bigint
migrationSession.resumeAt(0, 1, 50n);

function describeError(err: unknown): string {
  if (err instanceof ShardrouteError) {
    const code: string = err.code;
    const asError: Error = err;
    const message: string = err.message;
    return `${code}: ${asError.message} ${message}`;
  }
  return String(err);
}
const handMade = new ShardrouteError('invalid_key', 'made by hand', { cause: new Error('inner') });

// @ts-expect-error: booleans are not keys
router.route(true);
// @ts-expect-error: the replica count is a number
router.replicas('k', 2n);
// @ts-expect-error: the epoch is a bigint, never a number
const wrong: number = router.epoch;
// @ts-expect-error: jump takes a bigint or a decimal string, not a number
jump(1, 10);
// @ts-expect-error: the epoch is read-only
router.epoch = 3n;
// @ts-expect-error: ids are bigints or decimal strings, not numbers
router.decodeId(42);
// @ts-expect-error: decoded fields are bigints
const notNumber: number = decoded.fields['sequence'];
// @ts-expect-error: the salt is a number
router.saltedKey('k', 1n);
// @ts-expect-error: a string key salts to a string
const notBytes: Uint8Array = router.saltedKey('k', 0);
// @ts-expect-error: absent address and zone are null, not undefined
const address: string | undefined = location.address;
// @ts-expect-error: moduloMoves takes numbers
moduloMoves(2n, 4n);
// @ts-expect-error: diff takes Routers, not documents
diff('{}', router, keys);
// @ts-expect-error: perKey is a boolean
diff(router, router, keys, { perKey: 1 });
// @ts-expect-error: routeWrite returns an array of node ids
const oneWriter: string = router.routeWrite('k');
// @ts-expect-error: decodeDictionary takes bytes, not text
decodeDictionary('5352');
// @ts-expect-error: the turn is a number
router.readReplica('k', 1n);
// @ts-expect-error: a slot is a number
router.moved('1', 'h:1');
// @ts-expect-error: a redirect's kind is MOVED or ASK
const notKind: 'moved' = redirect.kind;
// @ts-expect-error: groups are objects, not pairs
const notPair: [string, number[]] | undefined = groups[0];
// @ts-expect-error: a migration takes Routers, not documents
new Migration(router.toJson(), router);
// @ts-expect-error: a key that stays moves to null, not undefined
const notUndefined: Move | undefined = migration.moves('k');
// @ts-expect-error: moved is a boolean
migration.readTargets('k', 1);
// @ts-expect-error: the sides are read-only
migration.before = router;
// @ts-expect-error: moving shards are objects, not triples
const notTriple: [number, string, string] | undefined = movingShards[0];
// @ts-expect-error: a shard is a number
router.shardOwner(0n);
// @ts-expect-error: access is 'read' or 'write'
session.command(['k'], 'append', 0);
// @ts-expect-error: a time is a number or a bigint, not text
session.poll(begun, '1');
// @ts-expect-error: untilMs is a bigint (a u64), never a number
const untilNumber: number | null = polled.untilMs;
// @ts-expect-error: stats counters are bigints
const commandsNumber: number = stats.commands;
// @ts-expect-error: why is refused, reset or timeout
session.unreachable(begun, 'gone', 0);
// @ts-expect-error: names are an array
session.failed(begun, 'x', 'MovedError', 0);
// @ts-expect-error: commands are made by ClusterSession.command
new Command();
// @ts-expect-error: a config's fields are the core's names
new ClusterSession(['h:1'], { maxRedirects: 2 });
// @ts-expect-error: an action's fields are read-only
polled.kind = 'done';

export const used = [shard, node, replicas, preference, shards, moreShards, epoch, objectEpoch, text, crc, seeded, tagged,
  byDefault, bucket, fromText, describeError, handMade, range, toEnd, toEndNull, scan, decodedText, decodedShard,
  decodedField, locationParts, names, fanout, saltedText, saltedBytes, saltedInt, saltedAny, saltedTexts,
  saltedBytesList, saltedInts, saltedNumbers, saltedAnyList, applied, appliedText, moves, readNode, writeNodes,
  replacedText, movedFrozen, counted, moveParts, flowParts, inlineFlow, totals, encodedObject, decodedDictionary, fromU64s,
  fromPacked, nodeIds, wrong, notNumber, notBytes, address, oneWriter, replicaRead, slot, slotFrozen, group,
  redirectKind, afterMoved, askTarget, notKind, notPair, sides, movedParts, inlineMove, writeTarget, readTargets,
  movingShard, scanNodes, spreadParts, movingKeys, owner, notUndefined, notTriple, redirectsAllowed, replicaReads, copied, begunFrozen,
  commandSlot, kind, target, until, delay, failure, afterFailure, candidates, due, planned, counters, sessionRouter,
  untilNumber, commandsNumber, seedParts, firstWait, offeredKind, offeredParts, offeredAgain, reconnectAt, writeParts,
  inlineWrite, followed, followerCounters, reconnectNumber, offeredNumber, offeredCount, fenceEpoch, readPlan,
  writePlanParts, lazyParts, inlineSteps, lazyGroups, nextStart, nextStartNumber, batchUnit, resumeAt, refreshed, fenceNumber, snakeEpoch, routedMode, routedScan,
  expiringUntil, readAt, wakeAt, retireParts, foundParts];
