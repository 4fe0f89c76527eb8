"""What a rebalance costs the shards, counted (never timed), on real servers (issue 38,
item 7: writes during the rebalance at full speed; the rates themselves are measured by
bench/postgres/bench.py in `make bench`):

* raising a fence that is already at the epoch leaves its row alone (no new row version,
  so no row lock that the shard's writers queue behind);
* a vbucket's copy and a lazy move are a fixed number of statements, whatever the rows
  (one statement for the rows, not one per row);
* a fenced read is one statement, refused below the fence, empty when nothing matches; a
  timeline's page is the user's newest rows, newest first;
* a fenced write is one statement (the fence taken FOR SHARE and the write), refused
  below the fence with nothing written; a write in flight holds the fence row, so a raise
  waits for it, and a write that waited for a raise sees the raised fence;
* the coordinator's pace rests until the session's `resume_at`: `took * (1 - duty) / duty`,
  at least the shortest pause.

Run: .venv/bin/python -m pytest examples/postgres-messages/test_costs.py
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from servers import Servers  # noqa: E402
import shardroute  # noqa: E402
from shards import COLUMNS, READ_PAGE, Fenced, Pace, Shards, modulo, now_ms  # noqa: E402

USER_ROWS = 10


class CountingCursor:
    def __init__(self, cursor: psycopg.Cursor[Any], owner: Counting) -> None:
        self.cursor = cursor
        self.owner = owner

    def __enter__(self) -> CountingCursor:
        self.cursor.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cursor.__exit__(*exc)

    def execute(self, *args: Any, **kwargs: Any) -> psycopg.Cursor[Any]:
        self.owner.statements += 1
        return self.cursor.execute(*args, **kwargs)

    @property
    def rowcount(self) -> int:
        return self.cursor.rowcount


class Counting:
    """A shard connection that counts the statements sent through it (on the connection
    or on its cursors)."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection
        self.statements = 0

    def execute(self, *args: Any, **kwargs: Any) -> psycopg.Cursor[Any]:
        self.statements += 1
        return self.connection.execute(*args, **kwargs)

    def cursor(self) -> CountingCursor:
        return CountingCursor(self.connection.cursor(), self)

    def close(self) -> None:
        self.connection.close()


def counted(shards: Shards) -> dict[str, Counting]:
    wrapped = {name: Counting(connection) for name, connection in shards.connections.items()}
    shards.connections = wrapped  # type: ignore[assignment]
    return wrapped


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    with Servers() as running:
        yield running


@pytest.fixture()
def postgres(servers: Servers) -> str:
    servers.reset()
    assert servers.postgres is not None
    return servers.postgres.address


def rows_of(users: list[int], vbucket: int = 0) -> list[tuple[Any, ...]]:
    at = datetime.now(timezone.utc) - timedelta(hours=1)
    return [
        (user * 1000 + n, user, vbucket, at + timedelta(seconds=n), f"message {n} of {user}", "seed", user)
        for user in users for n in range(USER_ROWS)
    ]


def fence_row(postgres: str, shard: str) -> tuple[str, int]:
    host, _, port = postgres.rpartition(":")
    with psycopg.connect(host=host, port=int(port), user="postgres", dbname=shard, autocommit=True) as connection:
        row = connection.execute("SELECT ctid::text, min_epoch FROM fence").fetchone()
    assert row is not None
    return row[0], row[1]


def test_raising_a_fence_already_there_leaves_its_row_alone(postgres: str) -> None:
    first, again = Shards(postgres, ["shard_1"]), Shards(postgres, ["shard_1"])  # two processes
    try:
        first.raise_fence("shard_1", 2)
        raised = fence_row(postgres, "shard_1")
        assert raised[1] == 2
        again.raise_fence("shard_1", 2)  # another mover of the same epoch
        again.raise_fence("shard_1", 1)  # an older one
        assert fence_row(postgres, "shard_1") == raised  # the same row version: not updated
        again.raise_fence("shard_1", 3)
        assert fence_row(postgres, "shard_1")[1] == 3
    finally:
        first.close()
        again.close()


