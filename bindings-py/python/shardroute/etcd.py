"""Follow a topology kept in etcd, and publish one, with the core deciding everything.

``Etcd`` is an etcd v3 client over etcd's JSON gateway (etcd 3.4 and later), standard
library only; keys and values are ``str``, revisions ``int``. ``EtcdFollower`` follows
one key (and its ``also`` companions, read in the same transaction) and holds the router
of the newest valid document; ``publish`` writes a document with a compare-and-swap,
never one a follower would refuse (``replace=True`` repairs a stored document that
followers refuse, still under compare-and-swap, with an epoch above any they hold).

    from shardroute.etcd import EtcdFollower, publish

    etcd = Etcd("https://10.0.0.1:2379,https://10.0.0.2:2379", ca_file="ca.pem",
                cert_file="client.pem", key_file="client.key", user="app", password=secret)
    with EtcdFollower(etcd, "/app/topology") as follower:
        router = follower.router                  # the current Router (None: no document yet)
        publish(follower.etcd, "/app/topology", next_document)
        follower.wait_for_epoch(router.epoch + 1, timeout=5)

For asyncio: ``AsyncEtcd``, ``AsyncEtcdFollower`` (``await AsyncEtcdFollower.start(...)``)
and ``publish_async``: the same calls as coroutines.

Everything but moving bytes is the core's ``shardroute.SourceSession`` (the same in
every language): the requests and their codec, the member to ask and when to move to the
next (unreachable, HTTP 503, no leader), the deadlines (``timeout``: a whole request;
``idle``: how long a watch may stay quiet before a read checks the source), the backoff,
authentication (``user``/``password``: a token, renewed when etcd drops it), and the
bound on an answer (``MAX_ANSWER_BYTES``, refused with ``shardroute.LimitExceededError``
before it is buffered). TLS: ``https://`` members, checked against ``ca_file`` (else the
system's CAs), with the client certificate ``cert_file``/``key_file`` if etcd asks for one.

Callbacks (``on_change``, ``on_refused``) run on the follower's thread (asyncio: on the
loop); one that raises is reported to ``on_error`` and the follower goes on.

The Node twin is ``shardroute/etcd``, with the same names in camelCase.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any, NamedTuple, TypeVar

import shardroute
from shardroute._sources import (
    MAX_DOCUMENT_BYTES, AsyncDriver, AsyncWaiting, Noting, SessionOffered, SourceError, SyncDriver, SyncFollowing, _only,
    now_ms, source_error, tls_context,
)

__all__ = [
    "AsyncEtcd", "AsyncEtcdFollower", "Etcd", "EtcdError", "EtcdFollower", "EtcdFollowerStats", "EtcdValue",
    "EtcdValues", "prefix_end", "publish", "publish_async", "same_revision", "same_value",
]

#: The longest answer read from etcd, and the longest line of a watch stream (the core's
#: bound, twice ``shardroute.MAX_DOCUMENT_BYTES``: a document in base64 and the JSON
#: around it and its companions). Longer is refused before it is buffered.
MAX_ANSWER_BYTES = 2 * MAX_DOCUMENT_BYTES


def prefix_end(prefix: str) -> bytes:
    """The end of the range of keys that start with ``prefix`` (etcd's ``range_end``), as
    bytes: the prefix's UTF-8 with its last byte below 0xFF raised by one, which need not
    be UTF-8 any more (``b"\\0"``, every key, for an empty or all-0xFF prefix). What
    ``delete_prefix`` deletes (the core computes it)."""
    raw = bytearray(prefix.encode())
    while raw and raw[-1] == 0xFF:
        raw.pop()
    if not raw:
        return b"\0"
    raw[-1] += 1
    return bytes(raw)


def same_revision(key: str, mod_revision: int) -> dict[str, Any]:
    """A ``txn`` compare: ``key``'s mod_revision is ``mod_revision`` (0: the key is absent)."""
    return {"key": key, "target": "mod", "mod_revision": str(mod_revision)}


def same_value(key: str, value: str) -> dict[str, Any]:
    """A ``txn`` compare: ``key`` holds ``value``."""
    return {"key": key, "target": "value", "value": value}


class EtcdError(SourceError):
    """etcd could not be reached (``code`` ``"unreachable"``), answered with an HTTP error
    (``"http"``, with ``status``) or with something that is not etcd's answer
    (``"malformed"``), refused the user or its password (``"unauthenticated"``), or lost
    a compare-and-swap (``"conflict"``). ``message`` says what happened."""


class EtcdFollowerStats(shardroute.FollowerStats):
    """The core follower's counters, and the session's: etcd reads and watch restarts."""

    reads: int
    watch_restarts: int


# -- the calls: each an op for the session and what its result becomes, written once ----

class EtcdValue(NamedTuple):
    """What ``Etcd.get`` returns: a key's value and its ``mod_revision`` (``(None, 0)``
    when absent). The Node twin's ``EtcdValue`` (``{ value, modRevision }``)."""

    value: str | None
    mod_revision: int


class EtcdValues(NamedTuple):
    """What ``Etcd.get_many`` returns: each key's ``EtcdValue`` (by key, as given), read
    in one transaction, and the store's ``revision`` then. The Node twin's
    ``{ values, revision }``."""

    values: dict[str, EtcdValue]
    revision: int


Result = TypeVar("Result")
Op = Generator[dict[str, Any], dict[str, Any], Result]


def _ended(action: dict[str, Any]) -> dict[str, Any]:
    """A call's result, or its error raised."""
    name, value = _only(action)
    if name == "failed":
        raise source_error(value["error"], EtcdError)
    result: dict[str, Any] = value["result"]
    return result


def _entry(found: dict[str, Any]) -> EtcdValue:
    return EtcdValue(found["value"], int(found["mod_revision"]))


def _op_get(key: str) -> Op[EtcdValue]:
    return _entry(_ended((yield {"op": "get", "key": key})))


def _op_get_many(keys: list[str]) -> Op[EtcdValues]:
    result = _ended((yield {"op": "get_many", "keys": keys}))
    return EtcdValues({key: _entry(found) for key, found in result["values"].items()}, int(result["revision"]))


def _op_put(key: str, value: str) -> Op[int]:
    return int(_ended((yield {"op": "put", "key": key, "value": value}))["revision"])


def _op_delete_prefix(prefix: str) -> Op[int]:
    return int(_ended((yield {"op": "delete_prefix", "prefix": prefix}))["deleted"])


def _op_txn(compare: list[dict[str, Any]], puts: dict[str, str], deletes: Iterable[str]) -> Op[int]:
    action = yield {"op": "txn", "compare": compare, "puts": puts, "deletes": list(deletes)}
    try:
        return int(_ended(action)["revision"])
    except EtcdError as err:
        if err.code == "conflict":
            return 0
        raise


def _op_publish(key: str, document: str | shardroute.Topology, also: dict[str, str] | None, replace: bool) -> Op[int]:
    text = document if isinstance(document, str) else json.dumps(document)
    op: dict[str, Any] = {"op": "publish", "key": key, "document": text, "replace": replace}
    if also:
        op["also"] = also
    return int(_ended((yield op))["revision"])


class _Client:
    """What both clients share: the session, made from the members and the options.

    ``url``: one ``http://`` or ``https://`` member URL, several separated by commas, or a
    sequence of them (a cluster's members). ``timeout``: seconds for a whole request
    (None: the core's default). ``ca_file``, ``cert_file``, ``key_file``: TLS (see the
    module). ``user``, ``password``: etcd's authentication."""

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        timeout: float | None = None,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        user: str | None = None,
        password: str | None = None,
        _follow: dict[str, Any] | None = None,
    ) -> None:
        members = [part.strip() for part in url.split(",")] if isinstance(url, str) else list(url)
        self._options: dict[str, Any] = {"timeout": timeout, "ca_file": ca_file, "cert_file": cert_file, "key_file": key_file,
                         "user": user, "password": password}
        config: dict[str, Any] = {"source": "etcd", "members": members, **(_follow or {})}
        if timeout is not None:
            config["request_timeout_ms"] = round(timeout * 1000)
        if user is not None or password is not None:
            config.update(user=user, password=password)
        self._session = shardroute.SourceSession(config)
        self._context = tls_context(ca_file, cert_file, key_file)
        self._drive()

    def _drive(self) -> None:
        raise NotImplementedError

    @property
    def url(self) -> str:
        """The member in use."""
        return str(self._session.state["member"])

    @property
    def members(self) -> list[str]:
        """Every member's URL, in the order they are tried."""
        return list(self._session.config["members"])

    @property
    def timeout(self) -> float:
        """Seconds for a whole request."""
        return float(self._session.config["request_timeout_ms"]) / 1000

    def _following(self, follow: dict[str, Any]) -> Any:
        """A client of the same members and options whose session follows ``follow["key"]``."""
        return type(self)(self.members, **self._options, _follow=follow)


