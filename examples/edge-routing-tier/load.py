"""The load generator of run.py: clients that read and write users' messages through the
edge worker, and send the same request straight to the shard service that served it, to
measure what the tier adds.

Each `Client` is a thread bound to one runtime's worker (workerd or Deno). One operation:

* a write: `POST /users/{u}/messages` with a message id the client chooses (unique in
  the run) through the worker; once acknowledged (201), the same write of another message
  straight to the shard service the worker wrote to (`x-shard`), under the epoch the
  worker used (`x-epoch`), `x-via: direct`;
* a read: `GET /users/{u}/messages` through the worker, checked against the writes
  acknowledged before it was sent (the client's own, and everyone's); then the same read
  straight from the shard the worker read first (the new owner), under its epoch.

Both halves are timed on the same keep-alive connections; a direct request the shard
refuses (its fence moved on in between) is counted and left out of the latencies.
Every acknowledged write (the worker's and the direct one) goes into the `Book`, which
run.py checks against the shards at the end.
"""

from __future__ import annotations

import hashlib
import http.client
import itertools
import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

FIRST_ID = 10**12  # the run's message ids; the seeded ones are below


def digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


@dataclass
class Ack:
    user: int
    digest: str
    via: str  # "workerd", "deno", "direct" or "seed"
    client: str
    at: float  # when the acknowledgement arrived (time.time())


@dataclass
class Sample:
    runtime: str
    phase: str
    op: str  # "read" or "write"
    tier_s: float
    direct_s: float | None  # None: the shard refused the direct replay


@dataclass
class Book:
    """What every client of one run shares: acknowledged writes, latencies, counts."""

    phase: str = "before"
    lock: threading.Lock = field(default_factory=threading.Lock)
    acks: dict[int, Ack] = field(default_factory=dict)
    by_user: dict[int, list[tuple[float, int]]] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(FIRST_ID))

    def count(self, name: str, amount: int = 1) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + amount

    def ack(self, message_id: int, ack: Ack) -> None:
        with self.lock:
            assert message_id not in self.acks, f"id {message_id} acknowledged twice"
            self.acks[message_id] = ack
            self.by_user.setdefault(ack.user, []).append((ack.at, message_id))

    def acknowledged_before(self, user: int, at: float) -> tuple[set[int], dict[int, str]]:
        """The ids acknowledged for `user` before `at`, and who they were acknowledged to."""
        with self.lock:
            ids = {message_id for when, message_id in self.by_user.get(user, []) if when < at}
            return ids, {message_id: self.acks[message_id].client for message_id in ids}

    def fail(self, what: str) -> None:
        with self.lock:
            self.failures.append(what)
            self.counts["failed"] = self.counts.get("failed", 0) + 1


