"""Python benchmark: shardroute next to the peers a Python user would otherwise pick,
timed in the same process and the same run, on the same keys.

Keys are "user:<i>" for i in 0..N (N = 1,000,000; SHARDROUTE_BENCH_KEYS overrides),
and the integers i for the integer-key rows. Every row is timed REPEATS times
(SHARDROUTE_BENCH_REPEATS, default 5), the rows interleaved round by round so that
machine noise hits shardroute and its peers alike; a row's figure is the median
ns/key of its runs (min-max beside it). A ratio is shardroute's median over the
peer's median (below 1.0: shardroute is faster).

One call per key is a list comprehension on both sides (the same loop cost). Each
shardroute row does the same operation as its peer, and the script checks that the
answers agree on the first keys before timing (jump on u64, redis slots, kafka
partitions).

Writes target/bench/python.md (a Markdown fragment for docs/benchmarks.md) and prints
it. Installs nothing: the peers are in bench/python/requirements.txt, the package is
built by bindings-py/build.sh.
"""

from __future__ import annotations

import datetime
import gc
import os
import platform
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import hashring
import jump
import mmh3
import numpy as np
import redis.crc
import uhashring
import xxhash
from kafka.partitioner.default import DefaultPartitioner

import shardroute

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "target" / "bench" / "python.md"
N = int(os.environ.get("SHARDROUTE_BENCH_KEYS", "1000000"))
REPEATS = int(os.environ.get("SHARDROUTE_BENCH_REPEATS", "5"))
SIZES = (10, 1000)
PEERS = ["uhashring", "hashring", "jump-consistent-hash", "mmh3", "xxhash", "kafka-python", "redis", "numpy"]


def topology(nodes: int, strategy: Dict[str, Any], hashing: Optional[Dict[str, Any]] = None) -> shardroute.Router:
    document: Dict[str, Any] = {
        "format": "shardroute/1",
        "epoch": 1,
        "nodes": [{"id": f"node-{i}"} for i in range(nodes)],
        "strategy": strategy,
    }
    if hashing:
        document["hashing"] = hashing
    return shardroute.Router(document)


class FakeCluster:
    """The cluster metadata kafka-python's partitioner reads: one topic, all partitions up."""

    def __init__(self, partitions: int) -> None:
        self.partitions = set(range(partitions))

    def topics(self) -> set[str]:
        return {"bench"}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return self.partitions

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return self.partitions


class Row:
    """One timed operation: `run` processes every key once."""

    def __init__(self, group: str, label: str, run: Callable[[], Any], ours: bool, short: str) -> None:
        self.group, self.label, self.run, self.ours, self.short = group, label, run, ours, short
        self.samples: List[float] = []

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def cell(self) -> str:
        return f"{self.median:,.1f} ({min(self.samples):,.1f}-{max(self.samples):,.1f})"


