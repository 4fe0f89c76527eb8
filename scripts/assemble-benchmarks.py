#!/usr/bin/env python3
"""Writes the two benchmark pages from the fragments the benchmark scripts of `make bench`
write to target/bench/*.md (rust, python, scatter plans, node, browser, the WASM package at
the edge, C, Go and Java through the C ABI, the Redis Cluster clients, topology
distribution, the PostgreSQL example's rebalance, strategies, dictionary, the worst allowed documents and the planner per
size, hash flooding), in that order:

- docs/benchmarks-detail.md: every fragment as it is, every figure of the run;
- docs/benchmarks.md: the short page, made from the detail: per area (each `## ` section,
  under the same heading, so links to either page's sections hold), the command that
  measures it, its target tables as measured (or, for an area without targets, its
  first table) and a link to its figures; and a table of every area's targets met.

bench/targets-not-met.md (written by hand: what is not met now and why) is linked, not
copied.

    python3 scripts/assemble-benchmarks.py            # fragments -> both pages (make bench)
    python3 scripts/assemble-benchmarks.py --summary  # docs/benchmarks.md again from the detail page
"""
import datetime
import pathlib
import platform
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
fragments = root / "target" / "bench"
detail_page = root / "docs" / "benchmarks-detail.md"
summary_page = root / "docs" / "benchmarks.md"
order = ["rust", "python", "scatter", "node", "browser", "wasm-edge", "ffi", "redis-python", "redis-python-pipeline", "redis-node", "redis-node-pipeline", "distribution", "postgres", "strategies", "dictionary", "limits", "flooding"]

# The command of an area whose fragment names none (by the start of its heading).
COMMANDS = {
    "Node.js and WASM": "`node bench/node/bench.mjs`",
    "WASM in headless Chromium": "`node bench/browser/bench.mjs`",
    "Redis Cluster clients (Node): auto-pipelining": "`.venv/bin/python bench/node/redis_cluster.py` (it runs `bench/node/redis_cluster.mjs`)",
    "Redis Cluster clients (Node)": "`.venv/bin/python examples/redis-cluster/bench.py` (it runs `examples/redis-cluster/bench.mjs`)",
    "Strategies side by side": "`cargo run --release -p shardroute-conformance --bin compare-strategies`",
    "Dictionary planner": "`cargo run --release -p shardroute-conformance --bin bench-dictionary`",
}
NOT_MET = re.compile(r"\bnot met\b")
MET = re.compile(r"(?<!not )\bmet\b")


def assemble_detail() -> None:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "unknown")
    cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root).stdout.strip()
    parts = [
        "# Benchmarks: every figure\n",
        "Produced by `make bench` (it installs the pinned peers, runs every benchmark and writes this file "
        "and its summary, [benchmarks.md](benchmarks.md)). Numbers are medians of several runs measured side by "
        "side in one run per language on a shared, noisy machine: compare the ratios, not the absolute "
        "nanoseconds. What is not met, and why: [bench/targets-not-met.md](../bench/targets-not-met.md).\n",
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
    detail_page.write_text("\n".join(parts))
    print(f"wrote docs/benchmarks-detail.md ({len(order) - len(missing)} of {len(order)} fragments)")


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def tables(text: str) -> list[list[str]]:
    """Every Markdown table of `text`, as its lines."""
    found, current = [], []
    for line in text.split("\n"):
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def is_target_table(table: list[str]) -> bool:
    header = [cell.strip().lower() for cell in table[0].strip("|").split("|")]
    return any(cell.startswith("target") for cell in header) or any(MET.search(row) or NOT_MET.search(row) for row in table[2:])


def verdicts(table: list[str]) -> tuple[int, int]:
    """(met, judged) over the body rows' cells."""
    met = judged = 0
    for row in table[2:]:
        for cell in row.strip("|").split("|"):
            if NOT_MET.search(cell):
                judged += 1
            elif MET.search(cell):
                met += 1
                judged += 1
    return met, judged


def summarize() -> None:
    text = detail_page.read_text()
    head, *sections = re.split(r"^## ", text, flags=re.M)
    header_lines = [line for line in head.split("\n") if line.startswith("- machine:") or line.startswith("- date:")]
    glance, bodies = [], []
    for section in sections:
        heading, _, body = section.partition("\n")
        link = f"[figures](benchmarks-detail.md#{anchor(heading)})"
        command = next((c for start, c in COMMANDS.items() if heading.startswith(start)), None)
        if command is None:
            match = re.search(r"[Cc]ommand: (`[^`]+`)", body)
            command = match.group(1) if match else "`make bench`"
        found = tables(body)
        targets = [table for table in found if is_target_table(table)]
        shown = targets or found[:1]
        met = judged = 0
        for table in targets:
            m, j = verdicts(table)
            met, judged = met + m, judged + j
        glance.append(f"| [{heading}](#{anchor(heading)}) | {f'{met} of {judged}' if judged else 'no targets'} | {command} |")
        lines = [f"## {heading}", "", f"Command: {command}. " + (f"Targets met: {met} of {judged}. " if judged else "")
                 + f"All of this area's {link}.", ""]
        for table in shown:
            lines += table + [""]
        bodies.append("\n".join(lines))
    parts = [
        "# Benchmarks\n",
        "How fast shardroute is, per area: each area's targets as the last `make bench` measured them, "
        "with the command that measures that area alone. Every figure, the peers and their versions, the "
        "machine's load: [benchmarks-detail.md](benchmarks-detail.md). What is not met now, and why: "
        "[bench/targets-not-met.md](../bench/targets-not-met.md). Both pages are written by `make bench` "
        "(`scripts/assemble-benchmarks.py`); earlier runs are in git's history. A shared, noisy 2-core "
        "machine: compare the ratios, not the absolute nanoseconds.\n",
        "\n".join(header_lines) + "\n",
        "| area | targets met | command |\n|---|---|---|\n" + "\n".join(glance) + "\n",
        *bodies,
    ]
    summary_page.write_text("\n".join(parts).rstrip("\n") + "\n")
    print(f"wrote docs/benchmarks.md ({len(sections)} areas)")


if __name__ == "__main__":
    if "--summary" not in sys.argv[1:]:
        assemble_detail()
    summarize()
