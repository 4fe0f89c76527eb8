"""The Python service of the example: writes and reads users' messages on the shard
databases (psycopg 3), routing every statement with shardroute, while the topology in
etcd changes under it. The Node service, `service.mjs`, speaks the same protocol
(README.md, "The service protocol"; the rules are docs/rebalancing.md).

    python service.py --postgres 127.0.0.1:5432 --etcd http://127.0.0.1:2379 \
        --service python --users 5000 --log acknowledged-python.log

stdin, one command a line: `write <seconds>`, `read-all`, `quit`; stdout, one JSON line
each, after `{"event": "ready", "epoch": N}`. Log lines go to stderr.

Routing, by what etcd holds:

* `topology` only, no forward map: `router.node(user)`;
* `topology` a vbucket dictionary with a `forward_map` (run A):
  `Migration.of_dictionary(router)`: writes to the new owner, reads new and old;
* `topology` and `previous` (run B): `Migration(previous, topology)`; the first read of
  a user that moves, with no moved flag on the new owner, moves the user's rows.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from typing import Any

import shardroute
from etcd import Etcd
from shards import PREVIOUS, SHARD_NAMES, TICKET_SERVER, TICKETS, TOPOLOGY, WATCH_END, Fenced, Shards, body_digest, ids_key

ID_BLOCK = 1000


def log(service: str, message: str) -> None:
    print(f"[{service}] {message}", file=sys.stderr, flush=True)


class Routing:
    """The documents in force and what they mean for each statement (immutable)."""

    def __init__(self, topology: shardroute.Router, previous: shardroute.Router | None, strategy: dict[str, Any]) -> None:
        self.router = topology
        self.epoch = topology.epoch
        self.lazy = previous is not None
        self.migration: shardroute.Migration | None = None
        if previous is not None:
            self.migration = shardroute.Migration(previous, topology)
        elif "forward_map" in strategy:
            self.migration = shardroute.Migration.of_dictionary(topology)
        self.vbuckets = strategy.get("type") == "vbucket"

    def vbucket(self, user: int) -> int:
        """The column `vbucket`: the user's vbucket in run A, 0 in run B."""
        return self.router.route(user) if self.vbuckets else 0

    def write_target(self, user: int) -> str:
        return self.migration.write_target(user) if self.migration else self.router.node(user)

    def moves(self, user: int) -> tuple[str, str] | None:
        return self.migration.moves(user) if self.migration else None

    def read_targets(self, user: int, moved: bool) -> list[str]:
        return self.migration.read_targets(user, moved) if self.migration else [self.router.node(user)]


class Ids:
    """Ticket ids from blocks reserved by a compare-and-swap on the service's counter."""

    def __init__(self, etcd: Etcd, service: str) -> None:
        self.etcd = etcd
        self.key = ids_key(service)
        self.server = TICKET_SERVER[service]
        self.pending: list[int] = []

    def reserve(self, size: int = ID_BLOCK) -> list[int]:
        while True:
            value, revision = self.etcd.get(self.key)
            counter = int(value) if value else 1
            block = shardroute.apply(
                TICKETS, {"op": "id_bits_reserve_block", "shard": self.server, "auto_increment": counter, "block_size": size}
            )
            if self.etcd.cas(self.key, block["auto_increment"], revision):
                return list(range(int(block["first"]), int(block["last"]) + 1, block["step"]))

    def next(self) -> int:
        if not self.pending:
            self.pending = self.reserve()[::-1]
        return self.pending.pop()


