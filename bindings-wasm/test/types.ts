// Type-checked with `tsc --noEmit` (test.sh): the committed index.d.ts, seen through the
// package's own `exports` the way a user's TypeScript sees it. Never executed.
import { Router, ShardrouteError, hashKey, jump } from 'shardroute-wasm';
import type { Key } from 'shardroute-wasm';

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

void [shard, owner, preference, shards, epoch, canonical, crc, tagged, bucket, wrong];
