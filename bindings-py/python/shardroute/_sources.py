"""What the asyncio followers of ``shardroute.etcd`` and ``shardroute.http`` share: waiting
for an epoch, and ending their task. (Not a public module.)"""

from __future__ import annotations

import asyncio
import time
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
