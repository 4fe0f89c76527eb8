"""MigrationSession from Python: the arguments it refuses and the types it returns. Its
behaviour is the conformance scenarios' (conformance/vectors/session_migration.json)."""

from __future__ import annotations

from typing import Callable

import pytest

from shardroute import Migration, MigrationSession, Router, ShardrouteError, Topology


def shards(n: int, epoch: int) -> Topology:
    return {"format": "shardroute/1", "epoch": epoch, "hashing": {"integers": "identity"},
            "nodes": [{"id": f"shard_{i}"} for i in range(1, n + 1)], "strategy": {"type": "modulo", "one_based": True}}


def test_the_1_based_5_to_10_shards_lazily() -> None:
    session = MigrationSession(Migration(Router(shards(5, 1)), Router(shards(10, 2))), "lazy")
    assert session.fence_epoch == 2
    assert session.read_plan(7) == ["shard_2", "shard_7"]  # old owner first, the core's order
    assert session.read_plan(7, moved=True) == ["shard_7"]
    assert session.write_plan(7) == ("shard_7", 2)
    assert session.lazy_steps(7) == {"read_from": "shard_2", "write_to": "shard_7", "retire_from": "shard_2", "fence_epoch": 2}
    assert session.lazy_steps(12) is None
    assert session.fenced(3) == "refresh"


def test_of_topology_decides_the_mode() -> None:
    five, ten = Router(shards(5, 1)), Router(shards(10, 2))
    plain = MigrationSession.of_topology(five)
    assert (plain.mode, plain.read_plan(7), plain.write_plan(7), plain.lazy_steps(7)) == ("plain", ["shard_2"], ("shard_2", 1), None)
    assert plain.scan_nodes() == ["shard_1", "shard_2", "shard_3", "shard_4", "shard_5"]
    lazy = MigrationSession.of_topology(ten, five)
    assert (lazy.mode, lazy.read_plan(7), lazy.fence_epoch) == ("lazy", ["shard_2", "shard_7"], 2)
    assert lazy.scan_nodes() == [f"shard_{i}" for i in range(1, 11)]  # 5 -> 10: each node once
    catch_up = MigrationSession.of_topology(ten, None, held=five)
    assert (catch_up.mode, catch_up.read_plan(7), catch_up.lazy_steps(7)) == ("catch-up", ["shard_2", "shard_7"], None)


def test_background_on_modulo_is_refused_when_made() -> None:
    with pytest.raises(ShardrouteError) as raised:
        MigrationSession(Migration(Router(shards(5, 1)), Router(shards(10, 2))), "background")
    assert raised.value.code == "invalid_argument"
    assert "fixed partitions" in raised.value.message and "modulo to modulo" in raised.value.message


def test_bad_arguments() -> None:
    migration = Migration(Router(shards(5, 1)), Router(shards(10, 2)))
    session = MigrationSession(migration, "lazy")
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: MigrationSession(migration, "eager"), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: MigrationSession(Router(shards(5, 1)), "lazy"), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: MigrationSession(migration, 1), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: session.copy_batch(0, 10), "invalid_argument"),
        (lambda: session.copy_batch(-1, 10), "invalid_argument"),
        (lambda: session.fenced(2), "invalid_argument"),
        (lambda: session.fenced(-1), "invalid_argument"),
        (lambda: session.read_plan(-1), "invalid_key"),
        (lambda: session.lazy_steps("\ud800"), "invalid_key"),
        (lambda: MigrationSession.of_topology(migration), "invalid_argument"),  # type: ignore[arg-type]
        (lambda: MigrationSession.of_topology(Router(shards(10, 2)), "previous"), "invalid_argument"),  # type: ignore[arg-type]
    ]
    for call, code in cases:
        with pytest.raises(ShardrouteError) as raised:
            call()
        assert raised.value.code == code, raised.value.message
