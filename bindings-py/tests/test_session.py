"""ClusterSession from Python: the arguments it refuses, the types it returns, and the
defaults it re-exports. Its behaviour is the conformance scenarios'
(conformance/vectors/session_redis.json, run by test_conformance.py)."""

from __future__ import annotations

from typing import Any, Callable

import pytest

import shardroute
from shardroute import Action, ClusterSession, Command, ShardrouteError

SHARDS = [{"slots": [0, 16383], "nodes": [{"id": "a" * 40, "ip": "127.0.0.1", "port": 7000, "endpoint": "127.0.0.1", "role": "master"}]}]


def session_with_table(**config: Any) -> ClusterSession:
    session = ClusterSession(["127.0.0.1:7000"], config or None)  # type: ignore[arg-type]
    session.refreshed(SHARDS, 0)
    return session


def test_defaults_are_the_cores_constants() -> None:
    defaults = shardroute.session_defaults()
    assert defaults == {
        "max_redirects": 5, "refresh_interval_ms": 200, "retry_budget_ms": 20000, "backoff_first_ms": 20,
        "backoff_max_ms": 500, "connect_timeout_ms": 1000, "command_timeout_ms": 5000, "stall_ms": 500, "wait_timeout_ms": 500, "read_from_replicas": False,
        "auto_pipeline": True, "pipeline_max_commands": 256, "pipeline_max_writes": 1,
    }
    assert ClusterSession(["h:1"]).config == defaults
    assert ClusterSession(["h:1"], {"max_redirects": 2}).config["max_redirects"] == 2


def test_auto_pipelining_counts_and_refuses_bad_arguments() -> None:
    session = ClusterSession(["h:1"], {"pipeline_max_commands": 2, "pipeline_max_writes": 2})
    # 2: the idle connection's first command, written at once; 1: a flush; 0: it waits.
    assert [session.pipeline_queued("h:1", False) for _ in range(4)] == [2, 1, 0, 0]
    assert session.pipeline_queued("h:1", True) == 2  # a READONLY connection is another queue
    assert (session.pipeline_take("h:1", False), session.pipeline_take("h:1", False)) == (2, 0)
    assert session.pipeline_pending("h:1", False) == (1, 2)
    session.pipeline_withdrawn("h:1", False, 1)
    assert session.pipeline_done("h:1", False) == 0
    assert session.pipeline_pending("h:1", False) == (0, 1)
    assert session.pipeline_done("h:1", False) == 0
    assert session.pipeline_pending("h:1", False) == (0, 0)
    assert session.pipeline_queued("h:1", False) == 2  # idle again
    off = ClusterSession(["h:1"], {"auto_pipeline": False})
    assert [off.pipeline_queued("h:1", False), off.pipeline_queued("h:1", False)] == [1, 1]
    bad: list[Callable[[], object]] = [
        lambda: session.pipeline_queued(b"h:1", False),  # type: ignore[arg-type]
        lambda: session.pipeline_take("h:1", 0),  # type: ignore[arg-type]
        lambda: session.pipeline_done("h:1", None),  # type: ignore[arg-type]
        lambda: session.pipeline_pending(1, False),  # type: ignore[arg-type]
        lambda: session.pipeline_withdrawn("h:1", False, -1),
        lambda: session.pipeline_withdrawn("h:1", False, True),
        lambda: ClusterSession(["h:1"], {"pipeline_max_commands": 0}),
        lambda: ClusterSession(["h:1"], {"pipeline_max_writes": 1025}),
        lambda: ClusterSession(["h:1"], {"auto_pipeline": 1}),  # type: ignore[arg-type]
    ]
    for call in bad:
        with pytest.raises(shardroute.InvalidArgumentError):
            call()