class Etcd(_Client):
    """An etcd client (see ``_Client`` for the arguments); safe to share between threads."""

    _driver: SyncDriver

    def _drive(self) -> None:
        self._driver = SyncDriver(self._session, self._context)

    def _do(self, op: Op[Result]) -> Result:
        try:
            op.send(self._driver.call(next(op)))
        except StopIteration as done:
            result: Result = done.value
            return result
        raise AssertionError("a call is one op")

    def get(self, key: str) -> EtcdValue:
        """The value of ``key`` and its ``mod_revision`` (an ``EtcdValue``), or
        ``(None, 0)`` when absent."""
        return self._do(_op_get(key))

    def get_many(self, keys: Iterable[str]) -> EtcdValues:
        """Several keys read in one transaction, so at one revision: an ``EtcdValues``,
        ``({key: EtcdValue(value, mod_revision)}, revision)``."""
        return self._do(_op_get_many(list(keys)))

    def put(self, key: str, value: str) -> int:
        """Writes ``key``; returns the new revision."""
        return self._do(_op_put(key, value))

    def delete_prefix(self, prefix: str) -> int:
        """Deletes every key that starts with ``prefix``; returns how many."""
        return self._do(_op_delete_prefix(prefix))

    def txn(self, compare: list[dict[str, Any]], puts: dict[str, str], deletes: Iterable[str] = ()) -> int:
        """All of ``puts`` and ``deletes`` in one transaction, when every ``compare`` holds
        (build them with ``same_revision`` and ``same_value``): the new revision, or 0
        when a compare failed and nothing was written."""
        return self._do(_op_txn(compare, puts, deletes))

    def cas(self, key: str, value: str, mod_revision: int) -> int:
        """Writes ``key`` only if its ``mod_revision`` is still the one read (0: absent):
        the new revision, or 0 when someone wrote it since."""
        return self.txn([same_revision(key, mod_revision)], {key: value})


