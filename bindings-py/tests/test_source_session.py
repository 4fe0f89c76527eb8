"""shardroute.SourceSession at its boundary: what its calls return, and every call's bad
arguments with their codes. What the session decides is the conformance scenarios'
(conformance/vectors/session_source.json, run by test_conformance.py)."""

from __future__ import annotations

import base64
import json
from typing import Any, Callable

import pytest

import shardroute
from shardroute import InvalidArgumentError, Router, SourceSession

HTTP = {"source": "http", "url": "http://127.0.0.1:1/topology"}
ETCD = {"source": "etcd", "members": ["http://127.0.0.1:2379"]}
DOC = json.dumps({"format": "shardroute/1", "epoch": 3, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}})


def made() -> SourceSession:
    session = SourceSession(HTTP)
    assert session.start(0)[0]["request"]["id"] == 1
    return session


def test_actions_are_json_data_and_the_router_is_a_router() -> None:
    session = made()
    assert session.deadline == 5000
    assert session.router is None
    actions = session.response(1, 5, 200, {"Content-Type": "application/json", "ETag": '"v1"'}, memoryview(DOC.encode()))
    assert actions[0] == {"offered": {"result": {"installed": {"epoch": "3"}}, "changed": True, "revision": "1"}}
    router = session.router
    assert isinstance(router, Router) and router.epoch == 3
    assert session.router is router, "one Router per epoch"
    assert session.state["etag"] == '"v1"' and session.stats == session.state["stats"]
    assert session.config["url"] == HTTP["url"]
    assert isinstance(session.close(6), list) and session.deadline is None


def test_a_call_gives_its_number_and_actions() -> None:
    session = SourceSession(ETCD)
    assert session.start(0) == []
    call, actions = session.call({"op": "get", "key": "k"}, 0)
    assert isinstance(call, int)
    assert actions[0]["request"]["url"] == "http://127.0.0.1:2379/v3/kv/range"
    with pytest.raises(InvalidArgumentError):
        session.call({"op": "watch", "key": "k"}, 0)


BAD: list[tuple[str, Callable[[SourceSession], Any]]] = [
    ("config not a mapping", lambda s: SourceSession("{}")),  # type: ignore[arg-type]
    ("config unknown source", lambda s: SourceSession({"source": "consul"})),
    ("config zookeeper without members", lambda s: SourceSession({"source": "zookeeper"})),
    ("config NaN", lambda s: SourceSession({**HTTP, "x": float("nan")})),
    ("now negative", lambda s: s.start(-1)),
    ("now float", lambda s: s.timer(1.5)),  # type: ignore[arg-type]
    ("now bool", lambda s: s.close(True)),
    ("now huge", lambda s: s.timer(2**64)),
    ("op not a mapping", lambda s: s.call("refresh", 0)),  # type: ignore[arg-type]
    ("op unknown", lambda s: s.call({"op": "get"}, 0)),
    ("id text", lambda s: s.response("1", 0, 200, {}, b"")),  # type: ignore[arg-type]
    ("status too big", lambda s: s.response(1, 0, 65536, {}, b"")),
    ("status negative", lambda s: s.response(1, 0, -1, {}, b"")),
    ("headers not a mapping", lambda s: s.response(1, 0, 200, [], b"")),  # type: ignore[arg-type]
    ("headers NaN", lambda s: s.response(1, 0, 200, {"a": float("nan")}, b"")),  # type: ignore[dict-item]
    ("body str", lambda s: s.response(1, 0, 200, {}, "x")),  # type: ignore[arg-type]
    ("data list", lambda s: s.chunk(1, 0, [1])),  # type: ignore[arg-type]
    ("chunk id negative", lambda s: s.chunk(-1, 0, b"")),
    ("opened id text", lambda s: s.opened("1", 0)),  # type: ignore[arg-type]
    ("opened id negative", lambda s: s.opened(-1, 0)),
    ("opened id huge", lambda s: s.opened(2**64, 0)),
    ("opened id bool", lambda s: s.opened(True, 0)),
    ("opened id float", lambda s: s.opened(1.0, 0)),  # type: ignore[arg-type]
    ("opened id None", lambda s: s.opened(None, 0)),  # type: ignore[arg-type]
    ("opened now negative", lambda s: s.opened(1, -1)),
    ("opened now huge", lambda s: s.opened(1, 2**64)),
    ("opened now float", lambda s: s.opened(1, 1.5)),  # type: ignore[arg-type]
    ("opened now text", lambda s: s.opened(1, "0")),  # type: ignore[arg-type]
    ("code int", lambda s: s.failed(1, 0, 7, "x")),  # type: ignore[arg-type]
    ("message bytes", lambda s: s.failed(1, 0, "closed", b"x")),  # type: ignore[arg-type]
    ("message lone surrogate", lambda s: s.failed(1, 0, "closed", "\ud800")),
]


