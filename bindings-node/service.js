'use strict';
// shardroute/service: the routing service (`GET /route?key=...`, `POST /route`) as a
// handler a node:http server mounts, answering what `shardroute serve` answers. This file
// moves bytes; the core (`shardroute::service`, docs/routing-service.md) decides every
// answer: the query, the batch, the keys and their forms, the limits, the status codes,
// the JSON, the ETag. The Python twin is `shardroute.service`.
//
//   const http = require('node:http');
//   const { handler } = require('shardroute/service');
//   http.createServer(handler(() => follower.router)).listen(8080);
//
// or, in a server of one's own, `service.handle(req, res)` answers a request for `/route`
// and returns false for any other path, touching neither. A POST body is read only while
// it stays within MAX_SERVICE_BODY_BYTES (1 MiB; past it, from its Content-Length or as it
// arrives: 413 and the connection closed, nothing more read) and arrives within
// BODY_TIMEOUT_MS of the head (one deadline for the whole body: a client dripping it is
// closed, unanswered).

// The public RoutingService, as the WASM package's handler uses its own: its arguments
// are checked there (a method or target that is not a string is invalid_argument).
const { RoutingService } = require('./index.js');

/** The core's limits (`limits::MAX_SERVICE_BODY_BYTES`, `limits::MAX_SERVICE_KEYS`) and the body deadline (`service::BODY_TIMEOUT_MS`). */
const [MAX_SERVICE_BODY_BYTES, MAX_SERVICE_KEYS, BODY_TIMEOUT_MS] = RoutingService.limits();

function write(res, answer, close = false) {
  const headers = Object.fromEntries(answer.headers);
  headers['content-length'] = String(answer.body.length);
  if (close) headers.connection = 'close';
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

/**
 * The routing service over `router`: a Router, or a function returning the current one
 * (a follower's `router`; `null` before the first document: then 503). The core's service
 * is made once per router object.
 */
class RouteService {
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
      this.#native = new RoutingService(router);
      this.#held = router;
    }
    return this.#native;
  }

  /** Whether the path of `target` (path and query) is the service's. */
  static handles(target) {
    return RoutingService.handles(String(target));
  }

  /** The answer to one request whose body (at most MAX_SERVICE_BODY_BYTES) is read. */
  answer(method, target, ifNoneMatch = null, body = null) {
    const service = this.#service();
    if (service === null) return RoutingService.unavailable();
    return service.answer(method, target, ifNoneMatch, body);
  }

  /**
   * Answers `req` on `res` when its path is the service's, reading its body within the
   * limits; false for another path, with neither touched.
   */
  handle(req, res) {
    const target = req.url ?? '/';
    if (!RouteService.handles(target)) return false;
    const ifNoneMatch = req.headers['if-none-match'] ?? null;
    if (req.method !== 'POST') {
      req.resume();
      write(res, this.answer(req.method, target, ifNoneMatch));
      return true;
    }
    const refuse = (length) => {
      // Nothing more is read: the answer, then the connection closed.
      req.pause();
      res.once('finish', () => req.socket?.destroy());
      write(res, RoutingService.bodyTooLarge(length), true);
    };
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > MAX_SERVICE_BODY_BYTES) {
      refuse(Number(declared));
      return true;
    }
    const chunks = [];
    let size = 0;
    let done = false;
    const timer = setTimeout(() => {
      // The body did not arrive in time: closed, unanswered.
      done = true;
      req.destroy();
      req.socket?.destroy();
    }, BODY_TIMEOUT_MS);
    const finish = () => {
      done = true;
      clearTimeout(timer);
    };
    req.on('data', (chunk) => {
      if (done) return;
      size += chunk.length;
      if (size > MAX_SERVICE_BODY_BYTES) {
        finish();
        refuse(size);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      finish();
      let answer;
      try {
        answer = this.answer('POST', target, ifNoneMatch, Buffer.concat(chunks));
      } catch (err) {
        res.destroy(err);
        return;
      }
      write(res, answer);
    });
    req.on('error', finish);
    req.on('close', finish);
    return true;
  }
}

/**
 * A node:http request listener answering the routing service (`/route`; any other path
 * is the core's 404), for `http.createServer(handler(router))`.
 */
function handler(router) {
  const service = new RouteService(router);
  return (req, res) => {
    if (!service.handle(req, res)) {
      req.resume();
      write(res, service.answer(req.method, req.url ?? '/'));
    }
  };
}

module.exports = { RouteService, handler, MAX_SERVICE_BODY_BYTES, MAX_SERVICE_KEYS, BODY_TIMEOUT_MS };
