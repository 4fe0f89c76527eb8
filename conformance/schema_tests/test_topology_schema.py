"""docs/topology.schema.json, the JSON Schema of the whole topology document (and, under
`$defs/operation`, of the operations `apply` takes), against the core through the Python
package:

- every committed example document (docs/examples/) and every topology of the
  conformance vectors validates, and the core loads it;
- every document a vector expects the core to refuse is refused by the schema too, except
  the ones `CANNOT_EXPRESS` lists with the rule a schema cannot state (and those the
  schema must accept, so the list stays true);
- every object the documents and operations contain is closed with exactly the fields the
  parser accepts: the parser's unknown-field error lists them, and that list must equal
  the schema's properties at that place; every object definition of the schema is met
  this way at least once;
- an optional field set to null is accepted by the schema wherever the core accepts it
  (null is absent for the core);
- every operation of a vector `apply` that succeeds validates against `$defs/operation`.
"""

import copy
import json
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
import referencing

import shardroute

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA: dict[str, Any] = json.loads((ROOT / "docs" / "topology.schema.json").read_text())
REGISTRY = referencing.Registry().with_resource(SCHEMA["$id"], referencing.Resource.from_contents(SCHEMA))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, registry=REGISTRY)
OPERATION = VALIDATOR.evolve(schema={"$ref": SCHEMA["$id"] + "#/$defs/operation"})
VECTORS = [(path.name, json.loads(path.read_text())) for path in sorted((ROOT / "conformance" / "vectors").glob("*.json"))]

# A field name no object has, far from every real one (so no "did you mean" either).
UNKNOWN = "zzz_not_a_field"
UNKNOWN_FIELD = re.compile(r"^(?P<path>.*): unknown field; expected one of: (?P<fields>[^;]*)(?:; did you mean .*)?$")

