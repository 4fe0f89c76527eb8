"""How the Node Redis Cluster benches move slots and time the clients meanwhile (shared by
examples/redis-cluster/bench.py's Node rows and bench/node/redis_cluster.py).

While slots move, every client (a process each, running bench_clients.mjs' loop mode,
every key read once) runs in SLICE_MS slices, one client at a time, in turn, during the
same migration: WINDOW_ROUNDS migrations per mode, the first client rotating each, so
every client samples the same load at the same moments; its rate in a migration is its
ops over its slices' time, and the row is the median over the migrations. The migration
is scripted (``Migration``): WINDOW_SLOTS slots of one primary at MIGRATION_RATE slots a
second, each moved as ``redis-cli --cluster reshard`` moves one (``SETSLOT IMPORTING`` /
``MIGRATING``, ``MIGRATE`` of its keys, ``SETSLOT NODE`` on every primary), round the
primaries. The old way, each client alone in its own ``redis-cli --cluster reshard``
windows, let a window's length and load decide most of a median (one client measured
1,290-6,037 ops/s from one window to the next).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import redis

WINDOW_SLOTS = 1000  # slots one migration moves
MIGRATION_RATE = 400  # slots a second: a migration is 2.5 s
WINDOW_ROUNDS = 5  # migrations per mode, each shared by every client in slices
SLICE_MS = 100  # one client's turn while a migration runs
#: The rows' words for it.
WHILE_MOVING = (f"while slots move ({WINDOW_ROUNDS} migrations of {WINDOW_SLOTS:,} slots, {SLICE_MS} ms slices in turn; "
                "median of the migrations)")


def json_line(process: subprocess.Popen[str]) -> dict[str, Any]:
    """The next JSON line of a Node bench child; other lines (a library's log) go to stderr."""
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("{"):
            message: dict[str, Any] = json.loads(line)
            return message
        print(f"[node] {line.rstrip()}", file=sys.stderr)
    raise RuntimeError(f"the Node bench exited ({process.wait()}) without a JSON line")


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
        primaries = self.cluster.primaries()
        source, target = primaries[self.done % len(primaries)], primaries[(self.done + 1) % len(primaries)]
        self.done += 1
        connect: dict[str, Any] = {node.id: redis.Redis(host="127.0.0.1", port=node.port) for node in primaries}
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

    def described(self) -> str:
        """The method and what the migrations took, for a page's setup paragraph."""
        lengths = f"{min(self.lengths):.1f}-{max(self.lengths):.1f} s each" if self.lengths else "none ran"
        return (f"While slots move, the clients take {SLICE_MS} ms slices in turn, one at a time (the first rotating each "
                f"migration), during {WINDOW_ROUNDS} scripted migrations per mode of {WINDOW_SLOTS:,} slots at "
                f"{MIGRATION_RATE:,} slots/s each (SETSLOT, MIGRATE, SETSLOT NODE on every primary, as `redis-cli --cluster "
                f"reshard` moves a slot; round the primaries; {lengths}, the last slot at most {self.behind:.1f} s behind "
                "the pace); a client's rate in a migration is its ops over its slices' time.")

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


#: Each migration's (ops, seconds, error replies the servers sent) by client.
Rounds = list[dict[str, tuple[int, float, Counter[str]]]]


async def slice_rounds(cluster: Any, migration: Migration, names: list[str],
                       run_slice: Callable[[str, float], Awaitable[tuple[int, float]]]) -> Rounds:
    """The slices, whatever runs the clients: while each of WINDOW_ROUNDS migrations runs (in
    a thread), every client of `names` in turn runs one slice of SLICE_MS (`run_slice(name,
    seconds)`: its ops and the seconds it took), the first client rotating each migration;
    the servers' error replies are read around each slice. Each migration's sums by client."""
    if not names:
        return []
    nodes = [redis.Redis(host="127.0.0.1", port=node.port) for node in cluster.live()]
    rounds: Rounds = []
    try:
        for round_ in range(WINDOW_ROUNDS):
            order = names[round_ % len(names):] + names[: round_ % len(names)]
            got: dict[str, tuple[int, float, Counter[str]]] = {}
            moving = threading.Thread(target=migration.next)
            moving.start()
            while moving.is_alive():
                for name in order:
                    if not moving.is_alive():
                        break
                    before = error_replies(nodes)
                    ops, seconds = await run_slice(name, SLICE_MS / 1000)
                    so_far, spent, server = got.get(name, (0, 0.0, Counter()))
                    got[name] = (so_far + ops, spent + seconds, server + (error_replies(nodes) - before))
            await asyncio.to_thread(moving.join)
            rounds.append(got)
    finally:
        for connection in nodes:
            connection.close()
    return rounds


def add_rounds(windows: Any, rounds: Rounds, name: str, redirects: dict[str, int] | None, errors: Counter[str]) -> None:
    """`name`'s migrations into `windows` (bench.py's `Windows`): its `redirects` (what it
    says it followed, None: it says nothing) and the `errors` it raised go with the last."""
    taken = [got[name] for got in rounds if name in got]
    for i, (ops, seconds, server) in enumerate(taken):
        last = i == len(taken) - 1
        windows.add(name, ops, seconds, server, (redirects if last else {}) if redirects is not None else None,
                    errors if last else Counter())


def sliced_windows(cluster: Any, migration: Migration, command: list[str], names: list[str], failures: dict[str, str],
                   windows: Any) -> Any:
    """Every client (`names`, one process each, every key read once) runs GET/SET in slices
    of SLICE_MS, one client at a time, in turn, while a migration runs; WINDOW_ROUNDS
    migrations, the first client rotating each. Each client's rate in a migration is its
    ops over its slices' time; the servers' error replies are read around each slice.
    `command` runs a client's loop mode (examples/redis-cluster/bench_clients.mjs) when
    given `--client NAME`; `windows` (bench.py's `Windows`) gets each migration's ops,
    seconds and error replies, and the client's own counts with its last migration. A
    client that fails to connect goes to `failures` with its error text."""
    processes: dict[str, subprocess.Popen[str]] = {}
    for name in names:
        process = subprocess.Popen([*command, "--mode", "loop", "--client", name], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
        ready = json_line(process)
        if ready["event"] == "failed":
            failures[name] = ready["error"]
            process.wait(timeout=60)
        else:
            processes[name] = process

    async def run_slice(name: str, seconds: float) -> tuple[int, float]:
        process = processes[name]
        assert process.stdin is not None
        process.stdin.write(f"run {round(seconds * 1000)}\n")
        process.stdin.flush()
        done = json_line(process)
        return done["ops"], done["seconds"]

    try:
        rounds = asyncio.run(slice_rounds(cluster, migration, [name for name in names if name in processes], run_slice))
        ends: dict[str, dict[str, Any]] = {}
        for name, process in processes.items():
            assert process.stdin is not None
            process.stdin.write("stop\n")
            process.stdin.close()
            ends[name] = json_line(process)
            process.wait(timeout=60)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
    for name, end in ends.items():
        redirects = None if end["moved"] is None else {"MOVED": end["moved"], "ASK": end["ask"]}
        if redirects is not None and end["refreshes"] is not None:
            redirects["refreshes"] = end["refreshes"]
        add_rounds(windows, rounds, name, redirects, Counter(end["errors"]))
    return windows
