"""Side by side on one real Redis Cluster, in one run: shardroute's Redis Cluster clients
next to the peers of each language, same workload, passes interleaved (the order rotates
each pass), medians.

* Python sync (one thread): ``shardroute.redis.ClusterClient``, redis-py's
  ``RedisCluster`` and Valkey GLIDE sync (``glide_sync.GlideClusterClient``);
* Python asyncio (50 tasks): ``AsyncClusterClient``, ``redis.asyncio.RedisCluster`` and
  GLIDE (``glide.GlideClusterClient``);
* Node (bench.mjs, run from here): ``shardroute/redis``, ioredis' ``Cluster`` and GLIDE
  (``@valkey/valkey-glide``), one command at a time and 50 in flight.

Rows: routing (key → node, no I/O) and what the session adds per command (no I/O);
steady GET/SET (ops/s); multi-key reads of 1,000 keys across slots, as MGET (ours
``mget``, redis-py ``mget_nonatomic``, GLIDE ``mget``) and as pipelined GETs (ours
``pipeline_get``, redis-py's cluster pipeline, GLIDE's non-atomic ``ClusterBatch``)
(keys/s); GET/SET while slots move, with the error replies the servers sent it (``INFO
errorstats``), the redirects it reports itself and the errors it raised: every client of a
language in 100 ms slices in turn during the same scripted migrations (migration.py;
Node's through bench_clients.mjs, shared with bench/node/redis_cluster.py; Python's in
this process, `sliced`), after reading every key once;
and refresh (``CLUSTER SHARDS``) and ``Router.moved``. Then the issue's targets, each
marked met or not met.

GLIDE comes from its registry packages (pinned in bench/python/requirements.txt and the
example's package.json). When it cannot be imported or connected, its column says so and
the error text is printed under the table; no number is made up.

Writes target/bench/redis-python.md and redis-node.md (fragments of docs/benchmarks.md)
and prints them. Run: .venv/bin/python examples/redis-cluster/bench.py (part of
`make bench`); SHARDROUTE_BENCH_REDIS_KEYS (default 5,000: the keys, and the commands of a
pass) and SHARDROUTE_BENCH_PASSES (default 5) size it.
"""

from __future__ import annotations

import asyncio
import datetime
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import redis
import redis.asyncio.cluster
import redis.cluster

import shardroute
from shardroute.redis import AsyncClusterClient, ClusterClient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from cluster import REDIS_SERVER, Cluster  # noqa: E402
from migration import WHILE_MOVING, Migration, add_rounds, slice_rounds, sliced_windows  # noqa: E402

KEYS = int(os.environ.get("SHARDROUTE_BENCH_REDIS_KEYS", "5000"))
PASSES = int(os.environ.get("SHARDROUTE_BENCH_PASSES", "5"))
#: Every client's command timeout: the session's default (GLIDE's `request_timeout`).
COMMAND_TIMEOUT_MS = int(shardroute.session_defaults()["command_timeout_ms"])
TASKS = 50  # asyncio tasks, and Node commands in flight
BATCH = 1000  # keys of one multi-key read
OURS, REDIS_PY, IOREDIS, GLIDE = "ours", "redis-py", "ioredis", "glide"
COMMAND = ".venv/bin/python examples/redis-cluster/bench.py"

# redis-py keeps no count of the redirects it follows: count the MovedError and AskError
# replies its parser makes (sync and asyncio share them) while its run is the only one.
REPLIES = {"MOVED": 0, "ASK": 0}


def count_redirect_replies() -> None:
    for kind, error in (("MOVED", redis.exceptions.MovedError), ("ASK", redis.exceptions.AskError)):
        original = error.__init__

        def counting(self: Any, *args: Any, _kind: str = kind, _original: Any = original, **kwargs: Any) -> None:
            REPLIES[_kind] += 1
            _original(self, *args, **kwargs)

        setattr(error, "__init__", counting)


# -- timing -------------------------------------------------------------------------


