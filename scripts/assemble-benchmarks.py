#!/usr/bin/env python3
"""Assembles docs/benchmarks.md from the fragments the benchmark scripts of `make bench`
write to target/bench/*.md (rust, python, scatter plans, node, browser, the WASM package at the edge,
the Redis Cluster clients, topology distribution, strategies, dictionary, the worst allowed documents and the
planner per size, hash flooding), in that order,
then the hand-written bench/targets-not-met.md (what was tried for the targets not met)."""
import datetime
import pathlib
import platform
import subprocess

root = pathlib.Path(__file__).resolve().parent.parent
fragments = root / "target" / "bench"
order = ["rust", "python", "scatter", "node", "browser", "wasm-edge", "redis-python", "redis-node", "distribution", "strategies", "dictionary", "limits", "flooding"]
cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "unknown")
cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root).stdout.strip()
parts = [
    "# Benchmarks\n",
    "Produced by `make bench` (it installs the pinned peers, runs every benchmark and writes this file). "
    "Numbers are medians of several runs measured side by side in one run per language on a shared, noisy "
    "machine: compare the ratios, not the absolute nanoseconds.\n",
    f"- machine: {cpu}, {cores} cores, {platform.system()} {platform.release()}\n"
    f"- date: {datetime.date.today().isoformat()}, commit {commit}\n",
]
missing = []
for name in order:
    path = fragments / f"{name}.md"
    if path.exists():
        parts.append(path.read_text().rstrip() + "\n")
    else:
        missing.append(name)
if missing:
    parts.append("Not measured in this run: " + ", ".join(missing) + ".\n")
notes = root / "bench" / "targets-not-met.md"
if notes.exists():
    parts.append(notes.read_text().rstrip() + "\n")
(root / "docs" / "benchmarks.md").write_text("\n".join(parts))
print(f"wrote docs/benchmarks.md ({len(order) - len(missing)} of {len(order)} fragments)")