@pytest.mark.parametrize(
    ("seeds", "config"),
    [
        ([], None), ("h:1", None), (["h"], None), ([":1"], None), ([b"h:1"], None), ([1], None), (5, None),
        (["h:1"], {"max_redirects": -1}), (["h:1"], {"nope": 1}), (["h:1"], {"retry_budget_ms": float("nan")}),
        (["h:1"], {"backoff_first_ms": 0}), (["h:1"], [1]), (["h:1"], {"read_from_replicas": 1}),
        (["\ud800:1"], None),
    ],
)
def test_bad_seeds_and_config_are_invalid_argument(seeds: Any, config: Any) -> None:
    with pytest.raises(ShardrouteError) as raised:
        ClusterSession(seeds, config)
    assert raised.value.code == "invalid_argument"


def test_bad_call_arguments() -> None:
    session = session_with_table()
    command = session.command(["k"], "write", 0)
    bad_calls: list[Callable[[], object]] = [
        lambda: session.command("k", "write", 0),
        lambda: session.command([], "write", 0),
        lambda: session.command(["k"], "append", 0),  # type: ignore[arg-type]
        lambda: session.command(["k"], "write", -1),
        lambda: session.command(["k"], "write", 2**64),
        lambda: session.command(["k"], "write", 1.5),  # type: ignore[arg-type]
        lambda: session.unreachable(command, "gone", 0),  # type: ignore[arg-type]
        lambda: session.failed(command, b"MOVED 1 h:1", [], 0),  # type: ignore[arg-type]
        lambda: session.failed(command, "MOVED 1 h:1", "MovedError", 0),
        lambda: session.refreshed({1, 2}, 0),
        lambda: session.refreshed([], 0),
        lambda: session.plan("k", "read"),
    ]
    for call in bad_calls:
        with pytest.raises(ShardrouteError) as raised:
            call()
        assert raised.value.code == "invalid_argument", raised.value.message
    with pytest.raises(ShardrouteError) as raised:
        session.command(["\ud800"], "write", 0)
    assert raised.value.code == "invalid_key"
    with pytest.raises(ShardrouteError) as raised:
        session.command(["a", "b"], "write", 0)
    assert raised.value.code == "cross_slot"
    with pytest.raises(TypeError):
        session.poll("not a command", 0)  # type: ignore[arg-type]


def test_actions_carry_what_a_shell_needs() -> None:
    session = session_with_table(max_redirects=0)
    command = session.command(["user:1"], "write", 1)
    assert isinstance(command, Command) and command.slot == 10778
    send = session.poll(command, 1)
    assert isinstance(send, Action)
    assert (send.kind, send.address, send.host, send.port, send.asking, send.readonly) == ("send", "127.0.0.1:7000", "127.0.0.1", 7000, False, False)
    assert send.until_ms is None and send.code is None and send.error() is None
    wait = session.failed(command, "TRYAGAIN", ["ResponseError"], 2)
    assert (wait.kind, wait.until_ms, wait.delay_ms) == ("wait", 22, 20)
    assert repr(wait) == "Action(wait 20 ms)"
    assert session.poll(command, 22).kind == "send"
    fail = session.failed(command, "MOVED 10778 127.0.0.1:7001", [], 23)
    assert (fail.kind, fail.code) == ("fail", "too_many_redirects")
    error = fail.error()
    assert isinstance(error, shardroute.TooManyRedirectsError) and error.code == "too_many_redirects"
    assert session.stats["failed"] == 1 and session.stats["errors"] == {"try_again": 1}
    session.reset_stats()
    assert session.stats["failed"] == 0
    router = session.router
    assert router is not None and router.node("user:1") == "a" * 40


def test_the_replica_turn_wraps_in_core() -> None:
    replies = [{"slots": [0, 16383], "nodes": [
        {"id": "a" * 40, "ip": "h", "port": 1, "role": "master"},
        {"id": "b" * 40, "ip": "h", "port": 2, "role": "replica"},
        {"id": "c" * 40, "ip": "h", "port": 3, "role": "replica"}]}]
    session = ClusterSession(["h:1"], {"read_from_replicas": True})
    session.refreshed(replies, 0)
    seen = [session.poll(session.command(["k"], "read", 0), 0).address for _ in range(4)]
    assert seen == ["h:2", "h:3", "h:2", "h:3"]
