// Type declarations of both npm packages: `shardroute` (the Node addon) and
// `shardroute-wasm` (WebAssembly), whose APIs are the same. Written by hand (wasm-bindgen
// types every argument as `any`); each package's build.sh copies this file into the
// package as its index.d.ts. The shared API suite (conformance/js/api-suite.mjs) checks
// that it names exactly each package's exports, and `tsc --noEmit` in each package checks
// conformance/js/types.ts against the package's copy.

/**
 * A routing key.
 *
 * - `string`: its UTF-8 bytes; a string with a lone surrogate is rejected (`invalid_key`),
 *   never replaced by U+FFFD.
 * - `Uint8Array` (a `Buffer` too): its bytes.
 * - `bigint`: an unsigned 64-bit integer key, `0n` up to `2n ** 64n - 1n`.
 * - `number`: the same integer key, for safe non-negative integers only (up to
 *   `Number.MAX_SAFE_INTEGER`); pass larger ids as `bigint`.
 *
 * The integer `42` and the string `"42"` are different keys.
 */
export type Key = string | Uint8Array | bigint | number;

/** A key the router made from a `Key` (salting): a string, bytes, or an integer as `bigint`. */
export type SaltedKey = string | Uint8Array | bigint;

/** An id decoded by a strategy whose ids carry their shard (`Router.decodeId`). */
export interface DecodedId {
  /** The shard the id routes to. */
  shard: number;
  /** The id's other fields by name (`timestamp`, `sequence`, ...), in the id's layout order, most significant first. */
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
  /** Each template of the topology's `placement` section rendered for the shard, by name. */
  names: Record<string, string>;
}

/** One key of a `diff`: where it was and is. */
export interface KeyMove {
  /** The shard under the old topology. */
  old_shard: number;
  /** The shard under the new topology. */
  new_shard: number;
  /** The owning node's id under the old topology. */
  old_node: string;
  /** The owning node's id under the new topology. */
  new_node: string;
  /** Whether the key changes node (`old_node !== new_node`). */
  moved: boolean;
}

/** Keys that go from one node to another in a `diff`. */
export interface Flow {
  /** The node the keys leave. */
  from: string;
  /** The node the keys go to. */
  to: string;
  /** How many of the keys do. */
  keys: number;
}

/** The movement of a set of keys between two routers (`diff`). */
export interface Diff {
  /** One entry per key, in input order: only when `diff` was given `{ perKey: true }`. */
  keys?: KeyMove[];
  /** How many keys were given. */
  total: number;
  /** How many keys change node. */
  moved: number;
  /** Moved keys per million, an integer (0 for no keys). */
  moved_ppm: number;
  /** Every pair of nodes that exchange keys, sorted by node ids. */
  flows: Flow[];
}

/** The keys one node owns, in a `Router.groupByNode` result. */
export interface NodeGroup {
  /** The node's id. */
  node: string;
  /** The positions of its keys in the array given, in increasing order. */
  indices: number[];
}

/** A Redis Cluster redirection error read by `parseRedirect`. */
export interface Redirect {
  /** `MOVED`: the slot has a new owner (`Router.moved`); `ASK`: one command goes elsewhere (`Router.ask`). */
  kind: 'MOVED' | 'ASK';
  /** The slot, in `0..16384`. */
  slot: number;
  /** The target's `host:port` as the node wrote it. */
  address: string;
}

/** A key that changes node in a `Migration` (`moves`). */
export interface Move {
  /** Its node in the topology data moves from. */
  from: string;
  /** Its node in the topology data moves to. */
  to: string;
}