class Service:
    def __init__(self, postgres: str, etcd_url: str, name: str, users: int, log_path: str) -> None:
        self.name = name
        self.users = users
        self.etcd = Etcd(etcd_url)
        self.shards = Shards(postgres, SHARD_NAMES)
        self.ids = Ids(self.etcd, name)
        self.acknowledged = open(log_path, "a")
        self.mine: dict[int, set[int]] = {}  # user -> ids this process saw acknowledged
        self.rng = random.Random(f"{name}-{os.getpid()}")
        self.watch_stop = threading.Event()
        self.lock = threading.Lock()
        self.counting = threading.Lock()
        self.counters: dict[str, int] = {}
        self.latencies: list[float] = []
        self.routing: Routing | None = None
        self.documents: tuple[str | None, str | None] = (None, None)
        self.epochs: list[int] = []
        self.revision = 0  # the etcd revision of the last read of the documents
        self.refresh("start")
        if self.routing is None:
            raise SystemExit(f"[{name}] no usable topology in etcd at {TOPOLOGY}")
        self.reset()
        # From the revision after the one read: a change in between is not missed.
        self.etcd.watch(
            PREVIOUS, lambda: self.refresh("watch"), range_end=WATCH_END, stop=self.watch_stop,
            start_revision=self.revision + 1,
        )

    # -- the topology ------------------------------------------------------------------

    def refresh(self, reason: str, again: bool = False) -> None:
        """Reads both documents at one etcd revision and swaps routers if the topology's
        epoch grew. A document that does not parse, or an older epoch, is logged (once,
        unless `again`) and the current router kept."""
        with self.lock:
            self.counters_add("refreshes")
            if again:
                self.documents = (None, None)
            try:
                found, revision = self.etcd.get_many([TOPOLOGY, PREVIOUS])
            except Exception as err:  # noqa: BLE001 - etcd away: keep routing as we are
                log(self.name, f"reading the topology failed ({err}); keeping epoch {self.epoch()}")
                return
            self.revision = max(self.revision, revision)
            text, previous_text = found[TOPOLOGY][0], found[PREVIOUS][0]
            if (text, previous_text) == self.documents or text is None:
                return
            try:
                router = self.routing.router.replace(text) if self.routing else shardroute.Router(text)
                if self.routing and router.epoch == self.routing.epoch:
                    self.documents = (text, previous_text)
                    return
                previous = shardroute.Router(previous_text) if previous_text is not None else None
                routing = Routing(router, previous, json.loads(text)["strategy"])
            except shardroute.ShardrouteError as err:
                log(self.name, f"refused the topology at etcd revision {revision} ({reason}): {err.code}: {err}; keeping epoch {self.epoch()}")
                self.documents = (text, previous_text)
                return
            self.routing = routing
            self.documents = (text, previous_text)
            if not self.epochs or self.epochs[-1] != routing.epoch:
                self.epochs.append(routing.epoch)
            moving = " (lazy moves from previous)" if routing.lazy else " (vbuckets migrating)" if routing.migration else ""
            log(self.name, f"epoch {routing.epoch}{moving}, on {reason}")

    def epoch(self) -> int:
        return self.routing.epoch if self.routing else 0

    def fenced(self, err: Fenced) -> None:
        """A shard refused our epoch: etcd has a newer one (the fence is raised only
        after the document is written), which the watch may not have brought yet."""
        self.counters_add("refused_by_fence")
        held = self.epoch()
        self.refresh("fence", again=True)
        if self.epoch() <= held:
            time.sleep(0.01)

    # -- statements --------------------------------------------------------------------

    def insert(self, user: int) -> None:
        message_id = self.ids.next()
        body = f"{self.name} says {self.rng.getrandbits(64):016x} to user {user}"
        while True:
            routing = self.routing
            assert routing is not None
            target = routing.write_target(user)
            try:
                self.shards.write(
                    target, routing.epoch,
                    "INSERT INTO messages (id, user_id, vbucket, time, body, sender) VALUES (%s, %s, %s, now(), %s, %s)",
                    (message_id, user, routing.vbucket(user), body, self.name),
                )
            except Fenced as err:
                self.fenced(err)
                continue
            break
        # Logged (and flushed) before it counts: an insert this process never logged
        # is not acknowledged, whatever the shard holds.
        self.acknowledged.write(f"{message_id} {user} {body_digest(body)}\n")
        self.acknowledged.flush()
        self.mine.setdefault(user, set()).add(message_id)
        self.counters_add("writes")

    def timeline(self, user: int) -> list[tuple[int, str]]:
        """The user's messages, newest first (union by id of the read targets)."""
        while True:
            routing = self.routing
            assert routing is not None
            try:
                moved = False
                if routing.lazy:
                    moves = routing.moves(user)
                    if moves is not None:
                        old, new = moves
                        if not self.shards.is_moved(new, routing.epoch, user):
                            self.counters_add("moved_rows", self.shards.move_user(user, old, new, routing.epoch))
                            self.counters_add("moved_users")
                        moved = True
                found: dict[int, tuple[Any, str]] = {}
                # Old owner first: a copy that finishes between the two reads then
                # leaves every row on the new owner, which is read second.
                for shard in reversed(routing.read_targets(user, moved)):
                    for message_id, at, body in self.shards.read(
                        shard, routing.epoch, "SELECT id, time, body FROM messages WHERE user_id = %s", (user,)
                    ):
                        found[message_id] = (at, body)
            except Fenced as err:
                self.fenced(err)
                continue
            if not self.mine.get(user, set()) <= found.keys():
                self.counters_add("stale_reads")
            self.counters_add("reads")
            return [(message_id, body) for message_id, (at, body) in sorted(found.items(), key=lambda item: item[1][0], reverse=True)]

    # -- commands ----------------------------------------------------------------------

    def counters_add(self, name: str, amount: int = 1) -> None:
        with self.counting:
            self.counters[name] = self.counters.get(name, 0) + amount

    def reset(self) -> None:
        with self.counting:
            self.counters = {"writes": 0, "reads": 0, "refused_by_fence": 0, "refreshes": 0, "moved_rows": 0, "moved_users": 0, "stale_reads": 0}
        self.latencies = []

    def timed(self, call: Any, *args: Any) -> None:
        start = time.perf_counter()
        call(*args)
        self.latencies.append(time.perf_counter() - start)

    def write(self, seconds: float) -> dict[str, Any]:
        end = time.monotonic() + seconds
        last_ack = time.monotonic()
        longest = 0.0
        ops = 0
        while time.monotonic() < end:
            self.timed(self.insert, self.rng.randrange(1, self.users + 1))
            now = time.monotonic()
            longest = max(longest, now - last_ack)
            last_ack = now
            self.timed(self.timeline, self.rng.randrange(1, self.users + 1))
            ops += 2
        return {"ops": ops, "longest_stall_ms": round(longest * 1000, 1)}

    def read_all(self) -> dict[str, Any]:
        for user in range(1, self.users + 1):
            self.timed(self.timeline, user)
        return {"ops": self.users, "longest_stall_ms": 0.0}

    def answer(self, command: str, result: dict[str, Any]) -> None:
        samples = sorted(self.latencies)

        def percentile(p: float) -> float:
            return round(samples[min(len(samples) - 1, int(p * len(samples)))] * 1e6, 1) if samples else 0.0

        line = {
            "event": "done", "command": command, **result, **self.counters,
            "epochs_seen": list(self.epochs), "epoch": self.epoch(),
            "p50_us": percentile(0.50), "p99_us": percentile(0.99),
        }
        print(json.dumps(line), flush=True)
        self.reset()

    def close(self) -> None:
        self.watch_stop.set()
        self.acknowledged.close()
        self.shards.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", required=True, help="host:port of the PostgreSQL server")
    parser.add_argument("--etcd", required=True, help="etcd's client URL")
    parser.add_argument("--service", default="python", choices=sorted(TICKET_SERVER))
    parser.add_argument("--users", type=int, default=5000)
    parser.add_argument("--log", required=True, help="the acknowledgement log (appended to)")
    args = parser.parse_args()
    service = Service(args.postgres, args.etcd, args.service, args.users, args.log)
    print(json.dumps({"event": "ready", "epoch": service.epoch()}), flush=True)
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        try:
            if command == "write":
                service.answer("write", service.write(float(argument)))
            elif command == "read-all":
                service.answer("read-all", service.read_all())
            elif command == "quit":
                break
            elif command:
                log(service.name, f"unknown command {command!r}")
        except Exception as err:  # noqa: BLE001 - reported to run.py, which fails
            log(service.name, f"{command} failed: {err!r}")
            service.answer(command, {"ops": 0, "longest_stall_ms": 0.0, "failure": repr(err)})
    service.close()


if __name__ == "__main__":
    main()
