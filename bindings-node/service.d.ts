// Type declarations of `shardroute/service`: the routing service (`GET /route?key=...`,
// `POST /route`) as a node:http handler, the core (`shardroute::service`) deciding every
// answer. The Python twin is `shardroute.service`.

import type { Router } from './index.js';

/**
 * What the handler uses of a node:http `IncomingMessage` and `ServerResponse`, typed
 * loosely so that these types need no Node type library.
 */
export type IncomingMessage = any;
export type ServerResponse = any;

/** Most bytes of a `POST /route` body (`limits::MAX_SERVICE_BODY_BYTES`, 1 MiB). */
export declare const MAX_SERVICE_BODY_BYTES: number;
/** Most keys of one batch (`limits::MAX_SERVICE_KEYS`, 10,000). */
export declare const MAX_SERVICE_KEYS: number;
/** How long a body may take to arrive after the head, in ms (`service::BODY_TIMEOUT_MS`). */
export declare const BODY_TIMEOUT_MS: number;

/** A router, or a function giving the current one (`null` or `undefined`: no document yet, 503). */
export type Routers = Router | (() => Router | null | undefined);

/** One answer: the status, the headers (lower-case names; `content-length` is the writer's) and the body. */
export interface ServiceAnswer {
  status: number;
  headers: Array<[string, string]>;
  /** A `Buffer`. */
  body: Uint8Array;
}

/** The routing service over a router; the core's service is made once per router object. */
export declare class RouteService {
  constructor(router: Routers);
  /** Whether the path of `target` (path and query) is the service's (`/route`). */
  static handles(target: string): boolean;
  /** The answer to one request whose body is read (at most `MAX_SERVICE_BODY_BYTES`). */
  answer(method: string, target: string, ifNoneMatch?: string | null, body?: Uint8Array | null): ServiceAnswer;
  /** Answers `req` on `res` when its path is the service's; `false` for another path, neither touched. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

/** A node:http request listener answering the routing service (any other path: the core's 404). */
export declare function handler(router: Routers): (req: IncomingMessage, res: ServerResponse) => void;
