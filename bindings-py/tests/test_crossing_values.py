"""Values crossing into the binding as Python data: ClusterSession.refreshed's reply,
apply's operation and a Router's document.

The table conformance/hostile/crossing.json gives the code AND the message each hostile
value must raise, and the Node addon (bindings-node/test/crossing-values.test.mjs) and
the WASM package (bindings-wasm/test/crossing-values.test.mjs) run the same table, so a
500-deep reply, a lone surrogate, a NaN weight or a 2^64 slot is refused in the same
words in every language, and 16383.0 reads as 16383 in all three (it is one value in
JavaScript). Below the table, what only Python has: sets, bytes, int and tuple keys,
tuples, and nesting far past the limit.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from shardroute import (
    ClusterSession,
    LimitExceededError,
    Router,
    ShardrouteError,
    apply,
    hash_key,
    parse_address,
    parse_redirect,
)

ROOT = Path(__file__).resolve().parents[2]
TABLE: dict[str, Any] = json.loads((ROOT / "conformance" / "hostile" / "crossing.json").read_text(encoding="utf-8"))
FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}
CLASSES = {cls.code: cls for cls in ShardrouteError.__subclasses__()}


def value(written: Any) -> Any:
    """A table value as the Python value a user would pass (the tags: the table's description)."""
    if isinstance(written, list):
        return [value(item) for item in written]
    if not isinstance(written, dict):
        return written
    tag = next(iter(written), None)
    if tag == "$float":
        return FLOATS[written[tag]]
    if tag == "$int":
        return int(written[tag])
    if tag == "$nest":
        nested = value(written[tag]["leaf"])
        for _ in range(written[tag]["depth"]):
            nested = [nested]
        return nested
    if tag == "$repeat":
        return written[tag]["text"] * written[tag]["times"]
    if tag == "$cycle":
        cycle: list[Any] = []
        cycle.append(cycle)
        return cycle
    return {name: value(item) for name, item in written.items()}


def call(name: str, argument: Any) -> None:
    """Makes the table's call with `argument`; a session's reply must then route a key."""
    if name == "ClusterSession.refreshed":
        session = ClusterSession(TABLE["fixtures"]["seeds"])
        session.refreshed(argument, 0)
        assert len(session.plan(["a"], "write")) == 1, "the reply installed a table"
    elif name == "apply":
        apply(TABLE["fixtures"]["apply_topology"], argument)
    elif name == "Router":
        Router(argument)
    elif name == "hash_key":
        hash_key("k", argument)
    elif name == "parse_redirect":
        parse_redirect(argument)
    elif name == "parse_address":
        parse_address(argument)
    else:
        raise AssertionError(f"unknown call {name}")


# A case marked `"only": "js"` (a bigint) has no Python value: it is not a Python case.
PYTHON_CASES = [case for case in TABLE["cases"] if case.get("only") != "js"]


@pytest.mark.parametrize("case", PYTHON_CASES, ids=lambda case: f"{case['call']}:{case['id']}")
def test_the_shared_table(case: dict[str, Any]) -> None:
    argument = value(case["value"])
    if case["code"] is None:
        call(case["call"], argument)
        return
    with pytest.raises(ShardrouteError) as info:
        call(case["call"], argument)
    err = info.value
    assert type(err) is CLASSES[case["code"]]
    assert (err.code, err.message) == (case["code"], case["message"])
    assert str(err) == case["message"]


def test_the_table_covers_every_rule() -> None:
    ids = {case["id"] for case in TABLE["cases"]}
    for wanted in ["reply_500_deep", "reply_lone_surrogate_id", "reply_integral_float_slot", "apply_nan_weight"]:
        assert wanted in ids
    codes = {case["code"] for case in TABLE["cases"]}
    assert {None, "limit_exceeded", "invalid_argument", "invalid_topology"} <= codes
    assert all(case["message"] is not None for case in TABLE["cases"] if case["code"] is not None)


# --- what only Python has -------------------------------------------------------------


ONLY_DATA = "(only dicts, lists, tuples, strings, finite floats, ints, booleans and None are)"


def refresh(reply: Any) -> None:
    ClusterSession(["127.0.0.1:7000"]).refreshed(reply, 0)


def test_deep_nesting_is_refused_without_walking_it() -> None:
    # 100,000 lists: json.dumps raised RecursionError (or, under a high recursion limit,
    # overflowed the stack); the walk stops at the 65th.
    nested: Any = 1
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(LimitExceededError) as info:
        refresh(nested)
    limit = ": nested in 64 arrays and objects; the limit is 64 (limits::MAX_JSON_NESTING)"
    assert info.value.message == "[0]" * 64 + limit


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({1, 2}, f"reply: a set is not JSON data {ONLY_DATA}"),
        ([b"x"], f"[0]: a bytes is not JSON data {ONLY_DATA}"),
        ([{(1, 2): 3}], "[0]: a field name must be a str, not tuple (JSON names are text)"),
        ([{"\ud800": 3}], "[0]: a field name with a lone surrogate is not text"),
        ([{1: 2, "1": 3}], '[0]: the field "1" appears twice; a document names each field once'),
        ({"a": {"b": [0.5, math.nan]}}, "a.b[1]: NaN is not a JSON number"),
    ],
)
def test_python_only_values_are_refused_with_their_path(data: Any, message: str) -> None:
    with pytest.raises(ShardrouteError) as info:
        refresh(data)
    assert (info.value.code, info.value.message) == ("invalid_argument", message)


def test_tuples_and_int_keys_read_as_json_dumps_writes_them() -> None:
    node = {"id": "7000" * 8, "endpoint": "127.0.0.1", "ip": "127.0.0.1", "port": 7000, "role": "master"}
    session = ClusterSession(["127.0.0.1:7000"])
    session.refreshed(({"slots": (0, 16383.0), "nodes": (node,)},), 0)
    assert len(session.plan(["a"], "write")) == 1
    # An int key is its decimal text: "states" {0: ...} is {"0": ...}.
    document: Any = {"format": "shardroute/1", "epoch": 3, "nodes": [{"id": "a"}, {"id": "b"}],
                "strategy": {"type": "vbucket", "vbuckets": 2, "map": [["a"], ["b"]], "states": {0: "active"}}}
    assert Router(document).epoch == 3


def test_an_integral_float_is_the_integer_everywhere() -> None:
    # 16383.0 and -0.0 are what JavaScript's JSON.stringify writes for them: 16383 and 0.
    fixture: dict[str, Any] = TABLE["fixtures"]["apply_topology"]
    three: Any = {**fixture, "epoch": 3.0}
    assert Router(three).epoch == 3
    exact: Any = {**fixture, "epoch": float(2**53)}
    assert Router(exact).epoch == 2**53
