// Type declarations of `shardroute/redis` (redis.js): a Redis Cluster client over ioredis
// whose every decision is shardroute's core session (`ClusterSession`). Needs ioredis, an optional peer
// dependency (`npm install ioredis`); the types do not depend on ioredis's own.

import type { Key, Router, SessionConfig } from './index.js';

/** A command argument as ioredis sends it. */
export type Argument = string | Uint8Array | number;

/** A startup node: `"host:port"` or `{ host, port }`. */
export type StartupNode = string | { host: string; port: number | string };

/** The options of a `ClusterClient`; any other option is passed to every ioredis connection (`password`, `tls`, ...). */
export interface ClusterClientOptions {
  /** Reads (`get`, `mget`, `pipelineGet`) go to the slot's replicas in turn (`READONLY` connections). Default `false`. */
  readFromReplicas?: boolean;
  /**
   * The session's settings (`sessionDefaults()` lists them and their defaults: `max_redirects`, `refresh_interval_ms`,
   * `retry_budget_ms`, timeouts, ...). `auto_pipeline: false` writes every command on its own (no queue).
   */
  config?: SessionConfig;
  [ioredisOption: string]: unknown;
}

/** What the client has seen since it was made (or since `reset`): the session's counters, as numbers. */
export declare class ClusterStats {
  /** Commands begun (reading the first table is one). */
  readonly commands: number;
  /** MOVED replies followed. */
  readonly moved: number;
  /** ASK replies followed. */
  readonly ask: number;
  /** Tables installed from `CLUSTER SHARDS`. */
  readonly refreshes: number;
  /** Failures retried (by kind in `errorKinds`) plus the commands given up. */
  readonly errors: number;
  /** Retried failures by the session's outcome name: `try_again`, `cluster_down`, `timeout`, `reset`, ... */
  readonly errorKinds: Record<string, number>;
  /** The most redirects one command followed. */
  readonly longestRedirectChain: number;
  /** Commands found still waiting for their node after `stall_ms` (the session asked). */
  readonly stalls: number;
  /** Commands abandoned on a silent node and sent to the slot's new owner. */
  readonly stallResends: number;
  /** Sets every count back to 0. */
  reset(): void;
}

/** A command was redirected more than `max_redirects` times; `code` is `too_many_redirects`. */
export declare class TooManyRedirects extends Error {
  code: string;
}

/** No node served a command within the retry budget; `code` is `unavailable`, `cause` the last error seen. */
export declare class ConnectionError extends Error {
  code: string;
}

/** The connection to one node: an ioredis `Redis` (typed here by the calls the client makes). */
export interface NodeConnection {
  call(command: string, ...args: Argument[]): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
}

/**
 * A Redis Cluster client routed by shardroute: one plain connection per node, the slot
 * table read from `CLUSTER SHARDS`, MOVED and ASK followed with `router.moved` and
 * `router.ask`, lost connections and TRYAGAIN/CLUSTERDOWN/LOADING retried with backoff
 * for `retryMs`. Values come back as strings (`null` for a missing key).
 *
 * Auto-pipelining (the session's `auto_pipeline`, on by default): the commands issued in
 * one turn of the event loop, or while a node's connection has a write in flight, go to
 * that node as one write (at most `pipeline_max_commands`; `pipeline_max_writes` writes
 * in flight). Each still resolves with its own reply as it comes, and a MOVED, ASK,
 * TRYAGAIN, lost connection or deadline is handled for that command alone.
 */
export declare class ClusterClient {
  /**
   * A client of the cluster any of `startupNodes` belongs to; nothing is connected until
   * the first command or `ready()`.
   *
   * @throws {TypeError} when `startupNodes` is empty or holds something else.
   */
  constructor(startupNodes: Iterable<StartupNode>, options?: ClusterClientOptions);
  /** A client whose table has been read. @throws {ConnectionError} when no node answers within `retryMs`. */
  static connect(startupNodes: Iterable<StartupNode>, options?: ClusterClientOptions): Promise<ClusterClient>;
  /** Reads the table for the first time (commands do it themselves). @throws {ConnectionError} */
  ready(): Promise<void>;
  readonly stats: ClusterStats;
  /** The current router (`redis_cluster`), replaced on every MOVED and refresh; null before the first table. */
  get router(): Router | null;
  /** The connection to the node at `host:port`, made on first use; `readonly` sends `READONLY` first. */
  connection(address: string, options?: { readonly?: boolean }): Promise<NodeConnection>;
  /** The `host:port` of a node id of the current router. */
  addressOf(node: string): string;
  /**
   * Reads the table from the first candidate that answers `CLUSTER SHARDS` with a whole table: false when none did.
   * One runs at a time (a call while one runs joins it). The refresh a MOVED asks for runs in the background:
   * commands whose slot the table knows are sent meanwhile; only those without a table, or after a lost
   * connection or a demoted master, wait for it.
   */
  refresh(): Promise<boolean>;
  /**
   * Runs `command` (`[name, ...arguments]`) for `key` on the node that owns its slot,
   * following redirects; a read may go to a replica.
   *
   * @throws {TooManyRedirects}, {ConnectionError}, and Redis's other error replies as ioredis throws them.
   */
  execute(command: readonly [string, ...Argument[]], options: { key: Key; read?: boolean }): Promise<unknown>;
  get(key: Key): Promise<string | null>;
  set(key: Key, value: Argument): Promise<string | null>;
  del(key: Key): Promise<number>;
  /** `SET` then `WAIT replicas timeoutMs` (the session's `wait_timeout_ms` when omitted) on one connection: how many replicas acknowledged the write. */
  setAndWait(key: Key, value: Argument, replicas?: number, timeoutMs?: number): Promise<number>;
  /**
   * `MSET` of keys that share a slot (one hash tag).
   *
   * @throws {ShardrouteError} `cross_slot` when they do not; `invalid_argument` for none.
   */
  mset(mapping: Record<string, Argument> | Map<Key, Argument>): Promise<string>;
  /** The values of `keys` in order: one `MGET` per slot. */
  mget(keys: Iterable<Key>): Promise<Array<string | null>>;
  /** The values of `keys` in order: one pipeline of `GET`s per node. */
  pipelineGet(keys: Iterable<Key>): Promise<Array<string | null>>;
  /** `SET` of every `[key, value]` pair, one pipeline per node: the replies in order. */
  pipelineSet(pairs: Iterable<readonly [Key, Argument]>): Promise<Array<string | null>>;
  /** Closes every connection, after the replies of the commands already sent and the refresh that runs, if one does. */
  close(): Promise<void>;
}
