"""Redis Cluster clients whose every decision is shardroute's core.

``ClusterClient`` (redis-py, sync) and ``AsyncClusterClient`` (``redis.asyncio``) keep one
plain connection pool per node and send each command straight to the node that owns its
slot. What to do when the cluster changes under them (MOVED, ASK, TRYAGAIN, CLUSTERDOWN,
a failover, a lost connection) is decided by the core's sans-IO session
(``shardroute.ClusterSession``): these shells only connect, send, sleep and raise. The
rules, the classification table and the defaults (``shardroute.session_defaults()``) are
the core's, the same in the Node client (``shardroute/redis``) and checked by the
conformance scenarios (``conformance/vectors/session_redis.json``).

The clients connect lazily: the first command (or ``refresh()``, or reading ``router``)
reads the slot table from the startup nodes. A command that cannot be served raises
``TooManyRedirects`` (two nodes that disagree) or ``ClusterUnavailable`` (no node served
it within the retry budget); any other Redis error is raised as redis-py raises it.

Needs redis-py: ``pip install 'shardroute[redis]'``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, Awaitable, Generic, Literal, TypeVar

try:
    import redis
    import redis.asyncio
except ImportError:  # pragma: no cover - the message is the point
    raise ImportError("shardroute.redis needs redis-py: pip install 'shardroute[redis]'") from None

import shardroute
from redis.backoff import NoBackoff
from redis.retry import Retry

__all__ = ["AsyncClusterClient", "ClusterClient", "ClusterStats", "ClusterUnavailable", "TooManyRedirects"]

Key = str | bytes | int
T = TypeVar("T")


class TooManyRedirects(shardroute.TooManyRedirectsError, redis.RedisError):
    """A command was redirected more than ``max_redirects`` times (code ``too_many_redirects``)."""


class ClusterUnavailable(shardroute.UnavailableError, redis.ConnectionError):
    """No node served a command within the retry budget (code ``unavailable``)."""


_FAILURES: dict[str, type[Exception]] = {"too_many_redirects": TooManyRedirects, "unavailable": ClusterUnavailable}


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def _names(err: BaseException) -> list[str]:
    return [cls.__name__ for cls in type(err).__mro__]


def _failure(action: shardroute.Action, cause: BaseException | None) -> Exception:
    error = _FAILURES.get(action.code or "", shardroute.ShardrouteError)(action.message)
    error.code = action.code  # type: ignore[attr-defined]
    error.message = action.message  # type: ignore[attr-defined]
    error.__cause__ = cause
    return error


def _text(value: Any) -> Any:
    """A raw reply with bytes decoded (CLUSTER SHARDS comes back as bytes)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [_text(item) for item in value]
    if isinstance(value, dict):
        return {_text(k): _text(v) for k, v in value.items()}
    return value


class ClusterStats:
    """What a client has seen since it was made (or since ``reset``): the session's
    counters (``shardroute.SessionStats``), read when asked."""

    def __init__(self, session: shardroute.ClusterSession) -> None:
        self._session = session

    def reset(self) -> None:
        self._session.reset_stats()

    def __getattr__(self, name: str) -> Any:
        stats: dict[str, Any] = dict(self._session.stats)
        if name == "error_kinds":
            return dict(stats["errors"])
        if name == "errors":
            return sum(stats["errors"].values()) + stats["failed"]
        if name in stats:
            return stats[name]
        raise AttributeError(name)


class _ReadOnlyConnection(redis.Connection):
    """A connection that sends ``READONLY`` after its handshake (replica reads)."""

    def on_connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        super().on_connect_check_health(*args, **kwargs)
        self.send_command("READONLY")
        if self.read_response() not in (b"OK", "OK"):
            raise redis.ConnectionError("READONLY was refused")


class _AsyncReadOnlyConnection(redis.asyncio.Connection):
    async def on_connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        await super().on_connect_check_health(*args, **kwargs)
        await self.send_command("READONLY")
        if await self.read_response() not in (b"OK", "OK"):
            raise redis.ConnectionError("READONLY was refused")


Client = TypeVar("Client")


