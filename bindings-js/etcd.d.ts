// Type declarations of `shardroute/etcd` (the Node addon) and `shardroute-wasm/etcd`
// (etcd.mjs, shared): an etcd v3 client over etcd's JSON gateway, a topology follower and
// `publish`, over the core's etcd SourceSession, which decides every request, deadline,
// member, retry and codec; the shell only moves bytes (`fetch`, or `node:https` for TLS
// files). Revisions (u64) are `bigint`s. The Python twin is `shardroute.etcd`.

import { ShardrouteError } from './index.js';
import type { FollowerConfig, FollowerStats, Offered, Router, Topology } from './index.js';

/** A key or a value: a string, or UTF-8 bytes. */
export type EtcdKey = string | Uint8Array;

/** A key's value and its `mod_revision` (`{ value: null, modRevision: 0n }` when absent). */
export interface EtcdValue {
  value: string | null;
  modRevision: bigint;
}

/**
 * A txn compare, as `sameRevision` and `sameValue` build it: `key`'s `mod_revision` is
 * `modRevision` (decimal text), or `key` holds `value`.
 */
export interface EtcdCompare {
  key: string;
  target: 'mod' | 'value';
  modRevision?: string;
  value?: string;
}

/**
 * What an `EtcdError` says went wrong: the source session's codes, or a core code
 * (`limit_exceeded`, `invalid_topology`, `stale_epoch`, `no_nodes`, `invalid_argument`).
 */
export type EtcdErrorCode = 'unreachable' | 'http' | 'malformed' | 'conflict' | 'closed' | 'unauthenticated' | (string & {});

/**
 * What etcd or the session said went wrong: `'unreachable'` (no connection, a request past
 * its deadline, a stream cut off; after every member was tried), `'http'` (an error status,
 * in `status`), `'malformed'` (an answer that is not etcd's), `'conflict'` (a
 * compare-and-swap of `publish` lost), `'closed'` (the client was closed), `'unauthenticated'` (etcd refused the user
 * or password), or a core code (`limit_exceeded` for an answer past the limit,
 * `invalid_topology` or `stale_epoch` for a document `publish` refuses). A `ShardrouteError`.
 */
export declare class EtcdError extends ShardrouteError {
  constructor(code: EtcdErrorCode, message: string, options?: { status?: number | null; cause?: unknown });
  readonly code: EtcdErrorCode;
  /** The HTTP status of an `'http'` error (and of `'unauthenticated'` when etcd gave one); `null` otherwise. */
  readonly status: number | null;
}

/** The end of the range of keys that start with `prefix` (etcd's `range_end`), as bytes. */
export declare function prefixEnd(prefix: EtcdKey): Uint8Array;
/** A txn compare: `key`'s `mod_revision` is `modRevision` (`0n`: the key is absent). */
export declare function sameRevision(key: EtcdKey, modRevision: bigint | number): EtcdCompare;
/** A txn compare: `key` holds `value` (it fails for an absent key). */
export declare function sameValue(key: EtcdKey, value: EtcdKey): EtcdCompare;

/** A `fetch` as the shell calls it (the runtime's, or one given in `EtcdOptions.fetch`). */
export type EtcdFetch = (url: string, init: {
  method: string; headers: Record<string, string>; body: string | undefined; signal: unknown;
}) => Promise<any>;

/** The options of an `Etcd` client (and of every follower and `publish` made from it). */
export interface EtcdOptions {
  /** Each request's deadline in milliseconds (a watch's: until it opens). Omitted: the core's default (5,000). */
  timeoutMs?: number;
  /** etcd's authentication (with `password`): a token from `/v3/auth/authenticate`, renewed when it expires. */
  user?: string;
  password?: string;
  /**
   * TLS for `https://` members: the CA to trust, and a client certificate and its key, each
   * PEM text or the path of a file holding it. Node only: these requests go through
   * `node:https` (Node's `fetch` takes no CA); at the edge, `fetch` trusts the runtime's CAs.
   */
  ca?: string | Uint8Array;
  cert?: string | Uint8Array;
  key?: string | Uint8Array;
  /** The transport in place of the global `fetch` (a test's, or undici's with a dispatcher). */
  fetch?: EtcdFetch | null;
}

