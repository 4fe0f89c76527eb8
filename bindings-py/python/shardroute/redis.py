"""Redis Cluster clients whose every decision is shardroute's core.

``ClusterClient`` (redis-py) and ``AsyncClusterClient`` (``redis.asyncio``) keep one
connection pool per node and send each command straight to the node that owns its slot.
What to do when the cluster changes under them (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, a
failover, a lost connection, a silent node), and when to look again, is decided by the
core's sans-IO ``shardroute.ClusterSession``, as in the Node client (``shardroute/redis``),
and checked by ``conformance/vectors/session_redis.json``; its settings and defaults are
``shardroute.session_defaults()``.

The commands are written once, as generators of I/O requests; the two clients perform
them, blocking or awaited (the nodes of a batch at once). Each request runs until the
deadline the session gives it, its connection's handshake included: a node that drips
its reply, or a paused one, is cut off then. The clients connect lazily: the first
command, ``refresh()`` or ``router`` reads the slot table. A command that cannot be
served raises ``TooManyRedirects`` or ``ClusterUnavailable``; a MOVED or ASK whose text
the core cannot read, its ``InvalidArgumentError``; any other Redis error as redis-py
raises it. A ``CLUSTER SHARDS`` reply that is not UTF-8 is refused, never read with
U+FFFD in it.

Needs redis-py: ``pip install 'shardroute[redis]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import socket
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

try:
    import redis
    import redis.asyncio
    import redis.asyncio.retry
    import redis.retry
except ImportError:  # pragma: no cover - the message is the point
    raise ImportError("shardroute.redis needs redis-py: pip install 'shardroute[redis]'") from None

import shardroute
from redis.backoff import NoBackoff
from redis.exceptions import AskError, MovedError

__all__ = ["AsyncClusterClient", "ClusterClient", "ClusterStats", "ClusterUnavailable", "TooManyRedirects"]

Key = str | bytes | int
#: What the generators yield (deadlines in ms on ``_now_ms``'s clock, from the session):
#: ("send", address, readonly, asking, commands, deadline) -> an attempt; ("read",
#: attempt, deadline, reply_deadline) -> its replies (errors as values), or ``PENDING``;
#: ("abandon", attempt); ("sleep", deadline); ("refresh",); ("all", generators).
Steps = Generator[tuple[Any, ...], Any, Any]
FAILED = (redis.RedisError, OSError)
PENDING = object()  # no reply begun by the session's deadline


class TooManyRedirects(shardroute.TooManyRedirectsError, redis.RedisError):
    """A command was redirected more than ``max_redirects`` times (code ``too_many_redirects``)."""

    def __repr__(self) -> str:  # redis-py's reads an attribute its __init__ (not called) sets
        return f"{type(self).__name__}({str(self)!r})"


class ClusterUnavailable(shardroute.UnavailableError, redis.ConnectionError):
    """No node served a command within the retry budget (code ``unavailable``)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


_FAILURES: dict[str | None, type[Exception]] = {"too_many_redirects": TooManyRedirects, "unavailable": ClusterUnavailable}


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def _left(deadline_ms: int | None) -> float | None:
    return None if deadline_ms is None else max(0.0, (deadline_ms - _now_ms()) / 1000)


def _failure(action: shardroute.Action) -> BaseException:
    """The error of a "fail" action, of this module's classes where it has one."""
    made: Any = _FAILURES[action.code](action.message) if action.code in _FAILURES else action.error()
    made.code, made.message = action.code, action.message
    return made  # type: ignore[no-any-return]