def interleaved(sides: dict[str, Callable[[], int]]) -> dict[str, float]:
    """Median seconds per unit (op or key; `run()` returns how many) of each side over
    PASSES passes, the first side rotating each pass."""
    names = list(sides)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(PASSES):
        for i in range(len(names)):
            name = names[(round_ + i) % len(names)]
            start = time.perf_counter()
            units = sides[name]()
            samples[name].append((time.perf_counter() - start) / units)
    return {name: statistics.median(values) for name, values in samples.items()}


async def interleaved_async(sides: dict[str, Callable[[], Awaitable[int]]]) -> dict[str, float]:
    names = list(sides)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(PASSES):
        for i in range(len(names)):
            name = names[(round_ + i) % len(names)]
            start = time.perf_counter()
            units = await sides[name]()
            samples[name].append((time.perf_counter() - start) / units)
    return {name: statistics.median(values) for name, values in samples.items()}


def batches(keys: list[str]) -> list[list[str]]:
    return [keys[i : i + BATCH] for i in range(0, len(keys), BATCH)]


# -- tables -------------------------------------------------------------------------


@dataclass
class Table:
    """Rows of medians, one column per client (`columns`: key -> header), the first
    being ours; the last column compares ours with the best peer of the row."""

    columns: dict[str, str]
    failures: dict[str, str]
    targets: Targets
    lines: list[str] = field(default_factory=list)

    def header(self) -> list[str]:
        heads = " | ".join(self.columns.values())
        return [f"| workload | {heads} | ours vs best peer |", "|---" * (len(self.columns) + 2) + "|"]

    def row(self, what: str, medians: dict[str, float], unit: str, absent: str | None = None,
            target: str | None = None) -> None:
        """`medians`: seconds per op (`unit` "ns" or "ops") or per key ("keys"). The ratio
        is ours' speed over the best peer's (> 1: ours is faster). With `target`, the row
        is also the throughput target of that name."""
        cells = []
        for name in self.columns:
            if name in medians:
                cells.append(cell(medians[name], unit))
            else:
                cells.append(absent or ("failed (below)" if name in self.failures else "—"))
        peers = {name: value for name, value in medians.items() if name != OURS}
        ratio = None
        if OURS in medians and peers:
            best = min(peers, key=lambda name: peers[name])
            ratio = peers[best] / medians[OURS]
            cells.append(f"{ratio:.2f}x (vs {self.columns[best]})")
        else:
            cells.append("—")
        self.lines.append(f"| {what} | {' | '.join(cells)} |")
        if target is not None:
            self.targets.throughput(target, ratio, self.failures)

    def text(self, what: str, cells: dict[str, str]) -> None:
        values = [cells.get(name, "failed (below)" if name in self.failures else "—") for name in self.columns]
        self.lines.append(f"| {what} | {' | '.join(values)} | |")

    def render(self) -> list[str]:
        notes = [f"- {self.columns[name]} failed: `{' '.join(text.split())[:500]}`" for name, text in self.failures.items()]
        return [*self.header(), *self.lines, *([""] + notes if notes else [])]


def cell(seconds: float, unit: str) -> str:
    if unit == "ns":
        return f"{seconds * 1e9:,.1f} ns/op"
    if unit == "keys":
        return f"{1 / seconds:,.0f} keys/s"
    return f"{1 / seconds:,.0f} ops/s ({seconds * 1e6:.1f} µs/op)"


@dataclass
class Targets:
    rows: list[str] = field(default_factory=list)

    def add(self, target: str, measured: str, met: bool | None) -> None:
        verdict = "no peer measured" if met is None else "met" if met else "**not met**"
        self.rows.append(f"| {target} | {measured} | {verdict} |")

    def throughput(self, what: str, ratio: float | None, failures: dict[str, str]) -> None:
        measured = "—" if ratio is None else f"{ratio:.2f}x the best peer"
        if GLIDE in failures:
            measured += " (GLIDE failed: not compared)"
        self.add(f"throughput ≥ best peer's, GLIDE included: {what}", measured, None if ratio is None else ratio >= 1)

    def session(self, seconds: float, calls: str = "command + poll + succeeded") -> None:
        self.add(f"the session adds under 1 µs per command ({calls}, no I/O)", f"{seconds * 1e9:,.0f} ns", seconds < 1e-6)

    def mget(self, what: str, medians: dict[str, float], pipelined: dict[str, float]) -> None:
        mget, pipe = 1 / medians[OURS], 1 / pipelined[OURS]
        self.add(f"mget ≥ pipeline_get keys/s: {what}", f"{mget:,.0f} vs {pipe:,.0f} keys/s ({mget / pipe:.2f}x)", mget >= pipe)

    def render(self) -> list[str]:
        met = sum(row.endswith("| met |") for row in self.rows)
        return ["| target (issue 22) | measured | |", "|---|---|---|", *self.rows, "", f"{met} of {len(self.rows)} met."]