# Documents a vector expects the core to refuse that the schema accepts, each with the
# rule the schema cannot state. JSON Schema sees values one at a time: it cannot compare
# one field with another (a count with a table's length, ids with the node list), order
# or deduplicate by value, count UTF-8 bytes (it bounds characters), tell 1.0 from 1
# (its integers include integral floats), or compute (primes, checksums, sums of bit
# widths). `test_rules_beyond_a_schema_are_refused_by_the_core_only` adds the ones no
# vector exercises.
CANNOT_EXPRESS = {
    # Cross references: a table naming a node, group, shard or cell the document does not have.
    "references": [
        "couchbase/load/unknown-node",
        "directory/reject/directory-unknown-node",
        "errors/load/vbucket-map-missing-node",
        "hash_range/load/ranges-unknown-node",
        "id_groups/load/unknown-node",
        "ids/load/cells-unknown-shard",
        "ids/load/shards-unknown-node",
        "kafka/reject/leaders-unknown-node",
        "key_range/load/ranges-unknown-node",
        "multilevel/reject/group-unknown-node",
        "multilevel/reject/map-node-id",
        "multilevel/reject/map-unknown-group",
        "redis_cluster/reject/unknown-node",
        "token_ring/load/reject-tokens-unknown-node",
        "indexes/load/reject-unknown-node",
        "trie/load/reject-missing-node",
        "vitess/load/reject-unknown-node",
        "vshard/load/ranges-unknown-node",
        "tables/shop/load/reject-group-unknown-node",
        "tables/shop/load/reject-family-unknown-group",
        "tables/shop/load/reject-strategy-outside-group",
        "tenants/saas/load/reject-unknown-group",
        "tenants/saas/load/reject-zone-without-nodes",
        "tenants/saas/load/reject-zone-outside-the-group",
    ],
    # Lengths, counts and bounds that depend on another field (a table's length on a count,
    # a count on the node list, a bit position on a width).
    "counts": [
        "couchbase/load/forward-short",
        "couchbase/load/row-uneven",
        "dictionary/load/reject-state-out-of-range",
        "directory/reject/vbucket-override-out-of-range",
        "elasticsearch/reject/partition-not-below-routing-shards",
        "elasticsearch/reject/primaries-wrong-length",
        "elasticsearch/reject/routing-shards-not-multiple",
        "errors/load/vbucket-map-short",
        "errors/load/vbucket-replicas-too-many",
        "hash_range/load/ranges-long",
        "ids/load/cells-past-capacity",
        "ids/load/default-table-too-long",
        "ids/load/shard-shift-past-63",
        "ids/load/shards-past-capacity",
        "ids/load/ulid-shards-past-capacity",
        "kafka/reject/leaders-too-few",
        "key_range/load/ranges-short",
        "maglev/load/reject-smaller-than-node-count",
        "multilevel/reject/map-short",
        "vshard/load/fewer-buckets-than-nodes",
        "vshard/load/ranges-short",
    ],
    # Order and uniqueness of values across entries (ids, keys, tokens, intervals, ranges).
    "order and uniqueness": [
        "cassandra/load/reject-token-duplicate",
        "couchbase/load/row-repeated",
        "directory/reject/directory-duplicate-key",
        "directory/reject/directory-duplicate-u64",
        "directory/reject/vbucket-override-duplicate",
        "errors/load/node-id-duplicate",
        "hash_range/load/decreasing",
        "hash_range/load/equal",
        "id_groups/load/duplicate-group-id",
        "id_groups/load/empty-interval",
        "id_groups/load/overlap-across-groups",
        "id_groups/load/overlap-within-group",
        "id_groups/load/reversed-interval",
        "id_groups/load/same-interval-twice",
        "ketama/reject/duplicate-address",
        "key_range/load/decreasing",
        "key_range/load/equal",
        "key_range/load/equal-u64-and-bytes",
        "multilevel/reject/group-duplicate-id",
        "multilevel/reject/node-in-two-groups",
        "redis_cluster/reject/end-below-start",
        "redis_cluster/reject/overlap",
        "token_ring/load/reject-token-duplicate-across-nodes",
        "token_ring/load/reject-token-duplicate-in-node",
        "trie/load/reject-node-owns-two-leaves",
        "trie/load/reject-out-of-order",
        "trie/load/reject-overlap",
        "trie/load/reject-repeated-prefix",
        "vitess/load/reject-empty-range",
        "vitess/load/reject-open-end-not-last",
        "vitess/load/reject-out-of-order",
        "vitess/load/reject-overlap",
        "vitess/load/reject-reversed-range",
        "vshard/load/ranges-overlap",
        "tables/shop/load/reject-table-in-two-families",
    ],
    # Tables that must cover the whole space, or every node, or have exactly one of a kind.
    "coverage": [
        "cassandra/load/reject-node-without-tokens",
        "id_groups/load/no-writable-group",
        "id_groups/load/two-writable-groups",
        "redis_cluster/reject/gap",
        "redis_cluster/reject/short",
        "trie/load/reject-gap",
        "trie/load/reject-gap-first",
        "trie/load/reject-node-owns-no-leaf",
        "vitess/load/reject-gap",
        "vitess/load/reject-missing-end",
        "vitess/load/reject-missing-start",
        "vshard/load/ranges-gap",
    ],
    # Computed from the content: the checksum, primes, sums of bit widths, a timestamp
    # overflow, a keyspace id past 8 bytes.
    "computed": [
        "dictionary/load/checksum-edited-map",
        "dictionary/load/checksum-mismatch",
        "ids/load/epoch-overflows",
        "ids/load/snowflake-65-bits",
        "maglev/load/reject-not-prime",
        "maglev/load/reject-not-prime-odd",
        "vitess/load/reject-past-8-bytes",
    ],
    # A directory entry or override with a hash tag can never match a tagged lookup.
    "hash tags": [
        "directory/reject/directory-tagged-entry-never-matches",
        "directory/reject/vbucket-override-tagged-never-matches",
    ],
    # A partition key rule that cuts a hot key's salt off, or a directory entry that is not
    # its own partition key: the rule applied to another field's values.
    "partition keys": [
        "partition_key/pk-refused/directory-entry-never-matches",
        "partition_key/pk-refused/hot-key-salt-cut-off",
        "tenants/saas/load/reject-whole-key-tenants",
        "tenants/saas/load/reject-hot-key-of-a-tenant",
    ],
    # An index's strategy refuses node weights the document's strategy accepts.
    "weights by index": ["indexes/load/reject-weighted-node-for-jump"],
    # An explicit token's node must keep weight 1 (the tokens map is keyed by node id).
    "weights by id": ["token_ring/load/reject-weight-on-explicit-node"],
    # Totals over the whole document (ring points, tokens); the schema bounds each entry only.
    "totals": ["errors/load/ring-total-points-over-limit", "token_ring/load/reject-total-tokens-over-limit"],
}
CANNOT = {name: reason for reason, names in CANNOT_EXPRESS.items() for name in names}


