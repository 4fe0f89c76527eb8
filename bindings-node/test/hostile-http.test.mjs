// Hostile topology servers against shardroute/http and shardroute/etcd (issue 34, finding
// 4): fake HTTP servers started here on 127.0.0.1 (each listens on port 0 and hands its
// port to the client) that announce a 1 GiB body, stream a chunked body without end, send
// a chunk size of `ffffffffffff`, or drip header bytes. Every body is refused with the
// package's `limit_exceeded` ShardrouteError as soon as it is known to pass the core's
// document limit, and the connection is closed: the bytes the server managed to send
// are counted. shardroute-wasm runs the same suite (bindings-wasm/test/hostile-http.test.mjs
// imports `hostileHttpSuite`).
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

/** The core's document limit (`limits::MAX_DOCUMENT_BYTES`). */
const LIMIT = 64 * 2 ** 20;
/** What loopback's socket buffers can hold on top of what the client read (generous). */
const BUFFERED = 32 * 2 ** 20;
/** How long past its deadline a request may take to fail (a slow, shared machine). */
const SLACK_MS = 5000;
const ZEROS = Buffer.alloc(2 ** 20);

/**
 * A fake HTTP server: `respond(server, socket)` runs once a request's head has arrived;
 * `server.sent` counts the bytes written. Resolves once listening (port 0).
 */
export async function fakeServer(respond) {
  const state = { sent: 0, closed: false, sockets: new Set() };
  const server = net.createServer((socket) => {
    state.sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => state.sockets.delete(socket));
    let head = '';
    const onData = (data) => {
      head += data.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        socket.off('data', onData);
        respond(state, socket);
      }
    };
    socket.on('data', onData);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${server.address().port}`;
  state.send = (socket, data) => {
    if (socket.destroyed) return false;
    state.sent += data.length;
    return socket.write(data);
  };
  /** `piece` again and again, as fast as the client reads, until it hangs up or `most` bytes went. */
  state.stream = (socket, piece, most) => {
    const more = () => {
      while (!socket.destroyed && !state.closed && state.sent < most) {
        if (!state.send(socket, piece)) return socket.once('drain', more);
      }
      return undefined;
    };
    more();
  };
  state.close = () => {
    state.closed = true;
    for (const socket of state.sockets) socket.destroy();
    server.close();
  };
  return state;
}

const OK_JSON = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n';

export const RESPONSES = {
  /** Announces a 1 GiB body, and sends it while the client reads. */
  hugeLength: (server, socket) => {
    server.send(socket, `${OK_JSON}Content-Length: 1073741824\r\n\r\n`);
    server.stream(socket, ZEROS, 2 ** 30);
  },
  /** A chunked body that never ends (stopped at 4 times the limit). */
  endlessChunks: (server, socket) => {
    server.send(socket, `${OK_JSON}Transfer-Encoding: chunked\r\n\r\n`);
    server.stream(socket, Buffer.concat([Buffer.from(`${ZEROS.length.toString(16)}\r\n`), ZEROS, Buffer.from('\r\n')]), 4 * LIMIT);
  },
  /** A chunk size of ffffffffffff, then bytes while the client reads. */
  hugeChunk: (server, socket) => {
    server.send(socket, `${OK_JSON}Transfer-Encoding: chunked\r\n\r\nffffffffffff\r\n`);
    server.stream(socket, ZEROS, 4 * LIMIT);
  },
};

/** A status line, then a header byte every 50 ms (for at most 60 s). */
function drippingHeaders(server, socket) {
  server.send(socket, 'HTTP/1.1 200 OK\r\nX-Slow: ');
  const timer = setInterval(() => {
    if (socket.destroyed || server.closed) clearInterval(timer);
    else server.send(socket, 'x');
  }, 50);
  setTimeout(() => clearInterval(timer), 60000).unref();
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

/** The suite, for a package's entry (`ShardrouteError`) and its `/http` entry. */
export function hostileHttpSuite(api, http) {
  const servers = [];
  after(() => servers.forEach((server) => server.close()));
  const serve = async (respond) => {
    const server = await fakeServer(respond);
    servers.push(server);
    return server;
  };

  describe('HttpFollower against hostile servers', () => {
    for (const [name, respond] of Object.entries(RESPONSES)) {
      test(`${name}: refused with limit_exceeded before the body is read whole`, async () => {
        const server = await serve(respond);
        await assert.rejects(http.HttpFollower.start(server.url, { timeoutMs: 60000 }), (err) => {
          assert.ok(err instanceof api.ShardrouteError, String(err));
          assert.equal(err.code, 'limit_exceeded');
          return true;
        });
        await settle();
        // fetch shows no chunk size: a chunked body is refused once the bytes read pass the limit.
        const most = name === 'hugeLength' ? BUFFERED : LIMIT + BUFFERED;
        assert.ok(server.sent < most, `${server.sent} bytes sent`);
      });
    }

    test('a server that drips its headers: unreachable once the whole request took timeoutMs', async () => {
      const server = await serve(drippingHeaders);
      const started = performance.now();
      await assert.rejects(http.HttpFollower.start(server.url, { timeoutMs: 2000 }), (err) => {
        assert.ok(err instanceof http.HttpError, String(err));
        assert.equal(err.code, 'unreachable');
        return true;
      });
      assert.ok(performance.now() - started < 2000 + SLACK_MS);
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const api = await import('shardroute');
  const http = await import('shardroute/http');
  hostileHttpSuite(api, http);

  describe('Etcd against hostile servers', async () => {
    const { Etcd } = await import('shardroute/etcd');
    const servers = [];
    after(() => servers.forEach((server) => server.close()));

    for (const [name, respond] of Object.entries(RESPONSES)) {
      test(`${name}: an answer past the limit is refused with limit_exceeded`, async () => {
        const server = await fakeServer(respond);
        servers.push(server);
        await assert.rejects(new Etcd(server.url, { timeoutMs: 60000 }).get('/topology'), (err) => {
          assert.ok(err instanceof api.ShardrouteError, String(err));
          assert.equal(err.code, 'limit_exceeded');
          return true;
        });
        await settle();
        // Twice the document limit: a document in base64 and its companions.
        const most = name === 'hugeLength' ? BUFFERED : 2 * LIMIT + BUFFERED;
        assert.ok(server.sent < most, `${server.sent} bytes sent`);
      });
    }
  });
}
