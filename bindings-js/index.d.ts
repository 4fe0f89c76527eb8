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
/** Which node of each shard a scatter plan reads from. */
export type ReadFrom = 'primary' | 'replicas' | 'zone';

/**
 * Where a query beyond one key goes, and how its answers merge, in columns: shard `i` of
 * the plan is `shards[i]`, asked of the node `nodes[i]`, holding the keys `keys[i]`
 * (indices into the keys given, for scatterKeys; `keys` is null for the others).
 */
export interface ScatterPlan {
  /** 'union': any order; 'concat': in the plan's order; 'merge': by key, each answer sorted. */
  gather: 'union' | 'concat' | 'merge';
  shards: number[];
  /** Node ids. */
  nodes: string[];
  keys: number[][] | null;
}

/** An index shard a write updates: the positions of its terms in the plan's input. */
export interface IndexVisit {
  index: string;
  shard: number;
  /** The node id. */
  node: string;
  terms: number[];
}

/** What `Router.indexWritePlan` returns. */
export interface IndexWritePlan {
  /** The document's shard and node id. */
  shard: number;
  node: string;
  /** One visit per index shard the terms touch, in first-term order. */
  indexes: IndexVisit[];
}

/** One node in `Router.stats`. */
export interface NodeStats {
  id: string;
  weight: number;
  /** Keys it owns: a number, or a decimal string past `Number.MAX_SAFE_INTEGER`. */
  load: number | string;
  /** `load / total` (0 when there are no keys). */
  share: number;
  /** `load / weight`. */
  loadPerWeight: number;
}

/** What `Router.stats` returns: the load per node and its spread per unit of weight. */
export interface Stats {
  /** A number, or a decimal string past `Number.MAX_SAFE_INTEGER`. */
  total: number | string;
  nodes: NodeStats[];
  mean: number;
  /** The largest load per unit of weight over the mean (0 when nothing is loaded). */
  maxOverMean: number;
  /** The coefficient of variation: the population standard deviation over the mean. */
  cv: number;
}

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
  oldShard: number;
  /** The shard under the new topology. */
  newShard: number;
  /** The owning node's id under the old topology. */
  oldNode: string;
  /** The owning node's id under the new topology. */
  newNode: string;
  /** Whether the key changes node (`oldNode !== newNode`). */
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
  movedPpm: number;
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
   * Parses, validates and compiles a topology document: its JSON text, or the document
   * as a `Topology` object (serialized with `JSON.stringify`; `bigint` fields become
   * decimal strings). A document typed `any` (`JSON.parse`'s) is accepted as it is.
   *
   * @throws {ShardrouteError} `invalid_topology`, `no_nodes` or `limit_exceeded`.
   */
  constructor(topology: string | Topology);
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
   * The scatter/gather plan of a query over every shard (a local secondary index, an
   * aggregation): each shard once, with the id of the node to ask under `readFrom`:
   * 'primary' (the owner, the default), 'replicas' (shard i of the plan reads replica
   * `turn + i` of its chain; the owner where there is none) or 'zone' (a node of the
   * chain in `zone`, else the owner). `gather` is 'union'.
   */
  scatterEvery(readFrom?: ReadFrom | null, turn?: number | null, zone?: string | null): ScatterPlan;
  /**
   * The scatter/gather plan of a scan over the keys in [start, end): the shards of
   * `shardsForRange`, in key order, one node each as for `scatterEvery`; `gather` is
   * 'concat' where each shard holds one contiguous stretch in that order (key_range),
   * else 'merge' (merge the shards' sorted answers by key).
   */
  scatterRange(start: Key, end?: Key | null, readFrom?: ReadFrom | null, turn?: number | null, zone?: string | null): ScatterPlan;
  /**
   * The scatter/gather plan of a set of keys (a multi-get): each distinct shard once, in
   * the order of its first key, with `keys` the indices of the keys it holds; `gather`
   * is 'union'.
   */
  scatterKeys(keys: readonly Key[], readFrom?: ReadFrom | null, turn?: number | null, zone?: string | null): ScatterPlan;
  /**
   * The router of the global index `name` (the document's `indexes`): it routes terms over
   * this topology's nodes, at its epoch. Each call builds a new Router (a copy of the
   * index's tables): keep it while this topology holds rather than asking per lookup.
   *
   * @throws {ShardrouteError} `invalid_argument` when the topology has no index of that name.
   */
  index(name: string): Router;
  /** The names of the global indexes, sorted. */
  indexNames(): string[];
  /**
   * The router of the table family that lists `table` (docs/topology-format.md, "Table
   * families"): its strategy and hashing over its node group, at this epoch. For a
   * reference table `node`/`routeRead` give the read node, `readNear` the read node for a
   * caller's zone, `routeWrite` every node of the group.
   *
   * @throws {ShardrouteError} `invalid_argument` when no table family lists `table`.
   */
  table(table: string): Router;
  /**
   * The node a caller in `zone` reads `key` from: for a reference table's router a node of
   * its group in that zone (picked by the key's hash) when there is one, else `node(key)`;
   * for any other router `routeRead(key)`.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  readNear(key: Key, zone?: string | null): string;
  /**
   * What one write touches: the document's shard and node, then each index shard the
   * `[index name, term]` pairs touch, with the positions of their terms.
   *
   * @throws {ShardrouteError} `invalid_argument` for an unknown index or a malformed pair;
   *   `invalid_key` for a key or term that is not a key.
   */
  indexWritePlan(key: Key, terms: ReadonlyArray<readonly [string, Key]>): IndexWritePlan;
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
   * How many of `keys` (a sample, or a listing) each node owns and how evenly they
   * spread per unit of weight: what the CLI's `stats` prints. The load measured per shard
   * is the `suggest` operation's `nodes`.
   *
   * @throws {ShardrouteError} `invalid_argument` when `keys` is not an array;
   *   `invalid_key` (the message names the key's index).
   */
  stats(keys: readonly Key[]): Stats;
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
  replace(topology: string | Topology): Router;
  /** The topology's epoch (a u64, exact above 2^53). */
  get epoch(): bigint;
  /** The canonical JSON text of the topology, byte for byte the same in every language. */
  toJson(): string;
}

/** One answer of the routing service: the status, the headers (lower-case names) and the body's bytes. */
export interface ServiceAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
}

/**
 * The routing service of one router (`GET /route?key=...`, `POST /route`): the answers
 * `shardroute serve` gives, each decided by the core (`shardroute::service`,
 * docs/routing-service.md). It holds a copy of the router. `shardroute/service` mounts it
 * in a node:http server, `shardroute-wasm/service` as a `fetch` handler.
 */