# -- while slots move ----------------------------------------------------------------


#: One slice of a client: (ops, seconds, errors raised by kind).
Slice = Callable[[str, float], Awaitable[tuple[int, float, Counter[str]]]]


async def sliced(cluster: Cluster, migration: Migration, names: list[str], run_slice: Slice,
                 redirects: Callable[[str], dict[str, int] | None]) -> Windows:
    """The Python clients (`names`, in this process) in migration.py's slices, as
    `sliced_windows` runs Node's processes: `run_slice(name, seconds)` runs one slice;
    `redirects(name)` is what the client says it followed (None: it says nothing), read
    after the last migration. redis-py's are the MovedError and AskError its parser made
    during its own slices (REPLIES). The migration's thread shares the process (and its
    GIL) with whichever client runs: each client's slices pay for it alike, and the
    migration falls behind its pace meanwhile (the page's setup says by how much)."""
    errors: dict[str, Counter[str]] = {name: Counter() for name in names}
    parsed: Counter[str] = Counter()

    async def counted(name: str, seconds: float) -> tuple[int, float]:
        replies = dict(REPLIES)
        ops, spent, raised_ = await run_slice(name, seconds)
        if name == REDIS_PY:
            parsed.update({kind: REPLIES[kind] - replies[kind] for kind in replies})
        errors[name].update(raised_)
        return ops, spent

    rounds = await slice_rounds(cluster, migration, names, counted)
    windows = Windows()
    for name in names:
        add_rounds(windows, rounds, name, dict(parsed) if name == REDIS_PY else redirects(name), errors[name])
    return windows


@dataclass
class Windows:
    """What each client did while slots moved, summed over the migrations: ops/s per
    migration, the error replies the servers sent it (`INFO errorstats`), the redirects it
    reports itself (None: it reports none), the errors it raised to the loop by class."""

    rates: dict[str, list[float]] = field(default_factory=dict)
    server: dict[str, Counter[str]] = field(default_factory=dict)
    reported: dict[str, Counter[str] | None] = field(default_factory=dict)
    errors: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, name: str, ops: int, seconds: float, server: Counter[str], reported: dict[str, int] | None,
            errors: Counter[str]) -> None:
        self.rates.setdefault(name, []).append(ops / seconds)
        self.server.setdefault(name, Counter()).update(server)
        total = self.reported.setdefault(name, None if reported is None else Counter())
        if total is not None and reported is not None:
            total.update(reported)
        self.errors.setdefault(name, Counter()).update(errors)

    def medians(self) -> dict[str, float]:
        """Median seconds per op (the table's unit)."""
        return {name: 1 / statistics.median(rates) for name, rates in self.rates.items()}

    def describe(self, name: str, how: str = "") -> str:
        def listed(counts: Counter[str]) -> str:
            first = ("MOVED", "ASK", "refreshes")
            kinds = [kind for kind in first if kind in counts] + sorted(kind for kind in counts if kind not in first)
            return ", ".join(f"{counts[kind]} {kind}" for kind in kinds) or "0"

        reported = self.reported[name]
        said = "it keeps no count (its core only logs them)" if reported is None else f"it reports {listed(reported)}{how}"
        return f"servers sent {listed(self.server[name])}; {said}; errors raised: {listed(self.errors[name])}"


def raised(err: BaseException) -> str:
    """An error's class and the start of its message: a kind to count."""
    return f"{type(err).__name__} ({str(err)[:60]})"


