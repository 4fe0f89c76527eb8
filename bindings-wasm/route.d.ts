// Type declarations of `shardroute-wasm/route`, the route build: the calls an edge routing
// tier makes, in a module of its own (pkg-route/, built by build.sh without the crate's
// `full-api` and `operations` features, over the strategies `modulo`, `jump`, `vbucket`
// and `redis_cluster`). Written by hand; `tsc --noEmit` checks test/route-types.ts against
// it, and test/route.test.mjs checks that it names exactly the entry's exports.
//
// Every call here is the full package's (index.d.ts has the long form of each doc), with
// the same answers and errors. `Topology` here takes only the strategies the route build
// has (`Strategy`; test/route-types.ts checks that another one does not compile), and a
// document of another strategy (as JSON text, or untyped) is refused at run time
// (`invalid_topology`: `strategy "ring" is not in shardroute-wasm/route, which routes only
// modulo, jump, vbucket, redis_cluster; import 'shardroute-wasm' for every strategy`).
// Left out, and not exported at all:
//   - functions: `apply`, `diff`, `encodeDictionary`, `hashKey`, `jump`, `moduloMoves`,
//     `parseRedirect`, `parseAddress`, `sessionDefaults`;
//   - classes: `ClusterSession`, `Command`, `Action` (the Redis Cluster session);
//   - `Router`: `routeU64s`, `routePacked`, `sameSlot`, `groupByNode`, `stats`, `shardsForRange`,
//     `decodeId`, `locate`, `fanout`, `saltedKey`, `saltedKeys`, `moved`, `ask`,
//     `scatterEvery`, `scatterRange`, `scatterKeys`, `index`, `indexNames`, `indexWritePlan`
//     (documents with `indexes` are read and route as usual);
//   - `Migration`: `movingShards`, `scanNodes`, `movingKeys`; `MigrationSession`: `copyBatch`,
//     `scanNodes`, `actions` (the retire step), `lazyGroups` and `resumeAt` (a mover's
//     groups and a copy job's pace) and the static `misplaced` (the consistency check);
//   - `TopologyFollower`: `publish`.
// The full package (`shardroute-wasm`) has them all. Objects of the two builds do not mix:
// each has its own module, so pass a route `Router` only to route calls.

import type {
  FollowerConfig, FollowerStats, JumpStrategy, Key, LazySteps, Migration as FullMigration, Milliseconds, MigrationMode,
  ModuloStrategy, Move, RedisClusterStrategy, Revision, RoutingMode, SourceAction, SourceConfig,
  Topology as FullTopology, VbucketStrategy, WritePlan,
} from './index.js';

export type {
  FollowerConfig, FollowerStats, Hashing, JumpStrategy, Key, LazySteps, Milliseconds, MigrationMode, ModuloStrategy, Move,
  RedisClusterStrategy, Revision, RoutingMode, SaltedKey, SourceAction, SourceConfig, SourceConnect, SourceError,
  SourceEtcdConfig, SourceHttpConfig, SourceOfferedResult, SourceRequest, SourceZookeeperConfig, TopologyNode,
  VbucketStrategy, WritePlan,
} from './index.js';

/**
 * The strategies the route build routes (build.sh's default route build: `modulo`, `jump`,
 * `vbucket`, `redis_cluster`). Every other strategy is the full package's
 * (`shardroute-wasm`, index.d.ts's `Strategy`).
 */
export type Strategy = ModuloStrategy | JumpStrategy | VbucketStrategy | RedisClusterStrategy;

/** A topology document (index.d.ts's `Topology`) whose strategy the route build has. */
export interface Topology extends Omit<FullTopology, 'strategy'> {
  strategy: Strategy;
}

/**
 * Where `init` can load the module from: a URL or URL string (fetched), a `Response` or a
 * promise of one, the bytes of the `.wasm`, or a compiled `WebAssembly.Module`.
 */
export type InitInput = URL | string | Response | PromiseLike<Response> | BufferSource | WebAssembly.Module;

/**
 * Loads and instantiates the route build's module, once: call it (and await it) before
 * the first `Router` in a browser or a service or web worker (before it, every call there
 * throws a `ShardrouteError` `not_initialized` that says so). Omitted, `input` is the
 * `.wasm` beside the glue, which webpack and Vite emit with the bundle; with esbuild,
 * import `shardroute-wasm/shardroute_route.wasm` through its `file` loader and pass the URL.
 * A no-op in Node, Deno and workerd, whose entries load the module on import.
 */
