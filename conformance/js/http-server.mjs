// A topology document served over HTTP on 127.0.0.1 (node:http), as a CDN or an object
// store serves a file, for the HTTP follower suite (http-suite.mjs): the twin of
// examples/harness.py's TopologyHttpServer. `GET` answers the body with a strong `ETag`
// (a hash of it) and its `Content-Type`; `If-None-Match` with the current tag answers
// `304`. With `longPoll` it honours `Prefer: wait=N` (RFC 7240): a request whose tag is
// current is held until the body changes or N seconds pass. `set(body)` changes the body;
// `stop()` and `start()` take the server away and bring it back on the same port: a
// reserved one (bindings-wasm/test/edge/ports.mjs), not port 0's, which an outgoing
// connection could take while the server is away (issue 41).
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

import { startOnPorts } from '../../bindings-wasm/test/edge/ports.mjs';

export class TopologyHttpServer {
  /** Whether `Prefer: wait=N` holds a request (else every request is answered at once). */
  longPoll = true;
  /** Whether `If-None-Match` is honoured (false: every request gets the body at once, as from a server that ignores validators). */
  conditional = true;
  /** A status to answer every request with in place of the document (null: the document). */
  failWith = null;
  /** Requests received. */
  requests = 0;
  /** Requests held now. */
  held = 0;
  /** Requests whose client went away before their answer (an abort). */
  abandoned = 0;
  /** The port, the same across `stop()` and `start()`. */
  port = 0;
  body = new Uint8Array(0);
  contentType = 'application/json';
  #server = null;
  /** Whom `set` and `stop` wake: the held requests' callbacks. */
  #changed = new Set();

  /** A server listening on a reserved port of 127.0.0.1, serving `body` (see `set`). */
  static async open({ body = '', contentType = 'application/json', longPoll = true } = {}) {
    const server = new TopologyHttpServer();
    server.longPoll = longPoll;
    server.set(body, contentType);
    await server.start();
    return server;
  }

  /** The document's URL. */
  get url() {
    return `http://127.0.0.1:${this.port}/topology`;
  }

  /** The strong validator of the body: a quoted hash of it. */
  etag() {
    return `"${createHash('sha256').update(this.body).digest('hex').slice(0, 32)}"`;
  }

  /** Serves `body` (text, as UTF-8, or bytes) as `contentType` from now on, waking held requests. */
  set(body, contentType = 'application/json') {
    this.body = typeof body === 'string' ? new TextEncoder().encode(body) : Uint8Array.from(body);
    this.contentType = contentType;
    for (const wake of [...this.#changed]) wake();
  }

  /** Listens (again) on 127.0.0.1: on a reserved port the first time (a fresh one while it is taken), on the same port after. */
  start() {
    if (this.port === 0) return startOnPorts(1, ([port]) => this.#listen(port));
    return this.#listen(this.port);
  }

  #listen(port) {
    const server = createServer((request, response) => this.#handle(request, response));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        this.port = port;
        this.#server = server;
        resolve();
      });
    });
  }

  /** Stops listening and cuts every connection, held requests included (a client sees a network error). */
  async stop() {
    const server = this.#server;
    if (server === null) return;
    this.#server = null;
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    for (const wake of [...this.#changed]) wake();
    await closed;
  }

  async #handle(request, response) {
    this.requests += 1;
    if (this.failWith !== null) {
      response.writeHead(this.failWith, { 'content-type': 'text/plain' }).end('failing on purpose');
      return;
    }
    const sent = request.headers['if-none-match'];
    const wait = /^wait=(\d+)$/.exec((request.headers.prefer ?? '').trim())?.[1];
    if (sent === this.etag() && this.conditional && this.longPoll && wait !== undefined) {
      const gone = await this.#hold(response, Number(wait) * 1000, sent);
      if (gone) return;
    }
    const tag = this.etag();
    if (sent === tag && this.conditional) {
      response.writeHead(304, { etag: tag }).end();
      return;
    }
    response.writeHead(200, { etag: tag, 'content-type': this.contentType, 'content-length': this.body.length });
    response.end(this.body);
  }

  /** Holds a request until the tag is no longer `sent`, `ms` pass or the server stops: true when it is not to be answered. */
  #hold(response, ms, sent) {
    this.held += 1;
    return new Promise((resolve) => {
      const done = (outcome) => {
        clearTimeout(timer);
        this.#changed.delete(wake);
        response.off('close', left);
        this.held -= 1;
        if (outcome === 'left') this.abandoned += 1;
        resolve(outcome !== 'answer');
      };
      const wake = () => {
        if (this.#server === null) done('stopped');
        else if (this.etag() !== sent) done('answer');
      };
      const left = () => done('left');
      const timer = setTimeout(() => done('answer'), ms);
      this.#changed.add(wake);
      response.once('close', left);
    });
  }
}
