// Type declarations of `shardroute/zookeeper` (zookeeper.js, Node only): a topology
// follower and `publish` over the core's ZooKeeper SourceSession, which decides every
// frame, deadline, ping, member, retry and codec; the shell only moves bytes over TCP
// (`node:net`). Revisions (a node's `mzxid`, u64) are `bigint`s. The Python twin is
// `shardroute.zookeeper`.

import { ShardrouteError } from './index.js';
import type { FollowerConfig, FollowerStats, Offered, Router, Topology } from './index.js';

/**
 * What a `ZooKeeperError` says went wrong: the source session's codes, or a core code
 * (`limit_exceeded`, `invalid_topology`, `stale_epoch`, `no_nodes`, `invalid_argument`).
 */
export type ZooKeeperErrorCode = 'unreachable' | 'malformed' | 'conflict' | 'closed' | 'unauthenticated' | (string & {});

/**
 * What ZooKeeper or the session said went wrong: `'unreachable'` (no connection, no
 * session, or a call past its deadline; after every member was tried), `'malformed'` (an
 * answer that is not ZooKeeper's), `'conflict'` (a compare-and-swap of `publish` lost),
 * `'closed'` (the follower was closed), `'unauthenticated'` (ZooKeeper refused the user or
 * password, or the node's ACL refuses the reader), or a core code (`limit_exceeded` for an
 * answer past the limit, `invalid_topology` or `stale_epoch` for a document `publish`
 * refuses). A `ShardrouteError`.
 */
export declare class ZooKeeperError extends ShardrouteError {
  constructor(code: ZooKeeperErrorCode, message: string, options?: { cause?: unknown });
  readonly code: ZooKeeperErrorCode;
}

/** The options every entry takes: the ZooKeeper session's. */
export interface ZooKeeperOptions {
  /**
   * The session timeout asked of ZooKeeper (it grants one between 2 and 20 of its ticks):
   * a member silent for two thirds of the one granted is left for the next.
   * Omitted: the core's default (10,000).
   */
  sessionTimeoutMs?: number;
  /** Each call's deadline (a `refresh`, a `publish`) in milliseconds. Omitted: the core's default (5,000). */
  timeoutMs?: number;
  /**
   * ZooKeeper's digest authentication (with `password`): sent on every new session. A node
   * `publish` creates is then readable and writable by this user only (the `auth` ACL).
   */
  user?: string;
  password?: string;
}

/** The options of `ZooKeeperFollower.start`. */
export interface ZooKeeperFollowerOptions extends ZooKeeperOptions {
  /** The core follower's settings (`followerDefaults()`): the reconnect backoff. */
  config?: FollowerConfig | null;
  /** After a new router is installed. */
  onChange?: ((follower: ZooKeeperFollower) => void) | null;
  /** After a document is refused (`offered.code`: `invalid_topology`, `stale_epoch`, ...); the router is kept. */
  onRefused?: ((follower: ZooKeeperFollower, offered: Offered) => void) | null;
  /** Each loss of the source (a `ZooKeeperError`; the session tries again by itself), and anything `onChange` or `onRefused` throws. */
  onError?: ((error: unknown) => void) | null;
}

/** A `ZooKeeperFollower`'s counters: the core follower's, and its session's (every count a `bigint`). */
export interface ZooKeeperFollowerStats extends FollowerStats {
  /** Reads of the node (the first, one per watch event, `refresh`, each new session). */
  reads: bigint;
  /** Watch events heard. */
  events: bigint;
  /** ZooKeeper sessions opened (the first, and one after each loss). */
  sessions: bigint;
  /** Pings sent (when nothing else was sent for a third of the timeout granted). */
  pings: bigint;
  [counter: string]: bigint | Record<string, bigint>;
}

/**
 * Follows the topology document at a ZooKeeper node: the core's ZooKeeper session reads
 * the node with a watch (its creation watched while it is absent), offers its value to its
 * follower as plain bytes (a binary dictionary by its magic, otherwise UTF-8 JSON; an
 * empty node holds no document) with its `mzxid` as the revision, reads again on each
 * event (one read at a time), and on a lost member opens a new session on the next
 * (waiting as the follower says once every member failed).
 */
export declare class ZooKeeperFollower {
  private constructor();
  /**
   * A follower that has read `path` once (an absent node leaves `router` null until it is
   * created) and follows it from then on. `hosts`: `'host:port,host:port'` or a list.
   * @throws {ZooKeeperError} when the first read fails (`unreachable`, `unauthenticated`, ...).
   * @throws {ShardrouteError} `invalid_argument` for options the core refuses.
   */
  static start(hosts: string | readonly string[], path: string, options?: ZooKeeperFollowerOptions): Promise<ZooKeeperFollower>;
  /**
   * The router installed last, or `null` before the first document: the same object until
   * the next is installed (reading it costs a field read, and takes no lock).
   */
  get router(): Router | null;
  /** The `mzxid` of the document installed last, or `null`. */
  get revision(): bigint | null;
  /** The member in use, as given (`'host:port'`): between sessions, the one tried. */
  get member(): string;
  /** The counters (a new object each time). */
  get stats(): ZooKeeperFollowerStats;
  /**
   * Reads the node now (setting the watch again) and offers its value: what became of it,
   * or `null` when the node is absent or empty.
   * @throws {ZooKeeperError} when ZooKeeper cannot be reached (the router held is kept).
   */
  refresh(): Promise<Offered | null>;
  /** True once the router's epoch is at least `epoch`; false after `timeoutMs` (omitted: never) or on `close`. */
  waitForEpoch(epoch: bigint | number, timeoutMs?: number): Promise<boolean>;
  /** Stops following (closes the ZooKeeper session) and any wait; idempotent. */
  close(): void;
}

/** The options of `publish`. */
export interface PublishOptions extends ZooKeeperOptions {
  /**
   * Replace a stored document that followers refuse (the repair), still under
   * compare-and-swap: only with a valid document whose epoch is above the stored value's
   * `epoch` (ZooKeeper keeps no history: a stored value whose epoch cannot be read is
   * refused even so).
   */
  replace?: boolean;
}

/**
 * Writes `document` to the node at `path` with the compare-and-swap the core builds from
 * the value read (`setData` at its version; `create`, parents included, when absent):
 * the write's `mzxid`. An outcome the connection lost is read back.
 * @throws {ZooKeeperError} `invalid_topology`, `no_nodes`, `limit_exceeded`, or
 *   `stale_epoch` unless its epoch is the stored one + 1 (the first may have any epoch);
 *   the refusal of a stored value followers refuse (not overwritten, unless `replace`);
 *   `conflict` when someone wrote the node between the read and the write; `unreachable`,
 *   `unauthenticated`.
 */
export declare function publish(
  hosts: string | readonly string[], path: string, document: string | Topology, options?: PublishOptions,
): Promise<bigint>;
