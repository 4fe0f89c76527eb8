"""One API shape (issue 39, docs/api.md): where the JS twin returns an object, Python returns
a named tuple with the same fields in snake_case, never a bare tuple; it still unpacks and
compares as the tuple it replaced."""

from __future__ import annotations

from typing import Any, NamedTuple

from shardroute import (
    ClusterSession, Endpoint, Migration, MigrationSession, Move, MovingShard, NodeGroup, PlanGroup, Router, SourceCall,
    SourceSession, Topology, TopologyFollower, WritePlan, apply, parse_address,
)
from shardroute.etcd import EtcdValue, EtcdValues, _op_get, _op_get_many


def shards(n: int, epoch: int) -> Topology:
    return {"format": "shardroute/1", "epoch": epoch, "hashing": {"integers": "identity"},
            "nodes": [{"id": f"shard_{i}"} for i in range(1, n + 1)], "strategy": {"type": "modulo", "one_based": True}}


def named(value: object, cls: type, fields: tuple[str, ...]) -> None:
    """`value` is a `cls` whose fields are `fields` (the JS object's, in snake_case), and
    its repr names them."""
    assert type(value) is cls, f"{type(value).__name__} is not {cls.__name__}"
    assert isinstance(value, tuple) and cls._fields == fields  # type: ignore[attr-defined]
    assert all(f"{field}=" in repr(value) for field in fields)


def test_write_plan_is_a_named_tuple() -> None:
    session = MigrationSession(Migration(Router(shards(5, 1)), Router(shards(10, 2))), "lazy")
    plan = session.write_plan(7)
    named(plan, WritePlan, ("node", "fence_epoch"))  # JS: WritePlan { node, fence_epoch }
    assert (plan.node, plan.fence_epoch) == ("shard_7", 2)
    node, epoch = plan  # unpacking keeps working
    assert plan == ("shard_7", 2) and (node, epoch) == ("shard_7", 2)


def test_moves_and_moving_shards_are_named_tuples() -> None:
    migration = Migration(Router(shards(5, 1)), Router(shards(10, 2)))
    move = migration.moves(7)
    named(move, Move, ("from_", "to"))  # JS: Move { from, to }; `from` is a Python keyword
    assert move is not None and (move.from_, move.to) == ("shard_2", "shard_7") == move
    assert migration.moves(12) is None

    start: Topology = {"format": "shardroute/1", "epoch": 1, "nodes": [{"id": f"n{i}"} for i in range(1, 4)],
                       "strategy": {"type": "vbucket", "vbuckets": 64}}
    result = apply(start, {"op": "plan_rebalance", "add": [{"id": "n4"}]})
    units = Migration.of_dictionary(Router(result["topology"])).moving_shards()
    assert units
    for unit in units:
        named(unit, MovingShard, ("shard", "from_", "to"))  # JS: MovingShard { shard, from, to }
        shard, source, target = unit
        assert (unit.shard, unit.from_, unit.to) == (shard, source, target) and source != target


def test_group_by_node_gives_named_groups() -> None:
    router = Router(shards(3, 1))
    groups = router.group_by_node([1, 2, 3, 4])
    for group in groups:
        named(group, NodeGroup, ("node", "indices"))  # JS: NodeGroup { node, indices }
    assert groups == [("shard_1", [0, 3]), ("shard_2", [1]), ("shard_3", [2])]
    assert [(group.node, group.indices) for group in groups] == groups


def test_source_session_call_is_a_named_tuple() -> None:
    session = SourceSession({"source": "etcd", "members": ["http://127.0.0.1:2379"]})
    started = session.call({"op": "get", "key": "k"}, 0)
    named(started, SourceCall, ("call", "actions"))  # JS: { call, actions }
    number, actions = started
    assert number == started.call and actions == started.actions and "request" in actions[0]


def drive(op: Any, result: dict[str, Any]) -> Any:
    """Runs one etcd op generator against a session that answered `result`."""
    next(op)
    try:
        op.send({"done": {"call": 1, "result": result}})
    except StopIteration as done:
        return done.value
    raise AssertionError("an op ends after its one answer")


def test_etcd_reads_are_named_tuples() -> None:
    got = drive(_op_get("k"), {"value": "v", "mod_revision": "5"})
    named(got, EtcdValue, ("value", "mod_revision"))  # JS: EtcdValue { value, modRevision }
    assert got == ("v", 5) and got.mod_revision == 5
    many = drive(_op_get_many(["a", "b"]), {"values": {"a": {"value": "x", "mod_revision": "3"},
                                                       "b": {"value": None, "mod_revision": "0"}}, "revision": "9"})
    named(many, EtcdValues, ("values", "revision"))  # JS: { values, revision }
    values, revision = many
    assert revision == 9 and values == {"a": ("x", 3), "b": (None, 0)}
    assert type(values["a"]) is EtcdValue


def test_parse_address_is_a_named_tuple() -> None:
    endpoint = parse_address("[::1]:7000")
    named(endpoint, Endpoint, ("host", "port"))  # JS: Endpoint { host, port }
    assert (endpoint.host, endpoint.port) == ("::1", 7000)
    host, port = parse_address(":7001")  # unpacking keeps working
    assert (host, port) == ("", 7001) and parse_address(":7001") == ("", 7001)


def test_cluster_session_plan_gives_named_groups() -> None:
    node = {"id": "7000" * 8, "endpoint": "127.0.0.1", "ip": "127.0.0.1", "port": 7000, "role": "master"}
    session = ClusterSession(["127.0.0.1:7000"])
    session.refreshed([{"slots": [0, 16383], "nodes": [node]}], 0)
    (group,) = session.plan(["a", "b", "a"], "write")
    named(group, PlanGroup, ("address", "readonly", "slots"))  # JS: PlanGroup { address, readonly, slots }
    assert (group.address, group.readonly) == ("127.0.0.1:7000", False)
    assert sorted(i for _, indices in group.slots for i in indices) == [0, 1, 2]
    address, readonly, slots = group  # unpacking keeps working
    assert (address, readonly, slots) == (group.address, group.readonly, group.slots)


def test_every_named_tuple_is_a_named_tuple_class() -> None:
    for cls in (Endpoint, Move, MovingShard, NodeGroup, PlanGroup, SourceCall, WritePlan, EtcdValue, EtcdValues):
        assert issubclass(cls, tuple) and NamedTuple in getattr(cls, "__orig_bases__", ())


def test_sessions_show_their_state_in_repr() -> None:
    session = MigrationSession(Migration(Router(shards(5, 1)), Router(shards(10, 2))), "lazy")
    assert repr(session) == "<shardroute.MigrationSession mode=lazy fence_epoch=2>"
    follower = TopologyFollower()
    assert repr(follower) == "<shardroute.TopologyFollower no router yet>"
    follower.offer(shards(5, 3), 17, 0)
    assert repr(follower) == "<shardroute.TopologyFollower epoch=3 revision=17>"


def test_cluster_stats_show_their_counters_in_repr_and_dir() -> None:
    # The old ClusterStats answered attributes through __getattr__ only: dir() showed none
    # of them and repr() was `<ClusterStats object at 0x...>`.
    from shardroute.redis import ClusterClient

    stats = ClusterClient(["127.0.0.1:1"]).stats
    shown = [name for name in dir(stats) if not name.startswith("_")]
    for name in ("commands", "moved", "ask", "refreshes", "errors", "error_kinds", "stalls", "stall_resends",
                 "longest_redirect_chain", "reset"):
        assert name in shown
    assert repr(stats).startswith("ClusterStats(ask=0, commands=0, ")
    assert stats.error_kinds == {} and stats.errors == 0
