"""The Python service of the example: writes and reads users' messages on the shard
databases (psycopg 3), routing every statement with shardroute, while the topology in
etcd changes under it. The Node service, `service.mjs`, speaks the same protocol
(README.md, "The service protocol"; the rules are docs/rebalancing.md).

    python service.py --postgres 127.0.0.1:5432 --etcd http://127.0.0.1:2379 \
        --service python --users 5000 --log acknowledged-python.log

stdin, one command a line: `write <seconds>`, `read-all`, `query <seconds>`, `quit`;
stdout, one JSON line each, after `{"event": "ready", "epoch": N}`. Log lines go to stderr.

The topology comes from `shardroute.etcd.EtcdFollower` (the core's follower: newer
epochs installed, bad documents refused and counted, the last good router kept), with
`previous` read at the same revision. What each statement does is the core's migration
session, `shardroute.MigrationSession.of_topology(topology, previous)`, which decides the
mode from what etcd holds (docs/rebalancing.md): `plain` (nothing moves), `background`
(run A: a vbucket dictionary with a `forward_map`), `lazy` (run B: `previous` one epoch
older; the first read of a user that moves, with no moved flag on the new owner, makes
the session's `lazy_steps`). The service asks it the same questions in every mode (write
plan, read plan in its order, lazy steps, scan order) and never branches on the mode.

A shard fenced above the statement's epoch refuses it; `session.fenced` says what that
means (follow the topology: the follower reads etcd again), and the statement is
planned again.

A message is written to its data shard, then its entry in the global index `by_sender`
(on the shard the document's index routes the sender to), then to the oracle, the
unsharded copy; only then is it acknowledged. `query` runs the two queries of the
example's query side and checks each answer against the oracle:

* messages by sender: the index shard of the sender, then the data shards of the users
  its entries name (each user's read plan), visited in the migration's scan order;
* messages in a time range: scatter/gather over every node, in the session's scan order
  (`scan_nodes`: old owners before new ones while data moves, each node once), merged by id.

When the document names tenants and the reference table `plans`, `write` also writes and
reads tenants' channels (keys `<tenant>:<channel>`, routed by the same session: the core
applies the tenant rule) and reads `plans` from the node the core picks, its own row
(`<service>-quota`, written at the end of each `write`) too at the start of the next
(README.md, "Tenants and the reference table").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import shardroute
from shardroute.etcd import Etcd, EtcdError, EtcdFollower
from datetime import datetime, timedelta, timezone

from shards import (
    CHANNELS, INDEX, INSERT_TENANT_MESSAGE, LAZY_MOVE_BATCH, PLAN_ROWS, PLANS, PREVIOUS, READ_PAGE, SHARD_NAMES, TENANT_TABLE,
    TICKET_SERVER, TICKETS, TIMELINE_PAGE, TOPOLOGY, Fenced, Oracle, Shards, body_digest, ids_key, tenant_key,
)

ID_BLOCK = 1000


def take_page(found: dict[int, tuple[Any, str]], page: int | None) -> list[tuple[int, Any, str]]:
    """The page of a timeline from its rows merged by id (id -> (time, body)): newest
    first in the shards' order (time, then id, both descending), the first `page` of them
    (all with None)."""
    ordered = sorted(((message_id, at, body) for message_id, (at, body) in found.items()), key=lambda row: (row[1], row[0]), reverse=True)
    return ordered if page is None else ordered[:page]


def missed_in_page(shown: list[tuple[int, Any, str]], page: int | None, mine: dict[int, Any]) -> bool:
    """The page rule (service.mjs's `missedInPage` is the same): a message this process
    acknowledged for the user (`mine`: id -> the time it was written with) is expected in
    the page when the page is not full (fewer than `page` rows, or no limit: the whole
    timeline), or when it is newer than the page's oldest row in the page's order (time,
    then id); an older one is rightly left off. Whether an expected message is missing."""
    ids = {row[0] for row in shown}
    oldest = (shown[-1][1], shown[-1][0]) if page is not None and len(shown) >= page else None
    return any(message_id not in ids for message_id, at in mine.items() if oldest is None or (at, message_id) > oldest)


def log(service: str, message: str) -> None:
    print(f"[{service}] {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class InForce:
    """What statements route by, swapped whole on a topology change: the core's session
    (every routing decision), the global index's router, and the router of the table's
    `vbucket` column (run A's dictionary; None in run B, where the column is 0)."""

    session: shardroute.MigrationSession
    index: shardroute.Router
    vbuckets: shardroute.Router | None
    plans: shardroute.Router | None  # the reference table's router (`table("plans")`), if the document has it
    tenants: tuple[str, ...]  # the tenants the document names (its `tenants` entries)


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
    def __init__(self, postgres: str, etcd_url: str, name: str, users: int, log_path: str, page: int = TIMELINE_PAGE) -> None:
        self.name = name
        self.users = users
        self.page = page  # a timeline read's newest messages (shards.py's TIMELINE_PAGE)
        self.etcd = Etcd(etcd_url)
        self.shards = Shards(postgres, SHARD_NAMES, name)
        self.oracle = Oracle(postgres)
        self.ids = Ids(self.etcd, name)
        self.acknowledged = open(log_path, "a")
        # Tenant messages are acknowledged in a log of their own: `id key sha256(body)`.
        self.acknowledged_tenants = open(log_path + ".tenants", "a")
        self.mine_tenant: dict[str, set[int]] = {}  # tenant key -> ids this process saw acknowledged
        self.plan_nodes: set[str] = set()  # the nodes the reference reads went to (the core's picks)
        self.quota: int | None = None  # the value this process last wrote to its own `plans` row
        self.mine: dict[int, dict[int, datetime]] = {}  # user -> ids this process saw acknowledged -> their time
        self.pending_moves: dict[tuple[str, str, str, int], set[int]] = {}  # lazy steps -> users read unmoved
        self.moved: tuple[int, set[int]] = (0, set())  # a fence epoch, the users seen moved under it
        self.rng = random.Random(f"{name}-{os.getpid()}")
        self.counting = threading.Lock()
        self.counters: dict[str, int] = {}
        self.latencies: list[float] = []
        self.routing: InForce | None = None
        self.epochs: list[int] = []
        self.reads_before = 0  # the follower's etcd reads at the last reset
        self.follower = EtcdFollower(
            self.etcd, TOPOLOGY, also=[PREVIOUS], on_change=self.follow,
            on_refused=lambda follower, offered: log(
                name, f"refused the topology in etcd: {offered.code}: {offered.message}; keeping epoch {self.epoch()}"
            ),
            on_error=lambda err: log(name, f"the etcd watch broke ({err}); reconnecting"),
        )
        if self.routing is None:
            raise SystemExit(f"[{name}] no usable topology in etcd at {TOPOLOGY}")
        self.reset()

    # -- the topology ------------------------------------------------------------------

    def follow(self, follower: EtcdFollower) -> None:
        """A new router (or new companions): the statements' routing from now on. A
        `previous` document that does not parse keeps the routing in force."""
        router = follower.router
        if router is None:
            return
        previous = follower.companions[PREVIOUS]
        try:
            session = shardroute.MigrationSession.of_topology(router, shardroute.Router(previous) if previous else None)
        except shardroute.ShardrouteError as err:
            log(self.name, f"refused epoch {router.epoch}: previous: {err.code}: {err}; keeping epoch {self.epoch()}")
            return
        document = json.loads(router.to_json())
        vbuckets = router if document["strategy"]["type"] == "vbucket" else None
        families = document.get("table_families", {}).values()
        plans = router.table(PLANS) if any(PLANS in family["tables"] for family in families) else None
        tenants = tuple(sorted(document.get("tenants", {}).get("entries", {})))
        self.routing = InForce(session, router.index(INDEX), vbuckets, plans, tenants)
        if not self.epochs or self.epochs[-1] != session.fence_epoch:
            self.epochs.append(session.fence_epoch)
        log(self.name, f"epoch {session.fence_epoch} ({session.mode})")

    def epoch(self) -> int:
        return self.routing.session.fence_epoch if self.routing else 0

    def fenced(self, routing: InForce, err: Fenced) -> None:
        """A shard refused the statement's epoch: etcd has a newer one (the fence is raised
        after the document is written), which the watch may not have brought yet, or is
        about to (the widening of the reference group fences first: README.md); read
        etcd again and, if it has nothing newer, wait a little."""
        self.counters_add("refused_by_fence")
        assert routing.session.fenced(err.min_epoch) == "refresh"  # the core's reading of a refusal
        try:
            self.follower.refresh()
        except EtcdError as failure:
            log(self.name, f"reading the topology failed ({failure}); keeping epoch {self.epoch()}")
        if self.epoch() <= routing.session.fence_epoch:
            time.sleep(0.01)

    # -- statements --------------------------------------------------------------------

    def insert(self, user: int) -> None:
        message_id = self.ids.next()
        body = f"{self.name} says {self.rng.getrandbits(64):016x} to user {user}"
        sender = self.rng.randrange(1, self.users + 1)
        while True:
            routing = self.routing
            assert routing is not None
            target, epoch = routing.session.write_plan(user)
            vbucket = routing.vbuckets.route(user) if routing.vbuckets else 0
            row = (message_id, user, vbucket, datetime.now(timezone.utc), body, self.name, sender)
            try:
                self.shards.insert_message(target, epoch, row)
            except Fenced as err:
                self.fenced(routing, err)
                continue
            break
        while True:  # the index entry, where the index routes the sender
            routing = self.routing
            assert routing is not None
            try:
                self.shards.insert_index(routing.index.node(sender), routing.session.fence_epoch, sender, message_id, user)
            except Fenced as err:
                self.fenced(routing, err)
                continue
            break
        self.oracle.insert(row)
        # Logged (and flushed) before it counts: an insert this process never logged
        # is not acknowledged, whatever the shard holds.
        self.acknowledged.write(f"{message_id} {user} {body_digest(body)}\n")
        self.acknowledged.flush()
        self.mine.setdefault(user, {})[message_id] = row[3]
        self.counters_add("writes")

    def insert_tenant(self, key: str, tenant: str) -> None:
        """A message on a tenant's channel: where the session's write plan says (the core
        applies the document's tenant rule to the key), then acknowledged."""
        message_id = self.ids.next()
        body = f"{self.name} says {self.rng.getrandbits(64):016x} on {key}"
        while True:
            routing = self.routing
            assert routing is not None
            target, epoch = routing.session.write_plan(key)
            vbucket = routing.vbuckets.route(key) if routing.vbuckets else 0
            row = (message_id, key, tenant, vbucket, datetime.now(timezone.utc), body, self.name)
            try:
                self.shards.write(target, epoch, INSERT_TENANT_MESSAGE, row)
            except Fenced as err:
                self.fenced(routing, err)
                continue
            break
        self.acknowledged_tenants.write(f"{message_id} {key} {body_digest(body)}\n")
        self.acknowledged_tenants.flush()
        self.mine_tenant.setdefault(key, set()).add(message_id)
        self.counters_add("tenant_writes")

    def tenant_channel(self, key: str) -> set[int]:
        """A tenant channel's message ids: the union of the session's read plan, in its
        order (old owner first). No moved flags for tenant keys: while one moves, both
        owners are read; the coordinator's sweep moves them (run B)."""
        while True:
            routing = self.routing
            assert routing is not None
            found: set[int] = set()
            try:
                for shard in routing.session.read_plan(key, False):
                    rows = self.shards.read(shard, routing.session.fence_epoch, f"SELECT id FROM {TENANT_TABLE} WHERE key = %s", (key,))
                    found.update(row[0] for row in rows)
            except Fenced as err:
                self.fenced(routing, err)
                continue
            if not self.mine_tenant.get(key, set()) <= found:
                self.counters_add("tenant_stale_reads")
            self.counters_add("tenant_reads")
            return found

    def read_plan_row(self, plan: str, expected: int | None = None) -> None:
        """A reference row read from the one node the core picks for it (`node`), checked
        against the value run.py seeded (PLAN_ROWS), or `expected`: the value this process
        last wrote to it."""
        while True:
            routing = self.routing
            assert routing is not None and routing.plans is not None
            node = routing.plans.node(plan)
            try:
                rows = self.shards.read(node, routing.session.fence_epoch, f"SELECT max_messages FROM {PLANS} WHERE plan = %s", (plan,))
            except Fenced as err:
                self.fenced(routing, err)
                continue
            if expected is None:  # the seeded plans' picks (both languages read the same ones)
                self.plan_nodes.add(node)
            self.counters_add("plan_reads")
            if [row[0] for row in rows] != [PLAN_ROWS[plan] if expected is None else expected]:
                self.counters_add("plan_wrong")
            return

    def write_plan_row(self, plan: str, max_messages: int) -> None:
        """A reference row written to every node `route_write` names; a refusal part way
        plans the whole write again (the upsert is idempotent)."""
        while True:
            routing = self.routing
            assert routing is not None and routing.plans is not None
            try:
                self.shards.write_reference(routing.plans.route_write(plan), routing.session.fence_epoch, plan, max_messages, self.name)
            except Fenced as err:
                self.fenced(routing, err)
                continue
            self.quota = max_messages
            self.counters_add("plan_writes")
            return

    def tenant_turn(self, turn: int) -> None:
        """Every fourth turn of `write`: a message on a random channel of one of the
        document's tenants (in turn), then a read of another of its channels; every eighth,
        a read of a reference row."""
        routing = self.routing
        assert routing is not None
        if routing.tenants:
            tenant = routing.tenants[(turn // 4) % len(routing.tenants)]
            self.insert_tenant(tenant_key(tenant, self.rng.randrange(1, CHANNELS + 1)), tenant)
            self.tenant_channel(tenant_key(tenant, self.rng.randrange(1, CHANNELS + 1)))
        if routing.plans is not None and turn % 8 == 0:
            self.read_plan_row(sorted(PLAN_ROWS)[(turn // 8) % len(PLAN_ROWS)])

    def timeline(self, user: int, page: int | None = None) -> list[tuple[int, str]]:
        """The user's newest `page` messages (all of them with None), newest first: the
        union by id of the read targets, each read a page (READ_PAGE), then the newest
        `page` of the union (shards.py's TIMELINE_PAGE says why that is the user's page)."""
        while True:
            routing = self.routing
            assert routing is not None
            try:
                found: dict[int, tuple[Any, str]] = {}
                full: tuple[str, str, str, int] | None = None  # a group of pending moves to make now
                steps = routing.session.lazy_steps(user)  # None unless this read moves the user
                known = steps is not None and self.known_moved(steps["fence_epoch"], user)
                flagged = True
                # In the plan's order (the core's: old owner first, see docs/rebalancing.md).
                plan = routing.session.read_plan(user, known)
                if len(plan) > 1:
                    self.counters_add("two_shard_reads")
                for shard in plan:
                    if steps is not None and not known and shard == steps["write_to"]:
                        # The new owner's rows and its moved flag, in one statement.
                        rows, flagged = self.shards.read_moved(shard, steps["fence_epoch"], user, page)
                    else:
                        rows = self.shards.read(shard, routing.session.fence_epoch, READ_PAGE, (user, page))
                    for message_id, at, body in rows:
                        found[message_id] = (at, body)
                if steps is not None and not known:
                    if flagged:
                        self.moved[1].add(user)
                    else:
                        # Read from both owners, old first: complete. The move itself goes
                        # with the next few this process meets (`move_pending`).
                        key = (steps["read_from"], steps["write_to"], steps["retire_from"], steps["fence_epoch"])
                        self.pending_moves.setdefault(key, set()).add(user)
                        if len(self.pending_moves[key]) >= LAZY_MOVE_BATCH:
                            full = key
            except Fenced as err:
                self.fenced(routing, err)
                continue
            shown = take_page(found, page)  # merged first, then the page taken
            if missed_in_page(shown, page, self.mine.get(user, {})):
                self.counters_add("stale_reads")
            self.counters_add("reads")
            if full is not None:
                self.move_pending(full)
            return [(message_id, body) for message_id, _, body in shown]

    def known_moved(self, fence_epoch: int, user: int | None) -> bool:
        """Whether this process saw `user` moved (its flag set) under `fence_epoch`: a
        flag is never taken back within a migration, so its reads go to the read plan of
        a moved user (the new owner) without asking again. Forgets every user when the
        fence epoch changes; with `user` None, whether the set is `fence_epoch`'s."""
        if self.moved[0] != fence_epoch:
            self.moved = (fence_epoch, set())
        return user is None or user in self.moved[1]

    def move_pending(self, only: tuple[str, str, str, int] | None = None) -> None:
        """The lazy moves of the users this process read unmoved and has not moved yet, a
        group (same steps) at a time (`Shards.move_users`: per user, the steps of a single
        move): the group `only`, or every group. A user whose steps changed since (a newer
        epoch) is left to whoever holds the migration now: the coordinator's sweep moves
        every user it finds."""
        began = time.perf_counter()
        statements = self.shards.statements
        try:
            self._move_pending(only)
        finally:
            self.counters_add("move_us", int((time.perf_counter() - began) * 1e6))
            self.counters_add("move_statements", self.shards.statements - statements)

    def _move_pending(self, only: tuple[str, str, str, int] | None) -> None:
        if only is None:
            pending, self.pending_moves = self.pending_moves, {}
        else:
            pending = {only: self.pending_moves.pop(only)}
        routing = self.routing
        assert routing is not None
        for (read_from, write_to, retire_from, fence_epoch), users in pending.items():
            steps: shardroute.LazySteps = {
                "read_from": read_from, "write_to": write_to, "retire_from": retire_from, "fence_epoch": fence_epoch,
            }
            still = sorted(user for user in users if routing.session.lazy_steps(user) == steps)
            if not still:
                continue
            try:
                self.counters_add("moved_rows", self.shards.move_users(still, steps))
                self.counters_add("moved_users", len(still))
            except Fenced as err:
                self.fenced(routing, err)
                continue
            if self.known_moved(fence_epoch, None):
                self.moved[1].update(still)

    # -- commands ----------------------------------------------------------------------

    def counters_add(self, name: str, amount: int = 1) -> None:
        with self.counting:
            self.counters[name] = self.counters.get(name, 0) + amount

    def reset(self) -> None:
        with self.counting:
            self.counters = {
                "writes": 0, "reads": 0, "insert_us": 0, "read_us": 0, "move_us": 0, "refused_by_fence": 0, "moved_rows": 0, "moved_users": 0, "stale_reads": 0,
                "query_restarts": 0, "two_shard_reads": 0, "move_statements": 0, "tenant_writes": 0, "tenant_reads": 0, "tenant_stale_reads": 0, "plan_reads": 0,
                "plan_wrong": 0, "plan_writes": 0,
            }
            self.plan_nodes = set()
        self.reads_before = self.follower.stats["reads"]
        self.statements_before = self.shards.statements
        self.latencies = []
        self.write_latencies: list[float] = []

    def timed(self, call: Any, *args: Any) -> None:
        start = time.perf_counter()
        call(*args)
        self.latencies.append(time.perf_counter() - start)

    def write(self, seconds: float) -> dict[str, Any]:
        if self.quota is not None and self.routing is not None and self.routing.plans is not None:
            # Read your own write: the row this process wrote at the end of its last
            # `write`, perhaps under an older epoch, from the node the core picks now
            # (after the widening of the group, perhaps a node that joined it).
            self.read_plan_row(f"{self.name}-quota", self.quota)
        end = time.monotonic() + seconds
        last_ack = time.monotonic()
        longest = 0.0
        parts: list[float] = []  # the longest gap: the read before the write, the write
        at = 0.0
        ops = 0
        read_s = 0.0
        while time.monotonic() < end:
            self.timed(self.insert, self.rng.randrange(1, self.users + 1))
            self.write_latencies.append(self.latencies[-1])
            self.counters_add("insert_us", int(self.latencies[-1] * 1e6))
            now = time.monotonic()
            if now - last_ack > longest:
                longest, parts, at = now - last_ack, [read_s, self.latencies[-1]], time.time()
            last_ack = now
            self.timed(self.timeline, self.rng.randrange(1, self.users + 1), self.page)
            read_s = self.latencies[-1]
            self.counters_add("read_us", int(read_s * 1e6))
            if ops % 8 == 0:
                self.tenant_turn(ops // 2)
            ops += 2
        self.move_pending()
        if self.routing is not None and self.routing.plans is not None:
            # The service's own reference row: its writes in this command, on every node of the group.
            self.write_plan_row(f"{self.name}-quota", self.counters["writes"])
        return {
            "ops": ops, "longest_stall_ms": round(longest * 1000, 1),
            "longest_stall_parts_ms": [round(part * 1000, 1) for part in parts], "longest_stall_at": round(at, 3),
        }

    # -- queries -------------------------------------------------------------------------

    def by_sender(self, sender: int) -> tuple[dict[int, tuple[str, str]], set[int], bool]:
        """Messages sent by `sender`, through the global index: its entries on the index
        shard, then the rows on the data shards of their users, visited in the scan order
        (old owners before new ones while data moves), merged by id. Returns id -> (body,
        node it came from first), the entries whose row no data shard had, and whether a
        migration was under way."""
        while True:
            routing = self.routing
            assert routing is not None
            try:
                entries = self.shards.read(
                    routing.index.node(sender), routing.session.fence_epoch,
                    "SELECT message_id, user_id FROM by_sender WHERE sender_id = %s", (sender,),
                )
                wanted: dict[str, list[int]] = {}
                for message_id, user in entries:
                    for node in routing.session.read_plan(user, False):
                        wanted.setdefault(node, []).append(message_id)
                found: dict[int, tuple[str, str]] = {}
                for node in routing.session.scan_nodes():
                    if node in wanted:
                        rows = self.shards.read(node, routing.session.fence_epoch, "SELECT id, body FROM messages WHERE id = ANY(%s)", (wanted[node],))
                        for message_id, body in rows:
                            found.setdefault(message_id, (body, node))
            except Fenced as err:
                self.fenced(routing, err)
                self.counters_add("query_restarts")
                continue
            dangling = {message_id for message_id, _ in entries} - found.keys()
            return found, dangling, routing.session.mode != "plain"

    def in_range(self, start: datetime, end: datetime) -> tuple[dict[int, tuple[str, str]], int, bool]:
        """Messages with `start <= time < end`: scatter/gather over every node in the scan
        order, merged by id. Returns id -> (body, first node), the rows found on a second
        node too (a copy under way), and whether a migration was under way."""
        while True:
            routing = self.routing
            assert routing is not None
            found: dict[int, tuple[str, str]] = {}
            merged = 0
            try:
                for node in routing.session.scan_nodes():
                    rows = self.shards.read(node, routing.session.fence_epoch, "SELECT id, body FROM messages WHERE time >= %s AND time < %s", (start, end))
                    for message_id, body in rows:
                        first = found.setdefault(message_id, (body, node))
                        merged += first[1] != node
            except Fenced as err:
                self.fenced(routing, err)
                self.counters_add("query_restarts")
                continue
            return found, merged, routing.session.mode != "plain"

    def query(self, seconds: float) -> dict[str, Any]:
        """Both queries in turn for `seconds`, each checked against the oracle. Writers are
        paused while queries run (run.py's rounds), so the oracle's answer is fixed; the
        data still moves under them."""
        end = time.monotonic() + seconds
        figures: dict[str, Any] = {
            "queries_by_sender": 0, "queries_by_time": 0, "queries_while_moving": 0, "query_rows": 0,
            "query_missing": 0, "query_extra": 0, "query_wrong": 0, "query_merged": 0, "index_dangling": 0,
        }
        odd: dict[str, set[int]] = {"missing_ids": set(), "extra_ids": set(), "dangling_ids": set()}
        timings: dict[str, list[float]] = {"sender": [], "time": [], "oracle_sender": [], "oracle_time": []}
        turn = 0
        while time.monotonic() < end:
            started = time.perf_counter()
            if turn % 2 == 0:
                sender = self.rng.randrange(1, self.users + 1)
                found, dangling, moving = self.by_sender(sender)
                timings["sender"].append(time.perf_counter() - started)
                started = time.perf_counter()
                expected = self.oracle.by_sender(sender)
                timings["oracle_sender"].append(time.perf_counter() - started)
                figures["queries_by_sender"] += 1
                figures["index_dangling"] += len(dangling)
                odd["dangling_ids"] |= dangling
            else:
                now = datetime.now(timezone.utc)
                # Every fourth window covers the last minutes (rows written during the
                # rebalance), the others ten minutes of the seeded day.
                if turn % 4 == 1:
                    start, stop = now - timedelta(minutes=3), now + timedelta(seconds=5)
                else:
                    start = now - timedelta(seconds=self.rng.uniform(600, 26 * 3600))
                    stop = start + timedelta(minutes=10)
                found, merged, moving = self.in_range(start, stop)
                timings["time"].append(time.perf_counter() - started)
                started = time.perf_counter()
                expected = self.oracle.in_range(start, stop)
                timings["oracle_time"].append(time.perf_counter() - started)
                figures["queries_by_time"] += 1
                figures["query_merged"] += merged
            turn += 1
            figures["queries_while_moving"] += moving
            figures["query_rows"] += len(found)
            missing, extra = expected.keys() - found.keys(), found.keys() - expected.keys()
            figures["query_missing"] += len(missing)
            figures["query_extra"] += len(extra)
            figures["query_wrong"] += sum(1 for message_id in expected.keys() & found.keys() if found[message_id][0] != expected[message_id])
            odd["missing_ids"] |= missing
            odd["extra_ids"] |= extra
        def p50(samples: list[float]) -> float:
            return round(sorted(samples)[len(samples) // 2] * 1e6, 1) if samples else 0.0
        return {
            "ops": figures["queries_by_sender"] + figures["queries_by_time"], "longest_stall_ms": 0.0, **figures,
            **{name: sorted(ids)[:50] for name, ids in odd.items()},
            **{f"{name}_p50_us": p50(samples) for name, samples in timings.items()},
        }

    def read_all(self) -> dict[str, Any]:
        for user in range(1, self.users + 1):
            self.timed(self.timeline, user, None)  # every row: no page
        self.move_pending()
        return {"ops": self.users, "longest_stall_ms": 0.0}

    def answer(self, command: str, result: dict[str, Any]) -> None:
        def percentile(p: float, latencies: list[float] | None = None) -> float:
            samples = sorted(self.latencies if latencies is None else latencies)
            return round(samples[min(len(samples) - 1, int(p * len(samples)))] * 1e6, 1) if samples else 0.0

        line = {
            "event": "done", "command": command, **result, **self.counters,
            "refreshes": self.follower.stats["reads"] - self.reads_before,
            "statements": self.shards.statements - self.statements_before,  # to the shards
            "refused_documents": sum(self.follower.stats["refused"].values()),
            "epochs_seen": list(self.epochs), "epoch": self.epoch(),
            "p50_us": percentile(0.50), "p99_us": percentile(0.99), "write_p99_us": percentile(0.99, self.write_latencies),
            "plan_read_nodes": sorted(self.plan_nodes),
        }
        print(json.dumps(line), flush=True)
        self.reset()

    def close(self) -> None:
        self.follower.close()
        self.acknowledged.close()
        self.acknowledged_tenants.close()
        self.shards.close()
        self.oracle.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", required=True, help="host:port of the PostgreSQL server")
    parser.add_argument("--etcd", required=True, help="etcd's client URL")
    parser.add_argument("--service", default="python", choices=sorted(TICKET_SERVER))
    parser.add_argument("--users", type=int, default=5000)
    parser.add_argument("--log", required=True, help="the acknowledgement log (appended to)")
    parser.add_argument("--page", type=int, default=TIMELINE_PAGE, help="messages a timeline read returns, newest first")
    args = parser.parse_args()
    if args.page < 1:
        parser.error("--page must be a positive integer")
    service = Service(args.postgres, args.etcd, args.service, args.users, args.log, args.page)
    print(json.dumps({"event": "ready", "epoch": service.epoch()}), flush=True)
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        try:
            if command == "write":
                service.answer("write", service.write(float(argument)))
            elif command == "read-all":
                service.answer("read-all", service.read_all())
            elif command == "query":
                service.answer("query", service.query(float(argument)))
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
