"""Redis Cluster clients whose every decision is shardroute's core.

``ClusterClient`` (redis-py) and ``AsyncClusterClient`` (``redis.asyncio``) keep one
connection pool per node and send each command straight to the node that owns its slot;
``AsyncClusterClient`` auto-pipelines (the session's ``auto_pipeline``, on by default):
the commands of concurrent tasks share one connection per node, written together as the
session counts them.
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
import collections
import contextlib
import contextvars
import functools
import heapq
import itertools
import socket
import time
import types
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
#: ("send", address, readonly, asking, commands, deadline) -> an attempt (a batch's or a
#: refresh's); ("queue", ...the same) -> the attempt of one session command, which the
#: asyncio client may auto-pipeline with the other tasks' (the sync client sends it); ("read",
#: attempt, deadline, reply_deadline) -> its replies (errors as values), or ``PENDING``;
#: ("abandon", attempt); ("sleep", deadline); ("refresh",); ("refresh_begun",) -> whether a
#: refresh now runs in the background (started if none did); ("all", generators).
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
    errors: int
    error_kinds: dict[str, int]

    def __init__(self, session: shardroute.ClusterSession) -> None:
        self._session = session

    def reset(self) -> None:
        """Sets every counter back to zero."""
        self._session.reset_stats()

    def _read(self) -> dict[str, Any]:
        stats: dict[str, Any] = dict(self._session.stats)
        stats["error_kinds"], stats["errors"] = stats["errors"], sum(stats["errors"].values()) + stats["failed"]
        return stats

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        stats = self._read()
        if name in stats:
            return stats[name]
        raise AttributeError(name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._read()})

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in sorted(self._read().items()))
        return f"ClusterStats({shown})"


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
        attempt: Any = None
        sent = session._send_now(keys, access, sent_ms := _now_ms()) if error is None and commands else None
        if sent is not None:
            # The steady path: one call into the core (the target and the attempt's
            # deadlines) and none after the reply. The Command is made only for what else
            # comes (an error, the deadline), as poll at sent_ms would have left it.
            address, readonly, deadline, reply_deadline = sent
            try:
                attempt = yield ("queue", address, readonly, False, commands, deadline)
                replies = yield ("read", attempt, deadline, reply_deadline)
                if replies is not PENDING:
                    attempt = None
                    for reply in replies:
                        if isinstance(reply, redis.ResponseError):
                            raise reply
                    return replies[-1]
            except FAILED as err:
                attempt, error = None, err
            command = session._command_sent(keys, access, address, sent_ms)
            action = self._failed(command, error) if error is not None else session.on_deadline(command, _now_ms())
        else:
            command = session.command(keys, access, _now_ms())
            action = self._failed(command, error) if error is not None else session.poll(command, _now_ms())
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
                    request = ("queue", action.address, action.readonly, action.asking, commands, session.deadline(command))
                    attempt = yield request
                if action.kind == "refresh":  # the attempt in flight (a stall's) waits meanwhile
                    if attempt is None and (yield ("refresh_begun",)):
                        # Once a refresh runs, the session holds only what must wait for
                        # it (no table, a refresh asked for at once): a MOVED's runs on in
                        # the background (asyncio; the sync client refreshes in line).
                        action = session.poll(command, _now_ms())
                        if action.kind != "refresh":
                            continue
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
        if kind in ("send", "queue"):
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
        if kind == "refresh_begun":
            return False  # a refresh runs in line, when the command asks for it
        return [self._run(steps) for steps in args[0]]

    def close(self) -> None:
        for client in self._pools.values():
            client.close()
        self._pools.clear()

    def __enter__(self) -> ClusterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@types.coroutine
def _one_turn() -> Generator[None, None, None]:
    """Gives the event loop one turn (tasks ready to run do, up to their next wait), as
    asyncio's own zero-length sleep does: no timer."""
    yield


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # an abandoned attempt's error is not the command's


