"""Auto-pipelining in `shardroute.redis.AsyncClusterClient` (issue 37) against a real Redis
Cluster (3 primaries + 3 replicas, started and stopped by PID by the example's
`cluster.py`): the commands of concurrent tasks share one connection per node, written
as the session counts them, each reply going to its own command; a MOVED inside a
pipeline is that command's alone; a connection killed with replies outstanding fails
each of them into the session (which resends them); a command given up keeps its place
on a connection others still wait on; and `auto_pipeline: False` keeps one connection
per command in flight.

Connections are counted by the servers (`CLIENT LIST`, by the client's name), so each
test sees the client from the outside.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import redis

import shardroute
from shardroute.redis import AsyncClusterClient

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "redis-cluster"))
from cluster import Cluster, Node  # noqa: E402
from test_redis import move_slot, owner_of  # noqa: E402

#: The tests below block a connection on purpose (BLPOP); the session's stall rule would
#: resend its commands elsewhere meanwhile, so it is given room here.
PATIENT: shardroute.SessionConfig = {"stall_ms": 20_000, "command_timeout_ms": 20_000, "connect_timeout_ms": 10_000}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster() as running:
        yield running


def connections(cluster: Cluster, name: str) -> int:
    """The primaries' open connections named `name` (the client's `client_name`)."""
    return sum(f" name={name} " in line for node in cluster.primaries() for line in node.cli("CLIENT", "LIST").splitlines())


def same_node_keys(client: AsyncClusterClient, router: shardroute.Router, first: str, count: int) -> list[str]:
    """`count` keys on the node of `first`, none in its slot."""
    node, slot = router.node(first), router.route(first)
    keys = [key for key in (f"near:{i}" for i in range(5000)) if router.node(key) == node and router.route(key) != slot]
    assert len(keys) >= count
    return keys[:count]


async def blocked_client(node: Node, command: str) -> str:
    """The id of `node`'s client blocked in `command` (polled through redis-cli)."""
    while True:
        for line in (await asyncio.to_thread(node.cli, "CLIENT", "LIST")).splitlines():
            fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
            if fields.get("cmd") == command:
                return fields["id"]
        await asyncio.sleep(0.01)


def test_concurrent_tasks_each_get_their_own_reply_over_one_connection_per_node(cluster: Cluster) -> None:
    async def main() -> None:
        async with AsyncClusterClient([cluster.seed().address], config=PATIENT, client_name="shared") as client:
            await client.router()
            client.stats.reset()

            async def task(i: int) -> list[Any]:
                key = f"own:{i}"
                counter = f"n:{i % 7}"
                return [await client.set(key, f"value-{i}"), await client.get(key), await client.execute("INCR", counter, key=counter)]

            results = await asyncio.gather(*(task(i) for i in range(300)))
            assert [result[:2] for result in results] == [[True, f"value-{i}".encode()] for i in range(300)]
            # Each INCR's reply is its own: 300 increments of 7 counters, each value once.
            counts = sorted(int(result[2]) for result in results)
            assert counts == sorted(n for c in range(7) for n in range(1, len(range(c, 300, 7)) + 1))
            # 300 tasks in flight: one connection per primary, and the first table's (the old
            # client opened one per task in flight).
            assert connections(cluster, "shared") <= len(cluster.primaries()) + 1
            assert (client.stats.errors, client.stats.moved) == (0, 0)
            assert client.stats.commands == 900

    asyncio.run(main())