def build_rows(keys: List[str], ints: List[int]) -> List[Row]:
    rows: List[Row] = []

    def add(group: str, label: str, run: Callable[[], Any], ours: bool = False, short: str = "") -> None:
        rows.append(Row(group, label, run, ours, short or label.split(" ")[0]))

    xxh3 = xxhash.xxh3_64_intdigest
    jump_hash = jump.hash
    hash64 = mmh3.hash64
    # Reference floors: the loop alone, and the loop with one trivial C call.
    add("floor", "Python loop `[k for k in keys]`", lambda: [k for k in keys])
    add("floor", "one C call per key `[len(k) for k in keys]`", lambda: [len(k) for k in keys])

    for n in SIZES:
        # jump on u64 keys: the peer takes the integer as its hash, so shardroute's
        # topology says `"integers": "identity"` (the same operation).
        r = topology(n, {"type": "jump"}, {"integers": "identity"})
        assert [r.route(i) for i in ints[:10_000]] == [jump_hash(i, n) for i in ints[:10_000]]
        route = r.route
        add(f"jump-u64-{n}", "shardroute `route(int)`", lambda route=route: [route(i) for i in ints], True)
        add(f"jump-u64-{n}", "jump-consistent-hash `jump.hash(i, n)`", lambda n=n: [jump_hash(i, n) for i in ints])

        # String keys: shardroute's default hashing (SipHash-2-4) vs xxh3 or murmur3 + jump.
        for strategy in ({"type": "jump"}, {"type": "vbucket", "vbuckets": 1024}):
            name = strategy["type"]
            route = topology(n, strategy).route
            add(f"str-{n}", f"shardroute `route(str)`, {name}", lambda route=route: [route(k) for k in keys], True)
        add(
            f"str-{n}",
            "`jump.hash(xxh3_64(k.encode()), n)`",
            lambda n=n: [jump_hash(xxh3(k.encode()), n) for k in keys],
            short="xxh3+jump",
        )
        add(
            f"str-{n}",
            "`jump.hash(mmh3.hash64(k)[0], n)`",
            lambda n=n: [jump_hash(hash64(k, signed=False)[0], n) for k in keys],
            short="mmh3+jump",
        )

        # Consistent-hash rings: 160 points per node on every side.
        node = topology(n, {"type": "ring", "points_per_node": 160}).node
        add(f"ring-{n}", "shardroute `node(str)`", lambda node=node: [node(k) for k in keys], True)
        ids = [f"node-{i}" for i in range(n)]
        get_node = uhashring.HashRing(nodes=ids, vnodes=160).get_node
        add(f"ring-{n}", "uhashring `get_node(k)`", lambda get_node=get_node: [get_node(k) for k in keys])
        get_node2 = hashring.HashRing(ids).get_node
        add(f"ring-{n}", "hashring (PyPI) `get_node(k)`", lambda get_node=get_node2: [get_node(k) for k in keys])

        # Kafka's default partitioner (murmur2 of the key bytes).
        r = topology(3, {"type": "kafka", "partitions": n})
        partitioner, cluster = DefaultPartitioner(), FakeCluster(n)

        def kafka_python(partitioner: Any = partitioner, cluster: Any = cluster) -> List[int]:
            partition = partitioner.partition
            return [partition("bench", k, k.encode(), None, None, cluster) for k in keys]

        assert [r.route(k) for k in keys[:10_000]] == [
            partitioner.partition("bench", k, k.encode(), None, None, cluster) for k in keys[:10_000]
        ]
        route = r.route
        add(f"kafka-{n}", "shardroute `route(str)` (kafka profile)", lambda route=route: [route(k) for k in keys], True)
        add(f"kafka-{n}", "kafka-python `DefaultPartitioner.partition`", kafka_python)

    # Redis Cluster: CRC16 slot, then the slot's node from a 16384-entry table.
    r = topology(3, {"type": "redis_cluster"})
    assert [r.route(k) for k in keys[:10_000]] == [redis.crc.key_slot(k.encode()) for k in keys[:10_000]]
    # The even split redis-cli makes for 3 masters: 0-5460, 5461-10922, 10923-16383.
    starts = [round(i * 16384 / 3) for i in range(3)]
    table = [f"node-{sum(slot >= start for start in starts) - 1}" for slot in range(16384)]
    assert [r.node(k) for k in keys[:10_000]] == [table[redis.crc.key_slot(k.encode())] for k in keys[:10_000]]
    key_slot = redis.crc.key_slot
    node = r.node
    add("redis-3", "shardroute `node(str)` (redis_cluster profile)", lambda: [node(k) for k in keys], True)
    add("redis-3", "redis-py `table[key_slot(k.encode())]`", lambda: [table[key_slot(k.encode())] for k in keys])

    # Batches (no peer has one: the peer row is its one-call-per-key loop above).
    arr = np.array(ints, dtype=np.uint64)
    data = "".join(keys).encode()
    offsets = np.zeros(len(keys) + 1, dtype=np.uint32)
    np.cumsum([len(k) for k in keys], out=offsets[1:])
    for n in SIZES:
        r = topology(n, {"type": "jump"})
        add(f"batch-str-{n}", "shardroute `route_many(list[str])`, jump", lambda r=r: r.route_many(keys), True)
        add(f"batch-str-{n}", "shardroute `node_many(list[str])`, jump", lambda r=r: r.node_many(keys), True)
        add(f"batch-str-{n}", "shardroute `route_packed(bytes, offsets)`, jump", lambda r=r: r.route_packed(data, offsets), True)
        r = topology(n, {"type": "jump"}, {"integers": "identity"})
        assert np.array_equal(r.route_many(arr[:10_000]), np.array([jump_hash(i, n) for i in ints[:10_000]]))
        add(f"batch-u64-{n}", "shardroute `route_many(numpy uint64)`, jump", lambda r=r: r.route_many(arr), True)
        r = topology(n, {"type": "jump"})
        add(f"batch-u64-{n}", "same, keys hashed (SipHash-2-4, default)", lambda r=r: r.route_many(arr), True)
    return rows