class _Shell(Generic[Client]):
    """What the two clients share: the session, the connection table, the stats."""

    _module: Any = redis
    _readonly_class: Any = _ReadOnlyConnection

    def __init__(self, startup_nodes: Iterable[str | tuple[str, int]], *, read_from_replicas: bool = False,
                 config: shardroute.SessionConfig | None = None, **connection_kwargs: Any) -> None:
        seeds = [node if isinstance(node, str) else f"{node[0]}:{node[1]}" for node in startup_nodes]
        settings: dict[str, Any] = dict(config or {})
        if read_from_replicas:
            settings["read_from_replicas"] = True
        self._session = shardroute.ClusterSession(seeds, settings)  # type: ignore[arg-type]
        timeouts = self._session.config
        # No retries inside redis-py: every failure reaches the session.
        self._connection_kwargs = {
            "socket_connect_timeout": timeouts["connect_timeout_ms"] / 1000,
            "socket_timeout": timeouts["command_timeout_ms"] / 1000,
            "retry": Retry(NoBackoff(), 0),
            **connection_kwargs,
        }
        self._pools: dict[tuple[str, bool], Client] = {}
        self._addresses: tuple[int | None, dict[str, str]] = (None, {})
        self.stats = ClusterStats(self._session)

    def connection(self, address: str, *, readonly: bool = False) -> Client:
        """The client (one connection pool) of the node at ``address`` (``host:port``)."""
        pool = self._pools.get((address, readonly))
        if pool is None:
            host, port = shardroute.parse_address(address)
            connection_class = self._readonly_class if readonly else self._module.Connection
            pool = self._module.Redis(connection_pool=self._pool(connection_class=connection_class, host=host, port=port))
            self._pools[(address, readonly)] = pool
        return pool

    def _pool(self, **kwargs: Any) -> Any:
        return self._module.ConnectionPool(**kwargs, **self._connection_kwargs)

    def address_of(self, node: str) -> str:
        """The ``host:port`` of a node id of the current router."""
        router = self._session.router
        if router is not None and self._addresses[0] != router.epoch:
            nodes = json.loads(router.to_json())["nodes"]
            self._addresses = (router.epoch, {entry["id"]: entry.get("address", entry["id"]) for entry in nodes})
        return self._addresses[1][node]

    def _sent(self, action: shardroute.Action) -> Client:
        return self.connection(action.address or "", readonly=bool(action.readonly))

    def _failed(self, command: shardroute.Command, err: BaseException) -> shardroute.Action:
        return self._session.failed(command, str(err), _names(err), _now_ms())


