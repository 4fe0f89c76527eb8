"""`shardroute.zookeeper` (the core's ZooKeeper session, over the TCP connections of
`shardroute._sources`' drivers) against a real ZooKeeper (Debian's zookeeper 3.8, started
and stopped by PID by examples/harness.py), with kazoo as an independent peer that writes
what a test needs and reads back what was written: a follower installing what `publish`
writes (sync and asyncio), an absent node followed until it is created, refusals that keep
the router, publish's create / setData / conflict / replace, digest authentication, a
member killed and a member paused in a 3-member ensemble, and fake members that never
answer or announce a frame past the core's limit.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient  # type: ignore[import-untyped]

import shardroute
from shardroute import _sources
from shardroute.zookeeper import AsyncZooKeeperFollower, ZooKeeperError, ZooKeeperFollower, publish, publish_async

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from harness import ZooKeeperEnsemble, ZooKeeperServer  # noqa: E402

PATH = "/test/topology"
SET_DATA = (5).to_bytes(4, "big")  # ZooKeeper's setData op code, after a request's length and xid


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
def peer(hosts: str, auth: tuple[str, str] | None = None) -> Iterator[KazooClient]:
    """kazoo, the test's own client (not shardroute's), on a clean /test (before and after;
    through kazoo's retry: the server's sessions are short, and may expire on a busy machine)."""
    kazoo = KazooClient(hosts=hosts, timeout=5, auth_data=[("digest", f"{auth[0]}:{auth[1]}")] if auth else None)
    kazoo.start(timeout=20)
    try:
        kazoo.retry(kazoo.delete, "/test", recursive=True)
        yield kazoo
        kazoo.retry(kazoo.delete, "/test", recursive=True)
    finally:
        kazoo.stop()
        kazoo.close()


@pytest.fixture
def client(server: ZooKeeperServer) -> Iterator[KazooClient]:
    with peer(server.hosts) as kazoo:
        yield kazoo


def stored(client: KazooClient) -> tuple[Any, int]:
    data, stat = client.get(PATH)
    return json.loads(data), int(stat.mzxid)


def epoch_of(client: KazooClient) -> tuple[int, int]:
    """The stored document's epoch and node count (publish writes it normalized)."""
    value, _ = stored(client)
    return value["epoch"], len(value["nodes"])


def test_an_absent_node_is_followed_until_created_then_every_change(client: KazooClient, server: ZooKeeperServer) -> None:
    changes: list[int] = []
    with ZooKeeperFollower(server.hosts, PATH, on_change=lambda f: changes.append(f.router.epoch if f.router else 0)) as follower:
        assert follower.router is None and follower.refresh() is None  # no node yet: a watch for its creation
        for epoch in (1, 2, 3):
            revision = publish(server.hosts, PATH, document(epoch, nodes=2 + epoch))
            assert follower.wait_for_epoch(epoch, timeout=10), f"epoch {epoch} never arrived"
            value, mzxid = stored(client)
            assert value["epoch"] == epoch and follower.revision == revision == mzxid
        router = follower.router
        assert router is not None and router.epoch == 3 and len(json.loads(router.to_json())["nodes"]) == 5
        assert changes == [1, 2, 3]
        stats = follower.stats
        assert stats["installed"] == 3 and stats["refused"] == {} and stats["events"] >= 3
        assert follower.member == server.hosts and follower.members == [server.hosts]


def test_the_asyncio_follower_and_publish_async(client: KazooClient, server: ZooKeeperServer) -> None:
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
            assert follower.router is None  # absent: created below
            for epoch in (1, 2):
                assert await publish_async(server.hosts, PATH, document(epoch)) > 0
                assert await follower.wait_for_epoch(epoch, timeout=10)
            revision = await publish_async(follower, PATH, document(3))  # over the follower's own session
            assert await follower.wait_for_epoch(3, timeout=10) and follower.revision == revision == stored(client)[1]
            client.set(PATH, b"{not json")
            offered = await follower.refresh()
            assert offered is not None and offered.code == "invalid_topology" and refused == ["invalid_topology"]
            router = follower.router
            assert router is not None and router.epoch == 3
            assert seen == [(1, True), (2, True), (3, True)], seen
        finally:
            await follower.close()
            await follower.close()

    asyncio.run(main())