def _pack(encoder: Any, commands: Iterable[Sequence[Any]]) -> bytes:
    """``commands`` in RESP, as redis-py's ``pack_commands`` writes them (a command name
    of several words is split; each argument by the connection's encoder), in one buffer."""
    encode, encoding, errors = encoder.encode, encoder.encoding, encoder.encoding_errors
    out: list[bytes] = []
    append = out.append
    for command in commands:
        name = command[0]
        if type(name) is str and " " not in name:
            append(b"*%d\r\n" % len(command))
            rest: Iterable[Any] = command
        else:
            words = name.encode().split() if isinstance(name, str) else name.split() if b" " in name else [name]
            append(b"*%d\r\n" % (len(words) + len(command) - 1))
            rest = [*words, *command[1:]]
        for arg in rest:
            if type(arg) is str:
                arg = arg.encode(encoding, errors)
            elif type(arg) is not bytes:
                arg = encode(arg)
            append(b"$%d\r\n%b\r\n" % (len(arg), arg))
    return b"".join(out)


async def _sent(client: Any, asking: bool, commands: Sequence[Sequence[Any]]) -> list[Any]:
    """``commands`` (``ASKING`` first when asked) in one write on a connection of the
    node's pool, and their replies in order (errors as values), as one redis.asyncio
    pipeline without a transaction. The connection goes back to the pool once all are
    read, or is closed when the read ends early (an error, or the attempt abandoned)."""
    wire: list[Sequence[Any]] = [("ASKING",), *commands] if asking else list(commands)
    pool = client.connection_pool
    connection = await pool.get_connection()
    try:
        await connection.send_packed_command(_pack(connection.encoder, wire), check_health=False)
        replies: list[Any] = []
        for command in wire:
            try:
                replies.append(await client.parse_response(connection, command[0]))
            except redis.ResponseError as err:
                replies.append(err)
    except BaseException:
        with contextlib.suppress(Exception):
            await connection.disconnect(nowait=True)
        raise
    finally:
        await pool.release(connection)
    return replies


def _expire(waiter: asyncio.Future[Any]) -> None:
    if not waiter.done():
        waiter.set_result(PENDING)


_QUEUED, _WRITTEN, _DONE, _ABANDONED = range(4)


class _Entry:
    """One session command's attempt in a node's auto-pipeline: its commands (``ASKING``
    first when asked), then its replies (errors as values) or the error that ended its
    connection, handed to the task that waits for them (``wait``)."""

    __slots__ = ("pipe", "wire", "packed", "state", "line", "replies", "error", "waiter")

    def __init__(self, pipe: _Pipe, wire: list[Sequence[Any]], packed: bytes) -> None:
        self.pipe, self.wire, self.packed = pipe, wire, packed
        self.state = _QUEUED
        self.line: _Line | None = None
        self.replies: list[Any] | None = None
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[Any] | None = None

    def wait(self, timeout: float | None) -> asyncio.Future[Any] | None:
        """What to await for the replies (None: they are here): it ends when they come,
        or in ``timeout`` seconds; then ``result()``."""
        if self.replies is not None or self.error is not None:
            return None
        waiter = self.waiter = asyncio.get_running_loop().create_future()
        if timeout is not None:
            self.pipe.watch(waiter, timeout)
        return waiter

    def result(self) -> Any:
        """The replies, ``PENDING`` when none came in time, or the connection's error raised."""
        self.waiter = None
        if self.error is not None:
            raise self.error
        return PENDING if self.replies is None else self.replies

    def settle(self, replies: list[Any] | None, error: BaseException | None) -> None:
        self.state, self.replies, self.error = _DONE, replies, error
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class _Line:
    """One connection of a node's auto-pipeline and the writes on it (each awaits the
    one before it: to send, then to read). ``live``: the commands written on it whose
    replies someone still waits for."""

    __slots__ = ("connection", "live", "writes", "sent", "read", "closed")

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.live = 0
        self.writes: set[asyncio.Task[None]] = set()
        self.sent: asyncio.Future[None] | None = None
        self.read: asyncio.Future[None] | None = None
        self.closed = False


