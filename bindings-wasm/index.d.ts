// Types of the npm package `shardroute-wasm`: the same shape as the Node addon `shardroute`.
// Written by hand (wasm-bindgen types every argument as `any`); test/api.test.mjs checks that
// the names declared here are exactly the names the package exports.

/**
 * A routing key. A string is routed by its UTF-8 bytes (a lone surrogate is an
 * `invalid_key` error, never replaced by U+FFFD); a `Uint8Array` (or `Buffer`) by its
 * bytes; a `bigint` in `0..=2^64-1` or a safe non-negative integer `number` as a u64.
 * The integer `42` and the text `"42"` are different keys.
 */
export type Key = string | Uint8Array | bigint | number;

/** A router: a validated topology document compiled for lookups. */
export declare class Router {
  /**
   * Parses, validates and compiles a topology document: JSON text, or an object (written
   * with `JSON.stringify`; BigInt values become decimal strings).
   * @throws {ShardrouteError} `invalid_topology`, `no_nodes` or `limit_exceeded`.
   */
  constructor(topology: string | object);
  /** The shard of a key (a node index, or the vbucket number for `vbucket`). */
  route(key: Key): number;
  /** The id of the node that owns a key. */
  node(key: Key): string;
  /**
   * `count` distinct node ids for a key in preference order, owner first.
   * @throws {ShardrouteError} `invalid_argument` when `count` is not in `1..=` the node count.
   */
  replicas(key: Key, count: number): string[];
  /**
   * The shards of many keys, in order: the same as `route` on each.
   * @throws {ShardrouteError} `invalid_key` (the message names the key's index);
   *   `invalid_argument` when `keys` is not an array.
   */
  routeMany(keys: readonly Key[]): Uint32Array;
  /** The topology's epoch (a u64, exact above 2^53). */
  get epoch(): bigint;
  /** The canonical JSON of the topology, byte for byte the core's. */
  toJson(): string;
}

/**
 * The 64-bit hash of a key under a hashing spec (JSON text or an object), or under the
 * default spec (SipHash-2-4 keyed `00..0f`) when it is omitted or `null`.
 * @throws {ShardrouteError} `invalid_key`, or `invalid_topology` for a bad spec.
 */
export declare function hashKey(key: Key, hashing?: string | object | null): bigint;

/**
 * Jump consistent hash of a u64 hash (a bigint, or its decimal string) over `buckets`
 * buckets, in `0..buckets`.
 * @throws {ShardrouteError} `invalid_key` (hash out of range), `invalid_argument`, `no_nodes` (0 buckets).
 */
export declare function jump(hash: bigint | string, buckets: number): number;

/**
 * What every shardroute call throws: a real `Error` whose `code` is one of the stable codes
 * `invalid_topology`, `invalid_key`, `no_nodes`, `limit_exceeded`, `invalid_argument`.
 */
export declare class ShardrouteError extends Error {
  constructor(code: string, message: string, options?: { cause?: unknown });
  /** The stable error code, the same in every binding. */
  readonly code: string;
}