def ours_redirects(client: ClusterClient | AsyncClusterClient) -> dict[str, int]:
    return {"MOVED": client.stats.moved, "ASK": client.stats.ask, "refreshes": client.stats.refreshes}


# -- GLIDE --------------------------------------------------------------------------


def glide_sync_client(port: int) -> Any:
    from glide_sync import GlideClusterClient, GlideClusterClientConfiguration, Logger, LogLevel, NodeAddress

    # Its core logs every redirect it follows as a warning, on the console.
    Logger.set_logger_config(LogLevel.ERROR)
    # The same 5 s command timeout as ours and redis-py's (GLIDE's default, 250 ms, timed
    # out a 1,000-key batch on the loaded 2-core machine and ended a run).
    return GlideClusterClient.create(GlideClusterClientConfiguration([NodeAddress("127.0.0.1", port)],
                                                                     request_timeout=COMMAND_TIMEOUT_MS))


async def glide_async_client(port: int) -> Any:
    from glide import GlideClusterClient, GlideClusterClientConfiguration, Logger, LogLevel, NodeAddress

    Logger.set_logger_config(LogLevel.ERROR)
    return await GlideClusterClient.create(GlideClusterClientConfiguration([NodeAddress("127.0.0.1", port)],
                                                                           request_timeout=COMMAND_TIMEOUT_MS))


def failure(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}".replace("\n", " ")[:500]


def version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


# -- the session, no I/O --------------------------------------------------------------


