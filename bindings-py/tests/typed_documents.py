"""Documents and operations written as `shardroute.documents` TypedDicts. mypy --strict
checks this file with the tests (bindings-py/pyproject.toml): the documents type-check, and
each line marked `# type: ignore[...]` must stay an error (strict mode reports an ignore
that is no longer needed). test_typed_documents.py loads every document in the core and
runs mypy on wrong documents to read its messages."""

from __future__ import annotations

import shardroute
from shardroute.documents import (
    AddNodeOperation,
    CouchbaseStrategy,
    Hashing,
    Operation,
    PlanRebalanceOperation,
    RingStrategy,
    Strategy,
    Topology,
    TopologyNode,
)

RING: Topology = {
    "$schema": "../../docs/topology.schema.json",
    "format": "shardroute/1",
    "epoch": 12,
    "hashing": {"function": "siphash-2-4", "hash_tag": "redis"},
    "nodes": [
        {"id": "cache-a", "address": "10.0.0.1:6379", "zone": "eu-1a"},
        {"id": "cache-b", "address": "10.0.0.2:6379", "zone": "eu-1b", "weight": 2},
    ],
    "strategy": {"type": "ring", "points_per_node": 160},
}

DICTIONARY: Topology = {
    "format": "shardroute/1",
    "epoch": "18446744073709551615",  # a u64 as a decimal string
    "nodes": [{"id": "a", "state": "active"}, {"id": "b", "state": "draining"}],
    "strategy": {
        "type": "vbucket",
        "vbuckets": 4,
        "map": [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]],
        "overrides": [{"key": {"utf8": "user:1"}, "vbucket": 3}],
    },
    "checksum": None,  # type: ignore[typeddict-item]  # null reads as absent, but typed documents omit it
}

COUCHBASE: CouchbaseStrategy = {"type": "couchbase", "map": [["a", None], ["b", "a"]]}

IDS: Topology = {
    "format": "shardroute/1",
    "epoch": 1,
    "nodes": [{"id": "db-a"}, {"id": "db-b"}],
    "strategy": {
        "type": "id_groups",
        "groups": [{"id": "g1", "intervals": [[0, 1000]], "shards": [{"node": "db-a"}, {"node": "db-b", "weight": 2}], "writable": True}],
        "tables": {"interval": 100, "rule": "orders_{n}"},
    },
    "placement": {"database": "db_{shard:02}"},
    "hot_keys": {"keys": {"celebrity": 8}},
}

DIRECTORY_STRATEGY: Strategy = {
    "type": "directory",
    "entries": [{"key": {"u64": 42}, "node": "db-a"}],
    "fallback": {"type": "jump"},
}

ADD: AddNodeOperation = {"op": "add_node", "node": {"id": "cache-c", "weight": 1.5}}
PLAN: Operation = {"op": "plan_rebalance", "add": [{"id": "c"}], "fail": ["b"], "weights": {"a": 2}}
HASHING: Hashing = {"function": "crc32", "integers": "identity"}

# Wrong documents: each line must be a type error.
WRONG_FIELD: TopologyNode = {"id": "a", "wieght": 2}  # type: ignore[typeddict-unknown-key]
WRONG_STRATEGY_FIELD: RingStrategy = {"type": "ring", "points": 160}  # type: ignore[typeddict-unknown-key]
WRONG_TYPE: RingStrategy = {"type": "ring", "points_per_node": "160"}  # type: ignore[typeddict-item]
WRONG_CONSTANT: Hashing = {"function": "md5"}  # type: ignore[typeddict-item]
MISSING_NODES: Topology = {"format": "shardroute/1", "epoch": 1, "strategy": {"type": "jump"}}  # type: ignore[typeddict-item]
WRONG_OPERATION_FIELD: PlanRebalanceOperation = {"op": "plan_rebalance", "adds": []}  # type: ignore[typeddict-unknown-key]


def routers() -> list[shardroute.Router]:
    """What the functions taking documents accept: typed documents and JSON text."""
    applied = shardroute.apply(RING, ADD)
    return [
        shardroute.Router(RING),
        shardroute.Router(IDS),
        shardroute.Router(applied["topology"]),
        shardroute.Router('{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}}'),
        shardroute.Router(RING).replace({**RING, "epoch": 13}),
    ]


def a_wrong_document_in_a_call() -> None:
    shardroute.Router({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "rign"}})  # type: ignore[arg-type]
    shardroute.apply(RING, {"op": "add_nodes", "node": {"id": "c"}})  # type: ignore[arg-type]
