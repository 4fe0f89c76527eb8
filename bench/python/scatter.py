"""Scatter/gather plans in Python: the cost of one plan call against issue 25's target
(at most 1 µs + 20 ns per shard in the plan), beside the per-shard loop a caller would
write without it (`shard_owner` for each shard).

Run: .venv/bin/python bench/python/scatter.py (part of `make bench`); writes
target/bench/scatter.md.
"""

from __future__ import annotations

import pathlib
import statistics
import timeit
from typing import Any, Callable

import shardroute

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "target" / "bench" / "scatter.md"
REPEATS = 7


def router(nodes: int, strategy: dict[str, Any]) -> shardroute.Router:
    return shardroute.Router({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": f"n{i}"} for i in range(nodes)],
                              "strategy": strategy})


def median_ns(call: Callable[[], object]) -> float:
    """Median ns per call over REPEATS runs, each long enough to time (~20 ms)."""
    number = max(1, int(0.02 / max(timeit.timeit(call, number=1), 1e-7)))
    return statistics.median(timeit.repeat(call, number=number, repeat=REPEATS)) / number * 1e9


def main() -> None:
    keys = [f"user:{i}" for i in range(100)]
    cases: list[tuple[str, shardroute.Router, Callable[[shardroute.Router], shardroute.ScatterPlan], bool]] = [
        ("every shard, jump, 10 nodes", router(10, {"type": "jump"}), lambda r: r.scatter_every(), True),
        ("every shard, jump, 100 nodes", router(100, {"type": "jump"}), lambda r: r.scatter_every(), True),
        ("every shard, vbucket 1,024 over 8 nodes", router(8, {"type": "vbucket", "vbuckets": 1024}),
         lambda r: r.scatter_every(), True),
        ("every shard, vbucket 1,024, replicas in turn", router(8, {"type": "vbucket", "vbuckets": 1024, "replicas": 1}),
         lambda r: r.scatter_every("replicas", 3), True),
        ("a range, key_range of 3", router(3, {"type": "key_range", "boundaries": [{"utf8": "g"}, {"utf8": "p"}]}),
         lambda r: r.scatter_range("h", "z"), True),
        ("100 keys, jump, 10 nodes", router(10, {"type": "jump"}), lambda r: r.scatter_keys(keys), False),
    ]
    lines = [
        "## Scatter/gather plans (Python)",
        "",
        f"Command: `.venv/bin/python bench/python/scatter.py` (part of `make bench`). Median of {REPEATS} timed runs "
        "per row. The loop row is what a caller would write without a plan: `shard_owner` for each shard. "
        "The target (issue 25) is one plan call at most 1 µs + 20 ns per shard in the plan.",
        "",
        "| plan | shards | one call | `shard_owner` per shard | target | |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for label, r, call, per_shard in cases:
        shards = len(call(r)["shards"])
        ours = median_ns(lambda: call(r))
        loop = median_ns(lambda: [r.shard_owner(shard) for shard in range(shards)]) if per_shard else None
        target = 1000 + 20 * shards
        verdict = "met" if ours <= target else "**not met**"
        loop_cell = "—" if loop is None else f"{loop:,.0f} ns"
        lines.append(f"| {label} | {shards:,} | {ours:,.0f} ns | {loop_cell} | {target:,} ns | {verdict} |")
    lines.append("")
    text = "\n".join(lines)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