def now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def decoded(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [decoded(item) for item in value]
    if isinstance(value, dict):
        return {decoded(k): decoded(v) for k, v in value.items()}
    return value


def session_with_table(address: str, port: int) -> shardroute.ClusterSession:
    """A session that has read the cluster's table (raw `CLUSTER SHARDS`)."""
    node = redis.Redis(host="127.0.0.1", port=port)
    connection = node.connection_pool.get_connection()
    try:
        connection.send_command("CLUSTER", "SHARDS")
        reply = connection.read_response()
    finally:
        node.connection_pool.release(connection)
        node.close()
    session = shardroute.ClusterSession([address])
    session.refreshed(decoded(reply), now_ms())
    return session


def session_calls(session: shardroute.ClusterSession, keys: list[str]) -> str:
    """Median ns per call of each session method, alone (a fixed now)."""
    commands = [session.command([key], "read", 0) for key in keys]

    def each(call: Callable[[Any], Any], over: list[Any]) -> Callable[[], int]:
        def run() -> int:
            for item in over:
                call(item)
            return len(over)

        return run

    medians = interleaved({
        "command": each(lambda key: session.command([key], "read", 0), list(keys)),
        "poll": each(lambda command: session.poll(command, 0), commands),
        "succeeded": each(lambda command: session.succeeded(command, 0), commands),
    })
    return ", ".join(f"`{name}` {seconds * 1e9:,.0f} ns" for name, seconds in medians.items())


# -- Python, sync ----------------------------------------------------------------------


def python_sync(cluster: Cluster, migration: Migration, keys: list[str], targets: Targets) -> list[str]:
    seed = cluster.seed()
    failures: dict[str, str] = {}
    ours = ClusterClient([seed.address])
    theirs = redis.cluster.RedisCluster(host="127.0.0.1", port=seed.port)
    glide: Any = None
    try:
        glide = glide_sync_client(seed.port)
    except Exception as err:  # noqa: BLE001 - recorded, not faked
        failures[GLIDE] = failure(err)
    clients: dict[str, Any] = {OURS: ours, REDIS_PY: theirs, **({GLIDE: glide} if glide is not None else {})}
    table = Table({OURS: "shardroute ClusterClient", REDIS_PY: "redis-py RedisCluster", GLIDE: "GLIDE sync"}, failures, targets)
    for key in keys:
        ours.set(key, key)

    # Ours: Router.node and a dict lookup (node id -> address, built once per table as
    # address_of caches it); redis-py's: keyslot and get_node_from_slot.
    router = ours.router
    address = {node: ours.address_of(node) for node in set(router.node_many(keys))}
    manager = theirs.nodes_manager

    def route_ours() -> int:
        for key in keys:
            address[router.node(key)]
        return len(keys)

    def route_theirs() -> int:
        for key in keys:
            manager.get_node_from_slot(theirs.keyslot(key))
        return len(keys)

    table.row("routing only: key → node (no I/O)", interleaved({OURS: route_ours, REDIS_PY: route_theirs}), "ns",
              absent="— (inside its Rust core)")

    session = session_with_table(seed.address, seed.port)
    assert session.poll(session.command([keys[0]], "read", now_ms()), now_ms()).kind == "send"

    # What the clients call per command on the steady path: `_send_now` (command + poll
    # in one call, the target and the attempt's deadlines), none after the reply; as Node's
    # row. The general path's calls alone follow (session_calls).
    def per_command() -> int:
        for i, key in enumerate(keys):
            session._send_now([key], "read" if i % 2 else "write", now_ms())
        return len(keys)

    medians = interleaved({OURS: per_command})
    fast = "the steady path: _send_now, one call (command + poll), none after the reply"
    table.row(f"session per command: {fast} (no I/O)", medians, "ns", absent="— (no session)")
    targets.session(medians[OURS], fast)
    calls = session_calls(session, keys)

    def work(client: Any) -> Callable[[], int]:
        def run() -> int:
            for i, key in enumerate(keys):
                client.get(key) if i % 2 else client.set(key, key)
            return len(keys)

        return run

    ours.stats.reset()
    table.row("steady GET/SET", interleaved({name: work(client) for name, client in clients.items()}), "ops",
              target="Python sync, steady GET/SET")
    steady_redirects = ours.stats.moved + ours.stats.ask

    def per_key(read: Callable[[list[str]], Any]) -> Callable[[], int]:
        def run() -> int:
            for batch in batches(keys):
                read(batch)
            return len(keys)

        return run

    def redis_py_pipeline(batch: list[str]) -> Any:
        pipe = theirs.pipeline()
        for key in batch:
            pipe.get(key)
        return pipe.execute()

    def glide_batch(batch: list[str]) -> Any:
        from glide_sync import ClusterBatch

        pipe = ClusterBatch(is_atomic=False)
        for key in batch:
            pipe.get(key)
        return glide.exec(pipe, raise_on_error=False)

    reads = {OURS: ours.mget, REDIS_PY: theirs.mget_nonatomic, **({GLIDE: glide.mget} if glide is not None else {})}
    mget = interleaved({name: per_key(read) for name, read in reads.items()})
    table.row("1,000 keys across slots: MGET (ours `mget`, redis-py `mget_nonatomic`, GLIDE `mget`)", mget, "keys",
              target="Python sync, MGET of 1,000 keys")
    pipelined = interleaved({OURS: per_key(ours.pipeline_get), REDIS_PY: per_key(redis_py_pipeline),
                             **({GLIDE: per_key(glide_batch)} if glide is not None else {})})
    table.row("1,000 keys across slots: pipelined GETs (ours `pipeline_get`, redis-py cluster pipeline, GLIDE "
              "`ClusterBatch`)", pipelined, "keys", target="Python sync, 1,000 pipelined GETs")
    targets.mget("Python sync", mget, pipelined)

    for name in clients:
        reads[name](keys)  # every key once: each client starts from the table as it is
    ours.stats.reset()

    async def run_slice(name: str, seconds: float) -> tuple[int, float, Counter[str]]:
        """One client's slice: GET/SET in turn over the keys until `seconds` have passed
        (blocking the event loop, in which nothing else runs meanwhile)."""
        client, ops, errors = clients[name], 0, Counter[str]()
        start = time.perf_counter()
        end = start + seconds
        i = offsets.get(name, 0)
        while time.perf_counter() < end:
            key = keys[i % len(keys)]
            try:
                client.set(key, key) if i % 2 else client.get(key)
                ops += 1
            except Exception as err:  # noqa: BLE001 - counted: what the application would see
                errors[raised(err)] += 1
            i += 1
        offsets[name] = i
        return ops, time.perf_counter() - start, errors

    offsets: dict[str, int] = {}
    windows = asyncio.run(sliced(cluster, migration, list(clients), run_slice,
                                 lambda name: ours_redirects(ours) if name == OURS else None))
    table.row(f"GET/SET {WHILE_MOVING}", windows.medians(), "ops", target="Python sync, GET/SET during reshards")
    table.text("redirects and errors during those migrations (summed)", {
        name: windows.describe(name, " (replies parsed)" if name == REDIS_PY else "") for name in windows.rates
    })

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
    if glide is not None:
        glide.close()
    return [
        f"### Sync, one thread (valkey-glide-sync {version('valkey-glide-sync')})",
        "",
        *table.render(),
        "",
        f"Session calls alone: {calls}. "
        f"Steady state: {steady_redirects} redirects for shardroute (counted from the replies). "
        f"Refresh from `CLUSTER SHARDS` (round trip, import, new router): median {statistics.median(refresh) * 1e3:.2f} ms; "
        f"`Router.moved` (one slot to a new master, new router): median {statistics.median(moved) * 1e6:.1f} µs.",
        "",
    ]


# -- Python, asyncio -------------------------------------------------------------------


async def python_async(cluster: Cluster, migration: Migration, keys: list[str], targets: Targets) -> list[str]:
    seed = cluster.seed()
    failures: dict[str, str] = {}
    ours = AsyncClusterClient([seed.address])
    theirs = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=seed.port)
    await theirs.initialize()
    glide: Any = None
    try:
        glide = await glide_async_client(seed.port)
    except Exception as err:  # noqa: BLE001 - recorded, not faked
        failures[GLIDE] = failure(err)
    clients: dict[str, Any] = {OURS: ours, REDIS_PY: theirs, **({GLIDE: glide} if glide is not None else {})}
    table = Table({OURS: "shardroute AsyncClusterClient", REDIS_PY: "redis.asyncio RedisCluster", GLIDE: "GLIDE asyncio"},
                  failures, targets)
    await ours.router()

    def work(client: Any) -> Callable[[], Awaitable[int]]:
        async def task(t: int) -> None:
            for i in range(t, len(keys), TASKS):
                key = keys[i]
                await (client.get(key) if i % 2 else client.set(key, key))

        async def run() -> int:
            await asyncio.gather(*(task(t) for t in range(TASKS)))
            return len(keys)

        return run

    ours.stats.reset()
    table.row(f"steady GET/SET, {TASKS} tasks", await interleaved_async({name: work(c) for name, c in clients.items()}),
              "ops", target=f"Python asyncio ({TASKS} tasks), steady GET/SET")
    steady_redirects = ours.stats.moved + ours.stats.ask

    def per_key(read: Callable[[list[str]], Awaitable[Any]]) -> Callable[[], Awaitable[int]]:
        async def run() -> int:
            for batch in batches(keys):
                await read(batch)
            return len(keys)

        return run

    async def redis_py_pipeline(batch: list[str]) -> Any:
        pipe = theirs.pipeline()
        for key in batch:
            pipe.get(key)
        return await pipe.execute()

    async def glide_batch(batch: list[str]) -> Any:
        from glide import ClusterBatch

        pipe = ClusterBatch(is_atomic=False)
        for key in batch:
            pipe.get(key)
        return await glide.exec(pipe, raise_on_error=False)

    reads = {OURS: ours.mget, REDIS_PY: theirs.mget_nonatomic, **({GLIDE: glide.mget} if glide is not None else {})}
    mget = await interleaved_async({name: per_key(read) for name, read in reads.items()})
    table.row("1,000 keys across slots: MGET (one caller)", mget, "keys", target="Python asyncio, MGET of 1,000 keys")
    pipelined = await interleaved_async({OURS: per_key(ours.pipeline_get), REDIS_PY: per_key(redis_py_pipeline),
                                         **({GLIDE: per_key(glide_batch)} if glide is not None else {})})
    table.row("1,000 keys across slots: pipelined GETs (one caller)", pipelined, "keys",
              target="Python asyncio, 1,000 pipelined GETs")
    targets.mget("Python asyncio", mget, pipelined)

    for name in clients:
        await reads[name](keys)  # every key once: each client starts from the table as it is
    ours.stats.reset()

    async def run_slice(name: str, seconds: float) -> tuple[int, float, Counter[str]]:
        """One client's slice: TASKS tasks doing GET/SET in turn until `seconds` have
        passed, each finishing the command it is in."""
        client, counts, errors = clients[name], {"ops": 0}, Counter[str]()
        stop = False

        async def loop(t: int) -> None:
            i = offsets.get(name, 0) + t
            while not stop:
                key = keys[i % len(keys)]
                try:
                    await (client.set(key, key) if i % 2 else client.get(key))
                    counts["ops"] += 1
                except Exception as err:  # noqa: BLE001 - counted: what the application would see
                    errors[raised(err)] += 1
                i += TASKS

        start = time.perf_counter()
        tasks = [asyncio.ensure_future(loop(t)) for t in range(TASKS)]
        await asyncio.sleep(seconds)
        stop = True
        await asyncio.gather(*tasks)
        offsets[name] = offsets.get(name, 0) + counts["ops"] + sum(errors.values())
        return counts["ops"], time.perf_counter() - start, errors

    offsets: dict[str, int] = {}
    windows = await sliced(cluster, migration, list(clients), run_slice,
                           lambda name: ours_redirects(ours) if name == OURS else None)
    table.row(f"GET/SET, {TASKS} tasks, {WHILE_MOVING}", windows.medians(), "ops",
              target="Python asyncio, GET/SET during reshards")
    table.text("redirects and errors during those migrations (summed)", {
        name: windows.describe(name, " (replies parsed)" if name == REDIS_PY else "") for name in windows.rates
    })
    await theirs.aclose()
    await ours.close()
    if glide is not None:
        await glide.close()
    return [
        f"### asyncio, {TASKS} tasks (valkey-glide {version('valkey-glide')})",
        "",
        *table.render(),
        "",
        f"Steady state: {steady_redirects} redirects for shardroute.",
        "",
    ]