def _text(value: Any) -> Any:
    """A raw reply with bytes decoded. Bytes that are not UTF-8 become lone surrogates
    (``surrogateescape``), never U+FFFD: the session refuses them as any text that is not
    Unicode (``InvalidArgumentError``, as the Node client's session does)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, list):
        return [_text(item) for item in value]
    if isinstance(value, dict):
        return {_text(k): _text(v) for k, v in value.items()}
    return value


class ClusterStats:
    """The session's counters since the client was made (or ``reset``), read when asked
    (``shardroute.SessionStats``; ``errors`` is their sum with the commands given up,
    ``error_kinds`` the counts by outcome)."""

    def __init__(self, session: shardroute.ClusterSession) -> None:
        self._session = session

    def reset(self) -> None:
        self._session.reset_stats()

    def __getattr__(self, name: str) -> Any:
        stats: dict[str, Any] = dict(self._session.stats)
        stats["error_kinds"], stats["errors"] = stats["errors"], sum(stats["errors"].values()) + stats["failed"]
        if name in stats:
            return stats[name]
        raise AttributeError(name)


class _SafeRedirect:
    """redis-py's MOVED and ASK errors, kept when their text is not ``<slot> <host:port>``
    (redis-py's own class raises ``ValueError`` while the reply is parsed): the session
    reads the text, and refuses it in the core's words."""

    def __init__(self, resp: str, status_code: str | None = None) -> None:
        try:
            super().__init__(resp, status_code=status_code)  # type: ignore[call-arg]
        except (ValueError, TypeError):
            redis.ResponseError.__init__(self, resp, status_code=status_code)  # type: ignore[arg-type]
            self.args, self.message = (resp,), resp


class _MovedReply(_SafeRedirect, MovedError):
    pass


class _AskReply(_SafeRedirect, AskError):
    pass


_PARSERS: dict[type, type] = {}


def _safe_parser(parser_class: type) -> type:
    """``parser_class`` with MOVED and ASK read by ``_MovedReply`` and ``_AskReply``."""
    made = _PARSERS.get(parser_class)
    if made is None:
        classes = {**getattr(parser_class, "EXCEPTION_CLASSES", {}), "MOVED": _MovedReply, "ASK": _AskReply}
        made = _PARSERS[parser_class] = type(parser_class.__name__, (parser_class,), {"EXCEPTION_CLASSES": classes})
    return made


_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


@contextlib.contextmanager
def _until(deadline_ms: int | None) -> Iterator[None]:
    """Every socket connect and read of this thread stops at ``deadline_ms`` (the session's)."""
    token = _DEADLINE.set(None if deadline_ms is None else deadline_ms / 1000)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


class _TimedSocket(socket.socket):
    """A socket whose reads stop at the request's deadline (``_until``), however the
    per-read timeout is set: a node that drips its reply cannot stretch a request."""

    def _bounded(self, read: Callable[..., Any], *args: Any) -> Any:
        timeout, deadline = self.gettimeout(), _DEADLINE.get()
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("the request's deadline passed")
            self.settimeout(left if timeout is None else min(timeout, left))
        try:
            return read(*args)
        finally:
            self.settimeout(timeout)

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        return bytes(self._bounded(super().recv, bufsize, flags))

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        return int(self._bounded(super().recv_into, buffer, nbytes, flags))


class _TimedConnection(redis.Connection):
    """redis-py's connection under the request's deadline: connecting, the handshake and
    each reply. A host the resolver cannot encode (a 255-byte MOVED target) is a
    connection error, as an unknown host is."""

    def set_parser(self, parser_class: Any) -> None:
        super().set_parser(_safe_parser(parser_class))

    def _connect(self) -> Any:
        try:
            sock = super()._connect()
        except UnicodeError as err:
            raise socket.gaierror(socket.EAI_NONAME, f"{self.host!r} cannot be resolved: {err}") from err
        timed = _TimedSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())
        timed.settimeout(sock.gettimeout())
        return timed


class _ReadOnlyConnection(_TimedConnection):
    """A connection that sends ``READONLY`` after its handshake (replica reads)."""

    def on_connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        super().on_connect_check_health(*args, **kwargs)
        self.send_command("READONLY")
        self.read_response()


class _AsyncSafeConnection(redis.asyncio.Connection):
    """redis.asyncio's connection with MOVED and ASK read by ``_MovedReply`` and ``_AskReply``."""

    def set_parser(self, parser_class: Any) -> None:
        super().set_parser(_safe_parser(parser_class))


