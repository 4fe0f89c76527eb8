// Type declarations of `shardroute-wasm/service`: the routing service (`GET /route?key=...`,
// `POST /route`) as a `fetch` handler for workers, Deno and service workers, the core
// (`shardroute::service`) deciding every answer. The Node addon's twin is
// `shardroute/service` (a node:http handler); the Python one `shardroute.service`.

import type { Router, ServiceAnswer } from './index.js';

export type { ServiceAnswer } from './index.js';
export { RoutingService } from './index.js';

/**
 * What the handler uses of a `fetch` `Request` (and builds of `Response`), typed loosely so
 * that these types need neither the DOM nor a runtime's type library.
 */
export type Request = any;
export type Response = any;

/** The core's service limits. */
export interface ServiceLimits {
  /** Most bytes of a `POST /route` body (`limits::MAX_SERVICE_BODY_BYTES`, 1 MiB). */
  maxBodyBytes: number;
  /** Most keys of one batch (`limits::MAX_SERVICE_KEYS`, 10,000). */
  maxKeys: number;
  /** How long a whole body may take to arrive, in ms (`service::BODY_TIMEOUT_MS`). */
  bodyTimeoutMs: number;
}

/** The core's limits (a function: under the web entry the module loads at `init`). */
export declare function serviceLimits(): ServiceLimits;

/** A router, or a function giving the current one (`null` or `undefined`: no document yet, 503). */
export type Routers = Router | (() => Router | null | undefined);

/** The routing service over a router; the core's service is made once per router object. */
export declare class RouteService {
  constructor(router: Routers);
  /** Whether the path of `url` (a URL, its text, or a path and query) is the service's (`/route`). */
  static handles(url: string | { toString(): string }): boolean;
  /** The core's answer to one request whose body is read (at most `maxBodyBytes`). */
  answer(method: string, target: string, ifNoneMatch?: string | null, body?: Uint8Array | null): ServiceAnswer;
  /**
   * The `Response` to `request` when its path is the service's, its body read within the
   * limits (past `maxBodyBytes`: 413; not all there within `bodyTimeoutMs`: 408, with
   * `connection: close`); `null` for another path, the body untouched.
   */
  handle(request: Request): Promise<Response | null>;
}

/** A `fetch` handler answering the routing service (any other path: the core's 404). */
export declare function handler(router: Routers): (request: Request) => Promise<Response>;
