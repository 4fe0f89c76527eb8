"""`shardroute.etcd` against a real etcd (Debian's etcd-server, one member on 127.0.0.1,
started and stopped by PID by examples/harness.py): the client's reads and writes, a
follower installing what `publish` writes, refusing what it must not install while
keeping its router, and coming back after etcd is killed and restarted.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import shardroute
from shardroute._sources import SyncDriver
from shardroute.etcd import (
    AsyncEtcd, AsyncEtcdFollower, Etcd, EtcdError, EtcdFollower, prefix_end, publish, publish_async, same_value,
)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from harness import EtcdCluster, EtcdServer, reserve_ports  # noqa: E402

KEY = "/test/topology"


def document(epoch: int, nodes: int = 3) -> shardroute.Topology:
    return {
        "format": "shardroute/1", "epoch": epoch,
        "nodes": [{"id": f"n{i}"} for i in range(nodes)], "strategy": {"type": "jump"},
    }


@pytest.fixture(scope="module")
def server() -> Iterator[EtcdServer]:
    root = tempfile.mkdtemp(prefix="shardroute-etcd-test-")
    running = EtcdServer(root, name="test")
    try:
        yield running
    finally:
        running.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def etcd(server: EtcdServer) -> Iterator[Etcd]:
    client = Etcd(server.url)
    client.delete_prefix("/test/")
    yield client
    client.delete_prefix("/test/")


def test_reads_writes_and_compare_and_swap(etcd: Etcd) -> None:
    assert etcd.get("/test/a") == (None, 0)
    first = etcd.put("/test/a", "1")
    assert etcd.get("/test/a") == ("1", first)
    assert etcd.cas("/test/a", "2", first - 1) == 0  # a revision nobody holds: refused
    assert etcd.get("/test/a") == ("1", first)
    second = etcd.cas("/test/a", "2", first)
    assert second > first
    assert etcd.cas("/test/b", "created", 0) > second  # 0: the key must be absent
    assert etcd.cas("/test/b", "again", 0) == 0
    found, revision = etcd.get_many(["/test/a", "/test/b", "/test/none"])
    assert found == {"/test/a": ("2", second), "/test/b": ("created", revision), "/test/none": (None, 0)}
    assert etcd.txn([same_value("/test/a", "1")], {"/test/c": "x"}) == 0
    assert etcd.txn([same_value("/test/a", "2")], {"/test/c": "x"}, deletes=["/test/b"]) > revision
    assert etcd.get("/test/b") == (None, 0)
    assert etcd.get("/test/c")[0] == "x"
    assert etcd.delete_prefix("/test/") == 2


def test_an_unreachable_etcd_is_an_etcd_error() -> None:
    with pytest.raises(EtcdError) as raised:
        Etcd(f"http://127.0.0.1:{reserve_ports()[0]}", timeout=2).get("/x")
    assert raised.value.code == "unreachable"
    assert isinstance(raised.value, ConnectionError)


def test_the_follower_installs_what_publish_writes(etcd: Etcd) -> None:
    changes: list[int] = []
    with EtcdFollower(etcd, KEY, on_change=lambda f: changes.append(f.router.epoch if f.router else 0)) as follower:
        assert follower.router is None
        for epoch in (1, 2, 3):
            publish(etcd, KEY, document(epoch, nodes=2 + epoch))
            assert follower.wait_for_epoch(epoch, timeout=10), f"epoch {epoch} never arrived"
        router = follower.router
        assert router is not None and router.epoch == 3 and len(json.loads(router.to_json())["nodes"]) == 5
        assert changes == [1, 2, 3]
        assert follower.revision == etcd.get(KEY)[1]
        assert follower.stats["installed"] == 3 and follower.stats["refused"] == {}


def test_publish_refuses_what_a_follower_would_not_follow(etcd: Etcd) -> None:
    publish(etcd, KEY, document(7))
    for epoch in (7, 9, 6):
        with pytest.raises(shardroute.ShardrouteError) as raised:
            publish(etcd, KEY, document(epoch))
        assert raised.value.code == "stale_epoch", epoch
    with pytest.raises(shardroute.ShardrouteError) as invalid:
        publish(etcd, KEY, json.dumps({**document(8), "strategy": {"type": "no such strategy"}}))
    assert invalid.value.code == "invalid_topology"
    assert json.loads(etcd.get(KEY)[0] or "")["epoch"] == 7


def test_publish_loses_a_race_as_a_conflict(server: EtcdServer, etcd: Etcd, monkeypatch: pytest.MonkeyPatch) -> None:
    publish(etcd, KEY, document(1))
    other = Etcd(server.url)
    real_perform = SyncDriver._perform

    def someone_writes_first(self: SyncDriver, request: dict[str, Any], flight: Any) -> None:
        if request["url"].endswith("/v3/kv/txn") and '"compare":[{' in (request["body"] or ""):
            other.put(KEY, json.dumps(document(2)))  # another publisher, between our read and our write
        real_perform(self, request, flight)

    monkeypatch.setattr(SyncDriver, "_perform", someone_writes_first)
    with pytest.raises(EtcdError) as raised:
        publish(etcd, KEY, document(2, nodes=4))
    assert raised.value.code == "conflict"
    monkeypatch.undo()
    assert len(json.loads(etcd.get(KEY)[0] or "")["nodes"]) == 3  # the other publisher's


def test_refresh_is_the_sessions_own_read_and_tells_before_it_returns(etcd: Etcd) -> None:
    """``refresh`` is the core session's ``{"op": "refresh"}``: one read now, its document
    offered as a follow read's (a stored document the follower refuses is refused, and
    counted, once more per refresh; ``on_refused`` runs before ``refresh`` returns), not a
    get of its own that waits for the watch's read (which offered nothing new)."""
    publish(etcd, KEY, document(4))
    etcd.put(KEY, "{not json")
    told: list[str] = []
    with EtcdFollower(etcd, KEY, on_refused=lambda _, offered: told.append(offered.code or "")) as follower:
        assert told == ["invalid_topology"]  # the first read's, before the constructor returned
        for count in (2, 3):
            offered = follower.refresh()
            assert offered is not None and (offered.kind, offered.code) == ("refused", "invalid_topology")
            assert told == ["invalid_topology"] * count
            assert follower.stats["refused"] == {"invalid_topology": count}
        etcd.delete_prefix(KEY)
        assert follower.refresh() is None  # absent: nothing offered

    async def main() -> list[str | None]:
        etcd.put(KEY, json.dumps(document(4)))
        follower = await AsyncEtcdFollower.start(etcd.url, KEY)
        async with follower:
            offered = await follower.refresh()
            return [offered.kind if offered else None, str(follower.stats["reads"] >= 2)]

    assert asyncio.run(main()) == ["unchanged", "True"]


