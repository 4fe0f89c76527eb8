"""What the sources of ``shardroute.etcd``, ``shardroute.http`` and ``shardroute.zookeeper``
share: the core's follower with the router it installed and the callbacks (``Following``);
reading an HTTP/1.1 answer bounded before it is buffered and within one deadline for the
whole request (blocking: ``SyncDriver`` and ``_read_body``; asyncio: ``AsyncDriver``,
``_read_head``, ``_body``, ``_chunks``); the TCP connections a ZooKeeper session asks for,
each read handed on as it comes (blocking: ``_Links``; asyncio: ``AsyncDriver._connect``);
for asyncio, waiting for an epoch and ending the task. (Not a public module.)

Every body is refused (``shardroute.LimitExceededError``) as soon as it is known to be
longer than its limit: a ``Content-Length`` or a chunk size past it before anything is
read, a body without either once the bytes read pass it, and the connection is closed
then. Status and header lines are bounded as ``http.client`` bounds them (``_MAXLINE``
bytes a line, ``_MAXHEADERS`` lines), in both shells."""

from __future__ import annotations

import asyncio
import base64
import collections
import errno
import http.client
import logging
import os
import selectors
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import shardroute

Waiting = TypeVar("Waiting", bound="AsyncWaiting")
Sync = TypeVar("Sync", bound="SyncFollowing")

#: The core's limit on a topology document (``limits::MAX_DOCUMENT_BYTES``, as the native
#: module exports it): the longest body an HTTP follower reads.
MAX_DOCUMENT_BYTES: int = shardroute.MAX_DOCUMENT_BYTES
#: How much of a body is read at a time.
_PIECE = 1 << 16
#: The standard library's bounds on a status or header line and on the header count.
_MAXLINE: int = http.client._MAXLINE  # type: ignore[attr-defined]
_MAXHEADERS: int = http.client._MAXHEADERS  # type: ignore[attr-defined]


def limit_exceeded(message: str) -> shardroute.LimitExceededError:
    """The package's ``limit_exceeded`` error with ``message``."""
    error = shardroute.LimitExceededError(message)
    error.message = message
    return error


def too_long(what: str, limit: int, length: int | None = None) -> shardroute.LimitExceededError:
    """A body (or line) past its limit: ``length`` when it was announced, else more."""
    size = f"{length} bytes" if length is not None else f"more than {limit} bytes"
    return limit_exceeded(f"{what}: {size}; the limit is {limit}")


def _read_body(response: http.client.HTTPResponse, limit: int, what: str) -> bytes:
    """The body of ``response``, refused (``LimitExceededError``) as soon as it is known
    to pass ``limit`` bytes: by its ``Content-Length`` before any is read, else once the
    bytes read (a body that runs to the end of the connection) or announced (what is
    left of a chunk) pass it. Read a piece at a time: a chunk size of ``ffffffffffff``
    allocates nothing."""
    if not response.chunked and response.length is not None and response.length > limit:
        raise too_long(what, limit, response.length)
    parts: list[bytes] = []
    total = 0
    while True:
        piece = response.read(min(_PIECE, limit + 1 - total))
        if not piece:
            return b"".join(parts)
        total += len(piece)
        # What is left of the chunk being read (http.client's `chunk_left`): a chunk size
        # past the limit is refused after the first piece, not the limit's worth.
        left = getattr(response, "chunk_left", None) if response.chunked else None
        if total > limit or (isinstance(left, int) and total + left > limit):
            raise too_long(what, limit)
        parts.append(piece)


