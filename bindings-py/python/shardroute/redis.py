"""Redis Cluster clients whose every decision is shardroute's core.

``ClusterClient`` (redis-py, sync) and ``AsyncClusterClient`` (``redis.asyncio``) keep one
connection pool per node and send each command straight to the node that owns its slot.
What to do when the cluster changes under them (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, a
failover, a lost connection) is decided by the core's sans-IO session
(``shardroute.ClusterSession``); the rules, the classification table and the defaults
(``shardroute.session_defaults()``) are the core's, the same in the Node client
(``shardroute/redis``), and checked by ``conformance/vectors/session_redis.json``.

The commands are written once, as generators that yield I/O requests (send, pipeline,
sleep, refresh); the two clients differ only in how they perform them: blocking, or
awaited (and the nodes of a batch at once). They connect lazily: the first command (or
``refresh()``, or ``router``) reads the slot table. A command that cannot be served
raises ``TooManyRedirects`` or ``ClusterUnavailable``; a MOVED or ASK whose text the core
cannot read is its ``InvalidArgumentError``; any other Redis error is raised as redis-py
raises it.

Each command is timed as a whole (``command_timeout_ms``), not per socket read: a node
that drips its reply a byte at a time is cut off when the command's time is up (and the
session hears ``timeout``), and so is a connection's handshake. A ``CLUSTER SHARDS``
reply with bytes that are not UTF-8 is refused, never read with U+FFFD in it.

Needs redis-py: ``pip install 'shardroute[redis]'``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from typing import Any, Literal

try:
    import redis
    import redis.asyncio
except ImportError:  # pragma: no cover - the message is the point
    raise ImportError("shardroute.redis needs redis-py: pip install 'shardroute[redis]'") from None

import shardroute
from redis.backoff import NoBackoff
from redis.exceptions import AskError, MovedError
from redis.retry import Retry

__all__ = ["AsyncClusterClient", "ClusterClient", "ClusterStats", "ClusterUnavailable", "TooManyRedirects"]

Key = str | bytes | int
#: What the command generators yield: ("send", action, commands, command) -> the last
#: reply, a ``_Pending`` attempt when none came within the session's ``stall_ms`` (sync),
#: or ``_Abandoned`` when the session gave the attempt up (asyncio: ``_Watch``);
#: ("await", pending, s) -> the same for ``s`` more seconds; ("abandon", pending);
#: ("pipeline", address, readonly, commands) -> replies or exceptions; ("sleep", s);
#: ("refresh",); ("all", generators) -> their results.
Steps = Generator[tuple[Any, ...], Any, Any]
FAILED = (redis.RedisError, OSError)


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


def _text(value: Any) -> Any:
    """A raw reply with bytes decoded (CLUSTER SHARDS comes back as bytes). Bytes that are
    not UTF-8 are never replaced: each becomes a lone surrogate (``surrogateescape``),
    which the session refuses as it refuses any text that is not Unicode
    (``InvalidArgumentError``: "a string with a lone surrogate is not text", as the Node
    client's session says)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, list):
        return [_text(item) for item in value]
    if isinstance(value, dict):
        return {_text(k): _text(v) for k, v in value.items()}
    return value


class ClusterStats:
    """What a client has seen since it was made (or since ``reset``): the session's
    counters (``shardroute.SessionStats``; ``errors`` is their sum with the commands given
    up, ``error_kinds`` the counts by outcome), read when asked."""

    def __init__(self, session: shardroute.ClusterSession) -> None:
        self._session = session

    def reset(self) -> None:
        self._session.reset_stats()

    def __getattr__(self, name: str) -> Any:
        stats: dict[str, Any] = dict(self._session.stats)
        stats["error_kinds"] = stats["errors"]
        stats["errors"] = sum(stats["errors"].values()) + stats["failed"]
        if name in stats:
            return stats[name]
        raise AttributeError(name)


class _SafeRedirect:
    """redis-py's MOVED and ASK errors, kept when their text is not ``<slot> <host:port>``
    (redis-py's own class raises ``ValueError`` while the reply is parsed): the session
    then reads the text, and a redirect it cannot read is refused with the core's words
    (``_unread_redirect``)."""

    def __init__(self, resp: str, status_code: str | None = None) -> None:
        try:
            super().__init__(resp, status_code=status_code)  # type: ignore[call-arg]
        except (ValueError, TypeError):
            redis.ResponseError.__init__(self, resp, status_code=status_code)  # type: ignore[arg-type]
            self.args = (resp,)
            self.message = resp


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


def _unread_redirect(error: BaseException) -> None:
    """A MOVED or ASK the session could not read as a redirect: the core's refusal of its
    text (``InvalidArgumentError``), never redis-py's error or a ``ValueError``."""
    if isinstance(error, AskError):
        kind = "MOVED" if isinstance(error, MovedError) else "ASK"
        shardroute.parse_redirect(f"{kind} {error.args[0] if error.args else ''}")


class _TimedSocket(socket.socket):
    """A socket whose reads stop at ``deadline`` (monotonic seconds; None: no deadline),
    however the per-read timeout is set: each read waits at most the time left, and one
    after the deadline raises ``socket.timeout`` at once. So a node that drips its reply
    a byte at a time cannot make one command last longer than its timeout."""

    deadline: float | None = None

    def _left(self) -> float | None:
        timeout = self.gettimeout()
        if self.deadline is None:
            return timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("the command's deadline passed")
        return left if timeout is None else min(timeout, left)

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        timeout = self.gettimeout()
        self.settimeout(self._left())
        try:
            return super().recv(bufsize, flags)
        finally:
            self.settimeout(timeout)

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        timeout = self.gettimeout()
        self.settimeout(self._left())
        try:
            return super().recv_into(buffer, nbytes, flags)
        finally:
            self.settimeout(timeout)


class _TimedConnection(redis.Connection):
    """redis-py's connection with one deadline per request, not per socket read: each
    command sent (or pipeline) must be answered within ``socket_timeout`` as a whole, and
    the handshake (connect, then ``HELLO``, ``READONLY``, ...) within
    ``socket_connect_timeout`` plus ``socket_timeout``. A host the resolver cannot encode
    (a 255-byte MOVED target) is a connection error, as an unknown host is."""

    _handshaking = False

    def set_parser(self, parser_class: Any) -> None:
        super().set_parser(_safe_parser(parser_class))

    def _connect(self) -> Any:
        try:
            sock = super()._connect()
        except UnicodeError as err:
            raise socket.gaierror(socket.EAI_NONAME, f"{self.host!r} cannot be resolved: {err}") from err
        timeout = sock.gettimeout()
        timed = _TimedSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())
        timed.settimeout(timeout)
        if self.socket_timeout:
            timed.deadline = time.monotonic() + self.socket_timeout
        return timed

    def connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        self._handshaking = True  # its commands share the deadline _connect set
        try:
            super().connect_check_health(*args, **kwargs)
        finally:
            self._handshaking = False

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if not self._sock:
            self.connect_check_health(check_health=False)
        sock = self._sock
        if not self._handshaking and isinstance(sock, _TimedSocket):
            sock.deadline = time.monotonic() + self.socket_timeout if self.socket_timeout else None
        super().send_packed_command(command, check_health)


