"""What the sources of ``shardroute.etcd`` and ``shardroute.http`` share: the core's
follower with the router it installed and the callbacks (``Following``), and for asyncio,
reading an HTTP/1.1 answer from streams, waiting for an epoch and ending the task. (Not
a public module.)"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import shardroute

Waiting = TypeVar("Waiting", bound="AsyncWaiting")


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


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """An HTTP/1.1 response's status and headers (names lowercased)."""
    status_line = await reader.readline()
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError(f"not an HTTP response: {status_line[:100]!r}")
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


async def _chunks(reader: asyncio.StreamReader, headers: dict[str, str]) -> AsyncIterator[bytes]:
    """The body as it arrives: chunk by chunk (``Transfer-Encoding: chunked``, as etcd's
    gateway streams a watch), or whole."""
    if headers.get("transfer-encoding", "").lower() != "chunked":
        length = headers.get("content-length")
        yield await (reader.readexactly(int(length)) if length is not None else reader.read())
        return
    while True:
        size = int((await reader.readline()).split(b";")[0], 16)
        if size == 0:
            await reader.readline()
            return
        data = await reader.readexactly(size)
        await reader.readline()
        yield data
