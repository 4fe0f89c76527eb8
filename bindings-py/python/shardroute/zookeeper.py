"""Follow a topology kept in a ZooKeeper node, and publish one, with the core's follower
deciding. Built on kazoo (``pip install 'shardroute[zookeeper]'``).

``ZooKeeperFollower`` reads one node (a znode) with a data watch and hands every value it
reads to the core's ``shardroute.TopologyFollower``, with the node's ``mzxid`` (the
ensemble-wide transaction id of its last write) as the revision. The core decides: it
installs a newer epoch, refuses an invalid document, a lower epoch or an older revision
(counted by code in ``stats``) and keeps the last good router. The value is plain bytes,
offered with ``offer_bytes``: a binary dictionary (``encode_dictionary``) by its magic,
otherwise JSON text, refused unless it is UTF-8.

    from shardroute.zookeeper import ZooKeeperFollower, publish

    with ZooKeeperFollower("127.0.0.1:2181,127.0.0.1:2182", "/app/topology") as follower:
        router = follower.router                      # None: no document yet
        publish(follower.client, "/app/topology", next_document)
        follower.wait_for_epoch(router.epoch + 1, timeout=5)

Every watch event, and every reconnection, is answered by reading the node again (one read
at a time, so reads are offered in ``mzxid`` order), never by applying the event: a change
made while the follower was cut off is read when it is back. kazoo keeps the session and
moves to another member when one stops answering; its reconnect backoff is set from the
core's follower config (``reconnect_first_ms`` doubling up to ``reconnect_max_ms``, no
jitter), and every lost connection is counted by the core (``disconnects``).

``publish`` writes with ZooKeeper's compare-and-swap (``setData`` at the version read, or
``create`` when the node is absent), after the core's follower checked the document (valid,
epoch = the stored one + 1).

For asyncio, ``await AsyncZooKeeperFollower.start(...)``: kazoo has no asyncio client, so
the same follower runs on kazoo's threads, and its callbacks and ``wait_for_epoch`` come to
the event loop; ``router`` is read without a lock either way.

The Node twin is ``shardroute/zookeeper`` (over node-zookeeper-client), with the same names
in camelCase.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any
from kazoo.client import KazooClient  # type: ignore[import-untyped]
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError  # type: ignore[import-untyped]
from kazoo.handlers.threading import KazooTimeoutError  # type: ignore[import-untyped]
from kazoo.protocol.states import KazooState, WatchedEvent, ZnodeStat  # type: ignore[import-untyped]
from kazoo.retry import KazooRetry  # type: ignore[import-untyped]

import shardroute
from shardroute._sources import AsyncWaiting, Following

__all__ = ["AsyncZooKeeperFollower", "ZooKeeperError", "ZooKeeperFollower", "ZooKeeperFollowerStats", "publish"]


class ZooKeeperError(ConnectionError):
    """ZooKeeper could not be reached or lost the session (``code`` ``"unreachable"``), or
    refused a compare-and-swap (``"conflict"``: the node changed since it was read)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class ZooKeeperFollowerStats(shardroute.FollowerStats):
    """The core follower's counters, and the shell's: reads of the node, watch events, and
    sessions lost (expired: every watch had to be set again)."""

    reads: int
    events: int
    sessions_lost: int


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def _client(hosts: str, timeout: float, config: shardroute.FollowerConfig) -> KazooClient:
    """A kazoo client whose reconnect backoff is the core follower's."""
    retry = KazooRetry(
        max_tries=-1, delay=config["reconnect_first_ms"] / 1000, backoff=2, max_jitter=0,
        max_delay=config["reconnect_max_ms"] / 1000,
    )
    return KazooClient(hosts=hosts, timeout=timeout, connection_retry=retry)


def _start(client: KazooClient, timeout: float) -> None:
    try:
        client.start(timeout=timeout)
    except KazooTimeoutError as err:
        client.close()
        raise ZooKeeperError(f"zookeeper {client.hosts}: not connected within {timeout} s", "unreachable") from err


def _unreachable(err: Exception, what: str) -> ZooKeeperError:
    return ZooKeeperError(f"zookeeper {what}: {type(err).__name__}: {err}", "unreachable")