def test_a_vbucket_copy_is_two_statements_whatever_its_rows(postgres: str) -> None:
    shards = Shards(postgres, ["shard_1", "shard_6"])
    try:
        rows = rows_of(list(range(1, 31)), vbucket=7)  # 300 rows
        shards.insert_rows("shard_1", 2, rows)
        connections = counted(shards)
        read, inserted = shards.copy_vbucket(7, "shard_1", "shard_6", 2)
        assert (read, inserted) == (len(rows), len(rows))
        assert connections["shard_1"].statements == 1  # the read, with its fence
        assert connections["shard_6"].statements == 1  # the fence and every row at once
        assert shards.copy_vbucket(7, "shard_1", "shard_6", 2) == (len(rows), 0)  # again: nothing new
    finally:
        shards.close()


def test_a_lazy_move_is_a_fixed_number_of_statements(postgres: str) -> None:
    shards = Shards(postgres, ["shard_1", "shard_6"])
    try:
        shards.insert_rows("shard_1", 1, rows_of([6, 11, 16]))
        steps: Any = {"read_from": "shard_1", "write_to": "shard_6", "retire_from": "shard_1", "fence_epoch": 2}
        connections = counted(shards)
        assert shards.move_user(6, steps) == USER_ROWS
        # The fence raised, the rows read, the rows with the flag, the delete (each of the
        # last three with its fence): 1 + 1 + 1 + 1, whatever the user's rows.
        assert connections["shard_1"].statements + connections["shard_6"].statements == 4
        before = connections["shard_1"].statements + connections["shard_6"].statements
        assert shards.move_users([11, 16], steps) == 2 * USER_ROWS  # a group: the same statements,
        # but the fence this object raised already: 1 + 1 + 1.
        assert connections["shard_1"].statements + connections["shard_6"].statements - before == 3
        assert fence_row(postgres, "shard_1")[1] == 2
        moved, flagged = shards.read_moved("shard_6", 2, 11)
        assert flagged and len(moved) == USER_ROWS
        page, flagged = shards.read_moved("shard_6", 2, 11, 3)  # a timeline's page: the newest 3, newest first
        assert flagged and [row[0] for row in page] == [11009, 11008, 11007]
        assert shards.read("shard_1", 2, f"SELECT {COLUMNS} FROM messages") == []
        host, _, port = postgres.rpartition(":")
        with psycopg.connect(host=host, port=int(port), user="postgres", dbname="shard_6", autocommit=True) as check:
            assert check.execute("SELECT count(*) FROM moves").fetchone() == (3,)
    finally:
        shards.close()


def test_a_fenced_read_is_one_statement_refused_below_the_fence(postgres: str) -> None:
    shards = Shards(postgres, ["shard_2"])
    try:
        shards.insert_rows("shard_2", 1, rows_of([2]))
        shards.raise_fence("shard_2", 3)
        connections = counted(shards)
        assert len(shards.read("shard_2", 3, "SELECT id FROM messages WHERE user_id = %s", (2,))) == USER_ROWS
        assert shards.read("shard_2", 3, "SELECT id FROM messages WHERE user_id = %s", (999,)) == []
        assert connections["shard_2"].statements == 2
        with pytest.raises(Fenced) as refused:
            shards.read("shard_2", 2, "SELECT id FROM messages WHERE user_id = %s", (2,))
        assert refused.value.min_epoch == 3
        # A timeline's page: the user's newest 4 (rows_of: message n at n seconds), newest
        # first; no limit (None: `LIMIT NULL`) reads them all.
        assert [row[0] for row in shards.read("shard_2", 3, READ_PAGE, (2, 4))] == [2009, 2008, 2007, 2006]
        assert len(shards.read("shard_2", 3, READ_PAGE, (2, None))) == USER_ROWS
        moved, flagged = shards.read_moved("shard_2", 3, 999)  # no rows, no flag
        assert (moved, flagged) == ([], False)
    finally:
        shards.close()


