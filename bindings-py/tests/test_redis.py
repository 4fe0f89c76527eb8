"""`shardroute.redis.ClusterClient` against a real Redis Cluster (Debian's redis-server,
3 primaries + 3 replicas on 127.0.0.1, started and stopped by PID by the example's
`cluster.py`): routing without redirects on a fresh table, a slot migrated by hand
(ASK while it moves, MOVED after), multi-key commands, replica reads.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import shardroute
import shardroute.redis
from shardroute.redis import ClusterClient

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "redis-cluster"))
from cluster import Cluster, Node  # noqa: E402


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster() as running:
        yield running


@pytest.fixture
def client(cluster: Cluster) -> Iterator[ClusterClient]:
    with ClusterClient([cluster.seed().address]) as made:
        yield made


def owner_of(cluster: Cluster, slot: int) -> Node:
    for node in cluster.primaries():
        if slot_owned(node, slot):
            return node
    raise AssertionError(f"no primary owns slot {slot}")


def slot_owned(node: Node, slot: int) -> bool:
    for line in node.cli("CLUSTER", "NODES").splitlines():
        fields = line.split()
        if fields[0] == node.id:
            for part in fields[8:]:
                if not part.startswith("["):
                    start, _, end = part.partition("-")
                    if int(start) <= slot <= int(end or start):
                        return True
    return False


def test_a_fresh_table_needs_no_redirect(client: ClusterClient) -> None:
    for i in range(2000):
        client.set(f"key:{i}", str(i))
    assert [client.get(f"key:{i}") for i in range(0, 2000, 97)] == [str(i).encode() for i in range(0, 2000, 97)]
    assert (client.stats.moved, client.stats.ask, client.stats.errors) == (0, 0, 0)
    assert client.stats.commands == 2000 + len(range(0, 2000, 97))


def test_a_migrating_slot_answers_ask_then_moved(cluster: Cluster, client: ClusterClient) -> None:
    key = "{moving}:1"
    client.set(key, "before")
    slot = client.router.route(key)
    source = owner_of(cluster, slot)
    target = next(node for node in cluster.primaries() if node is not source)
    target.cli("CLUSTER", "SETSLOT", str(slot), "IMPORTING", source.id)
    source.cli("CLUSTER", "SETSLOT", str(slot), "MIGRATING", target.id)
    source.cli("MIGRATE", "127.0.0.1", str(target.port), "", "0", "5000", "KEYS", key)
    # The key is on the target while the slot is still the source's: ASK, once.
    assert client.get(key) == b"before"
    assert (client.stats.ask, client.stats.moved) == (1, 0)
    epoch = client.router.epoch
    assert client.router.epoch == epoch, "ASK changes nothing"
    for node in cluster.primaries():
        node.cli("CLUSTER", "SETSLOT", str(slot), "NODE", target.id)
    cluster.wait_until("the move is known everywhere", cluster.healthy)
    # The slot has moved: MOVED, the table follows, and the next command goes straight there.
    assert client.get(key) == b"before"
    assert client.stats.moved == 1
    assert client.router.epoch > epoch
    assert client.address_of(client.router.node(key)) == target.address
    client.stats.reset()
    assert client.get(key) == b"before"
    assert (client.stats.moved, client.stats.ask) == (0, 0)
    assert client.stats.longest_redirect_chain == 0


def test_multi_key_commands_stay_in_one_slot(client: ClusterClient) -> None:
    client.mset({"{user:7}.name": "ada", "{user:7}.mail": "ada@example.org"})
    with pytest.raises(shardroute.ShardrouteError) as refused:
        client.mset({"{user:7}.name": "ada", "{user:8}.name": "bob"})
    assert refused.value.code == "cross_slot"
    keys = [f"mget:{i}" for i in range(300)]
    client.pipeline_set([(key, key.upper()) for key in keys])
    assert client.mget(keys) == [key.upper().encode() for key in keys]
    assert client.pipeline_get(keys[::-1]) == [key.upper().encode() for key in keys[::-1]]
    assert client.mget(["{user:7}.mail", "missing:key"]) == [b"ada@example.org", None]


def test_reads_may_go_to_replicas(cluster: Cluster) -> None:
    with ClusterClient([cluster.seed().address], read_from_replicas=True) as client:
        assert client.set_and_wait("replicated", "yes", 1, 2000) == 1
        assert client.get("replicated") == b"yes"
        owner = client.router.node("replicated")
        replica = client.router.read_replica("replicated", 1)
        assert replica != owner
        assert client.stats.moved == 0, "the replica serves the read (READONLY)"
        # Writes still go to the primary (a replica would answer MOVED).
        client.set("written", "1")
        assert client.stats.moved == 0
        assert client.connection(client.address_of(client.router.node("written"))).get("written") == b"1"


def test_refresh_reads_the_live_table(cluster: Cluster, client: ClusterClient) -> None:
    before = client.router.epoch
    client.refresh()
    assert client.router.epoch == before + 1
    assert sorted(client.address_of(node) for node in [client.router.node(f"k{i}") for i in range(200)])[0] in {
        node.address for node in cluster.primaries()
    }


def move_slot(cluster: Cluster, key: str, slot: int) -> Node:
    """Moves `slot` (holding `key`) to another primary by hand, as redis-cli does
    (IMPORTING, MIGRATING, MIGRATE of every key, SETSLOT NODE); the new owner."""
    source = owner_of(cluster, slot)
    target = next(node for node in cluster.primaries() if node is not source)
    target.cli("CLUSTER", "SETSLOT", str(slot), "IMPORTING", source.id)
    source.cli("CLUSTER", "SETSLOT", str(slot), "MIGRATING", target.id)
    # Every key of the slot (other tests wrote some), so that the source lets it go.
    while keys := source.cli("CLUSTER", "GETKEYSINSLOT", str(slot), "1000").split():
        source.cli("MIGRATE", "127.0.0.1", str(target.port), "", "0", "5000", "KEYS", *keys)
    for node in [target, source, *cluster.primaries()]:
        assert node.cli("CLUSTER", "SETSLOT", str(slot), "NODE", target.id).strip() == "OK"
    cluster.wait_until("the move is known everywhere", cluster.healthy)
    return target


def test_set_and_wait_follows_moved(cluster: Cluster, client: ClusterClient) -> None:
    # The old shell raised InvalidArgumentError here: redis-py rewrites a pipeline's
    # MOVED as "Command # 1 (SET k v) of pipeline caused error: <slot> <address>".
    key = "{waited}:1"
    assert client.set_and_wait(key, "one", 1, 2000) == 1
    target = move_slot(cluster, key, client.router.route(key))
    assert client.set_and_wait(key, "two", 1, 2000) == 1
    assert (client.stats.moved, client.stats.errors) == (1, 0)
    assert client.address_of(client.router.node(key)) == target.address
    assert client.connection(target.address).get(key) == b"two"


def test_pipeline_and_mget_entries_redirected_take_the_sessions_path(cluster: Cluster, client: ClusterClient) -> None:
    tagged = [f"{{piped}}:{i}" for i in range(5)]
    keys = tagged + [f"other:{i}" for i in range(20)]
    client.pipeline_set([(key, key) for key in keys])
    move_slot(cluster, tagged[0], client.router.route(tagged[0]))
    client.stats.reset()
    # One MGET for the moved slot is answered MOVED inside a pipeline, then resent.
    assert client.mget(keys) == [key.encode() for key in keys]
    assert (client.stats.moved, client.stats.errors) == (1, 0), client._session.stats
    assert client.pipeline_get(keys) == [key.encode() for key in keys]
    assert client.stats.moved == 1, "the table already follows the move"


def test_the_asyncio_client(cluster: Cluster) -> None:
    from shardroute.redis import AsyncClusterClient

    async def main() -> None:
        # 500 commands at once open 500 connections from one event loop; on a shared 2-core
        # machine some connects outlast the default connect timeout (1 s: "Timeout connecting
        # to server") or go without a reply for the default stall time (500 ms), which the
        # session counts as timeout errors and retries. This test counts errors to check the
        # MOVED path, so it gives connects and stalls 10 s.
        patient: shardroute.SessionConfig = {"stall_ms": 10_000, "connect_timeout_ms": 10_000}
        async with AsyncClusterClient([cluster.seed().address], config=patient) as client:
            await asyncio.gather(*(client.set(f"async:{i}", str(i)) for i in range(500)))
            assert await client.mget([f"async:{i}" for i in range(500)]) == [str(i).encode() for i in range(500)]
            assert await client.pipeline_get(["async:1", "async:2"]) == [b"1", b"2"]
            key = "{async-moved}:1"
            assert await client.set_and_wait(key, "one", 1, 2000) == 1
            target = move_slot(cluster, key, (await client.router()).route(key))
            assert await client.get(key) == b"one"
            assert (client.stats.moved, client.stats.errors) == (1, 0), client._session.stats
            assert client.address_of((await client.router()).node(key)) == target.address
            # The refresh the MOVED asked for is handed to the next command, which does not
            # wait for it (ioredis' way): no CLUSTER SHARDS is answered before that command's
            # reply (or before a second one is asked, which waiting for the first comes to).
            asked, refreshes = 0, client.stats.refreshes
            gate = asyncio.Event()
            sent = shardroute.redis._sent

            async def held(connection: Any, asking: bool, commands: Any) -> list[Any]:
                nonlocal asked
                if commands[0][0] == "CLUSTER":
                    asked += 1
                    if asked >= 2:
                        gate.set()
                    await gate.wait()
                return await sent(connection, asking, commands)

            shardroute.redis._sent = held  # type: ignore[assignment]
            try:
                assert await client.get(key) == b"one"
                gate.set()
                assert await client.refresh() is True, "the running refresh, joined"
            finally:
                shardroute.redis._sent = sent
            assert asked == 1, "one CLUSTER SHARDS, answered after the command"
            assert (client.stats.moved, client.stats.refreshes) == (1, refreshes + 1)

    asyncio.run(main())
