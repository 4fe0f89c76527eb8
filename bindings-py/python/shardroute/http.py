"""Follow a topology served over HTTP, with the core's follower deciding.

Any URL that answers ``GET`` with the document and an ``ETag`` serves: a static file
behind a CDN, object storage, a key-value store's HTTP face. ``HttpFollower`` asks again
with ``If-None-Match`` (``304 Not Modified``: nothing to read) and ``Prefer: wait=N``
(RFC 7240): a server that supports it holds the request until the document changes or
``N`` seconds pass (a long poll); one that does not answers at once, and the follower
asks again after ``interval`` seconds. A body served as ``application/octet-stream`` is a
binary dictionary (``encode_dictionary``); anything else is a JSON document.

Every body read is offered to the core's ``shardroute.TopologyFollower`` with a revision
that counts the bodies read (HTTP has no revision of its own): it installs a newer epoch,
refuses an invalid document or an older epoch (counted by code in ``stats``) and keeps the
last good router, and says how long to wait before asking again after the server is
lost. The shell only asks, sleeps and calls back. Standard library only.

    from shardroute.http import HttpFollower

    with HttpFollower("https://cdn.example.com/topology.json") as follower:
        node = follower.router.node("user:42")

``AsyncHttpFollower`` is the asyncio twin (``await AsyncHttpFollower.start(url)``).

Every request is bounded: ``timeout`` is for the whole request (plus the wait of a long
poll), not for each read, so a server that drips bytes is cut off when it passes
(``HttpError``, code ``"unreachable"``); a body longer than the core's document limit
(64 MiB, announced or as it is read, chunked or not) is refused with
``shardroute.LimitExceededError`` (code ``limit_exceeded``) before it is read whole, and
its connection closed. Redirects are not followed (a ``3xx`` is an ``HttpError``).

A body served as ``application/octet-stream`` is a binary dictionary; any other body is
offered as plain bytes (``TopologyFollower.offer_bytes``): the core tells a dictionary by
its magic and refuses text that is not UTF-8 (``invalid_topology``, counted, ``on_refused``
called, the router kept), never decoding it with replacements.
"""

from __future__ import annotations

import asyncio
import http.client
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import shardroute
from shardroute._sources import MAX_DOCUMENT_BYTES, AsyncWaiting, Following, _body, _Deadline, _read_body, _read_head

__all__ = ["AsyncHttpFollower", "HttpError", "HttpFollower", "HttpFollowerStats"]

#: How long a long poll asks the server to hold a request (seconds).
WAIT_S = 30
#: How long to wait between two requests a server answered at once (seconds).
INTERVAL_S = 1.0