export declare function init(input?: InitInput): Promise<void>;

/**
 * Instantiates the module synchronously from a compiled `WebAssembly.Module` or from its
 * bytes. A no-op when the module is already loaded.
 */
export declare function initSync(module: WebAssembly.Module | BufferSource): void;

/** A router: a topology document compiled for lookups (index.d.ts's `Router`, the routing calls). */
export declare class Router {
  /**
   * Parses, validates and compiles a topology document: its JSON text, or the document
   * as a `Topology` object.
   *
   * @throws {ShardrouteError} `invalid_topology` (JSON text of a strategy the route build
   *   does not have among them: the message names the package that has it), `no_nodes` or
   *   `limit_exceeded`.
   */
  constructor(topology: string | Topology);
  /**
   * The shard of `key`: a node index for `modulo` and `jump` (`1..=n` for 1-based modulo),
   * the vbucket number for `vbucket`, the slot for `redis_cluster`.
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
   * `count` distinct node ids for `key` in preference order, owner first.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` for a bad `count`.
   */
  replicas(key: Key, count: number): string[];
  /**
   * The shards of many keys, in order: the same as `route` on each.
   *
   * @throws {ShardrouteError} `invalid_key` (naming the key's index); `invalid_argument`
   *   when `keys` is not an array.
   */
  routeMany(keys: readonly Key[]): Uint32Array;
  /**
   * The ids of the nodes that own many keys, in order: the same as `node` on each.
   *
   * @throws {ShardrouteError} as `routeMany`.
   */
  nodeMany(keys: readonly Key[]): string[];
  /**
   * The node that serves reads of `key`: `node(key)`, except for a vbucket in motion,
   * whose reads go to its old owner.
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
   * The id of the node to read `key` from when reads may go to replicas: a replica of the
   * key's chain picked by `turn` (omitted: 0), or the owner when the chain has none.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` for a bad `turn`.
   */
  readReplica(key: Key, turn?: number): string;
  /**
   * The id of the node that owns `shard` (a node index, a vbucket, a slot).
   *
   * @throws {ShardrouteError} `invalid_argument` for a shard `route` cannot return.
   */
  shardOwner(shard: number): string;
  /**
   * A new `Router` for `topology` when it is newer than this one's; this router is
   * unchanged. The same document again is accepted.
   *
   * @throws {ShardrouteError} the topology's errors as for the constructor;
   *   `stale_epoch` for a lower epoch, or the same epoch with different content.
   */
  replace(topology: string | Topology): Router;
  /** The topology's epoch (a u64, exact above 2^53). */
  get epoch(): bigint;
  /** The canonical JSON text of the topology, byte for byte the same in every language. */
  toJson(): string;
  /** Releases the router's WebAssembly memory now (the garbage collector does it otherwise). */
  free(): void;
}

/**
 * A move of data from one topology to the next: where a key goes, where services write
 * (the new owner) and read (the old owner, then the new one, until the key has moved).
 */
/** `readKeys` and `writeKey` as the full package declares them (index.d.ts). */
export interface Migration extends Pick<FullMigration, 'readKeys' | 'writeKey'> {}
export declare class Migration {
  /**
   * The migration from `before` to `after`, two routers of this build.
   *
   * @throws {ShardrouteError} `invalid_argument` when either is not a route `Router`;
   *   `stale_epoch` unless `after.epoch > before.epoch`.
   */
  constructor(before: Router, after: Router);
  /**
   * The migration a vbucket dictionary in motion describes: from its `map` to its
   * `forward_map`.
   *
   * @throws {ShardrouteError} `invalid_argument` when `router` is not a route `Router`, not
   *   a vbucket dictionary, or has no `forward_map`.
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
   * Where a write of `key` goes: its new owner.
   *
   * @throws {ShardrouteError} `invalid_key`.
   */
  writeTarget(key: Key): string;
  /**
   * Where a read of `key` looks, in order: `[new owner, old owner]`, or `[new owner]` once
   * it has moved (`moved` true) or when it does not change node.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `moved` is not a boolean.
   */
  readTargets(key: Key, moved?: boolean): string[];
  /** Releases the migration's WebAssembly memory now. */
  free(): void;
}

/**
 * The reads and writes of services while data moves (index.d.ts's `MigrationSession`,
 * without the copy job's `copyBatch`): the read plan, the write plan under the fence
 * epoch, a key's lazy move, and what a fence refusal means.
 */
