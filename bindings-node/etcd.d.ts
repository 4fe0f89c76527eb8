// Type declarations of `shardroute/etcd` (etcd.js): a small etcd v3 client over etcd's JSON
// gateway on Node's global `fetch`, a topology follower over the core's `TopologyFollower`,
// and `publish`. Revisions (u64) are `bigint`s. The Python twin is `shardroute.etcd`.

import type { FollowerConfig, FollowerStats, Offered, Router, Topology } from './index.js';

/** A key: a string (its UTF-8 bytes) or bytes. */
export type EtcdKey = string | Uint8Array;

/** A key's value and its `mod_revision` (`{ value: null, modRevision: 0n }` when absent). */
export interface EtcdValue {
  value: string | null;
  modRevision: bigint;
}

/** One change a watch saw. */
export interface EtcdEvent {
  type: 'put' | 'delete';
  key: string;
  /** The value written; `null` for a delete. */
  value: string | null;
  /** The revision of the change. */
  modRevision: bigint;
}

/** A txn compare, as `sameRevision` and `sameValue` build it (etcd's JSON, base64 inside). */
export interface EtcdCompare {
  key: string;
  target: 'MOD' | 'VALUE';
  result: 'EQUAL';
  mod_revision?: string;
  value?: string;
}

/** What an `EtcdError` says went wrong. */
export type EtcdErrorCode = 'unreachable' | 'http' | 'conflict' | 'idle';

/**
 * etcd could not be reached (`code` `'unreachable'`: no connection, a timeout, a stream cut
 * off or cancelled), answered with an HTTP error (`'http'`, with `status`), a
 * compare-and-swap of `publish` lost (`'conflict'`), or nothing arrived on a watch for its
 * `idleMs` (`'idle'`). `cause` is the error underneath, where there is one.
 */
export declare class EtcdError extends Error {
  constructor(code: EtcdErrorCode, message: string, options?: { status?: number | null; cause?: unknown });
  readonly code: EtcdErrorCode;
  /** The HTTP status of an `'http'` error; `null` otherwise. */
  readonly status: number | null;
}

/** The end of the range of keys that start with `prefix` (etcd's `range_end`), as bytes (a `Buffer`). */
export declare function prefixEnd(prefix: EtcdKey): Uint8Array;
/** A txn compare: `key`'s `mod_revision` is `modRevision` (`0n`: the key is absent). */
export declare function sameRevision(key: EtcdKey, modRevision: bigint | number): EtcdCompare;
/** A txn compare: `key` holds `value` (it fails for an absent key). */
export declare function sameValue(key: EtcdKey, value: string | Uint8Array): EtcdCompare;

/** The options of an `Etcd` client. */
export interface EtcdOptions {
  /** Each request's limit in milliseconds (a watch's: until its stream opens). Default 10,000. */
  timeoutMs?: number;
}

/**
 * An `AbortSignal`, typed by the members this module uses (so these types need neither the
 * DOM nor Node's type library; a real `AbortSignal` is one).
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** The options of `Etcd.watch`. */
export interface WatchOptions {
  /** Watch the keys in `[key, rangeEnd)` (`prefixEnd(prefix)` for a prefix); omitted: `key` alone. */
  rangeEnd?: EtcdKey | null;
  /** The first revision to see; omitted or `0n`: changes from now on. */
  startRevision?: bigint;
  /** Ends the iteration quietly (and closes the stream) when it aborts. */
  signal?: AbortSignalLike;
  /**
   * When nothing arrives for this many milliseconds (quiet, or a member that stopped
   * answering), the watch throws an `EtcdError` with code `'idle'`; time the loop spends on
   * a batch does not count. Omitted, `null` or `Infinity`: no limit.
   * @throws {RangeError} (from the first `next()`) unless in (0, 2^31 - 1].
   */
  idleMs?: number | null;
}

/**
 * A client of one etcd cluster through its members' JSON gateways (`/v3/...`); every call
 * is one HTTP request, to the member in use. When that member cannot be reached (an
 * `'unreachable'` failure: connection refused or reset, a timeout) or answers that it
 * cannot serve now (HTTP 503, or a gateway error of gRPC code 14 UNAVAILABLE: a member
 * shutting down or restarting), the next one is tried, round the list once, and the one
 * that answered stays in use; a watch opens on the member in use, moving on the same way. Each call is bounded: `timeoutMs` for the whole request, answer included, and an
 * answer (or a watch line) longer than twice the core's document limit (128 MiB: a
 * document in base64 and its companions) is refused with a `ShardrouteError` of code
 * `limit_exceeded` before it is buffered, its connection closed.
 */