def loads(document: Any) -> bool:
    """Whether the core loads `document` as the JSON text a store holds (as text: a Python
    float like 1.0 stays a float, where a dict would hand it over as JavaScript does, 1)."""
    try:
        shardroute.Router(json.dumps(document))
    except shardroute.ShardrouteError:
        return False
    return True


def valid(document: Any) -> bool:
    return VALIDATOR.is_valid(document)


def schema_errors(validator: jsonschema.protocols.Validator, instance: Any) -> str:
    errors = sorted(validator.iter_errors(instance), key=lambda error: list(error.absolute_path))
    return "; ".join(f"{'/'.join(map(str, error.absolute_path))}: {error.message[:300]}" for error in errors)


def committed_documents() -> Iterator[tuple[str, Any]]:
    for path in sorted((ROOT / "docs" / "examples").glob("*.json")):
        if not path.name.endswith(".plan.json"):
            yield f"docs/examples/{path.name}", json.loads(path.read_text())
    for file, vectors in VECTORS:
        for name, document in vectors["topologies"].items():
            yield f"{file}:{name}", document
        for case in vectors["cases"]:
            if case["op"] == "load" and "topology_json" in case and "error" not in case["expect"]:
                yield case["name"], json.loads(case["topology_json"])


def refused_documents() -> Iterator[tuple[str, Any]]:
    """The load cases that expect an error, whose text is a JSON document."""
    for _, vectors in VECTORS:
        for case in vectors["cases"]:
            if case["op"] == "load" and "topology_json" in case and "error" in case["expect"]:
                try:
                    yield case["name"], json.loads(case["topology_json"])
                except ValueError:
                    continue  # not JSON at all: nothing for a schema to say


def operations() -> Iterator[tuple[str, Any, Any]]:
    """(name, topology, operation) of every vector `apply` that succeeds."""
    for _, vectors in VECTORS:
        for case in vectors["cases"]:
            if case["op"] == "apply" and "error" not in case["expect"]:
                topology = (
                    vectors["topologies"][case["topology"]] if "topology" in case else json.loads(case["topology_json"])
                )
                yield case["name"], topology, case["operation"]


# The generators' fields follow the id layout and its cell directory; no vector issues
# tickets by cell, so these two do.
TICKETS_BY_CELL = {
    "format": "shardroute/1",
    "epoch": 1,
    "nodes": [{"id": "t0"}, {"id": "t1"}],
    "strategy": {"type": "id_bits", "layout": "ticket", "servers": 4, "shards": ["t0", "t1"], "cells": {"0": 0, "1": 1, "2": 0, "3": 1}},
}
EXTRA_OPERATIONS = [
    ("tickets-by-cell", TICKETS_BY_CELL, {"op": "id_bits_tickets", "cell": 2, "auto_increment": 7, "count": 3}),
    ("reserve-block-by-cell", TICKETS_BY_CELL, {"op": "id_bits_reserve_block", "cell": 3, "auto_increment": 7, "block_size": 5}),
]

DOCUMENTS = list(committed_documents())
REFUSED = list(refused_documents())
OPERATIONS = list(operations()) + EXTRA_OPERATIONS


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_there_are_documents_of_every_strategy_and_operation() -> None:
    types = {document["strategy"]["type"] for _, document in DOCUMENTS}
    assert types == set(SCHEMA["$defs"]["strategy"]["properties"]["type"]["enum"])
    ops = {operation["op"] for _, _, operation in OPERATIONS}
    assert ops == set(SCHEMA["$defs"]["operation"]["properties"]["op"]["enum"])
    assert len(DOCUMENTS) > 150 and len(REFUSED) > 200


