"""The Python API from the outside, as a user imports it: types, conversions, errors.

What the routing answers are is the conformance vectors' job (test_conformance.py);
these tests check what only Python has: argument types, the error classes, the package
metadata, the README example and the demo.
"""

from __future__ import annotations

import json
import pickle
import re
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import shardroute
from shardroute import (
    CrossSlotError,
    TooManyRedirectsError,
    UnavailableError,
    DecodedId,
    InvalidArgumentError,
    InvalidKeyError,
    InvalidTopologyError,
    LimitExceededError,
    Location,
    Migration,
    NoNodesError,
    ReadOnlyError,
    Redirect,
    Router,
    ShardrouteError,
    StaleEpochError,
    Topology,
    apply,
    decode_dictionary,
    diff,
    encode_dictionary,
    hash_key,
    jump,
    modulo_moves,
    parse_redirect,
)
from shardroute_testing import doc

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
ROOT = PACKAGE.parent

DOC: Topology = doc(["a", "b", {"id": "c", "weight": 2}], "rendezvous", epoch=7)
# Addresses, zones, name templates and hot keys: what locate and the salting calls read.
PLACED: Topology = doc(
    [{"id": "a", "address": "10.0.0.1:5432", "zone": "eu-1a"}, "b", "c"],
    "jump",
    placement={"database": "db_{shard}", "table": "t_{shard:03}", "owner": "{node}"},
    hot_keys={"separator": "#", "keys": {"hot": 4, "ключ": 3}},
)
# A vbucket dictionary in motion. Integer keys hash to themselves, so key k is in
# vbucket k % 4: 0 and 3 are migrating (reads from the old owner, writes to the new one
# first, then the old), 2 is read-only, 1 is at rest.
MOVING: Topology = doc(
    [{"id": "a", "address": "10.0.0.1:11210", "zone": "z0"}, "b", "c"],
    {
        "type": "vbucket",
        "vbuckets": 4,
        "map": [["a", "b"], ["b", "c"], ["c", "a"], ["a", "c"]],
        "forward_map": [["b", "a"], ["b", "c"], ["c", "a"], ["c", "a"]],
        "states": {"0": "migrating", "2": "read_only", "3": "migrating"},
    },
    epoch=3,
    hashing={"integers": "identity"},
)
# Three masters and one replica each, with addresses, as CLUSTER SHARDS gives them (the
# cluster of core/tests/redis_redirects.rs): what the Redis Cluster client calls read.
CLUSTER: Topology = doc(
    [{"id": node, "address": f"127.0.0.1:{7001 + i}"} for i, node in enumerate(["m1", "m2", "m3", "r1", "r2", "r3"])],
    {
        "type": "redis_cluster",
        "slots": [
            {"start": 0, "end": 5460, "nodes": ["m1", "r1"]},
            {"start": 5461, "end": 10922, "nodes": ["m2", "r2"]},
            {"start": 10923, "end": 16383, "nodes": ["m3", "r3"]},
        ],
    },
    epoch=5,
)
KINDS = {
    "invalid_topology": InvalidTopologyError,
    "invalid_key": InvalidKeyError,
    "no_nodes": NoNodesError,
    "limit_exceeded": LimitExceededError,
    "invalid_argument": InvalidArgumentError,
    "stale_epoch": StaleEpochError,
    "read_only": ReadOnlyError,
    "cross_slot": CrossSlotError,
    "too_many_redirects": TooManyRedirectsError,
    "unavailable": UnavailableError,
}


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(DOC)


@pytest.fixture(scope="module")
def placed() -> Router:
    return Router(PLACED)


def raises(kind: type[ShardrouteError], call: Callable[[], object]) -> ShardrouteError:
    """Runs `call`, which must raise exactly `kind` with its code and a message."""
    with pytest.raises(ShardrouteError) as info:
        call()
    err = info.value
    assert type(err) is kind
    assert isinstance(err, ValueError)
    assert err.code == kind.code
    assert err.message and str(err) == err.message
    return err


# --- errors -------------------------------------------------------------------------


def test_error_classes_one_per_code() -> None:
    assert issubclass(ShardrouteError, ValueError)
    for code, kind in KINDS.items():
        assert issubclass(kind, ShardrouteError)
        assert kind.code == code
        assert kind.__module__ == "shardroute"
        assert kind.__name__ in shardroute.__all__
        assert kind.__doc__ and code in kind.__doc__
        assert code in (ShardrouteError.__doc__ or "")
    assert ShardrouteError.__doc__ and "code" in ShardrouteError.__doc__
    # Every error class the package exports is one of KINDS (core's ErrorKind::ALL).
    exported = {
        value
        for value in vars(shardroute).values()
        if isinstance(value, type) and issubclass(value, ShardrouteError) and value is not ShardrouteError
    }
    assert exported == set(KINDS.values())


@pytest.mark.parametrize(
    ("kind", "call"),
    [
        (InvalidTopologyError, lambda: Router("{")),
        (InvalidKeyError, lambda: Router(DOC).route(-1)),
        (NoNodesError, lambda: Router({**DOC, "nodes": []})),
        (LimitExceededError, lambda: Router({**DOC, "nodes": [{"id": "x" * 2000}]})),
        (InvalidArgumentError, lambda: Router(DOC).replicas("k", 4)),
        (StaleEpochError, lambda: Router(DOC).replace({**DOC, "epoch": 6})),
        (ReadOnlyError, lambda: Router(MOVING).route_write(2)),
        (CrossSlotError, lambda: Router(CLUSTER).same_slot(["a", "b"])),
    ],
)
def test_each_kind_is_raised_with_code_and_message(kind: type[ShardrouteError], call: Callable[[], object]) -> None:
    raises(kind, call)


def test_errors_pickle_with_code_and_message() -> None:
    err = raises(InvalidKeyError, lambda: hash_key(None))  # type: ignore[arg-type]
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is InvalidKeyError
    assert (copy.code, copy.message) == (err.code, err.message)


# --- keys ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", [True, False])
def test_bool_is_not_a_key(router: Router, key: bool) -> None:
    raises(InvalidKeyError, lambda: router.route(key))
    raises(InvalidKeyError, lambda: hash_key(key))


@pytest.mark.parametrize("text", ["\ud800", "a\udc00", "\udfff\ud800", "ok\ud83d"])
def test_lone_surrogates_are_rejected_not_replaced(router: Router, text: str) -> None:
    err = raises(InvalidKeyError, lambda: router.route(text))
    assert "surrogate" in err.message
    raises(InvalidKeyError, lambda: router.node(text))
    raises(InvalidKeyError, lambda: router.replicas(text, 1))
    raises(InvalidKeyError, lambda: router.route_many(["fine", text]))
    raises(InvalidKeyError, lambda: hash_key(text))


def test_text_is_its_utf8_bytes() -> None:
    for text in ["", "user:1", "ключ", "\U0001f511:emoji"]:
        utf8 = text.encode("utf-8")
        expected = hash_key(utf8)
        assert hash_key(text) == expected
        assert hash_key(bytearray(utf8)) == expected
        assert hash_key(memoryview(utf8)) == expected
        assert hash_key(memoryview(b"xx" + utf8 + b"yy")[2:-2]) == expected


def test_released_memoryview_is_invalid_key(router: Router) -> None:
    view = memoryview(b"key")
    view.release()
    raises(InvalidKeyError, lambda: router.route(view))


