// Type declarations of the `shardroute` package (handwritten; test/api.test.mjs checks
// that they name exactly the module's exports, and `tsc --noEmit` checks test/types.ts
// against them).

/**
 * A routing key.
 *
 * - `string`: its UTF-8 bytes; a string with a lone surrogate is rejected (`invalid_key`).
 * - `Uint8Array` (a `Buffer` too): its bytes.
 * - `bigint`: an unsigned 64-bit integer key, `0n` up to `2n ** 64n - 1n`.
 * - `number`: the same integer key, for safe non-negative integers only (up to
 *   `Number.MAX_SAFE_INTEGER`); pass larger ids as `bigint`.
 *
 * The integer `42` and the string `"42"` are different keys.
 */
export type Key = string | Uint8Array | bigint | number;

/**
 * A router: a topology document compiled for lookups. The same document gives the same
 * answers in every language shardroute supports.
 */
export declare class Router {
  /**
   * Parses, validates and compiles a topology document: its JSON text, or the parsed
   * object (serialized with `JSON.stringify`; `bigint` fields become decimal strings).
   *
   * @throws {ShardrouteError} `invalid_topology`, `no_nodes` or `limit_exceeded`.
   */
  constructor(topology: string | object);
  /**
   * The shard of `key`: a node index for `modulo`, `jump`, `ring` and `rendezvous`
   * (`1..=n` for 1-based modulo), the vbucket number for `vbucket`.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  route(key: Key): number;
  /**
   * The id of the node that owns `key`.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  node(key: Key): string;
  /**
   * `count` distinct node ids for `key` in preference order, owner first:
   * `replicas(key, 1)[0] === node(key)`.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `count` is not an
   *   integer from 1 to the number of nodes the topology can give.
   */
  replicas(key: Key, count: number): string[];
  /**
   * The shards of many keys, in order: the same as `route` on each.
   *
   * @throws {ShardrouteError} `invalid_key` (the message names the key's index);
   *   `invalid_argument` when `keys` is not an array.
   */
  routeMany(keys: readonly Key[]): Uint32Array;
  /** The topology's epoch. */
  get epoch(): bigint;
  /** The canonical JSON text of the topology, byte for byte the same in every language. */
  toJson(): string;
}

/**
 * The unsigned 64-bit hash of `key` under a hashing spec (the `hashing` section of a
 * topology document, as JSON text or an object); the default spec (SipHash-2-4, key
 * bytes `00..0f`) when omitted or `null`.
 *
 * @throws {ShardrouteError} `invalid_key`; `invalid_topology` for a bad spec.
 */
export declare function hashKey(key: Key, hashing?: string | object | null): bigint;

/**
 * Jump consistent hash (Lamping & Veach, 2014): the bucket in `0..buckets` of a 64-bit
 * hash, given as a `bigint` or a decimal string.
 *
 * @throws {ShardrouteError} `invalid_key` for a hash outside `0..2^64`;
 *   `invalid_argument` for a bucket count that is not an integer in `0..2^32`;
 *   `no_nodes` for zero buckets.
 */
export declare function jump(hash: bigint | string, buckets: number): number;

/**
 * The error every failed call throws. `code` is stable across versions and languages:
 * `'invalid_topology'`, `'invalid_key'`, `'no_nodes'`, `'limit_exceeded'` or
 * `'invalid_argument'`; `message` is for people.
 */
export declare class ShardrouteError extends Error {
  constructor(code: string, message: string, options?: { cause?: unknown });
  /** The stable error code. */
  readonly code: string;
}