class _ReadOnlyConnection(_TimedConnection):
    """A connection that sends ``READONLY`` after its handshake (replica reads)."""

    def on_connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        super().on_connect_check_health(*args, **kwargs)
        self.send_command("READONLY")
        self.read_response()


class _AsyncSafeConnection(redis.asyncio.Connection):
    """redis.asyncio's connection with MOVED and ASK read by ``_MovedReply`` and
    ``_AskReply`` (its deadlines are the client's: ``asyncio.wait_for`` per request)."""

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

    def __init__(self, startup_nodes: Iterable[str | tuple[str, int]], *, read_from_replicas: bool = False,
                 config: shardroute.SessionConfig | None = None, **connection_kwargs: Any) -> None:
        seeds = [node if isinstance(node, str) else f"{node[0]}:{node[1]}" for node in startup_nodes]
        settings: dict[str, Any] = {**(config or {}), **({"read_from_replicas": True} if read_from_replicas else {})}
        self._session = shardroute.ClusterSession(seeds, settings)  # type: ignore[arg-type]
        timeouts = self._session.config
        # No retries inside redis-py: every failure reaches the session.
        self._connection_kwargs = {
            "socket_connect_timeout": timeouts["connect_timeout_ms"] / 1000,
            "socket_timeout": timeouts["command_timeout_ms"] / 1000,
            "retry": Retry(NoBackoff(), 0),
            **connection_kwargs,
        }
        self._stall_s = timeouts["stall_ms"] / 1000
        self._timeout_s = timeouts["command_timeout_ms"] / 1000
        self._pools: dict[tuple[str, bool], Any] = {}
        self._addresses: tuple[int | None, dict[str, str]] = (None, {})
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
        router = self._session.router
        if router is not None and self._addresses[0] != router.epoch:
            nodes = json.loads(router.to_json())["nodes"]
            self._addresses = (router.epoch, {entry["id"]: entry.get("address", entry["id"]) for entry in nodes})
        return self._addresses[1][node]

    def _stalled(self, command: shardroute.Command, pending: Any) -> Steps:
        """An attempt with no reply for ``stall_ms``: as the session says, refresh, keep
        waiting, or abandon it (its node lost the slot: the next action sends elsewhere).
        Returns ``(reply, None)`` (the reply, or still pending) or ``(None, next action)``."""
        session = self._session
        while True:
            step = session.stalled(command, _now_ms())
            if step.kind == "refresh":
                yield ("refresh",)
                continue
            if step.kind == "wait":
                return (yield ("await", pending, (step.delay_ms or 0) / 1000)), None
            yield ("abandon", pending)
            return None, step

    def _failed(self, command: shardroute.Command, err: BaseException) -> shardroute.Action:
        names = [cls.__name__ for cls in type(err).__mro__]
        return self._session.failed(command, str(err), names, _now_ms())

    # -- the steps -----------------------------------------------------------------

    def _command(self, keys: Sequence[Key], access: Literal["read", "write"], commands: Sequence[Sequence[Any]],
                 error: BaseException | None = None) -> Steps:
        """One command where the session says, until it is done. ``commands`` run on one
        connection (the last reply is the result); ``error``: what it already got."""
        session = self._session
        command = session.command(keys, access, _now_ms())
        action = self._failed(command, error) if error is not None else session.poll(command, _now_ms())
        while True:
            if action.kind == "send":
                after_stall = None
                try:
                    reply = yield ("send", action, commands, command)
                    if isinstance(reply, _Abandoned):
                        after_stall = reply.next
                    while isinstance(reply, _Pending) and after_stall is None:
                        reply, after_stall = yield from self._stalled(command, reply)
                except FAILED as err:
                    error, action = err, self._failed(command, err)
                    continue
                if after_stall is not None:
                    action = after_stall
                    continue
                session.succeeded(command, _now_ms())
                return reply
            if action.kind == "wait":
                yield ("sleep", (action.delay_ms or 0) / 1000)
            elif action.kind == "refresh":
                yield ("refresh",)
            elif action.kind == "done" and error is not None:
                _unread_redirect(error)
                raise error
            else:
                failure = _FAILURES.get(action.code, shardroute.ShardrouteError)(action.message)
                failure.code, failure.message = action.code, action.message  # type: ignore[attr-defined]
                raise failure from error
            action = session.poll(command, _now_ms())

    def _table(self) -> Steps:
        """The first table, under the session's rules (refresh, backoff, budget)."""
        if self._session.router is None:
            yield from self._command(["table"], "read", [])

    def _batch(self, keys: list[Key], access: Literal["read", "write"],
               command_for: Callable[[list[int]], tuple[Any, ...]], per_slot: bool) -> Steps:
        """One pipeline per node: ``command_for(indices)`` for each key's index or, when
        ``per_slot``, for the indices of each slot (an MGET); the results in key order. An
        entry that fails takes the command's path from the error it got."""
        yield from self._table()
        results: list[Any] = [None] * len(keys)

        def node(address: str, readonly: bool, slots: list[tuple[int, list[int]]]) -> Steps:
            groups = [indices for _, indices in slots] if per_slot else [[i] for _, indices in slots for i in indices]
            commands = [command_for(group) for group in groups]
            replies = yield ("pipeline", address, readonly, commands)
            for group, command, reply in zip(groups, commands, replies):
                if isinstance(reply, BaseException):
                    reply = yield from self._command([keys[i] for i in group], access, [command], reply)
                for i, value in zip(group, reply if per_slot else [reply]):
                    results[i] = value

        yield ("all", [node(*entry) for entry in self._session.plan(keys, access)])
        return results

    def _refresh(self) -> Steps:
        session = self._session
        for address in session.refresh_candidates():
            try:
                reply = yield ("raw", address, ("CLUSTER", "SHARDS"))
                session.refreshed(_text(reply), _now_ms())
                return True
            except (*FAILED, shardroute.ShardrouteError):
                continue
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

    def set_and_wait(self, key: Key, value: Any, replicas: int = 1, timeout_ms: int = 500) -> Any:
        """``SET`` then ``WAIT replicas timeout_ms`` on one connection: how many replicas
        acknowledged the write."""
        return self._run(self._command([key], "write", [("SET", key, value), ("WAIT", replicas, timeout_ms)]))

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