def test_refusals_keep_the_last_good_router(client: KazooClient, server: ZooKeeperServer) -> None:
    publish(server.hosts, PATH, document(4))
    told: list[str] = []
    with ZooKeeperFollower(server.hosts, PATH, on_refused=lambda _, offered: told.append(offered.code or "")) as follower:
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


def test_a_binary_dictionary_is_told_by_its_magic(client: KazooClient, server: ZooKeeperServer) -> None:
    dictionary: shardroute.Topology = {
        "format": "shardroute/1", "epoch": 2, "nodes": [{"id": "a"}, {"id": "b"}],
        "strategy": {"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["a"], ["b"]]},
    }
    client.create(PATH, json.dumps(document(1)).encode(), makepath=True)
    with ZooKeeperFollower(server.hosts, PATH) as follower:
        client.set(PATH, shardroute.encode_dictionary(dictionary))
        assert follower.wait_for_epoch(2, timeout=10)
        router = follower.router
        assert router is not None and router.node("user:42") in ("a", "b")


def test_an_empty_node_holds_no_document_and_a_deleted_one_keeps_the_router(client: KazooClient, server: ZooKeeperServer) -> None:
    client.create(PATH, b"", makepath=True)
    with ZooKeeperFollower(server.hosts, PATH) as follower:
        assert follower.refresh() is None and follower.router is None and follower.stats["offered"] == 0
        publish(server.hosts, PATH, document(5))  # over the empty node, at its version
        assert follower.wait_for_epoch(5, timeout=10) and stored(client)[0]["epoch"] == 5
        client.delete(PATH)
        assert follower.refresh() is None
        router = follower.router
        assert router is not None and router.epoch == 5  # kept
        client.create(PATH, json.dumps(document(6)).encode())  # the exists watch brings it
        assert follower.wait_for_epoch(6, timeout=10)


def test_publish_creates_sets_and_refuses(client: KazooClient, server: ZooKeeperServer) -> None:
    first = publish(server.hosts, PATH, document(7))  # create, with its parent /test
    assert stored(client)[1] == first and epoch_of(client) == (7, 3) and client.get("/test")[0] == b""
    second = publish(server.hosts, PATH, document(8))  # setData at the version read
    assert stored(client)[1] == second > first and epoch_of(client) == (8, 3)
    for epoch in (8, 10, 6):
        with pytest.raises(shardroute.StaleEpochError):
            publish(server.hosts, PATH, document(epoch))
    with pytest.raises(shardroute.InvalidTopologyError):
        publish(server.hosts, PATH, json.dumps({**document(9), "strategy": {"type": "no such strategy"}}))
    assert stored(client)[1] == second  # nothing written
    with ZooKeeperFollower(server.hosts, PATH) as follower:  # publish over a follower's session
        assert publish(follower, PATH, document(9)) == stored(client)[1]
        assert follower.wait_for_epoch(9, timeout=10)


def test_publish_loses_a_race_as_a_conflict(client: KazooClient, server: ZooKeeperServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    publish(server.hosts, PATH, document(1))
    order = _sources._Links.order

    def someone_writes_first(links: Any, name: str, value: dict[str, Any]) -> None:
        if name == "send" and base64.b64decode(value["data_b64"])[8:12] == SET_DATA:
            client.set(PATH, json.dumps(document(2)).encode())  # another publisher, between our read and our write
        order(links, name, value)

    monkeypatch.setattr(_sources._Links, "order", someone_writes_first)
    with pytest.raises(ZooKeeperError) as raised:
        publish(server.hosts, PATH, document(2, nodes=4))
    assert raised.value.code == "conflict"
    monkeypatch.undo()
    assert epoch_of(client) == (2, 3)  # the other publisher's, not overwritten


def test_replace_repairs_a_stored_document_followers_refuse(client: KazooClient, server: ZooKeeperServer) -> None:
    client.create(PATH, json.dumps({**document(7), "nodes": []}).encode(), makepath=True)  # refused: no nodes
    with pytest.raises(shardroute.ShardrouteError) as kept:
        publish(server.hosts, PATH, document(8))
    assert kept.value.code == "no_nodes" and "replace" in str(kept.value)
    with pytest.raises(shardroute.StaleEpochError):
        publish(server.hosts, PATH, document(7), replace=True)  # not above the stored epoch
    revision = publish(server.hosts, PATH, document(8), replace=True)
    assert stored(client)[1] == revision and epoch_of(client) == (8, 3)
    client.set(PATH, b"{not json")  # no epoch to tell: ZooKeeper keeps no history
    with pytest.raises(shardroute.InvalidArgumentError):
        publish(server.hosts, PATH, document(100), replace=True)
    assert client.get(PATH)[0] == b"{not json"


def test_digest_authentication(server: ZooKeeperServer) -> None:
    with peer(server.hosts, auth=("app", "secret")) as kazoo:
        revision = publish(server.hosts, PATH, document(1), user="app", password="secret")
        acl = kazoo.get_acls(PATH)[0]
        assert [(entry.id.scheme, entry.id.id.split(":")[0]) for entry in acl] == [("digest", "app")]
        with pytest.raises(ZooKeeperError) as anonymous:
            ZooKeeperFollower(server.hosts, PATH)
        assert anonymous.value.code == "unauthenticated"
        with pytest.raises(ZooKeeperError) as wrong:
            ZooKeeperFollower(server.hosts, PATH, user="app", password="not it")
        assert wrong.value.code == "unauthenticated"
        with ZooKeeperFollower(server.hosts, PATH, user="app", password="secret") as follower:
            assert follower.revision == revision
            assert follower._session.config["password"] == "***"  # never shown
            publish(follower, PATH, document(2))
            assert follower.wait_for_epoch(2, timeout=10)


def test_a_callback_that_raises_is_reported_and_the_follower_goes_on(client: KazooClient, server: ZooKeeperServer) -> None:
    errors: list[Exception] = []

    def change(follower: ZooKeeperFollower) -> None:
        raise RuntimeError("the application's bug")

    with ZooKeeperFollower(server.hosts, PATH, on_change=change, on_error=errors.append) as follower:
        for epoch in (1, 2):
            publish(server.hosts, PATH, document(epoch))
            assert follower.wait_for_epoch(epoch, timeout=10)
        assert [str(err) for err in errors] == ["the application's bug"] * 2
        thread = follower._thread
        links = follower._driver._links
        assert links is not None and any(t.name == "shardroute connections" for t in threading.enumerate())
        moving = [t for t in threading.enumerate() if t.name == "shardroute connections"]
    assert thread is not None and not thread.is_alive()  # close ended it
    assert links.stopping
    for each in moving:
        each.join(30)  # a guard against a hang, not a measure
    assert not any(t.is_alive() for t in moving)  # the connections' thread ends with the session


@contextlib.contextmanager
def fake_member(answer: bytes, held: list[socket.socket] | None = None) -> Iterator[str]:
    """A member that accepts connections (into `held`), sends `answer` and then nothing,
    never closing."""
    listener = socket.create_server(("127.0.0.1", 0))
    held = [] if held is None else held

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            conn.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        for conn in held:
            conn.close()


@pytest.mark.parametrize("flavour", ["sync", "asyncio"])
def test_hostile_members(flavour: str) -> None:
    """A member that never answers the handshake is left at the session's deadline; one that
    announces a frame past the core's limit (or of a negative length) is refused before the
    frame is read. Either way the connection is closed (the member reads its end)."""
    for answer, code, says in ((b"", "unreachable", "no session within"),
                               (b"\x7f\xff\xff\xff", "malformed", "a frame of 2147483647 bytes"),
                               (b"\xff\xff\xff\xff", "malformed", "a frame of -1 bytes")):
        held: list[socket.socket] = []
        with fake_member(answer, held) as member:
            with pytest.raises(ZooKeeperError) as raised:
                if flavour == "sync":
                    ZooKeeperFollower(member, PATH, timeout=1)
                else:
                    asyncio.run(AsyncZooKeeperFollower.start(member, PATH, timeout=1))
            assert raised.value.code == code and member in str(raised.value) and says in str(raised.value)
            assert held, "never connected"
            for conn in held:
                conn.settimeout(30)  # a guard against a hang, not a measure
                sent = b""
                while piece := conn.recv(4096):  # the session's ConnectRequest, then the end
                    sent += piece
                    assert len(sent) < 4096, "more than a handshake"


def test_an_unreachable_member_is_a_zookeeper_error() -> None:
    with socket.socket() as taken:  # bound (nobody else takes it), not listening: refused
        taken.bind(("127.0.0.1", 0))  # ports: ok (it stays bound while the follower is refused)
        with pytest.raises(ZooKeeperError) as raised:
            ZooKeeperFollower(f"127.0.0.1:{taken.getsockname()[1]}", PATH, timeout=1)
    assert raised.value.code == "unreachable"


def test_the_follower_comes_back_after_zookeeper_is_killed(server: ZooKeeperServer) -> None:
    with peer(server.hosts):
        publish(server.hosts, PATH, document(1))
        errors: list[Exception] = []
        config: shardroute.FollowerConfig = {"reconnect_first_ms": 50, "reconnect_max_ms": 400}
        with ZooKeeperFollower(server.hosts, PATH, config=config, timeout=2, on_error=errors.append) as follower:
            server.kill()
            try:
                with pytest.raises(ZooKeeperError) as raised:
                    follower.refresh()
                assert raised.value.code == "unreachable"
                router = follower.router
                assert router is not None and router.epoch == 1  # kept while ZooKeeper is away
            finally:
                server.restart()
            deadline = time.monotonic() + 30
            while True:
                try:
                    publish(server.hosts, PATH, document(2))
                    break
                except ZooKeeperError:
                    assert time.monotonic() < deadline, "no write for 30 s after the restart"
            assert follower.wait_for_epoch(2, timeout=20), f"no epoch 2 after the restart; errors: {errors}"
            assert follower.stats["disconnects"] >= 1 and follower.stats["sessions"] >= 2
            assert errors and all(isinstance(err, ZooKeeperError) and err.code == "unreachable" for err in errors)


def test_an_ensemble_member_killed_then_one_paused() -> None:
    """Three members: the follower's member is SIGKILLed (its connection reset: the next
    member), then the member it moved to is SIGSTOPped (it answers nothing and closes
    nothing: only the session's liveness rule tells). It follows on through both, to the
    last epoch, never going back, sync and asyncio alike."""
    root = tempfile.mkdtemp(prefix="shardroute-zk-ensemble-")
    ensemble = ZooKeeperEnsemble(root, 3)
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    twin: AsyncZooKeeperFollower | None = None
    try:
        publish(ensemble.hosts, PATH, document(1))
        epochs: list[int] = []
        follower = ZooKeeperFollower(ensemble.hosts, PATH, timeout=2,
                                     on_change=lambda f: epochs.append(f.router.epoch if f.router else 0))
        twin = asyncio.run_coroutine_threadsafe(AsyncZooKeeperFollower.start(ensemble.hosts, PATH, timeout=2), loop).result(30)
        epoch = 1

        def publish_next(count: int) -> None:
            nonlocal epoch
            for _ in range(count):
                deadline = time.monotonic() + 30
                while True:
                    try:
                        publish(ensemble.hosts, PATH, document(epoch + 1, nodes=2 + (epoch % 5)), timeout=2)
                        epoch += 1
                        break
                    except ZooKeeperError:
                        assert time.monotonic() < deadline, "no member took the write for 30 s"

        def followed(what: str) -> None:
            assert follower.wait_for_epoch(epoch, timeout=20), f"sync stuck at {epochs[-1:]} {what}"
            assert twin is not None
            reached = asyncio.run_coroutine_threadsafe(twin.wait_for_epoch(epoch, timeout=20), loop).result(30)
            assert reached, f"asyncio stuck {what}"

        def in_use(member: str | None) -> ZooKeeperServer:
            return next(m for m in ensemble.members if m.hosts == member)

        with follower:
            publish_next(3)
            followed("at the start")
            killed = in_use(follower.member)
            killed.kill()
            publish_next(3)
            followed("after its member was killed")
            assert follower.member != killed.hosts
            killed.restart()  # back to three: a second loss must leave a quorum
            paused = in_use(follower.member)
            os.kill(paused.pid, signal.SIGSTOP)
            try:
                publish_next(3)
                followed("with its member paused")
                assert follower.member != paused.hosts
            finally:
                os.kill(paused.pid, signal.SIGCONT)
            assert epochs == sorted(set(epochs)) and epochs[-1] == epoch == 10, epochs
            # A new ZooKeeper session on each member it moved to (disconnects are counted
            # only when a whole round of members failed, as during an election).
            stats = follower.stats
            assert stats["refused"] == {} and stats["sessions"] >= 3, stats
            assert twin.stats["refused"] == {}  # (its member is wherever its own sessions went)
    finally:
        if twin is not None:
            asyncio.run_coroutine_threadsafe(twin.close(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        runner.join()
        loop.close()
        ensemble.stop()
        shutil.rmtree(root, ignore_errors=True)
