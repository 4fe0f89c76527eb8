"""Follow a topology served over HTTP, with the core deciding.

Any URL that answers ``GET`` with the document and an ``ETag`` serves: a static file
behind a CDN, object storage, a key-value store's HTTP face. ``HttpFollower`` asks again
with ``If-None-Match`` (``304 Not Modified``: nothing to read) and ``Prefer: wait=N``
(RFC 7240): a server that supports it holds the request until the document changes or
``N`` seconds pass (a long poll); one that does not is asked again ``interval`` seconds
after the last request was sent. A body served as ``application/octet-stream`` is a
binary dictionary (``encode_dictionary``); anything else is offered as plain bytes: the
core tells a dictionary by its magic and refuses text that is not UTF-8
(``invalid_topology``, counted, ``on_refused`` called, the router kept), never decoding it
with replacements.

The protocol is the core's HTTP source session (``shardroute.SourceSession`` with
``{"source": "http", ...}``): the requests, their deadlines, the poll schedule, what each
status means, the backoff after a lost server, and the follower that installs a newer
epoch and refuses an invalid document or an older one (counted by code in ``stats``)
while keeping the last good router. Its defaults are the core's (``interval``, ``wait``,
``timeout`` and ``config`` left out: ``SourceSession(...).config`` says them). This module
only makes the requests (``shardroute._sources``' drivers) and calls back. Standard
library only.

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
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import shardroute
from shardroute._sources import (
    AsyncDriver, AsyncWaiting, Noting, SessionOffered, SourceError, SyncDriver, SyncFollowing, now_ms, source_error,
)

__all__ = ["AsyncHttpFollower", "HttpError", "HttpFollower", "HttpFollowerStats"]


class HttpError(SourceError):
    """The server could not be reached (``code`` ``"unreachable"``), answered with an
    error status (``"http"``, with ``status``), or the follower was closed (``"closed"``:
    a ``refresh`` that ``close`` ended, or one made after it)."""


class HttpFollowerStats(shardroute.FollowerStats):
    """The core follower's counters, and the session's: requests answered, and 304 answers."""

    requests: int
    not_modified: int


class _Polling(Noting):
    """What both followers share: the core's session and its settings."""

    error_class = HttpError

    def __init__(
        self, url: str, config: shardroute.FollowerConfig | None, interval: float | None, wait: int | None,
        timeout: float | None, on_change: Callable[[Any], None] | None,
        on_refused: Callable[[Any, Any], None] | None, on_error: Callable[[Exception], None] | None,
    ) -> None:
        super().__init__(on_change, on_refused, on_error)
        settings: dict[str, Any] = {"source": "http", "url": url, **(config or {})}
        for name, value, scale in (("interval_ms", interval, 1000), ("wait_s", wait, 1),
                                   ("request_timeout_ms", timeout, 1000)):
            if value is not None:
                settings[name] = round(value * scale) if scale != 1 else value
        self.url = url
        self._session = shardroute.SourceSession(settings)
        self._lock: Any = threading.Lock()  # guards the session (the sync driver's lock)

    @property
    def interval(self) -> float:
        """Seconds between two requests the server answered at once."""
        return float(self._state("config")["interval_ms"]) / 1000

    @property
    def wait(self) -> int:
        """How long a long poll asks the server to hold it, in seconds."""
        return int(self._state("config")["wait_s"])

    @property
    def timeout(self) -> float:
        """A whole request's limit in seconds (a long poll's: this plus ``wait``)."""
        return float(self._state("config")["request_timeout_ms"]) / 1000

    @property
    def etag(self) -> str | None:
        """The validator of the last body read."""
        etag = self._state("state")["etag"]
        return None if etag is None else str(etag)

    @property
    def stats(self) -> HttpFollowerStats:
        stats: HttpFollowerStats = self._state("stats")
        return stats

    def _state(self, name: str) -> Any:
        with self._lock:
            return getattr(self._session, name)

    @staticmethod
    def _ended(ended: dict[str, Any]) -> SessionOffered | None:
        """A refresh's end: what became of the body (None for 304), or its error raised."""
        if "failed" in ended:
            raise source_error(ended["failed"]["error"], HttpError)
        # {"offered": <result> | null (304), "revision": "N" | null}, as etcd's refresh.
        result = ended["done"]["result"]
        offered = result["offered"]
        if offered is None:
            return None
        changed = "installed" in offered
        return SessionOffered({"result": offered, "changed": changed, "revision": result["revision"]})


class HttpFollower(_Polling, SyncFollowing):
    """Follows the document at ``url`` on a daemon thread (see the module docs). The
    constructor asks once (``HttpError`` when the server cannot be reached or answers an
    error). ``on_change(follower)`` runs after a new router is installed,
    ``on_refused(follower, offered)`` after a body is refused (the router held is kept),
    ``on_error(error)`` for each failed request and anything the other two raise."""

    def __init__(
        self, url: str, *, config: shardroute.FollowerConfig | None = None, interval: float | None = None,
        wait: int | None = None, timeout: float | None = None, on_change: Callable[[HttpFollower], None] | None = None,
        on_refused: Callable[[HttpFollower, SessionOffered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        super().__init__(url, config, interval, wait, timeout, on_change, on_refused, on_error)
        self._drive(SyncDriver(self._session, None))
        self._lock = self._driver.lock
        try:
            self.refresh()
        except BaseException:
            self.close()
            raise
        with self._lock:
            self._driver.dispatch(self._session.start(now_ms()))
        self._follow(f"http follower {url}")

    def refresh(self) -> SessionOffered | None:
        """Asks now (no long poll): what became of the body, or None for 304."""
        return self._ended(self._refresh())


class AsyncHttpFollower(_Polling, AsyncWaiting):
    """``HttpFollower`` for asyncio, on asyncio's streams (``http://`` and ``https://``):
    made by ``await AsyncHttpFollower.start(url, ...)``, it asks on the running loop;
    ``close()`` (or ``async with``) stops it."""

    def __init__(
        self, url: str, *, config: shardroute.FollowerConfig | None = None, interval: float | None = None,
        wait: int | None = None, timeout: float | None = None,
        on_change: Callable[[AsyncHttpFollower], None] | None = None,
        on_refused: Callable[[AsyncHttpFollower, SessionOffered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        super().__init__(url, config, interval, wait, timeout, on_change, on_refused, on_error)
        self._driver = AsyncDriver(self._session, None, self._note)
        self._event = asyncio.Event()
        self._task = None

    @classmethod
    async def start(cls, url: str, **options: Any) -> AsyncHttpFollower:
        """A follower that has asked once (``HttpError`` when that failed) and asks on."""
        follower = cls(url, **options)
        try:
            await follower.refresh()
        except BaseException:
            await follower.close()
            raise
        follower._driver.start()
        return follower

    def _changed_hook(self) -> None:
        self._event.set()

    async def refresh(self) -> SessionOffered | None:
        """As ``HttpFollower.refresh``."""
        return self._ended(await self._driver.call({"op": "refresh"}))

    async def close(self) -> None:
        """Stops asking: the request in flight is cut off (idempotent)."""
        await self._driver.close()