class _Pending:
    """An attempt sent whose reply has not come yet (the session was told: ``stalled``)."""


class _SyncPending(_Pending):
    """Commands sent on one connection taken from the node's pool (``ASKING`` first when
    asked), their replies read one by one, each waited for at most the time given, so
    that the session can be asked while the node is silent. Every reply is read, errors
    included, and the first error is raised (as a pipeline would); the connection goes
    back to its pool once all are read, or is closed when the attempt is abandoned."""

    def __init__(self, client: Any, asking: bool, commands: Sequence[Sequence[Any]], timeout_s: float) -> None:
        self.client = client
        self.pool = client.connection_pool
        self.wire: list[Sequence[Any]] = [("ASKING",), *commands] if asking else list(commands)
        self.replies: list[Any] = []
        self.deadline = time.monotonic() + timeout_s
        self.connection = self.pool.get_connection()
        try:
            self.connection.send_packed_command(self.connection.pack_commands(self.wire))
        except BaseException:
            self.abandon()
            raise

    def read(self, wait_s: float) -> Any:
        """The last reply, or ``self`` when the next reply has not come within ``wait_s``."""
        connection = self.connection
        try:
            while len(self.replies) < len(self.wire):
                left = self.deadline - time.monotonic()
                if not connection.can_read(timeout=max(0.0, min(wait_s, left))):
                    if left <= wait_s:
                        raise redis.TimeoutError(f"Timeout reading from {connection.host}:{connection.port}")
                    return self
                name = self.wire[len(self.replies)][0]
                try:
                    self.replies.append(self.client.parse_response(connection, name))
                except redis.ResponseError as err:
                    self.replies.append(err)
        except BaseException:
            self.abandon()
            raise
        self.pool.release(connection)
        for reply in self.replies:
            if isinstance(reply, redis.ResponseError):
                raise reply
        return self.replies[-1]

    def abandon(self) -> None:
        """Closes the connection (a late reply must not be read as another's) and gives it
        back to the pool, which reconnects it when next used."""
        self.connection.disconnect()
        self.pool.release(self.connection)


