"""A hostile Redis Cluster node against `shardroute.redis` (issue 34, findings 1, 5 and 8):
a fake node started here on 127.0.0.1 (it binds port 0 and is the client's seed) that
speaks just enough RESP (HELLO, CLIENT, PING, READONLY, CLUSTER SHARDS, and the command
under test) to drip a reply a byte at a time, to name a node with bytes that are not
UTF-8, to redirect to addresses that cannot be used, and to answer the 974 KB CLUSTER
SHARDS of finding 1.

What must hold: one command lasts at most its timeout as a whole (not per read), so a
dripped reply ends in the package's error within the retry budget; every hostile answer
raises a `shardroute.ShardrouteError` subclass with a code, never a `UnicodeDecodeError`,
a `ValueError` or a `UnicodeError`; invalid UTF-8 is refused, never replaced; and the
974 KB reply is refused in bounded memory (a child under a 1 GiB address-space limit
exits with the package's answer, not an abort).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Union

import pytest

import shardroute
from shardroute.redis import AsyncClusterClient, ClusterClient, ClusterUnavailable

#: How long past its budget a command may take to fail (a slow, shared machine).
SLACK_S = 5.0

Value = Union[bytes, str, int, list[Any], dict[Any, Any], None]


def resp(value: Value, resp3: bool) -> bytes:
    """`value` in RESP (a dict as a RESP3 map, or a flat array in RESP2)."""
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        return b"$%d\r\n%s\r\n" % (len(value), value)
    if isinstance(value, bool):
        raise TypeError("no booleans")
    if isinstance(value, int):
        return b":%d\r\n" % value
    if value is None:
        return b"$-1\r\n"
    if isinstance(value, dict):
        if resp3:
            return b"%%%d\r\n" % len(value) + b"".join(resp(k, resp3) + resp(v, resp3) for k, v in value.items())
        value = [x for item in value.items() for x in item]
    return b"*%d\r\n" % len(value) + b"".join(resp(item, resp3) for item in value)


def crc16(data: bytes) -> int:
    """CRC16-XMODEM, Redis Cluster's key hash."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def slot(key: bytes) -> int:
    return crc16(key) % 16384


class FakeNode:
    """One fake Redis node on 127.0.0.1 (port 0). `shards(port)` gives its CLUSTER SHARDS
    reply; `command(node, connection, args, resp3)` answers any other command (None:
    `+OK`). Counts the bytes it sent (`sent`)."""

    def __init__(
        self,
        shards: Callable[[int], Value],
        command: Callable[[FakeNode, socket.socket, list[bytes], bool], bytes | None] | None = None,
    ) -> None:
        self._shards = shards
        self._command = command
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.sent = 0
        self._lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def send(self, connection: socket.socket, data: bytes) -> None:
        connection.sendall(data)
        with self._lock:
            self.sent += len(data)

    def _serve(self, connection: socket.socket) -> None:
        reader = connection.makefile("rb")
        resp3 = False
        with connection, reader:
            try:
                while True:
                    args = self._read_command(reader)
                    if args is None:
                        return
                    name = args[0].upper()
                    if name == b"HELLO":
                        resp3 = len(args) > 1 and args[1] == b"3"
                        answer = resp({"server": "redis", "version": "7.2.0", "proto": 3 if resp3 else 2}, resp3)
                    elif name == b"PING":
                        answer = b"+PONG\r\n"
                    elif name == b"CLUSTER" and len(args) > 1 and args[1].upper() == b"SHARDS":
                        answer = resp(self._shards(self.port), resp3)
                    elif name in (b"CLIENT", b"READONLY", b"ASKING", b"SELECT") or self._command is None:
                        answer = b"+OK\r\n"
                    else:
                        made = self._command(self, connection, args, resp3)
                        if made is None:
                            continue  # the command answered (or dripped) itself
                        answer = made
                    self.send(connection, answer)
            except OSError:
                return

    @staticmethod
    def _read_command(reader: Any) -> list[bytes] | None:
        line = reader.readline()
        if not line:
            return None
        assert line.startswith(b"*"), line
        args = []
        for _ in range(int(line[1:])):
            size = int(reader.readline()[1:])
            args.append(reader.read(size + 2)[:-2])
        return args

    def close(self) -> None:
        self.closed = True
        self._listener.close()


@pytest.fixture
def nodes() -> Iterator[Callable[..., FakeNode]]:
    started: list[FakeNode] = []

    def start(*args: Any, **kwargs: Any) -> FakeNode:
        started.append(FakeNode(*args, **kwargs))
        return started[-1]

    yield start
    for node in started:
        node.close()


def node_entry(node_id: bytes | str, port: int, role: str = "master") -> dict[str, Value]:
    return {"id": node_id, "port": port, "ip": "127.0.0.1", "endpoint": "127.0.0.1", "role": role,
            "replication-offset": 0, "health": "online"}


