"""What the services, the coordinator and the runner share: the etcd keys, the start
topologies, fenced statements on the shard databases, and the two moves (a user's rows,
lazily; a vbucket's rows, in the background).

Every statement reads the shard's fence in the same statement (one round trip); a write
takes the fence row with `FOR SHARE`, held until its statement commits, so raising the
fence (`UPDATE`, which needs the row lock) waits for every write in flight and no write
chosen under an older epoch commits after it. A statement whose epoch is below the fence
raises `Fenced`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

import shardroute
from shardroute.documents import TopologyNode

PREFIX = "/shardroute/messages/"
TOPOLOGY = PREFIX + "topology"
PREVIOUS = PREFIX + "previous"
WATCH_END = TOPOLOGY + "\0"  # the watched range [previous, topology]: both documents
SHARD_NAMES = [f"shard_{i}" for i in range(1, 11)]
COLUMNS = "id, user_id, vbucket, time, body, sender, sender_id"
VBUCKETS = 256
ORACLE = "oracle"  # the database with every message, unsharded: what queries are checked against
INDEX = "by_sender"

# The global index "messages by sender", term-partitioned by the sender's user id: 64
# vbuckets over shard_1..shard_5 with an explicit map, a table that the growth to 10
# shards leaves where it is (the data moves, the index does not), and a strategy the edge
# example's route-only WASM build has. Its entries live in `by_sender` on those shards.
INDEX_VBUCKETS = 64
INDEXES: dict[str, Any] = {
    INDEX: {"strategy": {
        "type": "vbucket", "vbuckets": INDEX_VBUCKETS,
        "map": [[SHARD_NAMES[vbucket % 5]] for vbucket in range(INDEX_VBUCKETS)],
    }},
}

TICKETS: shardroute.Topology = {
    "format": "shardroute/1", "epoch": 1,
    "nodes": [{"id": "python"}, {"id": "node"}],
    "strategy": {"type": "id_bits", "layout": "ticket", "servers": 2},
}
TICKET_SERVER = {"python": 0, "node": 1}


def ids_key(service: str) -> str:
    return f"{PREFIX}ids/{service}"


def nodes(count: int) -> list[TopologyNode]:
    return [{"id": name} for name in SHARD_NAMES[:count]]


# Tenants and a reference table (README.md, "Tenants and the reference table"). Besides
# the users' messages (integer keys, which have no tenant), `tenant_messages` holds the
# messages of tenants' channels, keyed `<tenant>:<channel>`: the document's partition_key
# rule (prefix up to ":") takes the tenant part, and its `tenants` section says what a
# tenant with an entry gets. PLACED is kept on the node group `eu` (run B only: placing
# needs a strategy whose shards are its nodes, which modulo is and the vbucket dictionary
# of run A is not); SPREAD is spread over SPREAD_SHARDS buckets (any strategy: both runs).
# `plans` is a reference table of the family `catalog`: every row on every node of the
# group `catalog`; a write goes to all of them (`route_write`), a read to the one the core
# picks (`node`). The groups name nodes of the start topology, which the growth to 10
# leaves in place; after it, the coordinator widens `catalog` to all ten with the core's
# `node_group_set` (README.md, "Widening the reference table").
TENANT_TABLE = "tenant_messages"
TENANT_COLUMNS = "id, key, tenant, vbucket, time, body, sender"
PLACED = "acme"
SPREAD = "globex"
SPREAD_SHARDS = 8
CHANNELS = 500  # keys per tenant: "acme:1" .. "acme:500" (service.mjs: CHANNELS)
PLANS = "plans"
CATALOG = "catalog"
PLAN_ROWS = {"free": 100, "startup": 1_000, "team": 10_000, "nonprofit": 50_000, "enterprise": 1_000_000}  # plan -> max_messages, seeded by run.py
GROUPS = {"eu": SHARD_NAMES[:2], CATALOG: SHARD_NAMES[:5]}


def tenant_key(tenant: str, channel: int) -> str:
    return f"{tenant}:{channel}"


def tenant_sections(placing: bool) -> dict[str, Any]:
    """The document's tenant and table sections; `placing`: the strategy can place a
    tenant (run B), so PLACED gets its group."""
    entries: dict[str, Any] = {SPREAD: {"shards": SPREAD_SHARDS}}
    groups = {CATALOG: GROUPS[CATALOG]}
    if placing:
        entries[PLACED] = {"group": "eu"}
        groups["eu"] = GROUPS["eu"]
    return {
        "node_groups": groups,
        "table_families": {CATALOG: {"tables": [PLANS], "group": CATALOG, "reference": True}},
        "tenants": {"entries": entries},
    }


def vbucket_start(tenants: bool = False) -> shardroute.Topology:
    """Run A's start: 256 vbuckets over shard_1..shard_5, round-robin; with `tenants`,
    the spread tenant and the reference family too."""
    document: Any = {
        "format": "shardroute/1", "epoch": 1, "nodes": nodes(5),
        "strategy": {"type": "vbucket", "vbuckets": VBUCKETS}, "indexes": INDEXES,
    }
    if tenants:
        document["hashing"] = {"partition_key": {"rule": "prefix", "separator": ":"}}
        document.update(tenant_sections(placing=False))
    return document  # type: ignore[no-any-return]


def modulo(count: int, epoch: int, tenants: bool = False) -> shardroute.Topology:
    """Run B's topologies: the classic 1-based `user_id % n ?: n` (0 becomes n); with
    `tenants`, the placed and the spread tenant and the reference family too."""
    document: Any = {
        "format": "shardroute/1", "epoch": epoch, "hashing": {"integers": "identity"},
        "nodes": nodes(count), "strategy": {"type": "modulo", "one_based": True}, "indexes": INDEXES,
    }
    if tenants:
        document["hashing"]["partition_key"] = {"rule": "prefix", "separator": ":"}
        document.update(tenant_sections(placing=True))
    return document  # type: ignore[no-any-return]


def body_digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


# Raising a fence: the row is updated (and its lock taken, which waits for every write in
# flight on the shard and holds every new one behind it) only when the fence is below the
# epoch. `greatest(min_epoch, epoch)` updated it on every call: each lazy move raised its
# old owner's fence again, thousands of times at one epoch, and each such UPDATE stalled
# the shard's writers behind it. An UPDATE that finds the row locked by a raise in
# progress waits for it and then re-checks the WHERE on the new row, so a second raiser
# still returns only once the first raise (and the writes it waited for) committed.
RAISE_FENCE = "UPDATE fence SET min_epoch = %s WHERE min_epoch < %s"

# A fenced read in one statement: the fence row joined to the read's rows, so the check
# and the rows come from one snapshot in one round trip; `present` is NULL on the one row
# a read with no rows gives, and the read's own order is kept (`n`). Rows: (min_epoch,
# present, n, the read's columns...).
FENCED_READ_HEAD = "SELECT f.min_epoch, q.* FROM fence f LEFT JOIN (SELECT 1 AS present, row_number() OVER () AS n, s.* FROM ("
FENCED_READ_TAIL = ") s) q ON true ORDER BY q.n"

# A timeline is read a page at a time, as a messaging service reads one: the user's newest
# TIMELINE_PAGE messages, `ORDER BY time DESC, id DESC LIMIT TIMELINE_PAGE` (the same
# order on the shards and in the services' merge). Reading all of a user's messages made
# every read dearer as the run wrote more (the rows a read fetched grew with the run, the
# writes' cost with them); a page costs the same however long the user's history is. A
# user in motion (two shards) is read a page from each, merged by id, and the merge's
# newest TIMELINE_PAGE taken: the newest N of a union are within the union of each part's
# newest N. run.py gives both services this value (`--page`); `read-all` and every check
# read all rows (a limit of None: `LIMIT NULL` is no limit). Ten, the messages run.py
# seeds a user with (`--per-user`): a page is full from the first read, so a read costs the
# same from the start of a run to its end (a page of 50 left reads growing for the first
# minute, and the rebalance's window was compared with cheaper seconds before it).
TIMELINE_PAGE = 10
READ_PAGE = "SELECT id, time, body FROM messages WHERE user_id = %s ORDER BY time DESC, id DESC LIMIT %s"

# A moving user's rows on its new owner (a page of them: READ_PAGE's order and limit) and
# its moved flag: one row at least (id NULL when the new owner has none of its rows yet).
READ_MOVED = (
    "SELECT m.id, m.time, m.body, f.moved FROM (SELECT EXISTS (SELECT 1 FROM moved WHERE unit = %s) AS moved) f "
    "LEFT JOIN LATERAL (SELECT id, time, body FROM messages WHERE user_id = %s ORDER BY time DESC, id DESC LIMIT %s) m ON true"
)

# A fenced write in one statement: the fence row taken `FOR SHARE` (`f`, held until the
# statement's implicit transaction commits, as in BEGIN; SELECT ... FOR SHARE; write;
# COMMIT, so `raise_fence` still waits for it), the write `w` made only when the fence
# is at or below the statement's epoch (its first parameter), and the fence and the rows
# written answered: one round trip, not four. The write names FENCE_OK where it must hold
# (a one-time condition: evaluated, and the lock taken, before any row is written) and
# ends with `RETURNING 1`; a statement with more parts (INSERT_MOVED) names its main one
# `w`. Rows: (min_epoch, rows written).
FENCE_OK = "(SELECT ok FROM f)"


def fenced(parts: str) -> str:
    """The statement for a fenced write whose WITH parts (after `f`) are `parts`."""
    return (
        "WITH f AS MATERIALIZED (SELECT min_epoch, min_epoch <= %s::bigint AS ok FROM fence FOR SHARE), "
        f"{parts} SELECT (SELECT min_epoch FROM f), (SELECT count(*) FROM w)"
    )


# A user's message and its by_sender entry (the services' two writes per message); the
# parameters' types are given, as INSERT ... SELECT needs them.
INSERT_MESSAGE = (
    f"INSERT INTO messages ({COLUMNS}) SELECT "
    f"%s::bigint, %s::bigint, %s::integer, %s::timestamptz, %s::text, %s::text, %s::bigint WHERE {FENCE_OK}"
)
INSERT_INDEX = (
    f"INSERT INTO by_sender (sender_id, message_id, user_id) SELECT %s::bigint, %s::bigint, %s::bigint WHERE {FENCE_OK} "
    "ON CONFLICT DO NOTHING"
)

# A move's rows in one statement: one array per column (COLUMNS' order).
INSERT_ROWS = (
    f"INSERT INTO messages ({COLUMNS}) SELECT * FROM unnest("
    "%s::bigint[], %s::bigint[], %s::integer[], %s::timestamptz[], %s::text[], %s::text[], %s::bigint[]"
    f") WHERE {FENCE_OK} ON CONFLICT (id) DO NOTHING"
)
# The same with the units' moved flags and their `moves` log, one fenced statement (every
# part of a WITH runs, read or not); answers the rows inserted.
INSERT_MOVED = fenced(
    f"w AS ({INSERT_ROWS} RETURNING 1), "
    f"flagged AS (INSERT INTO moved (unit) SELECT u FROM unnest(%s::bigint[]) u WHERE {FENCE_OK} ON CONFLICT DO NOTHING), "
    f"logged AS (INSERT INTO moves (unit) SELECT u FROM unnest(%s::bigint[]) u WHERE {FENCE_OK})"
)

# The coordinator's pace (issue 38: writes during the rebalance at 85% of the rate before
# it or better). The copy competes with the services for the same CPUs and the same
# server; after each step of work (a vbucket's copy, a vbucket's delete, a group of swept
# users) it rests until the migration session's `resume_at`: the core decides the pause
# so that the job works at most its duty of the wall time (default 5%), and rests at least
# the shortest pause between two steps.
SWEEP_GROUP = 64  # users per step of run B's sweep (one statement each for them all)
# A service's lazy moves (run B) go in groups: a read of a user not yet moved reads the old
# owner, then the new one (the read plan of an unmoved user), and the user joins the
# process's pending moves, grouped by their steps (5 -> 10: one group per old shard); a
# group is moved once LAZY_MOVE_BATCH users are in it (and every group at the end of each
# command). One move per read cost as much as the iteration it was in (three
# transactions on two shards), at a quarter of the reads while users move; a move of 8
# pending users, whatever their groups, was ~1.6 users a group, about 2 statements a user;
# 16 in one group is 3 statements for them all (the fence, once raised, is not raised
# again: `Shards.raise_fence`).
LAZY_MOVE_BATCH = 16


def now_ms() -> int:
    """The pace's clock: monotonic, in whole milliseconds (the core's unit of time)."""
    return time.monotonic_ns() // 1_000_000


class Pace:
    """Rests after each step of work until the time the migration session gives
    (`MigrationSession.resume_at`); `None` takes the core's default duty or pause."""

    def __init__(self, duty_per_mille: int | None = None, min_pause_ms: int | None = None) -> None:
        self.duty_per_mille = duty_per_mille
        self.min_pause_ms = min_pause_ms
        self.worked_ms = 0
        self.rested_ms = 0

    def rest(self, session: shardroute.MigrationSession, began_ms: int) -> None:
        """After a step that began at `began_ms` (`now_ms()`)."""
        finished = now_ms()
        resume = session.resume_at(began_ms, finished, self.duty_per_mille, self.min_pause_ms)
        self.worked_ms += finished - began_ms
        self.rested_ms += resume - finished
        time.sleep((resume - finished) / 1000)