/** A shard whose owner changes in a `Migration` (`movingShards`). */
export interface MovingShard {
  /** The shard (a vbucket, a slot, a partition, a bucket): the same number on both sides. */
  shard: number;
  /** Its owner in the topology data moves from. */
  from: string;
  /** Its owner in the topology data moves to. */
  to: string;
}

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
   * The shards a scan over keys in `[start, end)` must visit, in key order; `end`
   * omitted or `null` scans to the end of the key space. Hash-based strategies scatter
   * every range, so for them this is every shard.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `end` is not after
   *   `start` for a range strategy.
   */
  shardsForRange(start: Key, end?: Key | null): number[];
  /**
   * Decodes an id that carries its shard: the shard and the id's other fields, in order.
   *
   * @throws {ShardrouteError} `invalid_key` for an id outside `0..2^64` (a `bigint` or a
   *   decimal string); `invalid_argument` when the strategy's ids do not carry a shard.
   */
  decodeId(id: bigint | string): DecodedId;
  /**
   * Where `key` lives: shard, node id, the node's address and zone, and the topology's
   * `placement` templates rendered for the shard.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  locate(key: Key): Location;
  /**
   * How many salted keys `key` is spread over: its `hot_keys` fanout, 1 when it is not hot.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  fanout(key: Key): number;
  /**
   * The key to write a hot key's value under for a caller-chosen `salt` (`key +
   * separator + salt % fanout`); a key that is not hot is its own salted key. The result
   * has the type of `key`: a string for a string, a `Uint8Array` for bytes, a `bigint`
   * for an integer (`bigint` or `number`; integer keys are never hot).
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `salt` is not an
   *   integer in `0..2^32`.
   */
  saltedKey(key: string, salt: number): string;
  saltedKey(key: Uint8Array, salt: number): Uint8Array;
  saltedKey(key: bigint | number, salt: number): bigint;
  saltedKey(key: Key, salt: number): SaltedKey;
  /**
   * Every salted form of `key` with its shard, salt 0 first: what a read of a hot key
   * gathers. A key that is not hot gives one pair, itself. Keys have the type of `key`,
   * as for `saltedKey`.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  saltedKeys(key: string): Array<[string, number]>;
  saltedKeys(key: Uint8Array): Array<[Uint8Array, number]>;
  saltedKeys(key: bigint | number): Array<[bigint, number]>;
  saltedKeys(key: Key): Array<[SaltedKey, number]>;
  /**
   * The node that serves reads of `key`: the same as `node(key)` except for a vbucket in
   * motion (`migrating`), whose reads go to its old owner.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  routeRead(key: Key): string;
  /**
   * The node ids a write of `key` goes to, the deciding one first: `[node(key)]`, or for
   * a migrating vbucket `[new owner, old owner]`.
   *
   * @throws {ShardrouteError} `invalid_key`; `read_only` for a read-only vbucket.
   */
  routeWrite(key: Key): string[];
  /**
   * The id of the node to read `key` from when reads may go to replicas (Redis `READONLY`
   * connections, Couchbase replica reads): one of the replicas of the key's chain,
   * picked by `turn` (`turn % replicas`, so a growing counter spreads reads round-robin;
   * omitted: 0), or the owner when the chain has none. Strategies without replica chains
   * (the hashed ones) answer `node(key)`. Writes go to `node(key)`.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `turn` is not an
   *   integer in `0..2^32`.
   */
  readReplica(key: Key, turn?: number): string;
  /**
   * The one shard all `keys` share (for `redis_cluster`, their hash slot): what a
   * multi-key command (`MGET`, `MSET`, a transaction) needs, since one node must hold
   * every key. Hash tags (`{user1}.name`, `{user1}.mail`) are how keys share a slot.
   *
   * @throws {ShardrouteError} `cross_slot` when two keys are in different shards (the
   *   message names the first key that differs and both shards); `invalid_argument` for
   *   no keys or when `keys` is not an array; `invalid_key` (the message names the key's
   *   index).
   */
  sameSlot(keys: readonly Key[]): number;
  /**
   * The keys grouped by the node that owns them, for pipelines and for splitting
   * `MGET`/`MSET` by node: one `{ node, indices }` for each node that owns a key, in the
   * topology's node order, its keys' positions in `keys` in increasing order. Every key
   * is in exactly one group, the group of `node(key)`.
   *
   * @throws {ShardrouteError} as `nodeMany`.
   */
  groupByNode(keys: readonly Key[]): NodeGroup[];
  /**
   * The router after a Redis Cluster `MOVED <slot> <address>` reply: `slot` is served by
   * the node at `address` (`host:port`; a node with that address as its id is added
   * when no node has it), and the epoch is one more. This router is unchanged. The same
   * as `apply` with `{ op: 'redis_moved', slot, address }`; `parseRedirect` reads the
   * reply.
   *
   * @throws {ShardrouteError} `invalid_argument` for a topology that is not
   *   `redis_cluster`, a slot that is not an integer in `0..16384`, an address that is
   *   not a string with a port.
   */
  moved(slot: number, address: string): Router;
  /**
   * Where the next command for a key of `slot` goes after a Redis Cluster `ASK <slot>
   * <address>` reply: `address`, once, preceded by `ASKING`. Nothing changes: the slot is
   * being migrated and stays with its owner until a `MOVED` says otherwise.
   *
   * @throws {ShardrouteError} `invalid_argument` as for `moved`.
   */
  ask(slot: number, address: string): string;
  /**
   * The id of the node that owns `shard`: a node index for `modulo`, `jump`, `ring` and
   * `rendezvous` (`1..=n` for 1-based modulo), a vbucket, a slot, a partition. What a
   * copy job needs to know where a unit lives (`Migration.movingShards` lists the units
   * that change owner).
   *
   * @throws {ShardrouteError} `invalid_argument` when `shard` is not an integer of the
   *   shards `route` can return; `no_nodes` for a Couchbase vbucket without an active node.
   */
  shardOwner(shard: number): string;
  /**
   * A new `Router` for `topology` (JSON text or an object, as for the constructor) when
   * it is newer than this one's; this router is unchanged. Epochs only grow: the same
   * document again is accepted, a lower epoch or the same epoch with different content is
   * refused.
   *
   * @throws {ShardrouteError} the topology's errors as for the constructor;
   *   `stale_epoch` (the message names the epoch this router holds).
   */
  replace(topology: string | object): Router;
  /** The topology's epoch (a u64, exact above 2^53). */
  get epoch(): bigint;
  /** The canonical JSON text of the topology, byte for byte the same in every language. */
  toJson(): string;
}