class _Abandoned:
    """The session gave up an attempt on its silent node: its next action."""

    def __init__(self, next_action: shardroute.Action) -> None:
        self.next = next_action


class _Watch(_Pending):
    """An asyncio attempt, awaited in the command's own task, with a timer beside it. When
    the timer fires (``stall_ms`` without a reply), ``check`` runs the session's stall
    steps in a task of its own (``_stalled``: refresh, keep waiting, or abandon); if the
    session abandons the attempt, the command's task is cancelled out of its wait and
    ``wait`` returns ``_Abandoned``; past the command timeout, ``wait`` raises
    ``redis.TimeoutError``. The steady path costs one timer, no task."""

    def __init__(self, client: AsyncClusterClient, command: shardroute.Command, address: str) -> None:
        self.client = client
        self.command = command
        self.address = address
        self.task = asyncio.current_task()
        self.deadline = time.monotonic() + client._timeout_s
        self.done = False
        self.timed_out = False
        self.next: shardroute.Action | None = None
        self.checking: asyncio.Task[None] | None = None

    async def wait(self, sent: Awaitable[Any]) -> Any:
        loop = asyncio.get_running_loop()
        timer = loop.call_later(self.client._stall_s, self._fire)
        try:
            return await sent
        except asyncio.CancelledError:
            if (self.next is None and not self.timed_out) or self.task is None:
                raise
            uncancel = getattr(self.task, "uncancel", None)  # Python 3.11+: this cancel is consumed
            if uncancel is not None:
                uncancel()
            if self.next is None:
                raise redis.TimeoutError(f"Timeout reading from {self.address}") from None
            return _Abandoned(self.next)
        finally:
            self.done = True
            timer.cancel()

    def _fire(self) -> None:
        if not self.done:
            self.checking = asyncio.get_running_loop().create_task(self.check())

    async def check(self) -> None:
        try:
            while not self.done:
                if time.monotonic() >= self.deadline:
                    self.timed_out = True  # the command timeout: the session hears `timeout`
                    if self.task is not None:
                        self.task.cancel()
                    return
                _, step = await self.client._run(self.client._stalled(self.command, self))
                if step is not None:
                    if not self.done and self.task is not None:
                        self.next = step
                        self.task.cancel()
                    return
        except (*FAILED, shardroute.ShardrouteError):
            return  # the attempt waits on for its command timeout, as without the check

    async def read(self, wait_s: float) -> Any:
        """``("await", ...)``: sleeps while the attempt runs on (not past the command
        timeout); ``self`` while it still does."""
        await asyncio.sleep(max(0.0, min(wait_s, self.deadline - time.monotonic())))
        return None if self.done else self


