"""`shardroute.http` against a real HTTP server on 127.0.0.1 (examples/harness.py's
TopologyHttpServer: a body with a strong ETag, 304 on If-None-Match, and, when asked,
long polls with `Prefer: wait=N`): documents installed as the server changes them,
refusals counted with the router kept, binary dictionaries, a server that comes back.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Iterator

import pytest

import shardroute
from shardroute.http import AsyncHttpFollower, HttpError, HttpFollower

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from harness import TopologyHttpServer  # noqa: E402


def document(epoch: int, nodes: int = 3) -> str:
    return json.dumps({
        "format": "shardroute/1", "epoch": epoch,
        "nodes": [{"id": f"n{i}"} for i in range(nodes)], "strategy": {"type": "jump"},
    })


@pytest.fixture
def server() -> Iterator[TopologyHttpServer]:
    running = TopologyHttpServer()
    running.set(document(1))
    yield running
    running.stop()


def test_a_long_poll_brings_each_change_at_once(server: TopologyHttpServer) -> None:
    # interval 30 s: only the held requests can bring the changes this soon.
    with HttpFollower(server.url, interval=30, wait=10) as follower:
        assert follower.router is not None and follower.router.epoch == 1
        time.sleep(0.3)  # the first long poll is held by the server
        for epoch in (2, 3):
            server.set(document(epoch))
            started = time.monotonic()
            assert follower.wait_for_epoch(epoch, timeout=5), epoch
            assert time.monotonic() - started < 2
            time.sleep(0.2)
        assert follower.stats["installed"] == 3


def test_the_long_poll_loop_follows_without_help(server: TopologyHttpServer) -> None:
    with HttpFollower(server.url, interval=0.05, wait=10) as follower:
        time.sleep(0.3)  # a long poll is held by the server now
        requests = server.requests
        for epoch in (2, 3, 4):
            server.set(document(epoch))
            assert follower.wait_for_epoch(epoch, timeout=5), epoch
        # Held requests, not a busy loop: a few requests per change.
        assert server.requests - requests <= 3 * 3
        assert follower.stats["refused"] == {}


def test_a_server_without_long_polls_is_polled(server: TopologyHttpServer) -> None:
    server.long_poll = False
    with HttpFollower(server.url, interval=0.1, wait=10) as follower:
        server.set(document(2))
        assert follower.wait_for_epoch(2, timeout=5)
        time.sleep(0.5)
        stats = follower.stats
        assert stats["not_modified"] >= 2 and stats["installed"] == 2


def test_bad_bodies_are_refused_and_the_router_kept(server: TopologyHttpServer) -> None:
    refused: list[str] = []
    server.long_poll = False  # the loop's first request answered at once, the next in 30 s
    with HttpFollower(server.url, interval=30, on_refused=lambda _, offered: refused.append(offered.code or "")) as follower:
        time.sleep(0.3)
        for body, code in (("{not json", "invalid_topology"), (document(0), "stale_epoch")):
            server.set(body)
            offered = follower.refresh()
            assert offered is not None and (offered.kind, offered.code) == ("refused", code)
            router = follower.router
            assert router is not None and router.epoch == 1
        assert refused == ["invalid_topology", "stale_epoch"]
        assert follower.stats["refused"] == {"invalid_topology": 1, "stale_epoch": 1}
        server.set(document(1))
        offered = follower.refresh()
        assert offered is not None and offered.kind == "unchanged"


def test_a_binary_dictionary_is_offered_as_one(server: TopologyHttpServer) -> None:
    dictionary: shardroute.Topology = {
        "format": "shardroute/1", "epoch": 2, "nodes": [{"id": "a"}, {"id": "b"}],
        "strategy": {"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["a"], ["b"]]},
    }
    with HttpFollower(server.url, interval=0.05, wait=10) as follower:
        server.set(shardroute.encode_dictionary(dictionary), "application/octet-stream")
        assert follower.wait_for_epoch(2, timeout=5)
        server.set(b"\x00garbage", "application/octet-stream")
        deadline = time.monotonic() + 5
        while follower.stats["refused"] != {"invalid_topology": 1} and time.monotonic() < deadline:
            time.sleep(0.02)
        assert follower.stats["refused"] == {"invalid_topology": 1}
        router = follower.router
        assert router is not None and router.epoch == 2


def test_a_body_that_is_not_utf8_is_refused_and_counted(server: TopologyHttpServer) -> None:
    refused: list[str | None] = []
    errors: list[Exception] = []
    with HttpFollower(server.url, interval=0.05, wait=10, on_error=errors.append,
                      on_refused=lambda _, offered: refused.append(offered.code)) as follower:
        assert follower.wait_for_epoch(1, timeout=5)
        server.set(document(2).encode().replace(b'"n0"', b'"n0\xff"'))
        deadline = time.monotonic() + 5
        while not refused and time.monotonic() < deadline:
            time.sleep(0.02)
        assert refused == ["invalid_topology"] and follower.stats["refused"] == {"invalid_topology": 1}
        assert errors == []
        router = follower.router
        assert router is not None and router.epoch == 1
        server.set(document(3))
        assert follower.wait_for_epoch(3, timeout=5)


def test_the_follower_comes_back_with_the_server(server: TopologyHttpServer) -> None:
    errors: list[Exception] = []
    config: shardroute.FollowerConfig = {"reconnect_first_ms": 50, "reconnect_max_ms": 200}
    with HttpFollower(server.url, interval=0.05, wait=1, config=config, on_error=errors.append) as follower:
        server.stop()
        with pytest.raises(HttpError) as raised:
            follower.refresh()
        assert raised.value.code == "unreachable"
        time.sleep(0.5)
        server.set(document(5))
        server.start()
        assert follower.wait_for_epoch(5, timeout=10)
        assert follower.stats["disconnects"] >= 1 and errors


def test_a_server_that_is_not_there_is_an_http_error(server: TopologyHttpServer) -> None:
    server.stop()
    with pytest.raises(HttpError) as raised:
        HttpFollower(server.url, interval=30)
    assert raised.value.code == "unreachable"


def test_a_refresh_after_close_is_closed_in_both_followers(server: TopologyHttpServer) -> None:
    follower = HttpFollower(server.url, interval=30)
    follower.close()
    with pytest.raises(HttpError) as raised:
        follower.refresh()
    assert raised.value.code == "closed"

    async def closed_async() -> str:
        follower = await AsyncHttpFollower.start(server.url, interval=30)
        await follower.close()
        with pytest.raises(HttpError) as raised:
            await follower.refresh()
        return raised.value.code

    assert asyncio.run(closed_async()) == "closed"


def test_the_asyncio_follower(server: TopologyHttpServer) -> None:
    async def main() -> None:
        seen: list[int] = []
        follower = await AsyncHttpFollower.start(
            server.url, interval=0.05, wait=10, on_change=lambda f: seen.append(f.router.epoch if f.router else 0),
        )
        async with follower:
            await asyncio.sleep(0.2)
            for epoch in (2, 3):
                server.set(document(epoch))
                assert await follower.wait_for_epoch(epoch, timeout=5)
            server.set("{not json")
            await asyncio.sleep(0.3)
            assert follower.stats["refused"] == {"invalid_topology": 1}
            assert seen == [1, 2, 3]

    asyncio.run(main())


def test_a_callback_that_raises_is_reported_and_the_follower_goes_on(server: TopologyHttpServer) -> None:
    # Issue 35: a throwing on_change ended the sync follower's thread (it is reported to
    # on_error and the follower goes on, as in JavaScript).
    errors: list[Exception] = []

    def on_change(follower: HttpFollower) -> None:
        router = follower.router
        if router is not None and router.epoch == 2:
            raise RuntimeError("on_change raised")

    with HttpFollower(server.url, interval=0.05, wait=10, on_change=on_change, on_error=errors.append) as follower:
        for epoch in (2, 3):
            server.set(document(epoch))
            assert follower.wait_for_epoch(epoch, timeout=5), epoch
        assert [str(error) for error in errors] == ["on_change raised"]


def test_the_defaults_are_the_cores(server: TopologyHttpServer) -> None:
    # Issue 35: the request timeout was 10 s here and in JavaScript, 2 s in the CLI.
    core = shardroute.SourceSession({"source": "http", "url": server.url}).config
    with HttpFollower(server.url) as follower:
        assert (follower.interval, follower.wait, follower.timeout) == (
            core["interval_ms"] / 1000, core["wait_s"], core["request_timeout_ms"] / 1000)
        assert follower.timeout == 5.0
