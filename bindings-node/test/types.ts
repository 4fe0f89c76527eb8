// Uses every export of the package with the types index.d.ts declares; checked by
// `tsc --noEmit` (test.sh), never run. Lines marked @ts-expect-error must stay errors.
import { Router, ShardrouteError, hashKey, jump } from '../index.js';
import type { Key } from '../index.js';

const router: Router = new Router('{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}');
const fromObject = new Router({ format: 'shardroute/1', epoch: 2n, nodes: [{ id: 'a' }], strategy: { type: 'jump' } });

const keys: Key[] = ['user:1', new Uint8Array([1, 2]), 42n, 42];
const shard: number = router.route(keys[0] ?? 'user:1');
const node: string = router.node(42n);
const replicas: string[] = router.replicas(new Uint8Array([1]), 1);
const shards: Uint32Array = router.routeMany(keys);
const frozen: readonly Key[] = Object.freeze(['a', 'b']);
const moreShards: Uint32Array = fromObject.routeMany(frozen);
const epoch: bigint = router.epoch;
const text: string = router.toJson();

const hash: bigint = hashKey('user:1');
const crc: bigint = hashKey('user:1', { function: 'crc32' });
const seeded: bigint = hashKey(7n, '{"function": "siphash-2-4"}');
const byDefault: bigint = hashKey(Uint8Array.of(1), null);
const bucket: number = jump(hash, 10);
const fromText: number = jump('18446744073709551615', 10);

function describeError(err: unknown): string {
  if (err instanceof ShardrouteError) {
    const code: string = err.code;
    const asError: Error = err;
    return `${code}: ${asError.message}`;
  }
  return String(err);
}
const handMade = new ShardrouteError('invalid_key', 'made by hand', { cause: new Error('inner') });

// @ts-expect-error: booleans are not keys
router.route(true);
// @ts-expect-error: the replica count is a number
router.replicas('k', 2n);
// @ts-expect-error: jump takes a bigint or a decimal string
jump(1, 10);
// @ts-expect-error: the epoch is read-only
router.epoch = 3n;

export const used = [shard, node, replicas, shards, moreShards, epoch, text, crc, seeded, byDefault, bucket, fromText, describeError, handMade];