def test_refusals_keep_the_last_good_router(etcd: Etcd) -> None:
    publish(etcd, KEY, document(4))
    told: list[str] = []
    with EtcdFollower(etcd, KEY, on_refused=lambda _, offered: told.append(offered.code or "")) as follower:
        assert follower.router is not None and follower.router.epoch == 4
        etcd.put(KEY, "{not json")
        etcd.put(KEY, json.dumps(document(3)))  # an older epoch
        etcd.put(KEY, json.dumps(document(5)))
        assert follower.wait_for_epoch(5, timeout=10)
        # The two bad values were read and refused, unless the watch's reads came late
        # enough to see only the last write: a read of each is forced here too.
        stats = follower.stats
        assert stats["installed"] == 2
        for bad, code in (("{not json", "invalid_topology"), (json.dumps(document(3)), "stale_epoch")):
            etcd.put(KEY, bad)
            offered = follower.refresh()
            assert offered is not None and (offered.kind, offered.code) == ("refused", code)
            router = follower.router
            assert router is not None and router.epoch == 5
        refused = follower.stats["refused"]
        assert refused["invalid_topology"] >= 1 and refused["stale_epoch"] >= 1
        assert sorted(told) == sorted(code for code, count in refused.items() for _ in range(count))


def test_companions_come_from_the_same_read(etcd: Etcd) -> None:
    previous = "/test/previous"
    publish(etcd, KEY, document(1))
    seen: list[tuple[int, str | None]] = []
    lock = threading.Lock()

    def record(f: EtcdFollower) -> None:
        router = f.router
        with lock:
            seen.append((router.epoch if router else 0, f.companions[previous]))

    with EtcdFollower(etcd, KEY, also=[previous], on_change=record) as follower:
        assert follower.companions == {previous: None}
        # One transaction writes both: the follower never sees the new topology without it.
        etcd.txn([], {KEY: json.dumps(document(2, nodes=6)), previous: json.dumps(document(1))})
        assert follower.wait_for_epoch(2, timeout=10)
        assert follower.companions == {previous: json.dumps(document(1))}
        etcd.txn([], {KEY: json.dumps(document(3, nodes=6))}, deletes=[previous])
        assert follower.wait_for_epoch(3, timeout=10)
        assert follower.companions == {previous: None}
        with lock:
            assert seen == [(1, None), (2, json.dumps(document(1))), (3, None)]


