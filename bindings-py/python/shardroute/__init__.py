# The public package: re-exports the compiled module `shardroute._native` (whose
# docstrings, written once on the Rust side, are the documentation) and adds the types
# below, and the typed documents of `shardroute.documents` (Topology, Operation, and one
# TypedDict per strategy and operation). Types: __init__.pyi, whose `__all__`
# mypy.stubtest holds equal to this one.
import typing as _typing

from shardroute import _native, documents
from shardroute._native import *  # noqa: F403 - every name of `_native.__all__`, errors included
from shardroute._native import __doc__
from shardroute.documents import Operation, Topology

#: What a router routes: text (hashed as UTF-8), bytes, or an int in 0..2**64.
Key = _typing.Union[str, bytes, bytearray, memoryview, int]


class DecodedId(_typing.TypedDict):
    """What Router.decode_id returns: the id's shard, and its other fields by name
    (timestamp, sequence, ...) in the id's layout order, most significant first."""

    shard: int
    fields: _typing.Dict[str, int]


class Location(_typing.TypedDict):
    """What Router.locate returns: the key's shard, the owning node's id, address and
    zone (None when the document gives none), and the topology's "placement" name
    templates rendered for the shard, by name."""

    shard: int
    node: str
    address: _typing.Optional[str]
    zone: _typing.Optional[str]
    names: _typing.Dict[str, str]


class ScatterPlan(_typing.TypedDict):
    """What Router.scatter_every, scatter_range and scatter_keys return, in columns:
    shard i of the plan is shards[i], asked of the node nodes[i]; keys[i] are the indices
    of the keys it holds (scatter_keys; None for the others). gather says how the answers
    merge: "union" (any order), "concat" (in the plan's order: each shard one contiguous
    stretch of the range) or "merge" (by key, each shard's answer sorted)."""

    gather: _typing.Literal["union", "concat", "merge"]
    shards: _typing.List[int]
    nodes: _typing.List[str]
    keys: _typing.Optional[_typing.List[_typing.List[int]]]


class IndexVisit(_typing.TypedDict):
    """An index shard a write updates: the index, its shard and node, and the positions
    of the terms whose entries it holds."""

    index: str
    shard: int
    node: str
    terms: _typing.List[int]


class IndexWritePlan(_typing.TypedDict):
    """What Router.index_write_plan returns: the document's shard and node, then one
    visit per index shard its terms touch, in first-term order."""

    shard: int
    node: str
    indexes: _typing.List[IndexVisit]


class NodeStats(_typing.TypedDict):
    """One node in Router.stats: the keys it owns (load), its share of them, and its
    load per unit of weight."""

    id: str
    weight: float
    load: int
    share: float
    load_per_weight: float


class Stats(_typing.TypedDict):
    """What Router.stats returns: the load of each node and its spread per unit of
    weight (mean, max over mean, coefficient of variation)."""

    total: int
    nodes: _typing.List[NodeStats]
    mean: float
    max_over_mean: float
    cv: float


class Redirect(_typing.NamedTuple):
    """What parse_redirect returns: a Redis Cluster redirection error read. kind is
    "MOVED" (the slot has a new owner: Router.moved(slot, address)) or "ASK" (send the
    next command for a key of the slot to address once, after ASKING: Router.ask);
    slot is in 0..16384; address is the target's "host:port" as the node wrote it."""

    kind: _typing.Literal["MOVED", "ASK"]
    slot: int
    address: str


class NodeGroup(_typing.NamedTuple):
    """One group of Router.group_by_node: a node's id and the positions of its keys in
    the keys given, in increasing order (JS: NodeGroup { node, indices })."""

    node: str
    indices: _typing.List[int]


class Move(_typing.NamedTuple):
    """What Migration.moves returns for a key that changes node: its node in the
    topology data moves from (from_: "from" is a Python keyword) and in the one it moves
    to (JS: Move { from, to })."""

    from_: str
    to: str


class MovingShard(_typing.NamedTuple):
    """A shard whose owner changes, in Migration.moving_shards: the shard (the same
    number on both sides), its owner before (from_) and after (to) (JS: MovingShard
    { shard, from, to })."""

    shard: int
    from_: str
    to: str


class WritePlan(_typing.NamedTuple):
    """What MigrationSession.write_plan returns: the new owner's id, and the epoch the
    write runs under, which the shard's fence must admit (JS: WritePlan)."""

    node: str
    fence_epoch: int