class _Pipe:
    """One node's auto-pipeline (a connection key: address and readonly): the commands of
    every task queued for it, written when and as many as the session says
    (``pipeline_queued``: at once, alone, on an idle connection, else at the end of the
    event-loop turn; ``pipeline_take``, ``pipeline_done``), each write on one connection
    in one send; their replies read in order and handed to each command. A command given up once written keeps its place
    (its replies are read and dropped); the connection is closed only when no command
    written on it is waited for any more. A lost connection fails every command written
    on it and not answered: each then takes the session's path (``failed``)."""

    def __init__(self, session: shardroute.ClusterSession, address: str, readonly: bool, redis_client: Any) -> None:
        self.session, self.address, self.readonly, self.client = session, address, readonly, redis_client
        self.encoder = redis_client.connection_pool.get_encoder()
        self.queue: collections.deque[_Entry] = collections.deque()
        self.line: _Line | None = None
        self.closing = False
        # The waits of its commands by deadline (loop time), and one timer at the first.
        self.deadlines: list[tuple[float, int, asyncio.Future[Any]]] = []
        self.count = itertools.count()
        self.timer: asyncio.TimerHandle | None = None

    def watch(self, waiter: asyncio.Future[Any], timeout: float) -> None:
        """``waiter`` ends ``PENDING`` in ``timeout`` seconds unless it ended before: one
        timer for all the waits of this node's commands, at the first deadline."""
        loop = asyncio.get_running_loop()
        when, deadlines = loop.time() + timeout, self.deadlines
        while deadlines and deadlines[0][2].done():  # answered: no deadline any more
            heapq.heappop(deadlines)
        heapq.heappush(deadlines, (when, next(self.count), waiter))
        if self.timer is None or when < self.timer.when():
            if self.timer is not None:
                self.timer.cancel()
            self.timer = loop.call_at(when, self.expire)

    def expire(self) -> None:
        self.timer = None
        loop, deadlines = asyncio.get_running_loop(), self.deadlines
        now = loop.time()
        while deadlines and (deadlines[0][0] <= now or deadlines[0][2].done()):
            _expire(heapq.heappop(deadlines)[2])
        if deadlines:
            self.timer = loop.call_at(deadlines[0][0], self.expire)

    def add(self, wire: list[Sequence[Any]]) -> _Entry:
        """One command's attempt queued (an argument redis-py cannot encode fails here, its
        own, never the write it would have joined)."""
        if self.closing:
            raise redis.ConnectionError("the client is closed")
        entry = _Entry(self, wire, _pack(self.encoder, wire))
        self.queue.append(entry)
        # 2: an idle connection, this command written now, alone (one write, no flush);
        # 1: a flush at the end of the turn; 0: it waits (a flush or a write's end takes it).
        queued = self.session.pipeline_queued(self.address, self.readonly)
        if queued == 2:
            self.write(1)
        elif queued == 1:
            asyncio.get_running_loop().call_soon(self.flush)
        return entry

    def connect(self) -> Any:
        """A connection of the node's pool's kind, not in the pool. It has no read timeout
        of its own unless one was given (redis-py's default is 5 s): its commands' waits
        are the session's deadlines, and it is closed when none of them waits any more."""
        pool = self.client.connection_pool
        return pool.connection_class(**{"socket_timeout": None, **pool.connection_kwargs})

    def flush(self) -> None:
        take = self.session.pipeline_take
        while count := take(self.address, self.readonly):
            self.write(count)

    def write(self, count: int) -> None:
        """The first ``count`` queued commands, in one write (the session's count)."""
        if count == 0:
            return
        queue = self.queue
        count = min(count, len(queue))
        if count == 0:  # nothing queued after all (the session counted otherwise): no write
            self.session.pipeline_done(self.address, self.readonly)
            return
        entries = [queue.popleft() for _ in range(count)]
        line = self.line
        if line is None:
            line = self.line = _Line(self.connect())
        for entry in entries:
            entry.state, entry.line = _WRITTEN, line
        line.live += count
        loop = asyncio.get_running_loop()
        sent_before, read_before = line.sent, line.read
        sent, read = line.sent, line.read = loop.create_future(), loop.create_future()
        task = loop.create_task(self._write(line, entries, sent_before, read_before, sent))
        line.writes.add(task)
        task.add_done_callback(functools.partial(self._ended, line, entries, sent, read))

    async def _write(self, line: _Line, entries: list[_Entry], sent_before: asyncio.Future[None] | None,
                     read_before: asyncio.Future[None] | None, sent: asyncio.Future[None]) -> None:
        connection = line.connection
        try:
            if sent_before is not None and not sent_before.done():
                await sent_before
            if line.closed:
                raise redis.ConnectionError("the connection was lost")
            await connection.send_packed_command(b"".join([entry.packed for entry in entries]), check_health=False)
            sent.set_result(None)
            if read_before is not None and not read_before.done():
                await read_before
            parse = self.client.parse_response
            for entry in entries:
                replies: list[Any] = []
                for command in entry.wire:
                    if line.closed:
                        raise redis.ConnectionError("the connection was lost")
                    try:
                        replies.append(await parse(connection, command[0]))
                    except redis.ResponseError as err:
                        replies.append(err)
                if entry.state == _WRITTEN:
                    line.live -= 1
                    entry.settle(replies, None)
        except Exception as err:  # the connection is lost: so is every reply not read on it
            self._lost(line)
            lost = err if isinstance(err, FAILED) else redis.ConnectionError(f"the connection was lost: {err!r}")
            self._fail(entries, lost)
            with contextlib.suppress(Exception):
                await connection.disconnect(nowait=True)

    def _ended(self, line: _Line, entries: list[_Entry], sent: asyncio.Future[None], read: asyncio.Future[None],
               task: asyncio.Task[None]) -> None:
        """A write's task ended (also when cancelled before it began). It runs after the
        tasks its replies woke, which have queued their next commands: they go in the next
        write (``pipeline_done``)."""
        line.writes.discard(task)
        for step in (sent, read):
            if not step.done():
                step.set_result(None)
        self._fail(entries, redis.ConnectionError("the connection was closed"))
        self.write(self.session.pipeline_done(self.address, self.readonly))

    @staticmethod
    def _fail(entries: list[_Entry], err: BaseException) -> None:
        for entry in entries:
            if entry.state == _WRITTEN:
                assert entry.line is not None
                entry.line.live -= 1
                entry.settle(None, err)

    def _lost(self, line: _Line) -> None:
        line.closed = True
        if self.line is line:
            self.line = None

    async def abandon(self, entry: _Entry) -> None:
        """``entry`` is given up: out of the queue when not written (``pipeline_withdrawn``);
        once written, its replies are dropped, and its connection closed when no other
        command written on it is waited for."""
        if entry.state == _QUEUED:
            entry.state = _ABANDONED
            self.queue.remove(entry)
            self.session.pipeline_withdrawn(self.address, self.readonly, 1)
        elif entry.state == _WRITTEN:
            entry.state = _ABANDONED
            line = entry.line
            assert line is not None
            line.live -= 1
            if line.live == 0 and not line.closed:
                await self._close(line)

    async def _close(self, line: _Line) -> None:
        self._lost(line)
        for task in list(line.writes):
            task.cancel()
        with contextlib.suppress(Exception):
            await line.connection.disconnect(nowait=True)

    async def close(self) -> None:
        self.closing = True
        if self.timer is not None:
            self.timer.cancel()
        if self.queue:
            self.session.pipeline_withdrawn(self.address, self.readonly, len(self.queue))
        while self.queue:
            self.queue.popleft().settle(None, redis.ConnectionError("the client is closed"))
        if self.line is not None:
            line, self.line = self.line, None
            for task in list(line.writes):  # their commands fail as the connection is lost
                task.cancel()
            with contextlib.suppress(Exception):
                await line.connection.disconnect(nowait=True)


