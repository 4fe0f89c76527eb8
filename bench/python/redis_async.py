"""Python asyncio on one real Redis Cluster, side by side in one run (issue 37): shardroute's
``AsyncClusterClient`` with the session's auto-pipelining on and off, next to Valkey GLIDE
(asyncio) and ``redis.asyncio.RedisCluster``.

Rows: steady GET/SET from 50 tasks (ops/s), and 1,000 keys across slots read by one
caller as ``mget`` and ``pipeline_get`` (ours) and ``mget`` (GLIDE, redis.asyncio's
``mget_nonatomic``) (keys/s); then what the session adds per command with auto-pipelining
(``command`` + ``poll`` + ``pipeline_queued`` + ``succeeded``, and the amortized
``pipeline_take`` / ``pipeline_done`` of a 50-command write; no I/O).

The cluster (3 primaries + 3 replicas of Debian's redis-server on 127.0.0.1) is started
and stopped by examples/redis-cluster/cluster.py; the timing, the GLIDE clients and the
table come from examples/redis-cluster/bench.py (the same passes, interleaved with the
order rotating, and medians). Prints a Markdown table.

    .venv/bin/python bench/python/redis_async.py [--reshards]

``--reshards`` then runs examples/redis-cluster/bench.py's asyncio part on the same
cluster (its table as `make bench` writes it: steady, MGET, pipelines, while slots move).

SHARDROUTE_BENCH_REDIS_KEYS (default 5,000) and SHARDROUTE_BENCH_PASSES (default 5) size
it, as for the Redis bench.
"""

from __future__ import annotations

import asyncio
import datetime
import importlib.util
import os
import pathlib
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import redis
import redis.asyncio.cluster
import redis.utils

import shardroute
from shardroute.redis import AsyncClusterClient

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("redis_cluster_bench",
                                               os.path.join(ROOT, "examples", "redis-cluster", "bench.py"))