class SourceCall(_typing.NamedTuple):
    """What SourceSession.call returns: the call's number (in the "done" or "failed"
    action that ends it) and the actions to perform now (JS: { call, actions })."""

    call: int
    actions: _typing.List[_typing.Dict[str, _typing.Any]]


class PlanGroup(_typing.NamedTuple):
    """One node's share of ClusterSession.plan: the node's "host:port", whether it is
    read over a connection that sent READONLY (a replica read), and (slot, key indices)
    pairs, slots increasing, each slot's indices (into the keys given) in input order
    (JS: PlanGroup { address, readonly, slots })."""

    address: str
    readonly: bool
    slots: _typing.List[_typing.Tuple[int, _typing.List[int]]]


class Endpoint(_typing.NamedTuple):
    """What parse_address returns: the host (without the brackets of an IPv6 host; ""
    for ":7000", a node that does not know its own address) and the port, in 1..=65535
    (JS: Endpoint { host, port })."""

    host: str
    port: int


class SessionStats(_typing.TypedDict):
    """What ClusterSession.stats returns: commands begun, MOVED and ASK followed,
    tables installed by refreshes, refreshes that found no usable reply, replies
    refused, backoffs taken, commands given up, the longest redirect chain, and the
    retryable failures by outcome name ("try_again", "timeout", ...)."""

    commands: int
    moved: int
    ask: int
    refreshes: int
    refresh_failures: int
    refused_replies: int
    retries: int
    failed: int
    longest_redirect_chain: int
    stalls: int
    stall_resends: int
    errors: _typing.Dict[str, int]


class SessionConfig(_typing.TypedDict, total=False):
    """ClusterSession's settings (session_defaults() gives every field)."""

    max_redirects: int
    refresh_interval_ms: int
    retry_budget_ms: int
    backoff_first_ms: int
    backoff_max_ms: int
    connect_timeout_ms: int
    command_timeout_ms: int
    stall_ms: int
    wait_timeout_ms: int
    read_from_replicas: bool
    auto_pipeline: bool
    pipeline_max_commands: int
    pipeline_max_writes: int


class FollowerConfig(_typing.TypedDict, total=False):
    """TopologyFollower's settings (follower_defaults() gives every field)."""

    reconnect_first_ms: int
    reconnect_max_ms: int


class FollowerStats(_typing.TypedDict):
    """What TopologyFollower.stats returns: documents offered, installed, offered again
    unchanged, sources lost, and refusals by error code."""

    offered: int
    installed: int
    unchanged: int
    disconnects: int
    refused: _typing.Dict[str, int]


class Publish(_typing.TypedDict):
    """What TopologyFollower.publish returns: the compare-and-swap write. expected_revision
    is the revision the source must hold (None: the key must not exist yet), epoch the
    epoch written (the held one + 1), document the canonical JSON text to write."""

    expected_revision: _typing.Optional[int]
    epoch: int
    document: str


class LazySteps(_typing.TypedDict):
    """What MigrationSession.lazy_steps returns: read the key from read_from, write it to
    write_to under fence_epoch, then delete it from retire_from and mark it moved."""

    read_from: str
    write_to: str
    retire_from: str
    fence_epoch: int


class LazyGroup(_typing.TypedDict):
    """One entry of MigrationSession.lazy_groups: the lazy steps several keys share, and
    the keys' indices in the list given (increasing): move them in one statement per step."""

    steps: LazySteps
    indices: _typing.List[int]


class CopyBatch(_typing.TypedDict):
    """What MigrationSession.copy_batch returns: the units (shard, from, to) to copy now,
    and the cursor to store once they are copied (None: the copy is complete)."""

    units: _typing.List[_typing.Tuple[int, str, str]]
    next: _typing.Optional[int]


__all__ = sorted([
    *_native.__all__, "CopyBatch", "DecodedId", "FollowerConfig", "IndexVisit", "IndexWritePlan", "LazyGroup", "LazySteps", "FollowerStats", "Key",
    "Endpoint", "Location", "Move", "MovingShard", "NodeGroup", "NodeStats", "Operation", "PlanGroup", "Publish",
    "Redirect", "ScatterPlan", "SourceCall", "WritePlan", "SessionConfig", "SessionStats", "Stats", "Topology", "documents",
])