class _AsyncReadOnlyConnection(_AsyncSafeConnection):
    async def on_connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        await super().on_connect_check_health(*args, **kwargs)
        await self.send_command("READONLY")
        await self.read_response()


class _Client:
    """The commands, once, as generators of I/O requests; a subclass performs them."""

    _module: Any = redis
    _readonly: Any = _ReadOnlyConnection
    _connection_class: Any = _TimedConnection
    _retry: Any = redis.retry.Retry  # the asyncio client's is redis.asyncio's (redis-py 8.2 warns otherwise)

    def __init__(self, startup_nodes: Iterable[str | tuple[str, int]], *, read_from_replicas: bool = False,
                 config: shardroute.SessionConfig | None = None, **connection_kwargs: Any) -> None:
        seeds = [node if isinstance(node, str) else f"{node[0]}:{node[1]}" for node in startup_nodes]
        settings: dict[str, Any] = {**(config or {}), **({"read_from_replicas": True} if read_from_replicas else {})}
        self._session = shardroute.ClusterSession(seeds, settings)  # type: ignore[arg-type]
        # No retries inside redis-py: every failure reaches the session; every wait is its.
        self._connection_kwargs = {"socket_connect_timeout": self._session.config["connect_timeout_ms"] / 1000,
                                   "retry": self._retry(NoBackoff(), 0), **connection_kwargs}
        self._pools: dict[tuple[str, bool], Any] = {}
        self.stats = ClusterStats(self._session)

    def connection(self, address: str, *, readonly: bool = False) -> Any:
        """The client (one connection pool) of the node at ``address`` (``host:port``)."""
        pool = self._pools.get((address, readonly))
        if pool is None:
            host, port = shardroute.parse_address(address)
            connection_class = self._readonly if readonly else self._connection_class
            pool = self._module.Redis(connection_pool=self._pool(connection_class=connection_class, host=host, port=port))
            self._pools[(address, readonly)] = pool
        return pool

    def _pool(self, **kwargs: Any) -> Any:
        return self._module.ConnectionPool(**kwargs, **self._connection_kwargs)

    def address_of(self, node: str) -> str:
        """The ``host:port`` of a node id of the current router."""
        address = self._session.address_of(node)
        if address is None:
            raise KeyError(node)
        return address

    def _failed(self, command: shardroute.Command, err: BaseException) -> shardroute.Action:
        names = [cls.__name__ for cls in type(err).__mro__]
        return self._session.failed(command, str(err), names, _now_ms())

    # -- the steps -----------------------------------------------------------------

    def _command(self, keys: Sequence[Key], access: Literal["read", "write"], commands: Sequence[Sequence[Any]],
                 error: BaseException | None = None) -> Steps:
        """One command where the session says, until it is done. ``commands`` run on one
        connection (the last reply is the result; the first error is raised); ``error``:
        what it already got. The attempt in flight is read until the session's deadline,
        then the session says: keep waiting, refresh, send elsewhere (a stall), or give it
        up (its timeout)."""
        session = self._session
        command = session.command(keys, access, _now_ms())
        action = self._failed(command, error) if error is not None else session.poll(command, _now_ms())
        attempt: Any = None
        while True:
            if attempt is not None and (action.kind == "send" or not command.in_flight):
                yield ("abandon", attempt)
                attempt = None
            if action.kind == "done" and error is not None:
                raise error
            if action.kind in ("done", "fail"):
                raise _failure(action) from error
            try:
                if action.kind == "send":
                    if not commands:  # the table alone
                        session.succeeded(command, _now_ms())
                        return None
                    request = ("send", action.address, action.readonly, action.asking, commands, session.deadline(command))
                    attempt = yield request
                if action.kind == "refresh":  # the attempt in flight (a stall's) waits meanwhile
                    yield ("refresh",)
                elif attempt is not None:
                    replies = yield ("read", attempt, session.deadline(command), session.reply_deadline(command))
                    if replies is not PENDING:
                        attempt = None
                        for reply in replies:
                            if isinstance(reply, redis.ResponseError):
                                raise reply
                        session.succeeded(command, _now_ms())
                        return replies[-1]
                else:
                    yield ("sleep", session.deadline(command))
            except FAILED as err:
                attempt, error = None, err
                action = self._failed(command, err)
                continue
            action = session.on_deadline(command, _now_ms())

    def _table(self) -> Steps:
        """The first table, under the session's rules (refresh, backoff, budget)."""
        if self._session.router is None:
            yield from self._command(["table"], "read", [])

    def _batch(self, keys: list[Key], access: Literal["read", "write"],
               command_for: Callable[[list[int]], tuple[Any, ...]], per_slot: bool) -> Steps:
        """One pipeline per node, each one request until the session's batch deadline:
        ``command_for(indices)`` for each key's index or, when ``per_slot``, for the indices
        of each slot (an MGET); the results in key order. An entry that fails takes the
        command's path from the error it got."""
        yield from self._table()
        results: list[Any] = [None] * len(keys)

        def node(address: str, readonly: bool, slots: list[tuple[int, list[int]]]) -> Steps:
            groups = [indices for _, indices in slots] if per_slot else [[i] for _, indices in slots for i in indices]
            commands = [command_for(group) for group in groups]
            deadline = self._session.batch_deadline(_now_ms())
            try:
                attempt = yield ("send", address, readonly, False, commands, deadline)
                replies = yield ("read", attempt, deadline, deadline)
                if replies is PENDING:
                    yield ("abandon", attempt)
                    replies = [redis.TimeoutError(f"Timeout reading from {address}")] * len(commands)
            except FAILED as err:
                replies = [err] * len(commands)
            for group, command, reply in zip(groups, commands, replies):
                if isinstance(reply, BaseException):
                    reply = yield from self._command([keys[i] for i in group], access, [command], reply)
                for i, value in zip(group, reply if per_slot else [reply]):
                    results[i] = value

        yield ("all", [node(*entry) for entry in self._session.plan(keys, access)])
        return results

    def _refresh(self) -> Steps:
        """Each candidate in turn, ``CLUSTER SHARDS`` until the session's deadline for it."""
        session = self._session
        for address in session.refresh_candidates():
            try:
                deadline = session.refresh_sent(address, _now_ms())
                attempt = yield ("send", address, False, False, [("CLUSTER", "SHARDS")], deadline)
                replies = yield ("read", attempt, deadline, session.refresh_reply_deadline())
                if replies is not PENDING:
                    if isinstance(replies[-1], BaseException):
                        raise replies[-1]
                    session.refreshed(_text(replies[-1]), _now_ms())
                    return True
                yield ("abandon", attempt)
            except (*FAILED, shardroute.ShardrouteError):
                pass
            session.timeout(_now_ms())  # a silent candidate: given up at its deadline
        session.refresh_failed(_now_ms())
        return False

    # -- the commands ------------------------------------------------------------------

    def _run(self, steps: Steps) -> Any:
        raise NotImplementedError

    def execute(self, *args: Any, key: Key, read: bool = False) -> Any:
        """One command for ``key``, where the session says."""
        return self._run(self._command([key], "read" if read else "write", [args]))

    def get(self, key: Key) -> Any:
        return self.execute("GET", key, key=key, read=True)

    def set(self, key: Key, value: Any) -> Any:
        return self.execute("SET", key, value, key=key)

    def delete(self, key: Key) -> Any:
        return self.execute("DEL", key, key=key)

    def set_and_wait(self, key: Key, value: Any, replicas: int = 1, timeout_ms: int | None = None) -> Any:
        """``SET`` then ``WAIT replicas timeout_ms`` (the session's ``wait_timeout_ms`` when
        None) on one connection: how many replicas acknowledged the write."""
        wait = self._session.config["wait_timeout_ms"] if timeout_ms is None else timeout_ms
        return self._run(self._command([key], "write", [("SET", key, value), ("WAIT", replicas, wait)]))

    def mset(self, mapping: Mapping[Key, Any]) -> Any:
        """``MSET`` of keys that share a slot (a hash tag); ``cross_slot`` otherwise."""
        return self._run(self._command(list(mapping), "write", [("MSET", *(x for item in mapping.items() for x in item))]))

    def mget(self, keys: Sequence[Key]) -> Any:
        """Values of ``keys`` in order: one ``MGET`` per slot, those of a node pipelined."""
        keys = list(keys)
        return self._run(self._batch(keys, "read", lambda group: ("MGET", *(keys[i] for i in group)), per_slot=True))

    def pipeline_get(self, keys: Sequence[Key]) -> Any:
        """``GET`` of every key, one pipeline per node."""
        keys = list(keys)
        return self._run(self._batch(keys, "read", lambda group: ("GET", keys[group[0]]), per_slot=False))

    def pipeline_set(self, items: Sequence[tuple[Key, Any]]) -> Any:
        """``SET`` of every pair, one pipeline per node."""
        items = list(items)
        keys = [key for key, _ in items]
        return self._run(self._batch(keys, "write", lambda group: ("SET", *items[group[0]]), per_slot=False))