def test_ints_are_u64_keys() -> None:
    # Integers hash as their 8 little-endian bytes by default: 42 and "42" differ.
    assert hash_key(42) == hash_key((42).to_bytes(8, "little"))
    assert hash_key(42) != hash_key("42")
    assert hash_key(2**64 - 1) == hash_key(b"\xff" * 8)
    assert hash_key(7, {"integers": "identity"}) == 7

    class Id(int):
        pass

    assert hash_key(Id(42)) == hash_key(42)
    raises(InvalidKeyError, lambda: hash_key(2**64))
    raises(InvalidKeyError, lambda: hash_key(-1))
    raises(InvalidKeyError, lambda: hash_key(10**5000))  # too long to print: no crash


@pytest.mark.parametrize("key", [None, 1.0, 2.5, [1], ("a",), {"a": 1}, object(), 1j])
def test_unsupported_key_types(router: Router, key: Any) -> None:
    raises(InvalidKeyError, lambda: router.route(key))
    raises(InvalidKeyError, lambda: router.node(key))
    raises(InvalidKeyError, lambda: router.replicas(key, 1))
    raises(InvalidKeyError, lambda: router.route_many([key]))
    raises(InvalidKeyError, lambda: hash_key(key))


def test_reference_hashes() -> None:
    # SipHash-2-4 of the empty input under key 00..0f (the paper's first vector), and
    # the CRC-32 check value.
    assert hash_key(b"") == 0x726FDB47DD0E0E31
    assert hash_key("123456789", {"function": "crc32"}) == 0xCBF43926
    assert hash_key("123456789", '{"function": "crc32"}') == 0xCBF43926
    assert jump(1, 100) == 55


# --- topologies -----------------------------------------------------------------------


def test_dict_and_text_give_the_same_router() -> None:
    from_dict = Router(DOC)
    from_text = Router(json.dumps(DOC))
    assert from_dict.to_json() == from_text.to_json()
    # Any mapping is read at run time; the types ask for a Topology.
    assert Router(types.MappingProxyType(DOC)).to_json() == from_dict.to_json()  # type: ignore[arg-type]


def test_to_json_round_trips() -> None:
    canonical = Router(DOC).to_json()
    assert Router(canonical).to_json() == canonical
    assert Router(json.loads(canonical)).to_json() == canonical
    assert json.loads(canonical)["epoch"] == 7


@pytest.mark.parametrize("epoch", [2**53 + 1, 2**63 + 3, 2**64 - 1])
def test_epoch_above_2_53_is_exact(epoch: int) -> None:
    assert Router({**DOC, "epoch": epoch}).epoch == epoch
    assert Router({**DOC, "epoch": str(epoch)}).epoch == epoch
    assert type(Router({**DOC, "epoch": epoch}).epoch) is int


@pytest.mark.parametrize(
    "topology",
    [None, 5, 1.5, b"{}", ["format"], {"epoch": float("nan")}, {"epoch": {1, 2}}, "\ud800"],
)
def test_bad_topologies_are_invalid_topology(topology: Any) -> None:
    raises(InvalidTopologyError, lambda: Router(topology))


def test_unserializable_mapping_keeps_the_cause() -> None:
    err = raises(InvalidTopologyError, lambda: Router({**DOC, "epoch": 10**5000}))
    assert isinstance(err.__cause__, ValueError)


def test_interrupts_are_not_turned_into_errors() -> None:
    class Interrupting(Mapping[str, Any]):
        def __getitem__(self, key: str) -> Any:
            raise KeyboardInterrupt

        def __iter__(self) -> Iterator[str]:
            return iter(["format"])

        def __len__(self) -> int:
            return 1

    with pytest.raises(KeyboardInterrupt):
        Router(Interrupting())  # type: ignore[arg-type]


@pytest.mark.parametrize("hashing", [5, b"{}", "{", {"function": "md5"}, ["crc32"]])
def test_bad_hashing_specs_are_invalid_topology(hashing: Any) -> None:
    raises(InvalidTopologyError, lambda: hash_key("k", hashing))


# --- lookups --------------------------------------------------------------------------


def test_route_node_replicas_agree(router: Router) -> None:
    nodes = ["a", "b", "c"]
    keys: list[shardroute.Key] = ["user:1", b"\x00", 0, 2**64 - 1, "ключ"]
    for key in keys:
        shard = router.route(key)
        assert type(shard) is int and 0 <= shard < 3
        assert router.node(key) == nodes[shard]
        replicas = router.replicas(key, 3)
        assert replicas[0] == router.node(key) and sorted(replicas) == nodes


def test_route_many_equals_route_per_key(router: Router) -> None:
    keys: list[shardroute.Key] = ["user:1", b"raw", bytearray(b"ba"), memoryview(b"mv"), 0, 2**64 - 1, "ключ"]
    expected = [router.route(key) for key in keys]
    assert router.route_many(keys) == expected
    assert router.route_many(tuple(keys)) == expected
    assert router.route_many(key for key in keys) == expected
    assert router.route_many([]) == []


def test_route_many_wraps_iterator_errors_keeping_the_cause(router: Router) -> None:
    # As the JavaScript packages do for an array whose getter throws: invalid_key naming
    # the index, the iterator's own exception as the cause.
    def broken() -> Iterator[str]:
        yield "fine"
        raise RuntimeError("boom")

    with pytest.raises(InvalidKeyError, match=r"^keys\[1\]: .*boom") as raised:
        router.route_many(broken())
    assert isinstance(raised.value.__cause__, RuntimeError)


@pytest.mark.parametrize("keys", [5, None, "abc", b"abc", bytearray(b"abc")])
def test_route_many_needs_an_iterable_of_keys(router: Router, keys: Any) -> None:
    raises(InvalidArgumentError, lambda: router.route_many(keys))


@pytest.mark.parametrize("count", [0, 4, -1, 2**32, 2**70, True, 1.0, "1", None])
def test_bad_replica_counts_are_invalid_argument(router: Router, count: Any) -> None:
    raises(InvalidArgumentError, lambda: router.replicas("k", count))


def test_jump_arguments() -> None:
    assert jump(2**64 - 1, 2**32 - 1) < 2**32 - 1
    raises(NoNodesError, lambda: jump(1, 0))
    for hash_ in [-1, 2**64, "5", 5.0, True, None]:
        raises(InvalidKeyError, lambda: jump(hash_, 3))  # type: ignore[arg-type]
    for buckets in [-1, 2**32, "3", 3.0, True, None]:
        raises(InvalidArgumentError, lambda: jump(5, buckets))  # type: ignore[arg-type]


def test_shards_for_range_end_is_optional(router: Router) -> None:
    # Hash strategies scatter every range: every shard, in order.
    assert router.shards_for_range("a") == [0, 1, 2]
    assert router.shards_for_range("a", None) == [0, 1, 2]
    assert router.shards_for_range(start="a", end=None) == [0, 1, 2]
    assert router.shards_for_range(b"a", "b") == [0, 1, 2]
    assert router.shards_for_range(0, 2**64 - 1) == [0, 1, 2]
    assert router.shards_for_range(bytearray(b"a"), memoryview(b"z")) == [0, 1, 2]
    one_based: Topology = {**DOC, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "modulo", "one_based": True}}
    assert Router(one_based).shards_for_range("a") == [1, 2]


