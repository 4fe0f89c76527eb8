// Type declarations of `shardroute/zookeeper` (zookeeper.js): a topology follower over the
// core's `TopologyFollower` reading a ZooKeeper node through node-zookeeper-client (an
// optional peer dependency), and `publish`. Revisions (a node's `mzxid`, u64) are
// `bigint`s. The Python twin is `shardroute.zookeeper`.

import type { FollowerConfig, FollowerStats, Offered, Router, Topology } from './index.js';

/** What went wrong: ZooKeeper not reached or the session lost, or a compare-and-swap lost. */
export type ZooKeeperErrorCode = 'unreachable' | 'conflict';

/** ZooKeeper could not be reached or lost the session (`unreachable`), or `publish` lost its compare-and-swap (`conflict`). */
export class ZooKeeperError extends Error {
  constructor(code: ZooKeeperErrorCode, message: string, options?: { cause?: unknown });
  readonly code: ZooKeeperErrorCode;
}

export interface ZooKeeperFollowerOptions {
  /** The core follower's settings (`followerDefaults()`): the reconnect backoff. */
  config?: FollowerConfig | null;
  /** After a new router is installed. */
  onChange?: ((follower: ZooKeeperFollower) => void) | null;
  /** After a document is refused (`offered.code`: `invalid_topology`, `stale_epoch`, ...); the router is kept. */
  onRefused?: ((follower: ZooKeeperFollower, offered: Offered) => void) | null;
  /** Each lost connection or session and each failed read (a `ZooKeeperError`), and anything `onChange` or `onRefused` throws. */
  onError?: ((error: unknown) => void) | null;
  /** The session timeout asked of ZooKeeper, and the bound of each read (default 10000). */
  sessionTimeoutMs?: number;
}

export interface ZooKeeperFollowerStats extends FollowerStats {
  /** Reads of the node (the first, one per watch event, `refresh`, reconnects). */
  reads: bigint;
  /** Watch events heard. */
  events: bigint;
  /** Sessions that expired (each followed by a new client). */
  sessionsLost: bigint;
}

/**
 * Follows the topology document at a ZooKeeper node, with the core's `TopologyFollower`
 * deciding what to install, what to refuse and when to reconnect. The node's value is
 * offered as plain bytes (`offerBytes`: a binary dictionary by its magic, otherwise UTF-8
 * JSON) with its `mzxid` as the revision. Each watch event and each reconnection is
 * answered by reading the node again, one read at a time.
 */
export class ZooKeeperFollower {
  private constructor();
  /**
   * Connects to `hosts` (`'host:port,host:port'`), reads `path` once and follows it.
   * @throws {ZooKeeperError} when ZooKeeper cannot be reached.
   */
  static start(hosts: string, path: string, options?: ZooKeeperFollowerOptions): Promise<ZooKeeperFollower>;
  /**
   * The router installed last, or `null` before the first document: the same object until
   * the next is installed (reading it costs a field read, and takes no lock).
   */
  get router(): Router | null;
  /** The `mzxid` of the document installed last, or `null`. */
  get revision(): bigint | null;
  get stats(): ZooKeeperFollowerStats;
  /**
   * Reads the node now (setting the watch again) and offers its value: what became of it,
   * or `null` when the node is absent.
   * @throws {ZooKeeperError} when ZooKeeper cannot be reached (the router held is kept).
   */
  refresh(): Promise<Offered | null>;
  /** True once the router's epoch is at least `epoch`; false after `timeoutMs` (omitted: never) or on `close`. */
  waitForEpoch(epoch: bigint | number, timeoutMs?: number): Promise<boolean>;
  /** Stops following and closes the client; idempotent. */
  close(): void;
}

/**
 * Writes `document` to the node at `path` with a compare-and-swap on the value read
 * (`setData` at its version; `create`, parents included, when absent): the write's `mzxid`.
 * @throws {ShardrouteError} `invalid_topology`, `no_nodes`, `limit_exceeded`, or
 *   `stale_epoch` unless the epoch is the stored one + 1 (a stored value the follower
 *   refuses is that refusal, not overwritten).
 * @throws {ZooKeeperError} `conflict` when someone wrote the node between the read and the
 *   write; `unreachable` when ZooKeeper cannot be reached.
 */
export function publish(hosts: string, path: string, document: string | Topology, options?: { timeoutMs?: number }): Promise<bigint>;
