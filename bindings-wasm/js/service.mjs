// shardroute-wasm/service: the routing service (`GET /route?key=...`, `POST /route`) as a
// `fetch` handler, for Cloudflare Workers (workerd), Deno, Bun, service workers and Node's
// own `Request`/`Response`: it answers what `shardroute serve` and the Node and Python
// handlers answer, byte for byte. This file moves bytes; the core (`shardroute::service`,
// docs/routing-service.md) decides every answer: the query, the batch, the keys and their
// forms, the limits, the status codes, the JSON, the ETag.
//
//   import { handler } from 'shardroute-wasm/service';
//   export default { fetch: handler(() => follower.router) };   // workerd
//   Deno.serve(handler(router));                                // Deno
//
// A POST body is read only while it stays within MAX_SERVICE_BODY_BYTES (from its
// Content-Length, else as it arrives: past it, 413 and the rest of the body cancelled,
// unread) and must arrive within BODY_TIMEOUT_MS (one deadline for the whole body): a
// handler cannot close its connection unanswered as a socket server does, so a body that
// drips past the deadline gets the core's 408 with `connection: close`.

// The package's main entry, by the package's own name (as http.mjs does): the runtime's
// condition picks it, so this module uses the one instance of the WebAssembly module.
import { RoutingService } from 'shardroute-wasm';

export { RoutingService };

/** What a body read ended with when it did not end with the whole body. */
const TIMED_OUT = Symbol('timed out');

/**
 * The core's service limits, `{ maxBodyBytes, maxKeys, bodyTimeoutMs }`
 * (`limits::MAX_SERVICE_BODY_BYTES`, `limits::MAX_SERVICE_KEYS`, `service::BODY_TIMEOUT_MS`).
 * A function, not constants: under the web entry the module is not instantiated until `init`.
 */
export function serviceLimits() {
  const [maxBodyBytes, maxKeys, bodyTimeoutMs] = RoutingService.limits();
  return { maxBodyBytes, maxKeys, bodyTimeoutMs };
}

/** A `Response` of the core's answer `{status, headers, body}`. */
function responseOf(answer) {
  // A 304 (or any answer without bytes) has a null body: `Response` refuses a body,
  // even an empty one, for a null-body status.
  return new Response(answer.body.length === 0 ? null : answer.body, { status: answer.status, headers: answer.headers });
}

/** The request target (path and query) of a `Request` or URL text. */
function targetOf(url) {
  const parsed = new URL(url, 'http://service.invalid');
  return parsed.pathname + parsed.search;
}

/** Cancels what is left of a body, ignoring a stream that is already closed or errored. */
function cancel(stream) {
  stream?.cancel().catch(() => {});
}

/**
 * Reads `request`'s body within `maxBytes`, all of it within `timeoutMs`: the bytes, or
 * `{ tooLarge: length }` / `TIMED_OUT` with the rest cancelled.
 */
async function readBody(request, maxBytes, timeoutMs) {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) {
    cancel(request.body);
    return { tooLarge: Number(declared) };
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  let timer;
  const deadline = new Promise((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timeoutMs);
  });
  const chunks = [];
  let size = 0;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), deadline]);
      if (next === TIMED_OUT) {
        reader.cancel().catch(() => {});
        return TIMED_OUT;
      }
      if (next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) {
        reader.cancel().catch(() => {});
        return { tooLarge: size };
      }
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/**
 * The routing service over `router`: a `Router`, or a function returning the current one
 * (a follower's `router`; `null` before the first document: then 503). The core's service
 * is made once per router object.
 */
export class RouteService {
  #router;
  #held = null;
  #native = null;

  constructor(router) {
    this.#router = router;
  }

  #service() {
    const router = typeof this.#router === 'function' ? this.#router() : this.#router;
    if (router === null || router === undefined) return null;
    if (router !== this.#held) {
      const native = new RoutingService(router);
      this.#native?.free();
      this.#native = native;
      this.#held = router;
    }
    return this.#native;
  }

  /** Whether the path of `url` (a URL, its text, or a path and query) is the service's. */
  static handles(url) {
    return RoutingService.handles(targetOf(String(url)));
  }

  /**
   * The core's answer `{status, headers: [[name, value], ...], body}` to one request whose
   * body (at most `maxBodyBytes`) is read.
   */
  answer(method, target, ifNoneMatch = null, body = null) {
    const service = this.#service();
    if (service === null) return RoutingService.unavailable();
    // Not coerced: a method or target that is not a string is invalid_argument, as for
    // RoutingService itself.
    return service.answer(method, target, ifNoneMatch ?? undefined, body ?? undefined);
  }

  /**
   * The `Response` to `request` when its path is the service's, reading its body within
   * the limits; `null` for another path, its body untouched.
   */
  async handle(request) {
    const target = targetOf(request.url);
    if (!RoutingService.handles(target)) return null;
    const ifNoneMatch = request.headers.get('if-none-match');
    if (request.method !== 'POST') {
      cancel(request.body);
      return responseOf(this.answer(request.method, target, ifNoneMatch));
    }
    const { maxBodyBytes, bodyTimeoutMs } = serviceLimits();
    const body = await readBody(request, maxBodyBytes, bodyTimeoutMs);
    if (body === TIMED_OUT) return responseOf(RoutingService.bodyTimedOut());
    if (!(body instanceof Uint8Array)) return responseOf(RoutingService.bodyTooLarge(body.tooLarge));
    return responseOf(this.answer('POST', target, ifNoneMatch, body));
  }
}

/**
 * A `fetch` handler answering the routing service (`/route`; any other path is the core's
 * 404), for `export default { fetch: handler(router) }` or `Deno.serve(handler(router))`.
 */
export function handler(router) {
  const service = new RouteService(router);
  return async (request) => {
    const answer = await service.handle(request);
    if (answer !== null) return answer;
    cancel(request.body);
    return responseOf(service.answer(request.method, targetOf(request.url)));
  };
}