class ZooKeeperFollower(Following):
    """Follows the topology document at ``path`` (see the module docs).

    ``zookeeper`` is a connection string (``"host:port,host:port"``: the follower starts its
    own client, with session timeout ``timeout`` seconds, and closes it) or a started
    ``KazooClient`` (shared, left open). The constructor reads the node once
    (``ZooKeeperError`` when ZooKeeper cannot be reached; a missing node leaves ``router``
    None until it is created).

    ``on_change(follower)`` runs on kazoo's callback thread (or the caller of ``refresh``)
    after a new router is installed; ``on_refused(follower, offered)`` after a document is
    refused (``offered.code`` says why; the router held is kept); ``on_error(error)`` for a
    lost connection or a failed read. None of them may raise.
    """

    def __init__(
        self,
        zookeeper: KazooClient | str,
        path: str,
        *,
        config: shardroute.FollowerConfig | None = None,
        on_change: Callable[[ZooKeeperFollower], None] | None = None,
        on_refused: Callable[[ZooKeeperFollower, shardroute.Offered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(config, on_change, on_refused, on_error)
        self.path = path
        self._owned = isinstance(zookeeper, str)
        self.client = _client(zookeeper, timeout, self._follower.config) if isinstance(zookeeper, str) else zookeeper
        self._reading = threading.Lock()  # one read-and-offer at a time, in mzxid order
        self._reads = 0
        self._events = 0
        self._sessions_lost = 0
        self._connected = True
        self._closed = False
        if self._owned:
            _start(self.client, timeout)
        self.client.add_listener(self._state)
        try:
            self.refresh()
        except ZooKeeperError:
            self.close()
            raise

    @property
    def revision(self) -> int | None:
        """The ``mzxid`` of the document installed last."""
        with self._changed:
            return self._follower.revision

    @property
    def stats(self) -> ZooKeeperFollowerStats:
        with self._changed:
            core = self._follower.stats
            return {**core, "reads": self._reads, "events": self._events, "sessions_lost": self._sessions_lost}

    def refresh(self) -> shardroute.Offered | None:
        """Reads the node now (and sets the watch again) and offers its value: what became
        of it, or None when the node is absent. Raises ``ZooKeeperError`` when ZooKeeper
        cannot be reached (the router held is kept)."""
        with self._reading:
            try:
                while True:
                    try:
                        data, stat = self._bounded(self.client.get_async(self.path, watch=self._fired))
                        break
                    except NoNodeError:
                        # Absent: a watch on its existence brings its creation. (Created
                        # between the two calls: read it.)
                        if self._bounded(self.client.exists_async(self.path, watch=self._fired)) is None:
                            with self._changed:
                                self._reads += 1
                            return None
            except (KazooException, KazooTimeoutError) as err:
                raise _unreachable(err, f"read {self.path}") from err
            if not data:
                # An empty node (made as a parent, or emptied) holds no document, as an
                # absent one: nothing offered (the CLI reads it the same way).
                with self._changed:
                    self._reads += 1
                return None
            return self._offer(data, stat)

    def _bounded(self, pending: Any) -> Any:
        """A call's answer within the session timeout: kazoo holds a call made while it is
        disconnected until it is connected again, for ever."""
        return pending.get(timeout=self.client._session_timeout / 1000)  # noqa: SLF001 - kazoo's own

    def _offer(self, data: bytes, stat: ZnodeStat) -> shardroute.Offered:
        with self._changed:
            self._reads += 1
            offered = self._follower.offer_bytes(data, stat.mzxid, _now_ms())
            self._took(offered)
        self._tell(offered, offered.kind == "installed")
        return offered

    def wait_for_epoch(self, epoch: int, timeout: float) -> bool:
        """Waits until the router's epoch is at least ``epoch``: True, or False after
        ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self._epoch_reached(epoch), timeout)

    def _fired(self, event: WatchedEvent) -> None:
        """A watch fired (kazoo's callback thread): read again. A watch that fires for the
        session itself (no path) is left to ``_state``."""
        if self._closed or not event.path:
            return
        with self._changed:
            self._events += 1
        self._read_again()

    def _read_again(self) -> None:
        try:
            self.refresh()
        except ZooKeeperError as err:
            # Connection lost mid-read: `_state` hears of it and reads again when back.
            if self._on_error is not None and not self._closed:
                self._on_error(err)

    def _state(self, state: str) -> None:
        """kazoo's connection listener (its connection thread: must not block)."""
        if self._closed:
            return
        if state in (KazooState.SUSPENDED, KazooState.LOST):
            if state == KazooState.LOST:
                with self._changed:
                    self._sessions_lost += 1
            if self._connected:
                self._connected = False
                self._lost(ZooKeeperError(f"zookeeper {self.client.hosts}: {state.lower()}", "unreachable"))
        elif state == KazooState.CONNECTED and not self._connected:
            self._connected = True
            self._back()
            # The watch may be gone (a lost session) or a change missed: read again, on
            # kazoo's callback thread, not this one.
            self.client.handler.spawn(self._read_again)

    def close(self) -> None:
        """Stops following (idempotent); closes the client if the follower started it."""
        if self._closed:
            return
        self._closed = True
        self.client.remove_listener(self._state)
        if self._owned:
            self.client.stop()
            self.client.close()

    def __enter__(self) -> ZooKeeperFollower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncZooKeeperFollower(AsyncWaiting):
    """``ZooKeeperFollower`` for asyncio. kazoo is threaded, so the follower runs on its
    threads as in a sync program; this shell hands its callbacks to the event loop
    (``on_change(follower)`` and ``on_refused(follower, offered)`` run there, with this
    object) and waits there (``await wait_for_epoch``). ``router`` is the follower's, read
    without a lock. Start it with ``await AsyncZooKeeperFollower.start(zookeeper, path,
    ...)``, the same arguments as ``ZooKeeperFollower``; ``await close()``."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._task = None
        self._follower: ZooKeeperFollower | None = None
        self.router: shardroute.Router | None = None
        """The router of the last change delivered to the loop (None before the first): a
        plain attribute, read without a lock, the same one ``on_change`` sees."""

    @classmethod
    async def start(
        cls,
        zookeeper: KazooClient | str,
        path: str,
        *,
        config: shardroute.FollowerConfig | None = None,
        on_change: Callable[[AsyncZooKeeperFollower], None] | None = None,
        on_refused: Callable[[AsyncZooKeeperFollower, shardroute.Offered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        timeout: float = 10.0,
    ) -> AsyncZooKeeperFollower:
        loop = asyncio.get_running_loop()
        self = cls()

        def changed(router: shardroute.Router | None) -> None:
            self.router = router
            self._event.set()
            if on_change is not None:
                on_change(self)

        def refused(offered: shardroute.Offered) -> None:
            if on_refused is not None:
                on_refused(self, offered)

        def error(err: Exception) -> None:
            if on_error is not None:
                on_error(err)

        # kazoo's threads hand each callback to the loop.
        def on_change_thread(follower: ZooKeeperFollower) -> None:
            loop.call_soon_threadsafe(changed, follower.router)  # the router of this change

        def on_refused_thread(_: ZooKeeperFollower, offered: shardroute.Offered) -> None:
            loop.call_soon_threadsafe(refused, offered)

        def on_error_thread(err: Exception) -> None:
            loop.call_soon_threadsafe(error, err)

        def make() -> ZooKeeperFollower:
            return ZooKeeperFollower(zookeeper, path, config=config, timeout=timeout, on_change=on_change_thread,
                                     on_refused=on_refused_thread, on_error=on_error_thread)

        self._follower = await loop.run_in_executor(None, make)
        if self.router is None:
            self.router = self._follower.router
        return self

    @property
    def follower(self) -> ZooKeeperFollower:
        """The threaded follower underneath."""
        assert self._follower is not None, "use `await AsyncZooKeeperFollower.start(...)`"
        return self._follower

    @property
    def revision(self) -> int | None:
        return self.follower.revision

    @property
    def stats(self) -> ZooKeeperFollowerStats:
        return self.follower.stats

    def _epoch_reached(self, epoch: int) -> bool:
        router = self.router
        return router is not None and router.epoch >= epoch

    async def refresh(self) -> shardroute.Offered | None:
        """``ZooKeeperFollower.refresh`` (on a worker thread)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.follower.refresh)

    async def close(self) -> None:
        """Stops following (idempotent)."""
        if self._follower is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._follower.close)


def publish(zookeeper: KazooClient | str, path: str, document: str | shardroute.Topology, timeout: float = 10.0) -> int:
    """Writes ``document`` to the node at ``path`` with a compare-and-swap on the value read
    (``setData`` at its version; ``create``, parents included, when it is absent). The core's
    follower checks it first (``ShardrouteError``: ``invalid_topology``, ``no_nodes``,
    ``limit_exceeded``, or ``stale_epoch`` unless its epoch is the stored one + 1; the first
    document may have any epoch). Returns the write's ``mzxid`` (the revision followers
    see); ``ZooKeeperError`` with code ``"conflict"`` when someone wrote the node between
    the read and the write, ``"unreachable"`` when ZooKeeper cannot be reached."""
    client = zookeeper if isinstance(zookeeper, KazooClient) else KazooClient(hosts=zookeeper, timeout=timeout)
    if client is not zookeeper:
        _start(client, timeout)
    try:
        return _publish(client, path, document)
    finally:
        if client is not zookeeper:
            client.stop()
            client.close()


def _publish(client: KazooClient, path: str, document: str | shardroute.Topology) -> int:
    follower = shardroute.TopologyFollower()
    bound = client._session_timeout / 1000  # noqa: SLF001 - kazoo holds a call while disconnected
    try:
        try:
            data, stat = client.get_async(path).get(timeout=bound)
        except NoNodeError:
            stat = None
        else:
            # An empty node holds no document: written over at its version, any epoch.
            error = follower.offer_bytes(data, stat.mzxid, _now_ms()).error() if data else None
            if error is not None:
                # Not overwritten: the epoch to follow a document nobody can read is unknown.
                raise error
        write = follower.publish(document)
        value = write["document"].encode()
        if stat is None:
            _, created = client.create_async(path, value, makepath=True, include_data=True).get(timeout=bound)
            return int(created.mzxid)
        return int(client.set_async(path, value, version=stat.version).get(timeout=bound).mzxid)
    except (BadVersionError, NodeExistsError) as err:
        raise ZooKeeperError(f"publish: {path} changed since it was read (not written)", "conflict") from err
    except (KazooException, KazooTimeoutError) as err:
        raise _unreachable(err, f"publish {path}") from err