class Connection:
    """One keep-alive HTTP connection; a request timed from sending to the whole answer."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: Any = None, via: str | None = None) -> tuple[int, dict[str, str], Any, float]:
        headers = {"content-type": "application/json"} if body is not None else {}
        if via is not None:
            headers["x-via"] = via
        data = json.dumps(body).encode() if body is not None else None
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=20)
            started = time.perf_counter()
            try:
                self.conn.request(method, path, data, headers)
                response = self.conn.getresponse()
                raw = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A kept-alive connection the server had closed: nothing was answered.
                # Only a read is sent again (a write's outcome is unknown: never retried).
                self.conn.close()
                self.conn = None
                if attempt == 2 or method != "GET":
                    raise
                continue
            seconds = time.perf_counter() - started
            answer = json.loads(raw) if raw else None
            return response.status, {k.lower(): v for k, v in response.getheaders()}, answer, seconds
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


class Client(threading.Thread):
    """Reads and writes through one runtime's worker (and straight to the shards) until
    `stop` is set, at most `rate` operations a second."""

    def __init__(self, name: str, runtime: str, worker: str, shards: dict[str, str], book: Book, users: int,
                 rate: float, write_share: float, stop: threading.Event) -> None:
        super().__init__(name=name, daemon=True)
        self.runtime, self.book, self.users, self.rate, self.write_share, self.stop = runtime, book, users, rate, write_share, stop
        self.worker = Connection(worker)
        self.shards = {shard: Connection(url) for shard, url in shards.items()}
        self.rng = random.Random(name)
        self.mine: dict[int, set[int]] = {}  # user -> ids acknowledged to this client

    def run(self) -> None:
        period = 1.0 / self.rate
        next_at = time.monotonic()
        try:
            while not self.stop.is_set():
                user = self.rng.randrange(1, self.users + 1)
                try:
                    if self.rng.random() < self.write_share:
                        self.write(user)
                    else:
                        self.read(user)
                except (OSError, http.client.HTTPException, ValueError) as err:
                    self.book.fail(f"{self.name}: {err!r}")
                next_at += period
                time.sleep(max(0.0, next_at - time.monotonic()))
        finally:
            self.worker.close()
            for connection in self.shards.values():
                connection.close()

    def acknowledged(self, message_id: int, user: int, body: str, via: str) -> None:
        self.book.ack(message_id, Ack(user, digest(body), via, self.name, time.time()))
        self.mine.setdefault(user, set()).add(message_id)

    def write(self, user: int) -> None:
        phase = self.book.phase
        message_id = next(self.book.ids)
        body = f"{self.runtime} says {self.rng.getrandbits(64):016x} to user {user}"
        status, headers, answer, tier = self.worker.request("POST", f"/users/{user}/messages", {"id": message_id, "body": body})
        self.book.count(f"{self.runtime}/{phase}/write/{status}")
        if status != 201:
            self.book.fail(f"{self.name}: POST user {user}: {status} {answer}")
            return
        self.acknowledged(message_id, user, body, self.runtime)
        shard, epoch = headers["x-shard"], headers["x-epoch"]
        direct_id = next(self.book.ids)
        direct_body = f"direct says {self.rng.getrandbits(64):016x} to user {user}"
        message = {"id": direct_id, "body": direct_body, "vbucket": answer["vbucket"], "sender": "direct"}
        status, _, answer, direct = self.shards[shard].request("POST", f"/users/{user}/messages?epoch={epoch}", message, "direct")
        if status == 201:
            self.acknowledged(direct_id, user, direct_body, "direct")
        elif status == 409:
            self.book.count(f"{self.runtime}/direct_refused")
        else:
            self.book.fail(f"{self.name}: direct POST {shard} user {user}: {status} {answer}")
        with self.book.lock:
            self.book.samples.append(Sample(self.runtime, phase, "write", tier, direct if status == 201 else None))

    def read(self, user: int) -> None:
        phase = self.book.phase
        sent = time.time()
        before, _ = self.book.acknowledged_before(user, sent)
        own = set(self.mine.get(user, set()))
        status, headers, answer, tier = self.worker.request("GET", f"/users/{user}/messages")
        self.book.count(f"{self.runtime}/{phase}/read/{status}")
        if status != 200:
            self.book.fail(f"{self.name}: GET user {user}: {status} {answer}")
            return
        found = {message["id"] for message in answer["messages"]}
        if own - found:
            self.book.count(f"{self.runtime}/stale_own")
            self.book.fail(f"{self.name}: read of user {user} missed its own writes {sorted(own - found)[:5]}")
        if before - found - own:
            self.book.count(f"{self.runtime}/stale_others")
        shard, epoch = headers["x-shard"].split(",")[0], headers["x-epoch"]
        status, _, answer, direct = self.shards[shard].request("GET", f"/users/{user}/messages?epoch={epoch}", None, "direct")
        if status == 409:
            self.book.count(f"{self.runtime}/direct_refused")
        elif status != 200:
            self.book.fail(f"{self.name}: direct GET {shard} user {user}: {status} {answer}")
        with self.book.lock:
            self.book.samples.append(Sample(self.runtime, phase, "read", tier, direct if status == 200 else None))


def verify(book: Book, workers: dict[str, str], users: int, threads: int = 4) -> dict[str, int]:
    """Every user read once through the workers (in turn) after the load has stopped:
    timelines missing an acknowledged message, per runtime, and reads that failed."""
    missing = {runtime: 0 for runtime in workers}
    failed = {runtime: 0 for runtime in workers}
    runtimes = sorted(workers)
    lock = threading.Lock()
    todo = iter(range(1, users + 1))

    def reader() -> None:
        connections = {runtime: Connection(url) for runtime, url in workers.items()}
        try:
            while True:
                with lock:
                    user = next(todo, None)
                if user is None:
                    return
                runtime = runtimes[user % len(runtimes)]
                expected, _ = book.acknowledged_before(user, time.time())
                status, _, answer, _ = connections[runtime].request("GET", f"/users/{user}/messages")
                with lock:
                    if status != 200:
                        failed[runtime] += 1
                    elif expected - {message["id"] for message in answer["messages"]}:
                        missing[runtime] += 1
        finally:
            for connection in connections.values():
                connection.close()

    pool = [threading.Thread(target=reader, daemon=True) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return {**{f"{runtime}_missing": n for runtime, n in missing.items()}, **{f"{runtime}_failed": n for runtime, n in failed.items()}}