# -- Node --------------------------------------------------------------------------------


def node_bench(cluster: Cluster, keys: list[str], targets: Targets) -> tuple[list[str], dict[str, str]]:
    """The same in Node (bench.mjs): shardroute/redis, ioredis' Cluster, GLIDE."""
    seeds = cluster.seed().address
    command = ["node", os.path.join(HERE, "bench.mjs"), "--seeds", seeds, "--keys", str(len(keys))]
    done = subprocess.run([*command, "--passes", str(PASSES), "--mode", "steady"], stdout=subprocess.PIPE, text=True,
                          check=True)
    result = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
    rows, failures = result["rows"], dict(result["failures"])
    table = Table({OURS: "shardroute/redis", IOREDIS: "ioredis Cluster", GLIDE: "GLIDE"}, failures, targets)
    table.row("routing only: key → node (no I/O)", rows["routing"], "ns", absent="— (inside its Rust core)")
    fast = "the steady path: send_now, one call (command + poll), none after the reply"
    table.row(f"session per command: {fast} (no I/O)", rows["session"], "ns", absent="— (no session)")
    targets.session(rows["session"][OURS], fast)
    table.row("steady GET/SET, one at a time (await each)", rows["sequential"], "ops",
              target="Node, steady GET/SET, one at a time")
    table.row(f"steady GET/SET, {TASKS} in flight", rows["inflight"], "ops", target=f"Node, steady GET/SET, {TASKS} in flight")
    table.row("1,000 keys across slots: MGET (ours `mget`; ioredis one MGET per slot, all in flight; GLIDE `mget`)",
              rows["mget"], "keys", target="Node, MGET of 1,000 keys")
    table.row("1,000 keys across slots: pipelined GETs (ours `pipelineGet`; ioredis 1,000 GETs in flight; GLIDE "
              "`ClusterBatch`)", rows["pipeline"], "keys", target="Node, 1,000 pipelined GETs")
    targets.mget("Node", rows["mget"], rows["pipeline"])

    moves = Migration(cluster)
    names = [OURS, IOREDIS, *([] if GLIDE in failures else [GLIDE])]
    for inflight in (1, TASKS):
        windows = sliced_windows(cluster, moves, [*command, "--inflight", str(inflight)], names, failures, Windows())
        what = "one at a time" if inflight == 1 else f"{TASKS} in flight"
        table.row(f"GET/SET {what} {WHILE_MOVING}", windows.medians(), "ops", target=f"Node, GET/SET during reshards, {what}")
        table.text(f"redirects and errors during those slices ({what}, summed)", {
            name: windows.describe(name, " (at its error handler)" if name == IOREDIS else "") for name in windows.rates
        })
    calls = ", ".join(f"`{name}` {seconds * 1e9:,.0f} ns" for name, seconds in result["calls"].items())
    return [*table.render(), "", f"Session calls alone: {calls}.", "", moves.described()], result["versions"]