def _queue(pipe: Any, asking: bool, commands: Sequence[Sequence[Any]]) -> Any:
    if asking:
        pipe.execute_command("ASKING")
    for command in commands:
        pipe.execute_command(*command)
    return pipe


class _Attempt:
    """Commands sent on one connection of the node's pool (``ASKING`` first when asked),
    connected under the session's deadline; their replies read one by one, errors as
    values, so that the session can be asked while the node is silent. The connection
    goes back to its pool once all are read, or is closed when abandoned."""

    def __init__(self, client: Any, asking: bool, commands: Sequence[Sequence[Any]], deadline_ms: int | None) -> None:
        self.client, self.pool, self.replies = client, client.connection_pool, list[Any]()
        self.wire: list[Sequence[Any]] = [("ASKING",), *commands] if asking else list(commands)
        with _until(deadline_ms):
            self.connection = self.pool.get_connection()
            try:
                self.connection.send_packed_command(self.connection.pack_commands(self.wire))
            except BaseException:
                self.abandon()
                raise

    def read(self, deadline_ms: int | None, reply_deadline_ms: int | None) -> Any:
        """The replies, or ``PENDING`` when the next has not begun by ``deadline_ms``; a
        reply begun is read until ``reply_deadline_ms``."""
        connection = self.connection
        try:
            with _until(reply_deadline_ms):
                while len(self.replies) < len(self.wire):
                    if not connection.can_read(timeout=_left(deadline_ms)):
                        return PENDING
                    try:
                        self.replies.append(self.client.parse_response(connection, self.wire[len(self.replies)][0]))
                    except redis.ResponseError as err:
                        self.replies.append(err)
        except BaseException:
            self.abandon()
            raise
        self.pool.release(connection)
        return self.replies

    def abandon(self) -> None:
        """Closes the connection (a late reply must not be read as another's) and gives it
        back to the pool, which reconnects it when next used."""
        self.connection.disconnect()
        self.pool.release(self.connection)


