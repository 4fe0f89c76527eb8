// Type-checked with `tsc --noEmit` (test.sh): the committed index.d.ts, seen through the
// package's own `exports` the way a user's TypeScript sees it. Never executed.
import {
  Router, ShardrouteError, apply, decodeDictionary, diff, encodeDictionary, hashKey, jump, moduloMoves,
} from 'shardroute-wasm';
import type { DecodedId, Diff, Key, KeyMove, Location, SaltedKey } from 'shardroute-wasm';

const router: Router = new Router('{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}');
const fromObject: Router = new Router({ format: 'shardroute/1', epoch: 2n, nodes: [{ id: 'a' }], strategy: { type: 'jump' } });

const keys: Key[] = ['user:1', new Uint8Array([1, 2]), 42n, 42];
const shard: number = router.route(keys[0]);
const owner: string = router.node(42n);
const preference: string[] = router.replicas('user:1', 1);
const shards: Uint32Array = router.routeMany(keys);
const epoch: bigint = fromObject.epoch;
const canonical: string = router.toJson();

const hash: bigint = hashKey('user:1');
const crc: bigint = hashKey('user:1', { function: 'crc32' });
const tagged: bigint = hashKey(new Uint8Array(), '{"hash_tag": "redis"}');
const bucket: number = jump(hash, 10) + jump('18446744073709551615', 3);

const scan: number[] = router.shardsForRange('a', 'b').concat(router.shardsForRange(1n), router.shardsForRange(0, null));
const decoded: DecodedId = router.decodeId(42n);
const decodedFromText: DecodedId = router.decodeId('42');
const decodedShard: number = decoded.shard;
const field: bigint | undefined = decoded.fields['sequence'];
const location: Location = router.locate('user:1');
const address: string | null = location.address;
const zone: string | null = location.zone;
const names: Record<string, string> = location.names;
const fanout: number = router.fanout('user:1');
// Salted keys mirror the key's type.
const saltedText: string = router.saltedKey('user:1', 3);
const saltedBytes: Uint8Array = router.saltedKey(new Uint8Array([1]), 3);
const saltedInt: bigint = router.saltedKey(42, 0) + router.saltedKey(42n, 0);
const saltedAny: SaltedKey = router.saltedKey(keys[1], 0);
const textPairs: Array<[string, number]> = router.saltedKeys('user:1');
const bytePairs: Array<[Uint8Array, number]> = router.saltedKeys(new Uint8Array([1]));
const intPairs: Array<[bigint, number]> = router.saltedKeys(7);
const anyPairs: Array<[SaltedKey, number]> = router.saltedKeys(keys[2]);
const applied: Record<string, unknown> = apply('{}', { op: 'add_node', node: { id: 'b' } });
const appliedFromObject: Record<string, unknown> = apply({ format: 'shardroute/1' }, '{"op": "remove_node", "id": "a"}');
const moves: number[][] = moduloMoves(2, 4);
const reader: string = router.routeRead('user:1');
const writers: string[] = router.routeWrite(42n);
const next: Router = router.replace({ format: 'shardroute/1', epoch: 2n, nodes: [{ id: 'a' }], strategy: { type: 'jump' } });
const nextFromText: Router = next.replace(next.toJson());
const report: Diff = diff(router, next, keys);
const firstMove: KeyMove | undefined = report.keys[0];
const movedKeys: number = report.moved + report.total + report.moved_ppm;
const flow: { from: string; to: string; keys: number } | undefined = report.flows[0];
const encoded: Uint8Array = encodeDictionary('{}');
const encodedFromObject: Uint8Array = encodeDictionary({ format: 'shardroute/1' });
const decodedText: string = decodeDictionary(encoded);

try {
  router.route('\ud800');
} catch (err) {
  if (err instanceof ShardrouteError) {
    const code: string = err.code;
    const message: string = err.message;
    const asError: Error = err;
    void [code, message, asError];
  }
}

// @ts-expect-error: a boolean is not a key
router.route(true);
// @ts-expect-error: the epoch is a bigint, never a number
const wrong: number = router.epoch;
// @ts-expect-error: jump takes a bigint or a decimal string, not a number
jump(1, 10);
// @ts-expect-error: the epoch is read-only
router.epoch = 3n;
// @ts-expect-error: a text key salts to a string, never bytes
const notBytes: Uint8Array = router.saltedKey('user:1', 1);
// @ts-expect-error: decodeId takes a bigint or a decimal string, not a number
router.decodeId(42);
// @ts-expect-error: decoded fields are bigints
const notNumber: number = decoded.fields['sequence'];
// @ts-expect-error: moduloMoves takes numbers
moduloMoves(2n, 4n);
// @ts-expect-error: diff takes Routers, not documents
diff('{}', next, keys);
// @ts-expect-error: decodeDictionary takes bytes, not text
decodeDictionary('{}');
// @ts-expect-error: a write may go to two nodes: an array, never one id
const oneWriter: string = router.routeWrite('user:1');

void [shard, owner, preference, shards, epoch, canonical, crc, tagged, bucket, wrong];
void [scan, decodedFromText, decodedShard, field, address, zone, names, fanout, saltedText, saltedBytes, saltedInt,
  saltedAny, textPairs, bytePairs, intPairs, anyPairs, applied, appliedFromObject, moves, notBytes, notNumber];
void [reader, writers, nextFromText, firstMove, movedKeys, flow, encodedFromObject, decodedText, oneWriter];

// Batch calls.
const fromU64s: Uint32Array = new Router('{}').routeU64s(new BigUint64Array([1n, 2n]));
const fromPacked: Uint32Array = new Router('{}').routePacked(new Uint8Array(2), new Uint32Array([0, 1, 2]));
const nodeIds: string[] = new Router('{}').nodeMany(['a', new Uint8Array(1), 1n, 2]);
void fromU64s;
void fromPacked;
void nodeIds;
