"""scripts/api-table.py: over small fake .pyi and .d.ts files, it writes the side-by-side table
(callback signatures included), and `--check` fails on each kind of violation of the
per-language rule, on a listed violation that is fixed, and on a stale docs/api.md."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api-table.py")

PYI = '''
from typing import NamedTuple, TypedDict

class Stats(TypedDict):
    total: int
    max_over_mean: float

class WritePlan(NamedTuple):
    node: str
    fence_epoch: int

class Router:
    def __new__(cls, topology: str) -> Router: ...
    def route(self, key: str) -> int: ...
    def stats(self, keys: list[str]) -> Stats: ...
    def write_plan(self, key: str) -> WritePlan: ...
    def salted_keys(self, key: str) -> list[tuple[str, int]]: ...
    @property
    def epoch(self) -> int: ...

def parse_address(address: str) -> tuple[str, int]: ...

__all__ = ["Router", "Stats", "WritePlan", "parse_address"]
'''

DTS = '''
// A comment with a snake_name in it, and one /* with_underscores */ too.
export interface Stats {
  total: number;
  plan: WritePlan;
  /** Documented. */
  maxOverMean: number;
}

export interface WritePlan {
  node: string;
  fenceEpoch: bigint;
}

export interface Endpoint {
  host: string;
  port: number;
}

export interface FollowerOptions {
  /** After a refusal. */
  onRefused?: ((follower: Router, offered: Stats) => void) | null;
}

export declare class Router {
  constructor(topology: string);
  route(key: string): number;
  stats(keys: readonly string[]): Stats;
  writePlan(key: string): WritePlan;
  saltedKeys(key: string): Array<[string, number]>;
  call(op: { op: string }): { call: number; actions: string[] };
  get epoch(): bigint;
}

export declare function parseAddress(address: string): Endpoint;

// BEGIN document types: the topology format, whose names are the JSON's
export interface Topology {
  hot_keys?: Record<string, number>;
}
// END document types
'''

PY_SOURCES = "bindings-py/python/shardroute/__init__.pyi"
JS_SOURCES = "bindings-js/index.d.ts"


def tree(tmp_path: Path, pyi: str = PYI, dts: str = DTS, listed: str = "") -> Path:
    (tmp_path / "bindings-py/python/shardroute").mkdir(parents=True)
    (tmp_path / "bindings-js").mkdir(parents=True)
    (tmp_path / "scripts").mkdir()
    (tmp_path / PY_SOURCES).write_text(pyi)
    (tmp_path / JS_SOURCES).write_text(dts)
    (tmp_path / "scripts/api-violations.txt").write_text(listed)
    return tmp_path


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, SCRIPT, "--root", str(root), *args], capture_output=True, text=True,
                          check=False)


def generated(root: Path) -> Path:
    """Writes docs/api.md (allowed to report violations) and returns it."""
    run(root)
    return root / "docs/api.md"


def test_a_tree_that_follows_the_rule_passes_and_is_tabled(tmp_path: Path) -> None:
    root = tree(tmp_path)
    # parse_address returns a bare tuple where JS returns Endpoint: listed as debt.
    (root / "scripts/api-violations.txt").write_text("py-tuple shardroute:parse_address\n")
    doc = generated(root).read_text()
    result = run(root, "--check")
    assert result.returncode == 0, result.stderr
    assert "| `write_plan(key)` → `WritePlan` | `writePlan(key)`: `WritePlan` |" in doc
    assert "| `epoch: int` (property) | `epoch: bigint` (getter) |" in doc
    assert "| `fence_epoch: int` | `fenceEpoch: bigint` |" in doc  # a NamedTuple's fields beside the object's
    # The callback's signature comes from the .d.ts.
    assert "`FollowerOptions.onRefused` | `(follower: Router, offered: Stats) => void`" in doc
    # The known debt is stated.
    assert "py-tuple" in doc and "parse_address" in doc
    # The document types are a data format: hot_keys is not a violation.
    assert "hot_keys" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("old", "new", "violation"),
    [
        # A JS method in snake_case.
        ("  route(key: string): number;", "  route_key(key: string): number;", "js-name bindings-js/index.d.ts:Router.route_key"),
        # A JS returned field in snake_case.
        ("  maxOverMean: number;", "  max_over_mean: number;", "js-field bindings-js/index.d.ts:Stats.max_over_mean"),
        # A field of an object type written inline.
        ("{ call: number; actions: string[] }", "{ call_id: number; actions: string[] }",
         "js-field bindings-js/index.d.ts:Router.{call_id}"),
        # A JS parameter in snake_case.
        ("writePlan(key: string)", "writePlan(the_key: string)", "js-param bindings-js/index.d.ts:Router.writePlan(the_key)"),
        # A JS function in snake_case.
        ("function parseAddress(", "function parse_address(", "js-name bindings-js/index.d.ts:parse_address"),
    ],
)
def test_each_js_violation_is_caught(tmp_path: Path, old: str, new: str, violation: str) -> None:
    assert old in DTS
    root = tree(tmp_path, dts=DTS.replace(old, new), listed="py-tuple shardroute:parse_address\n")
    result = run(root, "--check")
    assert result.returncode == 1
    assert f"new violation: {violation}:" in result.stderr


@pytest.mark.parametrize(
    ("old", "new", "violation"),
    [
        # A Python method in camelCase.
        ("def route(self", "def routeKey(self", "py-name shardroute:Router.routeKey"),
        # A Python record's field in camelCase.
        ("    total: int\n", "    totalCount: int\n", "py-field shardroute:Stats.totalCount"),
        # A Python parameter in camelCase.
        ("def route(self, key: str)", "def route(self, theKey: str)", "py-param shardroute:Router.route(theKey)"),
        # A bare tuple where JS returns an object.
        ("def write_plan(self, key: str) -> WritePlan", "def write_plan(self, key: str) -> tuple[str, int]",
         "py-tuple shardroute:Router.write_plan"),
        # A returned record's field that is a bare tuple where the JS field is an object.
        ("    max_over_mean: float\n", "    max_over_mean: float\n    plan: tuple[str, int]\n",
         "py-tuple shardroute:Stats.plan"),
        # ... in a list too, and behind Optional.
        ("def stats(self, keys: list[str]) -> Stats", "def stats(self, keys: list[str]) -> tuple[int, float] | None",
         "py-tuple shardroute:Router.stats"),
    ],
)
def test_each_python_violation_is_caught(tmp_path: Path, old: str, new: str, violation: str) -> None:
    assert old in PYI
    root = tree(tmp_path, pyi=PYI.replace(old, new), listed="py-tuple shardroute:parse_address\n")
    result = run(root, "--check")
    assert result.returncode == 1
    assert f"new violation: {violation}:" in result.stderr


def test_a_tuple_where_js_has_a_tuple_too_is_not_a_violation(tmp_path: Path) -> None:
    # salted_keys: list[tuple[str, int]] beside Array<[string, number]>.
    root = tree(tmp_path, listed="py-tuple shardroute:parse_address\n")
    generated(root)
    result = run(root, "--check")
    assert result.returncode == 0, result.stderr
    assert "salted_keys" not in result.stderr


def test_a_listed_violation_that_is_fixed_fails_until_pruned(tmp_path: Path) -> None:
    fixed = PYI.replace("def parse_address(address: str) -> tuple[str, int]: ...",
                        "class Endpoint(NamedTuple):\n    host: str\n    port: int\n\n"
                        "def parse_address(address: str) -> Endpoint: ...")
    root = tree(tmp_path, pyi=fixed, listed="# debt\npy-tuple shardroute:parse_address\n")
    generated(root)
    result = run(root, "--check")
    assert result.returncode == 1
    assert "fixed but still listed in scripts/api-violations.txt: py-tuple shardroute:parse_address" in result.stderr
    pruned = run(root, "--prune")
    assert pruned.returncode == 0, pruned.stderr
    assert (root / "scripts/api-violations.txt").read_text() == "# debt\n"
    assert run(root, "--check").returncode == 0


def test_prune_never_adds_a_violation(tmp_path: Path) -> None:
    root = tree(tmp_path, listed="")
    assert run(root, "--prune").returncode == 1  # parse_address is new: reported, not listed
    assert (root / "scripts/api-violations.txt").read_text() == ""


def test_a_stale_table_fails(tmp_path: Path) -> None:
    root = tree(tmp_path, listed="py-tuple shardroute:parse_address\n")
    generated(root)
    assert run(root, "--check").returncode == 0
    # A new method on both sides, named by the rule: the table is stale until written again.
    (root / PY_SOURCES).write_text(PYI.replace("    @property", "    def fanout(self, key: str) -> int: ...\n    @property"))
    (root / JS_SOURCES).write_text(DTS.replace("  get epoch()", "  fanout(key: string): number;\n  get epoch()"))
    result = run(root, "--check")
    assert result.returncode == 1 and "docs/api.md is stale" in result.stderr
    doc = generated(root).read_text()
    assert "| `fanout(key)` → `int` | `fanout(key)`: `number` |" in doc
    assert run(root, "--check").returncode == 0
