"""MigrationSession's expiration mode, retire actions and consistency check from Python:
the arguments they refuse and the types they return. Their behaviour is the conformance
scenarios' (conformance/vectors/session_migration.json)."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

from shardroute import Migration, MigrationSession, Router, ShardrouteError, Topology

MAX_SAMPLE_KEYS = 1 << 20  # core/src/limits.rs


def shards(n: int, epoch: int) -> Topology:
    return {"format": "shardroute/1", "epoch": epoch, "hashing": {"integers": "identity"},
            "nodes": [{"id": f"shard_{i}"} for i in range(1, n + 1)], "strategy": {"type": "modulo", "one_based": True}}


def shrink() -> Migration:
    return Migration(Router(shards(10, 1)), Router(shards(5, 2)))


def test_expiration_reads_old_until_the_deadline_then_retires() -> None:
    session = MigrationSession(shrink(), "expiration", until_ms=60_000)
    assert (session.mode, session.until_ms) == ("expiration", 60_000)
    assert session.write_plan(7) == ("shard_2", 2)
    assert session.read_plan_at(7, 59_999) == ["shard_7", "shard_2"]
    assert session.read_plan_at(7, 60_000) == ["shard_2"]
    assert (session.next_deadline(0), session.next_deadline(60_000)) == (60_000, None)
    assert session.actions(59_999, moved=True) == []
    assert session.actions(60_000) == [{"kind": "retire", "node": f"shard_{i}"} for i in range(6, 11)]
    assert MigrationSession(shrink(), "lazy").until_ms is None


@pytest.mark.parametrize("until_ms", [-1, 2**64, 1.5, "60000", True])
def test_a_bad_deadline_is_refused(until_ms: object) -> None:
    with pytest.raises(ShardrouteError) as err:
        MigrationSession(shrink(), "expiration", until_ms)  # type: ignore[arg-type]
    assert err.value.code == "invalid_argument"


def test_expiration_needs_a_deadline_and_only_it_has_one() -> None:
    for args in [("expiration",), ("lazy", 5)]:
        with pytest.raises(ShardrouteError) as err:
            MigrationSession(shrink(), *args)  # type: ignore[arg-type]
        assert err.value.code == "invalid_argument"


def test_misplaced_by_node_and_by_shard() -> None:
    ten = Router(shards(10, 2))
    assert MigrationSession.misplaced(ten, "shard_2", [2, 7, 12, 17]) == {"misplaced": [1, 3], "count": 2, "checked": 4}
    assert MigrationSession.misplaced(ten, 1, iter([1, 11, 2])) == {"misplaced": [2], "count": 1, "checked": 3}
    # A numpy array of user ids, as Router.route_many takes.
    found = MigrationSession.misplaced(ten, "shard_3", np.array([3, 13, 4], dtype=np.uint64))
    assert found == {"misplaced": [2], "count": 1, "checked": 3}


@pytest.mark.parametrize("holder", [None, True, 1.0, b"shard_1", -1])
def test_a_bad_holder_is_refused(holder: object) -> None:
    with pytest.raises(ShardrouteError) as err:
        MigrationSession.misplaced(Router(shards(10, 2)), holder, [1])  # type: ignore[arg-type]
    assert err.value.code == "invalid_argument"


def test_misplaced_stops_at_the_limit_without_reading_the_rest() -> None:
    """A generator past MAX_SAMPLE_KEYS is refused at the first key past the limit: the
    keys after it are not asked for (the count is bounded, the input not buffered whole)."""
    pulled = 0
    total = MAX_SAMPLE_KEYS + 50_000

    def keys() -> Iterator[int]:
        nonlocal pulled
        for _ in range(total):
            pulled += 1
            yield 1

    with pytest.raises(ShardrouteError) as err:
        MigrationSession.misplaced(Router(shards(10, 2)), "shard_1", keys())
    assert err.value.code == "limit_exceeded"
    assert MAX_SAMPLE_KEYS < pulled <= MAX_SAMPLE_KEYS + 1024  # at most one chunk past the limit
