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

/** A key the router made from a `Key` (salting): a string, bytes, or an integer as `bigint`. */
export type SaltedKey = string | Uint8Array | bigint;

/**
 * An id decoded by `Router.decodeId`: the shard it carries, and its other fields by name
 * (`timestamp`, `sequence`, ...) in the id's layout order (most significant first; the
 * object's insertion order).
 */
export interface DecodedId {
  shard: number;
  fields: Record<string, bigint>;
}

/** Where a key lives (`Router.locate`). */
export interface Location {
  /** The shard number. */
  shard: number;
  /** The owning node's id. */
  node: string;
  /** The node's `address`, or `null` when the document gives none. */
  address: string | null;
  /** The node's `zone`, or `null` when the document gives none. */
  zone: string | null;
  /** The topology's `placement` templates rendered for this shard, by name. */
  names: Record<string, string>;
}

/** Where one key was and is (`diff`). */
export interface KeyMove {
  /** The shard under the old router. */
  old_shard: number;
  /** The shard under the new router. */
  new_shard: number;
  /** The owning node's id under the old router. */
  old_node: string;
  /** The owning node's id under the new router. */
  new_node: string;
  /** Whether the key changes node. */
  moved: boolean;
}

/** The movement of a set of keys between two routers (`diff`). */
export interface Diff {
  /** One entry per key, in input order. */
  keys: KeyMove[];
  /** How many keys were given. */
  total: number;
  /** How many keys change node. */
  moved: number;
  /** Moved keys per million, an integer (0 for no keys). */
  moved_ppm: number;
  /** Every pair of nodes that exchange keys, with how many, sorted by node ids. */
  flows: Array<{ from: string; to: string; keys: number }>;
}

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
  /**
   * The shards of integer keys given as one `BigUint64Array` (each element a `u64` key,
   * the same as `route(bigint)`), as a `Uint32Array`.
   *
   * @throws {ShardrouteError} `invalid_argument` when `keys` is not a `BigUint64Array`.
   */
  routeU64s(keys: BigUint64Array): Uint32Array;
  /**
   * The shards of byte keys packed in one buffer: key `i` is
   * `data.subarray(offsets[i], offsets[i + 1])`, so `offsets` has one more entry than
   * there are keys (Arrow's layout for binary arrays). The same as `route` on each key.
   *
   * @throws {ShardrouteError} `invalid_argument` when `data` is not a `Uint8Array`
   *   (a `Buffer` is one), `offsets` not a `Uint32Array`, or the offsets are empty,
   *   decrease or point past `data`.
   */
  routePacked(data: Uint8Array, offsets: Uint32Array): Uint32Array;
  /**
   * The ids of the nodes that own many keys, in order: the same as `node` on each.
   *
   * @throws {ShardrouteError} `invalid_key` (the message names the key's index);
   *   `invalid_argument` when `keys` is not an array.
   */
  nodeMany(keys: readonly Key[]): string[];
  /**
   * The id of the node that serves reads of a key: the same as `node` except for a vbucket
   * in motion, whose reads go to its old owner.
   */
  routeRead(key: Key): string;
  /**
   * The ids of the nodes a write of a key goes to, the deciding one first: `[node(key)]`, or
   * `[new owner, old owner]` for a migrating vbucket.
   * @throws {ShardrouteError} `read_only` for a key of a read-only vbucket; `invalid_key`.
   */
  routeWrite(key: Key): string[];
  /**
   * A new router for a newer topology document (text or object, as for the constructor);
   * this router is unchanged. The same document again is accepted.
   * @throws {ShardrouteError} as the constructor; `stale_epoch` (the message names the epoch
   *   this router holds) for a lower epoch, or the same epoch with different content.
   */
  replace(topology: string | object): Router;
  /** The topology's epoch (a u64, exact above 2^53). */
  get epoch(): bigint;
  /** The canonical JSON of the topology, byte for byte the core's. */
  toJson(): string;
  /**
   * The shards a scan over keys in `[start, end)` must visit, in key order; `end` omitted
   * or `null` scans to the end of the key space. Hash-based strategies give every shard.
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `end` is not after `start`.
   */
  shardsForRange(start: Key, end?: Key | null): number[];
  /**
   * Decodes an id that carries its shard (a bigint, or its decimal string).
   * @throws {ShardrouteError} `invalid_key` (id outside `0..2^64`); `invalid_argument`
   *   when the strategy's ids do not carry a shard.
   */
  decodeId(id: bigint | string): DecodedId;
  /** Where a key lives: shard, node, the node's address and zone, and the rendered names. */
  locate(key: Key): Location;
  /** How many salted keys a key is spread over (`hot_keys`); 1 when it is not hot. */
  fanout(key: Key): number;
  /**
   * The key to write a hot key's value under for a caller-chosen `salt` (`key + separator +
   * salt % fanout`); a key that is not hot comes back unchanged. The result has the key's
   * type: a string gives a string, a `Uint8Array` a `Uint8Array`, a bigint or number a bigint.
   * @throws {ShardrouteError} `invalid_argument` when `salt` is not an integer in `0..=2^32-1`.
   */
  saltedKey(key: string, salt: number): string;
  saltedKey(key: Uint8Array, salt: number): Uint8Array;
  saltedKey(key: bigint | number, salt: number): bigint;
  saltedKey(key: Key, salt: number): SaltedKey;
  /**
   * Every salted form of a key with its shard, salt 0 first (keys of the input's type, as
   * for `saltedKey`): what a read of a hot key gathers. A key that is not hot gives one pair.
   */
  saltedKeys(key: string): Array<[string, number]>;
  saltedKeys(key: Uint8Array): Array<[Uint8Array, number]>;
  saltedKeys(key: bigint | number): Array<[bigint, number]>;
  saltedKeys(key: Key): Array<[SaltedKey, number]>;
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
 * Applies a topology operation (`{"op": "add_node", "node": {...}}`, `{"op": "remove_node",
 * "id": ...}`, ...) to a topology document; both are JSON text or objects. Returns the
 * core's result: the new document under `topology` (canonical form, epoch + 1) and the
 * operation's report beside it. The inputs are never modified.
 * @throws {ShardrouteError} `invalid_topology`, `no_nodes`, `limit_exceeded` (the document
 *   or the result); `invalid_argument` (unknown op, wrong strategy, bad parameters).
 */
