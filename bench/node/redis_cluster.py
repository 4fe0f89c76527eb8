"""Node on one real Redis Cluster, side by side in one run (issue 37): shardroute/redis with
the session's auto-pipelining on and off, next to ioredis' ``Cluster`` with and without
``enableAutoPipelining``, and Valkey GLIDE (``@valkey/valkey-glide``).

Rows: steady GET/SET one at a time and with 50 commands in flight (ops/s); GET/SET while
slots move, with the redirects each client reports and the errors it raised; then what the
session adds per command with auto-pipelining (the steady path's ``send`` +
``pipelineQueued``, and the ``pipelineTake`` / ``pipelineDone`` of a 50-command write
shared by its commands; no I/O).

While slots move, every client (a process each, every key read once) runs in SLICE_MS
slices, one client at a time, in turn, during the same migration: WINDOW_ROUNDS migrations
per mode, the first client rotating each, so every client samples the same load at the
same moments; its rate in a migration is its ops over its slices' time, and the row is the
median over the migrations. The migration is scripted (``Migration``): WINDOW_SLOTS slots
of one primary at MIGRATION_RATE slots a second, each moved as ``redis-cli --cluster
reshard`` moves one (``SETSLOT IMPORTING`` / ``MIGRATING``, ``MIGRATE`` of its keys,
``SETSLOT NODE`` on every primary), round the primaries. The old way, each client alone
in its own three ``redis-cli --cluster reshard`` windows, let a window's length and load
decide most of a median (1,290-2,989 ops/s for one client in five windows).

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
import threading
import time
from collections import Counter
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("redis_cluster_bench", os.path.join(ROOT, "examples", "redis-cluster", "bench.py"))
assert _spec is not None and _spec.loader is not None
common: Any = sys.modules.setdefault("redis_cluster_bench", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(common)

SCRIPT = os.path.join(ROOT, "bench", "node", "redis_cluster.mjs")
ON, OFF, IOREDIS, IOREDIS_AP, GLIDE = "on", "off", "ioredis", "ioredis-ap", "glide"
WINDOW_SLOTS = 1000  # slots one migration moves
MIGRATION_RATE = 400  # slots a second: a migration is 2.5 s
WINDOW_ROUNDS = 5  # migrations per mode, each shared by every client in slices
SLICE_MS = 100  # one client's turn while a migration runs
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


class Migration:
    """Moves WINDOW_SLOTS slots per call from one primary to the next (0 → 1, 1 → 2, ...),
    each as ``redis-cli --cluster reshard`` moves a slot, at MIGRATION_RATE slots a second:
    slot i starts i / MIGRATION_RATE seconds after the first (at once when behind)."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.done = 0
        self.behind = 0.0  # the most any migration's last slot ended after its scheduled time (s)
        self.lengths: list[float] = []  # each migration's length (s)

    def next(self) -> float:
        """One migration; its length in seconds."""
        import redis  # redis-py, as examples/redis-cluster/bench.py uses it

        primaries = self.cluster.primaries()
        source, target = primaries[self.done % len(primaries)], primaries[(self.done + 1) % len(primaries)]
        self.done += 1
        connect = {node.id: redis.Redis(host="127.0.0.1", port=node.port) for node in primaries}
        try:
            mine = [int(slot) for slot in self.owned(connect[source.id], source.id)][:WINDOW_SLOTS]
            others = [node.id for node in primaries if node.id not in (source.id, target.id)]
            start = time.monotonic()
            for i, slot in enumerate(mine):
                wait = start + i / MIGRATION_RATE - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                connect[target.id].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source.id)
                connect[source.id].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target.id)
                while keys := connect[source.id].execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
                    connect[source.id].execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *keys)
                for node in (target.id, source.id, *others):
                    connect[node].execute_command("CLUSTER", "SETSLOT", slot, "NODE", target.id)
            seconds = time.monotonic() - start
            self.behind = max(self.behind, seconds - (len(mine) - 1) / MIGRATION_RATE)
            self.lengths.append(seconds)
        finally:
            for connection in connect.values():
                connection.close()
        self.cluster.wait_until("the migration settles", self.cluster.healthy)
        return seconds

    @staticmethod
    def owned(connection: Any, node_id: str) -> list[int]:
        """The slots `node_id` owns, in order (its view, from CLUSTER SHARDS, as a RESP2 flat
        list or as redis-py's parsed dict)."""

        def fields(value: Any) -> dict[str, Any]:
            pairs = zip(value[::2], value[1::2]) if isinstance(value, list) else value.items()
            return {key.decode() if isinstance(key, bytes) else key: item for key, item in pairs}

        def text(value: Any) -> str:
            return value.decode() if isinstance(value, bytes) else str(value)

        slots: list[int] = []
        for shard in map(fields, connection.execute_command("CLUSTER", "SHARDS")):
            nodes = [fields(node) for node in shard["nodes"]]
            if any(text(node["id"]) == node_id and text(node["role"]) == "master" for node in nodes):
                ranges = [int(bound) for bound in shard["slots"]]
                for low, high in zip(ranges[::2], ranges[1::2]):
                    slots.extend(range(low, high + 1))
        return sorted(slots)