/**
 * A client of one etcd cluster through its members' JSON gateways (`/v3/...`). Its core
 * session picks the member: the one in use, the next when it cannot be reached, passes its
 * deadline, answers 503 or gRPC UNAVAILABLE, or has no leader (round the list once; the one
 * that answered stays in use). An answer longer than twice the core's document limit is
 * refused with `limit_exceeded` before it is buffered, its connection closed.
 */
export declare class Etcd {
  /**
   * @param urls a member's `http://host:port` (or `https://`), several separated by commas,
   *   or an array of them.
   * @throws {ShardrouteError} `invalid_argument` for a URL that is not http or https, none,
   *   or options the core refuses.
   */
  constructor(urls: string | readonly string[], options?: EtcdOptions);
  /** The URL of the member in use. */
  get url(): string;
  /** Every member's URL (trailing `/` dropped). */
  readonly urls: readonly string[];
  /** Each request's deadline (ms), the core's default when none was given. */
  readonly timeoutMs: number;
  /** The same as the module's `sameRevision`. */
  static sameRevision(key: EtcdKey, modRevision: bigint | number): EtcdCompare;
  /** The same as the module's `sameValue`. */
  static sameValue(key: EtcdKey, value: EtcdKey): EtcdCompare;
  /** The value of `key` and its `mod_revision`. @throws {EtcdError} */
  get(key: EtcdKey): Promise<EtcdValue>;
  /**
   * Several keys read in one transaction, so at one revision: `values` by key (as given),
   * `revision` the store's.
   * @throws {EtcdError}
   */
  getMany<K extends EtcdKey>(keys: Iterable<K>): Promise<{ values: Map<K, EtcdValue>; revision: bigint }>;
  /** Writes `key`: the new revision. @throws {EtcdError} */
  put(key: EtcdKey, value: EtcdKey): Promise<bigint>;
  /** Deletes every key that starts with `prefix`: how many (a u64, so a `bigint`). @throws {EtcdError} */
  deletePrefix(prefix: EtcdKey): Promise<bigint>;
  /**
   * All of `puts` and `deletes` in one transaction when every compare holds: the new
   * revision, or `0n` when a compare failed and nothing was written.
   * @throws {EtcdError}
   */
  txn(
    compare: Iterable<EtcdCompare>,
    puts: Record<string, EtcdKey> | Map<EtcdKey, EtcdKey>,
    deletes?: Iterable<EtcdKey>,
  ): Promise<bigint>;
  /** Writes `key` only if its `mod_revision` is still `modRevision` (`0n`: absent): the new revision, or `0n`. @throws {EtcdError} */
  cas(key: EtcdKey, value: EtcdKey, modRevision: bigint | number): Promise<bigint>;
}

/** The options of `EtcdFollower.start`. */
export interface EtcdFollowerOptions {
  /** Keys read in the same transaction as the document: `companions`. */
  also?: Iterable<string>;
  /** The core follower's settings (`followerDefaults()`): the reconnect backoff. */
  config?: FollowerConfig | null;
  /** After a new router is installed, or the companions changed under the same router. */
  onChange?: ((follower: EtcdFollower) => void) | null;
  /** After a document is refused (`offered.code`: `invalid_topology`, `stale_epoch`, ...); the router is kept. */
  onRefused?: ((follower: EtcdFollower, offered: Offered) => void) | null;
  /** Each loss of the source (an `EtcdError`; the session tries again by itself), and anything `onChange` or `onRefused` throws. */
  onError?: ((error: unknown) => void) | null;
  /**
   * How long a watch may stay quiet before the follower reads again (on another member if
   * the one in use does not answer) and watches anew; only a failed read is a loss. A
   * member paused or cut off neither answers nor closes its connections: this is what
   * tells. Omitted: the core's default (10,000); `null`, `Infinity` or 0: none.
   */
  idleMs?: number | null;
}