def test_the_pace_rests_until_the_session_says(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100_000]
    slept: list[float] = []
    # shards.py's Pace reads time.monotonic_ns and calls time.sleep (for this test only).
    monkeypatch.setattr(time, "monotonic_ns", lambda: clock[0] * 1_000_000)
    monkeypatch.setattr(time, "sleep", slept.append)
    session = shardroute.MigrationSession(shardroute.Migration(shardroute.Router(modulo(5, 1)), shardroute.Router(modulo(10, 2))), "lazy")
    pace = Pace(duty_per_mille=100, min_pause_ms=20)
    began = clock[0]
    clock[0] += 10  # a step of 10 ms: 90 ms of rest works it 10% of the time
    pace.rest(session, began)
    began = clock[0]
    clock[0] += 1  # a step of 1 ms: the shortest pause
    pace.rest(session, began)
    assert slept == [0.090, 0.020]
    assert (pace.worked_ms, pace.rested_ms) == (11, 110)
    default = Pace()  # the core's defaults: 5%, no shortest pause
    began = clock[0]
    clock[0] += 10
    default.rest(session, began)
    assert slept[-1] == 0.190
    with pytest.raises(shardroute.ShardrouteError) as refused:
        Pace(duty_per_mille=0).rest(session, clock[0])
    assert refused.value.code == "invalid_argument"


def connect(postgres: str, shard: str, autocommit: bool) -> psycopg.Connection[Any]:
    host, _, port = postgres.rpartition(":")
    return psycopg.connect(host=host, port=int(port), user="postgres", dbname=shard, autocommit=autocommit)


def test_a_fenced_write_is_one_statement_refused_below_the_fence(postgres: str) -> None:
    shards = Shards(postgres, ["shard_3", "shard_4"])
    try:
        shards.raise_fence("shard_3", 3)
        connections = counted(shards)
        at = datetime.now(timezone.utc)
        # A service's message: its row, then its by_sender entry; one statement each.
        shards.insert_message("shard_3", 3, (501, 3, 0, at, "hello", "test", 8))
        shards.insert_index("shard_4", 3, 8, 501, 3)
        assert (connections["shard_3"].statements, connections["shard_4"].statements) == (1, 1)
        shards.insert_index("shard_4", 3, 8, 501, 3)  # again: ON CONFLICT DO NOTHING
        with pytest.raises(Fenced) as refused:
            shards.insert_message("shard_3", 2, (502, 3, 0, at, "late", "test", 8))
        assert (refused.value.min_epoch, refused.value.epoch) == (3, 2)
        with pytest.raises(Fenced):
            shards.write("shard_3", 2, "DELETE FROM messages WHERE user_id = %s AND (SELECT ok FROM f)", (3,))
        assert shards.read("shard_3", 3, "SELECT id, body FROM messages") == [(501, "hello")]  # 502 not written, 501 kept
        assert shards.read("shard_4", 3, "SELECT sender_id, message_id, user_id FROM by_sender") == [(8, 501, 3)]
        assert shards.write("shard_3", 3, "DELETE FROM messages WHERE user_id = %s AND (SELECT ok FROM f)", (3,)) == 1
        with pytest.raises(ValueError):  # a write without the fence's condition is not sent
            shards.write("shard_3", 3, "DELETE FROM messages", ())
        assert connections["shard_3"].statements == 5  # the two messages, the two deletes, the read
    finally:
        shards.close()