class AsyncEtcd(_Client):
    """``Etcd`` for asyncio: the same calls, each a coroutine, on the running loop."""

    _driver: AsyncDriver

    def _drive(self) -> None:
        self._driver = AsyncDriver(self._session, self._context)

    async def _do(self, op: Op[Result]) -> Result:
        try:
            op.send(await self._driver.call(next(op)))
        except StopIteration as done:
            result: Result = done.value
            return result
        raise AssertionError("a call is one op")

    async def get(self, key: str) -> EtcdValue:
        """As ``Etcd.get``."""
        return await self._do(_op_get(key))

    async def get_many(self, keys: Iterable[str]) -> EtcdValues:
        """As ``Etcd.get_many``: one transaction, one revision."""
        return await self._do(_op_get_many(list(keys)))

    async def put(self, key: str, value: str) -> int:
        """As ``Etcd.put``."""
        return await self._do(_op_put(key, value))

    async def delete_prefix(self, prefix: str) -> int:
        """As ``Etcd.delete_prefix``."""
        return await self._do(_op_delete_prefix(prefix))

    async def txn(self, compare: list[dict[str, Any]], puts: dict[str, str], deletes: Iterable[str] = ()) -> int:
        """As ``Etcd.txn``."""
        return await self._do(_op_txn(compare, puts, deletes))

    async def cas(self, key: str, value: str, mod_revision: int) -> int:
        """As ``Etcd.cas``."""
        return await self.txn([same_revision(key, mod_revision)], {key: value})