def test_the_follower_comes_back_after_etcd_is_killed(server: EtcdServer, etcd: Etcd) -> None:
    publish(etcd, KEY, document(1))
    errors: list[Exception] = []
    with EtcdFollower(etcd, KEY, config={"reconnect_first_ms": 50, "reconnect_max_ms": 400}, on_error=errors.append) as follower:
        assert follower.wait_for_epoch(1, timeout=10)
        server.kill()
        try:
            with pytest.raises(EtcdError):
                follower.refresh()
            router = follower.router
            assert router is not None and router.epoch == 1  # kept while etcd is away
        finally:
            server.restart()
        publish(etcd, KEY, document(2))
        assert follower.wait_for_epoch(2, timeout=20), f"no epoch 2 after the restart; errors: {errors}"
        stats = follower.stats
        assert stats["disconnects"] >= 1 and stats["watch_restarts"] >= 1
        assert errors and all(isinstance(err, EtcdError) for err in errors)


def test_close_ends_the_watch_thread(etcd: Etcd) -> None:
    follower = EtcdFollower(etcd, KEY)
    follower.close()
    follower.close()
    thread = follower._thread  # noqa: SLF001
    assert thread is not None and not thread.is_alive()



def test_the_asyncio_client_and_follower(server: EtcdServer, etcd: Etcd) -> None:
    async def main() -> None:
        client = AsyncEtcd(server.url)
        assert await client.get("/test/x") == (None, 0)
        revision = await client.put("/test/x", "1")
        assert await client.get("/test/x") == ("1", revision)
        assert await client.cas("/test/x", "2", revision - 1) == 0
        assert await client.cas("/test/x", "2", revision) > revision
        found, _ = await client.get_many(["/test/x", "/test/y"])
        assert found == {"/test/x": ("2", revision + 1), "/test/y": (None, 0)}
        await publish_async(client, KEY, document(1))
        seen: list[int] = []
        follower = await AsyncEtcdFollower.start(
            client, KEY, also=["/test/previous"], on_change=lambda f: seen.append(f.router.epoch if f.router else 0),
            config={"reconnect_first_ms": 50, "reconnect_max_ms": 400},
        )
        async with follower:
            assert follower.router is not None and follower.router.epoch == 1
            await publish_async(client, KEY, document(2, nodes=4))
            assert await follower.wait_for_epoch(2, timeout=10)
            with pytest.raises(shardroute.ShardrouteError) as stale:
                await publish_async(client, KEY, document(2))
            assert stale.value.code == "stale_epoch"
            await client.put(KEY, "{garbage")
            await client.txn([], {KEY: json.dumps(document(3)), "/test/previous": "p"})
            assert await follower.wait_for_epoch(3, timeout=10)
            assert follower.companions == {"/test/previous": "p"}
            # etcd killed and started again: the follower reconnects and follows on.
            server.kill()
            try:
                with pytest.raises(EtcdError):
                    await follower.refresh()
            finally:
                server.restart()
            await publish_async(client, KEY, document(4))
            assert await follower.wait_for_epoch(4, timeout=20)
            stats = follower.stats
            assert stats["watch_restarts"] >= 1 and stats["disconnects"] >= 1
            assert seen == [1, 2, 3, 4]
        with pytest.raises(EtcdError) as closed:  # closed: its session asks nothing more
            await follower.etcd.get(KEY)
        assert closed.value.code == "closed"

    asyncio.run(main())


def test_a_callback_that_raises_is_reported_and_the_follower_goes_on(etcd: Etcd) -> None:
    """One policy for callbacks in every language: one that raises is reported to
    on_error and the follower goes on (the sync follower's thread used to end)."""
    publish(etcd, KEY, document(1))
    errors: list[Exception] = []

    def change(f: Any) -> None:
        raise RuntimeError(f"on_change at epoch {f.router.epoch}")

    def refused(f: Any, offered: Any) -> None:
        raise RuntimeError(f"on_refused: {offered.code}")

    with EtcdFollower(etcd, KEY, on_change=change, on_refused=refused, on_error=errors.append) as follower:
        etcd.put(KEY, "{not json")
        ends = time.monotonic() + 10
        while not follower.stats["refused"] and time.monotonic() < ends:
            time.sleep(0.01)
        publish(etcd, KEY, document(2), replace=True)
        assert follower.wait_for_epoch(2, timeout=10)
        publish(etcd, KEY, document(3))
        assert follower.wait_for_epoch(3, timeout=10)
    assert [str(error) for error in errors] == [
        "on_change at epoch 1", "on_refused: invalid_topology", "on_change at epoch 2", "on_change at epoch 3",
    ]

    async def main() -> list[str]:
        told: list[Exception] = []
        follower = await AsyncEtcdFollower.start(etcd.url, KEY, on_change=change, on_error=told.append)
        async with follower:
            await publish_async(follower.etcd, KEY, document(4))
            assert await follower.wait_for_epoch(4, timeout=10)
        return [str(error) for error in told]

    assert asyncio.run(main()) == ["on_change at epoch 3", "on_change at epoch 4"]