class Following:
    """The core's follower of one source, and what a shell does around it: the router it
    installed last (read without a lock), the callbacks, the backoff after a lost source.
    ``_changed`` guards the native follower (the shells' threads and callers share it)."""

    def __init__(
        self,
        config: shardroute.FollowerConfig | None,
        on_change: Callable[[Any], None] | None,
        on_refused: Callable[[Any, shardroute.Offered], None] | None,
        on_error: Callable[[Exception], None] | None,
    ) -> None:
        self._follower = shardroute.TopologyFollower(config)
        self.router: shardroute.Router | None = None
        """The router installed last (None before the first document). A plain attribute,
        not a property: the reference is swapped whole when a document is installed, and a
        Router never changes, so `follower.router.node(key)` takes no lock and costs one
        attribute read more than a Router held by the caller. Read it; never assign it."""
        self._on_change = on_change
        self._on_refused = on_refused
        self._on_error = on_error
        self._changed = threading.Condition()

    def _took(self, offered: shardroute.Offered) -> None:
        """After an offer, under ``_changed``: keeps the router installed, wakes waiters."""
        if offered.kind == "installed":
            self.router = self._follower.router
            self._changed.notify_all()

    def _tell(self, offered: shardroute.Offered, changed: bool) -> None:
        """The callbacks of an offer (outside the lock)."""
        if changed:
            self._changed_hook()
            if self._on_change is not None:
                self._on_change(self)
        if offered.kind == "refused" and self._on_refused is not None:
            self._on_refused(self, offered)

    def _changed_hook(self) -> None:
        pass

    def _lost(self, err: Exception) -> float:
        """The source was lost: seconds to wait before trying again, as the core says."""
        if self._on_error is not None:
            self._on_error(err)
        with self._changed:
            now = time.monotonic_ns() // 1_000_000
            return max(0, self._follower.disconnected(now) - now) / 1000

    def _back(self) -> None:
        with self._changed:
            self._follower.connected()

    def _epoch_reached(self, epoch: int) -> bool:
        router = self.router
        return router is not None and router.epoch >= epoch


class AsyncWaiting:
    """A follower whose reads run in ``_task`` and set ``_event`` on each change."""

    _event: asyncio.Event
    _task: asyncio.Task[None] | None

    def _epoch_reached(self, epoch: int) -> bool:
        raise NotImplementedError

    async def wait_for_epoch(self, epoch: int, timeout: float) -> bool:
        """Waits until the router's epoch is at least ``epoch``: True, or False after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self._epoch_reached(epoch):
            self._event.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self._event.wait(), left)
            except asyncio.TimeoutError:
                return self._epoch_reached(epoch)
        return True

    async def close(self) -> None:
        """Ends the follower's task (idempotent)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def __aenter__(self: Waiting) -> Waiting:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


async def _line(reader: asyncio.StreamReader) -> bytes:
    """One line, at most ``_MAXLINE`` bytes (``ValueError`` past it, as ``http.client``
    raises ``LineTooLong``), whatever the stream's own limit."""
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as err:
        line = err.partial  # the end of the stream: what came
    except asyncio.LimitOverrunError as err:
        raise ValueError(f"a line longer than {_MAXLINE} bytes") from err
    if len(line) > _MAXLINE:
        raise ValueError(f"a line longer than {_MAXLINE} bytes")
    return line


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """An HTTP/1.1 response's status and headers (names lowercased); ``ValueError`` for
    one that is not, or has a line or more headers past ``http.client``'s bounds."""
    status_line = await _line(reader)
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise ValueError(f"not an HTTP response: {status_line[:100]!r}")
    headers: dict[str, str] = {}
    count = 0
    while (line := await _line(reader)) not in (b"\r\n", b"\n", b""):
        count += 1
        if count > _MAXHEADERS:
            raise ValueError(f"more than {_MAXHEADERS} header lines")
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


def _length(headers: dict[str, str]) -> int | None:
    """The ``Content-Length``, or None; ``ValueError`` when it is not a length."""
    length = headers.get("content-length")
    if length is None:
        return None
    if not length.strip().isdigit():
        raise ValueError(f"a Content-Length that is not a length: {length[:100]!r}")
    return int(length)


async def _chunks(reader: asyncio.StreamReader, headers: dict[str, str], limit: int, what: str) -> AsyncIterator[bytes]:
    """The body as it arrives: chunk by chunk (``Transfer-Encoding: chunked``, as etcd's
    gateway streams a watch), else in pieces. A ``Content-Length`` or a chunk size past
    ``limit`` is refused (``LimitExceededError``) before any of it is read; the caller
    bounds the total."""
    if headers.get("transfer-encoding", "").lower() != "chunked":
        length = _length(headers)
        if length is not None and length > limit:
            raise too_long(what, limit, length)
        if length is not None:
            yield await reader.readexactly(length)
            return
        while piece := await reader.read(_PIECE):
            yield piece
        return
    while True:
        line = (await _line(reader)).split(b";")[0].strip()
        if not line or any(c not in b"0123456789abcdefABCDEF" for c in line):
            raise ValueError(f"not a chunk size: {line[:100]!r}")
        size = int(line, 16) if len(line) <= 16 else None  # 16 hex digits: a u64
        if size is None or size > limit:
            raise too_long(f"{what}: a chunk", limit, size)
        if size == 0:
            await _line(reader)
            return
        data = await reader.readexactly(size)
        await _line(reader)
        yield data