class AsyncClusterClient(_Client):
    """``ClusterClient`` on ``redis.asyncio``: the same session and the same commands,
    each a coroutine. One refresh runs at a time; a command waits for it only when the
    session says it must (no table yet, a table that may be wrong): a MOVED's refresh runs
    in the background, as ioredis' does. ``mget`` and the pipelines send to every node at
    once.

    With the session's ``auto_pipeline`` (``shardroute.session_defaults()``), the commands
    of every task share one connection per node: those issued while it is busy, or in
    one turn of the event loop, go as one write (as the session counts them), their
    replies matched back in order; each is still its own command of the session
    (redirects, stalls and lost connections handled one by one). Without it, each command
    takes a pooled connection of its own."""

    _module = redis.asyncio
    _readonly = _AsyncReadOnlyConnection
    _connection_class = _AsyncSafeConnection
    _retry = redis.asyncio.retry.Retry

    def __init__(self, startup_nodes: Iterable[str | tuple[str, int]], **kwargs: Any) -> None:
        super().__init__(startup_nodes, **kwargs)
        self._refreshing: asyncio.Future[bool] | None = None
        self._auto_pipeline = bool(self._session.config["auto_pipeline"])
        self._pipes: dict[tuple[str, bool], _Pipe] = {}

    def _pool(self, **kwargs: Any) -> Any:
        # One connection per task in flight, reused (as redis.asyncio's RedisCluster
        # does); unbounded, as RedisCluster's nodes are, unless `max_connections` is given
        # (then a burst past it fails over to the session).
        # No read timeout of redis-py's own (5 s in redis-py 8) unless one is given: each
        # attempt waits until the session's deadline, and is closed when given up.
        options = {"max_connections": 2**31, "socket_timeout": None, **self._connection_kwargs}
        return redis.asyncio.ConnectionPool(**kwargs, **options)

    def _pipe(self, address: str, readonly: bool) -> _Pipe:
        pipe = self._pipes.get((address, readonly))
        if pipe is None:
            made = _Pipe(self._session, address, readonly, self.connection(address, readonly=readonly))
            pipe = self._pipes[(address, readonly)] = made
        return pipe

    async def router(self) -> shardroute.Router:
        """The current router; reads the table first."""
        await self._run(self._table())
        return self._session.router  # type: ignore[return-value]

    async def refresh(self) -> bool:
        """Reads the slot table (as ``ClusterClient.refresh``); one at a time: a call while
        one runs (one a MOVED started in the background too) joins it."""
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
                kind = request[0]
                if kind == "read" and type(request[1]) is _Entry:  # the steady path, inline
                    entry: _Entry = request[1]
                    waiter = entry.wait(_left(request[2]))
                    if waiter is not None:
                        try:
                            await waiter
                        except asyncio.CancelledError:
                            entry.waiter = None
                            await entry.pipe.abandon(entry)
                            raise
                    reply = entry.result()
                elif kind == "queue" and self._auto_pipeline:
                    _, address, readonly, asking, commands, _ = request
                    reply = self._pipe(address, readonly).add([("ASKING",), *commands] if asking else list(commands))
                else:
                    reply = await self._perform(*request)
            except FAILED as err:
                error = err

    async def _perform(self, kind: str, *args: Any) -> Any:
        if kind in ("send", "queue"):  # a task: connecting, the handshake and the replies, awaited by "read"
            address, readonly, asking, commands, _ = args
            task = asyncio.ensure_future(_sent(self.connection(address, readonly=readonly), asking, commands))
            task.add_done_callback(_retrieved)
            return task
        if kind == "read":  # the replies, or PENDING at the deadline (the attempt runs on)
            attempt = args[0]
            try:
                done, _ = await asyncio.wait({attempt}, timeout=_left(args[1]))
            except asyncio.CancelledError:
                attempt.cancel()
                raise
            return attempt.result() if done else PENDING
        if kind == "abandon":
            return await self._abandon(args[0])
        if kind == "sleep":
            return await asyncio.sleep(_left(args[0]) or 0)
        if kind == "refresh":
            return await self.refresh()
        if kind == "refresh_begun":
            if self._refreshing is None or self._refreshing.done():
                self._refreshing = asyncio.ensure_future(self._run(self._refresh()))
                self._refreshing.add_done_callback(_retrieved)
                await _one_turn()  # it runs to its first request: the session knows it runs
            return True
        return await asyncio.gather(*(self._run(steps) for steps in args[0]))

    async def _abandon(self, attempt: Any) -> None:
        if isinstance(attempt, _Entry):
            await attempt.pipe.abandon(attempt)
        else:
            attempt.cancel()

    async def close(self) -> None:
        # A refresh that runs in the background (a MOVED's) ends first: it opens no
        # connection once they are closed.
        if self._refreshing is not None and not self._refreshing.done():
            await asyncio.wait({self._refreshing})
        pipes = list(self._pipes.values())
        self._pipes.clear()
        await asyncio.gather(*(pipe.close() for pipe in pipes), return_exceptions=True)
        pools = list(self._pools.values())
        self._pools.clear()
        await asyncio.gather(*(pool.aclose() for pool in pools), return_exceptions=True)

    async def __aenter__(self) -> AsyncClusterClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