def one_shard(node_id: bytes | str = "a" * 40) -> Callable[[int], Value]:
    return lambda port: [{"slots": [0, 16383], "nodes": [node_entry(node_id, port)]}]


CONFIG: shardroute.SessionConfig = {"command_timeout_ms": 1000, "retry_budget_ms": 2000, "refresh_interval_ms": 100}


# -- finding 5: one deadline per command ------------------------------------------------


def drip(node: FakeNode, connection: socket.socket, args: list[bytes], resp3: bool) -> bytes | None:
    """A 100,000-byte value announced, then sent a byte every 20 ms (at most 60 s)."""
    node.send(connection, b"$100000\r\n")
    ends = time.monotonic() + 60
    while time.monotonic() < ends and not node.closed:
        node.send(connection, b"x")
        time.sleep(0.02)
    return None


@pytest.mark.parametrize("stall_ms", [0, 500])
def test_a_dripped_reply_ends_within_the_budget_not_per_read(nodes: Callable[..., FakeNode], stall_ms: int) -> None:
    node = nodes(one_shard(), drip)
    budget_s = (CONFIG["retry_budget_ms"] + CONFIG["command_timeout_ms"]) / 1000
    with ClusterClient([node.address], config={**CONFIG, "stall_ms": stall_ms}) as client:
        client.refresh()
        started = time.monotonic()
        with pytest.raises(ClusterUnavailable) as raised:
            client.get("k")
        took = time.monotonic() - started
    assert raised.value.code == "unavailable"
    # The old client timed each socket read: a byte every 20 ms never timed out (51 s).
    assert took < budget_s + SLACK_S, took
    assert node.sent < 60 * (budget_s + SLACK_S) + 1000, node.sent


def drip_handshake(node: FakeNode, connection: socket.socket, args: list[bytes], resp3: bool) -> bytes | None:
    return None


def test_a_dripped_handshake_ends_within_the_command_timeout(nodes: Callable[..., FakeNode]) -> None:
    """HELLO answered a byte at a time: the connection's handshake is one request."""

    class Dripping(FakeNode):
        def _serve(self, connection: socket.socket) -> None:
            with connection:
                try:
                    connection.recv(65536)
                    ends = time.monotonic() + 60
                    while time.monotonic() < ends and not self.closed:
                        self.send(connection, b"%")  # never a whole reply
                        time.sleep(0.02)
                except OSError:
                    return

    node = Dripping(one_shard())
    try:
        started = time.monotonic()
        with ClusterClient([node.address], config=CONFIG) as client:
            assert client.refresh() is False
        timeouts = shardroute.session_defaults()
        limit_s = (CONFIG["command_timeout_ms"] + timeouts["connect_timeout_ms"]) / 1000
        # One handshake per candidate refresh: the old client timed each read (never ending).
        assert time.monotonic() - started < limit_s + SLACK_S
        assert node.sent < 50 * (limit_s + SLACK_S), node.sent
    finally:
        node.close()


# -- finding 8: the package's errors, never another's ------------------------------------


def test_a_node_id_that_is_not_utf8_is_refused_never_replaced(nodes: Callable[..., FakeNode]) -> None:
    node = nodes(one_shard(b"\xff" * 40))
    with ClusterClient([node.address], config=CONFIG) as client:
        assert client.refresh() is False  # the reply refused: not installed with U+FFFD
        assert client.stats.refresh_failures >= 1
        with pytest.raises(shardroute.ShardrouteError) as raised:
            client.get("k")
    assert raised.value.code == "unavailable"


def test_the_session_refuses_a_reply_with_bytes_that_are_not_utf8() -> None:
    from shardroute.redis import _text

    reply = _text([{b"slots": [0, 16383], b"nodes": [node_entry(b"\xff" * 40, 7000)]}])
    session = shardroute.ClusterSession(["127.0.0.1:7000"])
    with pytest.raises(shardroute.ShardrouteError) as raised:
        session.refreshed(reply, 0)
    assert raised.value.code == "invalid_argument"
    # The words of the Node client too (bindings-node/test/hostile-redis.test.mjs).
    assert str(raised.value).endswith(": a string with a lone surrogate is not text"), str(raised.value)
    assert session.router is None


def moved_to(target: str) -> Callable[[FakeNode, socket.socket, list[bytes], bool], bytes | None]:
    def answer(node: FakeNode, connection: socket.socket, args: list[bytes], resp3: bool) -> bytes | None:
        key = args[1] if len(args) > 1 else b""
        return b"-MOVED %d %s\r\n" % (slot(key), target.encode())

    return answer