def measure(rows: List[Row], count: int) -> None:
    for round_ in range(REPEATS):
        for row in rows:
            gc.collect()
            start = time.perf_counter_ns()
            row.run()
            row.samples.append((time.perf_counter_ns() - start) / count)
        print(f"round {round_ + 1}/{REPEATS} done", file=sys.stderr)


def find(rows: List[Row], group: str, prefix: str) -> Row:
    return next(row for row in rows if row.group == group and row.label.startswith(prefix))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def targets(rows: List[Row]) -> List[Tuple[str, str, str]]:
    """(target, measured, verdict) for each Python performance target."""
    out = []

    def ratio(ours: Row, peer: Row) -> float:
        return ours.median / peer.median

    for n in SIZES:
        peer = find(rows, f"str-{n}", "`jump.hash(xxh3")
        for name in ("jump", "vbucket"):
            r = ratio(find(rows, f"str-{n}", f"shardroute `route(str)`, {name}"), peer)
            out.append((f"`route(str)` on {name}, {n} nodes <= 1.0x `jump.hash(xxh3(key), n)`", f"{r:.2f}x", r <= 1.0))
        r = ratio(find(rows, f"ring-{n}", "uhashring"), find(rows, f"ring-{n}", "shardroute"))
        out.append((f"ring `node(str)`, {n} nodes >= 20x faster than uhashring", f"{r:.1f}x faster", r >= 20))
        r = ratio(find(rows, f"kafka-{n}", "kafka-python"), find(rows, f"kafka-{n}", "shardroute"))
        out.append((f"kafka profile, {n} partitions >= 30x faster than kafka-python", f"{r:.1f}x faster", r >= 30))
    r = ratio(find(rows, "redis-3", "shardroute"), find(rows, "redis-3", "redis-py"))
    out.append(("redis_cluster profile <= 0.5x redis-py `key_slot` + table", f"{r:.2f}x", r <= 0.5))
    for n in SIZES:
        m = find(rows, f"batch-str-{n}", "shardroute `route_many").median
        out.append((f"`route_many` over {N:,} `str`, jump at {n} nodes <= 25 ns/key", f"{m:.1f} ns/key", m <= 25))
    m = find(rows, "batch-u64-1000", "shardroute `route_many").median
    out.append(("`route_many` over numpy `uint64`, jump at 1000 nodes <= 10 ns/key", f"{m:.1f} ns/key", m <= 10))
    return [(target, measured, "met" if ok else "**not met**") for target, measured, ok in out]


def report(rows: List[Row]) -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    lines = [
        "## Python",
        "",
        f"- machine: {os.cpu_count()} CPUs (nproc), {cpu_model()}; load average at the end "
        f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (a shared VM: compare ratios, not absolute times)",
        f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Python {platform.python_version()}, shardroute {shardroute.__version__} (abi3 wheel, release build)",
        "- peers: " + ", ".join(f"{name} {version(name)}" for name in PEERS),
        f"- {N:,} keys `\"user:<i>\"` (integer rows: the ints `i`), {REPEATS} runs per row, rows interleaved; "
        "ns/key median (min-max); ratio = shardroute / peer (below 1: shardroute faster)",
        "- command: `.venv/bin/python bench/python/bench.py`",
        "",
        "| operation | implementation | ns/key | ratio to peer |",
        "|---|---|---:|---|",
    ]
    groups: Dict[str, List[Row]] = {}
    for row in rows:
        groups.setdefault(row.group, []).append(row)
    for group, members in groups.items():
        peers = [row for row in members if not row.ours]
        for row in members:
            if row.ours and peers:
                ratio = "; ".join(f"{row.median / peer.median:.2f}x {peer.short}" for peer in peers)
            else:
                ratio = ""
            lines.append(f"| {group} | {row.label} | {row.cell()} | {ratio} |")
    lines += ["", "Batch rows have no peer (none has a batch API); compare them with the one-call rows.", ""]
    lines += ["| target (Python) | measured | verdict |", "|---|---|---|"]
    lines += [f"| {target} | {measured} | {verdict} |" for target, measured, verdict in targets(rows)]
    return "\n".join(lines) + "\n"


def main() -> None:
    keys = [f"user:{i}" for i in range(N)]
    ints = list(range(N))
    rows = build_rows(keys, ints)
    measure(rows, N)
    text = report(rows)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(text)
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