async def _body(reader: asyncio.StreamReader, headers: dict[str, str], limit: int, what: str) -> bytes:
    """The whole body, refused (``LimitExceededError``) as soon as it is known to pass ``limit``."""
    parts: list[bytes] = []
    total = 0
    async for chunk in _chunks(reader, headers, limit, what):
        total += len(chunk)
        if total > limit:
            raise too_long(what, limit)
        parts.append(chunk)
    return b"".join(parts)


# -- source sessions (issue 35): one transport and one driver loop per flavour ---------
#
# A `shardroute.SourceSession` (the core's etcd, HTTP or ZooKeeper session) decides everything:
# which request to make, to which member, its deadline, what an answer means, when to
# try again. What follows only moves bytes as its actions say (`request`; for ZooKeeper
# `connect` and `send` on a TCP connection; `cancel`), keeps its one timer (`deadline`),
# and hands the application what it reported (`offered`, `lost`) or a call's end (`done`,
# `failed`). `shardroute.etcd`, `shardroute.http` and `shardroute.zookeeper` use it.

#: The codes a source reports that are not core errors (they raise the shell's error
#: class: `EtcdError`, `HttpError`); any other code is a core error's, raised as the
#: package's class of that code (`LimitExceededError`, `StaleEpochError`, ...).
SOURCE_CODES = frozenset({"unreachable", "http", "malformed", "conflict", "idle", "unauthenticated", "closed"})
_log = logging.getLogger("shardroute")


