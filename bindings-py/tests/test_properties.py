"""Hypothesis drives the public Python API with arbitrary values.

Where test_hostile.py passes the values someone thought of, this suite lets Hypothesis
generate them: nested mixtures of None, booleans, integers of any size, floats (NaN,
infinities, -0.0), text with lone surrogates, bytes, lists, dicts and numpy arrays of any
dtype, put in every argument of every call of the shared table
(conformance/hostile/calls.json), into every field of a valid document, and as the bytes
of a binary dictionary. Every call must return or raise a `ShardrouteError` whose class is
its code's: any other exception (TypeError, OverflowError, SystemError, a Rust panic's
PanicException) fails. On valid keys, the invariants a user relies on: a shard in range,
batches equal single calls, text equal to its UTF-8 bytes, a document equal to its own
`to_json` once loaded.

The default profile is derandomized (the same examples every run, so `make test` cannot
fail by chance): 500 examples a test, 15-35 s on a loaded 2-core machine. `HYPOTHESIS_PROFILE=explore` draws new
examples, three times as many, for a longer search by hand.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shardroute
from shardroute import Router, ShardrouteError
from test_hostile import TABLE, Fixtures, invoke

settings.register_profile(
    "default",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=500,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("explore", parent=settings.get_profile("default"), derandomize=False, max_examples=1500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

CODES = {cls.code for cls in ShardrouteError.__subclasses__()}
U64 = 2**64 - 1

# Text of any code point, lone surrogates included (Hypothesis leaves them out by default).
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
NUMPY_ARRAYS = hnp.arrays(
    dtype=st.sampled_from(["uint8", "uint16", "uint32", "uint64", "int32", "int64", "float64", "bool"]),
    shape=hnp.array_shapes(min_dims=1, max_dims=2, max_side=4),
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, 2**32 - 1, 2**32, U64, 2**64, -1])
    | st.floats()
    | ANY_TEXT
    | st.binary(max_size=12)
    | NUMPY_ARRAYS
)
ANYTHING = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=12,
)
KEYS = st.text(max_size=20) | st.binary(max_size=20) | st.integers(min_value=0, max_value=U64)

CALLS = [
    call
    for group in TABLE["groups"]
    for call in group["calls"]
    if call.get("only", "py") == "py" and group["name"] != "huge_keys"
]


@pytest.fixture(scope="module")
def fixtures() -> Fixtures:
    return Fixtures()


def settles(run: Callable[[], Any]) -> Any:
    """Runs `run`: its result, or None after a ShardrouteError of a known code whose
    class is its code's. Anything else raised fails the test."""
    try:
        return run()
    except ShardrouteError as err:
        assert err.code in CODES, err.code
        assert type(err).code == err.code
        assert isinstance(err.message, str) and err.message
        return None


@given(data=st.data())
def test_any_value_in_any_argument_of_any_call(fixtures: Fixtures, data: st.DataObject) -> None:
    call = data.draw(st.sampled_from(CALLS), label="call")
    value = data.draw(ANYTHING, label="value")
    settles(lambda: invoke(fixtures, call, value))


@given(data=st.data())
def test_any_value_in_any_field_of_a_document(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(TABLE["fixtures"])), label="fixture")
    document = json.loads(json.dumps(TABLE["fixtures"][name]))
    # Walk down to a random container and put a random value at a random place in it.
    holder: Any = document
    while True:
        places = list(holder) if isinstance(holder, dict) else list(range(len(holder)))
        if not places:
            break
        place = data.draw(st.sampled_from(places), label="place")
        if isinstance(holder[place], (dict, list)) and data.draw(st.booleans(), label="deeper"):
            holder = holder[place]
            continue
        holder[place] = data.draw(ANYTHING, label="value")
        break
    router = settles(lambda: Router(document))
    if router is not None:
        text = router.to_json()
        assert Router(text).to_json() == text
    settles(lambda: shardroute.encode_dictionary(document))


@given(data=st.binary(max_size=200))
def test_any_bytes_as_a_binary_dictionary(data: bytes) -> None:
    decoded = settles(lambda: shardroute.decode_dictionary(data))
    if decoded is not None:
        Router(decoded)


@given(flips=st.lists(st.integers(min_value=0), min_size=1, max_size=4), keep=st.integers(min_value=0))
def test_a_damaged_binary_dictionary_is_refused_or_still_a_dictionary(flips: list[int], keep: int) -> None:
    encoded = bytearray(shardroute.encode_dictionary(TABLE["fixtures"]["dictionary"]))
    for flip in flips:
        encoded[flip % len(encoded)] ^= 1 << (flip // len(encoded) % 8)
    damaged = bytes(encoded[: keep % (len(encoded) + 1)])
    decoded = settles(lambda: shardroute.decode_dictionary(damaged))
    if decoded is not None:
        Router(decoded)


# The operations of core/src/ops, each with arbitrary values in the fields they read.
OPS = """add_node complete_moves directory_remove directory_set disruption id_groups_add_group
id_groups_add_interval id_groups_set_writable import_cassandra_ring import_couchbase_config
import_redis_cluster_shards import_redis_cluster_slots multilevel_group_set multilevel_remap
node_group_set plan_rebalance range_merge range_move range_presplit range_split range_split_median redis_moved
remove_node table_family_remove table_family_set tenant_remove tenant_set trie_remove trie_split vbucket_double vbucket_halve vbucket_override
vbucket_override_remove""".split()
FIELDS = "node id weight remove fail add slot address shard start end at to from key count group nodes family tenant entry".split()
OPERATIONS = ANYTHING | st.fixed_dictionaries(
    {"op": st.sampled_from(OPS)}, optional={field: ANYTHING for field in FIELDS}
)


@given(operation=OPERATIONS)
def test_any_operation(fixtures: Fixtures, operation: Any) -> None:
    for document in fixtures.documents.values():
        result = settles(lambda: shardroute.apply(document, operation))
        if result is not None:
            assert isinstance(result, dict)


@given(data=st.data())
def test_valid_keys_route_in_range_and_batches_equal_single_calls(fixtures: Fixtures, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(["ring", "next", "dictionary"]), label="router")
    router = fixtures.routers[name]
    shards = len(fixtures.documents[name]["nodes"]) if name != "dictionary" else 4
    keys = data.draw(st.lists(KEYS, max_size=20), label="keys")
    single = [router.route(key) for key in keys]
    assert all(0 <= shard < shards for shard in single)
    assert router.route_many(keys) == single
    assert router.node_many(keys) == [router.node(key) for key in keys]
    numbers = [key for key in keys if isinstance(key, int)]
    assert router.route_many(np.array(numbers, dtype=np.uint64)).tolist() == [router.route(key) for key in numbers]


@given(text=st.text(max_size=40))
def test_text_routes_as_its_utf8_bytes(fixtures: Fixtures, text: str) -> None:
    assert shardroute.hash_key(text) == shardroute.hash_key(text.encode())
    for router in fixtures.routers.values():
        assert settles(lambda: router.route(text)) == settles(lambda: router.route(text.encode()))


@given(weight=st.floats(allow_nan=True, allow_infinity=True))
def test_a_weight_is_a_finite_positive_number_or_refused(weight: float) -> None:
    document: Any = {**TABLE["fixtures"]["ring"], "nodes": [{"id": "a", "weight": weight}, {"id": "b"}]}  # any float, NaN too
    router = settles(lambda: Router(document))
    if not math.isfinite(weight) or weight <= 0:
        assert router is None
