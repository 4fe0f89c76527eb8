"""`shardroute.service` mounted in a stdlib ThreadingHTTPServer (port 0, read back):
the answers are the Router's for thousands of keys, one by one and in batches, from
several clients at once; hostile requests get the core's JSON 4xx; a body that never
comes is closed at its deadline; a handler of one's own keeps its other paths.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

import pytest

import shardroute
from shardroute import Topology
from shardroute.service import (
    BODY_TIMEOUT_MS,
    MAX_SERVICE_BODY_BYTES,
    MAX_SERVICE_KEYS,
    RouteService,
    handler,
)

DOCUMENT: Topology = {
    "format": "shardroute/1", "epoch": 12,
    "nodes": [{"id": "a", "address": "10.0.0.1:5432"}, {"id": "b"}, {"id": "c", "address": "10.0.0.3:5432", "weight": 2}],
    "strategy": {"type": "ring", "points_per_node": 64},
}
ROUTER = shardroute.Router(DOCUMENT)


class Server:
    def __init__(self, handler_class: type[BaseHTTPRequestHandler]) -> None:
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
        self.http.daemon_threads = True
        self.port = self.http.server_address[1]
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()

    def ask(self, method: str, target: str, body: Optional[bytes] = None,
            headers: Optional[dict[str, str]] = None) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, target, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server(handler(ROUTER))
    yield running
    running.stop()


def expected(key: Any) -> dict[str, Any]:
    node = ROUTER.node(key)
    answer: dict[str, Any] = {"shard": ROUTER.route(key), "node": node}
    address = {"a": "10.0.0.1:5432", "c": "10.0.0.3:5432"}.get(node)
    if address is not None:
        answer["address"] = address
    return answer


def test_answers_are_the_routers_under_load(server: Server) -> None:
    failures: list[str] = []

    def client(number: int) -> None:
        for i in range(500):
            key = f"tenant-{number}/user:{i} é&=+?"
            status, _, body = server.ask("GET", "/route?key=" + urllib.parse.quote(key, safe=""))
            want = dict(expected(key), epoch=12)
            if status != 200 or json.loads(body) != want:
                failures.append(f"{key}: {status} {body!r} != {want}")

    clients = [threading.Thread(target=client, args=(n,)) for n in range(4)]
    for each in clients:
        each.start()
    keys: list[Any] = [f"order:{i}" for i in range(MAX_SERVICE_KEYS - 3)] + [7, "7", 2**64 - 1]
    status, headers, body = server.ask("POST", "/route", json.dumps({"keys": keys}).encode())
    for each in clients:
        each.join()
    assert failures == []
    assert status == 200 and headers["content-type"] == "application/json"
    answer = json.loads(body)
    assert answer["epoch"] == 12
    assert answer["answers"] == [expected(key) for key in keys]
    # Integers and bytes.
    for i in range(200):
        key = (i * 0x9E3779B97F4A7C15) % 2**64
        assert json.loads(server.ask("GET", f"/route?key={key}&form=u64")[2])["shard"] == ROUTER.route(key)
        raw = bytes([0xFF, i, 0])
        assert json.loads(server.ask("GET", f"/route?key={raw.hex()}&form=hex")[2])["shard"] == ROUTER.route(raw)


def test_the_etag_and_304(server: Server) -> None:
    status, headers, _ = server.ask("GET", "/route?key=user%3A1")
    tag = headers["etag"]
    assert status == 200 and tag.startswith('"route-12-')
    status, headers, body = server.ask("GET", "/route?key=user%3A1", headers={"If-None-Match": tag})
    assert (status, body, headers["etag"]) == (304, b"", tag)
    # The same bytes as the service called directly.
    direct = RouteService(ROUTER).answer("GET", "/route?key=user%3A1")
    assert direct.status == 200 and direct.body == server.ask("GET", "/route?key=user%3A1")[2]


@pytest.mark.parametrize(("method", "target", "body", "status", "code"), [
    ("GET", "/route?key=%FF", None, 400, "invalid_key"),
    ("GET", "/route?key=abc&form=hex", None, 400, "invalid_key"),
    ("GET", "/route?key=-1&form=u64", None, 400, "invalid_key"),
    ("GET", "/route?key=a&key=b", None, 400, "invalid_argument"),
    ("GET", "/route?key=%G1", None, 400, "invalid_argument"),
    ("GET", "/elsewhere", None, 404, "invalid_argument"),
    ("PUT", "/route", b"{}", 405, "invalid_argument"),
    ("POST", "/route", b'{"keys": ["\\ud800"]}', 400, "invalid_key"),
    ("POST", "/route", b'{"keys": ["\xc3\x28"]}', 400, "invalid_key"),
    ("POST", "/route", b'{"keys": [1.5]}', 400, "invalid_key"),
    ("POST", "/route", b'{"keys": [', 400, "invalid_argument"),
    ("POST", "/route", b'{"keys": [], "x": 1}', 400, "invalid_argument"),
    ("POST", "/route", json.dumps({"keys": ["k"] * (MAX_SERVICE_KEYS + 1)}).encode(), 413, "limit_exceeded"),
    ("POST", "/route", b'{"keys": ' + b"[" * 100 + b"]" * 100 + b"}", 413, "limit_exceeded"),
])
def test_hostile_requests_get_the_cores_json_refusal(
    server: Server, method: str, target: str, body: Optional[bytes], status: int, code: str,
) -> None:
    got_status, headers, got_body = server.ask(method, target, body)
    assert (got_status, json.loads(got_body)["error"]["code"]) == (status, code), got_body
    assert headers["content-type"] == "application/json"
    if status == 405:
        assert headers["allow"] == "GET, POST"


def test_a_body_past_the_limit_is_refused_unread(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as raw:
        raw.sendall(b"POST /route HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (1 << 30))
        answer = raw.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.0 413") or answer.startswith(b"HTTP/1.1 413"), answer
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "limit_exceeded"
    assert MAX_SERVICE_BODY_BYTES == 1 << 20


def test_a_body_that_never_comes_is_closed_at_its_deadline(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as raw:
        raw.sendall(b'POST /route HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"keys": [')
        # Bounded by the service's deadline, with room; no answer, the connection closed.
        raw.settimeout(BODY_TIMEOUT_MS / 1000 * 3)
        started = time.monotonic()
        assert raw.makefile("rb").read() == b""
        assert time.monotonic() - started >= BODY_TIMEOUT_MS / 1000 * 0.9
    # Others were answered meanwhile, and still are.
    assert server.ask("GET", "/route?key=after")[0] == 200


def test_a_handler_of_ones_own_keeps_its_paths_and_follows_the_router() -> None:
    current: list[Optional[shardroute.Router]] = [None]
    service = RouteService(lambda: current[0])

    class Own(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not service.handle(self):
                self.send_response(200)
                self.send_header("Content-Length", "4")
                self.end_headers()
                self.wfile.write(b"mine")

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    running = Server(Own)
    try:
        status, headers, body = running.ask("GET", "/route?key=a")
        assert (status, json.loads(body)["error"]["code"], headers["retry-after"]) == (503, "unavailable", "1")
        current[0] = ROUTER
        assert json.loads(running.ask("GET", "/route?key=a")[2]) == dict(expected("a"), epoch=12)
        assert running.ask("GET", "/other")[2] == b"mine"
        current[0] = shardroute.Router(json.dumps(dict(DOCUMENT, epoch=13)))
        assert json.loads(running.ask("GET", "/route?key=a")[2])["epoch"] == 13
    finally:
        running.stop()