export declare class MigrationSession {
  /**
   * The session of `migration` (a `Migration` of this build) in `mode`.
   *
   * `untilMs` is an `'expiration'` session's deadline (index.d.ts).
   *
   * @throws {ShardrouteError} `invalid_argument` when `migration` is not a route
   *   `Migration`, for another mode, for `'background'` when the two topologies share
   *   no fixed partitions, for `'expiration'` without `untilMs`, or `untilMs` with
   *   another mode.
   */
  constructor(migration: Migration, mode: MigrationMode, untilMs?: number | bigint | null);
  /**
   * The routing a service uses, its mode decided by the core (index.d.ts's
   * `MigrationSession.ofTopology`).
   *
   * @throws {ShardrouteError} `invalid_argument` when an argument is not a route `Router`
   *   (or `null`/omitted).
   */
  static ofTopology(topology: Router, previous?: Router | null, held?: Router | null): MigrationSession;
  /** The mode: `'plain'`, `'background'`, `'lazy'`, `'expiration'` or `'catch-up'`. */
  get mode(): RoutingMode;
  /** The deadline of an `'expiration'` session (a u64), else `null`. */
  get untilMs(): bigint | null;
  /** The epoch reads and writes run under: the topology's (a u64). */
  get fenceEpoch(): bigint;
  /**
   * `readPlan` at `nowMs`: in `'expiration'` mode `[new owner]` from the deadline on.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` for a bad `nowMs` or `moved`.
   */
  readPlanAt(key: Key, nowMs: number | bigint, moved?: boolean): string[];
  /** When to wake the session, once `nowMs`: an `'expiration'` session's deadline, else `null`. */
  nextDeadline(nowMs: number | bigint): bigint | null;
  /**
   * Where a read of `key` looks, in order: `[old owner, new owner]` until the key (in
   * background mode, its unit) is marked `moved`, `[new owner]` then or when it stays;
   * plain: `[owner]`.
   *
   * @throws {ShardrouteError} `invalid_key`; `invalid_argument` when `moved` is not a boolean.
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
   * What a write's refusal by a shard fenced at `minEpoch` means: `'refresh'`.
   *
   * @throws {ShardrouteError} `invalid_argument` for a bad epoch, or one that admits the
   *   fence epoch.
   */
  fenced(minEpoch: number | bigint): 'refresh';
  /** Releases the session's WebAssembly memory now. */
  free(): void;
}

/**
 * What became of a document offered to a `TopologyFollower`: `installed` (of `epoch`),
 * `unchanged`, or `refused` (`code` and `message` say why). Fields that do not apply to
 * `kind` are `null`.
 */
export declare class Offered {
  private constructor();
  readonly kind: 'installed' | 'unchanged' | 'refused';
  /** installed: the new router's epoch (a u64). */
  readonly epoch: bigint | null;
  /** refused: the error's code. */
  readonly code: string | null;
  /** refused: the error's message. */
  readonly message: string | null;
  /** The `ShardrouteError` of a refusal, to throw or to log; `null` for other kinds. */
  error(): ShardrouteError | null;
}

/**
 * Follows a topology from a source, without I/O (index.d.ts's `TopologyFollower`, without
 * the publisher's `publish`): it installs a newer epoch, refuses and counts what it must
 * not install while keeping the last good router, and says when to reconnect.
 * `shardroute-wasm/route/http` runs it over HTTP.
 */