def test_a_prefix_whose_last_byte_is_past_ascii(etcd: Etcd) -> None:
    # "é" is 0xC3 0xA9 in UTF-8: the range end is 0xC3 0xAA, not UTF-8, and must stay bytes.
    assert prefix_end("/test/é") == "/test/é".encode()[:-1] + b"\xaa"
    etcd.put("/test/é1", "in")
    etcd.put("/test/ê", "out")  # 0xC3 0xAA: just past the prefix's range
    assert etcd.delete_prefix("/test/é") == 1
    assert etcd.get("/test/ê") == ("out", etcd.get("/test/ê")[1])


def test_a_follower_of_three_members_rides_out_a_killed_leader_and_a_paused_member() -> None:
    """A 3-member cluster: the follower reads from the leader, which is SIGKILLed; then the
    member it moved to is SIGSTOPped (it neither answers nor closes its connections, so
    only the watch's idle time tells). It follows on through both, to the last epoch,
    never going back."""
    root = tempfile.mkdtemp(prefix="shardroute-etcd-cluster-")
    cluster = EtcdCluster(root, 3)
    try:
        publisher = Etcd(cluster.urls, timeout=1)
        publish(publisher, KEY, document(1))
        leader = cluster.leader()
        # The leader first: the follower reads from it until it is killed.
        client = Etcd([leader.url, *(url for url in cluster.urls if url != leader.url)], timeout=1)
        epochs: list[int] = []
        follower = EtcdFollower(
            client, KEY, idle=1.0, config={"reconnect_first_ms": 50, "reconnect_max_ms": 400},
            on_change=lambda f: epochs.append(f.router.epoch if f.router else 0),
        )
        with follower:
            epoch = 1

            def publish_next() -> None:
                nonlocal epoch
                deadline = time.monotonic() + 30
                while True:
                    try:
                        publish(publisher, KEY, document(epoch + 1, nodes=2 + (epoch % 5)))
                        epoch += 1
                        return
                    except EtcdError:
                        assert time.monotonic() < deadline, "no member took the write for 30 s"
                        time.sleep(0.1)

            for _ in range(5):
                publish_next()
            assert follower.wait_for_epoch(epoch, timeout=10)

            leader.kill()
            for _ in range(5):
                publish_next()
            assert follower.wait_for_epoch(epoch, timeout=15), f"stuck at {epochs[-1]} after the leader was killed"
            leader.restart()  # back to three: a second loss must leave a quorum

            in_use = next(m for m in cluster.members if m.url == follower.etcd.url)
            os.kill(in_use.pid, signal.SIGSTOP)
            try:
                for _ in range(5):
                    publish_next()
                assert follower.wait_for_epoch(epoch, timeout=15), f"stuck at {epochs[-1]} with its member paused"
            finally:
                os.kill(in_use.pid, signal.SIGCONT)
            assert epochs == sorted(set(epochs)) and epochs[-1] == epoch == 16, epochs
            assert follower.stats["refused"] == {}
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_routing_goes_on_while_the_router_is_swapped(etcd: Etcd) -> None:
    # `router` takes no lock: a thread routing all the time sees each router whole, and
    # only newer ones, while the watch thread installs 20 epochs.
    publish(etcd, KEY, document(1))
    with EtcdFollower(etcd, KEY) as follower:
        stop = threading.Event()
        seen: list[int] = []
        failures: list[BaseException] = []
        routed = [0]

        def route() -> None:
            try:
                while not stop.is_set():
                    router = follower.router
                    assert router is not None
                    router.node("user:42")
                    routed[0] += 1
                    if not seen or seen[-1] != router.epoch:
                        seen.append(router.epoch)
            except BaseException as err:  # noqa: BLE001 - reported below
                failures.append(err)

        thread = threading.Thread(target=route)
        thread.start()
        for epoch in range(2, 22):
            publish(etcd, KEY, document(epoch, nodes=2 + epoch % 7))
        assert follower.wait_for_epoch(21, timeout=10)
        time.sleep(0.05)
        stop.set()
        thread.join()
        assert failures == [] and routed[0] > 1000
        assert seen == sorted(seen) and seen[-1] == 21


def test_an_answer_that_is_not_etcds_is_an_etcd_error() -> None:
    # A URL that answers, but not as etcd: each call is refused as malformed, never a
    # KeyError out of a follower's thread.
    from harness import TopologyHttpServer

    server = TopologyHttpServer()
    try:
        for body in ('{"format": "shardroute/1"}', "not json", "[1, 2]", '{"header": {}, "responses": [{}]}'):
            server.set(body)
            with pytest.raises(EtcdError) as raised:
                Etcd(server.url.rsplit("/", 1)[0], timeout=2).get_many(["/x"])
            assert raised.value.code == "malformed", (body, raised.value)
    finally:
        server.stop()
