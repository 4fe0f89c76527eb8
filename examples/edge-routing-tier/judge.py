"""How run.py judges the requests the shard services served: against the documents etcd
held, read from etcd itself (a watch of the keys `previous` and `topology` from the run's
start revision: every document, in order, never skipped), in Python (the core's
migration sessions, as examples/postgres-messages/service.py uses them), independently
of the worker's path (WASM, through `shardroute serve`).

**The targets of a request under epoch E** are what the protocol (docs/rebalancing.md)
names for its user under the documents etcd held at E: `topology` at E, with `previous`
when etcd held one with it (run B's lazy move: `MigrationSession(Migration(previous,
topology), "lazy")`), or the dictionary's own `forward_map` (run A:
`MigrationSession(Migration.of_dictionary(router), "background")`), or the router alone:

| kind (shard_service.py's log) | targets |
|---|---|
| `read` | `read_plan(user, moved=False)`: the new owner and, while the user may still be on it, the old owner |
| `write` | `write_plan(user)`'s node: the new owner |
| `moved`, `move-write` | the lazy steps' `write_to` (none when the user does not move) |
| `move-read` | the lazy steps' `read_from` |
| `fence`, `move-delete` | the lazy steps' `retire_from` |

A served request is **misrouted** when its shard is not a target under the epoch it
carried (which the shard's fence admitted, or it would have been refused): a request the
protocol never sends there.

A read or a write is **served by a former owner** when its shard is a target under the
epoch it carried but not under the newest epoch etcd held when the shard served it (as
the watch saw it: a few milliseconds after the commit, so a request served in those
milliseconds counts as current): a worker (or a direct replay) still one document behind,
which the protocol allows as long as the shard's fence admits the epoch. Such a write
lands on the old owner before the fence rises, and the copy or the move starts after the
fence, so it carries the write (every acknowledged write found once on its final owner
is run.py's check); such a read is either the old owner read before the new one (the
protocol's "then the old one until the key has moved") or the only read of a worker one
epoch behind, which can miss writes other clients made under the newer epoch in the
window between the document's publication and the fence (never the reader's own: its
worker's epochs never go back).
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from itertools import groupby
from typing import Any

import shardroute
from shardroute.etcd import Etcd
from shards import PREVIOUS, TOPOLOGY, WATCH_END

#: The longest watch line read (a document in base64 and the JSON around it).
MAX_LINE = 2 * shardroute.MAX_DOCUMENT_BYTES


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class RawWatch:
    """The judge's own etcd watch, standard library only (as
    examples/topology-distribution/follow.py's baseline): one `/v3/watch` stream of
    `[key, range_end)` from `start_revision` on `url`, every event in order (a follower
    reads instead, and may skip one). Iterating yields each line's events as `(type, key,
    value, mod_revision)` (`value` None for a delete); it ends with `OSError` when the
    stream breaks, silently once `close()` was called (from any thread)."""

    def __init__(self, url: str, key: str, range_end: str, start_revision: int) -> None:
        where = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=10)
        create = {"key": b64(key), "range_end": b64(range_end), "start_revision": str(start_revision)}
        self.connection.request("POST", "/v3/watch", json.dumps({"create_request": create}), {"content-type": "application/json"})
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            raise OSError(f"etcd watch at {url}: HTTP {self.response.status}")
        assert self.connection.sock is not None
        self.connection.sock.settimeout(None)
        self.closed = False

    def __iter__(self) -> Iterator[list[tuple[str, str, str | None, int]]]:
        try:
            while line := self.response.readline(MAX_LINE + 1):
                if len(line) > MAX_LINE:
                    raise OSError(f"etcd watch: a line longer than {MAX_LINE} bytes")
                events = json.loads(line).get("result", {}).get("events") or []
                yield [("delete" if event.get("type") == "DELETE" else "put", base64.b64decode(event["kv"]["key"]).decode(),
                        None if event.get("type") == "DELETE" else base64.b64decode(event["kv"].get("value", "")).decode(),
                        int(event["kv"]["mod_revision"])) for event in events]
        except (OSError, http.client.HTTPException, ValueError, KeyError) as err:
            if not self.closed:
                raise OSError(f"etcd watch: {err!r}") from err
            return
        finally:
            self.connection.close()
        if not self.closed:
            raise OSError("etcd watch: the server closed the stream")

    def close(self) -> None:
        """Ends the stream: a blocked iteration returns."""
        self.closed = True
        if self.connection.sock is not None:
            with contextlib.suppress(OSError):
                self.connection.sock.shutdown(socket.SHUT_RDWR)


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else float("nan")


class History:
    """Every (topology, previous) pair etcd held from `revision` on, by topology epoch,
    and when the watch saw each epoch."""

    def __init__(self, etcd: Etcd, revision: int) -> None:
        self.documents: dict[int, tuple[str, str | None]] = {}
        self.seen: list[tuple[float, int]] = []
        self.conflicts = 0  # one epoch stored with two different `previous` (never, by the coordinator)
        self.failure: str | None = None
        self.lock = threading.Lock()
        self.watch = RawWatch(etcd.url, PREVIOUS, WATCH_END, revision)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        topology: str | None = None
        previous: str | None = None
        try:
            for batch in self.watch:
                now = time.time()
                for _, events in groupby(batch, key=lambda event: event[3]):
                    for _kind, key, value, _revision in events:
                        if key == TOPOLOGY:
                            topology = value
                        elif key == PREVIOUS:
                            previous = value
                    if topology is None:
                        continue
                    epoch = int(json.loads(topology)["epoch"])
                    with self.lock:
                        if epoch not in self.documents:
                            self.documents[epoch] = (topology, previous)
                            self.seen.append((now, epoch))
                        elif self.documents[epoch] != (topology, previous):
                            self.conflicts += 1
        except OSError as err:
            self.failure = str(err)

    def close(self) -> None:
        self.watch.close()
        self.thread.join(timeout=10)

    def newest_at(self, at: float) -> int | None:
        """The newest epoch the watch had seen at `at`."""
        newest = None
        for seen_at, epoch in self.seen:
            if seen_at <= at:
                newest = epoch if newest is None else max(newest, epoch)
        return newest


class Truth:
    """The protocol's routing at one epoch, from the documents etcd held at it."""

    def __init__(self, topology: str, previous: str | None) -> None:
        router = shardroute.Router(topology)
        self.router = router
        self.session: shardroute.MigrationSession | None = None
        self.lazy = previous is not None
        if previous is not None:
            self.session = shardroute.MigrationSession(shardroute.Migration(shardroute.Router(previous), router), "lazy")
        elif "forward_map" in json.loads(router.to_json())["strategy"]:
            self.session = shardroute.MigrationSession(shardroute.Migration.of_dictionary(router), "background")

    def targets(self, kind: str, user: int) -> set[str]:
        if kind == "read":
            return set(self.session.read_plan(user, False)) if self.session else {self.router.node(user)}
        if kind == "write":
            return {self.session.write_plan(user)[0]} if self.session else {self.router.node(user)}
        steps = self.session.lazy_steps(user) if self.session is not None and self.lazy else None
        if steps is None:
            return set()
        if kind in ("moved", "move-write"):
            return {steps["write_to"]}
        if kind == "move-read":
            return {steps["read_from"]}
        return {steps["retire_from"]}  # fence, move-delete


def judge(history: History, logs: dict[str, str]) -> dict[str, Any]:
    """Every request the shard services logged, judged: counts by `via` (workerd, deno,
    direct; run.py's fence probe left out)."""
    truths = {epoch: Truth(*documents) for epoch, documents in history.documents.items()}
    served: dict[str, int] = {}
    misrouted: dict[str, int] = {}
    former: dict[str, dict[str, int]] = {}
    kinds: dict[str, int] = {}
    sample: list[str] = []
    for shard, path in logs.items():
        with open(path) as log:
            for line in log:
                at_text, kind, user_text, epoch_text, via = line.rstrip("\n").split("\t")
                if via == "probe":
                    continue  # run.py's fence probe, after the run
                at, user, epoch = float(at_text), int(user_text), int(epoch_text)
                served[via] = served.get(via, 0) + 1
                kinds[kind] = kinds.get(kind, 0) + 1
                truth = truths.get(epoch)
                if truth is None or shard not in truth.targets(kind, user):
                    misrouted[via] = misrouted.get(via, 0) + 1
                    if len(sample) < 20:
                        sample.append(f"{via} {kind} user {user} epoch {epoch} on {shard}")
                    continue
                if kind not in ("read", "write"):
                    continue
                newest = history.newest_at(at)
                if newest is not None and newest > epoch and shard not in truths[newest].targets(kind, user):
                    mine = former.setdefault(via, {})
                    mine[kind] = mine.get(kind, 0) + 1
    return {
        "served": served, "misrouted": misrouted, "misrouted_sample": sample, "former_owner": former,
        "served_by_kind": kinds, "epochs": sorted(history.documents), "history_conflicts": history.conflicts,
        "history_failure": history.failure,
    }