export declare class TopologyFollower {
  /**
   * A follower holding no router yet; `config` the fields of `followerDefaults()` to change.
   *
   * @throws {ShardrouteError} `invalid_argument` for an unknown config field or a value
   *   out of range.
   */
  constructor(config?: FollowerConfig | null);
  /**
   * A document (JSON text or an object) from the source at `revision`, seen at `nowMs`.
   *
   * @throws {ShardrouteError} `invalid_topology` for a document that is neither text nor
   *   an object; `invalid_argument` for a bad revision or time.
   */
  offer(document: string | Topology, revision: Revision, nowMs: Milliseconds): Offered;
  /**
   * A binary vbucket dictionary from the source at `revision`, seen at `nowMs`.
   *
   * @throws {ShardrouteError} `invalid_argument` for bytes that are not a readable
   *   `Uint8Array`, a bad revision or time.
   */
  offerDictionary(bytes: Uint8Array, revision: Revision, nowMs: Milliseconds): Offered;
  /**
   * Plain bytes from the source: a binary dictionary by its magic, otherwise UTF-8 JSON
   * text (invalid UTF-8 is a refusal).
   *
   * @throws {ShardrouteError} as `offerDictionary`.
   */
  offerBytes(bytes: Uint8Array, revision: Revision, nowMs: Milliseconds): Offered;
  /**
   * The source was lost at `nowMs`: when to reconnect, on the same clock (a u64).
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
  /** The router installed last (a new `Router` each time), or `null` before the first. */
  get router(): Router | null;
  /** The source revision of the document installed last, or `null` before the first. */
  get revision(): bigint | null;
  /** The counters (a new object each time). */
  get stats(): FollowerStats;
  /** The settings in force: every field of `followerDefaults()`. */
  get config(): Required<FollowerConfig>;
  /** Releases the follower's WebAssembly memory now. */
  free(): void;
}

/**
 * A topology source (etcd, an HTTP endpoint) as a protocol, without I/O: index.d.ts's
 * `SourceSession`, every call; its `router` is this build's `Router`.
 * `shardroute-wasm/route/http` runs it over HTTP.
 */
export declare class SourceSession {
  /** @throws {ShardrouteError} `invalid_argument` for a config the core refuses. */
  constructor(config: SourceConfig);
  /** Starts following at `nowMs`: the actions. */
  start(nowMs: Milliseconds): SourceAction[];
  /** Starts one call at `nowMs`: its number and the actions. */
  call(op: { op: string; [field: string]: unknown }, nowMs: Milliseconds): { call: number; actions: SourceAction[] };
  /** The answer to request `id`: the actions. */
  response(id: number, nowMs: Milliseconds, status: number, headers: Record<string, string>, body: Uint8Array): SourceAction[];
  /** Connection `id` is open: the actions (this build has no kind that connects). */
  opened(id: number, nowMs: Milliseconds): SourceAction[];
  /** The next piece of stream `id`'s body: the actions. */
  chunk(id: number, nowMs: Milliseconds, data: Uint8Array): SourceAction[];
  /** Request `id` could not be completed: the actions. */
  failed(id: number, nowMs: Milliseconds, code: 'unreachable' | 'closed' | 'limit_exceeded' | string, message: string): SourceAction[];
  /** The deadline passed: the actions. */
  timer(nowMs: Milliseconds): SourceAction[];
  /** Stops everything: the actions. */
  close(nowMs: Milliseconds): SourceAction[];
  /** When to call `timer`, on the shell's clock, or `null`. */
  get deadline(): number | null;
  /** The session's state: `revision`, `epoch`, `stats`, and each kind's own fields. */
  get state(): { revision: string | null; epoch: string | null; stats: Record<string, unknown>; [field: string]: unknown };
  /** The counters (`state.stats`). */
  get stats(): Record<string, unknown>;
  /** The config in force, every field. */
  get config(): SourceConfig;
  /** The follower's current router (a new `Router` each time), or `null`. */
  get router(): Router | null;
  /** Releases the session's WebAssembly memory now. */
  free(): void;
}

/** The follower's defaults: `{ reconnect_first_ms: 100, reconnect_max_ms: 5000 }`. */
export declare function followerDefaults(): Required<FollowerConfig>;

/** The core's limit on a document's JSON text, in bytes (index.d.ts's `MAX_DOCUMENT_BYTES`). */
export declare const MAX_DOCUMENT_BYTES: number;

/** The deepest nesting of arrays and objects in JSON text (index.d.ts's `MAX_JSON_NESTING`). */
export declare const MAX_JSON_NESTING: number;

/**
 * Decodes the binary form of a vbucket dictionary into its topology's canonical JSON
 * text, validated as a JSON document is (`new Router(decodeDictionary(bytes))` routes it).
 *
 * @throws {ShardrouteError} `invalid_topology` for damaged bytes; `limit_exceeded`;
 *   `invalid_argument` for a value that is not a `Uint8Array`.
 */
export declare function decodeDictionary(bytes: Uint8Array): string;

/**
 * The error every failed call throws (the route build's own class: `instanceof` holds for
 * this build's errors). `code` is stable across versions and languages.
 */
export declare class ShardrouteError extends Error {
  constructor(code: string, message: string, options?: { cause?: unknown });
  /** The stable error code, the same in every binding. */
  readonly code: string;
}