class HttpError(ConnectionError):
    """The server could not be reached (``code`` ``"unreachable"``) or answered with an
    error status (``"http"``, with ``status``)."""

    def __init__(self, message: str, code: str, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class HttpFollowerStats(shardroute.FollowerStats):
    """The core follower's counters, and the shell's: requests, and 304 answers."""

    requests: int
    not_modified: int


class _Polling(Following):
    """What both followers share: the core's follower, the validator (ETag), the
    counters, and what to do with one answer (``_answer``)."""

    def __init__(
        self, url: str, config: shardroute.FollowerConfig | None, interval: float, wait: int,
        timeout: float, on_change: Callable[[Any], None] | None,
        on_refused: Callable[[Any, shardroute.Offered], None] | None, on_error: Callable[[Exception], None] | None,
    ) -> None:
        self.url = url
        self.interval = interval
        self.wait = wait
        self.timeout = timeout
        super().__init__(config, on_change, on_refused, on_error)
        self._etag: str | None = None
        self._bodies = 0  # the revision offered: bodies read so far
        self._requests = 0
        self._not_modified = 0

    @property
    def etag(self) -> str | None:
        """The validator of the last body read."""
        with self._changed:
            return self._etag

    @property
    def stats(self) -> HttpFollowerStats:
        with self._changed:
            return {**self._follower.stats, "requests": self._requests, "not_modified": self._not_modified}

    def _headers(self, long_poll: bool) -> dict[str, str]:
        headers = {"Accept": "application/json, application/octet-stream"}
        with self._changed:
            if self._etag is not None:
                headers["If-None-Match"] = self._etag
        if long_poll and self._etag is not None:
            headers["Prefer"] = f"wait={self.wait}"
        return headers

    def _answer(self, status: int, headers: Any, body: bytes) -> shardroute.Offered | None:
        """One answer: None for 304, else what the core's follower made of the body."""
        with self._changed:
            self._requests += 1
            if status == 304:
                self._not_modified += 1
                return None
            if status != 200:
                raise HttpError(f"GET {self.url}: HTTP {status}", "http", status)
            self._etag = headers.get("ETag")
            self._bodies += 1
            now = time.monotonic_ns() // 1_000_000
            binary = (headers.get("Content-Type") or "").split(";")[0].strip() == "application/octet-stream"
            if binary:
                offered = self._follower.offer_dictionary(body, self._bodies, now)
            else:
                # The core tells a dictionary by its magic and refuses text that is not UTF-8.
                offered = self._follower.offer_bytes(body, self._bodies, now)
            self._took(offered)
        self._tell(offered, offered.kind == "installed")
        return offered

    def _next_delay(self, answered: shardroute.Offered | None, took: float) -> float:
        """After a body that installed a router (a change), or a request the server held (a
        long poll), ask again at once; otherwise (a ``304`` or a body answered at once: a
        server without long polls, or one that ignores ``If-None-Match``) in ``interval``,
        never in a tight loop. ``wait`` 0 asks for no long poll."""
        changed = answered is not None and answered.kind == "installed"
        held = self.wait > 0 and took >= self.wait / 2
        return 0.0 if changed or held else max(0.0, self.interval - took)


class HttpFollower(_Polling):
    """Follows the document at ``url`` on a daemon thread (see the module docs). The
    constructor asks once (``HttpError`` when the server cannot be reached or answers an
    error). ``on_change(follower)`` runs after a new router is installed,
    ``on_refused(follower, offered)`` after a body is refused (the router held is kept),
    ``on_error(error)`` for each failed request; none may raise."""

    def __init__(
        self, url: str, *, config: shardroute.FollowerConfig | None = None, interval: float = INTERVAL_S,
        wait: int = WAIT_S, timeout: float = 10.0, on_change: Callable[[HttpFollower], None] | None = None,
        on_refused: Callable[[HttpFollower, shardroute.Offered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        super().__init__(url, config, interval, wait, timeout, on_change, on_refused, on_error)
        self._stop = threading.Event()
        self.refresh()
        self._thread = threading.Thread(target=self._run, name=f"http follower {url}", daemon=True)
        self._thread.start()

    def _get(self, long_poll: bool) -> shardroute.Offered | None:
        """One GET within one deadline for the whole request (``timeout``, plus the wait
        of a long poll), not per read: a server that drips bytes is cut off when it
        passes. The body is bounded before it is buffered (``_read_body``)."""
        parsed = urllib.parse.urlsplit(self.url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise HttpError(f"GET {self.url}: expected an http:// or https:// URL", "unreachable")
        target = (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")
        timeout = self.timeout + (self.wait if long_poll else 0)
        kind = http.client.HTTPSConnection if parsed.scheme == "https" else http.client.HTTPConnection
        with _Deadline(timeout) as deadline:
            connection = deadline.connection(kind, parsed.hostname, parsed.port)
            try:
                connection.request("GET", target, headers=self._headers(long_poll))
                response = connection.getresponse()
                status, headers = response.status, response.headers
                body = _read_body(response, MAX_DOCUMENT_BYTES, f"GET {self.url}") if status == 200 else b""
                if deadline.passed:  # cut off: what was read is not the answer
                    raise TimeoutError()
            except shardroute.ShardrouteError:
                raise
            except (OSError, http.client.HTTPException, ValueError) as err:
                if deadline.passed:
                    raise HttpError(f"GET {self.url}: no whole answer within {timeout:g} s", "unreachable") from err
                raise HttpError(f"GET {self.url}: {err!r}", "unreachable") from err
            finally:
                connection.close()
        return self._answer(status, headers, body)

    def refresh(self) -> shardroute.Offered | None:
        """Asks now (no long poll): what became of the body, or None for 304."""
        return self._get(long_poll=False)

    def wait_for_epoch(self, epoch: int, timeout: float) -> bool:
        """Waits until the router's epoch is at least ``epoch``: True, or False after
        ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self._epoch_reached(epoch), timeout)

    def _run(self) -> None:
        delay = 0.0  # the first long poll at once: it returns at once from a server without them
        while not self._stop.wait(delay):
            started = time.monotonic()
            try:
                answered = self._get(long_poll=True)
            except (HttpError, shardroute.ShardrouteError) as err:
                delay = self._lost(err)
                continue
            self._back()
            delay = self._next_delay(answered, time.monotonic() - started)

    def close(self) -> None:
        """Stops asking (idempotent; a long poll in flight is left to end on its own)."""
        self._stop.set()

    def __enter__(self) -> HttpFollower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncHttpFollower(_Polling, AsyncWaiting):
    """``HttpFollower`` for asyncio, on asyncio's streams (``http://`` and ``https://``):
    made by ``await AsyncHttpFollower.start(url, ...)``, it asks in a task of the running
    loop; ``close()`` (or ``async with``) ends the task."""

    def __init__(
        self, url: str, *, config: shardroute.FollowerConfig | None = None, interval: float = INTERVAL_S,
        wait: int = WAIT_S, timeout: float = 10.0, on_change: Callable[[AsyncHttpFollower], None] | None = None,
        on_refused: Callable[[AsyncHttpFollower, shardroute.Offered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        super().__init__(url, config, interval, wait, timeout, on_change, on_refused, on_error)
        self._event = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, url: str, **options: Any) -> AsyncHttpFollower:
        """A follower that has asked once (``HttpError`` when that failed) and asks on."""
        follower = cls(url, **options)
        await follower.refresh()
        follower._task = asyncio.get_running_loop().create_task(follower._run())
        return follower

    async def _get(self, long_poll: bool) -> shardroute.Offered | None:
        import urllib.parse

        parsed = urllib.parse.urlsplit(self.url)
        secure = parsed.scheme == "https"
        port = parsed.port or (443 if secure else 80)
        target = (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")
        lines = [f"GET {target} HTTP/1.1", f"Host: {parsed.netloc}", "Connection: close"]
        lines += [f"{name}: {value}" for name, value in self._headers(long_poll).items()]

        async def exchange() -> tuple[int, dict[str, str], bytes]:
            reader, writer = await asyncio.open_connection(parsed.hostname, port, ssl=secure or None)
            try:
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
                status, headers = await _read_head(reader)
                body = await _body(reader, headers, MAX_DOCUMENT_BYTES, f"GET {self.url}") if status == 200 else b""
                return status, headers, body
            finally:
                writer.close()

        try:
            status, headers, body = await asyncio.wait_for(exchange(), self.timeout + (self.wait if long_poll else 0))
        except shardroute.ShardrouteError:
            raise
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError) as err:
            raise HttpError(f"GET {self.url}: {err!r}", "unreachable") from err
        return self._answer(status, {"ETag": headers.get("etag"), "Content-Type": headers.get("content-type")}, body)

    def _changed_hook(self) -> None:
        self._event.set()

    async def refresh(self) -> shardroute.Offered | None:
        """As ``HttpFollower.refresh``."""
        return await self._get(long_poll=False)

    async def _run(self) -> None:
        delay = 0.0
        while True:
            await asyncio.sleep(delay)
            started = time.monotonic()
            try:
                answered = await self._get(long_poll=True)
            except (HttpError, shardroute.ShardrouteError) as err:
                delay = self._lost(err)
                continue
            self._back()
            delay = self._next_delay(answered, time.monotonic() - started)
