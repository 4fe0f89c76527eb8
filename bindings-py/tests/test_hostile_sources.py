"""Hostile topology servers against `shardroute.http` and `shardroute.etcd` (issue 34,
findings 4, 5 and 8): fake HTTP servers started here on 127.0.0.1 (each binds port 0
and hands its port to the client) that announce a 1 GiB body, stream a chunked body
without end, send a chunk size of `ffffffffffff`, or drip header bytes.

Every body is refused with the package's `LimitExceededError` (code `limit_exceeded`)
as soon as it is known to pass the core's document limit, and the server is cut off
soon after: the bytes it managed to send are counted. A request lasts at most its
timeout as a whole, not per read. The cases that would allocate are run in a child
process under a 1 GiB address-space limit, which must exit with the package's error,
not abort or raise `MemoryError`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

import shardroute
from shardroute._sources import MAX_DOCUMENT_BYTES
from shardroute.etcd import MAX_ANSWER_BYTES, AsyncEtcd, AsyncEtcdFollower, Etcd, EtcdError, EtcdFollower
from shardroute.http import AsyncHttpFollower, HttpError, HttpFollower

MIB = 1 << 20
#: What loopback's socket buffers can hold on top of what the client read (generous).
BUFFERED = 32 * MIB
#: How long past its deadline a request may take to fail (a slow, shared machine).
SLACK_S = 5.0


class FakeServer:
    """Accepts connections on 127.0.0.1 (port 0) and hands each, after the request's head
    was read, to `respond(server, connection)`; counts the bytes sent (`sent`)."""

    def __init__(self, respond: Callable[[FakeServer, socket.socket], None]) -> None:
        self._respond = respond
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.sent = 0
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            head = b""
            try:
                while b"\r\n\r\n" not in head:
                    data = connection.recv(65536)
                    if not data:
                        return
                    head += data
                self._respond(self, connection)
            except OSError:
                pass  # the client hung up: what the tests want

    def send(self, connection: socket.socket, data: bytes) -> None:
        connection.sendall(data)
        with self._lock:
            self.sent += len(data)

    def stream(self, connection: socket.socket, piece: bytes, most: int) -> None:
        """`piece` again and again until the client hangs up or `most` bytes were sent."""
        while self.sent < most and not self._closed:
            self.send(connection, piece)

    def close(self) -> None:
        self._closed = True
        self._listener.close()


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer]]:
    servers: list[FakeServer] = []

    def start(respond: Callable[[FakeServer, socket.socket], None]) -> FakeServer:
        servers.append(FakeServer(respond))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


ZEROS = bytes(MIB)
#: Far past the limit, so that the old code (which read everything) fails the byte count.
ENDLESS = 4 * MAX_DOCUMENT_BYTES


def huge_length(server: FakeServer, connection: socket.socket) -> None:
    """Announces a 1 GiB body, and sends it while the client reads."""
    server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n")
    server.stream(connection, ZEROS, 1 << 30)


def endless_chunks(server: FakeServer, connection: socket.socket) -> None:
    """A chunked body that never ends (stopped at ENDLESS)."""
    server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    server.stream(connection, b"%x\r\n" % len(ZEROS) + ZEROS + b"\r\n", ENDLESS)


def endless_body(server: FakeServer, connection: socket.socket) -> None:
    """Neither a length nor chunks: a body that runs to the end of the connection."""
    server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
    server.stream(connection, ZEROS, ENDLESS)


def huge_chunk(server: FakeServer, connection: socket.socket) -> None:
    """A chunk size of ffffffffffff (281 TB), then bytes while the client reads."""
    server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    server.send(connection, b"ffffffffffff\r\n")
    server.stream(connection, ZEROS, ENDLESS)


def dripping_headers(server: FakeServer, connection: socket.socket) -> None:
    """A status line, then one header byte every 50 ms (for at most 60 s)."""
    server.send(connection, b"HTTP/1.1 200 OK\r\n")
    ends = time.monotonic() + 60
    while time.monotonic() < ends:
        server.send(connection, b"X")
        time.sleep(0.05)


def refused_limit(err: BaseException) -> None:
    assert isinstance(err, shardroute.LimitExceededError), repr(err)
    assert isinstance(err, shardroute.ShardrouteError)
    assert err.code == "limit_exceeded"


# -- shardroute.http --------------------------------------------------------------------


@pytest.mark.parametrize("respond", [huge_length, endless_chunks, endless_body, huge_chunk])
def test_http_follower_refuses_a_body_past_the_limit_before_reading_it_whole(
    serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer],
    respond: Callable[[FakeServer, socket.socket], None],
) -> None:
    server = serve(respond)
    with pytest.raises(shardroute.ShardrouteError) as raised:
        HttpFollower(server.url, timeout=30)
    refused_limit(raised.value)
    time.sleep(0.2)  # the server notices the hang-up
    # A length or chunk size past the limit is refused before anything is read; a body
    # without one once the bytes read pass the limit.
    most = BUFFERED if respond in (huge_length, huge_chunk) else MAX_DOCUMENT_BYTES + BUFFERED
    assert server.sent < most, server.sent


@pytest.mark.parametrize("respond", [huge_length, endless_chunks, huge_chunk])
def test_async_http_follower_refuses_a_body_past_the_limit(
    serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer],
    respond: Callable[[FakeServer, socket.socket], None],
) -> None:
    server = serve(respond)

    async def main() -> None:
        follower = await AsyncHttpFollower.start(server.url, timeout=30)
        await follower.close()

    with pytest.raises(shardroute.ShardrouteError) as raised:
        asyncio.run(main())
    refused_limit(raised.value)
    time.sleep(0.2)
    most = BUFFERED if respond in (huge_length, huge_chunk) else MAX_DOCUMENT_BYTES + BUFFERED
    assert server.sent < most, server.sent


def test_http_follower_times_the_whole_request_not_each_read(
    serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer],
) -> None:
    server = serve(dripping_headers)
    started = time.monotonic()
    with pytest.raises(HttpError) as raised:
        HttpFollower(server.url, timeout=2)
    took = time.monotonic() - started
    assert raised.value.code == "unreachable"
    assert "within 2 s" in str(raised.value)
    # The old follower timed each read: a byte every 50 ms kept it waiting (40 s and more).
    # The session's clock is whole milliseconds (now_ms, floored): the deadline may pass up
    # to 1 ms before 2 s of this clock have.
    assert 2 - 0.001 <= took < 2 + SLACK_S, took
    assert server.sent < 17 + 20 * (2 + SLACK_S), server.sent


def test_async_http_follower_times_the_whole_request(
    serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer],
) -> None:
    server = serve(dripping_headers)
    started = time.monotonic()
    with pytest.raises(HttpError) as raised:
        asyncio.run(AsyncHttpFollower.start(server.url, timeout=2))
    assert raised.value.code == "unreachable"
    assert time.monotonic() - started < 2 + SLACK_S


CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
import shardroute
from shardroute.http import HttpFollower
try:
    HttpFollower(sys.argv[1], timeout=30)
except shardroute.ShardrouteError as err:
    print(type(err).__name__, err.code)
    sys.exit(0)
except BaseException as err:
    print("not the package's error:", type(err).__name__, err)
    sys.exit(3)
print("no error")
sys.exit(4)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux counts it")
@pytest.mark.parametrize("respond", [huge_length, huge_chunk, endless_chunks])
def test_http_follower_under_a_1_gib_address_space_exits_with_the_package_error(
    serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer],
    respond: Callable[[FakeServer, socket.socket], None],
) -> None:
    server = serve(respond)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, server.url], capture_output=True, text=True, timeout=120, env=os.environ.copy()
    )
    assert child.returncode == 0, (child.returncode, child.stdout, child.stderr[-2000:])
    assert child.stdout.split() == ["LimitExceededError", "limit_exceeded"]


# -- shardroute.etcd --------------------------------------------------------------------


def etcd_answer(body: bytes) -> Callable[[FakeServer, socket.socket], None]:
    def respond(server: FakeServer, connection: socket.socket) -> None:
        server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
        server.send(connection, body)

    return respond


def test_etcd_refuses_an_answer_past_its_limit_before_reading_it(
    serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer],
) -> None:
    for respond in (huge_length, endless_chunks, huge_chunk):
        server = serve(respond)
        with pytest.raises(shardroute.ShardrouteError) as raised:
            Etcd(server.url).get("/topology")
        refused_limit(raised.value)
        time.sleep(0.2)
        most = BUFFERED if respond in (huge_length, huge_chunk) else MAX_ANSWER_BYTES + BUFFERED
        assert server.sent < most, (respond.__name__, server.sent)


def test_async_etcd_refuses_an_answer_past_its_limit(
    serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer],
) -> None:
    server = serve(huge_length)
    with pytest.raises(shardroute.ShardrouteError) as raised:
        asyncio.run(AsyncEtcd(server.url).get("/topology"))
    refused_limit(raised.value)


def test_etcd_times_the_whole_request(
    serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer],
) -> None:
    server = serve(dripping_headers)
    started = time.monotonic()
    with pytest.raises(EtcdError) as raised:
        Etcd(server.url, timeout=2).get("/topology")
    assert raised.value.code == "unreachable"
    assert time.monotonic() - started < 2 + SLACK_S
    assert server.sent < 17 + 20 * (2 + SLACK_S), server.sent


def endless_watch_line() -> Callable[[FakeServer, socket.socket], None]:
    """A member whose first answer is a read (the key absent), and whose every later
    answer is a watch stream that opens, then sends one line that never ends."""
    answered: list[int] = []

    def respond(server: FakeServer, connection: socket.socket) -> None:
        answered.append(1)
        if len(answered) == 1:
            return etcd_answer(json.dumps({"header": {"revision": "1"}, "responses": [{"response_range": {}}]}).encode())(
                server, connection)
        server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        created = json.dumps({"result": {"header": {"revision": "1"}, "created": True}}).encode() + b"\n"
        server.send(connection, b"%x\r\n%s\r\n" % (len(created), created))
        server.stream(connection, b"%x\r\n" % len(ZEROS) + ZEROS + b"\r\n", 2 * MAX_ANSWER_BYTES + BUFFERED)

    return respond


#: No second try while a test looks (the backoff after the first loss is long).
NO_RETRY: shardroute.FollowerConfig = {"reconnect_first_ms": 600_000, "reconnect_max_ms": 600_000}


def test_etcd_watch_bounds_a_line(serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer]) -> None:
    """The follower's watch: a line past the limit loses the source with the package's
    LimitExceededError, and the connection is cut before the line is read whole."""
    server = serve(endless_watch_line())
    errors: list[Exception] = []
    with EtcdFollower(server.url, "/topology", config=NO_RETRY, on_error=errors.append):
        ends = time.monotonic() + 60
        while not errors and time.monotonic() < ends:
            time.sleep(0.05)
    assert errors, "no error reported"
    refused_limit(errors[0])
    time.sleep(0.2)
    assert server.sent < MAX_ANSWER_BYTES + BUFFERED, server.sent


def test_async_etcd_watch_bounds_a_line(serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer]) -> None:
    server = serve(endless_watch_line())
    errors: list[Exception] = []

    async def main() -> None:
        async with await AsyncEtcdFollower.start(server.url, "/topology", config=NO_RETRY, on_error=errors.append):
            ends = time.monotonic() + 60
            while not errors and time.monotonic() < ends:
                await asyncio.sleep(0.05)

    asyncio.run(main())
    assert errors, "no error reported"
    refused_limit(errors[0])
    time.sleep(0.2)
    assert server.sent < MAX_ANSWER_BYTES + 2 * BUFFERED, server.sent


def test_a_well_formed_answer_still_reads(serve: Callable[[Callable[[FakeServer, socket.socket], None]], FakeServer]) -> None:
    value = json.dumps({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}})
    body = json.dumps({
        "header": {"revision": "7"},
        "kvs": [{"key": base64.b64encode(b"/topology").decode(), "value": base64.b64encode(value.encode()).decode(), "mod_revision": "7"}],
    }).encode()
    server = serve(etcd_answer(body))
    assert Etcd(server.url).get("/topology") == (value, 7)