export declare class RoutingService {
  /** @throws {ShardrouteError} `invalid_argument` when `router` is not a `Router`. */
  constructor(router: Router);
  /** The strong ETag of every answer of this document, quoted. */
  get etag(): string;
  /** The answer to one request; `body` is what was read of it (at most `MAX_SERVICE_BODY_BYTES`, 1 MiB). */
  answer(method: string, target: string, ifNoneMatch?: string | null, body?: Uint8Array | null): ServiceAnswer;
  /** Whether the path of `target` (path and query) is the service's (`/route`). */
  static handles(target: string): boolean;
  /** The `413` answer of a body of `length` bytes. */
  static bodyTooLarge(length: number): ServiceAnswer;
  /** The `408` answer (with `connection: close`) of a body that did not arrive within `BODY_TIMEOUT_MS` (10 s). */
  static bodyTimedOut(): ServiceAnswer;
  /** The `503` answer before there is a router. */
  static unavailable(): ServiceAnswer;
  /** `[MAX_SERVICE_BODY_BYTES, MAX_SERVICE_KEYS, BODY_TIMEOUT_MS]`: the core's limits. */
  static limits(): number[];
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
   * Where a read of `key` looks, in order: `[old owner, new owner]` while its data may
   * still be on the old owner, `[new owner]` once it has moved (`moved` true) or when the
   * key does not change node. A read that looks at both merges what it finds. Old owner
   * first: data leaves it by a copy then a delete, so a copy that lands between the two
   * reads is found on the new owner, read last.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `moved` is not a
   *   boolean.
   */
  readTargets(key: Key, moved?: boolean): string[];
  /**
   * The keys a read of a hot key gathers while clients may hold either topology: every
   * salted form under `after` (salt 0 first), then those under `before` that `after`
   * lacks. A key becoming hot is read unsalted too, one cooling salted too; a key hot on
   * neither side is `[key]`. Keys have the key's type, as for `Router.saltedKey`.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  readKeys(key: string): string[];
  readKeys(key: Uint8Array): Uint8Array[];
  readKeys(key: bigint | number): bigint[];
  readKeys(key: Key): SaltedKey[];
  /**
   * The key a write with `salt` goes to: `after.saltedKey(key, salt)`, so that writes
   * follow the newest hot-key list.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `salt` is not an
   *   integer in `0..=2^32-1`.
   */
  writeKey(key: string, salt: number): string;
  writeKey(key: Uint8Array, salt: number): Uint8Array;
  writeKey(key: bigint | number, salt: number): bigint;
  writeKey(key: Key, salt: number): SaltedKey;
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
   * The node ids a query over every key (a time range, a local index, an aggregation)
   * reads while data moves, in the order to read them: old owners before new ones, so a
   * row copied and then deleted from its old node between two reads is still found. A
   * node may be listed twice (moves both ways, or strategies whose moves are not known
   * per shard); merge the rows by identity.
   */
  scanNodes(): string[];
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
export declare function hashKey(key: Key, hashing?: string | Hashing | null): bigint;

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
export declare function apply(topology: string | Topology, operation: string | Operation): Applied;

/**
 * What `apply` returns: the next document, and the operation's report beside it.
 *
 * @format the core's operation result, as the vectors hold it (core/src/ops): the
 *   report's fields (`moved_actives`, `lower_bound`, ...) and its maps keyed by node ids
 *   are that JSON's, spelled as it spells them, like the topology beside them.
 */
export interface Applied {
  /** The topology after the change (canonical, epoch plus one; unchanged for the id generators). */
  topology: Topology;
  /** The report's fields, per operation (core/src/ops/mod.rs). */
  [report: string]: unknown;
}

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
export declare function encodeDictionary(topology: string | Topology): Uint8Array;

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

/** A node address read by `parseAddress`. */
export interface Endpoint {
  /** The host, without the brackets of an IPv6 host; empty for `':7000'` (a node that does not know its own address). */
  host: string;
  /** The port, in `1..=65535`. */
  port: number;
}

/**
 * Reads a node address, `'host:port'` as Redis writes it (`MOVED`, `CLUSTER SHARDS`) and
 * users give startup nodes, by the core's one parser: the port follows the last `:`; an
 * IPv6 host may be bracketed (`'[::1]:7000'`) or not (`'::1:7000'`).
 *
 * @throws {ShardrouteError} `invalid_argument` for a value that is not a string, no port,
 *   a port outside `1..=65535`, or a host with white space, a control character or
 *   unbalanced brackets.
 */
export declare function parseAddress(address: string): Endpoint;

/**
 * A time on the shell's monotonic clock, in milliseconds (`performance.now()` rounded, or
 * `process.hrtime.bigint() / 1_000_000n`): a safe non-negative integer `number`, or a
 * `bigint` in `0n..2n ** 64n`. The session reads no clock of its own.
 */
export type Milliseconds = number | bigint;

/** Whether a command reads (served by a replica with `read_from_replicas`) or writes (always the master). */
export type Access = 'read' | 'write';

/** Why a node could not be reached (`ClusterSession.unreachable`): connection refused, reset, or no answer in time. */
export type Unreachable = 'refused' | 'reset' | 'timeout';

/**
 * A `ClusterSession`'s settings, the core's names (`sessionDefaults()` gives every field);
 * a config passes only those to change. Times are milliseconds, integers up to 2^53.
 *
 * @format the core's session config: the JSON the vectors read, spelled as that format
 *   spells it in every language (docs/api.md, "The rule").
 */
export interface SessionConfig {
  /** Redirects (MOVED or ASK) one command may follow before `too_many_redirects`; 0 to 1000. */
  max_redirects?: number;
  /** The shortest time between two refreshes asked for by MOVED or a busy cluster. */
  refresh_interval_ms?: number;
  /** How long a command retries after its first retryable failure, then `unavailable`. */
  retry_budget_ms?: number;
  /** The first backoff of a command (at least 1). */
  backoff_first_ms?: number;
  /** The longest backoff (each doubles up to it; at least `backoff_first_ms`). */
  backoff_max_ms?: number;
  /** For the shell: how long to wait for a connection (the session does not time). */
  connect_timeout_ms?: number;
  /** For the shell: how long to wait for a reply. */
  command_timeout_ms?: number;
  /** For the shell: how long to wait for a reply before calling `stalled` (0: never); its `wait` says when to call again. */
  stall_ms?: number;
  /** The timeout a write that waits for its replicas sends with `WAIT` (shardroute/redis's `setAndWait`). */
  wait_timeout_ms?: number;
  /** Reads go to the slot's replicas in turn, over connections that sent `READONLY`. */
  read_from_replicas?: boolean;
  /** Auto-pipelining (`pipelineQueued`): commands queued for one connection go out together; `false`: each written on its own. */
  auto_pipeline?: boolean;
  /** The most commands one auto-pipelined write carries; 1 to 65536. */
  pipeline_max_commands?: number;
  /** Auto-pipelined writes in flight at once on one connection; 1 to 1024. */
  pipeline_max_writes?: number;
}

/** What a `ClusterSession` has seen (`stats`): the core's counters, each `u64` a `bigint`. */
export interface SessionStats {
  /** Commands begun. */
  commands: bigint;
  /** MOVED replies followed. */
  moved: bigint;
  /** ASK replies followed. */
  ask: bigint;
  /** Tables installed by a refresh. */
  refreshes: bigint;
  /** Refreshes that found no node with a usable reply. */
  refreshFailures: bigint;
  /** Replies refused by a refresh (empty, garbage, uncovered slots). */
  refusedReplies: bigint;
  /** Backoffs taken. */
  retries: bigint;
  /** Commands given up (`too_many_redirects`, `unavailable`). */
  failed: bigint;
  /** The longest redirect chain of one command (a `u32`: a number). */
  longestRedirectChain: number;
  /** Commands found still waiting for their node (`stalled`). */
  stalls: bigint;
  /** Stalled commands sent again to the slot's new owner. */
  stallResends: bigint;
  /** Retryable failures by outcome name (`try_again`, `cluster_down`, `read_only`, `timeout`, ...). */
  errors: Record<string, bigint>;
}

/** One node's share of a batch (`ClusterSession.plan`). */
export interface PlanGroup {
  /** The node's `host:port`. */
  address: string;
  /** Over a connection that sent `READONLY` (a replica read). */
  readonly: boolean;
  /** `[slot, key indices]`, slots increasing, each slot's indices (into the keys given) in input order. */
  slots: Array<[number, number[]]>;
}

/**
 * One command's progress (its slot, its redirects, its retries), made by
 * `ClusterSession.command` and passed back to the session's calls.
 */
export declare class Command {
  private constructor();
  /** The command's hash slot, in `0..16384`. */
  get slot(): number;
  /** Redirects (`MOVED`, `ASK`) followed so far. */
  get redirects(): number;
  /**
   * Whether an attempt the session sent is in flight and its reply still wanted (from a
   * `send` until its outcome, or until `onDeadline` gave it up): after `onDeadline`, a
   * shell whose attempt is no longer in flight abandons it.
   */
  get inFlight(): boolean;
}

/**
 * What a shell does next for a command (`ClusterSession.poll`, `succeeded`, `failed`,
 * `unreachable`): `send` it to `address` (after `ASKING` when `asking`, over a `READONLY`
 * connection when `readonly`); `wait` until `untilMs` on the shell's clock (`delayMs`
 * from the time given), then `poll`; `refresh` the table (`refreshCandidates`, then
 * `refreshed` or `refreshFailed`), then `poll`; `done`: the reply stands (return it, or
 * raise the command's own error as its library raised it); `fail`: give up, with `code`
 * and `message` (`error()` makes the error). Fields that do not apply to `kind` are `null`.
 */
export declare class Action {
  private constructor();
  readonly kind: 'send' | 'wait' | 'refresh' | 'done' | 'fail';
  /** send: the node's `host:port` (an IPv6 host bracketed). */
  readonly address: string | null;
  /** send: the node's host. */
  readonly host: string | null;
  /** send: the node's port. */
  readonly port: number | null;
  /** send: send `ASKING` first, on the same connection (after an `ASK`). */
  readonly asking: boolean | null;
  /** send: over a connection that sent `READONLY` (a replica read). */
  readonly readonly: boolean | null;
  /** wait: when to poll again, on the shell's clock (a u64). */
  readonly untilMs: bigint | null;
  /** wait: `untilMs` less the time given, for a shell's timer. */
  readonly delayMs: number | null;
  /** fail: the error's code, `'too_many_redirects'` or `'unavailable'` (`'invalid_argument'` for a finished command). */
  readonly code: string | null;
  /** fail: the error's message. */
  readonly message: string | null;
  /** The `ShardrouteError` of a `fail` action, to throw or to chain; `null` for other kinds. */
  error(): ShardrouteError | null;
}

/**
 * A Redis Cluster client's decisions, without I/O (sans-IO, like h11's `Connection`): the
 * shell asks where to send a command (`poll`), sends it, and hands back what happened and
 * when (`succeeded`, `failed`, `unreachable`, with `nowMs` from its monotonic clock); the
 * answer is the next `Action`. MOVED updates the slot at once and refreshes the table at
 * most once per `refresh_interval_ms`; ASK resends once after `ASKING`; busy replies
 * (`TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, ...), demoted masters and unreachable nodes back
 * off and retry within `retry_budget_ms`. Every decision is the Rust core's, the same in
 * every language (`conformance/vectors/session_redis.json`).
 */
export declare class ClusterSession {
  /**
   * A session with no table yet, which reads one from `seeds` (`'host:port'` startup
   * nodes; IPv6 as `'[::1]:7000'` or `'::1:7000'`): the first `poll` asks for a refresh.
   * `config` gives the fields of `sessionDefaults()` to change (omitted or `null`: the
   * defaults).
   *
   * @throws {ShardrouteError} `invalid_argument` for seeds that are not an array of
   *   `host:port` strings, none, an unknown config field or a value out of range.
   */
  constructor(seeds: readonly string[], config?: SessionConfig | null);
  /**
   * Begins a command on `keys` (one key, or the keys of a multi-key command), at `nowMs`.
   *
   * @throws {ShardrouteError} `cross_slot` when the keys are in different slots;
   *   `invalid_key` (the message names the key's index); `invalid_argument` for no keys,
   *   a bad access or time.
   */
  command(keys: readonly Key[], access: Access, nowMs: Milliseconds): Command;
  /**
   * What to do now for `command`: usually `send`; `refresh` when there is no table yet or
   * a refresh is due; `wait` while a backoff runs.
   *
   * @throws {ShardrouteError} `invalid_argument` for a `command` that is not a `Command`,
   *   or a bad time.
   */
  poll(command: Command, nowMs: Milliseconds): Action;
  /**
   * The attempt answered: `done`.
   *
   * @throws {ShardrouteError} as `poll`.
   */
  succeeded(command: Command, nowMs: Milliseconds): Action;
  /**
   * The attempt failed with `text` (a Redis error reply, or the error's message) whose
   * class names or error codes are `names` (most derived first: ioredis's `[err.code,
   * err.name]`; may be empty): the next action, by the core's one table (MOVED, ASK,
   * TRYAGAIN, CLUSTERDOWN, MASTERDOWN, LOADING, READONLY, UNBLOCKED, `ECONNREFUSED`,
   * `ECONNRESET`, `ETIMEDOUT`, ...; anything else is the command's own error: `done`).
   *
   * @throws {ShardrouteError} as `poll`; `invalid_argument` when `text` is not a string or
   *   `names` not an array of strings.
   */
  failed(command: Command, text: string, names: readonly string[], nowMs: Milliseconds): Action;
  /**
   * The attempt has had no reply for `stall_ms` (or since the `wait` this last returned)
   * and is still waiting: is its node still the slot's? `refresh` (the silent node asked
   * last; at most one per `refresh_interval_ms`), then call again; `send` when the table
   * gives the slot a new owner (a primary paused or cut off and failed over: abandon the
   * silent attempt, its late reply is not used); `wait`: keep waiting for the reply until
   * `until_ms`, then call again. The command timeout still ends the attempt
   * (`unreachable`). An attempt after ASK is only waited for.
   *
   * @throws {ShardrouteError} as `poll`.
   */
  stalled(command: Command, nowMs: Milliseconds): Action;
  /**
   * The attempt could not reach its node.
   *
   * @throws {ShardrouteError} as `poll`; `invalid_argument` for another `why`.
   */
  unreachable(command: Command, why: Unreachable, nowMs: Milliseconds): Action;
  /**
   * When to ask about `command` next (a u64 on the `nowMs` clock), if nothing about it
   * happens first: the end of its backoff, or for an attempt in flight (from its `send`:
   * the connection, its handshake and the reply are one attempt) the next stall check or
   * its command timeout; `null` when finished or nothing is pending. With `nextDeadline`,
   * the shell's one timer: call `onDeadline` when it fires.
   *
   * @throws {ShardrouteError} `invalid_argument` for a value that is not a Command.
   */
  deadline(command: Command): bigint | null;
  /**
   * `command`'s `deadline` came: `wait` (not yet, or keep waiting for the reply until
   * `until_ms`), `refresh` (a stall: refresh, then call again), `send` (the slot has a new
   * owner, or the backoff ended: abandon any attempt in flight), or the next action after
   * the attempt's command timeout (abandon it: a `timeout`).
   *
   * @throws {ShardrouteError} as `poll`.
   */
  onDeadline(command: Command, nowMs: Milliseconds): Action;
  /**
   * The command timeout of `command`'s attempt in flight (a u64), or `null`: a reply
   * already arriving is read until then (a node that drips its reply is cut off here).
   *
   * @throws {ShardrouteError} `invalid_argument` for a value that is not a Command.
   */
  replyDeadline(command: Command): bigint | null;
  /**
   * The shell asks `address` (a refresh candidate) for `CLUSTER SHARDS` at `nowMs`: the
   * connection, its handshake and the reply are one request. Its deadline (a u64; `null`:
   * none), which `nextDeadline` gives until `refreshed`, `refreshFailed`, the next
   * `refreshSent` or `timeout`.
   *
   * @throws {ShardrouteError} `invalid_argument` for an address that is not host:port, or a bad time.
   */
  refreshSent(address: string, nowMs: Milliseconds): bigint | null;
  /** The command timeout of the refresh request in flight (a u64), or `null`: a `CLUSTER SHARDS` reply already arriving is read until then. */
  refreshReplyDeadline(): bigint | null;
  /** When the session's own request in flight (a refresh's `CLUSTER SHARDS`) must be given up: call `timeout` then; `null` when none. */
  nextDeadline(): bigint | null;
  /**
   * The deadline of one node's pipeline of a batch (`plan`) sent at `nowMs` (a u64): one
   * request of the command timeout; `null` when there is none. An entry with no reply by
   * then fails as a timeout and takes a command's path from that error.
   */
  batchDeadline(nowMs: number | bigint): bigint | null;
  /**
   * Auto-pipelining: one command joined the shell's queue of the connection to `address`
   * (the `send` action's address; `readonly`: a `READONLY` connection). `2`: the
   * connection was idle (nothing queued, no write in flight): write this command now,
   * alone, as one write (no flush); it is one write in flight, ended by `pipelineDone` as
   * any other. `1`: schedule one flush of that connection at the end of this event-loop
   * turn (`process.nextTick`), which calls `pipelineTake`. `0`: it waits: a flush is
   * already scheduled, or `pipeline_max_writes` writes are in flight and the queue waits
   * for `pipelineDone`. With `auto_pipeline` off, always `1` (each command its own write;
   * a shell may skip the queue). The command's attempt began at its `send`: time in the
   * queue counts toward its deadlines.
   *
   * @throws {ShardrouteError} `invalid_argument` for an address that is not a string or a
   *   `readonly` that is not a boolean.
   */
  pipelineQueued(address: string, readonly: boolean): 0 | 1 | 2;
  /**
   * Auto-pipelining, at the flush: how many queued commands (from the front) go in the
   * next write; 0: none now. Each answer above 0 is one write in flight until its
   * `pipelineDone`: call again until 0.
   *
   * @throws {ShardrouteError} as `pipelineQueued`.
   */
  pipelineTake(address: string, readonly: boolean): number;
  /**
   * Auto-pipelining: one write on that connection ended (its replies all read, or its
   * connection failed or was closed): how many queued commands (from the front) to write
   * now, as one write; 0: none.
   *
   * @throws {ShardrouteError} as `pipelineQueued`.
   */
  pipelineDone(address: string, readonly: boolean): number;
  /**
   * Auto-pipelining: `count` queued commands left that connection's queue unwritten
   * (abandoned, timed out, or sent elsewhere).
   *
   * @throws {ShardrouteError} as `pipelineQueued`; `invalid_argument` for a count that is
   *   not an integer in 0..=4294967295.
   */
  pipelineWithdrawn(address: string, readonly: boolean, count: number): void;
  /**
   * Auto-pipelining's counts for that connection: `[queued, writes]` (commands queued and
   * not yet written, writes in flight); `[0, 0]` for a connection with no work.
   *
   * @throws {ShardrouteError} as `pipelineQueued`.
   */
  pipelinePending(address: string, readonly: boolean): [number, number];
  /**
   * `nextDeadline` came: true when the refresh request in flight was given up (close it,
   * ask the next candidate), false when none was due at `nowMs`.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad time.
   */
  timeout(nowMs: Milliseconds): boolean;
  /**
   * The `'host:port'` of node `node` in the current table, or `null` (an unknown id, no table yet).
   *
   * @throws {ShardrouteError} `invalid_argument` for a value that is not a string.
   */
  addressOf(node: string): string | null;
  /**
   * Where a refresh asks for `CLUSTER SHARDS`, in order (`'host:port'` each): ask each
   * until `refreshed` accepts a reply; `refreshFailed` when none does.
   */
  refreshCandidates(): string[];
  /**
   * A `CLUSTER SHARDS` reply (RESP3 maps as objects, or RESP2 flat arrays; strings, not
   * `Buffer`s) installs its table, the next epoch.
   *
   * @throws {ShardrouteError} `invalid_argument` for a reply that does not make a whole
   *   table (empty, malformed, slots uncovered: the table in use is kept; ask the next
   *   candidate), data JSON cannot hold, or a bad time.
   */
  refreshed(reply: unknown, nowMs: Milliseconds): void;
  /**
   * No candidate gave a usable reply: the table is kept (with the slots MOVED updated),
   * and the next refresh waits for the refresh interval.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad time.
   */
  refreshFailed(nowMs: Milliseconds): void;
  /**
   * Whether a refresh is due at `nowMs` (for a shell that refreshes between commands).
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad time.
   */
  wantsRefresh(nowMs: Milliseconds): boolean;
  /**
   * Keys grouped for a batch (a pipeline, or one `MGET` per slot): one group per target
   * node, in node order. A replica read takes one turn per group.
   *
   * @throws {ShardrouteError} `invalid_argument` before the first table or for a bad
   *   access; `invalid_key` (the message names the key's index).
   */
  plan(keys: readonly Key[], access: Access): PlanGroup[];
  /** The counters (a new object each time). */
  get stats(): SessionStats;
  /** Zeroes the counters. */
  resetStats(): void;
  /** The settings in force: every field of `sessionDefaults()`. */
  get config(): Required<SessionConfig>;
  /** The current router (a `redis_cluster` topology), or `null` before the first table. */
  get router(): Router | null;
}

/**
 * The session's defaults, the Rust core's constants, which every client uses unless told
 * otherwise: `{ max_redirects: 5, refresh_interval_ms: 200, retry_budget_ms: 20000,
 * backoff_first_ms: 20, backoff_max_ms: 500, connect_timeout_ms: 1000,
 * command_timeout_ms: 5000, stall_ms: 500, wait_timeout_ms: 500, read_from_replicas: false,
 * auto_pipeline: true, pipeline_max_commands: 256, pipeline_max_writes: 1 }` (a new object each time).
 */
export declare function sessionDefaults(): Required<SessionConfig>;

/**
 * A source's revision of the value a `TopologyFollower` is offered (etcd's
 * `mod_revision`, ZooKeeper's `mzxid`, a counter for HTTP): a safe non-negative integer
 * `number`, or a `bigint` in `0n..2n ** 64n`.
 */
export type Revision = number | bigint;

/**
 * A `TopologyFollower`'s settings, the core's names (`followerDefaults()` gives every
 * field); a config passes only those to change. Milliseconds, integers up to 2^53.
 *
 * @format the core's follower config: the JSON the vectors read, spelled as that format
 *   spells it in every language (docs/api.md, "The rule").
 */
export interface FollowerConfig {
  /** The first wait before reconnecting to a lost source (at least 1). */
  reconnect_first_ms?: number;
  /** The longest wait before reconnecting (each doubles up to it; at least `reconnect_first_ms`). */
  reconnect_max_ms?: number;
}

/** What a `TopologyFollower` has seen (`stats`): the core's counters, each `u64` a `bigint`. */
export interface FollowerStats {
  /** Documents offered (`offer`, `offerDictionary`, `offerBytes`). */
  offered: bigint;
  /** Documents installed. */
  installed: bigint;
  /** The held document offered again. */
  unchanged: bigint;
  /** Sources lost (`disconnected`). */
  disconnects: bigint;
  /** Refusals by error code (`invalid_topology`, `stale_epoch`, `limit_exceeded`, `no_nodes`, ...). */
  refused: Record<string, bigint>;
}

/** A publisher's compare-and-swap write (`TopologyFollower.publish`). */
export interface Publish {
  /** The revision the write expects the source to hold: the follower's; `null` to create the value (none held). */
  expectedRevision: bigint | null;
  /** The epoch written: the held epoch + 1 (the document's own when none is held). */
  epoch: bigint;
  /** The document to write, in its canonical JSON form (as `Router.toJson` writes it). */
  document: string;
}

/**
 * What became of a document offered to a `TopologyFollower` (`offer`,
 * `offerDictionary`, `offerBytes`): `installed` (it is the follower's router now, of `epoch`);
 * `unchanged` (the held document again); `refused` (the follower keeps the router it had;
 * `code` and `message` say why, `error()` makes the error). Fields that do not apply to
 * `kind` are `null`.
 */
export declare class Offered {
  private constructor();
  readonly kind: 'installed' | 'unchanged' | 'refused';
  /** installed: the new router's epoch (a u64). */
  readonly epoch: bigint | null;
  /**
   * refused: the error's code: the document's (`'invalid_topology'`, `'limit_exceeded'`,
   * `'no_nodes'`), or `'stale_epoch'` for a lower epoch, the same epoch with other content,
   * or a revision older than the installed document's.
   */
  readonly code: string | null;
  /** refused: the error's message. */
  readonly message: string | null;
  /** The `ShardrouteError` of a refusal, to throw or to log; `null` for other kinds. */
  error(): ShardrouteError | null;
}

/**
 * Follows a topology from a source (etcd, ZooKeeper, an HTTP endpoint), without I/O
 * (sans-IO): the shell watches its source and hands the follower every value it sees,
 * with the source's revision and the time. The follower installs a document of a newer
 * epoch, refuses (and counts) one it must not install (an invalid document, a lower
 * epoch, an older revision) while keeping the last good router, says when to reconnect
 * after the source is lost (the wait doubles up to `reconnect_max_ms`), and builds a
 * publisher's compare-and-swap write. Every decision is the Rust core's, the same in every
 * language (`conformance/vectors/session_follower.json`).
 */
export declare class TopologyFollower {
  /**
   * A follower holding no router yet. `config` gives the fields of `followerDefaults()` to
   * change (omitted or `null`: the defaults).
   *
   * @throws {ShardrouteError} `invalid_argument` for an unknown config field or a value
   *   out of range.
   */
  constructor(config?: FollowerConfig | null);
  /**
   * A document (JSON text, or an object as `new Router` takes it) from the source at
   * `revision`, seen at `nowMs`. A document the follower refuses is a result (`kind`
   * `'refused'`), not a throw.
   *
   * @throws {ShardrouteError} `invalid_topology` for a document that is neither text nor
   *   an object, or an object JSON cannot hold (a NaN, a function, a cycle; as for `new
   *   Router`); `invalid_argument` for a bad revision or time.
   */
  offer(document: string | Topology, revision: Revision, nowMs: Milliseconds): Offered;
  /**
   * A binary dictionary (as `encodeDictionary` writes it) from the source at `revision`,
   * seen at `nowMs`; damaged bytes are a refusal (`invalid_topology`).
   *
   * @throws {ShardrouteError} `invalid_argument` for bytes that are not a readable
   *   `Uint8Array`, a bad revision or time.
   */
  offerDictionary(bytes: Uint8Array, revision: Revision, nowMs: Milliseconds): Offered;
  /**
   * A value from a source that holds plain bytes (a ZooKeeper node, an HTTP body of no
   * known type): a binary dictionary when it starts with the dictionary's magic (`SRVB`),
   * otherwise JSON text that must be valid UTF-8. Invalid UTF-8 is a refusal
   * (`invalid_topology`), never decoded with replacements.
   *
   * @throws {ShardrouteError} `invalid_argument` for bytes that are not a readable
   *   `Uint8Array`, a bad revision or time.
   */
  offerBytes(bytes: Uint8Array, revision: Revision, nowMs: Milliseconds): Offered;
  /**
   * The source was lost at `nowMs`: when to reconnect, on the same clock (a u64). Each
   * loss waits twice the last, up to `reconnect_max_ms`, until `connected`.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad time.
   */
  disconnected(nowMs: Milliseconds): bigint;
  /** The source answers again: the next loss waits `reconnect_first_ms`. */
  connected(): void;
  /**
   * When the shell must next act (its one timer): the reconnect time the last
   * `disconnected` gave (a u64), until `connected`; `null` while connected.
   */
  nextDeadline(): bigint | null;
  /**
   * The compare-and-swap write of `document` (text or an object): what a publisher
   * writes, expecting the source to hold the follower's revision.
   *
   * @throws {ShardrouteError} the document's errors as for `new Router` (`invalid_topology`,
   *   `limit_exceeded`, `no_nodes`); `stale_epoch` unless its epoch is the held one + 1.
   */
  publish(document: string | Topology): Publish;
  /** The router installed last (a new `Router` each time), or `null` before the first. */
  get router(): Router | null;
  /** The source revision of the document installed last, or `null` before the first. */
  get revision(): bigint | null;
  /** The counters (a new object each time). */
  get stats(): FollowerStats;
  /** The settings in force: every field of `followerDefaults()`. */
  get config(): Required<FollowerConfig>;
}

/**
 * The follower's defaults, the Rust core's constants: `{ reconnect_first_ms: 100,
 * reconnect_max_ms: 5000 }` (a new object each time).
 */
export declare function followerDefaults(): Required<FollowerConfig>;

/**
 * A source session's config: `{ source: 'etcd', members, key?, also?, ... }`,
 * `{ source: 'http', url, ... }` or `{ source: 'zookeeper', members, path?, ... }`; each
 * kind's fields are those of the Rust core (`core/src/session/etcd.rs`, `http.rs`,
 * `zookeeper.rs`), with defaults from its constants (`SourceSession.config` gives every
 * field).
 */
export type SourceConfig = SourceEtcdConfig | SourceHttpConfig | SourceZookeeperConfig;

/**
 * An etcd source (its JSON gateway, v3): a follower of `key`, or calls only.
 *
 * @format the core's source config (`SourceConfig`), as the vectors write it.
 */
export interface SourceEtcdConfig {
  source: 'etcd';
  /** `http://host:port` or `https://host:port` URLs, tried in order. */
  members: string[];
  /** The key to follow (absent: a session for calls only). */
  key?: string;
  /** Companion keys read with `key`. */
  also?: string[];
  request_timeout_ms?: number;
  /** How long a watch may stay quiet before the session reads again (0: never). */
  idle_ms?: number;
  reconnect_first_ms?: number;
  reconnect_max_ms?: number;
  /** etcd authentication: both or neither. */
  user?: string;
  password?: string;
  [field: string]: unknown;
}

/**
 * An HTTP source polled with `If-None-Match` (a follower only).
 *
 * @format the core's source config (`SourceConfig`), as the vectors write it.
 */
export interface SourceHttpConfig {
  source: 'http';
  url: string;
  interval_ms?: number;
  /** The long poll's `Prefer: wait=N` (0: no long poll). */
  wait_s?: number;
  request_timeout_ms?: number;
  reconnect_first_ms?: number;
  reconnect_max_ms?: number;
  [field: string]: unknown;
}

/**
 * A ZooKeeper ensemble, over TCP (no TLS): a follower of the znode at `path`, or calls
 * only. The package with TCP (the Node addon) connects; a runtime without it cannot.
 *
 * @format the core's source config (`SourceConfig`), as the vectors write it.
 */
export interface SourceZookeeperConfig {
  source: 'zookeeper';
  /** `host:port`, `host` (port 2181) or `[v6]:port`, tried in order. */
  members: string[];
  /** The znode to follow (absent: a session for calls only). */
  path?: string;
  /** The session timeout asked for; the server grants one within its own bounds. */
  session_timeout_ms?: number;
  request_timeout_ms?: number;
  reconnect_first_ms?: number;
  reconnect_max_ms?: number;
  /** ZooKeeper digest authentication: both or neither. */
  user?: string;
  password?: string;
  [field: string]: unknown;
}

/** Why a request, a source or a call failed: the same codes in every language. */
export interface SourceError {
  /** `unreachable`, `http`, `malformed`, `conflict`, `idle`, `unauthenticated`, or a core error's code. */
  code: string;
  message: string;
  /** The HTTP status (`http`), or `null`. */
  status: number | null;
}

/** An HTTP request for the shell to make, exactly as given. */
export interface SourceRequest {
  /** The session's number for it, in every answer about it. */
  id: number;
  method: 'GET' | 'POST';
  url: string;
  /** Lower-case names and values, to send as given. */
  headers: Record<string, string>;
  body: string | null;
  /** When it has failed if not answered (a stream: opened), on the shell's clock; or `null`. */
  deadline: number | null;
  /** The most bytes of the answer (a stream: of its unread part) to buffer. */
  limit: number;
  /** A stream (an etcd watch): its body is handed back in chunks as it arrives. */
  stream: boolean;
}

/** What a follower made of a document it read (`offered`). */
export type SourceOfferedResult =
  | { installed: { epoch: string } }
  | { unchanged: Record<string, never> }
  | { refused: { code: string; message: string } };

/**
 * A TCP connection for the shell to open (no TLS): answer `opened(id, nowMs)` once it is
 * open, or `failed(id, nowMs, 'unreachable', message)`; then hand back every read with
 * `chunk` and the peer's close with `failed(id, nowMs, 'closed', message)`.
 */
export interface SourceConnect {
  /** The session's number for it, in every answer about it. */
  id: number;
  /** A host name or an IP address (an IPv6 address without brackets). */
  host: string;
  port: number;
  /** When the session gives up on it, on the shell's clock (its own timer covers it). */
  deadline: number;
}

/**
 * What the shell does next: one key naming the action. `request`: make it; `connect`:
 * open a TCP connection; `send`: write the bytes (`data_b64`, standard base64 with
 * padding) to connection `id`, in order; `cancel`: stop request `id` (close connection
 * `id`); `offered`: a follower read a document (call the application back when
 * `changed`, or on a refusal); `lost`: the source was lost (the session tries again by
 * itself at `retry_at`); `done` / `failed`: call `call` ended.
 *
 * @format the core's source actions: the JSON `Action::to_value` writes and the vectors
 *   hold, handed over as they are (bindings-js/source.rs), spelled as that format spells it.
 */
export type SourceAction =
  | { request: SourceRequest }
  | { connect: SourceConnect }
  | { send: { id: number; data_b64: string } }
  | { cancel: { id: number } }
  | { offered: { result: SourceOfferedResult; changed: boolean; revision: string } }
  | { lost: { error: SourceError; retry_at: number } }
  | { done: { call: number; result: unknown } }
  | { failed: { call: number; error: SourceError } };

/**
 * A topology source as a protocol, without I/O (sans-IO): etcd through its JSON gateway
 * (a follower, or calls such as `get`, `txn`, `publish`), an HTTP endpoint polled with
 * `If-None-Match`, or ZooKeeper over TCP. The shell performs the actions the session
 * returns, hands back what its transport saw (`response`, `opened`, `chunk`, `failed`),
 * keeps one timer at `deadline` and calls `timer` when it passes. Times, deadlines and ids
 * are numbers (safe integers); revisions and epochs decimal strings. Every decision is the
 * Rust core's, the same in every language (`conformance/vectors/session_source.json`).
 */
export declare class SourceSession {
  /**
   * The session `config` describes.
   *
   * @throws {ShardrouteError} `invalid_argument` for a config the core refuses.
   */
  constructor(config: SourceConfig);
  /**
   * Starts following (the first read) at `nowMs`; a session with no key to follow
   * returns no action.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad time.
   */
  start(nowMs: Milliseconds): SourceAction[];
  /**
   * Starts one call (`{ op: 'get', key }`, `{ op: 'publish', key, document }`, ...) at
   * `nowMs`: its number (in its `done` or `failed` action) and the actions.
   *
   * @throws {ShardrouteError} `invalid_argument` for an op the session does not know or
   *   whose fields are wrong.
   */
  call(op: { op: string; [field: string]: unknown }, nowMs: Milliseconds): { call: number; actions: SourceAction[] };
  /**
   * The answer to request `id`: its status, headers (names in any case) and body (a
   * stream's: empty, its body follows in `chunk`).
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad id, time, status, headers or body.
   */
  response(id: number, nowMs: Milliseconds, status: number, headers: Record<string, string>, body: Uint8Array): SourceAction[];
  /**
   * Connection `id` (a `connect` action's) is open. An id the session did not give, or
   * gave up on, is ignored.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad id or time.
   */
  opened(id: number, nowMs: Milliseconds): SourceAction[];
  /**
   * The next piece of stream `id`'s body, or the next read of connection `id`, as it
   * arrived.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad id, time or data.
   */
  chunk(id: number, nowMs: Milliseconds, data: Uint8Array): SourceAction[];
  /**
   * Request or connection `id` could not be completed: `code` is `unreachable`, `closed`
   * (a stream or a connection ended by its server) or `limit_exceeded`; `message` says what
   * the transport saw.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad id or time.
   */
  failed(id: number, nowMs: Milliseconds, code: 'unreachable' | 'closed' | 'limit_exceeded' | string, message: string): SourceAction[];
  /**
   * The deadline passed.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad time.
   */
  timer(nowMs: Milliseconds): SourceAction[];
  /**
   * Stops everything: the requests in flight are cancelled, the calls failed, nothing
   * more is asked for.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad time.
   */
  close(nowMs: Milliseconds): SourceAction[];
  /** When to call `timer`, on the shell's clock, or `null`: read it again after every call. */
  get deadline(): number | null;
  /** The session's state: `revision`, `epoch`, `stats`, and each kind's own fields. */
  get state(): { revision: string | null; epoch: string | null; stats: Record<string, unknown>; [field: string]: unknown };
  /** The counters (`state.stats`): the follower's and the session's. */
  get stats(): Record<string, unknown>;
  /** The config in force, every field (defaults filled in). */
  get config(): SourceConfig;
  /** The follower's current router (a new `Router` each time), or `null`. */
  get router(): Router | null;
}

/**
 * The core's limit on a topology document's JSON text, in bytes
 * (`limits::MAX_DOCUMENT_BYTES`, 64 MiB): longer text, or an object whose JSON would be
 * longer, is refused (`limit_exceeded`), and every source of the package (`./http`,
 * `shardroute/etcd`) stops reading a body at it. Python's `shardroute.MAX_DOCUMENT_BYTES`.
 */
export declare const MAX_DOCUMENT_BYTES: number;

/**
 * The deepest nesting of arrays and objects in JSON text (`limits::MAX_JSON_NESTING`,
 * 64): documents, operations, configs and hashing specs nested deeper are refused
 * (`limit_exceeded`). Python's `shardroute.MAX_JSON_NESTING`.
 */
export declare const MAX_JSON_NESTING: number;

/**
 * How a `MigrationSession` moves the data: `'background'`, a copy job moves every moving
 * unit (vbucket, slot, partition) ahead of the services, a batch at a time
 * (`copyBatch`); `'lazy'`, nothing is copied ahead and the first read of a key under the
 * new topology moves it (`lazySteps`); `'expiration'`, for data that expires by itself
 * (a TTL): nothing is ever copied, writes go to the new owner, reads look at the old
 * owner too until the deadline `untilMs` (`readPlanAt`).
 */
export type MigrationMode = 'background' | 'lazy' | 'expiration';

/** What a `MigrationSession` asks for (`actions`): retire `node`, which the move emptied. */
export interface MigrationAction {
  /** `'retire'`: the node owns no shard any more and nobody reads it: take it out of service. */
  kind: 'retire';
  /** The node's id. */
  node: string;
}

/** The consistency check's answer (`MigrationSession.misplaced`). */
export interface Misplaced {
  /** The indices, in the keys given, of those the holder does not own, in order. */
  misplaced: number[];
  /** How many keys are misplaced. */
  count: number;
  /** How many keys were checked. */
  checked: number;
}

/**
 * The mode a `MigrationSession` is in (`session.mode`): the two a constructor takes, and
 * the two `MigrationSession.ofTopology` may decide as well: `'plain'`, nothing moves;
 * `'catch-up'`, the service routes under a topology one epoch newer than the one it
 * held before the `previous` published with it arrived: reads look at both, nothing is
 * moved.
 */
export type RoutingMode = 'plain' | MigrationMode | 'catch-up';

/** Where a write goes while data moves (`MigrationSession.writePlan`). */
export interface WritePlan {
  /** The new owner's id. */
  node: string;
  /** The epoch the write runs under (a u64): the new topology's, which the shard's fence must admit. */
  fenceEpoch: bigint;
}

/**
 * The lazy move of one key (`MigrationSession.lazySteps`): read it from `readFrom`, write
 * it to `writeTo` under `fenceEpoch`, then delete it from `retireFrom` and mark it moved.
 */
export interface LazySteps {
  /** The old owner, read first. */
  readFrom: string;
  /** The new owner, written. */
  writeTo: string;
  /** The old owner, whose copy is deleted last. */
  retireFrom: string;
  /** The epoch the write runs under (a u64). */
  fenceEpoch: bigint;
}

/**
 * The lazy moves of several keys with the same steps (`MigrationSession.lazyGroups`): move
 * them together, one statement per step.
 */
export interface LazyGroup {
  /** The steps every key of the group takes. */
  steps: LazySteps;
  /** The keys' indices in the array given, increasing. */
  indices: number[];
}

/** One batch of a background copy (`MigrationSession.copyBatch`). */
export interface CopyBatch {
  /** The units to copy now, in shard order: `[shard, from node, to node]`. */
  units: Array<[number, string, string]>;
  /** The cursor to store once they are copied and marked; `null` when the copy is complete. */
  next: number | null;
}

/**
 * What services and a copy job do while data moves from one topology to the next (a
 * `Migration`), or while nothing does, decided once, for every language: the read plan (the
 * old owner, then the new one, until the key, or in background mode its unit, is marked
 * moved: a copy that lands between the two reads is found on the new owner, read last), the write plan
 * under the **fence epoch** (the new topology's: a shard fenced at a newer epoch refuses
 * the write), a key's lazy move, the background copy's batches from a cursor the job
 * stores (resumable after a crash), and what a fence refusal means. It keeps no state:
 * the `moved` marks and the cursor live where the data lives. Every decision is the Rust
 * core's (`conformance/vectors/session_migration.json`).
 */
export declare class MigrationSession {
  /**
   * The session of `migration` in `mode`. It holds a copy of the migration: the one passed
   * in is left as it was.
   *
   * `untilMs` (a safe non-negative integer `number` or a `bigint`, the caller's clock) is
   * the deadline of an `'expiration'` session, the keys' TTL horizon: reads look at the
   * old owner too until then.
   *
   * @throws {ShardrouteError} `invalid_argument` when `migration` is not a `Migration`,
   *   for another mode, for `'background'` when the two topologies share no fixed
   *   partitions (modulo, jump, rings: move those lazily), for `'expiration'` without
   *   `untilMs`, or `untilMs` with another mode.
   */
  constructor(migration: Migration, mode: MigrationMode, untilMs?: number | bigint | null);
  /**
   * The consistency check: of `keys` found on `holder` (a node id, or a shard number),
   * those it does not own under `router` (an epoch's topology), by index, with their count
   * and the number checked. A key routed as it is stored (a hot key's salted form).
   *
   * @throws {ShardrouteError} `invalid_argument` for a node `router` does not list, a shard
   *   outside its range or a `holder` of another type; `limit_exceeded` past
   *   `MAX_SAMPLE_KEYS` keys; `invalid_key`.
   */
  static misplaced(router: Router, holder: string | number, keys: Key[]): Misplaced;
  /**
   * The routing a service uses, its mode decided by the core from what it holds:
   * `topology`, the router in force; `previous`, the router of the document published
   * with it as the one it replaces; `held`, the router it routed under just before.
   * `'background'` for a vbucket dictionary with a `forward_map`; `'lazy'` when
   * `previous` is one epoch older; `'catch-up'` when `held` is one epoch older and
   * differs (not for a dictionary); else `'plain'`.
   *
   * @throws {ShardrouteError} `invalid_argument` when an argument is not a `Router` (or
   *   `null`/omitted).
   */
  static ofTopology(topology: Router, previous?: Router | null, held?: Router | null): MigrationSession;
  /** The mode: `'plain'`, `'background'`, `'lazy'`, `'expiration'` or `'catch-up'`. */
  get mode(): RoutingMode;
  /** The deadline of an `'expiration'` session (a u64, the caller's clock), else `null`. */
  get untilMs(): bigint | null;
  /**
   * `readPlan` at `nowMs` (the caller's clock): in `'expiration'` mode `[new owner]` from
   * the deadline on (the old copies have expired); in every other mode `readPlan(key,
   * moved)`, time changing nothing.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` for a bad `nowMs` or `moved`.
   */
  readPlanAt(key: Key, nowMs: number | bigint, moved?: boolean): string[];
  /**
   * When to wake the session, once `nowMs`: an `'expiration'` session's deadline while
   * `nowMs` is before it (a u64); `null` otherwise.
   */
  nextDeadline(nowMs: number | bigint): bigint | null;
  /**
   * What to do at `nowMs`: a `retire` action per node the move emptied (it owned a shard
   * before and owns none now), in the old topology's node order, once the move's reads of
   * it are over: from the deadline in `'expiration'` mode; in `'background'` and `'lazy'`
   * modes when `moved` (every moving unit, or every key of those nodes, has moved);
   * never in `'plain'` or `'catch-up'`.
   */
  actions(nowMs: number | bigint, moved?: boolean): MigrationAction[];
  /** The epoch reads and writes run under: the topology's, a dictionary in motion's own (a u64). */
  get fenceEpoch(): bigint;
  /**
   * The nodes a query over every key reads, in order: each once when that is safe (the
   * sources of moves before their targets), some twice when keys move both ways; plain:
   * every node that owns a shard.
   */
  scanNodes(): string[];
  /**
   * Where a read of `key` looks, in order: `[old owner, new owner]` until the key (in
   * background mode, its unit) is marked `moved`, `[new owner]` then or when the key does
   * not change node; plain: `[owner]`.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `moved` is not a
   *   boolean.
   */
  readPlan(key: Key, moved?: boolean): string[];
  /**
   * Where a write of `key` goes: its new owner, under the fence epoch.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  writePlan(key: Key): WritePlan;
  /**
   * The lazy move of `key` when it changes node (its first read under the new topology),
   * or `null` when it stays or the mode is not `'lazy'`.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  lazySteps(key: Key): LazySteps | null;
  /**
   * The lazy moves of `keys` grouped by their steps: one entry per distinct steps (as
   * `lazySteps` gives them, key by key), in the order of its first key, with the keys'
   * indices; keys that stay are left out; empty unless the mode is `'lazy'`. A sweep or a
   * service's pending moves move a group in one statement per step.
   *
   * @throws {ShardrouteError} `invalid_argument` when `keys` is not an array; `invalid_key`.
   */
  lazyGroups(keys: Key[]): LazyGroup[];
  /**
   * When a copy job starts its next step, once the last one ran from `startedMs` to
   * `finishedMs` (its monotonic clock, ms): `finishedMs + max(minPauseMs, ceil(took * (1000
   * - dutyPerMille) / dutyPerMille))`, so that the job works at most `dutyPerMille`
   * thousandths of the wall time (omitted or `null`: the core's default, 50, 5%) and rests
   * at least `minPauseMs` between two steps (omitted or `null`: the core's default, 0);
   * saturating at `2n ** 64n - 1n`. The same in every mode: sleep until then.
   *
   * @throws {ShardrouteError} `invalid_argument` when `finishedMs` is before `startedMs`,
   *   for a duty outside `1..=1000`, or a time that is not a safe non-negative integer or
   *   a `bigint` in `0n..2n ** 64n`.
   */
  resumeAt(
    startedMs: number | bigint,
    finishedMs: number | bigint,
    dutyPerMille?: number | null,
    minPauseMs?: number | bigint | null,
  ): bigint;
  /**
   * The next `max` units a background copy moves, from the stored `cursor` (0 to start):
   * store the batch's `next` once its units are copied and marked.
   *
   * @throws {ShardrouteError} `invalid_argument` for a cursor or max that is not an
   *   integer in `0..=2^32-1`, in every mode but `'background'`, for `max` 0, or a cursor
   *   past the number of moving units.
   */
  copyBatch(cursor: number, max: number): CopyBatch;
  /**
   * What a write's refusal by a shard fenced at `minEpoch` means: `'refresh'` (the
   * topology moved on: follow it, plan the write again, retry). `minEpoch` is a safe
   * non-negative integer `number` or a `bigint` in `0n..2n ** 64n`.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad epoch, or one that admits the
   *   fence epoch (a fence did not refuse that write: the refusal is something else).
   */
  fenced(minEpoch: number | bigint): 'refresh';
}

/**
 * The error every failed call throws. `code` is stable across versions and languages:
 * `'invalid_topology'`, `'invalid_key'`, `'no_nodes'`, `'limit_exceeded'`,
 * `'invalid_argument'`, `'stale_epoch'`, `'read_only'`, `'cross_slot'`, and from a
 * session's `fail` actions `'too_many_redirects'` and `'unavailable'`; `message` is for
 * people.
 */
export declare class ShardrouteError extends Error {
  constructor(code: string, message: string, options?: { cause?: unknown });
  /** The stable error code, the same in every binding. */
  readonly code: string;
}

// BEGIN document types: made by scripts/document-types.py from docs/topology.schema.json (edit those)

/** A shardroute topology document (format shardroute/1): the epoch, how keys are hashed, the nodes and the strategy that places keys on them. A field set to null is read as absent. */
export interface Topology {
  /** Where editors find this schema (e.g. "./topology.schema.json"); the core ignores it and the canonical form leaves it out. */
  '$schema'?: string;
  /** The document format version. */
  format: 'shardroute/1';
  /** Version of this topology; higher is newer. Routers refuse an older one (stale_epoch). */
  epoch: U64;
  /** How keys become 64-bit hashes; SipHash-2-4 without a hash tag when absent. */
  hashing?: Hashing;
  /** The nodes, in order: the order is part of the placement. Ids are unique. */
  nodes: TopologyNode[];
  strategy: Strategy;
  placement?: Placement;
  hot_keys?: HotKeys;
  /** Global secondary indexes by name: each routes terms by its own strategy and hashing over these nodes, at this epoch (core/src/indexes.rs). */
  indexes?: Record<string, Index>;
  /** Named node groups: each a non-empty list of node ids of this document, each once, in the group's order (the order of a table family's nodes). core/src/topology/tables.rs. */
  node_groups?: Record<string, string[]>;
  /** Table families by name: which tables route by which strategy over which node group, or live on every node of it (reference tables). A table belongs to one family; at most 65,536 tables in all. core/src/topology/tables.rs. */
  table_families?: Record<string, TableFamily>;
  /** Tenants placed on a node group or zone, or spread over several shards, while the rest route as without the section (core/src/topology/tenants.rs). */
  tenants?: Tenants;
  /** XXH64 (seed 0) of the canonical JSON of the rest of the document; a truncated or edited copy is refused. */
  checksum?: string;
}

/** An unsigned 64-bit integer: a JSON integer, or a decimal string (JavaScript cannot hold every u64 in a Number). */
export type U64 = number | bigint | string;

/** A u64 other than 0. */
export type PositiveU64 = U64;

/** A signed 64-bit token (Cassandra's Murmur3Partitioner range): a JSON integer, or a decimal string with an optional minus sign. */
export type Token = number | bigint | string;

/** The id of a node of `nodes`. */
export type NodeId = string;

/** A relative capacity, finite, in (0, 1e6]. */
export type Weight = number;

/** A node: what `node(key)` returns, what clients need to reach it, its weight and state. */
export interface TopologyNode {
  /** Unique, non-empty, at most 1024 bytes. */
  id: NodeId;
  /** Carried for clients (host:port); ketama hashes it. */
  address?: string;
  /** Relative capacity, default 1; only weighted strategies accept another value. */
  weight?: Weight;
  /** Failure domain, for clients and the rebalance planner. */
  zone?: string;
  /** A draining node is being emptied, a failed one has lost its data; default active. */
  state?: 'active' | 'draining' | 'failed';
}

/** Key hashing (core/src/hashing.rs). */
export interface Hashing {
  /** The hash of the key bytes; default siphash-2-4. */
  function?: 'siphash-2-4' | 'crc32';
  /** The 16 SipHash key bytes as 32 hex digits (siphash-2-4 only); default 000102030405060708090a0b0c0d0e0f. */
  seed?: string;
  /** redis: hash only the {tag} of a key so related keys co-locate. */
  hash_tag?: 'none' | 'redis';
  /** An integer key is hashed as its 8 little-endian bytes, or is its own hash. */
  integers?: 'le_bytes' | 'identity';
  /** Route a byte key by one part of it (a compound key); the whole key when absent. */
  partition_key?: PartitionKey;
  /** What the keys are; default bytes (the text "7" and the integer 7 are different keys). u64: every key is an unsigned 64-bit integer; a text key must be its canonical decimal text (no sign, space or leading zero) and routes as that integer, any other is refused with invalid_key. */
  keys?: 'bytes' | 'u64';
}

/** How a key's tenant is found (partition_key, default the document's hashing.partition_key, which must then not be the whole key) and the tenants with an entry. A key of a spread tenant routes as `tenant#bucket` (bucket = hash of the whole key % shards); a placed key goes to jump(hash, len(place)) over its place's nodes (the group's, in its order, or every node; those in zone when named). */
export interface Tenants {
  /** The rule a key's tenant is found by; the document's hashing.partition_key when absent. */
  partition_key?: PartitionKey;
  /** Each tenant (at most 256 bytes of UTF-8) to its entry; a tenant with no entry routes as without the section. */
  entries: Record<string, Tenant>;
}

/** Where a tenant's keys live: on a node group and/or in a zone (placed), over how many shards (spread); at least one of the three. */
export interface Tenant {
  /** A name in node_groups. */
  group?: string;
  /** A zone some node of the place is in. */
  zone?: string;
  /** The buckets the tenant's keys are spread over. */
  shards?: number;
}

/** Tables routed by one rule over one node group: a strategy (and optionally its own hashing; default the document's) over the group's nodes, or "reference": true (no strategy): every row on every node of the group, read from one, written to all. Without group: every node of the document. */
export interface TableFamily {
  tables: string[];
  /** A name in node_groups. */
  group?: string;
  hashing?: Hashing;
  /** Names only nodes of the family's group. */
  strategy?: Strategy;
  reference?: boolean;
}

/** A global (term-partitioned) secondary index: its strategy (any but the compatibility profiles) and hashing, over the document's nodes. */
export interface Index {
  strategy: unknown;
  hashing?: Hashing;
}

/** Which part of a byte key every strategy routes by (core/src/hashing.rs): the bytes before the first separator (prefix), field `index` from 0 of the key split at every separator (field), `length` bytes from `offset` (bytes), or the whole key (whole, the default). A key without that part routes by the whole key; integer keys have no parts. */
export interface PartitionKey {
  rule: 'whole' | 'prefix' | 'field' | 'bytes';
  /** 1 to 8 bytes of text (prefix and field). */
  separator?: string;
  /** Which field, from 0 (field). */
  index?: number;
  /** The first byte of the part (bytes). */
  offset?: number;
  /** How many bytes the part has (bytes). */
  length?: number;
}

/** Name templates rendered per shard by `locate`: {shard}, {shard:0N} (N in 1..20), {node}, and {{ }} for literal braces. */
export type Placement = Record<string, string>;

/** Keys salted over several shards: a hot key is written under key + separator + i for i < fanout. */
export interface HotKeys {
  /** Default "#". */
  separator?: string;
  /** Each hot key (as text) and its fanout. */
  keys: Record<string, number>;
}

/** A key written in a document: exactly one of utf8 (text), hex (bytes) or u64 (an integer key). */
export interface KeyObject {
  utf8?: string;
  hex?: string;
  u64?: U64;
}

/** A key_range boundary: a key object, not the empty key, of at most 4096 bytes. */
export type BoundaryKey = KeyObject;

/** A vbucket's chain of node ids: the active first, then its replicas. */
export type Chain = NodeId[];

/** The shard function and its parameters: one object per `type` (core/src/strategy/). */
export type Strategy = ModuloStrategy | JumpStrategy | RingStrategy | RendezvousStrategy | VbucketStrategy | KeyRangeStrategy | HashRangeStrategy | DirectoryStrategy | MultilevelStrategy | TrieStrategy | TokenRingStrategy | MaglevStrategy | IdBitsStrategy | IdGroupsStrategy | CassandraStrategy | RedisClusterStrategy | VitessStrategy | KafkaStrategy | ElasticsearchStrategy | KetamaStrategy | CouchbaseStrategy | VshardStrategy;

/** hash % n (node index), or 1-based: 0 becomes n. */
export interface ModuloStrategy {
  type: 'modulo';
  /** Shards 1..=n (user_id % n with 0 meaning n); default false. */
  one_based?: boolean;
}

/** Lamping-Veach jump consistent hash over the node list. */
export interface JumpStrategy {
  type: 'jump';
}

/** Consistent-hash ring with virtual nodes, weighted by points. */
export interface RingStrategy {
  type: 'ring';
  /** Points of a weight-1 node; default 160. */
  points_per_node?: number;
}

/** Rendezvous (highest random weight) hashing, weighted. */
export interface RendezvousStrategy {
  type: 'rendezvous';
}

/** Fixed vbuckets (hash % vbuckets) with a dictionary of chains (docs/dictionary-format.md). */
export interface VbucketStrategy {
  type: 'vbucket';
  /** Default 1024. */
  vbuckets?: number;
  /** One chain per vbucket; default round-robin over the nodes. */
  map?: Chain[];
  /** Replicas of the round-robin table when there is no map; default 0. */
  replicas?: number;
  /** Keys sent to a chosen vbucket instead of hash % vbuckets. */
  overrides?: VbucketOverride[];
  /** The target table while vbuckets move (needs a map). */
  forward_map?: Chain[];
  /** The state of each vbucket in motion, by vbucket number; absent ones are active. */
  states?: Record<string, 'active' | 'migrating' | 'read_only'>;
}

export interface VbucketOverride {
  key: KeyObject;
  vbucket: number;
}

/** Sorted byte-string boundaries over raw keys: range i holds keys from boundaries[i-1] up to boundaries[i]. */
export interface KeyRangeStrategy {
  type: 'key_range';
  /** Strictly increasing, none the empty key; N boundaries make N + 1 ranges. */
  boundaries?: BoundaryKey[];
  /** The owner of each range; default round-robin over the nodes. */
  ranges?: NodeId[];
}

/** Ranges of the 64-bit hash space. */
export interface HashRangeStrategy {
  type: 'hash_range';
  /** Strictly increasing hashes, none 0; default equal widths. */
  boundaries?: PositiveU64[];
  /** The owner of each range; default one range per node. */
  ranges?: NodeId[];
}

/** An explicit key -> node table, then a fallback strategy for unlisted keys. */
export interface DirectoryStrategy {
  type: 'directory';
  entries?: DirectoryEntry[];
  fallback: DirectoryFallback;
}

export interface DirectoryEntry {
  key: KeyObject;
  node: NodeId;
}

/** A strategy whose shards are node indices: modulo (0-based), jump, ring or rendezvous. */
export type DirectoryFallback = ModuloFallback | JumpStrategy | RingStrategy | RendezvousStrategy;

/** modulo as a directory's fallback: 0-based only. */
export interface ModuloFallback {
  type: 'modulo';
  one_based?: false;
}

/** Partitions (hash % partitions) mapped to groups, a node chosen within the group. */
export interface MultilevelStrategy {
  type: 'multilevel';
  /** Default 4096. */
  partitions?: number;
  groups: MultilevelGroup[];
  /** The group id of each partition; default spread over the groups. */
  map?: string[];
  /** How a partition picks its node in the group; default rendezvous (weighted). */
  within_group?: 'rendezvous' | 'jump';
}

export interface MultilevelGroup {
  id: string;
  nodes: NodeId[];
}

/** Leaves of a binary trie over the hash bits, one leaf per node. */
export interface TrieStrategy {
  type: 'trie';
  /** In prefix order, covering the hash space exactly; default a balanced trie over the nodes. */
  leaves?: TrieLeaf[];
}

export interface TrieLeaf {
  /** Hash bits from the most significant, as '0' and '1'. */
  prefix: string;
  node: NodeId;
}

/** Node id -> its tokens. */
export type Tokens = Record<string, Token[]>;

/** Cassandra-style token ring (prev, token] from a seeded generator, or explicit tokens. */
export interface TokenRingStrategy {
  type: 'token_ring';
  /** Generated tokens of a weight-1 node; default 16. */
  tokens_per_node?: number;
  /** Seed of the token generator; default 0. */
  token_seed?: U64;
  /** Explicit tokens of some nodes (weight 1); the others get generated ones. */
  tokens?: Tokens;
}

/** Maglev lookup table (Envoy-compatible). */
export interface MaglevStrategy {
  type: 'maglev';
  /** A prime; default 65537. */
  table_size?: number;
}

/** Ids that carry their shard: a bit field (shard_high, snowflake, the top random bits of a ULID) or a ticket server's residue. */
export interface IdBitsStrategy {
  type: 'id_bits';
  layout: 'shard_high' | 'snowflake' | 'ticket' | 'ulid';
  /** shard_high (default 8), snowflake (default 10), ulid (default 8): width of the routing field. */
  shard_bits?: number;
  /** shard_high: the routing field's lowest bit; default 64 - shard_bits. */
  shard_shift?: number;
  /** snowflake: default 41. */
  timestamp_bits?: number;
  /** snowflake: default 12. */
  sequence_bits?: number;
  /** snowflake: Unix ms of timestamp 0; default 1288834974657 (Twitter's). */
  epoch_ms?: U64;
  /** ticket (required): the ticket servers' auto_increment_increment. */
  servers?: number;
  /** Shard -> node id; default the nodes in order. */
  shards?: NodeId[];
  /** Cell directory: the routing field is a cell, mapped to a shard. */
  cells?: Record<string, number>;
}

/** Id intervals owned by groups of weighted shards; exactly one group is writable. */
export interface IdGroupsStrategy {
  type: 'id_groups';
  groups: IdGroup[];
  tables?: IdTables;
}

export interface IdGroup {
  id: string;
  intervals: Interval[];
  shards: IdGroupShard[];
  /** The group new ids come from; default false. */
  writable?: boolean;
}

/** [start, end): start below end. */
export type Interval = [U64, U64];

export interface IdGroupShard {
  node: NodeId;
  /** Residues of id % W this shard owns; default 1. */
  weight?: number;
}

/** Fragment tables: the table of id i is rule with {n} = i / interval. */
export interface IdTables {
  /** At least 1. */
  interval: PositiveU64;
  /** A name with one {n} or {n:0W} placeholder. */
  rule: string;
}

/** Cassandra's Murmur3Partitioner over explicit tokens (compatibility profile). */
export interface CassandraStrategy {
  type: 'cassandra';
  /** Every node's tokens, as nodetool ring lists them. */
  tokens: Tokens;
}

/** Redis Cluster: CRC16 hash slots % 16384 (hash tags), node from the slot ranges (compatibility profile). */
export interface RedisClusterStrategy {
  type: 'redis_cluster';
  /** Ranges covering every slot exactly once; default redis-cli's even split over the nodes. */
  slots?: SlotRange[];
}

export interface SlotRange {
  start: number;
  end: number;
  /** The master, then its replicas. */
  nodes: NodeId[];
}

/** Vitess vindexes over keyranges (compatibility profile). */
export interface VitessStrategy {
  type: 'vitess';
  vindex: 'hash' | 'xxhash' | 'numeric';
  /** In keyspace order, without gaps or overlaps. */
  shards: VitessShard[];
}

export interface VitessShard {
  /** start-end in hex with whole bytes: "-80", "80-c0", "c0-", "-". */
  name: string;
  node: NodeId;
}

/** Kafka's keyed-record partitioner (compatibility profile). */
export interface KafkaStrategy {
  type: 'kafka';
  partitions: number;
  /** Default java. */
  partitioner?: 'java' | 'kafkajs_legacy';
  /** Each partition's leader; default partition % nodes. */
  leaders?: NodeId[];
}

/** Elasticsearch's document routing (compatibility profile). */
export interface ElasticsearchStrategy {
  type: 'elasticsearch';
  number_of_shards: number;
  /** A whole multiple of number_of_shards; default Elasticsearch's. */
  number_of_routing_shards?: number;
  /** Default 1. */
  routing_partition_size?: number;
  /** Each shard's primary node; default shard % nodes. */
  primaries?: NodeId[];
}

/** The ketama continuum of memcached clients: MD5 of each server's address (compatibility profile). */
export interface KetamaStrategy {
  type: 'ketama';
  /** Default libmemcached. */
  variant?: 'libmemcached' | 'libketama' | 'couchbase';
  /** Default 160. */
  points_per_server?: number;
}

/** Couchbase's vbucket map (compatibility profile). */
export interface CouchbaseStrategy {
  type: 'couchbase';
  /** vBucketMap: one row per vbucket. */
  map: CouchbaseRow[];
  /** vBucketMapForward, as long as map. */
  forward_map?: CouchbaseRow[];
}

/** The active's node id, then the replicas'; null where none is (-1 in Couchbase's config). Every row has the same length. */
export type CouchbaseRow = (NodeId | null)[];

/** Tarantool vshard buckets (compatibility profile). */
export interface VshardStrategy {
  type: 'vshard';
  /** Default 3000. */
  bucket_count?: number;
  /** Contiguous bucket ranges from 1 to bucket_count; default an even split. */
  ranges?: VshardRange[];
}

export interface VshardRange {
  node: NodeId;
  first: number;
  last: number;
}

/** An existing node's id, or a node entry to append. */
export type NodeChoice = NodeId | TopologyNode;

/** A topology operation for apply(topology, operation) (core/src/ops/mod.rs lists what each does and reports). */
export type Operation = AddNodeOperation | RemoveNodeOperation | DisruptionOperation | PlanRebalanceOperation | CompleteMovesOperation | VbucketDoubleOperation | VbucketHalveOperation | VbucketOverrideOperation | VbucketOverrideRemoveOperation | RangeSplitOperation | RangeSplitMedianOperation | RangeMergeOperation | RangeMoveOperation | RangePresplitOperation | DirectorySetOperation | DirectoryRemoveOperation | HotKeyAddOperation | HotKeyRemoveOperation | SuggestOperation | MultilevelRemapOperation | MultilevelGroupSetOperation | NodeGroupSetOperation | TableFamilySetOperation | TableFamilyRemoveOperation | TenantSetOperation | TenantRemoveOperation | TrieSplitOperation | TrieRemoveOperation | IdBitsComposeOperation | IdBitsTicketsOperation | IdBitsReserveBlockOperation | IdBitsTicketServerOperation | IdBitsDecodeOperation | IdGroupsAddGroupOperation | IdGroupsAddIntervalOperation | IdGroupsSetWritableOperation | RedisMovedOperation | ImportCassandraRingOperation | ImportRedisClusterSlotsOperation | ImportRedisClusterShardsOperation | ImportCouchbaseConfigOperation;

/** Appends a node (strategies whose placement follows the node list). */
export interface AddNodeOperation {
  op: 'add_node';
  node: TopologyNode;
}

/** Removes the node with this id. */
export interface RemoveNodeOperation {
  op: 'remove_node';
  id: string;
}

/** Replaces the topology with `to` (its epoch is ignored) and reports how much of the key space changes owner. */
export interface DisruptionOperation {
  op: 'disruption';
  to: Topology;
}

/** vbucket: plans a change of nodes and starts it (promotions at once, the rest in forward_map). */
export interface PlanRebalanceOperation {
  op: 'plan_rebalance';
  add?: TopologyNode[];
  remove?: string[];
  fail?: string[];
  /** Node id -> new weight. */
  weights?: Record<string, Weight>;
  replicas?: number;
  /** Default 2. */
  max_moves_per_node?: number;
  /** The measured size or load of each vbucket (exactly V of them): actives are balanced by weight instead of by count. */
  vbucket_weights?: U64[];
}

/** vbucket: map takes the forward_map chains of `vbuckets` (default all). */
export interface CompleteMovesOperation {
  op: 'complete_moves';
  vbuckets?: number[];
}

/** vbucket: V -> 2V; no key changes node. */
export interface VbucketDoubleOperation {
  op: 'vbucket_double';
}

/** vbucket: the inverse of vbucket_double. */
export interface VbucketHalveOperation {
  op: 'vbucket_halve';
}

/** vbucket: sends `key` to `vbucket`. */
export interface VbucketOverrideOperation {
  op: 'vbucket_override';
  key: KeyObject;
  vbucket: number;
}

/** vbucket: `key` goes back to hash % V. */
export interface VbucketOverrideRemoveOperation {
  op: 'vbucket_override_remove';
  key: KeyObject;
}

/** key_range, hash_range: splits range `shard` (default the one holding `at`) at `at` (a key object, or a hash for hash_range). */
export interface RangeSplitOperation {
  op: 'range_split';
  at: KeyObject | U64;
  shard?: number;
  /** The upper part's owner; default the range's. */
  node?: NodeChoice;
}

/** key_range, hash_range: splits range `shard` at the median of the sample keys inside it. */
export interface RangeSplitMedianOperation {
  op: 'range_split_median';
  shard: number;
  sample: KeyObject[];
  node?: NodeChoice;
}

/** key_range, hash_range: joins ranges `shard` and `shard + 1`. */
export interface RangeMergeOperation {
  op: 'range_merge';
  shard: number;
  node?: NodeChoice;
}

/** key_range, hash_range: gives range `shard` to `node`. */
export interface RangeMoveOperation {
  op: 'range_move';
  shard: number;
  node: NodeChoice;
}

/** key_range, hash_range: replaces the table with `ranges` ranges of equal sample counts, round-robin over `nodes`. */
export interface RangePresplitOperation {
  op: 'range_presplit';
  ranges: number;
  sample?: KeyObject[];
  nodes?: NodeChoice[];
}

/** directory: lists `key` on node `node`. */
export interface DirectorySetOperation {
  op: 'directory_set';
  key: KeyObject;
  node: string;
}

/** directory: drops the entry of `key`. */
export interface DirectoryRemoveOperation {
  op: 'directory_remove';
  key: KeyObject;
}

/** any strategy: salts `key` (text, as a key object) over `fanout` salted keys, or changes its fanout. */
export interface HotKeyAddOperation {
  op: 'hot_key_add';
  key: KeyObject;
  fanout: number;
}

/** any strategy: stops salting `key`. */
export interface HotKeyRemoveOperation {
  op: 'hot_key_remove';
  key: KeyObject;
}

/** any strategy, a generator: operations to review from measured load (core/src/ops/suggest.rs); the topology comes back unchanged. */
export interface SuggestOperation {
  op: 'suggest';
  shards?: ShardLoad[];
  keys?: KeyLoad[];
  max_bytes?: U64;
  max_requests?: U64;
  /** vbucket: a node whose active load passes its target by more than this percent gets a plan_rebalance with vbucket_weights. */
  max_imbalance?: number;
  /** The measure max_imbalance weighs vbuckets by. Default requests. */
  weight_by?: 'bytes' | 'requests' | 'keys';
  /** The cooling side: a load under this percent of max_bytes / max_requests has cooled (hot_key_remove, range_merge, reopening an id group). Default 50; 0 suggests no cooling. */
  cool_percent?: number;
  /** vbucket: a warning (with vbucket_double) when there are fewer vbuckets than this many per node. Default 4; 0 turns it off. */
  min_vbuckets_per_node?: number;
  /** The capacity of every node, by measure: headroom and capacity-cascade warnings. */
  capacity?: Capacity;
  /** The capacity of named nodes (each at most once); a measure given here replaces capacity's. */
  node_capacity?: NodeCapacity[];
  /** A node past this percent of a capacity gets a headroom warning. Default 70. */
  capacity_warn?: number;
  /** A node past this percent of a capacity gets the stronger warning; at least capacity_warn. Default 80. */
  capacity_alert?: number;
}

/** A node's capacity by measure; a measure not given is not checked. */
export interface Capacity {
  bytes?: U64;
  requests?: U64;
  keys?: U64;
}

/** One node's capacity by measure. */
export interface NodeCapacity {
  node: string;
  bytes?: U64;
  requests?: U64;
  keys?: U64;
}

/** The measured load of one shard; a sample of its keys places a key range's split. */
export interface ShardLoad {
  shard: number;
  bytes?: U64;
  requests?: U64;
  keys?: U64;
  sample?: KeyObject[];
}

/** The measured request rate of one key. */
export interface KeyLoad {
  key: KeyObject;
  requests?: U64;
}

/** multilevel: maps `partition` to group `group`. */
export interface MultilevelRemapOperation {
  op: 'multilevel_remap';
  partition: number;
  group: string;
}

/** multilevel: sets group `group`'s nodes (creates it; [] removes an empty one). */
export interface MultilevelGroupSetOperation {
  op: 'multilevel_group_set';
  group: string;
  nodes: string[];
}

/** any: sets node group `group`'s nodes, in the group's order (creates it; [] removes it, refused while a table family or tenant names it). */
export interface NodeGroupSetOperation {
  op: 'node_group_set';
  group: string;
  nodes: string[];
}

/** any: sets table family `family` to `entry`, as table_families writes it (creates or replaces it). */
export interface TableFamilySetOperation {
  op: 'table_family_set';
  family: string;
  entry: TableFamily;
}

/** any: removes table family `family`; its tables route by the document's own strategy. */
export interface TableFamilyRemoveOperation {
  op: 'table_family_remove';
  family: string;
}

/** any: sets tenant `tenant`'s entry, as tenants.entries writes it (creates or replaces it); a placed entry needs a strategy whose shards are its nodes. */
export interface TenantSetOperation {
  op: 'tenant_set';
  tenant: string;
  entry: Tenant;
}

/** any: removes tenant `tenant`'s entry; its keys route as without one. */
export interface TenantRemoveOperation {
  op: 'tenant_remove';
  tenant: string;
}

/** trie: leaf `leaf` becomes leaf+"0" (same node) and leaf+"1" for `node` (appended). */
export interface TrieSplitOperation {
  op: 'trie_split';
  leaf: string;
  node: TopologyNode;
}

/** trie: removes node `node`; its leaf merges with a sibling. */
export interface TrieRemoveOperation {
  op: 'trie_remove';
  node: string;
}

/** id_bits generator: the id of `shard` (or `cell`) and the layout's other fields (shard_high: local; snowflake: timestamp_ms, sequence; ticket: sequence; ulid: timestamp_ms, randomness). */
export interface IdBitsComposeOperation {
  op: 'id_bits_compose';
  shard?: U64;
  cell?: U64;
  local?: U64;
  timestamp_ms?: U64;
  sequence?: U64;
  /** ulid: the 80 - shard_bits random bits the caller drew (a decimal string). */
  randomness?: string | number;
}

/** id_bits ticket layout: the ticket server to ask next, by rotation from the caller's counter `turn` and failover past the servers (shards, or cells) listed in `down`. */
export interface IdBitsTicketServerOperation {
  op: 'id_bits_ticket_server';
  turn: U64;
  down?: number[];
}

/** id_bits: the shard and fields of `id` (ULID text for the ulid layout, else an integer). */
export interface IdBitsDecodeOperation {
  op: 'id_bits_decode';
  id: U64 | string;
}

/** id_bits ticket generator: the next `count` ids of server `shard` (or `cell`) from `auto_increment`. */
export interface IdBitsTicketsOperation {
  op: 'id_bits_tickets';
  shard?: U64;
  cell?: U64;
  auto_increment: U64;
  count: U64;
}

/** id_bits ticket generator: reserves `block_size` ids of server `shard` (or `cell`) in one step. */
export interface IdBitsReserveBlockOperation {
  op: 'id_bits_reserve_block';
  shard?: U64;
  cell?: U64;
  auto_increment: U64;
  block_size: U64;
}

/** id_groups: appends `group` (without writable); it becomes the writable group unless `writable` is false. */
export interface IdGroupsAddGroupOperation {
  op: 'id_groups_add_group';
  group: IdGroup;
  writable?: boolean;
}

/** id_groups: gives group `group` the interval [start, end). */
export interface IdGroupsAddIntervalOperation {
  op: 'id_groups_add_interval';
  group: string;
  interval: Interval;
}

/** id_groups: makes group `group` the writable one. */
export interface IdGroupsSetWritableOperation {
  op: 'id_groups_set_writable';
  group: string;
}

/** redis_cluster: a MOVED reply; slot `slot` is served by the node at `address` (appended when unknown). */
export interface RedisMovedOperation {
  op: 'redis_moved';
  slot: number;
  address: string;
}

/** Replaces the strategy with cassandra over `tokens` (node id -> token list). */
export interface ImportCassandraRingOperation {
  op: 'import_cassandra_ring';
  tokens: Tokens;
}

/** Replaces the strategy with redis_cluster from a CLUSTER SLOTS reply (its JSON arrays). */
export interface ImportRedisClusterSlotsOperation {
  op: 'import_redis_cluster_slots';
  reply: unknown[];
}

/** Replaces the strategy with redis_cluster from a CLUSTER SHARDS reply (objects or RESP2 flat arrays). */
export interface ImportRedisClusterShardsOperation {
  op: 'import_redis_cluster_shards';
  reply: unknown[];
}

/** Replaces the topology with a couchbase one built from a bucket config (an object, or its JSON text). */
export interface ImportCouchbaseConfigOperation {
  op: 'import_couchbase_config';
  config: Record<string, unknown> | string;
}

// END document types