@pytest.mark.parametrize(("label", "call"), BAD, ids=[label for label, _ in BAD])
def test_bad_arguments_are_invalid_argument(label: str, call: Callable[[SourceSession], Any]) -> None:
    with pytest.raises(shardroute.ShardrouteError) as raised:
        call(made())
    assert raised.value.code == "invalid_argument", raised.value.message


def test_bytes_like_bodies_are_read() -> None:
    for body in (DOC.encode(), bytearray(DOC.encode()), memoryview(DOC.encode()), memoryview(b"x" + DOC.encode())[1:]):
        session = made()
        assert session.response(1, 1, 200, {}, body)[0]["offered"]["result"] == {"installed": {"epoch": "3"}}


# opened's id and now_ms are read as chunk's are: the same refusals, word for word.
WORDED: list[tuple[str, Any, Any]] = [
    ("id text", "1", 0),
    ("id negative", -1, 0),
    ("id bool", False, 0),
    ("now huge", 1, 2**64),
    ("now bool", 1, True),
    ("now float", 1, 0.5),
]


@pytest.mark.parametrize(("label", "id", "now"), WORDED, ids=[label for label, _, _ in WORDED])
def test_opened_refuses_an_id_or_a_time_in_chunks_words(label: str, id: Any, now: Any) -> None:
    with pytest.raises(InvalidArgumentError) as by_chunk:
        made().chunk(id, now, b"")
    with pytest.raises(InvalidArgumentError) as by_opened:
        made().opened(id, now)
    assert by_opened.value.message == by_chunk.value.message
    assert by_opened.value.message.startswith("id must be " if label.startswith("id") else "now_ms must be ")


def test_opened_is_ignored_by_a_kind_that_does_not_connect() -> None:
    session = made()
    deadline = session.deadline
    assert session.opened(1, 1) == [] and session.opened(99, 1) == []
    assert session.deadline == deadline


def test_a_zookeeper_session_connects_then_sends_once_opened() -> None:
    session = SourceSession({"source": "zookeeper", "members": ["127.0.0.1:2181"], "path": "/app/topology"})
    [connect] = session.start(0)
    assert set(connect) == {"connect"}
    assert connect["connect"]["id"] == 1
    assert (connect["connect"]["host"], connect["connect"]["port"]) == ("127.0.0.1", 2181)
    assert isinstance(connect["connect"]["deadline"], int) and session.deadline is not None
    actions = session.opened(1, 1)
    sends = [action["send"] for action in actions if "send" in action]
    assert sends and sends[0]["id"] == 1, actions
    frame = base64.b64decode(sends[0]["data_b64"], validate=True)
    # A jute frame: a 4-byte big-endian length, then that many bytes (the ConnectRequest).
    assert len(frame) > 4 and int.from_bytes(frame[:4], "big") == len(frame) - 4
    assert session.opened(7, 2) == [], "a connection the session never asked for"
