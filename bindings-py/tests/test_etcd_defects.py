"""Issue 35's two etcd defects, against fake etcd members started here on 127.0.0.1
(each binds port 0 and hands its port to the client):

1. A quiet watch is ``idle``, not a lost source: the followers (sync and asyncio) answer
   it with a read and a new watch, with no ``on_error`` and no disconnect (the asyncio
   follower used to count every quiet second as a loss); a watch answered with an HTTP
   error reports it with its ``http`` code and its status.
2. A member answering HTTP 503 (or an etcd gateway error body with gRPC code 14,
   UNAVAILABLE: a member shutting down or restarting) is left for the next one, as an
   unreachable one is, round the list once, in every call and a watch's opening; the
   followers read the healthy member; the error after the last member keeps its code and
   status.

Since issue 35 the core's etcd session decides all of it (the shells only move bytes;
the raw ``Etcd.watch`` iterator is gone): these tests drive it through the package.

No timed assertions: waits are bounded generously and assert on what happened.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

import shardroute
from shardroute.etcd import AsyncEtcd, AsyncEtcdFollower, Etcd, EtcdError, EtcdFollower, EtcdFollowerStats

KEY = "/app/topology"
DOCUMENT = json.dumps({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}})
NEXT = json.dumps({"format": "shardroute/1", "epoch": 2, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}})
#: etcd's gateway while a member shuts down (grpc-gateway's error body, gRPC code 14).
UNAVAILABLE = json.dumps({"error": "etcdserver: server stopped", "code": 14, "message": "etcdserver: server stopped"}).encode()
#: Generous bound on a wait for something the client does (a slow, shared machine).
LONG_S = 30.0


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def kv(key: str, value: str, revision: int) -> dict[str, str]:
    return {"key": b64(key), "value": b64(value), "mod_revision": str(revision)}


def line(message: object) -> bytes:
    """One line of a watch stream as one HTTP chunk."""
    data = json.dumps(message).encode() + b"\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


class FakeMember:
    """One fake etcd member on 127.0.0.1 (port 0). ``mode``:

    - ``"healthy"``: answers ``/v3/kv/range`` and ``/v3/kv/txn`` with ``KEY`` holding
      ``DOCUMENT`` at revision 7; a watch with its headers and a ``created`` line, then
      (``event``) one put of ``NEXT`` at revision 8 (read from then on), then nothing,
      holding the stream open; with ``watch_status``, a watch is answered with that HTTP
      status instead (503 or 500: the gateway's UNAVAILABLE body; else a bad request's);
    - ``"unavailable"``: HTTP 503 with the gateway's UNAVAILABLE body, to everything;
    - ``"grpc14"``: HTTP 500 with that body (the gRPC code alone says unavailable);
    - ``"bad_request"``: HTTP 400 (an error that must not move to another member).

    ``requests`` lists the paths asked, in order."""

    def __init__(self, mode: str, *, event: bool = False, watch_status: int | None = None) -> None:
        self.mode = mode
        self.event = event
        self.watch_status = watch_status
        self.current = (DOCUMENT, 7)  # what KEY holds, and its revision
        self.requests: list[str] = []
        self._held: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._held.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                piece = connection.recv(65536)
                if not piece:
                    return
                data += piece
            head, body = data.split(b"\r\n\r\n", 1)
            lines = head.decode().split("\r\n")
            path = lines[0].split()[1]
            length = next((int(h.split(":", 1)[1]) for h in lines[1:] if h.lower().startswith("content-length:")), 0)
            while len(body) < length:
                piece = connection.recv(65536)
                if not piece:
                    return
                body += piece
            with self._lock:
                self.requests.append(path)
            self._respond(connection, path, json.loads(body or b"{}"))
        except OSError:
            pass
        finally:
            connection.close()

    def _send(self, connection: socket.socket, status: str, body: bytes) -> None:
        connection.sendall(
            b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
            % (status.encode(), len(body), body)
        )

    def _respond(self, connection: socket.socket, path: str, request: dict[str, object]) -> None:
        if self.mode == "unavailable":
            return self._send(connection, "503 Service Unavailable", UNAVAILABLE)
        if self.mode == "grpc14":
            return self._send(connection, "500 Internal Server Error", UNAVAILABLE)
        if self.mode == "bad_request":
            return self._send(connection, "400 Bad Request", b'{"error":"bad","code":3,"message":"bad"}')
        value, revision = self.current
        header = {"revision": str(revision)}
        if path == "/v3/kv/range":
            return self._send(connection, "200 OK", json.dumps({"header": header, "kvs": [kv(KEY, value, revision)]}).encode())
        if path == "/v3/kv/txn":
            success = request.get("success", [])
            assert isinstance(success, list)
            responses = [
                {"response_range": {"kvs": [kv(KEY, value, revision)] if each["request_range"]["key"] == b64(KEY) else []}}
                for each in success
            ]
            return self._send(connection, "200 OK", json.dumps({"header": header, "responses": responses}).encode())
        if path == "/v3/watch" and self.watch_status in (500, 503):
            reason = "Service Unavailable" if self.watch_status == 503 else "Internal Server Error"
            return self._send(connection, f"{self.watch_status} {reason}", UNAVAILABLE)
        if path == "/v3/watch" and self.watch_status is not None:
            return self._send(connection, f"{self.watch_status} Bad Request", b'{"error":"bad","code":3,"message":"bad"}')
        if path == "/v3/watch":
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            connection.sendall(line({"result": {"header": header, "created": True}}))
            if self.event:
                self.current = (NEXT, 8)
                event = {"type": "PUT", "kv": kv(KEY, NEXT, 8)}
                connection.sendall(line({"result": {"header": {"revision": "8"}, "events": [event]}}))
            # Then quiet: the stream stays open until the client (or close()) ends it.
            while not self._closed.is_set() and connection.recv(65536):
                pass
            return None
        return self._send(connection, "404 Not Found", b"{}")

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        with self._lock:
            for connection in self._held:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@pytest.fixture
def member() -> Iterator[Callable[..., FakeMember]]:
    members: list[FakeMember] = []

    def start(mode: str, *, event: bool = False, watch_status: int | None = None) -> FakeMember:
        members.append(FakeMember(mode, event=event, watch_status=watch_status))
        return members[-1]

    yield start
    for each in members:
        each.close()


def wait_until(done: Callable[[], bool]) -> bool:
    ends = time.monotonic() + LONG_S
    while not done():
        if time.monotonic() > ends:
            return False
        time.sleep(0.02)
    return True


# -- defect 1: a quiet asyncio watch is `idle`; an HTTP error keeps its code and status --


def test_sync_follower_counts_a_quiet_watch_as_no_loss(member: Callable[..., FakeMember]) -> None:
    """The sync twin of the asyncio case below: a quiet watch is answered by a read and a
    new watch, no on_error, no disconnect, no watch restart."""
    quiet = member("healthy")
    errors: list[Exception] = []
    with EtcdFollower(quiet.url, KEY, idle=0.2, on_error=errors.append) as follower:
        assert wait_until(lambda: follower.stats["reads"] >= 4 or bool(errors))
        stats = follower.stats
    assert errors == []
    assert stats["reads"] >= 4 and stats["watch_restarts"] == 0 and stats["disconnects"] == 0, stats
    assert quiet.requests.count("/v3/watch") >= 3, quiet.requests


def http_errors_of_a_watch(member: Callable[..., FakeMember], flavour: str, status: int) -> list[Exception]:
    """The errors a follower reports when its watch is answered with ``status`` (its
    reads are answered), up to the first one."""
    failing = member("healthy", watch_status=status)
    errors: list[Exception] = []
    config: shardroute.FollowerConfig = {"reconnect_first_ms": 60_000, "reconnect_max_ms": 60_000}
    if flavour == "sync":
        with EtcdFollower(failing.url, KEY, config=config, on_error=errors.append):
            assert wait_until(lambda: bool(errors))
        return errors

    async def main() -> None:
        follower = await AsyncEtcdFollower.start(failing.url, KEY, config=config, on_error=errors.append)
        try:
            ends = time.monotonic() + LONG_S
            while not errors and time.monotonic() < ends:
                await asyncio.sleep(0.02)
        finally:
            await follower.close()

    asyncio.run(main())
    return errors


@pytest.mark.parametrize("flavour", ["sync", "asyncio"])
def test_a_watch_http_error_keeps_code_and_status(member: Callable[..., FakeMember], flavour: str) -> None:
    for status in (400, 503):
        errors = http_errors_of_a_watch(member, flavour, status)
        assert errors and isinstance(errors[0], EtcdError), errors
        assert (errors[0].code, errors[0].status) == ("http", status), errors[0]


def test_async_follower_counts_a_quiet_watch_as_no_loss(member: Callable[..., FakeMember]) -> None:
    """A quiet watch is answered by a read and a new watch: no on_error, no disconnect."""
    quiet = member("healthy")
    errors: list[Exception] = []

    async def main() -> EtcdFollowerStats:
        follower = await AsyncEtcdFollower.start(AsyncEtcd(quiet.url), KEY, idle=0.2, on_error=errors.append)
        try:
            ends = time.monotonic() + LONG_S
            # Three idle periods answered (each a read), or a loss reported.
            while follower.stats["reads"] < 4 and not errors and time.monotonic() < ends:
                await asyncio.sleep(0.05)
            return follower.stats
        finally:
            await follower.close()

    stats = asyncio.run(main())
    assert errors == []
    assert stats["reads"] >= 4, stats
    assert stats["watch_restarts"] == 0, stats
    assert quiet.requests.count("/v3/watch") >= 3, quiet.requests


# -- defect 2: a 503 (or gRPC 14) member is left for the next one ----------------------


def test_call_moves_past_a_503_member(member: Callable[..., FakeMember]) -> None:
    going, healthy = member("unavailable"), member("healthy")
    etcd = Etcd([going.url, healthy.url])
    assert etcd.get(KEY) == (DOCUMENT, 7)
    assert etcd.url == healthy.url  # and stays there
    assert etcd.get(KEY) == (DOCUMENT, 7)
    assert going.requests == ["/v3/kv/range"]
    assert healthy.requests == ["/v3/kv/range", "/v3/kv/range"]


def test_async_call_moves_past_a_503_member(member: Callable[..., FakeMember]) -> None:
    going, healthy = member("unavailable"), member("healthy")
    etcd = AsyncEtcd([going.url, healthy.url])
    assert asyncio.run(etcd.get(KEY)) == (DOCUMENT, 7)
    assert etcd.url == healthy.url
    assert going.requests == ["/v3/kv/range"]


def test_call_moves_past_a_grpc_unavailable_body(member: Callable[..., FakeMember]) -> None:
    going, healthy = member("grpc14"), member("healthy")
    assert Etcd([going.url, healthy.url]).get(KEY) == (DOCUMENT, 7)
    assert asyncio.run(AsyncEtcd([going.url, healthy.url]).get(KEY)) == (DOCUMENT, 7)


def sync_get_error(urls: list[str]) -> EtcdError:
    with pytest.raises(EtcdError) as raised:
        Etcd(urls).get(KEY)
    return raised.value


def async_get_error(urls: list[str]) -> EtcdError:
    with pytest.raises(EtcdError) as raised:
        asyncio.run(AsyncEtcd(urls).get(KEY))
    return raised.value


def test_another_http_error_does_not_move(member: Callable[..., FakeMember]) -> None:
    refusing, healthy = member("bad_request"), member("healthy")
    for error in (sync_get_error([refusing.url, healthy.url]), async_get_error([refusing.url, healthy.url])):
        assert (error.code, error.status) == ("http", 400), error
    assert healthy.requests == []


def test_the_last_members_503_keeps_its_code_and_status(member: Callable[..., FakeMember]) -> None:
    first, second = member("unavailable"), member("unavailable")
    for error in (sync_get_error([first.url, second.url]), async_get_error([first.url, second.url])):
        assert (error.code, error.status) == ("http", 503), error
    # Round the list once per call: each member asked once by each client.
    assert first.requests == second.requests == ["/v3/kv/range"] * 2


@pytest.mark.parametrize("status", [503, 500])
def test_watch_create_moves_past_a_503_member(member: Callable[..., FakeMember], status: int) -> None:
    """The first member reads fine but answers the watch 503 (or 500 with gRPC code 14
    in its body): the watch opens on the second, whose event the follower installs."""
    going, healthy = member("healthy", watch_status=status), member("healthy", event=True)
    errors: list[Exception] = []
    with EtcdFollower([going.url, healthy.url], KEY, on_error=errors.append) as follower:
        assert follower.wait_for_epoch(2, timeout=LONG_S), follower.stats
        assert follower.etcd.url == healthy.url
    assert errors == []
    assert going.requests == ["/v3/kv/txn", "/v3/watch"]


def test_async_watch_create_moves_past_a_503_member(member: Callable[..., FakeMember]) -> None:
    going, healthy = member("healthy", watch_status=503), member("healthy", event=True)
    errors: list[Exception] = []

    async def main() -> bool:
        follower = await AsyncEtcdFollower.start([going.url, healthy.url], KEY, on_error=errors.append)
        async with follower:
            return await follower.wait_for_epoch(2, timeout=LONG_S)

    assert asyncio.run(main())
    assert errors == []
    assert going.requests == ["/v3/kv/txn", "/v3/watch"]


def test_follower_reads_the_healthy_second_member(member: Callable[..., FakeMember]) -> None:
    going, healthy = member("unavailable"), member("healthy")
    errors: list[Exception] = []
    with EtcdFollower([going.url, healthy.url], KEY, on_error=errors.append) as follower:
        assert follower.router is not None and follower.router.epoch == 1
        assert follower.etcd.url == healthy.url
        assert wait_until(lambda: "/v3/watch" in healthy.requests), healthy.requests
    assert errors == []
    assert going.requests == ["/v3/kv/txn"]


def test_async_follower_reads_the_healthy_second_member(member: Callable[..., FakeMember]) -> None:
    going, healthy = member("unavailable"), member("healthy")
    errors: list[Exception] = []

    async def main() -> int | None:
        follower = await AsyncEtcdFollower.start(AsyncEtcd([going.url, healthy.url]), KEY, on_error=errors.append)
        try:
            ends = time.monotonic() + LONG_S
            while "/v3/watch" not in healthy.requests and time.monotonic() < ends:
                await asyncio.sleep(0.02)
            return None if follower.router is None else follower.router.epoch
        finally:
            await follower.close()

    assert asyncio.run(main()) == 1
    assert "/v3/watch" in healthy.requests
    assert errors == []
    assert going.requests == ["/v3/kv/txn"]