class SourceError(ConnectionError):
    """What a source session reported (``code``: one of ``SOURCE_CODES``; ``status``: the
    HTTP status of ``"http"``), the base of ``EtcdError`` and ``HttpError``."""

    def __init__(self, message: str, code: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


def now_ms() -> int:
    """The shells' clock: monotonic milliseconds."""
    return time.monotonic_ns() // 1_000_000


def tls_context(ca_file: str | None, cert_file: str | None, key_file: str | None) -> ssl.SSLContext | None:
    """The TLS context of `https://` requests: the system's CAs or `ca_file`, and the
    client certificate `cert_file` (its key in `key_file`, or in the same file) if given;
    None when none is given (the default context is made when a request needs it)."""
    if ca_file is None and cert_file is None:
        return None
    context = ssl.create_default_context(cafile=ca_file)
    if cert_file is not None:
        context.load_cert_chain(cert_file, key_file)
    return context


def source_error(error: dict[str, Any], kind: Callable[[str, str, int | None], Exception]) -> Exception:
    """The exception of a session's error (`{"code", "message", "status"}`): `kind` (the
    shell's class) for a source's code, else the package's class of the core's code."""
    code, message = str(error.get("code")), str(error.get("message"))
    if code in SOURCE_CODES:
        return kind(message, code, error.get("status"))
    for name in dir(shardroute):
        found = getattr(shardroute, name)
        if isinstance(found, type) and issubclass(found, shardroute.ShardrouteError) and getattr(found, "code", None) == code:
            raised: Exception = found(message)
            raised.message = message  # type: ignore[attr-defined]
            return raised
    return kind(message, code, error.get("status"))


class SessionOffered:
    """What became of a document a session read, as `shardroute.Offered` says it: `kind`
    ("installed", "unchanged" or "refused"), the `epoch` installed, the refusal's `code`
    and `message`."""

    def __init__(self, offered: dict[str, Any]) -> None:
        result = offered["result"]
        self.kind: str = next(iter(result))
        self.epoch: int | None = int(result["installed"]["epoch"]) if self.kind == "installed" else None
        self.code: str | None = result["refused"]["code"] if self.kind == "refused" else None
        self.message: str | None = result["refused"]["message"] if self.kind == "refused" else None
        self.changed: bool = bool(offered.get("changed"))
        self.revision: int = int(offered.get("revision") or 0)

    def error(self) -> shardroute.ShardrouteError | None:
        """The refusal as the package's error (None unless refused)."""
        if self.kind != "refused":
            return None
        error = source_error({"code": self.code, "message": self.message}, lambda m, c, s: shardroute.ShardrouteError(m))
        assert isinstance(error, shardroute.ShardrouteError)
        return error

    def __repr__(self) -> str:
        return f"SessionOffered({self.kind!r}, epoch={self.epoch}, code={self.code!r})"


def _only(action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An action's one key and its value."""
    ((name, value),) = action.items()
    return name, value


def _target(url: str) -> tuple[bool, str, int | None, str]:
    """(https, host, port, path with query) of a request's URL."""
    parts = urllib.parse.urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme == "https", parts.hostname or "", parts.port, path


class _Flight:
    """One blocking request in flight: its connection's socket (a duplicate, so that a TLS
    layer wrapped over it later is cut too), shut down by `cancel` from any thread."""

    def __init__(self, stream: bool) -> None:
        self.stream = stream
        self.cancelled = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()

    def own(self, sock: socket.socket) -> socket.socket:
        with self._lock:
            self._sock = sock.dup()
            if self.cancelled:
                self._cut()
        return sock

    def _cut(self) -> None:
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            self._cut()

    def end(self) -> None:
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None


def connect(url: str, context: ssl.SSLContext | None, timeout: float | None, flight: _Flight) -> tuple[http.client.HTTPConnection, str]:
    """A connection to `url`'s server (https: with `context`, else the default one) whose
    socket `flight` can cut, and the path to ask."""
    https, host, port, path = _target(url)
    kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
    extra: dict[str, Any] = {"context": context or ssl.create_default_context()} if https else {}
    connection = kind(host, port, timeout=timeout, **extra)
    create = connection._create_connection  # type: ignore[attr-defined]
    connection._create_connection = lambda *args: flight.own(create(*args))  # type: ignore[attr-defined]
    return connection, path


class _Link:
    """One TCP connection a session asked for: its socket (without blocking; None until
    the thread opens it), whether it is open, what the session sent that the socket has
    not taken yet."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port, self.where = host, port, f"{host}:{port}"
        self.sock: socket.socket | None = None
        self.open = False
        self.out = bytearray()


class _Links:
    """The TCP connections of a `SyncDriver` (its `connect`, `send` and `cancel` actions),
    moved by one thread over a selector: a connection made without blocking (`opened`, or
    `failed` "unreachable"), every read (at most `_PIECE` bytes) handed to the session as
    it comes (`chunk`; the peer's close: `failed` "closed"), what the session sent written
    as the socket takes it. Nothing is timed here: the session's timer ends a connection
    that takes too long (`cancel`). State is under the driver's `lock`; only the thread
    touches the selector and the sockets."""

    def __init__(self, driver: SyncDriver) -> None:
        self._driver = driver
        self._links: dict[int, _Link] = {}
        self._dropped: list[_Link] = []  # cancelled: closed by the thread
        self.stopping = False
        self._selector = selectors.DefaultSelector()
        self._woken, self._wake = socket.socketpair()
        self._wake.setblocking(False)
        self._selector.register(self._woken, selectors.EVENT_READ)
        threading.Thread(target=self._run, name="shardroute connections", daemon=True).start()

    def order(self, name: str, value: dict[str, Any]) -> None:
        """A `connect`, `send` or `cancel` action (under the driver's `lock`)."""
        link = self._links.get(value["id"])
        if name == "connect":
            self._links[value["id"]] = _Link(value["host"], int(value["port"]))
        elif name == "send" and link is not None:
            link.out += base64.b64decode(value["data_b64"])
        elif name == "cancel" and link is not None:
            self._dropped.append(self._links.pop(value["id"]))
        try:
            self._wake.send(b"\0")
        except OSError:
            pass  # woken already (its buffer is full)

    def stop(self) -> None:
        """Closes every connection (what the session sent last written if the socket takes
        it at once: ZooKeeper's closeSession) and ends the thread (under `lock`)."""
        self.stopping = True
        for link_id in list(self._links):
            self.order("cancel", {"id": link_id})
        self.order("stop", {"id": None})  # wakes the thread even with no connection

    def _run(self) -> None:
        while True:
            events = self._selector.select()
            with self._driver.lock:
                for key, mask in events:
                    if key.fileobj is self._woken:
                        self._woken.recv(_PIECE)
                    elif self._links.get(key.data) is not None:  # else cancelled
                        self._step(key.data, self._links[key.data], mask)
                while self._dropped:
                    self._close(self._dropped.pop(), flush=True)
                if self.stopping:
                    self._selector.close()
                    self._woken.close()
                    self._wake.close()
                    return
                for link_id, link in list(self._links.items()):
                    if link.sock is None:
                        self._open(link_id, link)
                    elif link.open:
                        wanted = selectors.EVENT_READ | (selectors.EVENT_WRITE if link.out else 0)
                        self._selector.modify(link.sock, wanted, link_id)

    def _open(self, link_id: int, link: _Link) -> None:
        try:
            family, kind, proto, _, address = socket.getaddrinfo(link.host, link.port, type=socket.SOCK_STREAM)[0]
            link.sock = socket.socket(family, kind, proto)
            link.sock.setblocking(False)
            code = link.sock.connect_ex(address)
            if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
                raise OSError(code, os.strerror(code))
            self._selector.register(link.sock, selectors.EVENT_WRITE, link_id)
        except OSError as err:
            self._fail(link_id, link, "unreachable", f"{link.where}: {err!r}")

    def _step(self, link_id: int, link: _Link, mask: int) -> None:
        """What the selector saw of an open or opening connection."""
        assert link.sock is not None
        try:
            if not link.open:  # connecting, and now writable: connected or refused
                code = link.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    raise OSError(code, os.strerror(code))
                link.open = True
                self._feed(link_id, "opened")
                return
            if mask & selectors.EVENT_READ:
                data = link.sock.recv(_PIECE)
                if not data:
                    return self._fail(link_id, link, "closed", f"{link.where} closed the connection")
                self._feed(link_id, "chunk", data)
            if mask & selectors.EVENT_WRITE and link.out and self._links.get(link_id) is link:
                del link.out[:link.sock.send(link.out)]
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as err:
            self._fail(link_id, link, "unreachable", f"{link.where}: {err!r}")

    def _feed(self, link_id: int, method: str, *args: Any) -> None:
        self._driver.dispatch(getattr(self._driver.session, method)(link_id, now_ms(), *args))

    def _fail(self, link_id: int, link: _Link, code: str, message: str) -> None:
        if self._links.get(link_id) is link:
            del self._links[link_id]
            self._close(link, flush=False)
            self._feed(link_id, "failed", code, message)

    def _close(self, link: _Link, flush: bool) -> None:
        sock, link.sock = link.sock, None
        if sock is None:
            return
        try:
            if flush and link.open and link.out:
                sock.send(link.out)  # best effort: what the socket takes now
        except OSError:
            pass
        try:
            self._selector.unregister(sock)
        except (KeyError, ValueError):
            pass  # never registered (its connect failed at once)
        sock.close()


def snapshot(session: shardroute.SourceSession, action: dict[str, Any]) -> tuple[Any, ...]:
    """What a note (an `offered` or `lost` action) carries to a follower's `_note`: the
    action, and for an offer the session's router and state then (a sync follower tells
    it later, when the session may have moved on)."""
    if "offered" in action:
        return action, session.router, session.state
    return action, None, None


class Noting:
    """What every session follower keeps of what its session reported, and tells the
    application: the router installed last, the last document offered, the callbacks
    (``on_change`` when ``changed``, ``on_refused`` on a refusal, ``on_error`` when the
    source is lost: `error_class`, the shell's, for a source's code)."""

    error_class: Callable[[str, str, int | None], Exception] = SourceError

    def __init__(
        self, on_change: Callable[[Any], None] | None, on_refused: Callable[[Any, Any], None] | None,
        on_error: Callable[[Exception], None] | None,
    ) -> None:
        self.router: shardroute.Router | None = None
        """The router installed last (None before the first document). A plain attribute,
        not a property: the reference is swapped whole when a document is installed, and a
        Router never changes, so `follower.router.node(key)` takes no lock. Read it; never
        assign it."""
        self._on_change, self._on_refused, self._on_error = on_change, on_refused, on_error
        self._changed = threading.Condition()
        self._offered: SessionOffered | None = None  # the last document the session read

    def _note(self, action: dict[str, Any], router: shardroute.Router | None, state: dict[str, Any] | None) -> None:
        """What the session reported, with the router and state it had then (`snapshot`):
        kept, then told to the application."""
        name, value = _only(action)
        if name == "lost":
            self._lose(source_error(value["error"], self.error_class))
            return
        offered = SessionOffered(value)
        with self._changed:
            self._offered = offered
            self.router = router
            self._keep(offered, state or {})
            self._changed.notify_all()
        self._changed_hook()
        if offered.changed:
            tell(self._on_change, (self,), self._on_error)
        if offered.kind == "refused":
            tell(self._on_refused, (self, offered), self._on_error)

    def _lose(self, error: Exception) -> None:
        tell(self._on_error, (error,), None)

    def _epoch_reached(self, epoch: int) -> bool:
        router = self.router
        return router is not None and router.epoch >= epoch

    def _keep(self, offered: SessionOffered, state: dict[str, Any]) -> None:
        """What else a follower keeps of an offer's state (under `_changed`)."""

    def _changed_hook(self) -> None:
        """After an offer (asyncio followers wake their waiters)."""


class SyncFollowing(Noting):
    """What the sync followers (`EtcdFollower`, `HttpFollower`) share over their
    `SyncDriver`: the notes told in order, one thread at a time (the follower's own
    thread, or a caller's `refresh` before it returns), `wait_for_epoch`, and `close`."""

    def _drive(self, driver: SyncDriver) -> None:
        self._driver = driver
        self._telling = threading.RLock()  # re-entrant: a callback may call refresh
        self._stopped = False
        self._thread: threading.Thread | None = None

    def _follow(self, name: str) -> None:
        """Starts the thread that tells the notes as they come."""
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _tell(self) -> None:
        """Tells the application every note queued, in order."""
        with self._telling:
            while True:
                with self._driver.lock:
                    if not self._driver.notes:
                        return
                    note = self._driver.notes.popleft()
                self._note(*note)

    def _refresh(self) -> dict[str, Any]:
        """The session's refresh call: the action that ended it, once every note before it
        (its own offer's) has been told."""
        ended = self._driver.call({"op": "refresh"})
        self._tell()
        return ended

    def _run(self) -> None:
        while True:
            self._driver.wait(lambda: bool(self._driver.notes) or self._stopped)
            if self._stopped:
                return
            self._tell()

    def wait_for_epoch(self, epoch: int, timeout: float) -> bool:
        """Waits until the router's epoch is at least ``epoch``: True, or False after
        ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self._epoch_reached(epoch), timeout)

    def close(self) -> None:
        """Stops following: the requests in flight are cut off (idempotent)."""
        with self._driver.lock:
            self._stopped = True
        self._driver.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self: Sync) -> Sync:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SyncDriver:
    """A session driven by threads: each request made on a thread of its own (its answer
    handed to the session under `lock`), the timer fired by whichever thread waits
    (`wait`), calls ended through `results`, and what the session reports for the
    application (`offered`, `lost`) queued in `notes` for one thread to tell."""

    def __init__(self, session: shardroute.SourceSession, context: ssl.SSLContext | None) -> None:
        self.session = session
        self.context = context
        self.lock = threading.Condition()
        self.notes: collections.deque[tuple[Any, ...]] = collections.deque()
        self._flights: dict[int, _Flight] = {}
        self._results: dict[int, dict[str, Any]] = {}
        self._links: _Links | None = None  # the TCP connections, once one is asked for

    def dispatch(self, actions: list[dict[str, Any]]) -> None:
        """Performs `actions` (under `lock`)."""
        for action in actions:
            name, value = _only(action)
            if name == "request":
                flight = self._flights[value["id"]] = _Flight(bool(value["stream"]))
                threading.Thread(target=self._perform, args=(value, flight), daemon=True).start()
            elif name in ("connect", "send"):
                if self._links is None or self._links.stopping:
                    self._links = _Links(self)
                self._links.order(name, value)
            elif name == "cancel":
                cancelled = self._flights.pop(value["id"], None)
                if cancelled is not None:
                    cancelled.cancel()
                elif self._links is not None:
                    self._links.order(name, value)
            elif name in ("done", "failed"):
                self._results[value["call"]] = action
            else:
                self.notes.append(snapshot(self.session, action))
        self.lock.notify_all()

    def feed(self, flight: _Flight, method: str, request_id: int, *args: Any, final: bool = True) -> None:
        """Hands what the transport saw of a request to the session (`method`: "response",
        "chunk" or "failed"), unless it was cancelled."""
        with self.lock:
            if flight.cancelled or self._flights.get(request_id) is not flight:
                return
            if final:
                del self._flights[request_id]
            self.dispatch(getattr(self.session, method)(request_id, now_ms(), *args))

    def wait(self, ready: Callable[[], bool]) -> None:
        """Until `ready()` (checked under `lock`), firing the session's timer when its
        deadline passes."""
        with self.lock:
            while not ready():
                deadline, now = self.session.deadline, now_ms()
                if deadline is not None and now >= deadline:
                    self.dispatch(self.session.timer(now))
                    continue
                self.lock.wait(None if deadline is None else (deadline - now) / 1000)

    def call(self, op: dict[str, Any]) -> dict[str, Any]:
        """One call: the `done` or `failed` action that ends it."""
        with self.lock:
            call, actions = self.session.call(op, now_ms())
            self.dispatch(actions)
        self.wait(lambda: call in self._results)
        with self.lock:
            ended: dict[str, Any] = self._results.pop(call)
            return ended

    def close(self) -> None:
        with self.lock:
            self.dispatch(self.session.close(now_ms()))
            if self._links is not None and not self._links.stopping:
                self._links.stop()

    def _perform(self, request: dict[str, Any], flight: _Flight) -> None:
        """Makes `request` (on its own thread): the answer, bounded by its `limit` before it
        is buffered, or a stream's head and then its pieces as they arrive."""
        request_id, limit = request["id"], request["limit"]
        deadline = request["deadline"]
        timeout = None if deadline is None else max(0.001, (deadline - now_ms()) / 1000)
        connection, path = connect(request["url"], self.context, timeout, flight)
        body = request["body"]
        try:
            connection.request(request["method"], path, None if body is None else body.encode(), request["headers"])
            response = connection.getresponse()
            headers = {name.lower(): value for name, value in response.getheaders()}
            if flight.stream and response.status == 200:
                if connection.sock is not None:
                    connection.sock.settimeout(None)  # the session's timer says when it is quiet
                self.feed(flight, "response", request_id, response.status, headers, b"", final=False)
                while piece := response.read1(min(_PIECE, limit)):
                    self.feed(flight, "chunk", request_id, piece, final=False)
                self.feed(flight, "failed", request_id, "closed", "the server ended the stream")
            else:
                data = _read_body(response, limit, request["url"])
                self.feed(flight, "response", request_id, response.status, headers, data)
        except shardroute.LimitExceededError as err:
            self.feed(flight, "failed", request_id, "limit_exceeded", str(err))
        except (OSError, http.client.HTTPException, ValueError) as err:
            self.feed(flight, "failed", request_id, "unreachable", repr(err))
        finally:
            connection.close()
            flight.end()


class AsyncDriver:
    """A session driven on an asyncio loop: each request a task (its answer handed to the
    session when it arrives), one timer handle at the session's deadline, calls ended
    through futures, and what the session reports for the application passed to
    `on_note` in order, once the actions of one step are performed."""

    def __init__(self, session: shardroute.SourceSession, context: ssl.SSLContext | None,
                 on_note: Callable[..., None] | None = None) -> None:
        self.session = session
        self.context = context
        self.on_note = on_note
        #: Called after each step's actions are performed (a follower waiting for its first read).
        self.on_step: Callable[[], object] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._pipes: dict[int, asyncio.StreamWriter] = {}  # the open TCP connections
        self._calls: dict[int, asyncio.Future[dict[str, Any]]] = {}

    def _bind(self) -> asyncio.AbstractEventLoop:
        """The running loop (a new one, say after `asyncio.run` again, drops the old timer)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._timer, self._tasks, self._pipes = loop, None, {}, {}
        return loop

    def dispatch(self, actions: list[dict[str, Any]]) -> None:
        loop = self._bind()
        notes = []
        for action in actions:
            name, value = _only(action)
            if name == "request":
                self._tasks[value["id"]] = loop.create_task(self._perform(value))
            elif name == "connect":
                self._tasks[value["id"]] = loop.create_task(self._connect(value))
            elif name == "send":
                pipe = self._pipes.get(value["id"])
                if pipe is not None:  # the session sends on open connections only
                    pipe.write(base64.b64decode(value["data_b64"]))
            elif name == "cancel":
                self._pipes.pop(value["id"], None)
                task = self._tasks.pop(value["id"], None)
                if task is not None:
                    task.cancel()
            elif name in ("done", "failed"):
                future = self._calls.pop(value["call"], None)
                if future is not None and not future.done():
                    future.set_result(action)
            else:
                notes.append(snapshot(self.session, action))
        if self._timer is not None:
            self._timer.cancel()
        deadline = self.session.deadline
        self._timer = None if deadline is None else loop.call_later(max(0, deadline - now_ms()) / 1000, self._fire)
        for note in notes:
            if self.on_note is not None:
                self.on_note(*note)
        if self.on_step is not None:
            self.on_step()

    def _fire(self) -> None:
        self._timer = None
        now = now_ms()
        deadline = self.session.deadline
        self.dispatch(self.session.timer(now) if deadline is not None and now >= deadline else [])

    def start(self) -> None:
        self._bind()
        self.dispatch(self.session.start(now_ms()))

    async def call(self, op: dict[str, Any]) -> dict[str, Any]:
        """One call: the `done` or `failed` action that ends it."""
        loop = self._bind()
        call, actions = self.session.call(op, now_ms())
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._calls[call] = future
        self.dispatch(actions)
        return await future

    async def close(self) -> None:
        self._bind()
        self.dispatch(self.session.close(now_ms()))
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        tasks, self._tasks = list(self._tasks.values()), {}
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _feed(self, request_id: int, method: str, *args: Any, final: bool = True) -> None:
        """Hands what a task saw to the session, unless its request or connection was
        cancelled (a read may end without the task being suspended, so not stopped yet)."""
        if self._tasks.get(request_id) is not asyncio.current_task():
            return
        if final:
            del self._tasks[request_id]
        self.dispatch(getattr(self.session, method)(request_id, now_ms(), *args))

    async def _connect(self, value: dict[str, Any]) -> None:
        """A TCP connection (its task): `opened`, then every read as it comes, at most
        `_PIECE` bytes (`chunk`), until the server closes it (`failed` "closed"), an error
        (`failed` "unreachable") or the session's `cancel` (what it sent last is written
        before the socket closes). The session's timer bounds the connecting."""
        link, where = value["id"], f"{value['host']}:{value['port']}"
        writer: asyncio.StreamWriter | None = None
        try:
            reader, writer = await asyncio.open_connection(value["host"], int(value["port"]))
            self._pipes[link] = writer
            self._feed(link, "opened", final=False)
            while piece := await reader.read(_PIECE):
                self._feed(link, "chunk", piece, final=False)
            self._feed(link, "failed", "closed", f"{where} closed the connection")
        except OSError as err:
            self._feed(link, "failed", "unreachable", f"{where}: {err!r}")
        finally:
            if writer is not None:
                if self._pipes.get(link) is writer:
                    del self._pipes[link]
                writer.close()

    async def _perform(self, request: dict[str, Any]) -> None:
        request_id, limit, url = request["id"], request["limit"], request["url"]
        https, host, port, path = _target(url)
        body = b"" if request["body"] is None else request["body"].encode()
        head = "".join(f"{name}: {value}\r\n" for name, value in request["headers"].items())
        writer: asyncio.StreamWriter | None = None
        try:
            context = (self.context or ssl.create_default_context()) if https else None
            # decisions: ok: a URL's default ports, not HTTP statuses
            reader, writer = await asyncio.open_connection(host, port or (443 if https else 80), ssl=context)
            writer.write(f"{request['method']} {path} HTTP/1.1\r\nhost: {urllib.parse.urlsplit(url).netloc}\r\n{head}"
                         f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode() + body)
            status, headers = await _read_head(reader)
            if request["stream"] and status == 200:
                self._feed(request_id, "response", status, headers, b"", final=False)
                async for piece in _chunks(reader, headers, limit, url):
                    self._feed(request_id, "chunk", piece, final=False)
                self._feed(request_id, "failed", "closed", "the server ended the stream")
            else:
                self._feed(request_id, "response", status, headers, await _body(reader, headers, limit, url))
        except shardroute.LimitExceededError as err:
            self._feed(request_id, "failed", "limit_exceeded", str(err))
        except (OSError, ValueError, asyncio.IncompleteReadError) as err:
            self._feed(request_id, "failed", "unreachable", repr(err))
        finally:
            if writer is not None:
                writer.close()


def tell(callback: Callable[..., None] | None, args: tuple[Any, ...], on_error: Callable[[Exception], None] | None) -> None:
    """Calls the application back; one that raises is reported to `on_error` and the
    follower goes on (the one callback policy of every language). An `on_error` that
    raises is logged (logger "shardroute")."""
    if callback is None:
        return
    try:
        callback(*args)
    except Exception as err:  # noqa: BLE001 - reported, then the follower goes on
        if on_error is not None and callback is not on_error:
            tell(on_error, (err,), None)
        else:
            _log.exception("a shardroute follower's callback raised")
