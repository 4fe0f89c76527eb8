"""Side by side on one real Redis Cluster: shardroute.redis.ClusterClient and redis-py's
own cluster client (`redis.cluster.RedisCluster`), same workload, passes interleaved.

* routing: what each client computes to pick a node for a key (no I/O): ours is
  `Router.node` and a dict lookup, redis-py's `keyslot` and
  `nodes_manager.get_node_from_slot`;
* steady: single-threaded GET/SET over keys already written, ops/s;
* reshard: the same while `redis-cli --cluster reshard` moves 1,000 slots, ops/s and
  the redirects each client followed;
* refresh: rebuilding the table from `CLUSTER SHARDS` (ours: the reply, the import, a
  new router) and applying one MOVED (`Router.moved`).

Writes target/bench/redis-python.md (a fragment of docs/benchmarks.md) and prints it.
Run: .venv/bin/python examples/redis-cluster/bench.py (part of `make bench`).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import redis
import redis.cluster

from shardroute.redis import ClusterClient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from cluster import Cluster  # noqa: E402

KEYS = int(os.environ.get("SHARDROUTE_BENCH_REDIS_KEYS", "20000"))
PASSES = int(os.environ.get("SHARDROUTE_BENCH_PASSES", "5"))


def per_op(seconds: float, ops: int) -> float:
    return seconds / ops


def timed(run: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    ops = run()
    return time.perf_counter() - start, ops


def interleaved(ours: Callable[[], int], theirs: Callable[[], int]) -> tuple[list[float], list[float]]:
    """Seconds per op of each side over PASSES passes, alternating which goes first."""
    a: list[float] = []
    b: list[float] = []
    for round_ in range(PASSES):
        sides = [(ours, a), (theirs, b)] if round_ % 2 == 0 else [(theirs, b), (ours, a)]
        for run, samples in sides:
            seconds, ops = timed(run)
            samples.append(per_op(seconds, ops))
    return a, b


def main() -> None:
    keys = [f"bench:{i}" for i in range(KEYS)]
    rows: list[str] = []
    with Cluster() as cluster:
        seed = cluster.seed()
        ours = ClusterClient([seed.address])
        theirs = redis.cluster.RedisCluster(host="127.0.0.1", port=seed.port)
        for key in keys:
            ours.set(key, key)

        # Routing alone.
        router = ours.router
        address_of = ours.address_of

        def route_ours() -> int:
            for key in keys:
                address_of(router.node(key))
            return len(keys)

        manager = theirs.nodes_manager

        def route_theirs() -> int:
            for key in keys:
                manager.get_node_from_slot(theirs.keyslot(key))
            return len(keys)

        a, b = interleaved(route_ours, route_theirs)
        rows.append(row("routing only: key → node (no I/O)", a, b, "ns"))

        # Steady GET/SET.
        def work(client: Any) -> Callable[[], int]:
            def run() -> int:
                for i, key in enumerate(keys):
                    if i % 2:
                        client.get(key)
                    else:
                        client.set(key, key)
                return len(keys)

            return run

        ours.stats.reset()
        a, b = interleaved(work(ours), work(theirs))
        rows.append(row("steady GET/SET, one thread", a, b, "µs", ops_per_second=True))
        steady_redirects = ours.stats.moved + ours.stats.ask

        # While slots move: each client runs alone during its own reshard of 1,000 slots.
        reshard_rows = []
        # redis-py keeps no count of the redirects it follows: count the MovedError and
        # AskError replies its parser makes while its run is the only one.
        seen = {"MOVED": 0, "ASK": 0}
        for kind, error in (("MOVED", redis.exceptions.MovedError), ("ASK", redis.exceptions.AskError)):
            original = error.__init__

            def counting(self: Any, *args: Any, _kind: str = kind, _original: Any = original, **kwargs: Any) -> None:
                seen[_kind] += 1
                _original(self, *args, **kwargs)

            setattr(error, "__init__", counting)
        for name, client in (("shardroute", ours), ("redis-py RedisCluster", theirs)):
            seen.update(MOVED=0, ASK=0)
            primaries = cluster.primaries()
            if isinstance(client, ClusterClient):
                client.stats.reset()
            done = threading.Event()
            ops = 0

            def loop(client: Any = client) -> None:
                nonlocal ops
                i = 0
                while not done.is_set():
                    key = keys[i % len(keys)]
                    client.set(key, key) if i % 2 else client.get(key)
                    i += 1
                ops = i

            worker = threading.Thread(target=loop)
            start = time.perf_counter()
            worker.start()
            cluster.reshard(primaries[0], primaries[1], 1000)
            done.set()
            worker.join()
            seconds = time.perf_counter() - start
            redirects = (
                f"{client.stats.moved} MOVED, {client.stats.ask} ASK, {client.stats.refreshes} refreshes"
                if isinstance(client, ClusterClient)
                else f"{seen['MOVED']} MOVED, {seen['ASK']} ASK (replies parsed)"
            )
            reshard_rows.append(f"| {name} | {ops / seconds:,.0f} | {redirects} |")

        # Refresh and MOVED.
        refresh = []
        for _ in range(PASSES):
            start = time.perf_counter()
            ours.refresh()
            refresh.append(time.perf_counter() - start)
        moved = []
        slot_owner = ours.address_of(ours.router.node(keys[0]))
        for slot in range(200):
            start = time.perf_counter()
            ours.router.moved(slot, slot_owner)
            moved.append(time.perf_counter() - start)
        theirs.close()
        ours.close()
        node_lines = node_bench(cluster, keys)

    lines = [
        "## Redis Cluster client (Python)",
        "",
        f"Command: `.venv/bin/python examples/redis-cluster/bench.py` ({KEYS:,} keys, {PASSES} interleaved passes, "
        f"redis-py {redis.__version__}, a 3 + 3 node redis-server cluster on loopback). Medians.",
        "",
        "| workload | shardroute.redis | redis-py RedisCluster | ratio (ours / theirs) |",
        "|---|---|---|---|",
        *rows,
        "",
        f"Steady state: {steady_redirects} redirects for shardroute (counted from the replies).",
        "",
        "While `redis-cli --cluster reshard` moves 1,000 slots (each client alone, GET/SET in a loop):",
        "",
        "| client | ops/s | redirects |",
        "|---|---|---|",
        *reshard_rows,
        "",
        f"Refresh from `CLUSTER SHARDS` (round trip, import, new router): median {statistics.median(refresh) * 1e3:.2f} ms; "
        f"`Router.moved` (one slot to a new master, new router): median {statistics.median(moved) * 1e6:.1f} µs.",
        "",
    ]
    out = os.path.join(ROOT, "target", "bench")
    os.makedirs(out, exist_ok=True)
    for name, part in (("redis-python", lines), ("redis-node", node_lines)):
        text = "\n".join(part)
        print(text)
        with open(os.path.join(out, f"{name}.md"), "w") as fragment:
            fragment.write(text)


def node_bench(cluster: Cluster, keys: list[str]) -> list[str]:
    """The same comparison in Node (bench.mjs): shardroute/redis next to ioredis' Cluster."""
    seeds = cluster.seed().address
    command = ["node", os.path.join(HERE, "bench.mjs"), "--seeds", seeds, "--keys", str(len(keys))]
    done = subprocess.run([*command, "--passes", str(PASSES), "--mode", "steady"], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    rows = [
        row("routing only: key → node (no I/O)", [result["routing"][0]], [result["routing"][1]], "ns"),
        row("steady GET/SET, one connection at a time (await)", [result["steady"][0]], [result["steady"][1]], "µs", ops_per_second=True),
    ]
    reshard_rows = []
    for name, client in (("shardroute/redis", "ours"), ("ioredis Cluster", "ioredis")):
        process = subprocess.Popen([*command, "--mode", "loop", "--client", client], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert process.stdin is not None and process.stdout is not None
        assert json.loads(process.stdout.readline())["event"] == "ready"
        primaries = cluster.primaries()
        cluster.reshard(primaries[0], primaries[1], 1000)
        process.stdin.write("stop\n")
        process.stdin.close()
        loop = json.loads(process.stdout.readline())
        process.wait(timeout=60)
        refreshes = f", {loop['refreshes']} refreshes" if loop["refreshes"] is not None else ""
        reshard_rows.append(f"| {name} | {loop['ops'] / loop['seconds']:,.0f} | {loop['moved']} MOVED, {loop['ask']} ASK{refreshes} |")
    version = json.load(open(os.path.join(HERE, "node_modules", "ioredis", "package.json")))["version"]
    return [
        "## Redis Cluster client (Node)",
        "",
        f"Command: the same (`bench.mjs`, run by `bench.py`; {len(keys):,} keys, ioredis {version}, Node {platform_node()}). Medians.",
        "",
        "| workload | shardroute/redis | ioredis Cluster | ratio (ours / theirs) |",
        "|---|---|---|---|",
        *rows,
        "",
        "While `redis-cli --cluster reshard` moves 1,000 slots (each client alone, GET/SET in a loop; ioredis' redirects counted at its error handler):",
        "",
        "| client | ops/s | redirects |",
        "|---|---|---|",
        *reshard_rows,
        "",
    ]


def platform_node() -> str:
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


def row(what: str, ours: list[float], theirs: list[float], unit: str, ops_per_second: bool = False) -> str:
    a, b = statistics.median(ours), statistics.median(theirs)
    scale = 1e9 if unit == "ns" else 1e6
    cells = f"{a * scale:.1f} {unit}/op", f"{b * scale:.1f} {unit}/op"
    if ops_per_second:
        cells = f"{a * scale:.1f} µs/op ({1 / a:,.0f} ops/s)", f"{b * scale:.1f} µs/op ({1 / b:,.0f} ops/s)"
    return f"| {what} | {cells[0]} | {cells[1]} | {a / b:.2f}x |"


if __name__ == "__main__":
    main()
