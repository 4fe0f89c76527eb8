"""What every Python test of shardroute builds its inputs with: topology documents
(`doc`) and the keys and files of the conformance vectors (`vector_key`,
`vector_files`). Shared by bindings-py/tests (on the path through `pythonpath` in
bindings-py/pyproject.toml, and `mypy_path` for mypy) and conformance/oracles (through
its conftest.py). No routing logic: documents and keys only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import shardroute

VECTORS = Path(__file__).resolve().parents[1] / "vectors"


def doc(
    nodes: int | Iterable[str | Mapping[str, Any]],
    strategy: str | Mapping[str, Any],
    *,
    epoch: int = 1,
    hashing: Mapping[str, Any] | None = None,
    **fields: Any,
) -> Any:
    """A topology document, as `json.load` would give it (typed `Any`, as json.load's is:
    tests build documents the core must refuse as well, so they are not
    `shardroute.Topology`; bindings-py/tests/typing/ checks the typed documents).

    `nodes` is a count (ids `n0`, `n1`, ...) or a list of node ids and node objects
    (`{"id", "address", "weight", ...}`) in order. `strategy` is a strategy object, or
    the bare type name of a strategy without parameters. `hashing` is left out when
    None; `fields` are further top-level fields (`placement`, `hot_keys`, ...).

        doc(3, "jump") == {"format": "shardroute/1", "epoch": 1,
                           "nodes": [{"id": "n0"}, {"id": "n1"}, {"id": "n2"}],
                           "strategy": {"type": "jump"}}
    """
    if isinstance(nodes, str):
        raise TypeError(f"nodes: a count or a list of ids, not the string {nodes!r}")
    if isinstance(nodes, int):
        nodes = [f"n{i}" for i in range(nodes)]
    document: dict[str, Any] = {"format": "shardroute/1", "epoch": epoch}
    if hashing is not None:
        document["hashing"] = dict(hashing)
    document["nodes"] = [{"id": node} if isinstance(node, str) else dict(node) for node in nodes]
    document["strategy"] = {"type": strategy} if isinstance(strategy, str) else dict(strategy)
    document.update(fields)
    return document


class MalformedVector(Exception):
    """A vector that cannot be run (an unknown op or key form)."""


def vector_key(key: Mapping[str, Any]) -> shardroute.Key:
    """A vector key (`{"utf8" | "hex" | "u64" | "utf16": value}`) as the Python value a
    user would pass: text, bytes, or an int (possibly out of range, for the binding to
    reject); UTF-16 code units become text, valid surrogate pairs one astral character
    and lone surrogates kept."""
    if not isinstance(key, Mapping) or len(key) != 1:
        raise MalformedVector(f"a key needs exactly one form: {key!r}")
    ((form, value),) = key.items()
    if form == "utf8":
        return str(value)
    if form == "hex":
        return bytes.fromhex(value)
    if form == "u64":
        return int(value)
    if form == "utf16":
        units = b"".join(int(unit).to_bytes(2, "little") for unit in value)
        return units.decode("utf-16-le", "surrogatepass")
    raise MalformedVector(f"unknown key form {form!r}")


def vector_files() -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every file of conformance/vectors, in name order, parsed."""
    for path in sorted(VECTORS.glob("*.json")):
        file: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        yield path, file