/** An `EtcdFollower`'s counters: the core follower's, and its session's (every count a `bigint`). */
export interface EtcdFollowerStats extends FollowerStats {
  /** Reads of the key and its companions. */
  reads: bigint;
  /** Watches opened again after a loss. */
  watchRestarts: bigint;
}

/**
 * Follows the topology document at `key` in etcd: the core's etcd session reads the key
 * and its companions in one transaction, offers the document to its follower (which
 * installs a newer epoch and refuses what it must not install, keeping the last good
 * router), watches from the revision after that read, offers each change its watch event brings
 * (with companions: reads them again), reads again after a quiet `idleMs` and after a loss
 * (waiting as the follower says).
 */
export declare class EtcdFollower {
  private constructor();
  /**
   * A follower that has read `key` and the `also` keys once (an absent key leaves `router`
   * null) and watches them from then on. `etcd`: a client, or its members' URLs (as `new
   * Etcd` takes them).
   * @throws {EtcdError} when the first read fails (etcd cannot be reached, ...).
   * @throws {ShardrouteError} `invalid_argument` for options the core refuses.
   */
  static start(etcd: Etcd | string | readonly string[], key: string, options?: EtcdFollowerOptions): Promise<EtcdFollower>;
  /** A client over the follower's own session (its options; `url` the member the follower uses). */
  get etcd(): Etcd;
  /**
   * The router installed last, or `null` before the first document: the same object until
   * the next is installed. Do not `free()` it (WASM): the follower hands it to every caller.
   */
  get router(): Router | null;
  /**
   * The `also` keys' values (`null`: absent, or nothing offered yet), from the read of
   * the document last offered and not refused. Replaced on change, never mutated.
   */
  get companions(): ReadonlyMap<string, string | null>;
  /** The `mod_revision` of the document installed last, or `null`. */
  get revision(): bigint | null;
  /** The counters (a new object each time). */
  get stats(): EtcdFollowerStats;
  /**
   * Reads the key and its companions now, at one revision, and offers the document: what
   * became of it, or `null` when the key is absent.
   * @throws {EtcdError} when etcd cannot be reached (the router held is kept).
   */
  refresh(): Promise<Offered | null>;
  /** True once the router's epoch is at least `epoch`; false after `timeoutMs` (omitted: never) or on `close`. */
  waitForEpoch(epoch: bigint | number, timeoutMs?: number): Promise<boolean>;
  /** Stops following (cancels every request) and any wait; idempotent. */
  close(): void;
}

/** The options of `publish`. */
export interface PublishOptions {
  /**
   * Replace a stored document that followers refuse (the repair), still under
   * compare-and-swap: only with a valid document whose epoch is above the stored value's
   * `epoch` and every epoch a follower may hold (read back through the key's history).
   */
  replace?: boolean;
  /** Companion keys written in the same transaction. */
  also?: Record<string, EtcdKey> | Map<EtcdKey, EtcdKey>;
}

/**
 * Writes `document` to `key` with the compare-and-swap the core builds from the value
 * read: the new revision. An outcome the transport lost is read back.
 * @throws {EtcdError} `invalid_topology`, `no_nodes`, `limit_exceeded`, or `stale_epoch`
 *   unless its epoch is the stored one + 1 (the first may have any epoch); the refusal of a
 *   stored value followers refuse (not overwritten, unless `replace`); `conflict` when
 *   someone wrote the key between the read and the write; `unreachable`, `http`,
 *   `unauthenticated`.
 */
export declare function publish(
  etcd: Etcd | string | readonly string[], key: string, document: string | Topology, options?: PublishOptions,
): Promise<bigint>;