/**
 * A move of data from one topology to the next while the application runs (any two
 * topologies: `modulo` 5 to 10, a ring that gained a node, a vbucket dictionary and its
 * forward map): where a key goes, where services write and read, and what a copy job
 * moves. It keeps no state: whether a key or unit has moved is a flag the caller keeps
 * where the data is. It holds copies of its routers: the `Router`s passed in are left as
 * they were.
 */
export declare class Migration {
  /**
   * The migration from `before` to `after`.
   *
   * @throws {ShardrouteError} `invalid_argument` when either is not a `Router`;
   *   `stale_epoch` unless `after.epoch > before.epoch` (a migration goes forward).
   */
  constructor(before: Router, after: Router);
  /**
   * The migration a vbucket dictionary in motion describes: from its `map` (at the
   * dictionary's epoch) to its `forward_map` (at the next epoch). `router` is unchanged.
   *
   * @throws {ShardrouteError} `invalid_argument` when `router` is not a `Router`, not a
   *   vbucket dictionary, or has no `forward_map` (nothing is moving).
   */
  static ofDictionary(router: Router): Migration;
  /** A router of the topology data moves from. */
  get before(): Router;
  /** A router of the topology data moves to. */
  get after(): Router;
  /**
   * `{ from, to }` when `key` changes node, `null` when it stays.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  moves(key: Key): Move | null;
  /**
   * Where a write of `key` goes: its new owner, always, so that nothing written during
   * the move is left behind on the old one.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  writeTarget(key: Key): string;
  /**
   * Where a read of `key` looks, in order: `[new owner, old owner]` while its data may
   * still be on the old owner, `[new owner]` once it has moved (`moved` true) or when the
   * key does not change node. A read that looks at both merges what it finds.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `moved` is not a
   *   boolean.
   */
  readTargets(key: Key, moved?: boolean): string[];
  /**
   * The shards whose owner changes, in shard order: the units a background copy job
   * moves, for two topologies whose shards are the same fixed partitions (vbuckets,
   * Redis slots, Kafka partitions, vshard buckets of one strategy and count).
   *
   * @throws {ShardrouteError} `invalid_argument` for any other two (shards that are node
   *   indices, as for `modulo`, `jump` or a ring): list the keys that move with
   *   `movingKeys`.
   */
  movingShards(): MovingShard[];
  /**
   * The positions in `keys` of the keys that change node, in increasing order.
   *
   * @throws {ShardrouteError} `invalid_key` (the message names the key's index);
   *   `invalid_argument` when `keys` is not an array.
   */
  movingKeys(keys: readonly Key[]): number[];
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
 * Applies a topology operation (such as `{"op": "add_node", "node": {"id": "n4"}}`) to a
 * topology; each is JSON text or an object (`bigint` fields become decimal strings).
 * Returns a new object: the new document under `topology` (canonical, epoch plus one)
 * and the operation's report beside it. The input is not modified.
 *
 * @throws {ShardrouteError} the topology's errors as for `Router`; `invalid_argument`
 *   for an unknown operation, one that does not fit the strategy, or bad parameters.
 */
export declare function apply(topology: string | object, operation: string | object): Record<string, unknown>;

/**
 * Where each shard's keys can go when a `modulo` cluster goes from `oldCount` to
 * `newCount` shards, one count a whole multiple of the other: growing by a factor `m`,
 * entry `k` is `[k, k + old, ..., k + (m-1)*old]`; shrinking, entry `k` is `[k % new]`.
 *
 * @throws {ShardrouteError} `invalid_argument` for a count that is not an integer in
 *   `0..2^32`, or when neither count divides the other; `no_nodes` for 0;
 *   `limit_exceeded` above the vbucket limit.
 */
export declare function moduloMoves(oldCount: number, newCount: number): number[][];

/** Options of `diff`. */
export interface DiffOptions {
  /**
   * Also list each key's shard and node before and after (`Diff.keys`), for at most
   * 65,536 keys (`limit_exceeded` past that: diff a larger set in batches). Without it the
   * counts and flows are tallied key by key, with no per-key storage in the core.
   */
  perKey?: boolean;
}

/**
 * Routes every key under `oldRouter` and `newRouter` and reports what moves: how many
 * keys change node and between which nodes, and with `{ perKey: true }` each key's shard
 * and node before and after.
 *
 * @throws {ShardrouteError} `invalid_argument` when a router is not a `Router`, `keys`
 *   is not an array or `options` is not `{ perKey?: boolean }`; `invalid_key` (the
 *   message names the key's index); `limit_exceeded` for a per-key list of more than
 *   65,536 keys; either topology's routing errors.
 */
export declare function diff(oldRouter: Router, newRouter: Router, keys: readonly Key[], options?: DiffOptions | null): Diff;

/**
 * The compact binary form of a vbucket dictionary (a topology document with the
 * `vbucket` strategy, as JSON text or an object), as specified in
 * `docs/dictionary-format.md`.
 *
 * @throws {ShardrouteError} the topology's errors as for `Router`; `invalid_argument`
 *   for a strategy other than `vbucket`, or ids, addresses or zones too long.
 */
export declare function encodeDictionary(topology: string | object): Uint8Array;

/**
 * Decodes the binary form of a vbucket dictionary, validated as a JSON document is:
 * the topology's canonical JSON text (as `Router.toJson` returns it).
 *
 * @throws {ShardrouteError} `invalid_topology` for damaged bytes (bad magic, version or
 *   checksum, truncated or trailing bytes, invalid content); `limit_exceeded`;
 *   `invalid_argument` for a value that is not a `Uint8Array`.
 */
export declare function decodeDictionary(bytes: Uint8Array): string;

/**
 * Reads a Redis Cluster redirection error as a client receives it: `MOVED 3999
 * 127.0.0.1:6381` or `ASK 3999 127.0.0.1:6381` (a leading `-` of the raw RESP error and
 * surrounding white space are allowed). Pass a `MOVED`'s slot and address to
 * `Router.moved`, an `ASK`'s to `Router.ask`.
 *
 * @throws {ShardrouteError} `invalid_argument` for any other line (another error, a slot
 *   outside `0..16384`, an address without a port) and for a value that is not a string.
 */
export declare function parseRedirect(line: string): Redirect;

/**
 * The error every failed call throws. `code` is stable across versions and languages:
 * `'invalid_topology'`, `'invalid_key'`, `'no_nodes'`, `'limit_exceeded'`,
 * `'invalid_argument'`, `'stale_epoch'`, `'read_only'` or `'cross_slot'`; `message` is
 * for people.
 */
export declare class ShardrouteError extends Error {
  constructor(code: string, message: string, options?: { cause?: unknown });
  /** The stable error code, the same in every binding. */
  readonly code: string;
}
