"""Oracle test of the `redis_cluster` profile.

Routes more than 10,000 keys (every hash-tag edge case, binary bytes, long keys, text,
integers) through shardroute and through the real implementations, and fails on any
difference:

1. a real `redis-server` (Debian package `redis-server`) in cluster mode on
   127.0.0.1: `CLUSTER KEYSLOT` for every key, pipelined, binary-safe; then three
   servers form a cluster (two masters, one of them with two slot ranges and a
   replica) whose real `CLUSTER SLOTS` and `CLUSTER SHARDS` replies are imported
   through `import_redis_cluster_slots` / `import_redis_cluster_shards` and must route
   every key to the master and replicas the reply names;
2. redis-py's `redis.crc.key_slot` (PyPI `redis`, pinned in
   conformance/requirements-oracles.txt).

A missing oracle fails the test with the command that installs it; nothing is skipped.
Run: .venv/bin/python -m pytest conformance/oracles/test_redis_cluster.py
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import redis.crc

import shardroute
from harness import start_on_ports
from oracle_keys import key_bytes
from shardroute.redis import _text as decode
from shardroute_testing import doc

SLOTS = 16384
REDIS_SERVER = shutil.which("redis-server")
WAIT_SECONDS = 20.0


# --------------------------------------------------------------------------- keys


def edge_keys() -> list[bytes | str | int]:
    """Every edge of the hash-tag rule, and the other classes of key."""
    tags = [
        "", "{", "}", "{}", "}{", "{}}", "{{}}", "{{", "}}", "{a", "a}", "{a}", "a{b}c",
        "{user1000}.following", "{user1000}.followers", "user1000", "foo{}{bar}",
        "foo{{bar}}zap", "foo{bar}{zap}", "foo{bar", "}foo{bar}", "{}{a}", "{}a}",
        "{a}}", "{{a}", "a{}", "a{}b", "{ }", "x{y}", "{x}y", "{{}}{}", "{}{}", "}{}{",
        "foo{hash_tag}", "somekey", "123456789", "{123456789}", "{}123456789",
        "ключ", "{ключ}.x", "🔑", "{🔑}key", "key with spaces", "{key with spaces}z",
    ]
    keys: list[bytes | str | int] = list(tags)
    binary = [
        b"", b"\x00", b"\xff", b"\x80", b"\x7f", b"\xff\x00\xff", b"\xde\xad\xbe\xef",
        b"{\xff}", b"{\x00}", b"\x00{\x80}\x00", b"{\xff\xfe}\x7b", b"{}\x80{\x81}",
        b"\x7b\x7d", b"\x7b\x80\x7d", bytes(range(256)), bytes(range(255, -1, -1)),
        b"\xc3\x28", b"\xed\xa0\x80", b"{" + bytes(range(128, 256)) + b"}",
    ]
    keys += binary
    keys += ["x" * n for n in (1, 2, 63, 64, 65, 255, 256, 1000, 4096)]
    keys += [b"\xab" * 100_000, "{t}" + "y" * 50_000, "z" * 50_000 + "{late}"]
    keys += [0, 1, 9, 10, 42, 123456789, 2**31 - 1, 2**31, 2**32, 2**53 - 1, 2**53, 2**63, 2**64 - 1]
    return keys


def random_keys(count: int) -> list[bytes | str | int]:
    """Deterministic random keys heavy in braces, so every tag shape occurs often."""
    rng = random.Random(0x5EED_2ED15)
    alphabet = b"{}{}{}ab\x00\xff\x80 "
    keys: list[bytes | str | int] = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            keys.append(bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 12))))
        elif kind == 1:
            keys.append(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))))
        elif kind == 2:
            tag = "".join(rng.choice("abc{}éж🔑") for _ in range(rng.randrange(0, 6)))
            keys.append(f"user:{i}:{{{tag}}}.{rng.randrange(10**6)}")
        elif kind == 3:
            keys.append(f"key:{i}")
        else:
            keys.append(rng.randrange(2**64) if i % 2 else rng.randrange(10**6))
    return keys


KEYS = edge_keys() + random_keys(12_000)


# ------------------------------------------------------------------------ servers


class Server:
    """One `redis-server --cluster-enabled yes` in its own temp dir, stopped by PID."""

    def __init__(self, root: str, name: str) -> None:
        assert REDIS_SERVER, "unreachable: checked by the fixture"
        # Its port and its cluster bus's: reserved, fresh ones while one is taken.
        start_on_ports(2, lambda ports: self.start(root, name, ports[0], ports[1]))
        self.id = self.raw("CLUSTER", "MYID")

    def start(self, root: str, name: str, port: int, bus: int) -> None:
        self.port, self.bus = port, bus
        self.dir = os.path.join(root, name)
        shutil.rmtree(self.dir, ignore_errors=True)  # a last try's, on a port that was taken
        os.makedirs(self.dir)
        self.log = open(os.path.join(self.dir, "redis.log"), "wb")
        self.process = subprocess.Popen(
            [
                REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--cluster-port", str(bus),
                "--cluster-enabled", "yes", "--cluster-config-file", os.path.join(self.dir, "nodes.conf"),
                "--save", "", "--appendonly", "no", "--dir", self.dir, "--daemonize", "no",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10, protocol=2)
        self.client3 = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10, protocol=3)
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                if self.client.ping():
                    break
            except redis.ConnectionError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                with open(os.path.join(self.dir, "redis.log"), "rb") as log:
                    raise AssertionError(f"redis-server on port {self.port} did not start:\n{log.read().decode(errors='replace')}")
            time.sleep(0.05)

    def raw(self, *args: Any, resp3: bool = False) -> Any:
        """A command's reply without redis-py's response callbacks, bytes decoded: RESP2
        (maps as flat arrays) or RESP3 (maps as dicts)."""
        client = self.client3 if resp3 else self.client
        connection = client.connection_pool.get_connection()
        try:
            connection.send_command(*args)
            return decode(connection.read_response())
        finally:
            client.connection_pool.release(connection)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.client.close()
        self.client3.close()
        self.log.close()


def wait_for(what: str, check: Any) -> Any:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"timed out after {WAIT_SECONDS}s waiting for {what}")


@pytest.fixture(scope="module")
def servers() -> Iterator[list[Server]]:
    if REDIS_SERVER is None:
        pytest.fail(
            "the redis_cluster oracle needs a real redis-server: apt-get install -y redis-server",
            pytrace=False,
        )
    root = tempfile.mkdtemp(prefix="shardroute-redis-")
    started: list[Server] = []
    try:
        for name in ("a", "b", "a-replica"):
            started.append(Server(root, name))
        yield started
    finally:
        for server in started:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


# -------------------------------------------------------------------------- tests


def even_router() -> shardroute.Router:
    return shardroute.Router(doc(["a", "b", "c"], "redis_cluster"))


def test_key_count() -> None:
    assert len(KEYS) >= 10_000


def test_slots_match_redis_py() -> None:
    router = even_router()
    ours = router.route_many(KEYS)
    differences = [
        (key, slot, redis.crc.key_slot(key_bytes(key)))
        for key, slot in zip(KEYS, ours)
        if slot != redis.crc.key_slot(key_bytes(key))
    ]
    assert not differences, f"{len(differences)} of {len(KEYS)} keys differ from redis-py; first: {differences[:5]}"
    print(f"redis_cluster vs redis-py {redis.__version__}: {len(KEYS)} keys, 0 differences")


def test_slots_match_redis_server(servers: list[Server]) -> None:
    server = servers[0]
    version = server.client.info("server")["redis_version"]
    router = even_router()
    ours = router.route_many(KEYS)
    pipe = server.client.pipeline(transaction=False)
    for key in KEYS:
        # An int goes as the decimal text redis-py sends; bytes and text as they are.
        pipe.execute_command("CLUSTER", "KEYSLOT", key)
    theirs = pipe.execute()
    assert len(theirs) == len(KEYS)
    differences = [(key, a, b) for key, a, b in zip(KEYS, ours, theirs) if a != b]
    assert not differences, f"{len(differences)} of {len(KEYS)} keys differ from redis-server {version}; first: {differences[:5]}"
    print(f"redis_cluster vs redis-server {version} CLUSTER KEYSLOT: {len(KEYS)} keys, 0 differences")


def test_even_split_defaults() -> None:
    slots = json.loads(even_router().to_json())["strategy"]["slots"]
    assert [(r["start"], r["end"]) for r in slots] == [(0, 5460), (5461, 10922), (10923, 16383)]


def form_cluster(servers: list[Server]) -> None:
    """a: slots 0..=8000 and 12000..=16383, b: 8001..=11999, a-replica replicates a."""
    a, b, replica = servers
    a.raw("CLUSTER", "ADDSLOTSRANGE", 0, 8000, 12000, 16383)
    b.raw("CLUSTER", "ADDSLOTSRANGE", 8001, 11999)
    for other in (b, replica):
        a.raw("CLUSTER", "MEET", "127.0.0.1", other.port, other.bus)  # its bus: --cluster-port, not port + 10000
    wait_for("all three nodes to know each other", lambda: all(
        len([line for line in s.raw("CLUSTER", "NODES").splitlines() if line.strip()]) == 3 for s in servers
    ))
    wait_for("the replica to accept CLUSTER REPLICATE", lambda: try_replicate(replica, a.id))
    wait_for("CLUSTER SLOTS and SHARDS to show the replica and the whole slot space on every node", lambda: all(
        converged(s) for s in servers
    ))


def try_replicate(replica: Server, master: str) -> bool:
    try:
        return replica.raw("CLUSTER", "REPLICATE", master) == "OK"
    except redis.ResponseError:
        return False


def converged(server: Server) -> bool:
    slots = server.raw("CLUSTER", "SLOTS")
    covered = sum(entry[1] - entry[0] + 1 for entry in slots)
    with_replica = [entry for entry in slots if len(entry) >= 4]
    shards = server.raw("CLUSTER", "SHARDS", resp3=True)
    online = all(node.get("health") == "online" for shard in shards for node in shard["nodes"])
    return covered == SLOTS and len(slots) == 3 and len(with_replica) == 2 and online


def check_import(servers: list[Server], op: str, reply: Any) -> None:
    a, b, replica = servers
    result = shardroute.apply(doc(["old"], "modulo", epoch=5), {"op": op, "reply": reply})
    assert set(result["added"]) == {a.id, b.id, replica.id}
    assert result["removed"] == ["old"]
    assert result["ranges"] == 3
    router = shardroute.Router(result["topology"])
    assert router.epoch == 6
    addresses = {n["id"]: n["address"] for n in result["topology"]["nodes"]}
    assert addresses == {s.id: f"127.0.0.1:{s.port}" for s in servers}
    nodes = [router.node(key) for key in KEYS]
    slots = router.route_many(KEYS)
    wrong = []
    with pytest.raises(shardroute.InvalidArgumentError):
        router.replicas(next(k for k, s in zip(KEYS, slots) if 8001 <= s <= 11999), 2)
    for key, slot, node in zip(KEYS, slots, nodes):
        expected = b.id if 8001 <= slot <= 11999 else a.id
        expected_chain = [b.id] if expected == b.id else [a.id, replica.id]
        chain = router.replicas(key, len(expected_chain))
        if node != expected or slot != redis.crc.key_slot(key_bytes(key)) or chain != expected_chain:
            wrong.append((key, slot, node))
    assert not wrong, f"{op}: {len(wrong)} keys misrouted; first: {wrong[:5]}"


def test_import_real_cluster_slots_and_shards(servers: list[Server]) -> None:
    form_cluster(servers)
    slots_reply = servers[0].raw("CLUSTER", "SLOTS")
    shards_reply = servers[0].raw("CLUSTER", "SHARDS", resp3=True)
    check_import(servers, "import_redis_cluster_slots", slots_reply)
    check_import(servers, "import_redis_cluster_slots", servers[0].raw("CLUSTER", "SLOTS", resp3=True))
    check_import(servers, "import_redis_cluster_shards", shards_reply)
    check_import(servers, "import_redis_cluster_shards", servers[0].raw("CLUSTER", "SHARDS"))
    # The same key must be served by the node the real cluster says: ask it.
    a, b, _ = servers
    by_id = {s.id: s for s in servers}
    imported = shardroute.apply(doc(["x"], "modulo"), {"op": "import_redis_cluster_shards", "reply": shards_reply})
    router = shardroute.Router(imported["topology"])
    for key in KEYS[:2000]:
        owner = by_id[router.node(key)]
        # GET on the owner answers (nil) instead of a MOVED redirection.
        assert owner.client.get(key_bytes(key)) is None
    print(f"redis_cluster: imported CLUSTER SLOTS and CLUSTER SHARDS of a 3-node cluster, {len(KEYS)} keys routed as the cluster says")
