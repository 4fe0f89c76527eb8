#!/usr/bin/env python3
"""The worst documents the limits allow, built by every binding, and the planner per size
(`make bench`: target/bench/limits.md; docs/security-and-limits.md quotes it).

Each measurement runs in a fresh process so that its peak RSS (`ru_maxrss` from
os.wait4) is its own: the Rust core through `bench-limits build FILE`, Python
(`shardroute.Router(text)`), the Node addon and the WASM package under Node
(`new Router(text)`). The process prints its build time; the table gives the median of
RUNS runs and the largest peak RSS, baseline included (the interpreter and the loaded
package with no router: the "empty" row). Planner rows run `plan_rebalance` through the
Rust core (`bench-limits plan`) and Python (`shardroute.apply`).

Usage: .venv/bin/python bench/limits/bench.py [--runs 3] [--out target/bench/limits.md]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
BENCH_LIMITS = ROOT / "target" / "release" / "bench-limits"
PYTHON = ROOT / ".venv" / "bin" / "python"
NODE_ADDON = ROOT / "bindings-node" / "index.js"
WASM_NODE = ROOT / "bindings-wasm" / "pkg" / "node" / "shardroute_wasm.js"

PY_BUILD = """
import sys, time, json, shardroute
text = open(sys.argv[1]).read() if sys.argv[1] != '-' else None
start = time.perf_counter()
if text is not None:
    shardroute.Router(text)
print(json.dumps({"ms": (time.perf_counter() - start) * 1000}))
"""
JS_BUILD = """
const { readFileSync } = require('node:fs');
const { Router } = require(process.argv[1]);
const file = process.argv[2];
const text = file === '-' ? null : readFileSync(file, 'utf8');
const start = process.hrtime.bigint();
if (text !== null) new Router(text);
console.log(JSON.stringify({ ms: Number(process.hrtime.bigint() - start) / 1e6 }));
"""
PY_PLAN = """
import sys, time, json, shardroute
vbuckets, count, remove, replicas = map(int, sys.argv[1:5])
nodes = [{"id": f"n{i}", "address": f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}:11211", "zone": f"z{i % 3}"}
         for i in range(count)]
doc = {"format": "shardroute/1", "epoch": 1, "nodes": nodes,
       "strategy": {"type": "vbucket", "vbuckets": vbuckets, "replicas": replicas}}
op = {"op": "plan_rebalance", "remove": [f"n{i}" for i in range(remove)]}
start = time.perf_counter()
try:
    moves = len(shardroute.apply(doc, op)["moves"])
    print(json.dumps({"ms": (time.perf_counter() - start) * 1000, "moves": moves}))
except shardroute.ShardrouteError as err:
    print(json.dumps({"ms": (time.perf_counter() - start) * 1000, "error": err.code}))
"""

BINDINGS = {
    "Rust": lambda file: [str(BENCH_LIMITS), "build", file] if file != "-" else None,
    "Python": lambda file: [str(PYTHON), "-c", PY_BUILD, file],
    "Node addon": lambda file: ["node", "-e", JS_BUILD, str(NODE_ADDON), file],
    "WASM (Node)": lambda file: ["node", "-e", JS_BUILD, str(WASM_NODE), file],
}

# (vbuckets, nodes, removed, replicas): the cases, then the budget's edge.
PLANS = [
    (16_384, 1_000, 100, 1),
    (65_536, 5_000, 900, 1),
    (262_144, 1_000, 900, 0),
    (131_072, 10_000, 9_000, 1),
    (65_536, 65_536, 60_000, 0),
    (1_048_576, 10_000, 9_000, 0),
    (1_048_576, 65_536, 1, 0),
]


def measure(command: list[str]) -> tuple[dict, int]:
    """Runs `command`; its printed JSON and its peak RSS in bytes."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        stderr = process.stderr.read().decode() if process.stderr else ""
        if status != 0:
            raise SystemExit(f"{command[:3]} failed: {stderr}")
        out.seek(0)
        return json.loads(out.read().decode().strip().splitlines()[-1]), usage.ru_maxrss * 1024


def mib(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MiB"


def repeated(command: list[str], runs: int) -> tuple[float, int, dict]:
    results = [measure(command) for _ in range(runs)]
    return statistics.median(r["ms"] for r, _ in results), max(rss for _, rss in results), results[0][0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "target" / "bench" / "limits.md"))
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "shardroute-conformance", "--bin", "bench-limits"],
                   cwd=ROOT, check=True)
    lines = [
        "## Limits: the worst allowed document, and the planner per size",
        "",
        f"Command: `.venv/bin/python bench/limits/bench.py --runs {args.runs}` (the Rust side: "
        "`conformance/src/bin/bench-limits.rs`). Each cell runs in a fresh process: build time is the median of "
        f"{args.runs} runs of `Router(document text)`, peak RSS the largest `ru_maxrss` of the process (the "
        "runtime and the package included: see the `empty` row). The documents are the largest each family's "
        "budgets let through (docs/security-and-limits.md).",
        "",
    ]
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run([str(BENCH_LIMITS), "documents", directory], check=True)
        families = sorted(pathlib.Path(directory).glob("*.json"))
        lines += ["| document | JSON size | " + " | ".join(f"{name} build, peak RSS" for name in BINDINGS) + " |",
                  "|---|---|" + "---|" * len(BINDINGS)]
        rows = [("empty (runtime + package, no router)", "-", "-")]
        rows += [(f"`{path.stem}`", f"{path.stat().st_size / 1e6:.1f} MB", str(path)) for path in families]
        for label, size, file in rows:
            cells = []
            for name, command in BINDINGS.items():
                argv = command(file)
                if argv is None:  # the Rust binary has no runtime to weigh
                    cells.append("-")
                    continue
                ms, rss, first = repeated(argv, 1 if file == "-" else args.runs)
                if "error" in first:
                    raise SystemExit(f"{label} refused by {name}: {first}")
                cells.append(f"{ms:,.0f} ms, {mib(rss)}" if file != "-" else mib(rss))
            lines.append(f"| {label} | {size} | " + " | ".join(cells) + " |")
            print(lines[-1], file=sys.stderr)
    lines += [
        "",
        "`plan_rebalance` removing nodes from a vbucket dictionary (`MAX_PLAN_SLOTS` = 262,144 chain slots; "
        "past it `limit_exceeded` before any work):",
        "",
        "| vbuckets × replicas+1 | nodes | removed | Rust time, peak RSS | Python time, peak RSS | moves |",
        "|---|---|---|---|---|---|",
    ]
    for vbuckets, count, remove, replicas in PLANS:
        plan = [str(vbuckets), str(count), str(remove), str(replicas)]
        rust_ms, rust_rss, rust = repeated([str(BENCH_LIMITS), "plan", *plan], args.runs)
        py_ms, py_rss, python = repeated([str(PYTHON), "-c", PY_PLAN, *plan], args.runs)
        outcome = f"`{rust['error']}`" if "error" in rust else f"{rust['moves']:,}"
        if ("error" in rust) != ("error" in python):
            raise SystemExit(f"Rust and Python disagree on {plan}: {rust} {python}")
        lines.append(f"| {vbuckets:,} × {replicas + 1} | {count:,} | {remove:,} | {rust_ms:,.1f} ms, {mib(rust_rss)} "
                     f"| {py_ms:,.1f} ms, {mib(py_rss)} | {outcome} |")
        print(lines[-1], file=sys.stderr)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