# -- the report --------------------------------------------------------------------------


def server_version() -> str:
    assert REDIS_SERVER
    words = subprocess.run([REDIS_SERVER, "--version"], capture_output=True, text=True).stdout.split()
    return next((word.split("=", 1)[1] for word in words if word.startswith("v=")), "unknown")


def main() -> None:
    keys = [f"bench:{i}" for i in range(KEYS)]
    count_redirect_replies()
    python_targets, node_targets = Targets(), Targets()
    started = time.monotonic()
    with Cluster() as cluster:
        moves = Migration(cluster)
        sync_lines = python_sync(cluster, moves, keys, python_targets)
        async_lines = asyncio.run(python_async(cluster, moves, keys, python_targets))
        node_lines, node_versions = node_bench(cluster, keys, node_targets)
    minutes = (time.monotonic() - started) / 60
    setup = (
        f"Date: {datetime.date.today().isoformat()}. Command: `{COMMAND}` (part of `make bench`; "
        f"SHARDROUTE_BENCH_REDIS_KEYS={KEYS}, SHARDROUTE_BENCH_PASSES={PASSES}; the whole Redis part took {minutes:.1f} min). "
        f"{KEYS:,} keys, {PASSES} interleaved passes (the order rotates each pass), medians; multi-key rows read the keys "
        f"{BATCH:,} at a time; a 3 + 3 node redis-server {server_version()} cluster on loopback, sharing the machine's "
        "cores with the clients. " + moves.described() + " Every key is read once by each client before; "
        "\"servers sent\" is the change in the nodes' `INFO errorstats` over its "
        "slices (the same count for every client), whose `ERR` are the handshake of a new redis-py or ioredis connection "
        "(`CLIENT SETINFO`, redis-py's `CLIENT MAINT_NOTIFICATIONS`), which redis-server 7.0 refuses: they count "
        "reconnections, not failures; \"errors raised\" are what the loop caught. "
        "The last column is ours' speed over the best peer's in that row (above 1.00x: ours is faster)."
    )
    python_lines = [
        "## Redis Cluster clients (Python)",
        "",
        setup,
        "",
        f"Versions: shardroute {shardroute.__version__}, redis-py {redis.__version__}, valkey-glide {version('valkey-glide')}, "
        f"valkey-glide-sync {version('valkey-glide-sync')}, Python {platform.python_version()}.",
        "",
        *sync_lines,
        *async_lines,
        "### Targets (Python)",
        "",
        *python_targets.render(),
        "",
    ]
    node_lines = [
        "## Redis Cluster clients (Node)",
        "",
        f"Date: {datetime.date.today().isoformat()}. Command: the same (`bench.mjs`, run by `bench.py`, same cluster, "
        f"same sizes; {TASKS} in flight = {TASKS} async loops over one client). Versions: shardroute "
        f"{shardroute.__version__}, ioredis {node_versions['ioredis']}, @valkey/valkey-glide {node_versions['glide']}, "
        f"Node {node_versions['node']}.",
        "",
        *node_lines,
        "",
        "### Targets (Node)",
        "",
        *node_targets.render(),
        "",
    ]
    out = os.path.join(ROOT, "target", "bench")
    os.makedirs(out, exist_ok=True)
    for name, part in (("redis-python", python_lines), ("redis-node", node_lines)):
        text = "\n".join(part)
        print(text)
        with open(os.path.join(out, f"{name}.md"), "w") as fragment:
            fragment.write(text)


if __name__ == "__main__":
    main()