def error_replies(connections: list[Any]) -> Counter[str]:
    """As examples/redis-cluster/bench.py's `error_replies` (`INFO errorstats` of every
    node, by kind), over open redis-py connections: cheap enough between two slices."""
    total: Counter[str] = Counter()
    for connection in connections:
        for name, value in connection.info("errorstats").items():
            if name.startswith("errorstat_"):
                count = value.get("count", 0) if isinstance(value, dict) else str(value).split("count=", 1)[1].split(",", 1)[0]
                total[name.removeprefix("errorstat_")] += int(count)
    return total


def interleaved_windows(cluster: Any, migration: Migration, command: list[str], names: list[str],
                        failures: dict[str, str]) -> Any:
    """Every client (`names`, one process each, every key read once) runs GET/SET in slices
    of SLICE_MS, one client at a time, in turn, while a migration runs; WINDOW_ROUNDS
    migrations, the first client rotating each. Each client's rate in a migration is its
    ops over its slices' time; the servers' error replies are read around each slice."""
    import redis  # redis-py

    processes: dict[str, subprocess.Popen[str]] = {}
    for name in names:
        process = subprocess.Popen([*command, "--mode", "loop", "--client", name], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
        ready = common.json_line(process)
        if ready["event"] == "failed":
            failures[name] = ready["error"]
            process.wait(timeout=60)
        else:
            processes[name] = process
    nodes = [redis.Redis(host="127.0.0.1", port=node.port) for node in cluster.live()]
    rounds: list[dict[str, tuple[int, float, Counter[str]]]] = []
    try:
        for round_ in range(WINDOW_ROUNDS):
            order = [name for name in names if name in processes]
            order = order[round_ % len(order):] + order[: round_ % len(order)]
            got: dict[str, tuple[int, float, Counter[str]]] = {}
            moving = threading.Thread(target=migration.next)
            moving.start()
            while moving.is_alive():
                for name in order:
                    if not moving.is_alive():
                        break
                    process = processes[name]
                    assert process.stdin is not None
                    before = error_replies(nodes)
                    process.stdin.write(f"run {SLICE_MS}\n")
                    process.stdin.flush()
                    done = common.json_line(process)
                    ops, seconds, server = got.get(name, (0, 0.0, Counter()))
                    got[name] = (ops + done["ops"], seconds + done["seconds"], server + (error_replies(nodes) - before))
            moving.join()
            rounds.append(got)
        ends = {}
        for name, process in processes.items():
            assert process.stdin is not None
            process.stdin.write("stop\n")
            process.stdin.close()
            ends[name] = common.json_line(process)
            process.wait(timeout=60)
    finally:
        for connection in nodes:
            connection.close()
        for process in processes.values():
            if process.poll() is None:
                process.kill()
    windows = common.Windows()
    for name, end in ends.items():
        redirects = None if end["moved"] is None else {"MOVED": end["moved"], "ASK": end["ask"]}
        if redirects is not None and end["refreshes"] is not None:
            redirects["refreshes"] = end["refreshes"]
        taken = [got[name] for got in rounds if name in got]
        for i, (ops, seconds, server) in enumerate(taken):
            last = i == len(taken) - 1
            windows.add(name, ops, seconds, server, (redirects if last else {}) if redirects is not None else None,
                        Counter(end["errors"]) if last else Counter())
    return windows


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

        migration = Migration(cluster)
        names = [name for name in COLUMNS if name not in failures]
        for inflight in (1, common.TASKS):
            windows = interleaved_windows(cluster, migration, [*command, "--inflight", str(inflight)], names, failures)
            what = "one at a time" if inflight == 1 else f"{common.TASKS} in flight"
            lines.append(row(f"GET/SET {what} while slots move ({WINDOW_ROUNDS} migrations of {WINDOW_SLOTS:,} slots, "
                             f"{SLICE_MS} ms slices in turn; median of the migrations)", windows.medians(), failures))
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
        f"{common.TASKS} in flight = {common.TASKS} async loops over one client. While slots move, the clients take "
        f"{SLICE_MS} ms slices in turn, one at a time (the first rotating each migration), during {WINDOW_ROUNDS} "
        f"scripted migrations per mode of {WINDOW_SLOTS:,} slots at {MIGRATION_RATE:,} slots/s each (SETSLOT, MIGRATE, "
        f"SETSLOT NODE on every primary, as `redis-cli --cluster reshard` moves a slot; round the primaries; "
        f"{min(migration.lengths):.1f}-{max(migration.lengths):.1f} s each, the last slot at most {migration.behind:.1f} s "
        f"behind the pace); a client's rate in a migration is its ops over its slices' time. Versions: "
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
