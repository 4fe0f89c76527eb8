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

import json
import threading
import time
from itertools import groupby
from typing import Any

import shardroute
from shardroute.etcd import Etcd, EtcdError
from shards import PREVIOUS, TOPOLOGY, WATCH_END


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
        self.watch = etcd.watch(PREVIOUS, range_end=WATCH_END, start_revision=revision)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        topology: str | None = None
        previous: str | None = None
        try:
            for batch in self.watch:
                now = time.time()
                for _, events in groupby(batch, key=lambda event: event["mod_revision"]):
                    for event in events:
                        if event["key"] == TOPOLOGY:
                            topology = event["value"]
                        elif event["key"] == PREVIOUS:
                            previous = event["value"]
                    if topology is None:
                        continue
                    epoch = int(json.loads(topology)["epoch"])
                    with self.lock:
                        if epoch not in self.documents:
                            self.documents[epoch] = (topology, previous)
                            self.seen.append((now, epoch))
                        elif self.documents[epoch] != (topology, previous):
                            self.conflicts += 1
        except EtcdError as err:
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