@pytest.mark.parametrize("bad", [-1, 2**64, True, 1.5, None, object(), "\ud800"])
def test_shards_for_range_bad_keys(router: Router, bad: Any) -> None:
    if bad is not None:  # None is a valid end, never a valid start
        raises(InvalidKeyError, lambda: router.shards_for_range("a", bad))
    raises(InvalidKeyError, lambda: router.shards_for_range(bad))


def test_decode_id_needs_an_id_strategy(router: Router) -> None:
    err = raises(InvalidArgumentError, lambda: router.decode_id(42))
    assert "decode_id" in err.message
    raises(InvalidArgumentError, lambda: router.decode_id(0))
    raises(InvalidArgumentError, lambda: router.decode_id(2**64 - 1))


@pytest.mark.parametrize("bad", [-1, 2**64, 2**200, "42", 42.0, True, None, b"\x2a"])
def test_decode_id_bad_ids_are_invalid_key(router: Router, bad: Any) -> None:
    raises(InvalidKeyError, lambda: router.decode_id(bad))


def test_locate(placed: Router) -> None:
    keys: list[shardroute.Key] = ["user:1", b"\x00\xff", bytearray(b"x"), memoryview(b"y"), 0, 2**64 - 1, "ключ"]
    seen = set()
    for key in keys:
        location: Location = placed.locate(key)
        assert list(location) == ["shard", "node", "address", "zone", "names"]
        assert location["shard"] == placed.route(key)
        assert location["node"] == placed.node(key)
        assert type(location["shard"]) is int
        shard = location["shard"]
        assert location["names"] == {"database": f"db_{shard}", "owner": location["node"], "table": f"t_{shard:03}"}
        assert list(location["names"]) == ["database", "owner", "table"]  # name order
        if location["node"] == "a":
            assert (location["address"], location["zone"]) == ("10.0.0.1:5432", "eu-1a")
        else:
            assert location["address"] is None and location["zone"] is None
        seen.add(location["node"])
    assert len(seen) > 1
    assert set(Location.__annotations__) == set(placed.locate("k"))


def test_locate_without_templates(router: Router) -> None:
    assert router.locate("k") == {
        "shard": router.route("k"),
        "node": router.node("k"),
        "address": None,
        "zone": None,
        "names": {},
    }
    raises(InvalidKeyError, lambda: router.locate(-1))
    raises(InvalidKeyError, lambda: router.locate("\ud800"))


def test_decoded_id_and_location_are_typed_dicts() -> None:
    assert set(DecodedId.__annotations__) == {"shard", "fields"}
    assert set(Location.__annotations__) == {"shard", "node", "address", "zone", "names"}
    decoded: DecodedId = {"shard": 1, "fields": {"timestamp": 5, "sequence": 0}}
    assert list(decoded["fields"]) == ["timestamp", "sequence"]


def test_fanout(placed: Router, router: Router) -> None:
    assert placed.fanout("hot") == 4
    assert placed.fanout(b"hot") == placed.fanout(bytearray(b"hot")) == placed.fanout(memoryview(b"hot")) == 4
    assert placed.fanout("ключ") == placed.fanout("ключ".encode()) == 3
    assert placed.fanout("cold") == 1
    assert placed.fanout(0) == 1  # integer keys are never hot
    assert router.fanout("hot") == 1  # no hot_keys section
    raises(InvalidKeyError, lambda: placed.fanout(True))
    raises(InvalidKeyError, lambda: placed.fanout(None))  # type: ignore[arg-type]


def test_salted_key_has_the_type_of_its_key(placed: Router) -> None:
    # The annotations are checked by mypy against the stub's overloads.
    text: str = placed.salted_key("hot", 6)
    raw: bytes = placed.salted_key(b"hot", 6)
    from_array: bytes = placed.salted_key(bytearray(b"hot"), 6)
    from_view: bytes = placed.salted_key(memoryview(b"hot"), 6)
    number: int = placed.salted_key(5, 6)
    assert (type(text), text) == (str, "hot#2")  # 6 % fanout 4
    for salted in [raw, from_array, from_view]:
        assert (type(salted), salted) == (bytes, b"hot#2")
    assert (type(number), number) == (int, 5)
    unicode: str = placed.salted_key("ключ", 2**32 - 1)
    assert unicode == f"ключ#{(2**32 - 1) % 3}"
    # A key that is not hot is its own salted key, still of its own type.
    assert placed.salted_key("cold", 3) == "cold"
    assert placed.salted_key(bytearray(b"cold"), 3) == b"cold"
    assert type(placed.salted_key(bytearray(b"cold"), 3)) is bytes

    class Id(int):
        pass

    assert type(placed.salted_key(Id(7), 0)) is int


@pytest.mark.parametrize("salt", [-1, 2**32, 2**70, True, 1.0, "1", None])
def test_bad_salts_are_invalid_argument(placed: Router, salt: Any) -> None:
    raises(InvalidArgumentError, lambda: placed.salted_key("hot", salt))


def test_salted_key_bad_keys(placed: Router) -> None:
    bad_keys: list[Any] = [-1, 2**64, True, None, 1.5, "\ud800"]
    for key in bad_keys:
        raises(InvalidKeyError, lambda: placed.salted_key(key, 0))
        raises(InvalidKeyError, lambda: placed.salted_keys(key))


def test_salted_keys(placed: Router) -> None:
    texts: list[tuple[str, int]] = placed.salted_keys("hot")
    assert [key for key, _ in texts] == ["hot#0", "hot#1", "hot#2", "hot#3"]
    for salt, (key, shard) in enumerate(texts):
        assert type(key) is str and type(shard) is int
        assert key == placed.salted_key("hot", salt)
        assert shard == placed.route(key)
    raws: list[tuple[bytes, int]] = placed.salted_keys(memoryview(b"hot"))
    assert raws == [(key.encode(), shard) for key, shard in texts]
    assert all(type(key) is bytes for key, _ in raws)
    numbers: list[tuple[int, int]] = placed.salted_keys(5)
    assert numbers == [(5, placed.route(5))]
    assert placed.salted_keys("cold") == [("cold", placed.route("cold"))]
    assert placed.salted_keys(bytearray(b"cold")) == [(b"cold", placed.route(b"cold"))]
    assert [key for key, _ in placed.salted_keys("ключ")] == ["ключ#0", "ключ#1", "ключ#2"]


def test_apply_adds_and_removes_nodes() -> None:
    original = json.loads(json.dumps(DOC))
    result = apply(DOC, {"op": "add_node", "node": {"id": "d"}})
    assert DOC == original  # the input is never modified
    assert result["added"] == "d"
    grown = Router(result["topology"])
    assert grown.epoch == 8
    assert [json.loads(grown.to_json())["nodes"][i]["id"] for i in range(4)] == ["a", "b", "c", "d"]
    assert result["topology"] == json.loads(grown.to_json())
    # Text in, the same answer; the result feeds the next call.
    assert apply(json.dumps(DOC), '{"op": "add_node", "node": {"id": "d"}}') == result
    shrunk = apply(result["topology"], {"op": "remove_node", "id": "a"})
    assert shrunk["removed"] == "a"
    assert Router(shrunk["topology"]).epoch == 9
    operation = types.MappingProxyType({"op": "remove_node", "id": "b"})
    assert apply(Router(DOC).to_json(), operation)["removed"] == "b"  # type: ignore[arg-type]


def test_apply_big_epoch_is_exact() -> None:
    result = apply({**DOC, "epoch": 2**63}, {"op": "remove_node", "id": "c"})
    assert Router(result["topology"]).epoch == 2**63 + 1