# -- followers ------------------------------------------------------------------------


class _Following(Noting):
    """What both followers share: their client (``etcd``, whose session follows ``key``),
    the companions and revision of the last document read, and the first read's failure
    (raised by the constructor)."""

    error_class = EtcdError

    def __init__(
        self,
        etcd: Any,
        client: type[_Client],
        key: str,
        also: Iterable[str],
        config: shardroute.FollowerConfig | None,
        on_change: Callable[[Any], None] | None,
        on_refused: Callable[[Any, Any], None] | None,
        on_error: Callable[[Exception], None] | None,
        idle: float | None,
    ) -> None:
        super().__init__(on_change, on_refused, on_error)
        self.key = key
        self.also = tuple(also)
        follow: dict[str, Any] = {"key": key, "also": list(self.also), **(config or {})}
        if idle is not None:
            follow["idle_ms"] = round(idle * 1000)
        given = etcd if isinstance(etcd, _Client) else client(etcd)
        self.etcd = given._following(follow)
        self._companions: dict[str, str | None] = dict.fromkeys(self.also)
        self._revision: int | None = None
        self._lost: Exception | None = None  # the first read's failure, for the constructor

    @property
    def companions(self) -> dict[str, str | None]:
        """The ``also`` keys' values (None: absent), from the read that last offered a
        document the follower did not refuse."""
        return dict(self._companions)

    @property
    def revision(self) -> int | None:
        """The ``mod_revision`` of the document installed last."""
        return self._revision

    @property
    def stats(self) -> EtcdFollowerStats:
        """The counters: the core follower's, etcd reads and watch restarts."""
        stats: EtcdFollowerStats = self.etcd._session.stats
        return stats

    def _read(self) -> bool:
        """Whether the first read has ended (a document offered, none found, or lost)."""
        return self._lost is not None or self.etcd._session.state["stats"]["reads"] > 0

    def _lose(self, error: Exception) -> None:
        if self._lost is None and not self._read():
            self._lost = error  # the first read failed: the constructor raises it
        else:
            super()._lose(error)

    def _keep(self, offered: SessionOffered, state: dict[str, Any]) -> None:
        if offered.kind != "refused":
            self._companions = dict(state.get("companions") or {})
        self._revision = None if state.get("revision") is None else int(state["revision"])

    def _refreshed(self, ended: dict[str, Any]) -> SessionOffered | None:
        """A refresh's end: what became of the document (told already), None when absent."""
        return None if _ended(ended)["offered"] is None else self._offered