def test_a_command_on_an_idle_connection_is_written_at_once_and_the_burst_behind_it_together(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's ``pipeline_queued`` 2: a command that finds its connection idle is
    sent at once, alone (no flush a turn later); those issued behind it in the same turn go
    in one write when its reply is read (``pipeline_max_writes`` 1, the default)."""
    sent: list[int] = []
    send = redis.asyncio.connection.AbstractConnection.send_packed_command

    async def counting(self: Any, command: Any, check_health: bool = True) -> None:
        gets = bytes(command).count(b"$3\r\nGET\r\n") if isinstance(command, (bytes, bytearray)) else 0
        if gets:
            sent.append(gets)
        await send(self, command, check_health)

    monkeypatch.setattr(redis.asyncio.connection.AbstractConnection, "send_packed_command", counting)

    async def main() -> None:
        async with AsyncClusterClient([cluster.seed().address], config=PATIENT) as client:
            await client.router()
            keys = [f"{{idle}}:{i}" for i in range(5)]
            for key in keys[:3]:  # one at a time: each alone
                await client.get(key)
            assert sent == [1, 1, 1]
            sent.clear()
            assert await asyncio.gather(*(client.get(key) for key in keys)) == [None] * 5
            assert sent == [1, 4]  # the first at once, the four behind it in one write

    asyncio.run(main())


def test_an_argument_redis_py_cannot_encode_fails_its_own_command_only(cluster: Cluster) -> None:
    async def main() -> None:
        async with AsyncClusterClient([cluster.seed().address], config=PATIENT) as client:
            await client.router()
            bad = client.set("own:bad", {"not": "encodable"})
            results = await asyncio.gather(bad, client.set("own:good", "yes"), client.get("own:good"), return_exceptions=True)
            assert isinstance(results[0], redis.DataError)
            assert list(results[1:]) == [True, b"yes"]

    asyncio.run(main())


def test_replica_reads_share_a_readonly_connection_per_replica(cluster: Cluster) -> None:
    async def main() -> None:
        async with AsyncClusterClient([cluster.seed().address], config=PATIENT, read_from_replicas=True) as client:
            keys = [f"replicated:{i}" for i in range(60)]
            await asyncio.gather(*(client.set_and_wait(key, key, 1, 2000) for key in keys))
            client.stats.reset()
            assert await asyncio.gather(*(client.get(key) for key in keys)) == [key.encode() for key in keys]
            # A replica without READONLY would answer MOVED (to the primary).
            assert (client.stats.moved, client.stats.errors) == (0, 0)

    asyncio.run(main())


def test_a_moved_inside_an_auto_pipeline_is_that_commands_alone(cluster: Cluster) -> None:
    async def main() -> None:
        async with AsyncClusterClient([cluster.seed().address], config=PATIENT) as client:
            router = await client.router()
            moved = "{ap-moved}:1"
            others = same_node_keys(client, router, moved, 20)
            await asyncio.gather(*(client.set(key, key) for key in [moved, *others]))
            target = move_slot(cluster, moved, router.route(moved))
            client.stats.reset()
            # One write to the old owner: ten GETs, the moved key's, ten more.
            keys = [*others[:10], moved, *others[10:]]
            assert await asyncio.gather(*(client.get(key) for key in keys)) == [key.encode() for key in keys]
            assert (client.stats.moved, client.stats.errors, client.stats.commands) == (1, 0, 21)
            assert client.address_of((await client.router()).node(moved)) == target.address
            # The resend went to the new owner's queue; the table follows for the next one.
            assert await client.get(moved) == moved.encode()
            assert client.stats.moved == 1

    asyncio.run(main())


def test_an_ask_inside_an_auto_pipeline_is_that_commands_alone(cluster: Cluster) -> None:
    async def main() -> None:
        async with AsyncClusterClient([cluster.seed().address], config=PATIENT) as client:
            router = await client.router()
            asked = "{ap-asked}:1"
            others = same_node_keys(client, router, asked, 10)
            await asyncio.gather(*(client.set(key, key) for key in [asked, *others]))
            slot = router.route(asked)
            source = owner_of(cluster, slot)
            target = next(node for node in cluster.primaries() if node is not source)
            target.cli("CLUSTER", "SETSLOT", str(slot), "IMPORTING", source.id)
            source.cli("CLUSTER", "SETSLOT", str(slot), "MIGRATING", target.id)
            source.cli("MIGRATE", "127.0.0.1", str(target.port), "", "0", "5000", "KEYS", asked)
            client.stats.reset()
            # One write to the source: the key that moved answers ASK, and is asked of the
            # target (ASKING and the GET written together); the others are answered here.
            keys = [*others[:5], asked, *others[5:]]
            assert await asyncio.gather(*(client.get(key) for key in keys)) == [key.encode() for key in keys]
            assert (client.stats.ask, client.stats.moved, client.stats.errors) == (1, 0, 0)
            for node in cluster.primaries():
                node.cli("CLUSTER", "SETSLOT", str(slot), "NODE", target.id)
            cluster.wait_until("the move is known everywhere", cluster.healthy)

    asyncio.run(main())


def test_a_connection_killed_with_replies_outstanding_fails_each_into_the_session(cluster: Cluster) -> None:
    async def main() -> None:
        # Two writes in flight: the BLPOP (written alone, its connection idle) and the GETs.
        async with AsyncClusterClient([cluster.seed().address], config={**PATIENT, "pipeline_max_writes": 2}) as client:
            router = await client.router()
            queue = "{ap-killed}:list"
            owner = owner_of(cluster, router.route(queue))
            keys = same_node_keys(client, router, queue, 10)
            await asyncio.gather(*(client.set(key, key) for key in keys))
            client.stats.reset()
            # BLPOP holds the connection; the GETs written behind it wait for their replies.
            popped = asyncio.ensure_future(client.execute("BLPOP", queue, "0", key=queue))
            gets = asyncio.gather(*(client.get(key) for key in keys))
            killed = await blocked_client(owner, "blpop")
            assert await asyncio.to_thread(owner.cli, "CLIENT", "KILL", "ID", killed) == "1"
            # Something for the BLPOP's resend to pop (the GETs may be written behind it).
            await asyncio.to_thread(owner.cli, "LPUSH", queue, "pushed")
            # Each command failed into the session, which resent it on a new connection.
            assert await gets == [key.encode() for key in keys]
            assert [bytes(x) for x in await popped] == [queue.encode(), b"pushed"]
            assert client.stats.error_kinds.get("reset", 0) == 11, client.stats.error_kinds
            assert client.stats.commands == 11

    asyncio.run(main())


def test_a_command_given_up_keeps_its_place_while_others_wait_on_its_connection(cluster: Cluster) -> None:
    async def main() -> None:
        # Two writes in flight: the BLPOP (written alone, its connection idle) and the GET.
        async with AsyncClusterClient([cluster.seed().address], config={**PATIENT, "pipeline_max_writes": 2}) as client:
            router = await client.router()
            queue = "{ap-abandoned}:list"
            owner = owner_of(cluster, router.route(queue))
            (key,) = same_node_keys(client, router, queue, 1)
            await client.set(key, "mine")
            popped = asyncio.ensure_future(client.execute("BLPOP", queue, "0", key=queue))
            got = asyncio.ensure_future(client.get(key))
            blocked = await blocked_client(owner, "blpop")
            popped.cancel()  # given up, written: the GET behind it still waits on that connection
            with pytest.raises(asyncio.CancelledError):
                await popped
            await asyncio.to_thread(owner.cli, "LPUSH", queue, "late")
            # The BLPOP's late reply is read and dropped; the GET gets its own.
            assert await got == b"mine"
            assert await asyncio.to_thread(owner.cli, "LLEN", queue) == "0"
            # Given up alone on its connection: the connection is closed (the server sees it go).
            alone = asyncio.ensure_future(client.execute("BLPOP", queue, "0", key=queue))
            assert await blocked_client(owner, "blpop") == blocked, "the same connection"
            alone.cancel()
            with pytest.raises(asyncio.CancelledError):
                await alone
            while f"id={blocked} " in await asyncio.to_thread(owner.cli, "CLIENT", "LIST"):
                await asyncio.sleep(0.01)
            assert await client.get(key) == b"mine"  # on a new connection

    asyncio.run(main())


def test_auto_pipeline_off_keeps_a_connection_per_command_in_flight(cluster: Cluster) -> None:
    async def main() -> None:
        config: shardroute.SessionConfig = {**PATIENT, "auto_pipeline": False}
        async with AsyncClusterClient([cluster.seed().address], config=config, client_name="pooled") as client:
            await client.router()
            client.stats.reset()
            keys = [f"off:{i}" for i in range(100)]
            assert await asyncio.gather(*(client.set(key, key) for key in keys)) == [True] * 100
            assert await asyncio.gather(*(client.get(key) for key in keys)) == [key.encode() for key in keys]
            assert await client.mget(keys) == [key.encode() for key in keys]
            assert connections(cluster, "pooled") > len(cluster.primaries()) + 1
            assert (client.stats.errors, client.stats.commands) == (0, 200)

    asyncio.run(main())


def test_a_stall_of_a_whole_pipeline_resends_each_command_and_closes_the_connection() -> None:
    """The slot's owner answers the handshake, then nothing: every command of the write
    meets its stall deadline, the session sends each to the new owner the table names,
    and the silent connection is closed once the last of them is given up (fake nodes,
    test_hostile_redis.py's)."""
    from test_hostile_redis import FakeNode, node_entry

    written: set[int] = set()  # the connections that carried commands
    ended: set[int] = set()  # the connections its client closed

    class Mute(FakeNode):
        def _serve(self, connection: Any) -> None:
            super()._serve(connection)
            ended.add(id(connection))

    def never(node: FakeNode, connection: Any, args: list[bytes], resp3: bool) -> None:
        written.add(id(connection))

    silent = Mute(lambda port: [], never)
    asked: list[int] = []

    def shards(port: int) -> Any:
        asked.append(port)  # the first table names the silent node; every later one the healthy one
        owner = silent.port if len(asked) == 1 else port
        return [{"slots": [0, 16383], "nodes": [node_entry("b" * 40 if owner == port else "a" * 40, owner)]}]

    healthy = FakeNode(shards)
    config: shardroute.SessionConfig = {"stall_ms": 200, "command_timeout_ms": 10_000, "refresh_interval_ms": 100}

    async def main() -> None:
        async with AsyncClusterClient([healthy.address], config=config) as client:
            await client.router()
            assert await asyncio.gather(*(client.set(f"k{i}", "v") for i in range(20))) == [True] * 20
            assert client.stats.stall_resends + client.stats.errors >= 20, client._session.stats
            assert len(written) == 1, "one connection for the 20 commands"
            while not written <= ended:  # then closed, the client still open
                await asyncio.sleep(0.01)

    try:
        asyncio.run(main())
    finally:
        silent.close()
        healthy.close()
