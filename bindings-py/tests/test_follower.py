"""TopologyFollower from Python: the arguments it refuses and the types it returns. Its
behaviour is the conformance scenarios' (conformance/vectors/session_follower.json)."""

from __future__ import annotations

import json
from typing import Callable

import pytest

import shardroute
from shardroute import Offered, ShardrouteError, TopologyFollower


def doc(epoch: int) -> shardroute.Topology:
    return {"format": "shardroute/1", "epoch": epoch, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}}


def test_defaults_and_results() -> None:
    assert shardroute.follower_defaults() == {"reconnect_first_ms": 100, "reconnect_max_ms": 5000}
    follower = TopologyFollower()
    assert follower.router is None and follower.revision is None
    installed = follower.offer(json.dumps(doc(3)), 7, 0)
    assert isinstance(installed, Offered)
    assert (installed.kind, installed.epoch, installed.code) == ("installed", 3, None)
    assert repr(installed) == "Offered(installed epoch 3)"
    refused = follower.offer(doc(2), 8, 1)  # a mapping is a document too
    assert (refused.kind, refused.code) == ("refused", "stale_epoch") and refused.message
    assert follower.router is not None and follower.router.epoch == 3 and follower.revision == 7
    write = follower.publish(doc(4))
    assert (write["expected_revision"], write["epoch"]) == (7, 4)
    assert json.loads(write["document"])["epoch"] == 4
    assert follower.stats == {"offered": 2, "installed": 1, "unchanged": 0, "disconnects": 0, "refused": {"stale_epoch": 1}}
    assert follower.disconnected(1000) == 1100
    follower.connected()


def test_bad_arguments() -> None:
    follower = TopologyFollower({"reconnect_first_ms": 5})
    assert follower.config == {"reconnect_first_ms": 5, "reconnect_max_ms": 5000}
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: TopologyFollower({"nope": 1}), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: TopologyFollower({"reconnect_first_ms": -1}), "invalid_argument"),
        (lambda: TopologyFollower([1]), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: follower.offer(doc(1), -1, 0), "invalid_argument"),
        (lambda: follower.offer(doc(1), 1, "now"), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: follower.offer(5, 1, 0), "invalid_topology"),  # type: ignore[arg-type]
        (lambda: follower.offer_dictionary("not bytes", 1, 0), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: follower.disconnected(-5), "invalid_argument"),
        (lambda: follower.publish("{"), "invalid_topology"),
    ]
    for call, code in cases:
        with pytest.raises(ShardrouteError) as raised:
            call()
        assert raised.value.code == code, raised.value.message
