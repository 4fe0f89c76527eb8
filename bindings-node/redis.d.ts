// Type declarations of `shardroute/redis` (redis.js): a Redis Cluster client over ioredis
// whose every routing decision is shardroute's. Needs ioredis, an optional peer
// dependency (`npm install ioredis`); the types do not depend on ioredis's own.

import type { Key, Router } from './index.js';

/** A command argument as ioredis sends it. */
export type Argument = string | Uint8Array | number;

/** A startup node: `"host:port"` or `{ host, port }`. */
export type StartupNode = string | { host: string; port: number | string };

/** The options of a `ClusterClient`; any other option is passed to every ioredis connection (`password`, `tls`, ...). */
export interface ClusterClientOptions {
  /** Reads (`get`, `mget`, `pipelineGet`) go to a replica of the key's slot, round-robin (`READONLY` connections). Default `false`. */
  readFromReplicas?: boolean;
  /** How many MOVED/ASK redirects one command follows before `TooManyRedirects`. Default 5. */
  maxRedirects?: number;
  /** A MOVED refreshes the whole table from `CLUSTER SHARDS` at most once per this many ms. Default 200. */
  refreshIntervalMs?: number;
  /** How long a command (or the first table read) is retried, with backoff, while nodes are down or busy. Default 20,000. */
  retryMs?: number;
  /** How long connecting to a node may take. Default 5,000 ms. */
  connectTimeoutMs?: number;
  /** How long a reply may take before the command fails as a `TimeoutError` (and is retried). Default 5,000 ms. */
  commandTimeoutMs?: number;
  [ioredisOption: string]: unknown;
}

/** What the client has seen since it was made (or since `reset`). */
export declare class ClusterStats {
  /** Commands sent (a pipeline counts each of its commands). */
  commands: number;
  /** MOVED replies followed. */
  moved: number;
  /** ASK replies followed. */
  ask: number;
  /** Tables read from `CLUSTER SHARDS`. */
  refreshes: number;
  /** Errors retried: lost connections, timeouts, TRYAGAIN, CLUSTERDOWN, LOADING, failed refreshes. */
  errors: number;
  /** `errors` by kind: `ConnectionError`, `TimeoutError`, `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, `refresh`. */
  errorKinds: Record<string, number>;
  /** The most redirects one command followed. */
  longestRedirectChain: number;
  /** Sets every count back to 0. */
  reset(): void;
  /** Counts one error of `kind`. */
  error(kind: string): void;
}

/** A command was redirected more than `maxRedirects` times. */
export declare class TooManyRedirects extends Error {}

/** No node answered within `retryMs`; `cause` is the last error seen. */
export declare class ConnectionError extends Error {}

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
  readFromReplicas: boolean;
  maxRedirects: number;
  refreshIntervalMs: number;
  retryMs: number;
  readonly stats: ClusterStats;
  /** The current router (`redis_cluster`), replaced on every MOVED and refresh. */
  get router(): Router;
  /** The connection to the node at `host:port`, made on first use; `readonly` sends `READONLY` first. */
  connection(address: string, options?: { readonly?: boolean }): Promise<NodeConnection>;
  /** The `host:port` of a node id of the current router. */
  addressOf(node: string): string;
  /** Reads the table from the first node that answers `CLUSTER SHARDS`. @throws {ConnectionError} */
  refresh(): Promise<void>;
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
  /** `SET` then `WAIT replicas timeoutMs` on one connection: how many replicas acknowledged the write. */
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
  /** Closes every connection. */
  close(): Promise<void>;
}