class ClusterClient(_Shell[redis.Redis]):
    """A Redis Cluster client routed by shardroute (see the module docs).

    ``startup_nodes`` are ``"host:port"`` strings or ``(host, port)`` pairs; any one that
    answers ``CLUSTER SHARDS`` is enough. ``read_from_replicas``: reads go to a replica
    of the key's slot, in turn. ``config``: the session's settings
    (``shardroute.session_defaults()`` lists them). Other keyword arguments go to each
    node's ``redis.Redis``.
    """

    @property
    def router(self) -> shardroute.Router:
        """The current router (a ``redis_cluster`` topology); reads the table first if
        there is none yet."""
        router = self._session.router
        if router is None:
            self._ensure_table()
            router = self._session.router
        assert router is not None
        return router

    def refresh(self) -> bool:
        """Reads the slot table from the first candidate that answers ``CLUSTER SHARDS``
        with a whole table (the session's order); False when none did."""
        session = self._session
        for address in session.refresh_candidates():
            try:
                reply = self._raw(address, "CLUSTER", "SHARDS")
                session.refreshed(reply, _now_ms())
                return True
            except (redis.RedisError, OSError, shardroute.ShardrouteError):
                continue
        session.refresh_failed(_now_ms())
        return False

    def _ensure_table(self) -> None:
        """Reads the first table under the session's rules (refresh, backoff, budget):
        a command that sends nothing."""
        self._run(["table"], "read", lambda client, asking: None)

    def _raw(self, address: str, *args: Any) -> Any:
        """A reply without redis-py's response callbacks, decoded."""
        pool = self.connection(address).connection_pool
        connection = pool.get_connection()
        try:
            connection.send_command(*args)
            return _text(connection.read_response())
        finally:
            pool.release(connection)

    def _run(self, keys: Sequence[Key], access: Literal["read", "write"], attempt: Callable[[redis.Redis, bool], T],
             error: BaseException | None = None) -> T:
        """Runs ``attempt(client, asking)`` where the session says, until it is done.
        ``error``: what the command already got (an entry of a pipeline)."""
        session = self._session
        command = session.command(keys, access, _now_ms())
        action = self._failed(command, error) if error is not None else session.poll(command, _now_ms())
        while True:
            kind = action.kind
            if kind == "send":
                try:
                    reply = attempt(self._sent(action), bool(action.asking))
                except (redis.RedisError, OSError) as err:
                    error, action = err, self._failed(command, err)
                    continue
                session.succeeded(command, _now_ms())
                return reply
            if kind == "wait":
                time.sleep((action.delay_ms or 0) / 1000)
            elif kind == "refresh":
                self.refresh()
            elif kind == "done":
                assert error is not None
                raise error
            else:
                raise _failure(action, error)
            action = session.poll(command, _now_ms())

    # -- commands ------------------------------------------------------------------

    def execute(self, *args: Any, key: Key, read: bool = False) -> Any:
        """Runs one command for ``key`` where the session says, following its actions."""
        return self._run([key], "read" if read else "write", lambda client, asking: _once(client, asking, args))

    def get(self, key: Key) -> Any:
        return self.execute("GET", key, key=key, read=True)

    def set(self, key: Key, value: Any) -> Any:
        return self.execute("SET", key, value, key=key)

    def delete(self, key: Key) -> Any:
        return self.execute("DEL", key, key=key)

    def set_and_wait(self, key: Key, value: Any, replicas: int = 1, timeout_ms: int = 500) -> int:
        """``SET`` then ``WAIT replicas timeout_ms`` on one connection: how many replicas
        acknowledged the write."""
        return int(self._run([key], "write", lambda client, asking: _once(
            client, asking, ("SET", key, value), ("WAIT", replicas, timeout_ms))))

    def mset(self, mapping: Mapping[Key, Any]) -> Any:
        """``MSET`` of keys that share a slot (a hash tag); ``cross_slot`` otherwise."""
        args: list[Any] = ["MSET"]
        for key, value in mapping.items():
            args += [key, value]
        return self._run(list(mapping), "write", lambda client, asking: _once(client, asking, args))

    def mget(self, keys: Sequence[Key]) -> list[Any]:
        """Values of ``keys`` in order: one ``MGET`` per slot, those of a node pipelined."""
        keys = list(keys)
        values: list[Any] = [None] * len(keys)
        for address, readonly, slots in self._plan(keys, "read"):
            batches = [[keys[i] for i in indices] for _, indices in slots]
            replies = self._pipeline(address, readonly, [("MGET", *batch) for batch in batches])
            for (_, indices), batch, reply in zip(slots, batches, replies):
                if isinstance(reply, BaseException):
                    reply = self._run(batch, "read", partial(_resend, ("MGET", *batch)), reply)
                for index, value in zip(indices, reply):
                    values[index] = value
        return values

    def pipeline_get(self, keys: Sequence[Key]) -> list[Any]:
        """``GET`` of every key, one pipeline per node."""
        return self._pipelined([("GET", key) for key in keys], list(keys), "read")

    def pipeline_set(self, items: Sequence[tuple[Key, Any]]) -> list[Any]:
        """``SET`` of every pair, one pipeline per node."""
        return self._pipelined([("SET", key, value) for key, value in items], [key for key, _ in items], "write")

    def _plan(self, keys: list[Key], access: Literal["read", "write"]) -> list[tuple[str, bool, list[tuple[int, list[int]]]]]:
        if self._session.router is None:
            self._ensure_table()
        return self._session.plan(keys, access)

    def _pipelined(self, commands: list[tuple[Any, ...]], keys: list[Key], access: Literal["read", "write"]) -> list[Any]:
        results: list[Any] = [None] * len(commands)
        for address, readonly, slots in self._plan(keys, access):
            indices = [index for _, members in slots for index in members]
            replies = self._pipeline(address, readonly, [commands[i] for i in indices])
            for index, reply in zip(indices, replies):
                if isinstance(reply, BaseException):
                    # That command alone takes the session's path, from the error it got.
                    reply = self._run([keys[index]], access, partial(_resend, commands[index]), reply)
                results[index] = reply
        return results

    def _pipeline(self, address: str, readonly: bool, commands: list[tuple[Any, ...]]) -> list[Any]:
        try:
            pipe = self.connection(address, readonly=readonly).pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            return list(pipe.execute(raise_on_error=False))
        except (redis.RedisError, OSError) as err:
            return [err] * len(commands)

    def close(self) -> None:
        for client in self._pools.values():
            client.close()
        self._pools.clear()

    def __enter__(self) -> ClusterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _once(client: Any, asking: bool, *commands: Sequence[Any]) -> Any:
    """The commands on one connection (after ``ASKING`` when asking); the last reply.
    A pipeline raises the first error, as the session reads it."""
    if not asking and len(commands) == 1:
        return client.execute_command(*commands[0])
    pipe = client.pipeline(transaction=False)
    if asking:
        pipe.execute_command("ASKING")
    for command in commands:
        pipe.execute_command(*command)
    return pipe.execute()[-1]