async def _last(replies: Any) -> Any:
    return (await replies)[-1]


def _queue(pipe: Any, asking: bool, commands: Sequence[Sequence[Any]]) -> Any:
    if asking:
        pipe.execute_command("ASKING")
    for command in commands:
        pipe.execute_command(*command)
    return pipe


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
                reply = self._perform(request)
            except FAILED as err:
                error = err

    def _perform(self, request: tuple[Any, ...]) -> Any:
        kind = request[0]
        if kind == "send":
            action, commands = request[1:3]
            if not commands:
                return None
            client = self.connection(action.address, readonly=action.readonly)
            if not self._stall_s:
                if not action.asking and len(commands) == 1:
                    return client.execute_command(*commands[0])
                return _queue(client.pipeline(transaction=False), action.asking, commands).execute()[-1]
            return _SyncPending(client, action.asking, commands, self._timeout_s).read(self._stall_s)
        if kind == "await":
            return request[1].read(request[2])
        if kind == "abandon":
            return request[1].abandon()
        if kind == "pipeline":
            _, address, readonly, commands = request
            try:
                return _queue(self.connection(address, readonly=readonly).pipeline(transaction=False), False, commands).execute(raise_on_error=False)
            except FAILED as err:
                return [err] * len(commands)
        if kind == "raw":
            pool = self.connection(request[1]).connection_pool
            connection = pool.get_connection()
            try:
                connection.send_command(*request[2])
                return connection.read_response()
            finally:
                pool.release(connection)
        if kind == "sleep":
            return time.sleep(request[1])
        if kind == "refresh":
            return self.refresh()
        return [self._run(steps) for steps in request[1]]

    def close(self) -> None:
        for client in self._pools.values():
            client.close()
        self._pools.clear()

    def __enter__(self) -> ClusterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClusterClient(_Client):
    """``ClusterClient`` on ``redis.asyncio``: the same session and the same commands,
    each a coroutine. One refresh runs at a time (the others wait for it), and ``mget``
    and the pipelines send to every node at once."""

    _module = redis.asyncio
    _readonly = _AsyncReadOnlyConnection
    _connection_class = _AsyncSafeConnection

    def __init__(self, startup_nodes: Iterable[str | tuple[str, int]], **kwargs: Any) -> None:
        super().__init__(startup_nodes, **kwargs)
        self._refreshing: asyncio.Future[bool] | None = None
        # The command timeout is kept here, per request (one timer: the stall's, see
        # `_Watch`), not by redis.asyncio, whose socket timeout costs two timers a command.
        self._connection_kwargs["socket_timeout"] = None

    async def _timed(self, awaitable: Awaitable[Any], address: str) -> Any:
        """``awaitable`` within the command timeout, else ``redis.TimeoutError``."""
        try:
            return await asyncio.wait_for(awaitable, self._timeout_s)
        except asyncio.TimeoutError as err:
            raise redis.TimeoutError(f"Timeout reading from {address}") from err

    def _pool(self, **kwargs: Any) -> Any:
        # One connection per task in flight, reused (as redis.asyncio's RedisCluster
        # does): a BlockingConnectionPool's condition and timeout cost a third of the
        # steady path (cProfile, 50 tasks). Unbounded, as RedisCluster's nodes are, unless
        # `max_connections` is given (then a burst past it fails over to the session).
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
                reply = await self._perform(request)
            except FAILED as err:
                error = err

    async def _perform(self, request: tuple[Any, ...]) -> Any:
        kind = request[0]
        if kind == "send":
            action, commands, command = request[1:]
            if not commands:
                return None
            client = self.connection(action.address, readonly=action.readonly)
            if not action.asking and len(commands) == 1:
                sent = client.execute_command(*commands[0])
            else:
                sent = _last(_queue(client.pipeline(transaction=False), action.asking, commands).execute())
            if not self._stall_s:
                return await self._timed(sent, action.address)
            return await _Watch(self, command, action.address).wait(sent)
        if kind == "await":
            return await request[1].read(request[2])
        if kind == "abandon":
            return None  # _Watch.check cancels the attempt once the session says
        if kind == "pipeline":
            _, address, readonly, commands = request
            try:
                pipe = _queue(self.connection(address, readonly=readonly).pipeline(transaction=False), False, commands)
                return await self._timed(pipe.execute(raise_on_error=False), address)
            except FAILED as err:
                return [err] * len(commands)
        if kind == "raw":
            return await self._timed(self._raw(request[1], request[2]), request[1])
        if kind == "sleep":
            return await asyncio.sleep(request[1])
        if kind == "refresh":
            return await self.refresh()
        return await asyncio.gather(*(self._run(steps) for steps in request[1]))

    async def _raw(self, address: str, command: Sequence[Any]) -> Any:
        pool = self.connection(address).connection_pool
        connection = await pool.get_connection()
        try:
            await connection.send_command(*command)
            return await connection.read_response()
        except BaseException:
            await connection.disconnect()  # cut off mid-reply: not reusable
            raise
        finally:
            await pool.release(connection)

    async def close(self) -> None:
        pools = list(self._pools.values())
        self._pools.clear()
        await asyncio.gather(*(pool.aclose() for pool in pools), return_exceptions=True)

    async def __aenter__(self) -> AsyncClusterClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
