"""Follow a topology kept in a ZooKeeper node, and publish one, with the core deciding
everything. Standard library only.

``ZooKeeperFollower`` follows one node (a znode) and holds the router of the newest valid
document in it; ``publish`` writes a document with ZooKeeper's compare-and-swap, never one
a follower would refuse (``replace=True`` repairs a stored document that followers refuse,
still under compare-and-swap, with an epoch above the stored one).

    from shardroute.zookeeper import ZooKeeperFollower, publish

    with ZooKeeperFollower("10.0.0.1:2181,10.0.0.2:2181", "/app/topology",
                           user="app", password=secret) as follower:
        router = follower.router                      # None: no document yet
        publish(follower, "/app/topology", next_document)
        follower.wait_for_epoch(router.epoch + 1, timeout=5)

For asyncio: ``await AsyncZooKeeperFollower.start(...)`` and ``publish_async``: the same
calls as coroutines, on the running loop.

Everything but moving bytes is the core's ``shardroute.SourceSession`` (``{"source":
"zookeeper", ...}``, the same in every language and the CLI): the wire protocol (jute),
the member to connect to and when to leave it, the session's liveness (pings when nothing
was sent for a third of the session timeout ZooKeeper granted, the member left when it was
silent for two thirds), the backoff, digest authentication (``user``/``password``), the
watch set again after every read, and the follower that installs a newer epoch, refuses an
invalid document, a lower epoch or an older revision (counted by code in ``stats``) and
keeps the last good router. A node's value is plain bytes, offered with its ``mzxid`` as
the revision: a binary dictionary (``encode_dictionary``) by its magic, otherwise JSON
text, refused unless it is UTF-8; an empty or absent node holds no document. This module
opens the TCP connections the session asks for (``shardroute._sources``' drivers) and
calls back; it keeps one timer, at the session's deadline. (kazoo, which this module used
until the core had a ZooKeeper session, is not used: the issue let Python keep it as its
transport, but then its liveness and reconnect rules would have stayed kazoo's, and every
language follows one rule.)

Callbacks (``on_change``, ``on_refused``) run on the follower's thread (asyncio: on the
loop); one that raises is reported to ``on_error`` and the follower goes on.

The Node twin is ``shardroute/zookeeper``, with the same names in camelCase.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any, cast

import shardroute
from shardroute._sources import (
    AsyncDriver, AsyncWaiting, Noting, SessionOffered, SourceError, SyncDriver, SyncFollowing, _only, now_ms,
    source_error,
)

__all__ = [
    "AsyncZooKeeperFollower", "ZooKeeperError", "ZooKeeperFollower", "ZooKeeperFollowerStats", "publish",
    "publish_async",
]

Hosts = str | Sequence[str]


class ZooKeeperError(SourceError):
    """ZooKeeper could not be reached (``code`` ``"unreachable"``: no member answered, or
    the session was lost), answered with something that is not ZooKeeper's
    (``"malformed"``), refused the user or its password, or a read or write for want of
    them (``"unauthenticated"``), or refused a compare-and-swap (``"conflict"``: the node
    changed since it was read); ``"closed"``: a call that ``close`` ended. ``message`` says
    what happened."""


class ZooKeeperFollowerStats(shardroute.FollowerStats):
    """The core follower's counters, and the session's: ZooKeeper sessions opened, reads
    of the node, watch events, and pings sent."""

    sessions: int
    reads: int
    events: int
    pings: int


def _config(hosts: Hosts, path: str | None, timeout: float | None, user: str | None, password: str | None,
            follower: shardroute.FollowerConfig | None) -> dict[str, Any]:
    """The session's config: ``hosts`` (``"host:port,host:port"`` or a sequence of them)
    and the options the caller gave (the rest is the core's default)."""
    members = [part.strip() for part in hosts.split(",")] if isinstance(hosts, str) else list(hosts)
    config: dict[str, Any] = {"source": "zookeeper", "members": members, **(follower or {})}
    if path is not None:
        config["path"] = path
    if timeout is not None:
        config["session_timeout_ms"] = round(timeout * 1000)
    if user is not None or password is not None:
        config.update(user=user, password=password)
    return config


def _ended(action: dict[str, Any]) -> dict[str, Any]:
    """A call's result, or its error raised."""
    name, value = _only(action)
    if name == "failed":
        raise source_error(value["error"], ZooKeeperError)
    result: dict[str, Any] = value["result"]
    return result


class _Following(Noting):
    """What both followers share: the session following ``path``, the revision of the last
    document read, and the first read's failure (raised by the constructor)."""

    error_class = ZooKeeperError

    def __init__(
        self,
        hosts: Hosts,
        path: str,
        config: shardroute.FollowerConfig | None,
        on_change: Callable[[Any], None] | None,
        on_refused: Callable[[Any, Any], None] | None,
        on_error: Callable[[Exception], None] | None,
        timeout: float | None,
        user: str | None,
        password: str | None,
    ) -> None:
        super().__init__(on_change, on_refused, on_error)
        self.path = path
        self._session = shardroute.SourceSession(_config(hosts, path, timeout, user, password, config))
        self._revision: int | None = None
        self._lost: Exception | None = None  # the first read's failure, for the constructor

    @property
    def members(self) -> list[str]:
        """Every member (``host:port``), in the order they are tried."""
        return list(self._session.config["members"])

    @property
    def member(self) -> str:
        """The member in use (``host:port`` as given), or the one tried last."""
        return str(self._session.state["member"])

    @property
    def revision(self) -> int | None:
        """The ``mzxid`` of the document installed last."""
        return self._revision

    @property
    def stats(self) -> ZooKeeperFollowerStats:
        """The counters: the core follower's, ZooKeeper sessions, reads, watch events, pings."""
        return cast(ZooKeeperFollowerStats, self._session.stats)

    def _read(self) -> bool:
        """Whether the first read has ended (a document offered, none found, or lost)."""
        return self._lost is not None or self._session.state["stats"]["reads"] > 0

    def _lose(self, error: Exception) -> None:
        if self._lost is None and not self._read():
            self._lost = error  # the first read failed: the constructor raises it
        else:
            super()._lose(error)

    def _keep(self, offered: SessionOffered, state: dict[str, Any]) -> None:
        self._revision = None if state.get("revision") is None else int(state["revision"])

    def _refreshed(self, ended: dict[str, Any]) -> SessionOffered | None:
        """A refresh's end: what became of the document (told already), None when absent."""
        return None if _ended(ended)["offered"] is None else self._offered


class ZooKeeperFollower(_Following, SyncFollowing):
    """Follows the topology document at ``path`` (see the module docs) on a thread.

    ``hosts``: the members, ``"host:port,host:port"`` (port 2181 when left out; an IPv6
    address in brackets) or a sequence of them. ``config``: the core follower's reconnect
    settings. ``timeout``: the ZooKeeper session timeout asked for, in seconds (None: the
    core's default; the server grants one within its bounds). ``user``, ``password``:
    ZooKeeper's digest authentication (a node whose ACL needs them is read with them).

    The constructor reads the node once (``ZooKeeperError`` when it cannot; a missing or
    empty node leaves ``router`` None until a document is written there).
    ``on_change(follower)`` after a new router is installed; ``on_refused(follower,
    offered)`` after a document is refused (``offered.code``, ``offered.message``; the
    router held is kept); ``on_error(error)`` when the source is lost (the session tries
    again by itself) or a callback raised."""

    def __init__(
        self,
        hosts: Hosts,
        path: str,
        *,
        config: shardroute.FollowerConfig | None = None,
        on_change: Callable[[ZooKeeperFollower], None] | None = None,
        on_refused: Callable[[ZooKeeperFollower, SessionOffered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        timeout: float | None = None,
        user: str | None = None,
        password: str | None = None,
    ) -> None:
        super().__init__(hosts, path, config, on_change, on_refused, on_error, timeout, user, password)
        self._drive(SyncDriver(self._session, None))
        with self._driver.lock:
            self._driver.dispatch(self._session.start(now_ms()))
        self._driver.wait(lambda: bool(self._driver.notes) or self._read())
        self._tell()
        if self._lost is not None:
            self._driver.close()
            raise self._lost
        self._follow(f"zookeeper follower {path}")

    def refresh(self) -> SessionOffered | None:
        """Reads the node now (the session's one read, shared with the watch's): None when
        it is absent or empty, else what became of its document, told to the application
        before this returns. Raises ``ZooKeeperError`` when ZooKeeper cannot be reached
        (the router held is kept)."""
        return self._refreshed(self._refresh())


class AsyncZooKeeperFollower(_Following, AsyncWaiting):
    """``ZooKeeperFollower`` for asyncio: made by ``await AsyncZooKeeperFollower.start(...)``
    (which reads the node once), it follows on the running loop, with the same arguments,
    rules and callbacks (called on the loop); ``close()`` (or ``async with``) stops it."""

    def __init__(
        self,
        hosts: Hosts,
        path: str,
        *,
        config: shardroute.FollowerConfig | None = None,
        on_change: Callable[[AsyncZooKeeperFollower], None] | None = None,
        on_refused: Callable[[AsyncZooKeeperFollower, SessionOffered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        timeout: float | None = None,
        user: str | None = None,
        password: str | None = None,
    ) -> None:
        super().__init__(hosts, path, config, on_change, on_refused, on_error, timeout, user, password)
        self._driver = AsyncDriver(self._session, None, self._note)
        self._event = asyncio.Event()
        self._task = None

    def _changed_hook(self) -> None:
        self._event.set()

    @classmethod
    async def start(cls, hosts: Hosts, path: str, **options: Any) -> AsyncZooKeeperFollower:
        """A follower that has read the node once (``ZooKeeperError`` when it cannot) and
        follows from there on."""
        follower = cls(hosts, path, **options)
        driver = follower._driver
        first = asyncio.get_running_loop().create_future()

        def step() -> None:
            if not first.done() and follower._read():
                first.set_result(None)

        driver.on_step = step
        driver.start()
        try:
            if not follower._read():
                await first
        finally:
            driver.on_step = None
        if follower._lost is not None:
            await driver.close()
            raise follower._lost
        return follower

    async def refresh(self) -> SessionOffered | None:
        """As ``ZooKeeperFollower.refresh`` (the document is told before the call ends)."""
        return self._refreshed(await self._driver.call({"op": "refresh"}))

    async def close(self) -> None:
        """Stops following (idempotent)."""
        self._event.set()
        await self._driver.close()


def _publish_op(path: str, document: str | shardroute.Topology, replace: bool) -> dict[str, Any]:
    text = document if isinstance(document, str) else json.dumps(document)
    return {"op": "publish", "path": path, "document": text, "replace": replace}


def publish(
    zookeeper: Hosts | ZooKeeperFollower, path: str, document: str | shardroute.Topology, *, replace: bool = False,
    user: str | None = None, password: str | None = None, timeout: float | None = None,
) -> int:
    """Writes ``document`` to the node at ``path`` with a compare-and-swap on the value read
    (``setData`` at its version; ``create``, with any missing parents, when it is absent).
    The core's follower checks it first (``ShardrouteError``: ``invalid_topology``,
    ``no_nodes``, ``limit_exceeded``, or ``stale_epoch`` unless its epoch is the stored one
    + 1; the first document may have any epoch). A stored document the follower refuses is
    not overwritten (its refusal's code), unless ``replace``: then ``document``'s epoch must
    be above the stored value's ``epoch`` (``InvalidArgumentError`` when it has none:
    ZooKeeper keeps no history to tell what followers hold).

    ``zookeeper``: the members (as ``ZooKeeperFollower``'s ``hosts``: a ZooKeeper session of
    its own, with ``user``/``password`` and ``timeout``, closed after the write) or a
    ``ZooKeeperFollower`` (written over its session, with its credentials). With ``user``,
    a node this creates gets the ``auth`` ACL (only that user may read or write it);
    otherwise it is open to anyone. Returns the write's ``mzxid`` (the revision followers
    see); ``ZooKeeperError`` ``"conflict"`` when someone wrote the node between the read and
    the write, ``"unreachable"`` when ZooKeeper cannot be reached."""
    op = _publish_op(path, document, replace)
    if isinstance(zookeeper, ZooKeeperFollower):
        return int(_ended(zookeeper._driver.call(op))["revision"])
    driver = SyncDriver(shardroute.SourceSession(_config(zookeeper, None, timeout, user, password, None)), None)
    try:
        return int(_ended(driver.call(op))["revision"])
    finally:
        driver.close()


async def publish_async(
    zookeeper: Hosts | AsyncZooKeeperFollower, path: str, document: str | shardroute.Topology, *,
    replace: bool = False, user: str | None = None, password: str | None = None, timeout: float | None = None,
) -> int:
    """``publish`` for asyncio (over an ``AsyncZooKeeperFollower``'s session, or one of its
    own)."""
    op = _publish_op(path, document, replace)
    if isinstance(zookeeper, AsyncZooKeeperFollower):
        return int(_ended(await zookeeper._driver.call(op))["revision"])
    driver = AsyncDriver(shardroute.SourceSession(_config(zookeeper, None, timeout, user, password, None)), None)
    try:
        return int(_ended(await driver.call(op))["revision"])
    finally:
        await driver.close()