export declare class Etcd {
  /**
   * @param urls a member's `http://host:port` (or `https://`), several separated by commas,
   *   or an array of them.
   * @throws {TypeError} for a URL that is not http or https, or none.
   */
  constructor(urls: string | readonly string[], options?: EtcdOptions);
  /** The URL of the member in use. */
  get url(): string;
  /** Every member's URL, as given. */
  readonly urls: readonly string[];
  readonly timeoutMs: number;
  /** The same as the module's `sameRevision`. */
  static sameRevision(key: EtcdKey, modRevision: bigint | number): EtcdCompare;
  /** The same as the module's `sameValue`. */
  static sameValue(key: EtcdKey, value: string | Uint8Array): EtcdCompare;
  /**
   * POSTs `body` to `path` (`'/v3/kv/range'`, ...) on the member in use (the next one when
   * it cannot be reached or answers 503 / UNAVAILABLE, round the list once): the JSON answer.
   * @throws {EtcdError}
   */
  call(path: string, body: unknown): Promise<any>;
  /** The value of `key` and its `mod_revision`. @throws {EtcdError} */
  get(key: EtcdKey): Promise<EtcdValue>;
  /**
   * Several keys read in one transaction, so at one revision: `values` by key (as given),
   * `revision` the store's.
   * @throws {EtcdError}
   */
  getMany<K extends EtcdKey>(keys: Iterable<K>): Promise<{ values: Map<K, EtcdValue>; revision: bigint }>;
  /** Writes `key`: the new revision. @throws {EtcdError} */
  put(key: EtcdKey, value: string | Uint8Array): Promise<bigint>;
  /** Deletes every key that starts with `prefix`: how many. @throws {EtcdError} */
  deletePrefix(prefix: EtcdKey): Promise<number>;
  /**
   * All of `puts` and `deletes` in one transaction when every compare holds: the new
   * revision, or `0n` when a compare failed and nothing was written.
   * @throws {EtcdError}
   */
  txn(
    compare: Iterable<EtcdCompare>,
    puts: Record<string, string | Uint8Array> | Map<EtcdKey, string | Uint8Array>,
    deletes?: Iterable<EtcdKey>,
  ): Promise<bigint>;
  /** Writes `key` only if its `mod_revision` is still `modRevision` (`0n`: absent): the new revision, or `0n`. @throws {EtcdError} */
  cas(key: EtcdKey, value: string | Uint8Array, modRevision: bigint | number): Promise<bigint>;
  /**
   * The changes of `key` (or of `[key, rangeEnd)`) as batches of events (never empty),
   * from the member in use. Throws an `EtcdError` when the stream cannot open, breaks, or
   * is cancelled (a compacted `startRevision`), and `'idle'` when nothing arrived for
   * `idleMs`; ends quietly when `signal` aborts or the loop leaves it. A stream that went
   * idle past the HTTP client's own limit (300 s) is reopened, unseen.
   */
  watch(key: EtcdKey, options?: WatchOptions): AsyncGenerator<EtcdEvent[], void, undefined>;
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
  /** Each watch failure (an `EtcdError`), and anything `onChange` or `onRefused` throws. */
  onError?: ((error: unknown) => void) | null;
  /**
   * The watch's idle time (`WatchOptions.idleMs`): when nothing arrives for this long, the
   * follower reads again (on another member if the one in use does not answer) and opens
   * a new watch; only a failed read is a loss. A member paused (SIGSTOP) or cut off neither
   * answers nor closes its connections: without an idle time, its watch is left only by
   * the HTTP client's 300 s limit. Omitted or `null`: none.
   * @throws {RangeError} (from `start`) unless in (0, 2^31 - 1].
   */
  idleMs?: number | null;
}

/** An `EtcdFollower`'s counters: the core's, and the shell's (every count a `bigint`). */
export interface EtcdFollowerStats extends FollowerStats {
  /** Reads of the key and its companions (the first, one per batch of watch events, `refresh`, reconnects). */
  reads: bigint;
  /** Watches reopened after a failure (not after an idle time answered by a read). */
  watchRestarts: bigint;
}

/**
 * Follows the topology document at `key` in etcd, with the core's `TopologyFollower`
 * deciding what to install, what to refuse and when to reconnect. One watch covers the
 * smallest range holding the key and its companions; each batch of events is answered by
 * reading them all again at one revision, never by the events' values, so the router and
 * `companions` always come from one revision. A broken watch waits as the core says, reads
 * again (`connected()` once a read succeeds) and reopens after that read's revision.
 * With `idleMs`, a watch quiet that long is answered by a read at once and a new watch.
 */
export declare class EtcdFollower {
  private constructor();
  /**
   * A follower that has read `key` and the `also` keys once (an absent key leaves `router`
   * null) and watches them from then on. `etcd`: a client, or its members' URLs (as `new
   * Etcd` takes them).
   * @throws {EtcdError} when etcd cannot be reached.
   */
  static start(etcd: Etcd | string | readonly string[], key: string, options?: EtcdFollowerOptions): Promise<EtcdFollower>;
  /** The client it reads with. */
  get etcd(): Etcd;
  /**
   * The router installed last, or `null` before the first document: the same object until
   * the next is installed (reading it costs a field read, and takes no lock). Do not
   * `free()` it (WASM): the follower hands it to every caller.
   */
  get router(): Router | null;
  /**
   * The `also` keys' values (`null`: absent, or nothing offered yet), from the read of
   * the document last offered and not refused. Replaced on change, never mutated: do
   * not mutate it either.
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
  /** Stops watching (aborts the stream and any wait); idempotent. */
  close(): void;
}

/**
 * Writes `document` to `key` with the compare-and-swap the core's follower builds from the
 * value read: the new revision.
 * @throws {ShardrouteError} `invalid_topology`, `no_nodes`, `limit_exceeded`, or
 *   `stale_epoch` unless its epoch is the stored one + 1 (the first may have any epoch);
 *   the refusal of a stored value the follower refuses (it is not overwritten).
 * @throws {EtcdError} `conflict` when someone wrote the key between the read and the
 *   write; `unreachable`, `http`.
 */
export declare function publish(etcd: Etcd | string | readonly string[], key: string, document: string | Topology): Promise<bigint>;
