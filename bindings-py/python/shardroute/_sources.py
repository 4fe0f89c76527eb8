"""What the sources of ``shardroute.etcd`` and ``shardroute.http`` share: the core's
follower with the router it installed and the callbacks (``Following``); reading an
HTTP/1.1 answer bounded before it is buffered and within one deadline for the whole
request (blocking: ``_Deadline`` and ``_read_body``; asyncio: ``_read_head``, ``_body``,
``_chunks``); for asyncio, waiting for an epoch and ending the task. (Not a public
module.)

Every body is refused (``shardroute.LimitExceededError``) as soon as it is known to be
longer than its limit: a ``Content-Length`` or a chunk size past it before anything is
read, a body without either once the bytes read pass it, and the connection is closed
then. Status and header lines are bounded as ``http.client`` bounds them (``_MAXLINE``
bytes a line, ``_MAXHEADERS`` lines), in both shells."""

from __future__ import annotations

import asyncio
import http.client
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import shardroute

Waiting = TypeVar("Waiting", bound="AsyncWaiting")

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


class _Deadline:
    """One deadline for a whole blocking request: the connection's socket is shut down
    when it passes, so that a read blocked on a server that drips bytes (each within a
    per-read timeout) returns at once; ``passed`` then says why the request failed."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.passed = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def left(self) -> float:
        """Seconds left (at least a millisecond, as a socket timeout must be positive)."""
        return max(0.001, self.at - time.monotonic())

    def watch(self, sock: socket.socket) -> socket.socket:
        """Shuts ``sock``'s connection down when the deadline passes (until ``cancel``),
        through a duplicate of it: a TLS layer wrapped over ``sock`` afterwards (which
        detaches it) is cut off too, its handshake included. Returns ``sock``."""
        with self._lock:
            if self._sock is not None:
                self._sock.close()
            self._sock = sock.dup()
            if self._timer is None:
                self._timer = threading.Timer(max(0.0, self.at - time.monotonic()), self._fire)
                self._timer.daemon = True
                self._timer.start()
        return sock

    def connection(self, kind: type[http.client.HTTPConnection], host: str, port: int | None) -> http.client.HTTPConnection:
        """A ``kind`` connection to ``host``, watched from the moment its TCP connection is
        made (``http.client`` calls ``_create_connection`` for it)."""
        made = kind(host, port, timeout=self.left())
        create = made._create_connection  # type: ignore[attr-defined]
        made._create_connection = lambda *args: self.watch(create(*args))  # type: ignore[attr-defined]
        return made

    def _fire(self) -> None:
        with self._lock:
            self.passed = True
            if self._sock is not None:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)  # the blocked read returns
                except OSError:
                    pass

    def cancel(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            if self._sock is not None:
                self._sock.close()
                self._sock = None

    def __enter__(self) -> _Deadline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


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
