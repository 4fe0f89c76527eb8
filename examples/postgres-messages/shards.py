"""What the services, the coordinator and the runner share: the etcd keys, the start
topologies, fenced statements on the shard databases, and the two moves (a user's rows,
lazily; a vbucket's rows, in the background).

Every statement runs in a transaction that first reads the shard's fence; a write takes
the fence row with `FOR SHARE`, so raising the fence (`UPDATE`, which needs the row
lock) waits for every write in flight and no write chosen under an older epoch commits
after it. A statement whose epoch is below the fence raises `Fenced`.
"""

from __future__ import annotations

import hashlib
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


def vbucket_start() -> shardroute.Topology:
    """Run A's start: 256 vbuckets over shard_1..shard_5, round-robin."""
    return {
        "format": "shardroute/1", "epoch": 1, "nodes": nodes(5),
        "strategy": {"type": "vbucket", "vbuckets": VBUCKETS}, "indexes": INDEXES,
    }


def modulo(count: int, epoch: int) -> shardroute.Topology:
    """Run B's topologies: the classic 1-based `user_id % n ?: n` (0 becomes n)."""
    return {
        "format": "shardroute/1", "epoch": epoch, "hashing": {"integers": "identity"},
        "nodes": nodes(count), "strategy": {"type": "modulo", "one_based": True}, "indexes": INDEXES,
    }


def body_digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


class Fenced(Exception):
    """The shard's fence is above the statement's epoch: re-read etcd and retry."""

    def __init__(self, shard: str, epoch: int, min_epoch: int) -> None:
        super().__init__(f"{shard} refused epoch {epoch}: its fence is at {min_epoch}")
        self.shard = shard
        self.epoch = epoch
        self.min_epoch = min_epoch


class Shards:
    """One autocommit connection per shard database (not thread-safe: one per thread)."""

    def __init__(self, postgres: str, names: Iterable[str] = SHARD_NAMES) -> None:
        host, _, port = postgres.rpartition(":")
        self.connections = {
            name: psycopg.connect(host=host, port=int(port), user="postgres", dbname=name, autocommit=True)
            for name in names
        }

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()

    def _check(self, connection: psycopg.Connection[Any], shard: str, epoch: int, lock: bool) -> None:
        row = connection.execute("SELECT min_epoch FROM fence" + (" FOR SHARE" if lock else "")).fetchone()
        assert row is not None
        if row[0] > epoch:
            raise Fenced(shard, epoch, row[0])

    def read(self, shard: str, epoch: int, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        connection = self.connections[shard]
        with connection.transaction():
            self._check(connection, shard, epoch, lock=False)
            return connection.execute(sql, params).fetchall()

    def write(self, shard: str, epoch: int, sql: str, params: Sequence[Any] = ()) -> int:
        """One fenced write; its row count."""
        connection = self.connections[shard]
        with connection.transaction():
            self._check(connection, shard, epoch, lock=True)
            return connection.execute(sql, params).rowcount

    def insert_rows(self, shard: str, epoch: int, rows: Sequence[tuple[Any, ...]], moved_unit: int | None = None) -> int:
        """Copies rows in (`ON CONFLICT DO NOTHING`: a row already there is skipped), and
        with `moved_unit` marks that unit moved in the same transaction, so the flag
        never exists without the rows. Returns the rows actually inserted."""
        connection = self.connections[shard]
        inserted = 0
        with connection.transaction():
            self._check(connection, shard, epoch, lock=True)
            with connection.cursor() as cursor:
                for row in rows:
                    cursor.execute(
                        f"INSERT INTO messages ({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                        row,
                    )
                    inserted += cursor.rowcount
            if moved_unit is not None:
                connection.execute("INSERT INTO moved (unit) VALUES (%s) ON CONFLICT DO NOTHING", (moved_unit,))
                connection.execute("INSERT INTO moves (unit) VALUES (%s)", (moved_unit,))  # every move, kept
        return inserted

    def insert_index(self, shard: str, epoch: int, sender: int, message_id: int, user: int) -> None:
        """A `by_sender` entry (idempotent), fenced as every write is."""
        self.write(
            shard, epoch, "INSERT INTO by_sender (sender_id, message_id, user_id) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (sender, message_id, user),
        )

    def raise_fence(self, shard: str, epoch: int) -> None:
        """The shard refuses every statement below `epoch` from now on; returns once the
        writes in flight (which hold the fence row `FOR SHARE`) have committed."""
        self.connections[shard].execute("UPDATE fence SET min_epoch = greatest(min_epoch, %s)", (epoch,))

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
        epoch = steps["fence_epoch"]
        self.raise_fence(steps["retire_from"], epoch)
        rows = self.read(steps["read_from"], epoch, f"SELECT {COLUMNS} FROM messages WHERE user_id = %s", (user,))
        inserted = self.insert_rows(steps["write_to"], epoch, rows, moved_unit=user)
        self.write(steps["retire_from"], epoch, "DELETE FROM messages WHERE user_id = %s", (user,))
        return inserted

    def is_moved(self, shard: str, epoch: int, user: int) -> bool:
        return bool(self.read(shard, epoch, "SELECT 1 FROM moved WHERE unit = %s", (user,)))

    def copy_vbucket(self, vbucket: int, old: str, new: str, epoch: int) -> tuple[int, int]:
        """Run A's copy of one vbucket: every row old has, into new (`ON CONFLICT DO
        NOTHING`). Returns (rows read, rows inserted): a difference means rows an
        earlier, interrupted copy had already brought."""
        rows = self.read(old, epoch, f"SELECT {COLUMNS} FROM messages WHERE vbucket = %s", (vbucket,))
        return len(rows), self.insert_rows(new, epoch, rows)


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
