"""The typed documents of `shardroute.documents` (TypedDicts made from
docs/topology.schema.json by scripts/document-types.py): the examples of
typed_documents.py are real documents the core loads, the names are importable at run
time, and mypy rejects a wrong field (and accepts the same source with it corrected)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import mypy.api
import pytest
import typed_documents

import shardroute
from shardroute import documents

HERE = Path(__file__).resolve().parent


def test_the_typed_examples_are_documents_the_core_loads() -> None:
    routers = typed_documents.routers()
    assert [router.epoch for router in routers] == [12, 1, 13, 1, 13]
    for document in [typed_documents.RING, typed_documents.IDS]:
        shardroute.Router(document)
    # Its checksum is null (read as absent), which the types leave out: loaded as JSON.
    assert shardroute.Router(json.dumps(typed_documents.DICTIONARY)).epoch == 2**64 - 1
    assert shardroute.hash_key("k", typed_documents.HASHING) == shardroute.hash_key("k", '{"function": "crc32", "integers": "identity"}')


def test_the_types_are_importable_at_run_time() -> None:
    assert shardroute.Topology is documents.Topology and shardroute.Operation is documents.Operation
    assert documents.Topology.__required_keys__ == {"format", "epoch", "nodes", "strategy"}
    assert {"$schema", "hashing", "placement", "hot_keys", "checksum"} <= documents.Topology.__optional_keys__
    assert documents.RingStrategy.__required_keys__ == {"type"}


# Each wrong source, what mypy says of it, and the field that makes it wrong: with the field
# corrected, the same source type-checks (so the error is the field's). In a TypedDict
# context mypy names the key; as an argument typed by a union (str | Topology) it names
# the argument only.
WRONG = [
    (
        """
        from shardroute.documents import TopologyNode
        node: TopologyNode = {"id": "a", "wieght": 2}
        """,
        'Extra key "wieght" for TypedDict "TopologyNode"',
        ("wieght", "weight"),
    ),
    (
        """
        from shardroute.documents import RingStrategy
        strategy: RingStrategy = {"type": "ring", "points": 160}
        """,
        'Extra key "points" for TypedDict "RingStrategy"',
        ('"points"', '"points_per_node"'),
    ),
    (
        """
        from shardroute import Router
        Router({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a", "wieght": 2}], "strategy": {"type": "ring"}})
        """,
        'Argument 1 to "Router" has incompatible type',
        ("wieght", "weight"),
    ),
    (
        """
        from shardroute import apply
        apply('{}', {"op": "remove_node", "node": "a"})
        """,
        'Argument 2 to "apply" has incompatible type',
        ('"node"', '"id"'),
    ),
]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """mypy --strict's report on each wrong source, its corrected one, and typed_documents.py,
    by module name: one mypy run for all (each run loads numpy's stubs again)."""
    folder = tmp_path_factory.mktemp("typing")
    sources = {"typed_documents": (HERE / "typed_documents.py").read_text()}
    for index, (source, _, fix) in enumerate(WRONG):
        sources[f"wrong_{index}"] = textwrap.dedent(source)
        sources[f"corrected_{index}"] = textwrap.dedent(source).replace(*fix)
    for name, source in sources.items():
        (folder / f"{name}.py").write_text(source)
    stdout, stderr, _ = mypy.api.run(
        ["--strict", "--cache-dir", str(folder / "cache"), *(str(folder / f"{name}.py") for name in sources)]
    )
    assert not stderr, stderr
    lines = stdout.splitlines()
    return {name: "\n".join(line for line in lines if line.startswith(str(folder / f"{name}.py:"))) for name in sources}


@pytest.mark.parametrize("index", range(len(WRONG)))
def test_mypy_rejects_a_wrong_field(index: int, reports: dict[str, str]) -> None:
    _, message, _ = WRONG[index]
    assert message in reports[f"wrong_{index}"], reports[f"wrong_{index}"]
    assert reports[f"corrected_{index}"] == "", reports[f"corrected_{index}"]


def test_mypy_accepts_the_typed_examples(reports: dict[str, str]) -> None:
    assert reports["typed_documents"] == ""