# A tenant move's rows in one statement (TENANT_COLUMNS' order).
INSERT_TENANT_ROWS = (
    f"INSERT INTO {TENANT_TABLE} ({TENANT_COLUMNS}) SELECT * FROM unnest("
    "%s::bigint[], %s::text[], %s::text[], %s::integer[], %s::timestamptz[], %s::text[], %s::text[]"
    f") WHERE {FENCE_OK} ON CONFLICT (id) DO NOTHING"
)
# A message on a tenant's channel (TENANT_COLUMNS' order).
INSERT_TENANT_MESSAGE = (
    f"INSERT INTO {TENANT_TABLE} ({TENANT_COLUMNS}) SELECT "
    f"%s::bigint, %s::text, %s::text, %s::integer, %s::timestamptz, %s::text, %s::text WHERE {FENCE_OK}"
)
# A reference row, the same statement on every node of its group (idempotent: a write
# refused part way is made again on all of them).
UPSERT_PLAN = (
    f"INSERT INTO {PLANS} (plan, max_messages, written_by) SELECT %s::text, %s::bigint, %s::text WHERE {FENCE_OK} "
    "ON CONFLICT (plan) DO UPDATE SET max_messages = EXCLUDED.max_messages, written_by = EXCLUDED.written_by"
)


# Reference rows copied in, one statement for them all (plan, max_messages, written_by
# arrays): an upsert, so a copy made again after a restart brings the source's values.
COPY_PLANS = (
    f"INSERT INTO {PLANS} (plan, max_messages, written_by) SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[]) WHERE {FENCE_OK} "
    "ON CONFLICT (plan) DO UPDATE SET max_messages = EXCLUDED.max_messages, written_by = EXCLUDED.written_by"
)