@pytest.mark.parametrize(
    "operation",
    [
        5,
        None,
        b"{}",
        ["op"],
        "{",
        "\ud800",
        '"add_node"',
        {},
        {"op": 5},
        {"op": "explode"},
        {"op": "remove_node", "id": "nobody"},
        {"op": "remove_node"},
        {"op": "remove_node", "id": "a", "extra": 1},
        {"op": "add_node", "node": {"id": "x"}, "weight": float("nan")},
    ],
)
def test_bad_operations_are_invalid_argument(operation: Any) -> None:
    raises(InvalidArgumentError, lambda: apply(DOC, operation))


def test_apply_errors_from_the_topology() -> None:
    raises(InvalidTopologyError, lambda: apply("{", {"op": "remove_node", "id": "a"}))
    raises(InvalidTopologyError, lambda: apply(5, {"op": "remove_node", "id": "a"}))  # type: ignore[arg-type]
    raises(InvalidTopologyError, lambda: apply(DOC, {"op": "add_node", "node": {"id": "a"}}))  # duplicate id
    raises(NoNodesError, lambda: apply({**DOC, "nodes": [{"id": "a"}]}, {"op": "remove_node", "id": "a"}))
    err = raises(InvalidArgumentError, lambda: apply(DOC, {"op": "add_node", "node": {"id": float("inf")}}))  # type: ignore[arg-type]
    assert err.message == "node.id: Infinity is not a JSON number"


def test_modulo_moves() -> None:
    assert modulo_moves(2, 4) == [[0, 2], [1, 3]]
    assert modulo_moves(4, 2) == [[0], [1], [0], [1]]
    assert modulo_moves(3, 3) == [[0], [1], [2]]
    assert modulo_moves(1, 3) == [[0, 1, 2]]
    raises(InvalidArgumentError, lambda: modulo_moves(3, 4))
    raises(NoNodesError, lambda: modulo_moves(0, 4))
    raises(NoNodesError, lambda: modulo_moves(4, 0))
    raises(LimitExceededError, lambda: modulo_moves(1, 2**32 - 1))


@pytest.mark.parametrize("count", [-1, 2**32, True, 2.0, "2", None])
def test_bad_modulo_counts_are_invalid_argument(count: Any) -> None:
    raises(InvalidArgumentError, lambda: modulo_moves(count, 2))
    raises(InvalidArgumentError, lambda: modulo_moves(2, count))


def test_router_pickles_and_reprs(router: Router) -> None:
    copy = pickle.loads(pickle.dumps(router))
    assert copy.to_json() == router.to_json()
    assert copy.route("k") == router.route("k")
    assert repr(router) == "<shardroute.Router epoch=7 nodes=3>"


def test_wrong_arity_is_a_type_error(router: Router) -> None:
    # Python's own calling convention, not a value: the one TypeError left.
    with pytest.raises(TypeError):
        router.route()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Router()  # type: ignore[call-arg]


# --- vbucket dictionary -------------------------------------------------------------


@pytest.fixture(scope="module")
def moving() -> Router:
    return Router(MOVING)


def test_route_read_and_route_write_during_a_move(moving: Router) -> None:
    # At rest: reads and writes go to the owner.
    assert moving.route_read(1) == moving.node(1) == "b"
    assert moving.route_write(1) == ["b"]
    # Migrating: reads from the old owner, writes to the new owner first, then the old.
    assert moving.route_read(0) == "a"
    assert moving.route_write(0) == ["b", "a"]
    assert moving.route_write(3) == ["c", "a"]
    # Read-only: reads still served, writes refused.
    assert moving.route_read(2) == "c"
    err = raises(ReadOnlyError, lambda: moving.route_write(2))
    assert "read-only" in err.message


def test_route_read_and_route_write_without_a_dictionary(router: Router) -> None:
    keys: list[shardroute.Key] = ["user:1", b"\x00", 42]
    for key in keys:
        assert router.route_read(key) == router.node(key)
        assert router.route_write(key) == [router.node(key)]


@pytest.mark.parametrize("bad", [-1, 2**64, True, None, 1.5, ["k"]])
def test_route_read_and_route_write_bad_keys(moving: Router, bad: Any) -> None:
    raises(InvalidKeyError, lambda: moving.route_read(bad))
    raises(InvalidKeyError, lambda: moving.route_write(bad))


def test_replace_returns_a_new_router_and_leaves_the_old_one() -> None:
    current = Router(MOVING)
    before = current.to_json()
    newer = current.replace({**MOVING, "epoch": 4})
    assert type(newer) is Router
    assert newer is not current
    assert newer.epoch == 4
    assert current.epoch == 3 and current.to_json() == before  # unchanged
    assert newer.to_json() == Router({**MOVING, "epoch": 4}).to_json()
    # Text in, the same router; the same document again is accepted.
    assert current.replace(json.dumps({**MOVING, "epoch": 4})).to_json() == newer.to_json()
    same = current.replace(MOVING)
    assert same is not current and same.to_json() == before
    # Any strategy may replace any other, as long as the epoch grows.
    assert current.replace({**DOC, "epoch": 9}).route_write("k") == [Router(DOC).node("k")]


def test_replace_refuses_a_stale_epoch_naming_the_held_one() -> None:
    current = Router({**MOVING, "epoch": 12345})
    err = raises(StaleEpochError, lambda: current.replace({**MOVING, "epoch": 12344}))
    assert "12345" in err.message and "12344" in err.message
    other: Topology = {**MOVING, "epoch": 12345, "nodes": [*MOVING["nodes"], {"id": "d"}]}
    err = raises(StaleEpochError, lambda: current.replace(other))
    assert "12345" in err.message
    assert current.epoch == 12345


def test_replace_epoch_above_2_53_is_exact() -> None:
    current = Router({**DOC, "epoch": 2**63})
    assert current.replace({**DOC, "epoch": 2**63 + 1}).epoch == 2**63 + 1
    err = raises(StaleEpochError, lambda: current.replace({**DOC, "epoch": 2**63 - 1}))
    assert str(2**63) in err.message


@pytest.mark.parametrize("topology", ["{", "", 5, None, [], b"{}", {**DOC, "format": "x"}])
def test_replace_bad_topologies_are_invalid_topology(router: Router, topology: Any) -> None:
    raises(InvalidTopologyError, lambda: router.replace(topology))


def test_replace_reports_errors_of_the_new_topology(router: Router) -> None:
    raises(NoNodesError, lambda: router.replace({**DOC, "epoch": 8, "nodes": []}))


def modulo(nodes: int) -> Topology:
    document: Topology = doc([f"s{i}" for i in range(nodes)], "modulo", epoch=nodes, hashing={"integers": "identity"})
    return document


def test_diff_reports_moves_and_flows() -> None:
    five, ten = Router(modulo(5)), Router(modulo(10))
    report = diff(five, ten, range(100), per_key=True)  # any iterable of keys
    assert (report["total"], report["moved"], report["moved_ppm"]) == (100, 50, 500_000)
    assert report["flows"][0] == {"from": "s0", "to": "s5", "keys": 10}
    assert len(report["flows"]) == 5
    assert report["keys"][7] == {"old_shard": 2, "new_shard": 7, "old_node": "s2", "new_node": "s7", "moved": True}
    assert report["keys"][3]["moved"] is False
    assert json.loads(json.dumps(report)) == report  # plain JSON data
    # Without per_key: the same counts and flows, no per-key list.
    counts = diff(five, ten, range(100))
    assert counts == {name: value for name, value in report.items() if name != "keys"}
    # Mixed key types, a generator, and the same router on both sides.
    keys: list[shardroute.Key] = ["user:1", b"\x00", 42]
    same = diff(five, five, (key for key in keys), per_key=True)
    assert (same["total"], same["moved"], same["flows"]) == (3, 0, [])
    assert [entry["old_shard"] for entry in same["keys"]] == five.route_many(keys)
    assert diff(five, ten, [], per_key=True) == {"keys": [], "total": 0, "moved": 0, "moved_ppm": 0, "flows": []}
    assert diff(five, ten, []) == {"total": 0, "moved": 0, "moved_ppm": 0, "flows": []}