class ClusterClient(_Client):
    """A Redis Cluster client routed by shardroute (see the module docs).

    ``startup_nodes`` are ``"host:port"`` strings or ``(host, port)`` pairs; any one that
    answers ``CLUSTER SHARDS`` is enough. ``read_from_replicas``: reads go to the slot's
    replicas in turn. ``config``: the session's settings (``shardroute.session_defaults()``).
    Other keyword arguments go to each node's connection pool.
    """

    @property
    def router(self) -> shardroute.Router:
        """The current router (a ``redis_cluster`` topology); reads the table first."""
        self._run(self._table())
        return self._session.router  # type: ignore[return-value]

    def refresh(self) -> bool:
        """Reads the slot table from the first candidate with a whole table; False when none."""
        return bool(self._run(self._refresh()))

    def _run(self, steps: Steps) -> Any:
        reply: Any = None
        error: BaseException | None = None
        while True:
            try:
                request = steps.throw(error) if error is not None else steps.send(reply)
            except StopIteration as done:
                return done.value
            reply, error = None, None
            try:
                reply = self._perform(*request)
            except FAILED as err:
                error = err

    def _perform(self, kind: str, *args: Any) -> Any:
        if kind == "send":
            address, readonly, asking, commands, deadline = args
            return _Attempt(self.connection(address, readonly=readonly), asking, commands, deadline)
        if kind == "read":
            return args[0].read(args[1], args[2])
        if kind == "abandon":
            return args[0].abandon()
        if kind == "sleep":
            return time.sleep(_left(args[0]) or 0)
        if kind == "refresh":
            return self.refresh()
        return [self._run(steps) for steps in args[0]]

    def close(self) -> None:
        for client in self._pools.values():
            client.close()
        self._pools.clear()

    def __enter__(self) -> ClusterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # an abandoned attempt's error is not the command's


