"""`shardroute.zookeeper` against a real ZooKeeper (Debian's zookeeper 3.8, started and
stopped by PID by examples/harness.py) through the real kazoo: a follower installing what
`publish` writes, refusing what it must not install while keeping its router, a binary
dictionary and invalid UTF-8 told apart by the core, and a 3-member ensemble that loses
its leader and has a member paused.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient  # type: ignore[import-untyped]

import shardroute
from shardroute.zookeeper import AsyncZooKeeperFollower, ZooKeeperError, ZooKeeperFollower, publish

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from harness import ZooKeeperEnsemble, ZooKeeperServer, reserve_ports  # noqa: E402

PATH = "/test/topology"


def document(epoch: int, nodes: int = 3) -> shardroute.Topology:
    return {
        "format": "shardroute/1", "epoch": epoch,
        "nodes": [{"id": f"n{i}"} for i in range(nodes)], "strategy": {"type": "jump"},
    }


@pytest.fixture(scope="module")
def server() -> Iterator[ZooKeeperServer]:
    root = tempfile.mkdtemp(prefix="shardroute-zk-test-")
    running = ZooKeeperServer(root, name="test")
    try:
        yield running
    finally:
        running.stop()
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def plain_client(server: ZooKeeperServer, clean_after: bool = True) -> Iterator[KazooClient]:
    """A kazoo client of the test's own, on a clean /test (clean after too, unless told
    not to). The deletes go through kazoo's
    retry, which also retries on an expired session: the server's ticks are short (sessions
    of at most 4 s), and a test that restarts it can outlast a session on a busy machine."""
    kazoo = KazooClient(hosts=server.hosts, timeout=5)
    kazoo.start(timeout=20)
    try:
        kazoo.retry(kazoo.delete, "/test", recursive=True)
        yield kazoo
        if clean_after:
            kazoo.retry(kazoo.delete, "/test", recursive=True)
    finally:
        kazoo.stop()
        kazoo.close()


@pytest.fixture
def client(server: ZooKeeperServer) -> Iterator[KazooClient]:
    with plain_client(server) as kazoo:
        yield kazoo


def stored_epoch(client: KazooClient) -> int:
    data, _ = client.get(PATH)
    epoch: int = json.loads(data)["epoch"]
    return epoch


def test_the_follower_installs_what_publish_writes(client: KazooClient, server: ZooKeeperServer) -> None:
    changes: list[int] = []
    with ZooKeeperFollower(server.hosts, PATH, on_change=lambda f: changes.append(f.router.epoch if f.router else 0)) as follower:
        assert follower.router is None  # no node yet: the follower waits for its creation
        for epoch in (1, 2, 3):
            revision = publish(client, PATH, document(epoch, nodes=2 + epoch))
            assert follower.wait_for_epoch(epoch, timeout=10), f"epoch {epoch} never arrived"
            assert follower.revision == revision == client.get(PATH)[1].mzxid
        router = follower.router
        assert router is not None and router.epoch == 3 and len(json.loads(router.to_json())["nodes"]) == 5
        assert changes == [1, 2, 3]
        stats = follower.stats
        assert stats["installed"] == 3 and stats["refused"] == {} and stats["events"] >= 3


def test_publish_refuses_what_a_follower_would_not_follow(client: KazooClient, server: ZooKeeperServer) -> None:
    publish(server.hosts, PATH, document(7))  # a connection string: publish's own client
    for epoch in (7, 9, 6):
        with pytest.raises(shardroute.ShardrouteError) as raised:
            publish(client, PATH, document(epoch))
        assert raised.value.code == "stale_epoch", epoch
    with pytest.raises(shardroute.ShardrouteError) as invalid:
        publish(client, PATH, json.dumps({**document(8), "strategy": {"type": "no such strategy"}}))
    assert invalid.value.code == "invalid_topology"
    assert stored_epoch(client) == 7
    client.set(PATH, b"{not json")
    with pytest.raises(shardroute.ShardrouteError) as unreadable:
        publish(client, PATH, document(8))  # the epoch to follow an unreadable one is unknown
    assert unreadable.value.code == "invalid_topology"


def test_publish_loses_a_race_as_a_conflict(client: KazooClient, monkeypatch: pytest.MonkeyPatch) -> None:
    publish(client, PATH, document(1))
    real_get = KazooClient.get_async

    def get_then_someone_writes(self: KazooClient, path: str, watch: object = None) -> object:
        read = real_get(self, path, watch)
        read.get(timeout=5)
        self.set(path, json.dumps(document(2)).encode())  # another publisher, between our read and our write
        return read

    monkeypatch.setattr(KazooClient, "get_async", get_then_someone_writes)
    with pytest.raises(ZooKeeperError) as raised:
        publish(client, PATH, document(2, nodes=4))
    assert raised.value.code == "conflict"
    monkeypatch.undo()
    assert len(json.loads(client.get(PATH)[0])["nodes"]) == 3  # the other publisher's


def test_refusals_keep_the_last_good_router(client: KazooClient) -> None:
    publish(client, PATH, document(4))
    told: list[str] = []
    with ZooKeeperFollower(client, PATH, on_refused=lambda _, offered: told.append(offered.code or "")) as follower:
        router = follower.router
        assert router is not None and router.epoch == 4
        for bad, code in (
            (b"{not json", "invalid_topology"),
            (json.dumps(document(3)).encode(), "stale_epoch"),
            (json.dumps(document(5)).encode().replace(b'"n0"', b'"n0\xff"'), "invalid_topology"),
            (b"SRVB\x00garbage", "invalid_topology"),
        ):
            client.set(PATH, bad)
            offered = follower.refresh()
            assert offered is not None and (offered.kind, offered.code) == ("refused", code), bad
            router = follower.router
            assert router is not None and router.epoch == 4
        client.set(PATH, json.dumps(document(5)).encode())
        assert follower.wait_for_epoch(5, timeout=10)
        refused = follower.stats["refused"]
        assert refused["invalid_topology"] >= 3 and refused["stale_epoch"] >= 1
        assert sorted(told) == sorted(code for code, count in refused.items() for _ in range(count))
    assert client.connected  # a follower given a client leaves it open


def test_a_binary_dictionary_is_told_by_its_magic(client: KazooClient) -> None:
    dictionary: shardroute.Topology = {
        "format": "shardroute/1", "epoch": 2, "nodes": [{"id": "a"}, {"id": "b"}],
        "strategy": {"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["a"], ["b"]]},
    }
    client.create(PATH, json.dumps(document(1)).encode(), makepath=True)
    with ZooKeeperFollower(client, PATH) as follower:
        client.set(PATH, shardroute.encode_dictionary(dictionary))
        assert follower.wait_for_epoch(2, timeout=10)
        router = follower.router
        assert router is not None and router.node("user:42") in ("a", "b")


def test_an_empty_node_holds_no_document_as_in_the_cli(client: KazooClient) -> None:
    client.create(PATH, b"", makepath=True)
    with ZooKeeperFollower(client, PATH) as follower:
        assert follower.refresh() is None and follower.router is None
        assert follower.stats["offered"] == 0
        publish(client, PATH, document(5))  # over the empty node, at its version
        assert follower.wait_for_epoch(5, timeout=10)
        assert stored_epoch(client) == 5


def test_a_deleted_node_keeps_the_router_and_its_recreation_is_followed(client: KazooClient) -> None:
    publish(client, PATH, document(1))
    with ZooKeeperFollower(client, PATH) as follower:
        client.delete(PATH)
        time.sleep(0.2)
        router = follower.router
        assert router is not None and router.epoch == 1
        client.create(PATH, json.dumps(document(2)).encode())
        assert follower.wait_for_epoch(2, timeout=10)


def test_the_asyncio_follower_calls_back_on_the_loop(client: KazooClient, server: ZooKeeperServer) -> None:
    publish(client, PATH, document(1))

    async def main() -> None:
        loop_thread = threading.get_ident()
        seen: list[tuple[int, bool]] = []
        refused: list[str | None] = []
        follower = await AsyncZooKeeperFollower.start(
            server.hosts, PATH,
            on_change=lambda f: seen.append((f.router.epoch if f.router else 0, threading.get_ident() == loop_thread)),
            on_refused=lambda _, offered: refused.append(offered.code),
        )
        try:
            router = follower.router
            assert router is not None and router.epoch == 1
            for epoch in (2, 3):
                await asyncio.get_running_loop().run_in_executor(None, publish, client, PATH, document(epoch))
                assert await follower.wait_for_epoch(epoch, timeout=10)
            client.set(PATH, b"{not json")
            offered = await follower.refresh()
            assert offered is not None and offered.code == "invalid_topology"
            await asyncio.sleep(0.1)  # the refusal's callback, handed to the loop
            assert refused and set(refused) == {"invalid_topology"}
            # Each installed epoch (the first read's too), called back on the loop's thread.
            assert seen == [(1, True), (2, True), (3, True)], seen
            assert follower.stats["installed"] == 3
        finally:
            await follower.close()
            await follower.close()

    asyncio.run(main())


def test_an_unreachable_zookeeper_is_a_zookeeper_error() -> None:
    with pytest.raises(ZooKeeperError) as raised:
        ZooKeeperFollower(f"127.0.0.1:{reserve_ports()[0]}", PATH, timeout=1)
    assert raised.value.code == "unreachable"


def test_the_follower_comes_back_after_zookeeper_is_killed(server: ZooKeeperServer) -> None:
    # No client of the test's holds a session across the kill (as in the Node test): one
    # that outlasted its session there failed the teardown with SessionExpiredError.
    with plain_client(server, clean_after=False) as client:
        publish(client, PATH, document(1))
    killed_with_the_server(server)
    with plain_client(server):
        pass  # /test cleaned up for the next test, by a session opened after the restart


def killed_with_the_server(server: ZooKeeperServer) -> None:
    errors: list[Exception] = []
    config: shardroute.FollowerConfig = {"reconnect_first_ms": 50, "reconnect_max_ms": 400}
    with ZooKeeperFollower(server.hosts, PATH, config=config, timeout=4, on_error=errors.append) as follower:
        server.kill()
        try:
            with pytest.raises(ZooKeeperError) as raised:
                follower.refresh()
            assert raised.value.code == "unreachable"
            router = follower.router
            assert router is not None and router.epoch == 1  # kept while ZooKeeper is away
        finally:
            server.restart()
        publisher = KazooClient(hosts=server.hosts, timeout=5)
        publisher.start(timeout=20)
        try:
            publish(publisher, PATH, document(2))
        finally:
            publisher.stop()
            publisher.close()
        assert follower.wait_for_epoch(2, timeout=20), f"no epoch 2 after the restart; errors: {errors}"
        assert follower.stats["disconnects"] >= 1
        assert errors and all(isinstance(err, ZooKeeperError) and err.code == "unreachable" for err in errors)


def test_an_ensemble_that_loses_its_leader_and_has_a_member_paused() -> None:
    """Three members: the follower's member is the leader, SIGKILLed; then the member it
    moved to is SIGSTOPped (it answers nothing and closes nothing: only kazoo's ping
    timeout tells). It follows on through both, to the last epoch, never going back."""
    root = tempfile.mkdtemp(prefix="shardroute-zk-ensemble-")
    ensemble = ZooKeeperEnsemble(root, 3)
    try:
        publisher = KazooClient(hosts=ensemble.hosts, timeout=4)
        publisher.start(timeout=20)
        publish(publisher, PATH, document(1))
        leader = ensemble.leader()
        others = [member.hosts for member in ensemble.members if member is not leader]
        # The leader first in the list, and kazoo told not to shuffle it.
        follower_client = KazooClient(hosts=",".join([leader.hosts, *others]), timeout=3, randomize_hosts=False)
        follower_client.start(timeout=20)
        epochs: list[int] = []
        follower = ZooKeeperFollower(
            follower_client, PATH, on_change=lambda f: epochs.append(f.router.epoch if f.router else 0),
        )
        epoch = 1

        def publish_next() -> None:
            nonlocal epoch
            deadline = time.monotonic() + 30
            while True:
                try:
                    publish(publisher, PATH, document(epoch + 1, nodes=2 + (epoch % 5)))
                    epoch += 1
                    return
                except ZooKeeperError:
                    assert time.monotonic() < deadline, "no member took the write for 30 s"
                    time.sleep(0.1)

        with follower:
            for _ in range(5):
                publish_next()
            assert follower.wait_for_epoch(epoch, timeout=10)
            leader.kill()
            for _ in range(5):
                publish_next()
            assert follower.wait_for_epoch(epoch, timeout=20), f"stuck at {epochs[-1]} after the leader was killed"
            leader.restart()  # back to three: a second loss must leave a quorum
            in_use = next(m for m in ensemble.members if m.port == follower_client._connection._socket.getpeername()[1])  # noqa: SLF001
            os.kill(in_use.pid, signal.SIGSTOP)
            try:
                for _ in range(5):
                    publish_next()
                assert follower.wait_for_epoch(epoch, timeout=20), f"stuck at {epochs[-1]} with its member paused"
            finally:
                os.kill(in_use.pid, signal.SIGCONT)
            assert epochs == sorted(set(epochs)) and epochs[-1] == epoch == 16, epochs
            assert follower.stats["refused"] == {} and follower.stats["disconnects"] >= 2
        follower_client.stop()
        follower_client.close()
        publisher.stop()
        publisher.close()
    finally:
        ensemble.stop()
        shutil.rmtree(root, ignore_errors=True)