export declare function apply(topology: string | object, operation: string | object): Record<string, unknown>;

/**
 * Where each shard's keys can go when a modulo cluster changes from `oldCount` to
 * `newCount` shards by a whole factor: one array per old shard (growing: the shard itself
 * first, then `k + old, k + 2*old, ...`; shrinking: the one shard it merges into).
 * @throws {ShardrouteError} `invalid_argument` (not a whole factor, or not an integer in
 *   `0..=2^32-1`), `no_nodes` (a count of 0), `limit_exceeded`.
 */
export declare function moduloMoves(oldCount: number, newCount: number): number[][];

/**
 * Routes every key under both routers and reports what moves: each key's shard and node
 * before and after, and the flows between nodes. Neither router is modified.
 * @throws {ShardrouteError} `invalid_argument` (a router that is not a `Router`, or `keys`
 *   not an array); `invalid_key` (the message names the key's index); a routing error.
 */
export declare function diff(oldRouter: Router, newRouter: Router, keys: readonly Key[]): Diff;

/**
 * The compact binary form of a `vbucket` topology document (text or object).
 * @throws {ShardrouteError} as `new Router` for the document; `invalid_argument` when the
 *   strategy is not `vbucket` or a node id, address or zone exceeds 65,534 bytes.
 */
export declare function encodeDictionary(topology: string | object): Uint8Array;

/**
 * The canonical JSON text of the topology document in a binary dictionary.
 * @throws {ShardrouteError} `invalid_topology` for damaged bytes (bad magic or version,
 *   checksum mismatch, truncated or trailing bytes) or an invalid document;
 *   `limit_exceeded`; `invalid_argument` when `bytes` is not a `Uint8Array`.
 */
export declare function decodeDictionary(bytes: Uint8Array): string;

/**
 * What every shardroute call throws: a real `Error` whose `code` is one of the stable codes
 * `invalid_topology`, `invalid_key`, `no_nodes`, `limit_exceeded`, `invalid_argument`,
 * `stale_epoch`, `read_only`.
 */
export declare class ShardrouteError extends Error {
  constructor(code: string, message: string, options?: { cause?: unknown });
  /** The stable error code, the same in every binding. */
  readonly code: string;
}