@pytest.mark.parametrize("target", ["nocolon", "127.0.0.1:notaport", "127.0.0.1:", ":6379 extra"])
def test_a_moved_address_that_cannot_be_split_is_the_package_error(nodes: Callable[..., FakeNode], target: str) -> None:
    node = nodes(one_shard(), moved_to(target))
    with ClusterClient([node.address], config=CONFIG) as client:
        with pytest.raises(shardroute.ShardrouteError) as raised:
            client.get("k")
    assert raised.value.code == "invalid_argument", raised.value
    assert not isinstance(raised.value, UnicodeError)


def test_a_255_byte_moved_host_is_the_package_error(nodes: Callable[..., FakeNode]) -> None:
    node = nodes(one_shard(), moved_to("a" * 255 + ":6379"))
    with ClusterClient([node.address], config=CONFIG) as client:
        with pytest.raises(shardroute.ShardrouteError) as raised:
            client.get("k")
    # The host cannot be resolved (the old client raised IDNA's UnicodeError): a node lost,
    # the table still names the fake node, which redirects again.
    assert raised.value.code in ("unavailable", "too_many_redirects"), raised.value


# -- finding 1: the 974 KB CLUSTER SHARDS, in bounded memory ------------------------------


def finding_1_shards(port: int) -> Value:
    """One shard: a master and 1,000 replicas, the slot pair [0, 0] listed 100,000 times."""
    replicas = [node_entry(f"{i:040x}", port, "replica") for i in range(1, 1001)]
    return [{"slots": [0, 0] * 100_000, "nodes": [node_entry("0" * 40, port), *replicas]}]


CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
import shardroute
from shardroute.redis import ClusterClient
try:
    with ClusterClient([sys.argv[1]], config={"retry_budget_ms": 1000, "command_timeout_ms": 5000}) as client:
        print("refresh", client.refresh(), client.stats.refused_replies)
except shardroute.ShardrouteError as err:
    print(type(err).__name__, err.code)
except BaseException as err:
    print("not the package's error:", type(err).__name__, err)
    sys.exit(3)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux counts it")
def test_the_974_kb_cluster_shards_is_refused_in_bounded_memory(nodes: Callable[..., FakeNode]) -> None:
    node = nodes(finding_1_shards)
    assert 900_000 < len(resp(finding_1_shards(node.port), True)) < 1_100_000
    child = subprocess.run(
        [sys.executable, "-c", CHILD, node.address], capture_output=True, text=True, timeout=120, env=os.environ.copy()
    )
    assert child.returncode == 0, (child.returncode, child.stdout, child.stderr[-2000:])
    assert child.stdout.split() == ["refresh", "False", "1"], child.stdout


# -- issue 36: a handshake is an attempt under the session's stall rule ------------------


class Silent(FakeNode):
    """A node paused mid-life (as SIGSTOP leaves it): it accepts connections (the kernel
    does) and never answers, not even the handshake's HELLO."""

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            while not self.closed:
                time.sleep(0.05)


@pytest.mark.parametrize("client_kind", ["sync", "asyncio"])
def test_a_handshake_to_a_silent_node_is_under_the_stall_rule(nodes: Callable[..., FakeNode], client_kind: str) -> None:
    """The slot's owner is silent from the first byte; the cluster then names a new owner.
    The command's connection and handshake are its attempt: at the session's stall
    deadline it is given up or the table re-read, and the command lands on the new owner,
    long before a connect timeout plus a command timeout (the old sync client held the
    handshake 6 s here: redis-py's `get_connection()` ran it outside every rule)."""
    silent = Silent(one_shard())
    asked = []

    def shards(port: int) -> Value:
        asked.append(port)  # the first table names the silent node; every later one the healthy one
        owner = silent.port if len(asked) == 1 else port
        return [{"slots": [0, 16383], "nodes": [node_entry("b" * 40 if owner == port else "a" * 40, owner)]}]

    healthy = nodes(shards)
    config: shardroute.SessionConfig = {"stall_ms": 200, "command_timeout_ms": 5000, "refresh_interval_ms": 100}
    try:
        started = time.monotonic()
        if client_kind == "sync":
            with ClusterClient([healthy.address], config=config) as client:
                assert client.set("k", "v")
                stats = client.stats
                errors, resends = stats.errors, stats.stall_resends
        else:
            async def main() -> tuple[int, int]:
                async with AsyncClusterClient([healthy.address], config=config) as client:
                    assert await client.set("k", "v")
                    return client.stats.errors, client.stats.stall_resends

            errors, resends = asyncio.run(main())
        took = time.monotonic() - started
    finally:
        silent.close()
    assert errors + resends >= 1  # it did meet the silent node
    timeouts = shardroute.session_defaults()
    assert took < (config["command_timeout_ms"] + timeouts["connect_timeout_ms"]) / 1000 - 1, took