@pytest.mark.parametrize("bad", [1, "yes", None.__class__])
def test_diff_per_key_must_be_a_bool(router: Router, bad: Any) -> None:
    raises(InvalidArgumentError, lambda: diff(router, router, ["k"], per_key=bad))


def test_diff_caps_the_per_key_list_not_the_counts() -> None:
    five, ten = Router(modulo(5)), Router(modulo(10))
    assert len(diff(five, ten, range(65_536), per_key=True)["keys"]) == 65_536
    err = raises(LimitExceededError, lambda: diff(five, ten, range(65_537), per_key=True))
    assert err.message.startswith("keys: ")
    assert diff(five, ten, range(65_537))["total"] == 65_537


def test_diff_streams_three_million_keys_in_bounded_memory() -> None:
    # A child process under a 1 GiB address-space limit: one entry per key (what diff
    # built before it streamed) needs several GiB for three million keys.
    script = textwrap.dedent(
        """
        import resource, shardroute
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        doc = lambda n: {"format": "shardroute/1", "epoch": n, "hashing": {"integers": "identity"},
                         "nodes": [{"id": f"s{i}"} for i in range(n)], "strategy": {"type": "modulo"}}
        report = shardroute.diff(shardroute.Router(doc(5)), shardroute.Router(doc(10)), iter(range(3_000_000)))
        print(report["total"], report["moved"], "keys" in report)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3000000", "1500000", "False"]


@pytest.mark.parametrize("bad", [None, DOC, "router", 5])
def test_diff_needs_routers(router: Router, bad: Any) -> None:
    err = raises(InvalidArgumentError, lambda: diff(bad, router, ["k"]))
    assert "old" in err.message and "Router" in err.message
    err = raises(InvalidArgumentError, lambda: diff(router, bad, ["k"]))
    assert "new" in err.message


@pytest.mark.parametrize("keys", [5, None, "user:1", b"user:1", bytearray(b"k"), memoryview(b"k")])
def test_diff_needs_an_iterable_of_keys(router: Router, keys: Any) -> None:
    raises(InvalidArgumentError, lambda: diff(router, router, keys))


@pytest.mark.parametrize("bad", [-1, 2**64, True, None, 1.5, "\ud800"])
def test_diff_bad_keys_are_invalid_key(router: Router, bad: Any) -> None:
    raises(InvalidKeyError, lambda: diff(router, router, ["ok", bad]))


def test_diff_propagates_routing_errors() -> None:
    # An id strategy routes only ids whose shard bits name one of its nodes.
    ids = Router({**DOC, "nodes": [{"id": "a"}], "strategy": {"type": "id_bits", "layout": "shard_high"}})
    raises(InvalidKeyError, lambda: diff(ids, Router(DOC), [0, 2**63]))
    raises(InvalidKeyError, lambda: diff(Router(DOC), ids, [0, 2**63]))


def test_encode_decode_dictionary_round_trip(moving: Router) -> None:
    encoded = encode_dictionary(MOVING)
    assert type(encoded) is bytes
    assert encoded[:4] == b"SRVB"
    assert encode_dictionary(json.dumps(MOVING)) == encoded
    assert encode_dictionary(moving.to_json()) == encoded
    text = decode_dictionary(encoded)
    assert type(text) is str
    assert text == moving.to_json()  # canonical JSON, byte for byte
    assert decode_dictionary(bytearray(encoded)) == text
    assert decode_dictionary(memoryview(encoded)) == text
    assert decode_dictionary(memoryview(b"xx" + encoded)[2:]) == text
    assert Router(text).route_write(0) == moving.route_write(0)
    # A derived (round-robin) map round-trips too.
    plain: Topology = {**MOVING, "strategy": {"type": "vbucket", "vbuckets": 16, "replicas": 1}}
    assert decode_dictionary(encode_dictionary(plain)) == Router(plain).to_json()


def test_decode_dictionary_rejects_damaged_bytes() -> None:
    encoded = encode_dictionary(MOVING)
    for index in [4, len(encoded) // 2, len(encoded) - 1]:
        damaged = bytearray(encoded)
        damaged[index] ^= 0x01
        raises(InvalidTopologyError, lambda: decode_dictionary(bytes(damaged)))
    raises(InvalidTopologyError, lambda: decode_dictionary(encoded[:-1]))  # truncated
    raises(InvalidTopologyError, lambda: decode_dictionary(encoded + b"\x00"))  # trailing
    raises(InvalidTopologyError, lambda: decode_dictionary(b""))
    raises(InvalidTopologyError, lambda: decode_dictionary(b"JSON" + encoded[4:]))  # magic


def test_decode_dictionary_needs_bytes() -> None:
    encoded = encode_dictionary(MOVING)
    bad: Any
    for bad in [encoded.hex(), None, 5, list(encoded)]:
        raises(InvalidArgumentError, lambda: decode_dictionary(bad))
    view = memoryview(encoded)
    view.release()
    err = raises(InvalidArgumentError, lambda: decode_dictionary(view))
    assert isinstance(err.__cause__, ValueError)


def test_encode_dictionary_errors() -> None:
    raises(InvalidArgumentError, lambda: encode_dictionary(DOC))  # not a vbucket strategy
    bad: Any
    for bad in ["{", 5, None, b"{}", {**MOVING, "format": "x"}]:
        raises(InvalidTopologyError, lambda: encode_dictionary(bad))


# --- Redis Cluster clients ----------------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Router:
    return Router(CLUSTER)


def key_in_slot(router: Router, slot: int) -> str:
    """A key (`k0`, `k1`, ...) in `slot`: test data, found by trying."""
    return next(f"k{i}" for i in range(1_000_000) if router.route(f"k{i}") == slot)


def test_moved_gives_one_slot_a_new_master_and_leaves_the_router(cluster: Router) -> None:
    before = cluster.to_json()
    slot = cluster.route("user:1")
    assert cluster.node("user:1") == "m2"
    moved = cluster.moved(slot, "127.0.0.1:7003")
    assert isinstance(moved, Router)
    assert (moved.epoch, cluster.epoch) == (6, 5)
    assert cluster.to_json() == before, "the router moved from is unchanged"
    assert moved.node("user:1") == "m3"
    # MOVED names no replica: the slot's chain is its new master alone.
    assert moved.replicas("user:1", 1) == ["m3"]
    assert moved.read_replica("user:1") == "m3"
    for other in [0, slot - 1, slot + 1, 5461, 16383]:
        key = key_in_slot(cluster, other)
        assert moved.node(key) == cluster.node(key), other
    # The same as the redis_moved operation.
    applied = apply(CLUSTER, {"op": "redis_moved", "slot": slot, "address": "127.0.0.1:7003"})
    assert (applied["from"], applied["to"], applied["added"]) == ("m2", "m3", None)
    assert Router(applied["topology"]).to_json() == moved.to_json()


def test_moved_to_an_unknown_address_adds_the_node(cluster: Router) -> None:
    key = key_in_slot(cluster, 100)
    moved = cluster.moved(100, "10.0.0.9:6379").moved(101, "10.0.0.9:6379")
    assert moved.epoch == 7
    nodes = json.loads(moved.to_json())["nodes"]
    assert len(nodes) == 7, "the node is added once"
    assert (nodes[-1]["id"], nodes[-1]["address"]) == ("10.0.0.9:6379", "10.0.0.9:6379")
    assert moved.node(key) == "10.0.0.9:6379"
    assert moved.locate(key)["address"] == "10.0.0.9:6379"
    assert cluster.node(key) == "m1"


def test_ask_names_the_target_and_changes_nothing(cluster: Router) -> None:
    before = cluster.to_json()
    assert cluster.ask(42, "127.0.0.1:7009") == "127.0.0.1:7009"
    assert cluster.ask(16383, "[::1]:7000") == "[::1]:7000"
    assert cluster.to_json() == before


@pytest.mark.parametrize("slot", [16384, 2**32, -1, 1.5, "1", None, True])
def test_redirect_slots_must_be_ints_in_range(cluster: Router, slot: Any) -> None:
    raises(InvalidArgumentError, lambda: cluster.moved(slot, "127.0.0.1:7001"))
    raises(InvalidArgumentError, lambda: cluster.ask(slot, "127.0.0.1:7001"))


@pytest.mark.parametrize(
    "address", ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "bad host:1", "", "\ud800:1", b"h:1", 7001, None]
)
def test_redirect_addresses_need_a_port(cluster: Router, address: Any) -> None:
    raises(InvalidArgumentError, lambda: cluster.moved(1, address))
    raises(InvalidArgumentError, lambda: cluster.ask(1, address))
    assert cluster.epoch == 5


def test_redirects_need_a_redis_cluster_topology(router: Router) -> None:
    err = raises(InvalidArgumentError, lambda: router.moved(1, "127.0.0.1:7001"))
    assert "redis_cluster" in err.message
    raises(InvalidArgumentError, lambda: router.ask(1, "127.0.0.1:7001"))


def test_parse_redirect_reads_moved_and_ask(cluster: Router) -> None:
    moved = parse_redirect("MOVED 3999 127.0.0.1:6381")
    assert isinstance(moved, Redirect) and isinstance(moved, tuple)
    assert moved == ("MOVED", 3999, "127.0.0.1:6381")
    assert (moved.kind, moved.slot, moved.address) == ("MOVED", 3999, "127.0.0.1:6381")
    assert Redirect._fields == ("kind", "slot", "address")
    # The raw RESP error, with its "-" and line end; IPv6 and host-less addresses.
    assert parse_redirect("-ASK 0 [::1]:7000\r\n") == Redirect("ASK", 0, "[::1]:7000")
    assert parse_redirect("MOVED 16383 :7000").address == ":7000"
    # What a client does with them.
    key = key_in_slot(cluster, 3999)
    redirect = parse_redirect("MOVED 3999 127.0.0.1:7003")
    assert cluster.moved(redirect.slot, redirect.address).node(key) == "m3"
    kind, slot, address = parse_redirect("ASK 3999 127.0.0.1:7009")
    assert (kind, cluster.ask(slot, address)) == ("ASK", "127.0.0.1:7009")


@pytest.mark.parametrize(
    "line",
    [
        *["", "MOVED", "MOVED 1", "MOVED abc h:1", "MOVED -1 h:1", "MOVED 16384 h:1", "MOVED 1 127.0.0.1"],
        *["MOVED 1 h:0", "MOVED 1 h:1 extra", "moved 1 h:1", "ERR unknown command", "\ud800"],
        "CROSSSLOT Keys in request don't hash to the same slot",
        *[b"MOVED 1 h:1", None, 5],  # not a str
    ],
)
def test_parse_redirect_refuses_other_lines(line: Any) -> None:
    raises(InvalidArgumentError, lambda: parse_redirect(line))


def test_same_slot_needs_a_shared_hash_tag(cluster: Router) -> None:
    slot = cluster.route("user:1")
    assert cluster.same_slot(["{user:1}.name", "{user:1}.mail", "user:1"]) == slot
    assert cluster.same_slot([b"{user:1}.name", bytearray(b"user:1"), memoryview(b"{user:1}")]) == slot
    assert cluster.same_slot(key for key in ["{user:1}.a", "{user:1}.b"]) == slot
    assert cluster.same_slot((42, 42)) == cluster.route(42)
    assert cluster.same_slot(["x"]) == cluster.route("x")
    err = raises(CrossSlotError, lambda: cluster.same_slot(["{user:1}.name", "{user:1}.mail", "{user:2}.name"]))
    assert err.message.startswith("key 2 is in shard")
    assert isinstance(err, ValueError)
    raises(CrossSlotError, lambda: cluster.same_slot(["user:1", 42]))


def test_same_slot_bad_input(cluster: Router) -> None:
    raises(InvalidArgumentError, lambda: cluster.same_slot([]))  # no keys
    bad: Any
    for bad in ["{user:1}.a", b"ab", 5, None]:  # a single key, or not an iterable
        raises(InvalidArgumentError, lambda: cluster.same_slot(bad))
    for bad in [None, -1, 2**64, True, 1.5, "\ud800"]:
        raises(InvalidKeyError, lambda: cluster.same_slot(["a", bad]))


@pytest.mark.parametrize("fixture", ["cluster", "router"])
def test_group_by_node_partitions_the_keys_in_node_order(fixture: str, request: pytest.FixtureRequest) -> None:
    local: Router = request.getfixturevalue(fixture)
    keys: list[shardroute.Key] = [f"user:{i}" for i in range(300)]
    keys += [b"bytes", bytearray(b"x"), 7, 2**64 - 1, "ключ"]
    groups = local.group_by_node(keys)
    ids = [node["id"] for node in json.loads(local.to_json())["nodes"]]
    assert [ids.index(node) for node, _ in groups] == sorted({ids.index(node) for node, _ in groups})
    assert sorted(index for _, indices in groups for index in indices) == list(range(len(keys)))
    nodes = local.node_many(keys)
    for node, indices in groups:
        assert isinstance(node, str) and isinstance(indices, list) and indices
        assert indices == sorted(indices)
        assert all(nodes[index] == node for index in indices)
    assert local.group_by_node(iter(keys)) == groups
    assert local.group_by_node(tuple(keys)) == groups
    assert local.group_by_node([]) == []


def test_group_by_node_bad_input(cluster: Router) -> None:
    bad: Any
    for bad in ["ab", b"ab", 5, None]:
        raises(InvalidArgumentError, lambda: cluster.group_by_node(bad))
    for bad in [None, -1, 2**64, True, 1.5, "\ud800"]:
        raises(InvalidKeyError, lambda: cluster.group_by_node(["a", bad]))


def test_read_replica_goes_round_the_replicas(cluster: Router, router: Router) -> None:
    owner = cluster.node("user:1")
    replica = cluster.read_replica("user:1")
    assert replica != owner
    assert cluster.replicas("user:1", 2) == [owner, replica]
    assert [cluster.read_replica("user:1", turn) for turn in range(4)] == [replica] * 4, "one replica: every turn"
    assert cluster.read_replica("user:1", 2**32 - 1) == replica
    whole = {"start": 0, "end": 16383, "nodes": ["m", "r1", "r2"]}
    chain = Router(doc(["m", "r1", "r2"], {"type": "redis_cluster", "slots": [whole]}))
    keys: list[shardroute.Key] = ["k", b"k", 7]
    assert [chain.read_replica(key, turn) for key in keys for turn in range(3)] == ["r1", "r2", "r1"] * 3
    for key in keys:
        assert router.read_replica(key, 3) == router.node(key), "no chain: the owner"


def test_read_replica_bad_input(cluster: Router) -> None:
    bad: Any
    for bad in [-1, 2**32, 1.5, "1", None, True]:
        raises(InvalidArgumentError, lambda: cluster.read_replica("k", bad))
    for bad in [None, -1, 2**64, True, 1.5, "\ud800"]:
        raises(InvalidKeyError, lambda: cluster.read_replica(bad))


# --- migrations ----------------------------------------------------------------------


def seed(servers: int, epoch: int) -> Router:
    """The 1-based `id % n ?: n` over servers shard_1..shard_n, user ids as their own hash."""
    nodes = [f"shard_{i}" for i in range(1, servers + 1)]
    return Router(doc(nodes, {"type": "modulo", "one_based": True}, epoch=epoch, hashing={"integers": "identity"}))


USERS = range(1, 5001)


def test_migration_five_to_ten_moves_what_diff_lists() -> None:
    five, ten = seed(5, 1), seed(10, 2)
    migration = Migration(five, ten)
    report = diff(five, ten, USERS, per_key=True)
    moving = migration.moving_keys(USERS)
    # Half the users move: those whose id % 10 is 6..9 or 0 (to shards 6..10).
    assert len(moving) == report["moved"] == 2500
    assert moving == [index for index, entry in enumerate(report["keys"]) if entry["moved"]]
    for user, entry in zip(USERS, report["keys"]):
        old, new = entry["old_node"], entry["new_node"]
        assert migration.moves(user) == ((old, new) if entry["moved"] else None)
        assert migration.write_target(user) == new
        assert migration.read_targets(user) == ([old, new] if entry["moved"] else [new])
        assert migration.read_targets(user, False) == migration.read_targets(user)
        assert migration.read_targets(user, moved=True) == [new]
    # The messages example's own case: user 7 goes from shard 2 to shard 7, user 12 stays.
    assert migration.moves(7) == ("shard_2", "shard_7")
    assert migration.read_targets(7) == ["shard_2", "shard_7"]
    assert migration.moves(12) is None and migration.read_targets(12) == ["shard_2"]
    # Keys as for route_many: generators, numpy arrays, text.
    assert migration.moving_keys(user for user in USERS) == moving
    assert migration.moving_keys(np.arange(1, 5001, dtype=np.uint64)) == moving
    assert migration.moving_keys([]) == []
    texts = [f"user:{i}" for i in range(200)]
    assert migration.moving_keys(texts) == [i for i, key in enumerate(texts) if five.node(key) != ten.node(key)]
    # Node indices are not units a copy job can move.
    err = raises(InvalidArgumentError, lambda: migration.moving_shards())
    assert "moving_keys" in err.message


def test_migration_of_a_dictionary_in_motion() -> None:
    start = doc([f"shard_{i}" for i in range(1, 6)], {"type": "vbucket", "vbuckets": 256})
    result = apply(start, {"op": "plan_rebalance", "add": [{"id": f"shard_{i}"} for i in range(6, 11)]})
    dictionary = Router(result["topology"])
    before = dictionary.to_json()
    migration = Migration.of_dictionary(dictionary)
    assert (migration.before.epoch, migration.after.epoch) == (2, 3)
    strategy = result["topology"]["strategy"]
    old, new = strategy["map"], strategy["forward_map"]
    shards = migration.moving_shards()
    assert shards == [(v, old[v][0], new[v][0]) for v in range(256) if old[v][0] != new[v][0]]
    assert len(shards) == result["moved_actives"] > 0  # the vbuckets whose active copy moves
    for shard, source, target in shards:
        assert (migration.before.shard_owner(shard), migration.after.shard_owner(shard)) == (source, target)
    # A key of a moving vbucket reads new then old until it has moved.
    moving = {shard: (source, target) for shard, source, target in shards}
    keys = [f"user:{i}" for i in range(300)]
    assert migration.moving_keys(keys) == [i for i, key in enumerate(keys) if dictionary.route(key) in moving]
    for key in keys:
        shard = dictionary.route(key)
        if shard in moving:
            source, target = moving[shard]
            assert migration.moves(key) == (source, target)
            assert migration.read_targets(key) == [source, target]
            assert migration.write_target(key) == target
        else:
            assert migration.moves(key) is None
            assert migration.read_targets(key) == [migration.write_target(key)]
    assert dictionary.to_json() == before, "the dictionary is unchanged"
    # Nothing moves in a settled dictionary, or in a topology that is not one.
    for settled in [migration.after, Router(start), Router(DOC)]:
        raises(InvalidArgumentError, lambda: Migration.of_dictionary(settled))
    # Two dictionaries, before and after the moves: the same vbuckets move.
    done = apply(result["topology"], {"op": "complete_moves"})["topology"]
    assert Migration(Router(start), Router(done)).moving_shards() == shards


def test_a_migration_goes_forward() -> None:
    err = raises(StaleEpochError, lambda: Migration(seed(5, 3), seed(10, 2)))
    assert "3" in err.message and "2" in err.message
    raises(StaleEpochError, lambda: Migration(seed(5, 2), seed(10, 2)))
    five = seed(5, 1)
    raises(StaleEpochError, lambda: Migration(five, five))
    assert Migration(seed(10, 1), seed(5, 2)).moves(7) == ("shard_7", "shard_2"), "shrinking goes forward too"


def test_migration_leaves_its_routers_usable() -> None:
    five, ten = seed(5, 1), seed(10, 2)
    texts = [five.to_json(), ten.to_json()]
    migration = Migration(five, ten)
    assert migration.before is five and migration.after is ten
    del migration
    assert [five.to_json(), ten.to_json()] == texts
    assert (five.node(7), ten.node(7)) == ("shard_2", "shard_7")
    copy = pickle.loads(pickle.dumps(Migration(five, ten)))
    assert type(copy) is Migration and copy.moves(7) == ("shard_2", "shard_7")
    assert copy.before.to_json() == texts[0] and copy.after.to_json() == texts[1]
    assert repr(copy) == "<shardroute.Migration epoch 1 -> 2>"


@pytest.mark.parametrize("bad", [None, DOC, "router", 5, json.dumps(DOC)])
def test_migration_needs_routers(bad: Any) -> None:
    ten = seed(10, 2)
    assert "before" in raises(InvalidArgumentError, lambda: Migration(bad, ten)).message
    assert "after" in raises(InvalidArgumentError, lambda: Migration(ten, bad)).message
    assert "Router" in raises(InvalidArgumentError, lambda: Migration.of_dictionary(bad)).message


def test_migration_bad_input() -> None:
    migration = Migration(seed(5, 1), seed(10, 2))
    bad: Any
    for bad in [None, -1, 2**64, True, 1.5, "\ud800", ["k"]]:
        raises(InvalidKeyError, lambda: migration.moves(bad))
        raises(InvalidKeyError, lambda: migration.write_target(bad))
        raises(InvalidKeyError, lambda: migration.read_targets(bad))
        raises(InvalidKeyError, lambda: migration.moving_keys([1, bad]))
    for bad in [1, 0, None, "yes", 1.0, np.bool_(True)]:
        raises(InvalidArgumentError, lambda: migration.read_targets(7, bad))
    for bad in ["ab", b"ab", 5, None]:
        raises(InvalidArgumentError, lambda: migration.moving_keys(bad))
    with pytest.raises(TypeError):
        Migration(seed(5, 1))  # type: ignore[call-arg]
    assert migration.moves(7) == ("shard_2", "shard_7"), "the migration still works"


def test_shard_owner(router: Router) -> None:
    five = seed(5, 1)
    assert [five.shard_owner(shard) for shard in range(1, 6)] == [f"shard_{i}" for i in range(1, 6)]
    keys: list[shardroute.Key] = ["user:1", b"\x00", 7, 2**64 - 1]
    for key in keys:
        assert router.shard_owner(router.route(key)) == router.node(key)
        assert five.shard_owner(five.route(key)) == five.node(key)
    bad: Any
    for bad in [0, 6, -1, 2**32, True, "1", None, 1.5]:
        raises(InvalidArgumentError, lambda: five.shard_owner(bad))
    raises(InvalidArgumentError, lambda: router.shard_owner(3))


# --- package --------------------------------------------------------------------------


def test_limits_are_the_cores() -> None:
    # The package's limits are the core's own (re-exported by the native module, not held
    # in Python): a document of exactly MAX_DOCUMENT_BYTES loads, one byte more is refused
    # naming the same number; nesting of MAX_JSON_NESTING levels is refused naming it, one
    # level less is not.
    limit = shardroute.MAX_DOCUMENT_BYTES
    assert type(limit) is int and type(shardroute.MAX_JSON_NESTING) is int
    assert {"MAX_DOCUMENT_BYTES", "MAX_JSON_NESTING"} <= set(shardroute.__all__)
    text = json.dumps(DOC)
    assert Router(text + " " * (limit - len(text))).epoch == 7
    err = raises(LimitExceededError, lambda: Router(text + " " * (limit + 1 - len(text))))
    assert err.message == f"the document is {limit + 1} bytes; the limit is {limit}"
    depth = shardroute.MAX_JSON_NESTING

    def nested(levels: int) -> str:
        return text[:-1] + ', "extra": ' + "[" * levels + "]" * levels + "}"

    err = raises(LimitExceededError, lambda: Router(nested(depth)))
    assert f"nested in {depth} arrays and objects; the limit is {depth}" in err.message
    try:
        Router(nested(depth - 1))
    except ShardrouteError as below:
        assert not isinstance(below, LimitExceededError), below



def test_public_names_and_docs() -> None:
    # Submodules (`shardroute.redis`, once imported) are reached by their own import;
    # `documents` (the TypedDicts) is the one the package imports and exports itself.
    public = {name for name, value in vars(shardroute).items() if not name.startswith("_")}
    public -= {name for name, value in vars(shardroute).items() if isinstance(value, types.ModuleType)}
    assert set(shardroute.__all__) == public | {"__version__", "documents"}
    assert shardroute.__doc__ and "Router" in shardroute.__doc__
    methods = [Router.route, Router.node, Router.replicas, Router.route_many, Router.to_json]
    methods += [Router.node_many, Router.node_index_many, Router.route_packed]
    methods += [Router.shards_for_range, Router.decode_id, Router.locate, Router.fanout]
    methods += [Router.salted_key, Router.salted_keys, Router.route_read, Router.route_write, Router.replace]
    methods += [Router.read_replica, Router.same_slot, Router.group_by_node, Router.moved, Router.ask]
    methods += [Router.shard_owner, Migration.of_dictionary, Migration.moves, Migration.write_target]
    methods += [Migration.read_targets, Migration.moving_shards, Migration.scan_nodes, Migration.moving_keys]
    functions = [hash_key, jump, apply, modulo_moves, diff, encode_dictionary, decode_dictionary, parse_redirect]
    for item in [Router, Migration, *methods, *functions, DecodedId, Location, Redirect]:
        assert item.__doc__, item
    assert Router.epoch.__doc__ and Migration.before.__doc__ and Migration.after.__doc__


def test_version_is_the_workspace_version() -> None:
    cargo = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    section = cargo.split("[workspace.package]", 1)[1]
    match = re.search(r'^version\s*=\s*"([^"]+)"', section, re.MULTILINE)
    assert match
    assert shardroute.__version__ == match.group(1)
    from importlib.metadata import version

    assert version("shardroute") == match.group(1)


def test_typed_package() -> None:
    package = Path(shardroute.__file__).parent
    assert (package / "py.typed").exists()
    assert (package / "__init__.pyi").exists()


def test_demo_prints_one_json_array() -> None:
    demo = PACKAGE / "examples" / "demo.py"
    done = subprocess.run([sys.executable, str(demo)], capture_output=True, check=True, cwd="/")
    rows = json.loads(done.stdout.decode("utf-8"))
    demo_dir = ROOT / "conformance" / "demo"
    keys = json.loads((demo_dir / "keys.json").read_text(encoding="utf-8"))
    router = Router((demo_dir / "topology.json").read_text(encoding="utf-8"))
    assert [row["key"] for row in rows] == keys
    for row in rows:
        assert set(row) == {"key", "shard", "node", "replicas"}
        assert row["shard"] == router.route(row["key"])
        assert row["node"] == router.node(row["key"])
        assert row["replicas"] == router.replicas(row["key"], 2)


def test_scatter_plans_and_their_arguments() -> None:
    """The plans themselves are vectors (scatter.json); here the Python face of the
    three calls: defaults, keyword arguments, and refusals with codes, never TypeError."""
    router = Router({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a", "zone": "east"}, {"id": "b"}],
                     "strategy": {"type": "vbucket", "vbuckets": 4, "map": [["a", "b"], ["b", "a"], ["a"], ["b"]]}})
    assert router.scatter_every() == {"gather": "union", "shards": [0, 1, 2, 3], "nodes": ["a", "b", "a", "b"], "keys": None}
    assert router.scatter_every("replicas", 0)["nodes"] == ["b", "a", "a", "b"]
    assert router.scatter_every(read_from="zone", zone="east")["nodes"] == ["a", "a", "a", "b"]
    assert router.scatter_range("a", None)["gather"] == "merge"
    plan = router.scatter_keys(["k1", "k1", 7])
    assert plan["keys"] is not None and len(plan["keys"]) == len(plan["shards"]) == len(plan["nodes"])
    assert sorted(index for indices in plan["keys"] for index in indices) == [0, 1, 2]
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: router.scatter_every("nearest"), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: router.scatter_every("zone"), "invalid_argument"),
        (lambda: router.scatter_every(1), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: router.scatter_every("replicas", -1), "invalid_argument"),
        (lambda: router.scatter_every("replicas", 2**32), "invalid_argument"),
        (lambda: router.scatter_every("zone", 0, b"east"), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: router.scatter_keys("k1"), "invalid_argument"),  # one key where a list belongs, as route_many
        (lambda: router.scatter_keys([1.5]), "invalid_key"),  # type: ignore[list-item]
        (lambda: router.scatter_range(None), "invalid_key"),  # type: ignore[arg-type]
    ]
    for call, code in calls:
        with pytest.raises(shardroute.ShardrouteError) as raised:
            call()
        assert raised.value.code == code