def _resend(command: Sequence[Any], client: Any, asking: bool) -> Any:
    return _once(client, asking, command)


async def _resend_async(command: Sequence[Any], client: Any, asking: bool) -> Any:
    return await _once_async(client, asking, command)


async def _once_async(client: Any, asking: bool, *commands: Sequence[Any]) -> Any:
    if not asking and len(commands) == 1:
        return await client.execute_command(*commands[0])
    pipe = client.pipeline(transaction=False)
    if asking:
        pipe.execute_command("ASKING")
    for command in commands:
        pipe.execute_command(*command)
    return (await pipe.execute())[-1]


class AsyncClusterClient(_Shell[redis.asyncio.Redis]):
    """``ClusterClient`` on ``redis.asyncio``: the same session, the same decisions;
    every command is a coroutine. One refresh runs at a time (the others wait for it),
    and ``mget`` and the pipelines send to every node at once."""

    _module = redis.asyncio
    _readonly_class = _AsyncReadOnlyConnection

    def __init__(self, startup_nodes: Iterable[str | tuple[str, int]], **kwargs: Any) -> None:
        super().__init__(startup_nodes, **kwargs)
        self._refreshing: asyncio.Task[bool] | None = None

    def _pool(self, **kwargs: Any) -> Any:
        # Many tasks share a node's pool: a task waits for a free connection (up to the
        # command timeout) rather than failing at the pool's limit.
        return redis.asyncio.BlockingConnectionPool(
            **kwargs, timeout=self._session.config["command_timeout_ms"] / 1000, **self._connection_kwargs)

    async def router(self) -> shardroute.Router:
        """The current router; reads the table first if there is none yet."""
        if self._session.router is None:
            await self._run(["table"], "read", lambda client, asking: _noop())
        router = self._session.router
        assert router is not None
        return router

    def refresh(self) -> Awaitable[bool]:
        """Reads the slot table (as ``ClusterClient.refresh``); one at a time."""
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self._refresh_once())
        return asyncio.shield(self._refreshing)

    async def _refresh_once(self) -> bool:
        session = self._session
        for address in session.refresh_candidates():
            try:
                pool = self.connection(address).connection_pool
                connection = await pool.get_connection()
                try:
                    await connection.send_command("CLUSTER", "SHARDS")
                    reply = _text(await connection.read_response())
                finally:
                    await pool.release(connection)
                session.refreshed(reply, _now_ms())
                return True
            except (redis.RedisError, OSError, shardroute.ShardrouteError):
                continue
        session.refresh_failed(_now_ms())
        return False

    async def _run(self, keys: Sequence[Key], access: Literal["read", "write"], attempt: Callable[[Any, bool], Awaitable[T]],
                   error: BaseException | None = None) -> T:
        session = self._session
        command = session.command(keys, access, _now_ms())
        action = self._failed(command, error) if error is not None else session.poll(command, _now_ms())
        while True:
            kind = action.kind
            if kind == "send":
                try:
                    reply = await attempt(self._sent(action), bool(action.asking))
                except (redis.RedisError, OSError) as err:
                    error, action = err, self._failed(command, err)
                    continue
                session.succeeded(command, _now_ms())
                return reply
            if kind == "wait":
                await asyncio.sleep((action.delay_ms or 0) / 1000)
            elif kind == "refresh":
                await self.refresh()
            elif kind == "done":
                assert error is not None
                raise error
            else:
                raise _failure(action, error)
            action = session.poll(command, _now_ms())

    async def execute(self, *args: Any, key: Key, read: bool = False) -> Any:
        return await self._run([key], "read" if read else "write", lambda client, asking: _once_async(client, asking, args))

    async def get(self, key: Key) -> Any:
        return await self.execute("GET", key, key=key, read=True)

    async def set(self, key: Key, value: Any) -> Any:
        return await self.execute("SET", key, value, key=key)

    async def delete(self, key: Key) -> Any:
        return await self.execute("DEL", key, key=key)

    async def set_and_wait(self, key: Key, value: Any, replicas: int = 1, timeout_ms: int = 500) -> int:
        return int(await self._run([key], "write", lambda client, asking: _once_async(
            client, asking, ("SET", key, value), ("WAIT", replicas, timeout_ms))))

    async def mset(self, mapping: Mapping[Key, Any]) -> Any:
        args: list[Any] = ["MSET"]
        for key, value in mapping.items():
            args += [key, value]
        return await self._run(list(mapping), "write", lambda client, asking: _once_async(client, asking, args))

    async def mget(self, keys: Sequence[Key]) -> list[Any]:
        keys = list(keys)
        values: list[Any] = [None] * len(keys)

        async def group(address: str, readonly: bool, slots: list[tuple[int, list[int]]]) -> None:
            batches = [[keys[i] for i in indices] for _, indices in slots]
            replies = await self._pipeline(address, readonly, [("MGET", *batch) for batch in batches])
            for (_, indices), batch, reply in zip(slots, batches, replies):
                if isinstance(reply, BaseException):
                    reply = await self._run(batch, "read", partial(_resend_async, ("MGET", *batch)), reply)
                for index, value in zip(indices, reply):
                    values[index] = value

        await asyncio.gather(*(group(*entry) for entry in await self._plan(keys, "read")))
        return values

    async def pipeline_get(self, keys: Sequence[Key]) -> list[Any]:
        return await self._pipelined([("GET", key) for key in keys], list(keys), "read")

    async def pipeline_set(self, items: Sequence[tuple[Key, Any]]) -> list[Any]:
        return await self._pipelined([("SET", key, value) for key, value in items], [key for key, _ in items], "write")

    async def _plan(self, keys: list[Key], access: Literal["read", "write"]) -> list[tuple[str, bool, list[tuple[int, list[int]]]]]:
        if self._session.router is None:
            await self.router()
        return self._session.plan(keys, access)

    async def _pipelined(self, commands: list[tuple[Any, ...]], keys: list[Key], access: Literal["read", "write"]) -> list[Any]:
        results: list[Any] = [None] * len(commands)

        async def group(address: str, readonly: bool, slots: list[tuple[int, list[int]]]) -> None:
            indices = [index for _, members in slots for index in members]
            replies = await self._pipeline(address, readonly, [commands[i] for i in indices])
            for index, reply in zip(indices, replies):
                if isinstance(reply, BaseException):
                    reply = await self._run([keys[index]], access, partial(_resend_async, commands[index]), reply)
                results[index] = reply

        await asyncio.gather(*(group(*entry) for entry in await self._plan(keys, access)))
        return results

    async def _pipeline(self, address: str, readonly: bool, commands: list[tuple[Any, ...]]) -> list[Any]:
        try:
            pipe = self.connection(address, readonly=readonly).pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute(raise_on_error=False))
        except (redis.RedisError, OSError) as err:
            return [err] * len(commands)

    async def close(self) -> None:
        pools = list(self._pools.values())
        self._pools.clear()
        await asyncio.gather(*(pool.aclose() for pool in pools), return_exceptions=True)

    async def __aenter__(self) -> AsyncClusterClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _noop() -> None:
    return None