def test_a_raise_waits_for_a_fenced_write_in_flight(postgres: str) -> None:
    """The write's statement takes the fence row FOR SHARE and keeps it to its commit: a
    write left uncommitted (its connection in a transaction) holds back the raise."""
    shards = Shards(postgres, [])
    writer = connect(postgres, "shard_2", autocommit=False)
    raiser = connect(postgres, "shard_2", autocommit=True)
    try:
        shards.connections["shard_2"] = writer
        shards.insert_index("shard_2", 1, 5, 900, 5)  # in flight: not committed
        raiser.execute("SET lock_timeout = '200ms'")  # how long the raise waits here before giving up
        with pytest.raises(psycopg.errors.LockNotAvailable):
            raiser.execute("UPDATE fence SET min_epoch = %s WHERE min_epoch < %s", (2, 2))
        writer.commit()
        raiser.execute("UPDATE fence SET min_epoch = %s WHERE min_epoch < %s", (2, 2))
        assert fence_row(postgres, "shard_2")[1] == 2
    finally:
        writer.close()
        raiser.close()


def test_a_fenced_write_behind_a_raise_sees_the_raised_fence(postgres: str) -> None:
    """A write that waits for a raise in progress (its statement began before the raise
    committed) reads the raised fence once the raise commits, and writes nothing."""
    shards = Shards(postgres, ["shard_2"])
    raiser = connect(postgres, "shard_2", autocommit=False)
    watcher = connect(postgres, "shard_2", autocommit=True)
    outcome: list[BaseException | int] = []
    try:
        raiser.execute("UPDATE fence SET min_epoch = 2 WHERE min_epoch < 2")  # the raise, not committed
        writer_pid = shards.connections["shard_2"].info.backend_pid

        def write() -> None:
            try:
                outcome.append(shards.write(
                    "shard_2", 1, "INSERT INTO by_sender (sender_id, message_id, user_id) SELECT 5, 901, 5 WHERE (SELECT ok FROM f)"
                ))
            except BaseException as err:  # noqa: BLE001 - looked at below
                outcome.append(err)

        thread = threading.Thread(target=write)
        thread.start()
        deadline = now_ms() + 10_000
        while now_ms() < deadline:  # until the writer waits on the fence row's lock
            row = watcher.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (writer_pid,)).fetchone()
            if row is not None and row[0] == "Lock":
                break
            time.sleep(0.01)
        else:
            raise AssertionError("the write never waited for the raise")
        raiser.commit()
        thread.join(10)
        assert len(outcome) == 1 and isinstance(outcome[0], Fenced) and outcome[0].min_epoch == 2
        assert watcher.execute("SELECT count(*) FROM by_sender").fetchone() == (0,)
    finally:
        raiser.close()
        watcher.close()
        shards.close()


def test_the_page_rule_expects_what_a_page_must_show() -> None:
    """`missed_in_page` (service.mjs's `missedInPage` is the same rule): a message of this
    process is expected in a full page only when newer than its oldest row (time, then
    id); in a page that is not full, always. Stated by hand, including a miss it must see."""
    from service import missed_in_page, take_page

    t = [datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=s) for s in range(6)]
    found = {1: (t[1], "a"), 2: (t[2], "b"), 3: (t[2], "c"), 4: (t[4], "d")}
    page = take_page(found, 3)
    assert [row[0] for row in page] == [4, 3, 2]  # newest first; a tie in time by id, descending
    assert [row[0] for row in take_page(found, None)] == [4, 3, 2, 1]
    assert not missed_in_page(page, 3, {1: t[1]})  # older than the full page's oldest: rightly left off
    assert not missed_in_page(page, 3, {2: t[2], 4: t[4]})  # shown
    assert missed_in_page(page, 3, {5: t[5]})  # newer than the oldest row, not shown: a stale read
    assert missed_in_page(page, 3, {9: t[2]})  # the oldest row's time, a larger id: it belongs in the page
    assert not missed_in_page(page, 3, {0: t[2]})  # the same time, a smaller id: after the page
    short = take_page({1: (t[1], "a")}, 3)
    assert missed_in_page(short, 3, {0: t[0]})  # a page not full is the whole timeline: every one expected
    assert missed_in_page(take_page(found, None), None, {7: t[0]})  # no limit: every one expected