@pytest.mark.parametrize("name,document", DOCUMENTS, ids=[name for name, _ in DOCUMENTS])
def test_every_committed_document_matches_the_schema_and_loads(name: str, document: Any) -> None:
    assert valid(document), f"{name}: {schema_errors(VALIDATOR, document)}"
    assert loads(document), name


@pytest.mark.parametrize("name,document", REFUSED, ids=[name for name, _ in REFUSED])
def test_the_schema_refuses_what_the_core_refuses_where_it_can_say_so(name: str, document: Any) -> None:
    assert not loads(document), f"{name}: the vector expects a refusal"
    if name in CANNOT:
        assert valid(document), f"{name} is listed under {CANNOT[name]!r} but the schema refuses it: drop it from the list"
    else:
        assert not valid(document), f"{name}: the schema accepts a document the core refuses"


def test_the_cannot_express_list_names_only_vector_cases() -> None:
    names = {name for name, _ in REFUSED}
    assert set(CANNOT) <= names, sorted(set(CANNOT) - names)


@pytest.mark.parametrize(
    "document",
    [
        # An integral float: valid JSON Schema integer, refused by the core.
        {"format": "shardroute/1", "epoch": 1.0, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}},
        {"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "ring", "points_per_node": 8.0}},
        # A prime table size.
        {"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "maglev", "table_size": 100}},
        # A node id over 1024 bytes of UTF-8 (fewer characters).
        {"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "é" * 600}], "strategy": {"type": "jump"}},
        # The snowflake widths must sum to at most 64.
        {"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}],
         "strategy": {"type": "id_bits", "layout": "snowflake", "timestamp_bits": 50, "shard_bits": 10, "sequence_bits": 12}},
        # Exactly one writable group.
        {"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}],
         "strategy": {"type": "id_groups", "groups": [{"id": "g", "intervals": [[0, 10]], "shards": [{"node": "a"}]}]}},
    ],
)
def test_rules_beyond_a_schema_are_refused_by_the_core_only(document: Any) -> None:
    """Each is a rule of the list above that no vector exercises: the schema accepts it,
    the core refuses it (so the list is a list of real gaps, not of guesses)."""
    assert valid(document), schema_errors(VALIDATOR, document)
    assert not loads(document)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update({"$schema": 1}),
        lambda d: d.update(hashing={"function": "crc32", "seed": "000102030405060708090a0b0c0d0e0f"}),
        lambda d: d.update(hashing={"seed": "0001"}),
        lambda d: d.update(placement={"db": "db_{shard:00}"}),
        lambda d: d.update(placement={"db": "db_{shards}"}),
        lambda d: d.update(hot_keys={"keys": {"k": 0}}),
        lambda d: d.update(hot_keys={"separator": "#"}),
        lambda d: d["nodes"][0].update(weight=0),
        lambda d: d["nodes"][0].update(id=""),
        lambda d: d.update(strategy={"type": "ring", "points_per_node": 0}),
        lambda d: d.update(strategy={"type": "ring", "points_per_node": 65537}),
        lambda d: d.update(strategy={"type": "ketama"}),
        lambda d: d.update(strategy={"type": "id_bits", "layout": "ticket"}),
        lambda d: d.update(strategy={"type": "id_bits", "layout": "shard_high", "servers": 2}),
        lambda d: d.update(strategy={"type": "hash_range", "boundaries": ["18446744073709551616"]}),
        lambda d: d.update(strategy={"type": "token_ring", "tokens": {"n0": ["9223372036854775808"]}}),
        lambda d: d.update(strategy={"type": "multilevel", "groups": [{"id": "g", "nodes": ["n0", "n0"]}]}),
        lambda d: d.update(strategy={"type": "vbucket", "states": {"0": "migrating"}}),
    ],
)
def test_the_schema_refuses_more_documents_the_core_refuses(change: Any) -> None:
    document = {"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "n0"}, {"id": "n1"}], "strategy": {"type": "jump"}}
    assert valid(document) and loads(document)
    change(document)
    assert not loads(document), "the core accepts the change: not a refusal to test"
    assert not valid(document), "the schema accepts a document the core refuses"


def test_u64_and_token_strings_stop_exactly_at_their_range() -> None:
    u64 = jsonschema.Draft202012Validator({"$ref": SCHEMA["$id"] + "#/$defs/u64"}, registry=REGISTRY)
    token = jsonschema.Draft202012Validator({"$ref": SCHEMA["$id"] + "#/$defs/token"}, registry=REGISTRY)
    for value, inside in [(0, True), (2**64 - 1, True), (2**64, False), (-1, False)]:
        assert u64.is_valid(value) is inside and u64.is_valid(str(value)) is inside, value
    assert u64.is_valid("000018446744073709551615") and not u64.is_valid("+1") and not u64.is_valid("")
    for value, inside in [(-(2**63), True), (2**63 - 1, True), (2**63, False), (-(2**63) - 1, False), (0, True)]:
        assert token.is_valid(value) is inside and token.is_valid(str(value)) is inside, value


# Walking a document beside its schema: which closed object schema applies at each place.


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    assert ref.startswith("#"), ref
    target: Any = SCHEMA
    for part in filter(None, ref[1:].split("/")):
        target = target[part]
    return resolve(target)


def applicable(node: dict[str, Any], instance: Any) -> Iterator[dict[str, Any]]:
    """Every subschema of `node` that applies to `instance`: the node itself, its
    references, its `allOf` entries and `then` branches whose `if` holds, and the
    `anyOf`/`oneOf` branches the instance matches."""
    node = resolve(node)
    yield node
    for entry in node.get("allOf", []):
        yield from applicable(entry, instance)
    if "if" in node and VALIDATOR.evolve(schema=node["if"]).is_valid(instance):
        yield from applicable(node["then"], instance)
    for branch in node.get("anyOf", []) + node.get("oneOf", []):
        if VALIDATOR.evolve(schema=branch).is_valid(instance):
            yield from applicable(branch, instance)


DEF_NAMES = {id(definition): name for name, definition in SCHEMA["$defs"].items()} | {id(SCHEMA): "(document)"}


def sites(node: dict[str, Any], instance: Any, path: list[Any]) -> Iterator[tuple[list[Any], set[str], str]]:
    """(path, closed field names, schema name) of every object in `instance` whose schema is closed."""
    nodes = list(applicable(node, instance))
    if isinstance(instance, dict):
        closed = [n for n in nodes if n.get("additionalProperties") is False]
        if closed:
            fields = set().union(*(set(n["properties"]) for n in closed))
            yield path, fields, DEF_NAMES.get(id(closed[0]), "(inline)")
        for name, value in instance.items():
            for n in nodes:
                child = n.get("properties", {}).get(name)
                if child is None and isinstance(n.get("additionalProperties"), dict):
                    child = n["additionalProperties"]
                if child is not None:
                    yield from sites(child, value, [*path, name])
                    break
    elif isinstance(instance, list):
        for index, value in enumerate(instance):
            for n in nodes:
                prefix = n.get("prefixItems", [])
                child = prefix[index] if index < len(prefix) else n.get("items")
                if child is not None:
                    yield from sites(child, value, [*path, index])
                    break


def distinct_sites(node: dict[str, Any], instance: Any) -> Iterator[tuple[list[Any], set[str], str]]:
    """`sites`, at most two per object schema: a dictionary of 16384 chains has as many
    node entries as it has nodes, and each says the same."""
    seen: dict[str, int] = {}
    for path, fields, schema_name in sites(node, instance, []):
        seen[schema_name] = seen.get(schema_name, 0) + 1
        if seen[schema_name] <= 2:
            yield path, fields, schema_name


def render(path: list[Any]) -> str:
    """A path as the core writes it: `strategy.groups[1].nodes`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def at(document: Any, path: list[Any]) -> Any:
    for part in path:
        document = document[part]
    return document


def unknown_field_list(error: shardroute.ShardrouteError) -> tuple[str, set[str]]:
    match = UNKNOWN_FIELD.match(error.message)
    assert match, error.message
    return match["path"], {field.strip() for field in match["fields"].split(",")}


VISITED: set[str] = set()
# The id_bits generators take the fields of the topology's layout (shard or cell; local,
# or timestamp_ms and sequence, or sequence): the union over the vectors' cases.
BY_LAYOUT: dict[str, set[str]] = {"op_id_bits_compose": set(), "op_id_bits_tickets": set(), "op_id_bits_reserve_block": set()}


@pytest.mark.parametrize("name,document", DOCUMENTS, ids=[name for name, _ in DOCUMENTS])
def test_every_object_has_exactly_the_fields_the_parser_accepts(name: str, document: Any) -> None:
    checked = 0
    for path, fields, schema_name in distinct_sites(SCHEMA, document):
        VISITED.add(schema_name)
        mutated = copy.deepcopy(document)
        at(mutated, path)[UNKNOWN] = 1
        with pytest.raises(shardroute.ShardrouteError) as refused:
            shardroute.Router(mutated)
        where, accepted = unknown_field_list(refused.value)
        assert where == render([*path, UNKNOWN]), refused.value.message
        assert accepted == fields, f"{render(path)} ({schema_name}): parser {sorted(accepted)}, schema {sorted(fields)}"
        assert not valid(mutated), f"{render(path)}: the schema accepts an unknown field"
        checked += 1
    assert checked >= 3, name


@pytest.mark.parametrize("name,topology,operation", OPERATIONS, ids=[name for name, _, _ in OPERATIONS])
def test_every_vector_operation_matches_the_schema_with_the_fields_the_parser_accepts(
    name: str, topology: Any, operation: Any
) -> None:
    assert OPERATION.is_valid(operation), f"{name}: {schema_errors(OPERATION, operation)}"
    operation_schema = {"$ref": "#/$defs/operation"}
    for path, fields, schema_name in distinct_sites(operation_schema, operation):
        if path[:1] == ["to"]:
            continue  # a whole document, walked by the document tests
        VISITED.add(schema_name)
        mutated = copy.deepcopy(operation)
        at(mutated, path)[UNKNOWN] = 1
        with pytest.raises(shardroute.ShardrouteError) as refused:
            shardroute.apply(topology, mutated)
        where, accepted = unknown_field_list(refused.value)
        assert where == render(["operation", *path, UNKNOWN]), refused.value.message
        if schema_name in BY_LAYOUT:
            # The fields depend on the topology's id layout: each case's are some of the
            # schema's, and all cases together must give all of them.
            assert accepted <= fields, f"{name}: parser {sorted(accepted)}, schema {sorted(fields)}"
            BY_LAYOUT[schema_name] |= accepted
        else:
            assert accepted == fields, f"{name} {render(path)} ({schema_name}): parser {sorted(accepted)}, schema {sorted(fields)}"
        assert not OPERATION.is_valid(mutated)


def test_every_closed_object_of_the_schema_was_checked_against_the_parser() -> None:
    """Runs after the two walks above (pytest keeps file order)."""
    closed = {name for name, definition in SCHEMA["$defs"].items() if definition.get("additionalProperties") is False}
    closed.add("(document)")
    assert closed <= VISITED, f"never met in a committed document or vector operation: {sorted(closed - VISITED)}"
    for schema_name, fields in BY_LAYOUT.items():
        assert fields == set(SCHEMA["$defs"][schema_name]["properties"]), schema_name


@pytest.mark.parametrize("name,document", DOCUMENTS, ids=[name for name, _ in DOCUMENTS])
def test_an_optional_field_set_to_null_is_accepted_where_the_core_accepts_it(name: str, document: Any) -> None:
    for path, fields, _ in distinct_sites(SCHEMA, document):
        for field in sorted(fields):
            mutated = copy.deepcopy(document)
            at(mutated, path)[field] = None
            if loads(mutated):
                assert valid(mutated), f"{render([*path, field])} = null: {schema_errors(VALIDATOR, mutated)}"


def test_the_document_types_are_what_this_schema_gives() -> None:
    """bindings-py's shardroute/documents.py and the document types of bindings-js/index.d.ts."""
    checked = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "document-types.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stderr
