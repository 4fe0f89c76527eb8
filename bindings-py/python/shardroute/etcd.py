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

For asyncio: ``AsyncEtcd``, ``AsyncEtcdFollower`` (``await AsyncEtcdFollower.start(...)``)
and ``publish_async``, the same calls as coroutines over asyncio's streams. Each etcd
operation is written once (a generator of its one request) and both clients perform it.

Every call is bounded: ``timeout`` for the whole request (a watch: until its stream
opens), not for each read; an answer, or a watch line, longer than ``MAX_ANSWER_BYTES``
is refused with ``shardroute.LimitExceededError`` (code ``limit_exceeded``) before it is
buffered. The followers count either as a lost source (``on_error``, the core's backoff).

The Node twin is ``shardroute/etcd``, with the same names in camelCase.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator, Sequence
from typing import Any, TypedDict, TypeVar

import shardroute
from shardroute._sources import (
    MAX_DOCUMENT_BYTES, AsyncWaiting, Following, _chunks, _Deadline, _body, _read_body, _read_head, too_long,
)

__all__ = [
    "AsyncEtcd", "AsyncEtcdFollower", "Etcd", "EtcdError", "EtcdEvent", "EtcdFollower", "EtcdFollowerStats", "Watch",
    "prefix_end", "publish", "publish_async", "same_revision", "same_value",
]


#: The longest answer read from etcd, and the longest line of a watch stream, derived
#: from the core's limit (``shardroute.MAX_DOCUMENT_BYTES``) rather than held here: a
#: document at that limit in base64 is 4/3 of it; twice the limit leaves room for the
#: companions and the JSON around them. Longer is refused
#: (``shardroute.LimitExceededError``) before it is buffered.
MAX_ANSWER_BYTES = 2 * MAX_DOCUMENT_BYTES


def _b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def _unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def prefix_end(prefix: str) -> bytes:
    """The end of the range of keys that start with ``prefix`` (etcd's ``range_end``), as
    bytes: the prefix's UTF-8 with its last byte below 0xFF raised by one, which need not
    be UTF-8 any more (``b"\\0"``, every key, for an empty or all-0xFF prefix)."""
    raw = bytearray(prefix.encode())
    while raw and raw[-1] == 0xFF:
        raw.pop()
    if not raw:
        return b"\0"
    raw[-1] += 1
    return bytes(raw)


def same_revision(key: str, mod_revision: int) -> dict[str, Any]:
    """A txn compare: ``key``'s mod_revision is ``mod_revision`` (0: the key is absent)."""
    return {"key": _b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": str(mod_revision)}


def same_value(key: str, value: str) -> dict[str, Any]:
    """A txn compare: ``key`` holds ``value``."""
    return {"key": _b64(key), "target": "VALUE", "result": "EQUAL", "value": _b64(value)}


class EtcdError(ConnectionError):
    """etcd could not be reached (``code`` ``"unreachable"``), answered with an HTTP error
    (``"http"``, with ``status``) or with something that is not etcd's answer
    (``"malformed"``), refused a compare-and-swap (``"conflict"``), or a watch heard
    nothing for its idle time (``"idle"``)."""

    #: An ``"http"`` error that says the member cannot serve now (HTTP 503, or the
    #: gateway's gRPC code 14, UNAVAILABLE): the next member is tried, as for ``unreachable``.
    _unavailable = False

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


# -- the requests, written once for both clients -------------------------------------
#
# Each operation is a generator that yields one request, ``(path, body)``, receives the
# JSON answer, and returns the result: ``Etcd`` performs it blocking, ``AsyncEtcd``
# awaited.

Result = TypeVar("Result")
Op = Generator[tuple[str, dict[str, Any]], dict[str, Any], Result]


def _op_get(key: str) -> Op[tuple[str | None, int]]:
    kvs = (yield "/v3/kv/range", {"key": _b64(key)}).get("kvs", [])
    if not kvs:
        return None, 0
    return _unb64(kvs[0].get("value", "")), int(kvs[0]["mod_revision"])


def _op_get_many(keys: list[str]) -> Op[tuple[dict[str, tuple[str | None, int]], int]]:
    answer = yield "/v3/kv/txn", {"success": [{"request_range": {"key": _b64(key)}} for key in keys]}
    found: dict[str, tuple[str | None, int]] = {}
    for key, response in zip(keys, answer.get("responses", [])):
        kvs = response["response_range"].get("kvs", [])
        found[key] = (_unb64(kvs[0].get("value", "")), int(kvs[0]["mod_revision"])) if kvs else (None, 0)
    return found, int(answer["header"]["revision"])


def _op_put(key: str, value: str) -> Op[int]:
    return int((yield "/v3/kv/put", {"key": _b64(key), "value": _b64(value)})["header"]["revision"])


def _op_delete_prefix(prefix: str) -> Op[int]:
    answer = yield "/v3/kv/deleterange", {"key": _b64(prefix), "range_end": _b64(prefix_end(prefix))}
    return int(answer.get("deleted", 0))


def _op_txn(compare: list[dict[str, Any]], puts: dict[str, str], deletes: Iterable[str]) -> Op[int]:
    success: list[dict[str, Any]] = [{"request_put": {"key": _b64(key), "value": _b64(value)}} for key, value in puts.items()]
    success += [{"request_delete_range": {"key": _b64(key)}} for key in deletes]
    answer = yield "/v3/kv/txn", {"compare": compare, "success": success}
    return int(answer["header"]["revision"]) if answer.get("succeeded", False) else 0


def _watch_request(key: str, range_end: str | bytes | None, start_revision: int) -> bytes:
    create: dict[str, Any] = {"key": _b64(key)}
    if range_end is not None:
        create["range_end"] = _b64(range_end)
    if start_revision:
        create["start_revision"] = str(start_revision)
    return json.dumps({"create_request": create}).encode()


def _watch_events(line: bytes | bytearray) -> list[EtcdEvent]:
    """One line of a watch stream: its events (none for `created` and progress lines);
    ``EtcdError`` when etcd cancelled the watch (a compacted start revision)."""
    result = json.loads(line).get("result", {})
    if result.get("canceled"):
        reason = result.get("cancel_reason") or f"compacted at {result.get('compact_revision')}"
        raise EtcdError(f"etcd watch canceled: {reason}", "unreachable")
    return [
        {
            "type": "delete" if event.get("type") == "DELETE" else "put",
            "key": _unb64(event["kv"]["key"]),
            "value": None if event.get("type") == "DELETE" else _unb64(event["kv"].get("value", "")),
            "mod_revision": int(event["kv"]["mod_revision"]),
        }
        for event in result.get("events", [])
    ]


#: The HTTP status of etcd's gateway for a member that cannot serve now (shutting down,
#: restarting): gRPC code 14, UNAVAILABLE, which its error body carries as ``code``.
_HTTP_UNAVAILABLE = 503
_GRPC_UNAVAILABLE = 14
#: How much of an error answer to a watch is read, for its message and its gRPC code.
_ERROR_BYTES = 4096


def _grpc_code(data: bytes) -> int | None:
    """The gRPC code of an etcd gateway error body (``{"code": 14, "message": ...}``), if
    it is one."""
    try:
        answer = json.loads(data)
    except (ValueError, RecursionError):
        return None
    code = answer.get("code") if isinstance(answer, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _http_error(where: str, status: int, data: bytes) -> EtcdError:
    """The ``"http"`` error of an answer with ``status``, marked unavailable (the next
    member is tried) for a 503 or a gRPC code 14 body."""
    error = EtcdError(f"{where}: HTTP {status}: {data[:500]!r}", "http", status)
    error._unavailable = status == _HTTP_UNAVAILABLE or _grpc_code(data) == _GRPC_UNAVAILABLE
    return error


def _moves_on(err: EtcdError) -> bool:
    """Whether a request that failed with ``err`` goes to the next member: unreachable, or
    answered that it cannot serve now (503 / UNAVAILABLE)."""
    return err.code == "unreachable" or err._unavailable


def _answer(url: str, path: str, status: int, data: bytes) -> dict[str, Any]:
    if status != 200:
        raise _http_error(f"etcd {url}{path}", status, data)
    try:
        answer = json.loads(data)
    except ValueError as err:
        raise EtcdError(f"etcd {url}{path}: an answer that is not JSON: {data[:200]!r}", "malformed") from err
    if not isinstance(answer, dict):
        raise EtcdError(f"etcd {url}{path}: an answer that is not a JSON object: {data[:200]!r}", "malformed")
    return answer


def _result(op: Op[Result], answer: dict[str, Any], where: str) -> Result:
    """What `op` makes of `answer`; ``EtcdError`` code ``"malformed"`` for an answer that
    is not etcd's (a field missing, not base64, not UTF-8), never a stray KeyError."""
    try:
        op.send(answer)
    except StopIteration as done:
        result: Result = done.value
        return result
    except (KeyError, IndexError, TypeError, ValueError) as err:
        raise EtcdError(f"etcd {where}: an answer that is not etcd's ({err!r})", "malformed") from err
    raise AssertionError("an etcd operation makes one request")


class _Endpoint:
    """What both clients share: the members' URLs, parsed once, and which one is in use.

    ``url`` is one ``http://host:port``, several separated by commas, or a sequence of
    them (the members of a cluster). Calls, and a watch's opening, go to the member in
    use; when it cannot be reached or answers that it cannot serve now (HTTP 503, or the
    gateway's gRPC code 14, UNAVAILABLE: a member shutting down or restarting), the next
    one is tried, round the list once, and the one that answered is used from then on (a
    watch reopened after a failure too). After the last member, its error is raised."""

    def __init__(self, url: str | Sequence[str], *, timeout: float = 10.0) -> None:
        urls = [part.strip() for part in url.split(",")] if isinstance(url, str) else list(url)
        self.members: list[tuple[str, str, int]] = []
        for each in urls:
            parsed = urllib.parse.urlsplit(each)
            if parsed.scheme != "http" or not parsed.hostname:
                raise ValueError(f"etcd: expected http://host:port URLs, got {each!r}")
            self.members.append((each.rstrip("/"), parsed.hostname, parsed.port or 2379))
        if not self.members:
            raise ValueError("etcd: no URL")
        self._in_use = 0
        self.timeout = timeout

    @property
    def url(self) -> str:
        """The member in use."""
        return self.members[self._in_use][0]

    @property
    def host(self) -> str:
        return self.members[self._in_use][1]

    @property
    def port(self) -> int:
        return self.members[self._in_use][2]

    def _leave(self, member: int) -> None:
        """Moves past ``member`` to the next one, unless a concurrent call has moved on
        already (it must not skip a member)."""
        if self._in_use == member:
            self._in_use = (member + 1) % len(self.members)


class Etcd(_Endpoint):
    """One etcd endpoint (``http://host:port``); every call is one HTTP request (a new
    connection each time, so an instance is safe to share between threads)."""


    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POSTs ``body`` to ``path`` and returns the JSON answer (the next member on an
        unreachable or unavailable one, round the list once)."""
        for _ in range(len(self.members) - 1):
            member = self._in_use
            try:
                return self._call_one(member, path, body)
            except EtcdError as err:
                if not _moves_on(err):
                    raise
                self._leave(member)
        return self._call_one(self._in_use, path, body)

    def _call_one(self, member: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """One request to ``member`` within ``timeout`` as a whole (not per read), its
        answer bounded by ``MAX_ANSWER_BYTES`` before it is buffered."""
        url, host, port = self.members[member]
        with _Deadline(self.timeout) as deadline:
            connection = deadline.connection(http.client.HTTPConnection, host, port)
            try:
                connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
                response = connection.getresponse()
                data = _read_body(response, MAX_ANSWER_BYTES, f"etcd {url}{path}")
                if deadline.passed:  # cut off: what was read is not the answer
                    raise TimeoutError()
            except shardroute.ShardrouteError:
                raise
            except (OSError, http.client.HTTPException, ValueError) as err:
                why = f"no whole answer within {self.timeout:g} s" if deadline.passed else str(err)
                raise EtcdError(f"etcd {url}{path}: {why}", "unreachable") from err
            finally:
                connection.close()
        return _answer(url, path, response.status, data)

    def _do(self, op: Op[Result]) -> Result:
        path, body = next(op)
        return _result(op, self.call(path, body), f"{self.url}{path}")

    def get(self, key: str) -> tuple[str | None, int]:
        """The value of ``key`` and its ``mod_revision``, or ``(None, 0)`` when absent."""
        return self._do(_op_get(key))

    def get_many(self, keys: Iterable[str]) -> tuple[dict[str, tuple[str | None, int]], int]:
        """Several keys read in one transaction, so at one revision:
        ``({key: (value, mod_revision)}, revision)``."""
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

    def watch(
        self, key: str, *, range_end: str | bytes | None = None, start_revision: int = 0, idle: float | None = None
    ) -> Watch:
        """A watch of ``key`` (or of the keys in ``[key, range_end)``) from
        ``start_revision`` (0: from now): iterate it for the batches of events; ``close()``
        it from any thread."""
        return Watch(self, key, range_end, start_revision, idle)


class Watch:
    """One open ``/v3/watch`` stream; iterating yields each batch of events (a list,
    never empty). It ends by raising ``EtcdError`` when the stream breaks, the server
    closes it or cancels it (a compacted ``start_revision``), and silently once closed."""

    def __init__(
        self, etcd: Etcd, key: str, range_end: str | bytes | None, start_revision: int, idle: float | None = None
    ) -> None:
        self.closed = False
        request = _watch_request(key, range_end, start_revision)
        # The member in use, or the next one when it cannot be reached or cannot serve
        # now (503 / UNAVAILABLE), round the list once, as a call.
        for _ in range(len(etcd.members) - 1):
            member = etcd._in_use
            try:
                self._open(etcd, member, request, idle)
                return
            except EtcdError as err:
                if not _moves_on(err):
                    raise
                etcd._leave(member)
        self._open(etcd, etcd._in_use, request, idle)

    def _open(self, etcd: Etcd, member: int, request: bytes, idle: float | None) -> None:
        """Opens the stream at ``member``: status and headers within ``timeout`` as a whole."""
        url, host, port = etcd.members[member]
        with _Deadline(etcd.timeout) as deadline:
            self._connection = deadline.connection(http.client.HTTPConnection, host, port)
            try:
                self._connection.request("POST", "/v3/watch", request, {"Content-Type": "application/json"})
                self._response = self._connection.getresponse()
                if self._response.status != 200:
                    try:  # a little of it, for the message and the gateway's gRPC code
                        data = _read_body(self._response, _ERROR_BYTES, f"etcd watch at {url}")
                    except shardroute.ShardrouteError:
                        data = b""
                    if not deadline.passed:
                        raise _http_error(f"etcd watch at {url}", self._response.status, data)
                deadline.cancel()
                if deadline.passed:  # cut off: what was read is not the answer
                    raise TimeoutError()
                # Events arrive whenever they happen: no read timeout from here on, unless the
                # caller wants to hear of `idle` seconds without any (code "idle").
                if self._connection.sock is not None:
                    self._connection.sock.settimeout(idle)
            except (OSError, http.client.HTTPException, ValueError, EtcdError) as err:
                self._connection.close()
                if isinstance(err, EtcdError):
                    raise
                why = f"not open within {etcd.timeout:g} s" if deadline.passed else str(err)
                raise EtcdError(f"etcd watch at {url}: {why}", "unreachable") from err

    def __iter__(self) -> Iterator[list[EtcdEvent]]:
        try:
            while True:
                # One line at most MAX_ANSWER_BYTES long, whatever the chunk sizes say.
                line = self._response.readline(MAX_ANSWER_BYTES + 1)
                if self.closed:
                    return
                if not line:
                    raise EtcdError("etcd watch: the server closed the stream", "unreachable")
                if len(line) > MAX_ANSWER_BYTES:
                    raise too_long("etcd watch: a line", MAX_ANSWER_BYTES)
                events = _watch_events(line)
                if events:
                    yield events
        except TimeoutError as err:
            if self.closed:
                return
            raise EtcdError("etcd watch: nothing arrived within the idle time", "idle") from err
        except (EtcdError, shardroute.ShardrouteError):
            raise  # as raised here (an EtcdError is an OSError: not to be wrapped below)
        except (KeyError, TypeError) as err:
            raise EtcdError(f"etcd watch: an event that is not etcd's ({err!r})", "malformed") from err
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


class _Following(Following):
    """What both followers share: the core's follower, the companions, the counters, and
    what to do with one read (``_offer``). Thread-safe: the sync follower's watch thread
    and its callers share it."""

    def __init__(
        self,
        key: str,
        also: Iterable[str],
        config: shardroute.FollowerConfig | None,
        on_change: Callable[[Any], None] | None,
        on_refused: Callable[[Any, shardroute.Offered], None] | None,
        on_error: Callable[[Exception], None] | None,
        idle: float | None = None,
    ) -> None:
        self.key = key
        self.idle = idle
        self.also = tuple(also)
        keys = (key, *self.also)
        self._range = (min(keys), max(keys) + "\0")  # what the watch covers
        super().__init__(config, on_change, on_refused, on_error)
        self._companions: dict[str, str | None] = {name: None for name in self.also}
        self._read_revision = 0
        self._reads = 0
        self._restarts = 0

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

    def _keys(self) -> list[str]:
        return [self.key, *self.also]

    def _offer(self, found: dict[str, tuple[str | None, int]], revision: int) -> shardroute.Offered | None:
        """One read, at one revision: the document offered to the core's follower, the
        companions kept unless it was refused, the callbacks called."""
        value, mod_revision = found[self.key]
        with self._changed:
            self._reads += 1
            self._read_revision = max(self._read_revision, revision)
            if value is None:
                return None
            offered = self._follower.offer(value, mod_revision, _now_ms())
            companions = {name: found[name][0] for name in self.also}
            self._took(offered)
            changed = offered.kind == "installed"
            if offered.kind != "refused" and companions != self._companions:
                self._companions = companions
                changed = True
                self._changed.notify_all()
        self._tell(offered, changed)
        return offered



class EtcdFollower(_Following):
    """Follows the topology document at ``key`` (see the module docs), on a thread.

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
        etcd: Etcd | str | Sequence[str],
        key: str,
        *,
        also: Iterable[str] = (),
        config: shardroute.FollowerConfig | None = None,
        on_change: Callable[[EtcdFollower], None] | None = None,
        on_refused: Callable[[EtcdFollower, shardroute.Offered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        idle: float | None = None,
    ) -> None:
        super().__init__(key, also, config, on_change, on_refused, on_error, idle)
        self.etcd = etcd if isinstance(etcd, Etcd) else Etcd(etcd)
        self._reading = threading.Lock()  # one read-and-offer at a time, in revision order
        self._stop = threading.Event()
        self._watch: Watch | None = None
        self.refresh()
        self._thread = threading.Thread(target=self._run, name=f"etcd follower {key}", daemon=True)
        self._thread.start()

    def refresh(self) -> shardroute.Offered | None:
        """Reads the key and its companions now and offers the document: what became of
        it, or None when the key is absent. Raises ``EtcdError`` when etcd cannot be
        reached (the router held is kept)."""
        with self._reading:
            return self._offer(*self.etcd.get_many(self._keys()))

    def wait_for_epoch(self, epoch: int, timeout: float) -> bool:
        """Waits until the router's epoch is at least ``epoch``: True, or False after
        ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self._epoch_reached(epoch), timeout)

    def _run(self) -> None:
        low, high = self._range
        while not self._stop.is_set():
            try:
                with self.etcd.watch(low, range_end=high, start_revision=self._read_revision + 1, idle=self.idle) as watch:
                    self._watch = watch
                    if self._stop.is_set():
                        return
                    for _ in watch:
                        self.refresh()
                if self._stop.is_set():
                    return
                raise EtcdError("etcd watch: closed", "unreachable")
            except (EtcdError, shardroute.ShardrouteError) as err:
                if self._stop.is_set():
                    return
                if err.code == "idle":
                    # Quiet, or a member that stopped answering: a read says which (and
                    # moves to another member if it must); then a new watch.
                    try:
                        self.refresh()
                        continue
                    except (EtcdError, shardroute.ShardrouteError) as lost:
                        err = lost
                wait_s = self._lost(err)
            self._restarts += 1
            # Wait as the core says, then read again until a read succeeds.
            while not self._stop.wait(wait_s):
                try:
                    self.refresh()
                except (EtcdError, shardroute.ShardrouteError) as err:
                    wait_s = self._lost(err)
                    continue
                self._back()
                break

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


# -- asyncio ---------------------------------------------------------------------------


def _http_request(host: str, port: int, path: str, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


class AsyncEtcd(_Endpoint):
    """``Etcd`` for asyncio: the same calls, each a coroutine, over asyncio's streams (one
    connection per request; standard library only)."""

    async def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """As ``Etcd.call``: the next member on an unreachable or unavailable one."""
        for _ in range(len(self.members) - 1):
            member = self._in_use
            try:
                return await self._call_one(member, path, body)
            except EtcdError as err:
                if not _moves_on(err):
                    raise
                self._leave(member)
        return await self._call_one(self._in_use, path, body)

    async def _call_one(self, member: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = self.members[member][0]
        try:
            status, data = await asyncio.wait_for(self._exchange(member, path, json.dumps(body).encode()), self.timeout)
        except shardroute.ShardrouteError:
            raise
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError) as err:
            raise EtcdError(f"etcd {url}{path}: {err!r}", "unreachable") from err
        return _answer(url, path, status, data)

    async def _exchange(self, member: int, path: str, body: bytes) -> tuple[int, bytes]:
        url, host, port = self.members[member]
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(_http_request(host, port, path, body))
            status, headers = await _read_head(reader)
            return status, await _body(reader, headers, MAX_ANSWER_BYTES, f"etcd {url}{path}")
        finally:
            writer.close()

    async def _do(self, op: Op[Result]) -> Result:
        path, body = next(op)
        return _result(op, await self.call(path, body), f"{self.url}{path}")

    async def get(self, key: str) -> tuple[str | None, int]:
        """As ``Etcd.get``."""
        return await self._do(_op_get(key))

    async def get_many(self, keys: Iterable[str]) -> tuple[dict[str, tuple[str | None, int]], int]:
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

    async def watch(
        self, key: str, *, range_end: str | bytes | None = None, start_revision: int = 0, idle: float | None = None
    ) -> AsyncIterator[list[EtcdEvent]]:
        """As ``Etcd.watch``: the batches of events, until the stream breaks
        (``EtcdError``); stop it by leaving the loop or cancelling its task."""
        request = _watch_request(key, range_end, start_revision)
        # The member in use, or the next one when it cannot be reached or cannot serve
        # now (503 / UNAVAILABLE), round the list once, as a call.
        for _ in range(len(self.members) - 1):
            member = self._in_use
            try:
                reader, writer, headers = await self._open_watch(member, request)
                break
            except EtcdError as err:
                if not _moves_on(err):
                    raise
                self._leave(member)
        else:
            reader, writer, headers = await self._open_watch(self._in_use, request)
        try:
            pending = bytearray()  # the line being read: extended in place, never copied whole
            chunks = _chunks(reader, headers, MAX_ANSWER_BYTES, "etcd watch").__aiter__()
            while True:
                try:
                    chunk = await asyncio.wait_for(chunks.__anext__(), idle)
                except StopAsyncIteration:
                    break
                except asyncio.TimeoutError as err:
                    raise EtcdError("etcd watch: nothing arrived within the idle time", "idle") from err
                pending += chunk
                if len(pending) > MAX_ANSWER_BYTES and b"\n" not in chunk:
                    raise too_long("etcd watch: a line", MAX_ANSWER_BYTES)
                if b"\n" not in chunk:
                    continue  # only a chunk with a newline ends a line: no scan of the rest
                *lines, rest = pending.split(b"\n")
                pending = bytearray(rest)
                if len(pending) > MAX_ANSWER_BYTES or any(len(line) > MAX_ANSWER_BYTES for line in lines):
                    raise too_long("etcd watch: a line", MAX_ANSWER_BYTES)
                for line in lines:
                    if line.strip() and (events := _watch_events(line)):
                        yield events
            raise EtcdError("etcd watch: the server closed the stream", "unreachable")
        except (EtcdError, shardroute.ShardrouteError):
            # As raised here: an EtcdError is an OSError (a ConnectionError), which the
            # clause below would make "unreachable" ("idle" and "http" lost with it).
            raise
        except (KeyError, TypeError) as err:
            raise EtcdError(f"etcd watch: an event that is not etcd's ({err!r})", "malformed") from err
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError) as err:
            raise EtcdError(f"etcd watch: {err!r}", "unreachable") from err
        finally:
            writer.close()

    async def _open_watch(
        self, member: int, request: bytes
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, dict[str, str]]:
        """Opens a watch stream at ``member``: status and headers within ``timeout`` as a
        whole; ``EtcdError`` (``"unreachable"``, or ``"http"`` with its status) otherwise."""
        url, host, port = self.members[member]
        opened: list[asyncio.StreamWriter] = []

        async def opening() -> tuple[asyncio.StreamReader, dict[str, str]]:
            reader, writer = await asyncio.open_connection(host, port)
            opened.append(writer)
            writer.write(_http_request(host, port, "/v3/watch", request))
            status, headers = await _read_head(reader)
            if status != 200:
                try:  # a little of it, for the message and the gateway's gRPC code
                    data = await _body(reader, headers, _ERROR_BYTES, f"etcd watch at {url}")
                except shardroute.ShardrouteError:
                    data = b""
                raise _http_error(f"etcd watch at {url}", status, data)
            return reader, headers

        try:
            reader, headers = await asyncio.wait_for(opening(), self.timeout)
        except BaseException as err:
            for writer in opened:
                writer.close()
            if isinstance(err, (EtcdError, shardroute.ShardrouteError)) or not isinstance(
                err, (OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError)
            ):
                raise
            raise EtcdError(f"etcd watch at {url}: {err!r}", "unreachable") from err
        return reader, opened[0], headers


class AsyncEtcdFollower(_Following, AsyncWaiting):
    """``EtcdFollower`` for asyncio: made by ``await AsyncEtcdFollower.start(...)`` (which
    reads etcd once), it watches in a task of the running loop, with the same rules: every
    change answered by one read of the key and its companions, refusals counted and the
    last good router kept, the core's backoff after a lost watch. ``on_change`` and
    ``on_refused`` are plain functions called on the loop; ``close()`` (or ``async with``)
    ends the task."""

    def __init__(
        self,
        etcd: AsyncEtcd | str | Sequence[str],
        key: str,
        *,
        also: Iterable[str] = (),
        config: shardroute.FollowerConfig | None = None,
        on_change: Callable[[AsyncEtcdFollower], None] | None = None,
        on_refused: Callable[[AsyncEtcdFollower, shardroute.Offered], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        idle: float | None = None,
    ) -> None:
        super().__init__(key, also, config, on_change, on_refused, on_error, idle)
        self.etcd = etcd if isinstance(etcd, AsyncEtcd) else AsyncEtcd(etcd)
        self._reading = asyncio.Lock()
        self._event = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, etcd: AsyncEtcd | str, key: str, **options: Any) -> AsyncEtcdFollower:
        """A follower that has read etcd once (``EtcdError`` when it cannot be reached) and
        watches from there on."""
        follower = cls(etcd, key, **options)
        await follower.refresh()
        follower._task = asyncio.get_running_loop().create_task(follower._run())
        return follower

    def _changed_hook(self) -> None:
        self._event.set()

    async def refresh(self) -> shardroute.Offered | None:
        """As ``EtcdFollower.refresh``."""
        async with self._reading:
            return self._offer(*await self.etcd.get_many(self._keys()))

    async def _run(self) -> None:
        low, high = self._range
        while True:
            try:
                async for _ in self.etcd.watch(low, range_end=high, start_revision=self._read_revision + 1, idle=self.idle):
                    await self.refresh()
            except (EtcdError, shardroute.ShardrouteError) as err:
                if err.code == "idle":
                    try:
                        await self.refresh()
                        continue
                    except (EtcdError, shardroute.ShardrouteError) as lost:
                        err = lost
                wait_s = self._lost(err)
            self._restarts += 1
            while True:
                await asyncio.sleep(wait_s)
                try:
                    await self.refresh()
                except (EtcdError, shardroute.ShardrouteError) as err:
                    wait_s = self._lost(err)
                    continue
                self._back()
                break


def _publish_write(value: str | None, mod_revision: int, document: str | shardroute.Topology) -> shardroute.Publish:
    """The compare-and-swap write of ``document`` over the stored ``value``, as the core's
    follower builds it (refusing what it would not follow)."""
    follower = shardroute.TopologyFollower()
    if value is not None:
        error = follower.offer(value, mod_revision, _now_ms()).error()
        if error is not None:
            # Not overwritten: the epoch to follow a document nobody can read is unknown.
            raise error
    return follower.publish(document)


def _published(key: str, write: shardroute.Publish, revision: int) -> int:
    if not revision:
        raise EtcdError(f"publish: {key} changed since it was read (epoch {write['epoch']} not written)", "conflict")
    return revision


def publish(etcd: Etcd | str, key: str, document: str | shardroute.Topology) -> int:
    """Writes ``document`` to ``key`` with a compare-and-swap on the value read: the core's
    follower checks it first (``ShardrouteError``: ``invalid_topology``, ``no_nodes``,
    ``limit_exceeded``, or ``stale_epoch`` unless its epoch is the stored one + 1; the first
    document may have any epoch). Returns the new revision; ``EtcdError`` with code
    ``"conflict"`` when someone wrote the key between the read and the write."""
    etcd = Etcd(etcd) if isinstance(etcd, str) else etcd
    write = _publish_write(*etcd.get(key), document)
    return _published(key, write, etcd.cas(key, write["document"], write["expected_revision"] or 0))


async def publish_async(etcd: AsyncEtcd | str, key: str, document: str | shardroute.Topology) -> int:
    """``publish`` for asyncio."""
    etcd = AsyncEtcd(etcd) if isinstance(etcd, str) else etcd
    write = _publish_write(*await etcd.get(key), document)
    return _published(key, write, await etcd.cas(key, write["document"], write["expected_revision"] or 0))