class Fenced(Exception):
    """The shard's fence is above the statement's epoch: re-read etcd and retry."""

    def __init__(self, shard: str, epoch: int, min_epoch: int) -> None:
        super().__init__(f"{shard} refused epoch {epoch}: its fence is at {min_epoch}")
        self.shard = shard
        self.epoch = epoch
        self.min_epoch = min_epoch


class Shards:
    """One autocommit connection per shard database (not thread-safe: one per thread)."""

    def __init__(self, postgres: str, names: Iterable[str] = SHARD_NAMES, application: str = "") -> None:
        """`application`: the connections' application_name (who they are, in pg_stat_activity)."""
        host, _, port = postgres.rpartition(":")
        self.connections = {
            name: psycopg.connect(host=host, port=int(port), user="postgres", dbname=name, autocommit=True,
                                  application_name=application)
            for name in names
        }
        self.statements = 0  # statements sent (each one round trip), for the services' counters
        self.raised: dict[str, int] = {}  # shard -> the highest epoch this object saw its fence raised to

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()

    def read(self, shard: str, epoch: int, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """`sql`'s rows, read in one statement with the fence (FENCED_READ): one round
        trip, not four (BEGIN, the fence, the read, COMMIT)."""
        self.statements += 1
        rows = self.connections[shard].execute(FENCED_READ_HEAD + sql + FENCED_READ_TAIL, params).fetchall()
        if rows[0][0] > epoch:
            raise Fenced(shard, epoch, rows[0][0])
        return [row[3:] for row in rows if row[1] is not None]

    def write(self, shard: str, epoch: int, sql: str, params: Sequence[Any] = ()) -> int:
        """One fenced write, one statement (`fenced`): `sql` is an INSERT, UPDATE or DELETE
        that names FENCE_OK where it must hold, without RETURNING. Its row count."""
        if FENCE_OK not in sql:
            raise ValueError(f"a fenced write names FENCE_OK: {sql}")
        return self._fenced(shard, epoch, fenced(f"w AS ({sql} RETURNING 1)"), params)

    def _fenced(self, shard: str, epoch: int, statement: str, params: Sequence[Any]) -> int:
        """Runs a `fenced(...)` statement (its first parameter the epoch); its rows written."""
        self.statements += 1
        row = self.connections[shard].execute(statement, [epoch, *params]).fetchone()
        assert row is not None
        if row[0] > epoch:
            raise Fenced(shard, epoch, row[0])
        return int(row[1])

    def insert_rows(
        self, shard: str, epoch: int, rows: Sequence[tuple[Any, ...]], moved_unit: int | None = None,
        moved_units: Sequence[int] = (),
    ) -> int:
        """Copies rows in (`ON CONFLICT DO NOTHING`: a row already there is skipped), and
        marks `moved_unit` and `moved_units` moved in the same statement, so a flag never
        exists without its rows. Returns the rows actually inserted."""
        moved_units = [*moved_units, *([] if moved_unit is None else [moved_unit])]
        # One statement for the lot (arrays, one per column), not one per row: a statement
        # per row made the copy cost ~0.3 ms of both processes' CPU a row.
        columns = [list(column) for column in zip(*rows)] if rows else [[] for _ in range(7)]
        if moved_units:
            # The rows, the flags and the log of every move (a user twice: a race) at once.
            return self._fenced(shard, epoch, INSERT_MOVED, [*columns, list(moved_units), list(moved_units)])
        return self.write(shard, epoch, INSERT_ROWS, columns) if rows else 0

    def insert_message(self, shard: str, epoch: int, row: Sequence[Any]) -> None:
        """A user's message (COLUMNS' order), fenced: one statement."""
        self.write(shard, epoch, INSERT_MESSAGE, row)

    def insert_index(self, shard: str, epoch: int, sender: int, message_id: int, user: int) -> None:
        """A `by_sender` entry (idempotent), fenced as every write is."""
        self.write(shard, epoch, INSERT_INDEX, (sender, message_id, user))

    def raise_fence(self, shard: str, epoch: int) -> None:
        """The shard refuses every statement below `epoch` from now on; returns once the
        writes in flight (which hold the fence row `FOR SHARE`) have committed.

        A fence already at `epoch` or above is not touched (see RAISE_FENCE): once a raise
        has committed, no write under an older epoch is in flight, and one still in
        progress is waited for all the same. A fence only rises, so once a raise through
        this object has returned, raising it to that epoch or a lower one again sends
        nothing (a lazy mover raises the same fence for every group it moves). A process
        that outlives its databases (made anew, the fence back at 1) must clear `raised`
        first (examples/edge-routing-tier/shard_service.py does)."""
        if self.raised.get(shard, -1) >= epoch:
            return
        self.statements += 1
        self.connections[shard].execute(RAISE_FENCE, (epoch, epoch))
        self.raised[shard] = epoch

    def analyze(self, shard: str) -> None:
        """Fresh planner statistics for the tables a move fills on `shard` (`ANALYZE
        messages, moved, tenant_messages`: 1-4 ms; `ANALYZE` of the whole database, the
        system catalogs too, took 25 ms whatever the rows). A new shard's
        tables are empty when the services first read them, and a plan the server caches
        then (psycopg prepares a statement it runs often; the Node service names its
        statements) scans the whole table: it stays cached, however many rows arrive,
        until the table's statistics change. Whoever loads rows into a new shard (the
        coordinator) refreshes them; the cached plans are made again (by index)."""
        self.statements += 1
        self.connections[shard].execute(f"ANALYZE messages, moved, {TENANT_TABLE}")

    def fence(self, shard: str) -> int:
        row = self.connections[shard].execute("SELECT min_epoch FROM fence").fetchone()
        assert row is not None
        return int(row[0])

    # -- the two moves ----------------------------------------------------------------

    def move_user(self, user: int, steps: shardroute.LazySteps) -> int:
        """The lazy move of docs/rebalancing.md, run B, as the core's migration session
        gives it (`MigrationSession.lazy_steps`): raise the old owner's fence, copy the
        user's rows from `read_from` to `write_to` with the moved flag, delete them from
        `retire_from`, all under `fence_epoch`. Every step is idempotent, so two movers of
        one user (two services, or a service and the sweep) neither lose nor duplicate a
        row. Returns the rows this call inserted."""
        return self.move_users([user], steps)

    def move_users(self, users: Sequence[int], steps: shardroute.LazySteps) -> int:
        """`move_user` for users whose lazy steps are the same (`read_from`, `write_to`,
        `retire_from`, `fence_epoch`): the same four steps, each one statement for them all
        (the coordinator's sweep). Per user the order and the transactions' contents are
        those of `move_user`, so a service moving one of them at the same time races as
        two single moves do. Returns the rows this call inserted."""
        epoch = steps["fence_epoch"]
        units = list(users)
        self.raise_fence(steps["retire_from"], epoch)
        rows = self.read(steps["read_from"], epoch, f"SELECT {COLUMNS} FROM messages WHERE user_id = ANY(%s)", (units,))
        inserted = self.insert_rows(steps["write_to"], epoch, rows, moved_units=units)
        self.write(steps["retire_from"], epoch, f"DELETE FROM messages WHERE user_id = ANY(%s) AND {FENCE_OK}", (units,))
        return inserted

    def is_moved(self, shard: str, epoch: int, user: int) -> bool:
        return bool(self.read(shard, epoch, "SELECT 1 FROM moved WHERE unit = %s", (user,)))

    def read_moved(self, shard: str, epoch: int, user: int, limit: int | None = None) -> tuple[list[tuple[Any, ...]], bool]:
        """The user's rows on `shard` (id, time, body; the newest `limit`, newest first,
        or all of them) and whether its moved flag is set there, in one statement (one
        snapshot): a read of a moving user costs one transaction, not two (the flag, then
        the rows)."""
        rows = self.read(shard, epoch, READ_MOVED, (user, user, limit))
        return [row[:3] for row in rows if row[0] is not None], bool(rows[0][3])

    def copy_vbucket(self, vbucket: int, old: str, new: str, epoch: int) -> tuple[int, int]:
        """Run A's copy of one vbucket: every row old has, into new (`ON CONFLICT DO
        NOTHING`). Returns (rows read, rows inserted): a difference means rows an
        earlier, interrupted copy had already brought."""
        rows = self.read(old, epoch, f"SELECT {COLUMNS} FROM messages WHERE vbucket = %s", (vbucket,))
        return len(rows), self.insert_rows(new, epoch, rows)


    # -- tenants' channels and the reference table ---------------------------------------

    def insert_tenant_rows(self, shard: str, epoch: int, rows: Sequence[tuple[Any, ...]]) -> int:
        """Tenant rows copied in (`ON CONFLICT DO NOTHING`), fenced; the rows inserted."""
        if not rows:
            return 0
        return self.write(shard, epoch, INSERT_TENANT_ROWS, [list(column) for column in zip(*rows)])

    def copy_tenant_vbucket(self, vbucket: int, old: str, new: str, epoch: int) -> tuple[int, int]:
        """`copy_vbucket` for `tenant_messages`: (rows read, rows inserted)."""
        rows = self.read(old, epoch, f"SELECT {TENANT_COLUMNS} FROM {TENANT_TABLE} WHERE vbucket = %s", (vbucket,))
        return len(rows), self.insert_tenant_rows(new, epoch, rows)

    def move_tenant_keys(self, keys: Sequence[str], steps: shardroute.LazySteps) -> int:
        """`move_users` for tenant keys (run B's sweep): the old owner's fence raised, the
        keys' rows copied to the new owner, deleted from the old one, under the steps'
        fence epoch. No moved flag: the services read a moving tenant key from both
        owners, old first, until the final epoch. Returns the rows inserted."""
        epoch = steps["fence_epoch"]
        self.raise_fence(steps["retire_from"], epoch)
        rows = self.read(steps["read_from"], epoch, f"SELECT {TENANT_COLUMNS} FROM {TENANT_TABLE} WHERE key = ANY(%s)", (list(keys),))
        inserted = self.insert_tenant_rows(steps["write_to"], epoch, rows)
        self.write(steps["retire_from"], epoch, f"DELETE FROM {TENANT_TABLE} WHERE key = ANY(%s) AND {FENCE_OK}", (list(keys),))
        return inserted

    def write_reference(self, nodes: Sequence[str], epoch: int, plan: str, max_messages: int, written_by: str) -> None:
        """A `plans` row on every node `route_write` named, each write fenced."""
        for node in nodes:
            self.write(node, epoch, UPSERT_PLAN, (plan, max_messages, written_by))

    def copy_reference(self, shard: str, epoch: int, rows: Sequence[tuple[Any, ...]]) -> int:
        """`plans` rows (plan, max_messages, written_by) upserted on `shard`, fenced; the
        rows written."""
        if not rows:
            return 0
        return self.write(shard, epoch, COPY_PLANS, [list(column) for column in zip(*rows)])


class Oracle:
    """The unsharded copy: every message in one database (`oracle`), written after the
    shards, read only to check what the sharded queries answer."""

    def __init__(self, postgres: str) -> None:
        host, _, port = postgres.rpartition(":")
        self.connection = psycopg.connect(host=host, port=int(port), user="postgres", dbname=ORACLE, autocommit=True)

    def close(self) -> None:
        self.connection.close()

    def insert(self, row: Sequence[Any]) -> None:
        self.connection.execute(
            f"INSERT INTO messages ({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING", row
        )

    def by_sender(self, sender: int) -> dict[int, str]:
        rows = self.connection.execute("SELECT id, body FROM messages WHERE sender_id = %s", (sender,)).fetchall()
        return {message_id: body for message_id, body in rows}

    def in_range(self, start: Any, end: Any) -> dict[int, str]:
        rows = self.connection.execute("SELECT id, body FROM messages WHERE time >= %s AND time < %s", (start, end)).fetchall()
        return {message_id: body for message_id, body in rows}