async def _listed(reply: Any) -> list[Any]:
    return [await reply]


class AsyncClusterClient(_Client):
    """``ClusterClient`` on ``redis.asyncio``: the same session and the same commands,
    each a coroutine. One refresh runs at a time (the others wait for it), and ``mget``
    and the pipelines send to every node at once."""

    _module = redis.asyncio
    _readonly = _AsyncReadOnlyConnection
    _connection_class = _AsyncSafeConnection
    _retry = redis.asyncio.retry.Retry

    def __init__(self, startup_nodes: Iterable[str | tuple[str, int]], **kwargs: Any) -> None:
        super().__init__(startup_nodes, **kwargs)
        self._refreshing: asyncio.Future[bool] | None = None

    def _pool(self, **kwargs: Any) -> Any:
        # One connection per task in flight, reused (as redis.asyncio's RedisCluster
        # does); unbounded, as RedisCluster's nodes are, unless `max_connections` is given
        # (then a burst past it fails over to the session).
        options = {"max_connections": 2**31, **self._connection_kwargs}
        return redis.asyncio.ConnectionPool(**kwargs, **options)

    async def router(self) -> shardroute.Router:
        """The current router; reads the table first."""
        await self._run(self._table())
        return self._session.router  # type: ignore[return-value]

    async def refresh(self) -> bool:
        """Reads the slot table (as ``ClusterClient.refresh``); one at a time."""
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self._run(self._refresh()))
        return bool(await asyncio.shield(self._refreshing))

    async def _run(self, steps: Steps) -> Any:
        reply: Any = None
        error: BaseException | None = None
        while True:
            try:
                request = steps.throw(error) if error is not None else steps.send(reply)
            except StopIteration as done:
                return done.value
            reply, error = None, None
            try:
                reply = await self._perform(*request)
            except FAILED as err:
                error = err

    async def _perform(self, kind: str, *args: Any) -> Any:
        if kind == "send":  # a task: connecting, the handshake and the replies, awaited by "read"
            address, readonly, asking, commands, _ = args
            client = self.connection(address, readonly=readonly)
            if asking or len(commands) > 1:
                sent = _queue(client.pipeline(transaction=False), asking, commands).execute(raise_on_error=False)
            else:
                sent = _listed(client.execute_command(*commands[0]))
            task = asyncio.ensure_future(sent)
            task.add_done_callback(_retrieved)
            return task
        if kind == "read":  # the replies, or PENDING at the deadline (the task runs on)
            try:
                done, _ = await asyncio.wait({args[0]}, timeout=_left(args[1]))
            except asyncio.CancelledError:
                args[0].cancel()
                raise
            return args[0].result() if done else PENDING
        if kind == "abandon":
            return args[0].cancel()
        if kind == "sleep":
            return await asyncio.sleep(_left(args[0]) or 0)
        if kind == "refresh":
            return await self.refresh()
        return await asyncio.gather(*(self._run(steps) for steps in args[0]))

    async def close(self) -> None:
        pools = list(self._pools.values())
        self._pools.clear()
        await asyncio.gather(*(pool.aclose() for pool in pools), return_exceptions=True)

    async def __aenter__(self) -> AsyncClusterClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
