"""Node on one real Redis Cluster, side by side in one run (issue 37): shardroute/redis with
the session's auto-pipelining on and off, next to ioredis' ``Cluster`` with and without
``enableAutoPipelining``, and Valkey GLIDE (``@valkey/valkey-glide``).

Rows: steady GET/SET one at a time and with 50 commands in flight (ops/s); GET/SET while
slots move, with the redirects each client reports and the errors it raised; then what the
session adds per command with auto-pipelining (the steady path's ``send`` +
``pipelineQueued``, and the ``pipelineTake`` / ``pipelineDone`` of a 50-command write
shared by its commands; no I/O).

While slots move, the clients take 100 ms slices in turn during the same scripted
migrations (examples/redis-cluster/migration.py, shared with that bench's Node rows; the
clients' loop is examples/redis-cluster/bench_clients.mjs).

The cluster (3 primaries + 3 replicas of Debian's redis-server on 127.0.0.1) is started
and stopped by examples/redis-cluster/cluster.py; the steady passes and the counts are
examples/redis-cluster/bench.py's (interleaved, the order rotating, medians); the clients
run in bench/node/redis_cluster.mjs. Prints a Markdown fragment and writes it to
target/bench/redis-node-pipeline.md.

    .venv/bin/python bench/node/redis_cluster.py

SHARDROUTE_BENCH_REDIS_KEYS (default 5,000) and SHARDROUTE_BENCH_PASSES (default 5) size
it, as for the Redis bench.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("redis_cluster_bench", os.path.join(ROOT, "examples", "redis-cluster", "bench.py"))
assert _spec is not None and _spec.loader is not None
common: Any = sys.modules.setdefault("redis_cluster_bench", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(common)
import migration  # noqa: E402 - examples/redis-cluster, on the path once bench.py is loaded

SCRIPT = os.path.join(ROOT, "bench", "node", "redis_cluster.mjs")
ON, OFF, IOREDIS, IOREDIS_AP, GLIDE = "on", "off", "ioredis", "ioredis-ap", "glide"
COLUMNS = {
    ON: "ours, auto-pipelining on", OFF: "ours, auto-pipelining off", IOREDIS: "ioredis Cluster",
    IOREDIS_AP: "ioredis Cluster, `enableAutoPipelining`", GLIDE: "GLIDE",
}
PEERS = (IOREDIS, IOREDIS_AP, GLIDE)


def row(what: str, medians: dict[str, float], failures: dict[str, str]) -> str:
    """`medians`: seconds per op. The last cell: each of ours' speed over the best peer's (> 1: ours is faster)."""
    cells = [common.cell(medians[name], "ops") if name in medians else "failed (below)" if name in failures else "—"
             for name in COLUMNS]
    peers = {name: medians[name] for name in PEERS if name in medians}
    ratios = []
    if peers:
        best = min(peers, key=lambda name: peers[name])
        ratios = [f"{ours}: {peers[best] / medians[ours]:.2f}x" for ours in (ON, OFF) if ours in medians]
        ratios.append(f"(vs {COLUMNS[best]})")
    return f"| {what} | {' | '.join(cells)} | {' '.join(ratios) or '—'} |"


def main() -> None:
    keys = [f"bench:{i}" for i in range(common.KEYS)]
    started = time.monotonic()
    lines = [f"| workload | {' | '.join(COLUMNS.values())} | ours vs best peer |", "|---" * (len(COLUMNS) + 2) + "|"]
    notes: list[str] = []
    with common.Cluster() as cluster:
        command = ["node", SCRIPT, "--seeds", cluster.seed().address, "--keys", str(len(keys))]
        done = subprocess.run([*command, "--passes", str(common.PASSES), "--mode", "steady"], stdout=subprocess.PIPE,
                              text=True, check=True)
        result = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
        failures = dict(result["failures"])
        lines.append(row("steady GET/SET, one at a time (await each)", result["rows"]["sequential"], failures))
        lines.append(row(f"steady GET/SET, {common.TASKS} in flight", result["rows"]["inflight"], failures))

        moves = migration.Migration(cluster)
        names = [name for name in COLUMNS if name not in failures]
        for inflight in (1, common.TASKS):
            windows = migration.sliced_windows(cluster, moves, [*command, "--inflight", str(inflight)], names, failures,
                                               common.Windows())
            what = "one at a time" if inflight == 1 else f"{common.TASKS} in flight"
            lines.append(row(f"GET/SET {what} {migration.WHILE_MOVING}", windows.medians(), failures))
            described = {name: windows.describe(name) for name in windows.rates}
            lines.append(f"| redirects and errors during those slices ({what}, summed) | "
                         f"{' | '.join(described.get(name, '—') for name in COLUMNS)} | |")
        notes = [f"- {COLUMNS[name]} failed: `{' '.join(text.split())[:500]}`" for name, text in failures.items()]
    minutes = (time.monotonic() - started) / 60
    session = result["session"]["on"]
    versions = result["versions"]
    fragment = [
        "## Redis Cluster clients (Node): auto-pipelining",
        "",
        f"Date: {datetime.date.today().isoformat()}. Command: `.venv/bin/python bench/node/redis_cluster.py` "
        f"(SHARDROUTE_BENCH_REDIS_KEYS={common.KEYS}, SHARDROUTE_BENCH_PASSES={common.PASSES}; {minutes:.1f} min). "
        f"{common.KEYS:,} keys, {common.PASSES} interleaved passes (the order rotates each pass), medians; a 3 + 3 node "
        f"redis-server {common.server_version()} cluster on loopback, sharing the machine's cores with the clients; "
        f"{common.TASKS} in flight = {common.TASKS} async loops over one client. {moves.described()} Versions: "
        f"ioredis {versions['ioredis']}, @valkey/valkey-glide {versions['glide']}, Node {versions['node']}.",
        "",
        *lines,
        "",
        f"What the session adds per command with auto-pipelining (`send` + `pipelineQueued`, and a "
        f"{common.TASKS}-command write's `pipelineTake` + `pipelineDone` shared by its commands; no I/O; CPU time): "
        f"{session * 1e9:,.0f} ns.",
        *([""] + notes if notes else []),
        "",
    ]
    text = "\n".join(fragment)
    print(text)
    out = os.path.join(ROOT, "target", "bench")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "redis-node-pipeline.md"), "w") as file:
        file.write(text)


if __name__ == "__main__":
    main()
