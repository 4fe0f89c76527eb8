"""What the asyncio sources of ``shardroute.etcd`` and ``shardroute.http`` share: reading an
HTTP/1.1 answer from asyncio streams, waiting for an epoch, and ending their task. (Not a
public module.)"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any, TypeVar

Waiting = TypeVar("Waiting", bound="AsyncWaiting")


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
