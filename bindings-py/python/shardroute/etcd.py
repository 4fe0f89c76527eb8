"""Follow a topology kept in etcd, and publish one, with the core's follower deciding.

``Etcd`` is a small etcd v3 client over etcd's JSON gateway (``/v3/kv/...``,
``/v3/watch``; etcd 3.4 and later), standard library only: keys and values are ``str``
(base64 on the wire), revisions ``int`` (decimal strings on the wire).

``EtcdFollower`` watches one key and hands every value it reads to the core's
``shardroute.TopologyFollower``, which decides: it installs a newer epoch, refuses an
invalid document, a lower epoch or an older revision (counted by code in ``stats``) and
keeps the last good router, and says how long to wait before reconnecting after etcd is
lost. The shell only reads, watches, sleeps and calls back. ``publish`` writes a
document with a compare-and-swap that the same follower builds (the epoch must be the
stored one + 1, the document one the follower would install).

    from shardroute.etcd import EtcdFollower, publish

    with EtcdFollower("http://127.0.0.1:2379", "/app/topology") as follower:
        router = follower.router                  # the current Router (None: no document yet)
        publish(follower.etcd, "/app/topology", next_document)
        follower.wait_for_epoch(router.epoch + 1, timeout=5)

The Node twin is ``shardroute/etcd``, with the same names in camelCase.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypedDict

import shardroute

__all__ = [
    "Etcd", "EtcdError", "EtcdEvent", "EtcdFollower", "EtcdFollowerStats", "Watch",
    "prefix_end", "publish", "same_revision", "same_value",
]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def prefix_end(prefix: str) -> str:
    """The end of the range of keys that start with ``prefix`` (etcd's ``range_end``)."""
    raw = bytearray(prefix.encode())
    while raw and raw[-1] == 0xFF:
        raw.pop()
    if not raw:
        return "\0"  # every key
    raw[-1] += 1
    return raw.decode("latin-1")


def same_revision(key: str, mod_revision: int) -> dict[str, Any]:
    """A txn compare: ``key``'s mod_revision is ``mod_revision`` (0: the key is absent)."""
    return {"key": _b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": str(mod_revision)}


def same_value(key: str, value: str) -> dict[str, Any]:
    """A txn compare: ``key`` holds ``value``."""
    return {"key": _b64(key), "target": "VALUE", "result": "EQUAL", "value": _b64(value)}


class EtcdError(ConnectionError):
    """etcd could not be reached (``code`` ``"unreachable"``), answered with an HTTP error
    (``"http"``, with ``status``), or refused a compare-and-swap (``"conflict"``)."""

    def __init__(self, message: str, code: str, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class EtcdEvent(TypedDict):
    """One change a watch saw: ``value`` is None for a delete."""

    type: str  # "put" or "delete"
    key: str
    value: str | None
    mod_revision: int


class Etcd:
    """One etcd endpoint (``http://host:port``); every call is one HTTP request (a new
    connection each time, so an instance is safe to share between threads)."""

    def __init__(self, url: str, *, timeout: float = 10.0) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(f"etcd: expected an http://host:port URL, got {url!r}")
        self.url = url.rstrip("/")
        self.host = parsed.hostname
        self.port = parsed.port or 2379
        self.timeout = timeout

    def _connection(self, timeout: float | None) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POSTs ``body`` to ``path`` and returns the JSON answer."""
        connection = self._connection(self.timeout)
        try:
            connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as err:
            raise EtcdError(f"etcd {self.url}{path}: {err}", "unreachable") from err
        finally:
            connection.close()
        if response.status != 200:
            raise EtcdError(f"etcd {self.url}{path}: HTTP {response.status}: {data[:500]!r}", "http", response.status)
        answer: dict[str, Any] = json.loads(data)
        return answer

    # -- reads and writes -------------------------------------------------------------

    def get(self, key: str) -> tuple[str | None, int]:
        """The value of ``key`` and its ``mod_revision``, or ``(None, 0)`` when absent."""
        kvs = self.call("/v3/kv/range", {"key": _b64(key)}).get("kvs", [])
        if not kvs:
            return None, 0
        return _unb64(kvs[0].get("value", "")), int(kvs[0]["mod_revision"])

    def get_many(self, keys: Iterable[str]) -> tuple[dict[str, tuple[str | None, int]], int]:
        """Several keys read in one transaction, so at one revision:
        ``({key: (value, mod_revision)}, revision)``."""
        keys = list(keys)
        answer = self.call("/v3/kv/txn", {"success": [{"request_range": {"key": _b64(key)}} for key in keys]})
        found: dict[str, tuple[str | None, int]] = {}
        for key, response in zip(keys, answer.get("responses", [])):
            kvs = response["response_range"].get("kvs", [])
            found[key] = (_unb64(kvs[0].get("value", "")), int(kvs[0]["mod_revision"])) if kvs else (None, 0)
        return found, int(answer["header"]["revision"])

    def put(self, key: str, value: str) -> int:
        """Writes ``key``; returns the new revision."""
        return int(self.call("/v3/kv/put", {"key": _b64(key), "value": _b64(value)})["header"]["revision"])

    def delete_prefix(self, prefix: str) -> int:
        """Deletes every key that starts with ``prefix``; returns how many."""
        answer = self.call("/v3/kv/deleterange", {"key": _b64(prefix), "range_end": _b64(prefix_end(prefix))})
        return int(answer.get("deleted", 0))

    def txn(self, compare: list[dict[str, Any]], puts: dict[str, str], deletes: Iterable[str] = ()) -> int:
        """All of ``puts`` and ``deletes`` in one transaction, when every ``compare`` holds
        (build them with ``same_revision`` and ``same_value``): the new revision, or 0
        when a compare failed and nothing was written."""
        success: list[dict[str, Any]] = [
            {"request_put": {"key": _b64(key), "value": _b64(value)}} for key, value in puts.items()
        ]
        success += [{"request_delete_range": {"key": _b64(key)}} for key in deletes]
        answer = self.call("/v3/kv/txn", {"compare": compare, "success": success})
        return int(answer["header"]["revision"]) if answer.get("succeeded", False) else 0

    def cas(self, key: str, value: str, mod_revision: int) -> int:
        """Writes ``key`` only if its ``mod_revision`` is still the one read (0: absent):
        the new revision, or 0 when someone wrote it since."""
        return self.txn([same_revision(key, mod_revision)], {key: value})

    # -- watch ------------------------------------------------------------------------

    def watch(self, key: str, *, range_end: str | None = None, start_revision: int = 0) -> Watch:
        """A watch of ``key`` (or of the keys in ``[key, range_end)``) from
        ``start_revision`` (0: from now): iterate it for the batches of events; ``close()``
        it from any thread."""
        return Watch(self, key, range_end, start_revision)


class Watch:
    """One open ``/v3/watch`` stream; iterating yields each batch of events (a list,
    never empty). It ends by raising ``EtcdError`` when the stream breaks, the server
    closes it or cancels it (a compacted ``start_revision``), and silently once closed."""

    def __init__(self, etcd: Etcd, key: str, range_end: str | None, start_revision: int) -> None:
        create: dict[str, Any] = {"key": _b64(key)}
        if range_end is not None:
            create["range_end"] = _b64(range_end)
        if start_revision:
            create["start_revision"] = str(start_revision)
        self.closed = False
        self._connection = etcd._connection(etcd.timeout)
        try:
            self._connection.request(
                "POST", "/v3/watch", json.dumps({"create_request": create}), {"Content-Type": "application/json"}
            )
            self._response = self._connection.getresponse()
            if self._response.status != 200:
                raise EtcdError(f"etcd watch: HTTP {self._response.status}", "http", self._response.status)
            # Events arrive whenever they happen: no read timeout from here on.
            if self._connection.sock is not None:
                self._connection.sock.settimeout(None)
        except (OSError, http.client.HTTPException) as err:
            self._connection.close()
            raise EtcdError(f"etcd watch: {err}", "unreachable") from err

    def __iter__(self) -> Iterator[list[EtcdEvent]]:
        try:
            while True:
                line = self._response.readline()
                if self.closed:
                    return
                if not line:
                    raise EtcdError("etcd watch: the server closed the stream", "unreachable")
                result = json.loads(line).get("result", {})
                if result.get("canceled"):
                    reason = result.get("cancel_reason") or f"compacted at {result.get('compact_revision')}"
                    raise EtcdError(f"etcd watch canceled: {reason}", "unreachable")
                events: list[EtcdEvent] = [
                    {
                        "type": "delete" if event.get("type") == "DELETE" else "put",
                        "key": _unb64(event["kv"]["key"]),
                        "value": None if event.get("type") == "DELETE" else _unb64(event["kv"].get("value", "")),
                        "mod_revision": int(event["kv"]["mod_revision"]),
                    }
                    for event in result.get("events", [])
                ]
                if events:
                    yield events
        except (OSError, http.client.HTTPException, ValueError) as err:
            if self.closed:
                return
            raise EtcdError(f"etcd watch: {err}", "unreachable") from err
        finally:
            self._connection.close()

    def close(self) -> None:
        """Ends the stream: a blocked iteration returns (and closes the connection; a
        close from here would race its read)."""
        self.closed = True
        sock = self._connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        """Closes the stream and its connection (from the thread that iterates it)."""
        self.close()
        self._connection.close()


class EtcdFollowerStats(shardroute.FollowerStats):
    """The core follower's counters, and the shell's: etcd reads and watch restarts."""

    reads: int
    watch_restarts: int


class EtcdFollower:
    """Follows the topology document at ``key`` (see the module docs).

    The constructor reads etcd once (``EtcdError`` when it cannot be reached; a missing key
    leaves ``router`` None) and starts a daemon thread that watches ``key`` and the
    ``also`` keys. Every change is answered by reading them all again in one transaction,
    never by applying the event itself, so the document and its companions
    (``companions``: the ``also`` values) always come from one etcd revision. The watch
    covers the range from the least to the greatest of those keys: a change to another key
    inside it costs one read (counted ``unchanged``). A broken watch waits as long as the
    core's follower says (``disconnected``), reads again, and reopens from the revision
    after that read, so nothing written meanwhile is missed.

    ``on_change(follower)`` runs on the watch thread (or the caller of ``refresh``) after
    a new router is installed, or when the companions changed under the same router;
    ``on_refused(follower, offered)`` after a document is refused (``offered.code`` and
    ``offered.message`` say why; the router held is kept); ``on_error(error)`` receives
    each watch failure. None of them may raise.
    """

    def __init__(
        self,
        etcd: Etcd | str,
        key: str,
        *,
        also: Iterable[str] = (),
        config: shardroute.FollowerConfig | None = None,
        on_change: Callable[[EtcdFollower], None] | None = None,
        on_refused: Callable[[EtcdFollower, shardroute.Offered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self.etcd = Etcd(etcd) if isinstance(etcd, str) else etcd
        self.key = key
        self.also = tuple(also)
        self._follower = shardroute.TopologyFollower(config)
        self._on_change = on_change
        self._on_refused = on_refused
        self._on_error = on_error
        self._reading = threading.Lock()  # one read-and-offer at a time, in revision order
        self._changed = threading.Condition()
        self._companions: dict[str, str | None] = {name: None for name in self.also}
        self._read_revision = 0
        self._reads = 0
        self._restarts = 0
        self._stop = threading.Event()
        self._watch: Watch | None = None
        self.refresh()
        self._thread = threading.Thread(target=self._run, name=f"etcd follower {key}", daemon=True)
        self._thread.start()

    # -- what it holds ----------------------------------------------------------------

    @property
    def router(self) -> shardroute.Router | None:
        """The router installed last (None before the first document)."""
        with self._changed:
            return self._follower.router

    @property
    def companions(self) -> dict[str, str | None]:
        """The ``also`` keys' values (None: absent), from the read that last offered a
        document the follower did not refuse."""
        with self._changed:
            return dict(self._companions)

    @property
    def revision(self) -> int | None:
        """The ``mod_revision`` of the document installed last."""
        with self._changed:
            return self._follower.revision

    @property
    def stats(self) -> EtcdFollowerStats:
        with self._changed:
            core = self._follower.stats
            return {**core, "reads": self._reads, "watch_restarts": self._restarts}

    # -- reading ----------------------------------------------------------------------

    def refresh(self) -> shardroute.Offered | None:
        """Reads the key and its companions now and offers the document: what became of
        it, or None when the key is absent. Raises ``EtcdError`` when etcd cannot be
        reached (the router held is kept)."""
        with self._reading:
            found, revision = self.etcd.get_many((self.key, *self.also))
            value, mod_revision = found[self.key]
            with self._changed:
                self._reads += 1
                self._read_revision = max(self._read_revision, revision)
                if value is None:
                    return None
                offered = self._follower.offer(value, mod_revision, _now_ms())
                companions = {name: found[name][0] for name in self.also}
                changed = offered.kind == "installed"
                if offered.kind != "refused" and companions != self._companions:
                    self._companions = companions
                    changed = True
                if changed:
                    self._changed.notify_all()
            if changed and self._on_change is not None:
                self._on_change(self)
            if offered.kind == "refused" and self._on_refused is not None:
                self._on_refused(self, offered)
            return offered

    def wait_for_epoch(self, epoch: int, timeout: float) -> bool:
        """Waits until the router's epoch is at least ``epoch``: True, or False after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                router = self._follower.router
                if router is not None and router.epoch >= epoch:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)

    def _run(self) -> None:
        keys = (self.key, *self.also)
        low, high = min(keys), max(keys) + "\0"
        while not self._stop.is_set():
            try:
                with self.etcd.watch(low, range_end=high, start_revision=self._read_revision + 1) as watch:
                    self._watch = watch
                    if self._stop.is_set():
                        return
                    for _ in watch:
                        self.refresh()
                if self._stop.is_set():
                    return
                raise EtcdError("etcd watch: closed", "unreachable")
            except EtcdError as err:
                if self._stop.is_set():
                    return
                if self._on_error is not None:
                    self._on_error(err)
            self._restarts += 1
            self._reconnect()

    def _reconnect(self) -> None:
        """Waits as the core says, then reads again until a read succeeds."""
        while not self._stop.is_set():
            with self._changed:
                until = self._follower.disconnected(_now_ms())
            if self._stop.wait(max(0, until - _now_ms()) / 1000):
                return
            try:
                self.refresh()
            except EtcdError as err:
                if self._on_error is not None:
                    self._on_error(err)
                continue
            with self._changed:
                self._follower.connected()
            return

    def close(self) -> None:
        """Stops the watch thread (idempotent)."""
        self._stop.set()
        if self._watch is not None:
            self._watch.close()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> EtcdFollower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def publish(etcd: Etcd | str, key: str, document: str | shardroute.Topology) -> int:
    """Writes ``document`` to ``key`` with a compare-and-swap on the value read: the core's
    follower checks it first (``ShardrouteError``: ``invalid_topology``, ``no_nodes``,
    ``limit_exceeded``, or ``stale_epoch`` unless its epoch is the stored one + 1; the first
    document may have any epoch). Returns the new revision; ``EtcdError`` with code
    ``"conflict"`` when someone wrote the key between the read and the write."""
    etcd = Etcd(etcd) if isinstance(etcd, str) else etcd
    follower = shardroute.TopologyFollower()
    value, mod_revision = etcd.get(key)
    if value is not None:
        offered = follower.offer(value, mod_revision, _now_ms())
        error = offered.error()
        if error is not None:
            # Not overwritten: the epoch to follow a document nobody can read is unknown.
            raise error
    write = follower.publish(document)
    revision = etcd.cas(key, write["document"], write["expected_revision"] or 0)
    if not revision:
        raise EtcdError(f"publish: {key} changed since it was read (epoch {write['epoch']} not written)", "conflict")
    return revision

