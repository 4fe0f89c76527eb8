// Type declarations of `shardroute/http` (the Node addon) and `shardroute-wasm/http`
// (WebAssembly), written once in bindings-js/ and copied beside each package's index.d.ts
// by its build.sh: a topology follower over HTTP on `fetch`, with the core's
// `SourceSession` (`{ source: 'http' }`) deciding. The Python twin is `shardroute.http`.

import type { FollowerConfig, FollowerStats, Offered, Router } from './index.js';

/**
 * The server could not be reached (`code` `'unreachable'`: no connection, a timeout), the
 * follower was closed (`'closed'`), or the server answered with a status other than 200 and 304 (`'http'`, with
 * `status`). `cause` is the error underneath, where there is one.
 */
export declare class HttpError extends Error {
  constructor(code: 'unreachable' | 'http' | 'closed', message: string, options?: { status?: number | null; cause?: unknown });
  readonly code: 'unreachable' | 'http' | 'closed';
  /** The HTTP status of an `'http'` error; `null` otherwise. */
  readonly status: number | null;
}

/** What `HttpFollower` passes to `fetch`: a `RequestInit`. */
export interface HttpRequestInit {
  method: 'GET';
  /** `accept`, and `if-none-match` and `prefer` (`wait=N`) once a validator is held. */
  headers: Record<string, string>;
  /** An `AbortSignal` (typed loosely, so these types need neither the DOM nor Node's type library). */
  signal: any;
}

/** What `HttpFollower` reads of a `fetch` `Response`. */
export interface HttpResponseLike {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  arrayBuffer(): Promise<ArrayBuffer>;
  /** Cancelled, unread, for an answer other than 200. */
  readonly body?: { cancel(): Promise<void> } | null;
}

/** The options of `HttpFollower.start`. */
export interface HttpFollowerOptions {
  /** The core follower's settings (`followerDefaults()`): the backoff after a failed request. */
  config?: FollowerConfig | null;
  /** How long from one request sent to the next when the server answered at once with no change, in ms. Default: the core's (`interval_ms`, 1,000). */
  intervalMs?: number;
  /** How long a long poll asks the server to hold a request (`Prefer: wait=N`), in whole seconds (0: no long polls). Default: the core's (`wait_s`, 30). */
  waitS?: number;
  /** Each request's limit in ms, for the whole request (a long poll's: this plus its wait); past it, `'unreachable'`. Default: the core's (`request_timeout_ms`, 5,000). */
  timeoutMs?: number;
  /** After a new router is installed. */
  onChange?: ((follower: HttpFollower) => void) | null;
  /** After a body is refused (`offered.code`: `invalid_topology`, `stale_epoch`, ...); the router is kept. */
  onRefused?: ((follower: HttpFollower, offered: Offered) => void) | null;
  /**
   * Each failed request of the loop (an `HttpError`; a `ShardrouteError` `limit_exceeded`
   * for a body past the limit), and anything `onChange` or `onRefused` throws.
   */
  onError?: ((error: unknown) => void) | null;
  /**
   * The `fetch` to ask with (called as a plain function); default the global `fetch`,
   * looked up at each call. A worker may pass its own (a service binding's, bound).
   */
  fetch?: ((url: string, init: HttpRequestInit) => Promise<HttpResponseLike>) | null;
}

/** An `HttpFollower`'s counters: the core's, and the shell's (every count a `bigint`). */
export interface HttpFollowerStats extends FollowerStats {
  /** Requests the server answered (any status). */
  requests: bigint;
  /** Of those, `304 Not Modified` answers. */
  notModified: bigint;
}

/**
 * Follows the topology document at a URL that answers `GET` with it and an `ETag`: asks
 * again with `If-None-Match` and `Prefer: wait=N` (RFC 7240), so a server that supports
 * long polls answers each change at once, and one that does not is asked every
 * `intervalMs`. A body served as `application/octet-stream` is a binary dictionary
 * (`encodeDictionary`); anything else a JSON document in UTF-8 (a body that is not is
 * refused `invalid_topology`, the router kept). The core's HTTP `SourceSession` decides
 * every request, deadline and retry; each body is offered to its follower with the
 * count of bodies read as its revision: it installs a newer epoch, refuses an invalid
 * document or an older epoch (counted in `stats.refused`, passed to `onRefused`, never
 * thrown) while keeping the last good router, and says when to ask again after a failed
 * request.
 */
export declare class HttpFollower {
  private constructor();
  /**
   * A follower that has asked once and asks on, the first long poll at once.
   * @throws {HttpError} when the server cannot be reached or answers an error status.
   * @throws {RangeError} for an `intervalMs`, `waitS` (whole seconds) or `timeoutMs` that is not a finite number >= 0.
   * @throws {ShardrouteError} `invalid_argument` for a bad `config`; `limit_exceeded` for a
   * body longer than the core's document limit (64 MiB), announced or read: its
   * connection is closed, the body never read whole.
   */
  static start(url: string, options?: HttpFollowerOptions): Promise<HttpFollower>;
  /** The URL it asks. */
  get url(): string;
  /**
   * The router installed last, or `null` before the first document: the same object until
   * the next is installed (reading it costs a field read, and takes no lock). Do not
   * `free()` it (WASM): the follower hands it to every caller.
   */
  get router(): Router | null;
  /** The validator (`ETag`) of the last body read, or `null`. */
  get etag(): string | null;
  /** The counters (a new object each time). */
  get stats(): HttpFollowerStats;
  /**
   * Asks now, without a long poll: what became of the body, or `null` for `304`.
   * @throws {HttpError} when the server cannot be reached (or the follower is closed) or
   *   answers an error status (the router held is kept).
   */
  refresh(): Promise<Offered | null>;
  /** True once the router's epoch is at least `epoch`; false after `timeoutMs` (omitted: never) or on `close`. */
  waitForEpoch(epoch: bigint | number, timeoutMs?: number): Promise<boolean>;
  /** Stops asking: aborts the request in flight (a `refresh` too) and any wait; idempotent. */
  close(): void;
}
