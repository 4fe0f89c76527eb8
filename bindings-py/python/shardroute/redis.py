"""A Redis Cluster client whose every routing decision is shardroute's.

It keeps one plain connection pool per node (redis-py's ``redis.Redis``, no cluster
mode), builds its slot table from ``CLUSTER SHARDS``, and sends each command straight to
the node that owns the key's slot. When the cluster changes under it, it does what the
Redis Cluster specification asks of a smart client, with the core's calls:

* ``MOVED <slot> <host:port>``: the slot has a new master. The client applies it at once
  (``Router.moved``: a new router, next epoch), retries there, and refreshes the whole
  table from ``CLUSTER SHARDS`` (at most once per ``refresh_interval``, so a burst of
  MOVEDs during a reshard costs one refresh, not thousands).
* ``ASK <slot> <host:port>``: the slot is migrating and this key is already on the
  target: the next command for it goes there once, after ``ASKING`` (``Router.ask``);
  nothing changes.
* A lost connection (a primary killed, a failover under way), ``TRYAGAIN`` or
  ``CLUSTERDOWN``: the client backs off, refreshes from any node that answers, and
  retries until ``retry_seconds`` run out.

Each command follows at most ``max_redirects`` redirects (``TooManyRedirects`` past
that), so two nodes that disagree during a migration cannot bounce it forever.
``stats`` counts commands, MOVED, ASK, refreshes and errors, and the longest redirect
chain seen. Multi-key commands stay in one slot as Redis requires: ``mset`` refuses keys
of several slots (``cross_slot``), ``mget`` and the pipelines split by node and slot.

Needs redis-py: ``pip install 'shardroute[redis]'``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

try:
    import redis
except ImportError:  # pragma: no cover - the message is the point
    raise ImportError("shardroute.redis needs redis-py: pip install 'shardroute[redis]'") from None

import shardroute
from redis.backoff import NoBackoff
from redis.retry import Retry

__all__ = ["ClusterClient", "ClusterStats", "TooManyRedirects"]

Key = str | bytes | int

# The empty document a first import replaces: only its epoch (0) carries over.
_EMPTY: shardroute.Topology = {"format": "shardroute/1", "epoch": 0, "nodes": [{"id": "none"}], "strategy": {"type": "jump"}}


class TooManyRedirects(redis.RedisError):
    """A command was redirected more than ``max_redirects`` times."""


@dataclass
class ClusterStats:
    """What the client has seen since it was made (or since ``reset``)."""

    commands: int = 0
    moved: int = 0
    ask: int = 0
    refreshes: int = 0
    errors: int = 0
    longest_redirect_chain: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)

    def reset(self) -> None:
        self.commands = self.moved = self.ask = self.refreshes = self.errors = 0
        self.longest_redirect_chain = 0
        self.error_kinds = {}

    def error(self, kind: str) -> None:
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1


class _ReadOnlyConnection(redis.Connection):
    """A connection to a replica that may serve reads of its master's slots: it sends
    ``READONLY`` right after the handshake (the hook is ``on_connect_check_health`` in
    recent redis-py, ``on_connect`` before)."""

    def _readonly(self) -> None:
        self.send_command("READONLY")
        if self.read_response() not in (b"OK", "OK"):
            raise redis.ConnectionError("READONLY was refused")

    if hasattr(redis.Connection, "on_connect_check_health"):

        def on_connect_check_health(self, *args: Any, **kwargs: Any) -> None:
            super().on_connect_check_health(*args, **kwargs)
            self._readonly()

    else:  # pragma: no cover - older redis-py

        def on_connect(self) -> None:
            super().on_connect()
            self._readonly()


def _text(value: Any) -> Any:
    """A raw reply with bytes decoded (CLUSTER SHARDS comes back as bytes)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [_text(item) for item in value]
    if isinstance(value, dict):
        return {_text(k): _text(v) for k, v in value.items()}
    return value