class EtcdFollower(_Following, SyncFollowing):
    """Follows the topology document at ``key`` (see the module docs) on a thread.

    ``etcd``: an ``Etcd`` (its members and options are used; the follower has a client of
    its own, ``etcd`` attribute, which its calls and ``publish`` may use) or the members'
    URLs. ``also``: companion keys, read in the same transaction as ``key`` (``companions``).
    ``config``: the core follower's reconnect settings. ``idle``: seconds a watch may stay
    quiet before a read checks the source (None: the core's default).

    The constructor reads etcd once (``EtcdError`` when it cannot; a missing key leaves
    ``router`` None). ``on_change(follower)`` after a new router is installed or the
    companions changed under the same router; ``on_refused(follower, offered)`` after a
    document is refused (``offered.code``, ``offered.message``; the router held is kept);
    ``on_error(error)`` when the source is lost (the session tries again by itself) or a
    callback raised."""

    def __init__(
        self,
        etcd: Etcd | str | Sequence[str],
        key: str,
        *,
        also: Iterable[str] = (),
        config: shardroute.FollowerConfig | None = None,
        on_change: Callable[[EtcdFollower], None] | None = None,
        on_refused: Callable[[EtcdFollower, SessionOffered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        idle: float | None = None,
    ) -> None:
        super().__init__(etcd, Etcd, key, also, config, on_change, on_refused, on_error, idle)
        self.etcd: Etcd
        self._drive(self.etcd._driver)
        with self._driver.lock:
            self._driver.dispatch(self._driver.session.start(now_ms()))
        self._driver.wait(lambda: bool(self._driver.notes) or self._read())
        self._tell()
        if self._lost is not None:
            self._driver.close()
            raise self._lost
        self._follow(f"etcd follower {key}")

    def refresh(self) -> SessionOffered | None:
        """Reads ``key`` now (the session's one read, shared with the watch's): None when
        it is absent, else what became of its document, told to the application before
        this returns. Raises ``EtcdError`` when etcd cannot be reached (the router held is
        kept)."""
        return self._refreshed(self._refresh())


class AsyncEtcdFollower(_Following, AsyncWaiting):
    """``EtcdFollower`` for asyncio: made by ``await AsyncEtcdFollower.start(...)`` (which
    reads etcd once), it follows on the running loop, with the same rules and callbacks
    (called on the loop); ``close()`` (or ``async with``) stops it."""

    def __init__(
        self,
        etcd: AsyncEtcd | str | Sequence[str],
        key: str,
        *,
        also: Iterable[str] = (),
        config: shardroute.FollowerConfig | None = None,
        on_change: Callable[[AsyncEtcdFollower], None] | None = None,
        on_refused: Callable[[AsyncEtcdFollower, SessionOffered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        idle: float | None = None,
    ) -> None:
        super().__init__(etcd, AsyncEtcd, key, also, config, on_change, on_refused, on_error, idle)
        self.etcd: AsyncEtcd
        self._event = asyncio.Event()
        self._task = None
        self.etcd._driver.on_note = self._note

    def _changed_hook(self) -> None:
        self._event.set()

    @classmethod
    async def start(cls, etcd: AsyncEtcd | str | Sequence[str], key: str, **options: Any) -> AsyncEtcdFollower:
        """A follower that has read etcd once (``EtcdError`` when it cannot) and follows
        from there on."""
        follower = cls(etcd, key, **options)
        driver = follower.etcd._driver
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
        """As ``EtcdFollower.refresh`` (the document is told before the call ends)."""
        return self._refreshed(await self.etcd._driver.call({"op": "refresh"}))

    async def close(self) -> None:
        """Stops following (idempotent)."""
        self._event.set()
        await self.etcd._driver.close()


def publish(
    etcd: Etcd | str | Sequence[str], key: str, document: str | shardroute.Topology, *,
    also: dict[str, str] | None = None, replace: bool = False,
) -> int:
    """Writes ``document`` (and the ``also`` keys' values, in the same transaction) to
    ``key`` with a compare-and-swap on the value read; the core's follower checks it first
    (``ShardrouteError``: ``invalid_topology``, ``no_nodes``, ``limit_exceeded``, or
    ``stale_epoch`` unless its epoch is the stored one + 1; the first document may have
    any epoch). A stored document the follower refuses is not overwritten (its refusal's
    code), unless ``replace``: then ``document``'s epoch must be above the stored one's
    and above every epoch a follower may hold. Returns the new revision; ``EtcdError``
    ``"conflict"`` when someone wrote the key between the read and the write."""
    client = etcd if isinstance(etcd, Etcd) else Etcd(etcd)
    return client._do(_op_publish(key, document, also, replace))


async def publish_async(
    etcd: AsyncEtcd | str | Sequence[str], key: str, document: str | shardroute.Topology, *,
    also: dict[str, str] | None = None, replace: bool = False,
) -> int:
    """``publish`` for asyncio."""
    client = etcd if isinstance(etcd, AsyncEtcd) else AsyncEtcd(etcd)
    return await client._do(_op_publish(key, document, also, replace))