assert _spec is not None and _spec.loader is not None
common: Any = sys.modules.setdefault("redis_cluster_bench", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(common)

TASKS, KEYS = common.TASKS, common.KEYS
ON, OFF, REDIS_PY, GLIDE = "on", "off", "redis-py", "glide"
COLUMNS = {ON: "ours, auto-pipelining on", OFF: "ours, auto-pipelining off", GLIDE: "GLIDE asyncio",
           REDIS_PY: "redis.asyncio RedisCluster"}


def row(what: str, medians: dict[str, float], unit: str) -> str:
    cells = [common.cell(medians[name], unit) if name in medians else "—" for name in COLUMNS]
    peers = {name: medians[name] for name in (GLIDE, REDIS_PY) if name in medians}
    ratios = []
    for ours in (ON, OFF):
        if ours in medians and peers:
            best = min(peers, key=lambda name: peers[name])
            ratios.append(f"{ours}: {peers[best] / medians[ours]:.2f}x {COLUMNS[best]}")
    return f"| {what} | {' | '.join(cells)} | {'; '.join(ratios)} |"


def session_cost(address: str, port: int, keys: list[str]) -> str:
    """Median ns per command of the session's calls on the auto-pipelined path, alone."""
    session = common.session_with_table(address, port)
    node = session.address_of(session.router.node(keys[0]))
    assert node is not None
    batch = 50

    def steady() -> int:
        for start in range(0, len(keys), batch):
            commands = []
            for key in keys[start:start + batch]:
                command = session.command([key], "read", 0)
                session.poll(command, 0)
                session.pipeline_queued(node, False)
                commands.append(command)
            session.pipeline_take(node, False)
            for command in commands:
                session.succeeded(command, 0)
            session.pipeline_done(node, False)
        return len(keys)

    def alone() -> int:
        for key in keys:
            command = session.command([key], "read", 0)
            session.poll(command, 0)
            session.succeeded(command, 0)
        return len(keys)

    medians = common.interleaved({"steady": steady, "alone": alone})
    return (f"{medians['steady'] * 1e9:,.0f} ns (`command` + `poll` + `pipeline_queued` + `succeeded`, and "
            f"`pipeline_take` + `pipeline_done` per {batch} commands; without the pipeline calls "
            f"{medians['alone'] * 1e9:,.0f} ns)")


async def python_async(cluster: Any, keys: list[str]) -> list[str]:
    seed = cluster.seed()
    clients: dict[str, Any] = {
        ON: AsyncClusterClient([seed.address], config={"auto_pipeline": True}),
        OFF: AsyncClusterClient([seed.address], config={"auto_pipeline": False}),
    }
    theirs = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=seed.port)
    await theirs.initialize()
    clients[REDIS_PY] = theirs
    failures: dict[str, str] = {}
    try:
        clients[GLIDE] = await common.glide_async_client(seed.port)
    except Exception as err:  # noqa: BLE001 - recorded, not faked
        failures[GLIDE] = common.failure(err)
    for name in (ON, OFF):
        await clients[name].router()

    def work(client: Any) -> Callable[[], Awaitable[int]]:
        async def task(t: int) -> None:
            for i in range(t, len(keys), TASKS):
                key = keys[i]
                value = await (client.get(key) if i % 2 else client.set(key, key))
                assert value in (True, b"OK", "OK", key.encode()), (key, value)

        async def run() -> int:
            await asyncio.gather(*(task(t) for t in range(TASKS)))
            return len(keys)

        return run

    for client in clients.values():  # every key set once, so that each GET checks its value
        await asyncio.gather(*(client.set(key, key) for key in keys[:200]))
    await asyncio.gather(*(clients[ON].set(key, key) for key in keys))
    lines = [f"| workload | {' | '.join(COLUMNS.values())} | ours vs best peer |", "|---" * (len(COLUMNS) + 2) + "|"]
    lines.append(row(f"steady GET/SET, {TASKS} tasks",
                     await common.interleaved_async({name: work(client) for name, client in clients.items()}), "ops"))

    def per_batch(read: Callable[[list[str]], Awaitable[Any]]) -> Callable[[], Awaitable[int]]:
        async def run() -> int:
            for batch in common.batches(keys):
                assert (await read(batch))[-1] in (batch[-1].encode(), batch[-1])
            return len(keys)

        return run

    sides = {"mget": per_batch(clients[ON].mget), "pipeline_get": per_batch(clients[ON].pipeline_get),
             "mget, off": per_batch(clients[OFF].mget), REDIS_PY: per_batch(theirs.mget_nonatomic)}
    if GLIDE in clients:
        sides[GLIDE] = per_batch(clients[GLIDE].mget)
    medians = await common.interleaved_async(sides)
    glide = medians.get(GLIDE)
    lines += ["", "| 1,000 keys across slots, one caller | keys/s | vs GLIDE `mget` |", "|---|---|---|"]
    for name, label in (("mget", "ours `mget`"), ("pipeline_get", "ours `pipeline_get`"),
                        ("mget, off", "ours `mget`, auto-pipelining off"), (GLIDE, "GLIDE `mget`"),
                        (REDIS_PY, "redis.asyncio `mget_nonatomic`")):
        if name in medians:
            ratio = f"{glide / medians[name]:.2f}x" if glide else "—"
            lines.append(f"| {label} | {1 / medians[name]:,.0f} | {ratio} |")
    stats = clients[ON].stats
    lines += ["", f"Auto-pipelined client over the run: {stats.commands:,} commands, {stats.errors} errors, "
              f"{stats.moved} MOVED. The session per command on the auto-pipelined path (no I/O, interleaved): "
              f"{session_cost(seed.address, seed.port, keys)}."]
    lines += [f"- {COLUMNS[name]} failed: `{text}`" for name, text in failures.items()]
    await theirs.aclose()
    for name in (ON, OFF):
        await clients[name].close()
    if GLIDE in clients:
        await clients[GLIDE].close()
    return lines


def main() -> None:
    keys = [f"bench:{i}" for i in range(KEYS)]
    started = time.monotonic()
    with common.Cluster() as cluster:
        lines = asyncio.run(python_async(cluster, keys))
        if "--reshards" in sys.argv:  # the Redis bench's own asyncio table too, reshards included
            targets = common.Targets()
            moves = common.Migration(cluster)
            lines += ["", *asyncio.run(common.python_async(cluster, moves, keys, targets)), *targets.render(), "",
                      moves.described()]
    hiredis = "with hiredis" if redis.utils.HIREDIS_AVAILABLE else "without hiredis"
    defaults = shardroute.session_defaults()
    text = "\n".join([
        "## Redis Cluster clients (Python): auto-pipelining",
        "",
        f"Date: {datetime.date.today().isoformat()}. Command: `.venv/bin/python bench/python/redis_async.py`. "
        f"Python asyncio, {TASKS} tasks, {KEYS:,} keys, {common.PASSES} interleaved passes, medians "
        f"({(time.monotonic() - started) / 60:.1f} min). shardroute {shardroute.__version__}, redis-py "
        f"{redis.__version__} {hiredis}, valkey-glide {common.version('valkey-glide')}, Python {platform.python_version()}. "
        f"The session's defaults: auto_pipeline {defaults['auto_pipeline']}, pipeline_max_commands "
        f"{defaults['pipeline_max_commands']}, pipeline_max_writes {defaults['pipeline_max_writes']}.",
        "",
        *lines,
        "",
    ])
    print(text)
    out = pathlib.Path(__file__).resolve().parents[2] / "target" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "redis-python-pipeline.md").write_text(text)


if __name__ == "__main__":
    main()