def _redirect(err: redis.ResponseError) -> str | None:
    """The ``MOVED``/``ASK`` line of a redirect error (redis-py parses it into
    ``MovedError``/``AskError`` and keeps only ``<slot> <host:port>``), else None."""
    if isinstance(err, redis.exceptions.MovedError):
        return f"MOVED {err}"
    if isinstance(err, redis.exceptions.AskError):
        return f"ASK {err}"
    message = str(err)
    return message if message.startswith(("MOVED ", "ASK ")) else None


def _transient(err: redis.ResponseError) -> str | None:
    """The kind of an error worth retrying after a pause (a slot in motion, a cluster
    electing a new primary), else None."""
    if isinstance(err, redis.exceptions.TryAgainError):
        return "TRYAGAIN"
    if isinstance(err, redis.exceptions.ClusterDownError):
        return "CLUSTERDOWN"
    kind = str(err).split(" ", 1)[0]
    return kind if kind in ("TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN") else None


def _address(node: str | tuple[str, int]) -> str:
    return node if isinstance(node, str) else f"{node[0]}:{node[1]}"


class ClusterClient:
    """A Redis Cluster client routed by shardroute (see the module docs).

    ``startup_nodes`` are ``"host:port"`` strings or ``(host, port)`` pairs; any one that
    answers ``CLUSTER SHARDS`` is enough. With ``read_from_replicas`` reads go to a
    replica of the key's slot (``READONLY`` connections, ``Router.read_replica``
    round-robin), writes always to the primary.
    """

    def __init__(
        self,
        startup_nodes: Iterable[str | tuple[str, int]],
        *,
        read_from_replicas: bool = False,
        max_redirects: int = 5,
        refresh_interval: float = 0.2,
        retry_seconds: float = 20.0,
        socket_timeout: float = 5.0,
        **connection_kwargs: Any,
    ) -> None:
        self._seeds = [_address(node) for node in startup_nodes]
        if not self._seeds:
            raise ValueError("startup_nodes: give at least one host:port")
        self.read_from_replicas = read_from_replicas
        self.max_redirects = max_redirects
        self.refresh_interval = refresh_interval
        self.retry_seconds = retry_seconds
        # No retries inside redis-py: a dead node must fail at once, so that this
        # client's own backoff, refresh and counters handle it.
        self._connection_kwargs = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": socket_timeout,
            "retry": Retry(NoBackoff(), 0),
            **connection_kwargs,
        }
        self._pools: dict[tuple[str, bool], redis.Redis] = {}
        self._address_of: dict[str, str] = {}
        self._last_refresh = float("-inf")
        self._turn = 0
        self.stats = ClusterStats()
        self.router: shardroute.Router = shardroute.Router(_EMPTY)
        self._refresh_or_retry()

    # -- connections and the table ------------------------------------------------

    def connection(self, address: str, *, readonly: bool = False) -> redis.Redis:
        """The client (one connection pool) of the node at ``address``."""
        pool = self._pools.get((address, readonly))
        if pool is None:
            host, _, port = address.rpartition(":")
            kwargs = dict(self._connection_kwargs)
            if readonly:
                kwargs["connection_pool"] = redis.ConnectionPool(
                    connection_class=_ReadOnlyConnection, host=host, port=int(port), **self._connection_kwargs
                )
            pool = redis.Redis(host=host, port=int(port), **kwargs)
            self._pools[(address, readonly)] = pool
        return pool

    def address_of(self, node: str) -> str:
        """The ``host:port`` of a node id of the current router."""
        return self._address_of[node]

    def refresh(self) -> None:
        """Reads the slot table from the first node that answers ``CLUSTER SHARDS``
        (known nodes first, then the startup nodes) and replaces the router."""
        candidates = list(dict.fromkeys([*self._address_of.values(), *self._seeds]))
        random.shuffle(candidates)
        failure: Exception | None = None
        for address in candidates:
            try:
                reply = self._raw(address, "CLUSTER", "SHARDS")
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError) as err:
                failure = err
                continue
            result = shardroute.apply(self.router.to_json(), {"op": "import_redis_cluster_shards", "reply": reply})
            self.router = self.router.replace(result["topology"])
            self._address_of = {node["id"]: node["address"] for node in result["topology"]["nodes"]}
            self._last_refresh = time.monotonic()
            self.stats.refreshes += 1
            return
        raise redis.ConnectionError(f"no node answered CLUSTER SHARDS (tried {candidates}): {failure}")

    def _raw(self, address: str, *args: Any) -> Any:
        """A reply without redis-py's response callbacks, decoded (RESP2 flat arrays)."""
        client = self.connection(address)
        connection = client.connection_pool.get_connection()
        try:
            connection.send_command(*args)
            return _text(connection.read_response())
        finally:
            client.connection_pool.release(connection)

    def _refresh_or_retry(self) -> None:
        deadline = time.monotonic() + self.retry_seconds
        delay = 0.05
        while True:
            try:
                self.refresh()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _refresh_soon(self) -> None:
        """After a MOVED: one refresh per ``refresh_interval`` at most."""
        if time.monotonic() - self._last_refresh >= self.refresh_interval:
            try:
                self.refresh()
            except redis.ConnectionError:
                # The MOVED already fixed this slot; the next one will try again.
                self.stats.error("refresh")

    # -- one command ---------------------------------------------------------------

    def _target(self, key: Key, read: bool) -> tuple[str, bool]:
        if read and self.read_from_replicas:
            self._turn += 1
            return self.address_of(self.router.read_replica(key, self._turn)), True
        return self.address_of(self.router.node(key)), False

    def execute(self, *args: Any, key: Key, read: bool = False) -> Any:
        """Runs one command for ``key`` on the node that owns its slot, following
        redirects (see the module docs). Other errors are raised as redis-py raises them."""
        return self._run(args[0], key, read, lambda client, asking: self._once(client, asking, args))

    def set_and_wait(self, key: Key, value: Any, replicas: int = 1, timeout_ms: int = 500) -> int:
        """``SET`` then ``WAIT replicas timeout_ms`` on the same connection: how many
        replicas acknowledged the write (Redis replicates asynchronously; a write no
        replica acknowledged may be lost in a failover)."""

        def attempt(client: redis.Redis, asking: bool) -> int:
            pipe = client.pipeline(transaction=False)
            if asking:
                pipe.execute_command("ASKING")
            pipe.execute_command("SET", key, value)
            pipe.execute_command("WAIT", replicas, timeout_ms)
            return int(pipe.execute()[-1])

        return int(self._run("SET", key, False, attempt))

    def _run(self, name: Any, key: Key, read: bool, attempt: Any, redirect: str | None = None) -> Any:
        """Calls ``attempt(client, asking)`` on the key's node until it answers: follows
        MOVED and ASK (at most ``max_redirects``), backs off and refreshes on lost
        connections, ``TRYAGAIN`` and ``CLUSTERDOWN`` (at most ``retry_seconds``)."""
        self.stats.commands += 1
        redirects = 0
        asking: str | None = None
        deadline: float | None = None
        delay = 0.02
        while True:
            if redirect is None:
                address, readonly = (asking, False) if asking else self._target(key, read)
                try:
                    return attempt(self.connection(address, readonly=readonly), asking is not None)
                except redis.ResponseError as err:
                    redirect = _redirect(err)
                    if redirect is None:
                        transient = _transient(err)
                        if transient is None:
                            raise
                        self.stats.error(transient)
                except (redis.ConnectionError, redis.TimeoutError) as err:
                    self.stats.error(type(err).__name__)
                    asking = None
            if redirect is not None:
                redirects += 1
                self.stats.longest_redirect_chain = max(self.stats.longest_redirect_chain, redirects)
                if redirects > self.max_redirects:
                    raise TooManyRedirects(f"{name!r}: more than {self.max_redirects} redirects, last {redirect}")
                parsed = shardroute.parse_redirect(redirect)
                redirect = None
                if parsed.kind == "MOVED":
                    self.stats.moved += 1
                    asking = None
                    self._follow_moved(parsed.slot, parsed.address)
                else:
                    self.stats.ask += 1
                    asking = self.router.ask(parsed.slot, parsed.address)
                continue
            # A node is down or busy: back off, refresh, retry until the deadline.
            now = time.monotonic()
            deadline = deadline or now + self.retry_seconds
            if now > deadline:
                raise redis.ConnectionError(f"{name!r} for {key!r}: no answer within {self.retry_seconds}s")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
            try:
                self.refresh()
            except redis.ConnectionError:
                pass

    def _follow_moved(self, slot: int, address: str) -> None:
        self.router = self.router.moved(slot, address)
        self._address_of.setdefault(address, address)
        self._refresh_soon()

    # -- commands ------------------------------------------------------------------

    def get(self, key: Key) -> Any:
        return self.execute("GET", key, key=key, read=True)

    def set(self, key: Key, value: Any) -> Any:
        return self.execute("SET", key, value, key=key)

    def delete(self, key: Key) -> Any:
        return self.execute("DEL", key, key=key)

    def mset(self, mapping: Mapping[Key, Any]) -> Any:
        """``MSET`` of keys that share a slot (a hash tag); ``cross_slot`` otherwise."""
        keys = list(mapping)
        self.router.same_slot(keys)
        args: list[Any] = ["MSET"]
        for key, value in mapping.items():
            args += [key, value]
        return self.execute(*args, key=keys[0])

    def mget(self, keys: Sequence[Key]) -> list[Any]:
        """Values of ``keys`` in order: one ``MGET`` per slot, pipelined per node."""
        keys = list(keys)
        slots = self.router.route_many(keys)
        values: list[Any] = [None] * len(keys)
        for _node, indices in self.router.group_by_node(keys):
            by_slot: dict[int, list[int]] = {}
            for index in indices:
                by_slot.setdefault(slots[index], []).append(index)
            for members in by_slot.values():
                got = self.execute("MGET", *(keys[i] for i in members), key=keys[members[0]], read=True)
                for index, value in zip(members, got):
                    values[index] = value
        return values

    def pipeline_get(self, keys: Sequence[Key]) -> list[Any]:
        """``GET`` of every key, one pipeline per node (grouped by the core)."""
        return self._pipelined([("GET", key) for key in keys], keys, read=True)

    def pipeline_set(self, items: Sequence[tuple[Key, Any]]) -> list[Any]:
        """``SET`` of every pair, one pipeline per node."""
        return self._pipelined([("SET", key, value) for key, value in items], [key for key, _ in items], read=False)

    def _pipelined(self, commands: list[tuple[Any, ...]], keys: Sequence[Key], *, read: bool) -> list[Any]:
        results: list[Any] = [None] * len(commands)
        self.stats.commands += len(commands)
        for node, indices in self.router.group_by_node(keys):
            address = self.address_of(node)
            readonly = False
            if read and self.read_from_replicas:
                self._turn += 1
                address, readonly = self.address_of(self.router.read_replica(keys[indices[0]], self._turn)), True
            try:
                pipe = self.connection(address, readonly=readonly).pipeline(transaction=False)
                for index in indices:
                    pipe.execute_command(*commands[index])
                replies = pipe.execute(raise_on_error=False)
            except (redis.ConnectionError, redis.TimeoutError) as err:
                self.stats.error(type(err).__name__)
                replies = [err] * len(indices)
            for index, reply in zip(indices, replies):
                if isinstance(reply, Exception):
                    # Redirected or cut off: that command alone takes the careful path,
                    # starting from the redirect it got.
                    self.stats.commands -= 1
                    redirect = _redirect(reply) if isinstance(reply, redis.ResponseError) else None
                    if isinstance(reply, redis.ResponseError) and redirect is None and _transient(reply) is None:
                        raise reply
                    command = commands[index]
                    reply = self._run(
                        command[0], keys[index], read, lambda client, asking, command=command: self._once(client, asking, command), redirect
                    )
                results[index] = reply
        return results

    @staticmethod
    def _once(client: redis.Redis, asking: bool, command: tuple[Any, ...]) -> Any:
        if not asking:
            return client.execute_command(*command)
        pipe = client.pipeline(transaction=False)
        pipe.execute_command("ASKING")
        pipe.execute_command(*command)
        return pipe.execute()[1]

    def close(self) -> None:
        for client in self._pools.values():
            client.close()
        self._pools.clear()

    def __enter__(self) -> ClusterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
