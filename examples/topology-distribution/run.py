"""A topology followed from a 3-member etcd cluster, or a 3-member ZooKeeper ensemble, that
loses its leader and has a member paused, while 200 epochs are published and bad documents
slipped in around the compare-and-swap. Issue 23's live proof.

1. `EtcdCluster` (examples/harness.py) starts three etcd members on 127.0.0.1 (Debian's
   `etcd-server`), or `ZooKeeperEnsemble` three ZooKeeper members (Debian's `zookeeper`)
   with `--store zookeeper`, each stopped by PID at the end, also on failure.
2. The followers start, each a process of its own: `shardroute.etcd`'s `EtcdFollower`
   (threads) and `AsyncEtcdFollower` (asyncio) (`follow.py`), `shardroute/etcd`'s
   `EtcdFollower` in Node (`follow.mjs`), and a bare etcd watch as the baseline
   (`follow.py --raw`: what etcd itself delivers, no follower). With ZooKeeper:
   `shardroute.zookeeper`'s `ZooKeeperFollower` over kazoo, `shardroute/zookeeper`'s in
   Node, and a bare kazoo data watch as the baseline (`AsyncZooKeeperFollower` for asyncio:
   kazoo's threads, the callbacks on the loop).
   And `shardroute serve` follows the cluster and serves the last good document over
   HTTP, which the WASM package follows inside Deno (`follow-http.mjs`: `HttpFollower` of
   `shardroute-wasm/http`, long polls) and inside workerd (`follow-worker.mjs`, started
   by `follow-workerd.mjs`).
3. The publisher writes 200 epochs with `shardroute.etcd.publish` (the core's follower
   builds each compare-and-swap): a vbucket dictionary that gains a node
   (`plan_rebalance`), completes the moves, loses it, completes again, 50 times.
4. Faults, at fixed epochs: the leader SIGKILLed (and restarted 30 epochs later), a member
   SIGSTOPped for 3 s; and three bad values written straight to the key (garbage, a lower
   epoch, 65,537 nodes), each left until every follower that decides has refused it, then
   replaced by the next good epoch with a compare-and-swap on the bad value.
5. The report, one row per follower: epochs seen, the last, propagation from the commit
   to the follower's new router (p50/p99/max), the time to converge after each fault (to
   the first epoch committed after it), the epochs it missed that were committed outside
   every fault (from a fault to its convergence), and the refusals by code.

    .venv/bin/python examples/topology-distribution/run.py [--store etcd|zookeeper] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))  # examples/harness.py

import shardroute  # noqa: E402
from harness import MEMBER_UIDS, EtcdCluster, JsonLinesChild, PeerCut, ZooKeeperEnsemble, can_cut  # noqa: E402
from kazoo.client import KazooClient  # type: ignore[import-untyped]  # noqa: E402
from shardroute import etcd, zookeeper  # noqa: E402

PYTHON = os.environ.get("SHARDROUTE_PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
KEY = "/shardroute/live/topology"
EPOCHS = 200
KILL_AT, RESTART_AT, CUT_AT, HEAL_AT, PAUSE_AT, BAD_AT = 60, 90, 100, 115, 120, 160
FOLLOWERS = {
    "etcd": {"python": [], "python-asyncio": ["--asyncio"], "node": [], "wasm in deno (http, serve)": [],
             "wasm in workerd (http, serve)": [], "raw etcd watch": ["--raw"]},
    "zookeeper": {"python": [], "python-asyncio": ["--asyncio"], "node": [], "wasm in deno (http, serve)": [],
                  "wasm in workerd (http, serve)": [], "raw kazoo watch": ["--raw"]},
}
DENO = os.path.join(ROOT, "bindings-wasm", "node_modules", "deno", "deno")  # npm's deno, installed by setup


def start_document() -> shardroute.Topology:
    return {
        "format": "shardroute/1", "epoch": 1, "nodes": [{"id": f"n{i}"} for i in range(1, 4)],
        "strategy": {"type": "vbucket", "vbuckets": 64},
    }


def next_document(document: Any, step: int) -> Any:
    """Node adds, moves and removes, in turn."""
    operations: list[shardroute.Operation] = [
        {"op": "plan_rebalance", "add": [{"id": "n4"}]},
        {"op": "complete_moves"},
        {"op": "plan_rebalance", "remove": ["n4"]},
        {"op": "complete_moves"},
    ]
    return shardroute.apply(document, operations[step % 4])["topology"]


class Store:
    """The coordination service the run writes to: its members (each with `pid`, `kill()`,
    `restart(wait=)`), `leader()`, `stop()`, the flags a follower takes to follow the
    document, and the publisher's three ways to write: through the core's check
    (`publish`), straight (`put`), and a compare-and-swap on what is there (`replace`)."""

    name: str
    unreachable: tuple[type[Exception], ...]
    cluster: Any

    def flags(self) -> list[str]:
        raise NotImplementedError

    def publish(self, document: Any) -> None:
        raise NotImplementedError

    def put(self, value: str) -> None:
        raise NotImplementedError

    def stored(self) -> Any:
        """The document stored now, parsed."""
        raise NotImplementedError

    def replace(self, value: str) -> None:
        """Writes `value` over the value there now, with a compare-and-swap on it."""
        raise NotImplementedError

    def stop(self) -> None:
        self.cluster.stop()


class EtcdStore(Store):
    name = "etcd"
    unreachable = (etcd.EtcdError,)

    def __init__(self, root: str, uids: list[int] | None, timeout: float = 1.0) -> None:
        self.cluster = EtcdCluster(root, 3, uids)
        self.client = etcd.Etcd(self.cluster.urls, timeout=timeout)

    def flags(self) -> list[str]:
        return ["--etcd", ",".join(self.cluster.urls), "--key", KEY]

    def publish(self, document: Any) -> None:
        etcd.publish(self.client, KEY, document)

    def put(self, value: str) -> None:
        self.client.put(KEY, value)

    def stored(self) -> Any:
        return json.loads(self.client.get(KEY)[0] or "null")

    def replace(self, value: str) -> None:
        _, revision = self.client.get(KEY)
        assert self.client.txn([etcd.same_revision(KEY, revision)], {KEY: value}), "the repair lost its CAS"


class ZooKeeperStore(Store):
    name = "zookeeper"
    unreachable = (zookeeper.ZooKeeperError,)

    def __init__(self, root: str, uids: list[int] | None, timeout: float = 2.0) -> None:
        self.cluster = ZooKeeperEnsemble(root, 3, uids)
        self.client = KazooClient(hosts=self.cluster.hosts, timeout=timeout)
        self.client.start(timeout=30)

    def flags(self) -> list[str]:
        return ["--zookeeper", self.cluster.hosts, "--path", KEY]

    def publish(self, document: Any) -> None:
        zookeeper.publish(self.client, KEY, document)

    def put(self, value: str) -> None:
        self.client.set(KEY, value.encode())

    def stored(self) -> Any:
        return json.loads(self.client.get(KEY)[0])

    def replace(self, value: str) -> None:
        _, stat = self.client.get(KEY)
        self.client.set(KEY, value.encode(), version=stat.version)  # BadVersionError if it lost

    def stop(self) -> None:
        self.client.stop()
        self.client.close()
        self.cluster.stop()


class Publisher:
    """Publishes through the core's follower (`publish`), retrying while the cluster has
    no leader; records when each epoch's write was acknowledged."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.document: Any = start_document()
        self.committed: dict[int, float] = {}

    def write(self, document: Any) -> None:
        deadline = time.monotonic() + 60
        started = time.time()
        uncertain = False
        while True:
            try:
                self.store.publish(document)
                break
            except self.store.unreachable:
                # No answer: the write may have been committed all the same.
                if time.monotonic() > deadline:
                    raise
                uncertain = True
                started = time.time()
                time.sleep(0.05)
            except shardroute.StaleEpochError:
                # After an unanswered write, the retry finds it stored: it was written.
                if not uncertain or self.store.stored() != document:
                    raise
                break
        # From the start of the successful write: the commit is inside it, so the
        # propagation measured is an upper bound (by the read and the CAS round trip).
        self.committed[document["epoch"]] = started
        self.document = document

    def bad(self, value: str, code: str, followers: dict[str, JsonLinesChild]) -> None:
        """Writes `value` straight to the key (no follower check), waits until every
        follower that decides (not the bare watches, not the WASM ones behind `serve`) has
        refused it with `code`, or 30 s, then replaces it with the next good epoch by a
        compare-and-swap on it. A follower that never reads it fails the test then; a
        fixed wait let a follower that was still catching up after a fault miss it."""
        before = {name: refusals(child, code) for name, child in followers.items() if decides(name)}
        self.store.put(value)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(
                refusals(followers[name], code) <= count for name, count in before.items()):
            time.sleep(0.02)
        time.sleep(0.1)  # the bare watches and `serve` read it too
        following = next_document(self.document, self.document["epoch"] - 1)
        started = time.time()
        self.store.replace(json.dumps(following))
        self.committed[following["epoch"]] = started
        self.document = following


def decides(follower: str) -> bool:
    """Whether a follower runs the core's decisions itself (the bare watches decide
    nothing; the WASM followers read only what `serve` installed)."""
    return not follower.startswith(("raw ", "wasm"))


def refusals(child: JsonLinesChild, code: str) -> int:
    return sum(1 for e in list(child.events) if e.get("event") == "refused" and e.get("code") == code)


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else float("nan")


def start_followers(store: Store) -> tuple[JsonLinesChild, dict[str, JsonLinesChild]]:
    """`shardroute serve` (it follows the cluster too, and serves the last good document
    over HTTP to the WASM follower: ETags, long polls) and every follower, each ready."""
    source = store.flags()
    subprocess.run(["cargo", "build", "-q", "-p", "shardroute-cli"], cwd=ROOT, check=True)
    serve = JsonLinesChild("serve", [os.path.join(ROOT, "target", "debug", "shardroute"), "serve", *source,
                                     "--listen", "127.0.0.1:0"], stdin=False, stderr=subprocess.DEVNULL)
    serving = serve.expect("listening", timeout=60)["url"]
    followers: dict[str, JsonLinesChild] = {}
    for name, flags in FOLLOWERS[store.name].items():
        command = [PYTHON, os.path.join(HERE, "follow.py"), *source, *flags]
        if name == "node":
            command = [shutil.which("node") or "node", os.path.join(HERE, "follow.mjs"), *source]
        elif name.startswith("wasm in deno"):
            command = [DENO, "run", "-A", os.path.join(HERE, "follow-http.mjs"), serving]
        elif name.startswith("wasm in workerd"):
            command = [shutil.which("node") or "node", os.path.join(HERE, "follow-workerd.mjs"), serving]
        followers[name] = JsonLinesChild(name, command)
        followers[name].expect("ready", timeout=60)
    return serve, followers


def installs(child: JsonLinesChild) -> list[tuple[int, float]]:
    return [(e["epoch"], e["t"]) for e in list(child.events) if e.get("event") == "installed"]


def wait_all(followers: dict[str, JsonLinesChild], epoch: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    for child in followers.values():
        while not any(seen == epoch for seen, _ in installs(child)):
            assert time.monotonic() < deadline, f"{child.name} never reached epoch {epoch}"
            time.sleep(0.02)


def shut_down(followers: dict[str, JsonLinesChild], serve: JsonLinesChild | None, store: Store | None, root: str) -> None:
    """Every follower asked to quit (killed if it lingers), `serve` killed, every member
    stopped by PID, the data removed."""
    for child in followers.values():
        child.stop()
    if serve is not None:
        serve.kill()
    if store is not None:
        store.stop()
    shutil.rmtree(root, ignore_errors=True)


def run(store_name: str = "etcd") -> dict[str, Any]:
    root = tempfile.mkdtemp(prefix=f"shardroute-live-{store_name}-")
    followers: dict[str, JsonLinesChild] = {}
    faults: dict[str, float] = {}
    serve: JsonLinesChild | None = None
    store: Store | None = None
    cut: PeerCut | None = None
    try:
        cannot_cut = can_cut()
        uids = None if cannot_cut else MEMBER_UIDS
        store = EtcdStore(root, uids) if store_name == "etcd" else ZooKeeperStore(root, uids)
        cluster = store.cluster
        publisher = Publisher(store)
        publisher.write(start_document())
        serve, followers = start_followers(store)
        time.sleep(0.5)
        killed = paused = None
        while publisher.document["epoch"] < EPOCHS:
            epoch = publisher.document["epoch"]
            if epoch == KILL_AT:
                killed = cluster.leader()
                killed.kill()
                faults["leader killed"] = time.time()
            elif epoch == RESTART_AT and killed is not None:
                killed.restart(wait=False)
            elif epoch == CUT_AT and cannot_cut is None:
                # The leader cut off from the other two (nftables by uid): clients still
                # reach it, but it has no quorum, so what it serves goes stale.
                cut = PeerCut(cluster.members, cluster.leader())
                faults["leader cut off"] = time.time()
            elif epoch == HEAL_AT and cut is not None:
                cut.heal()
            elif epoch == PAUSE_AT:
                # The first member (where the followers start) unless it leads: the
                # followers notice it only by their watch's idle time.
                paused = next(m for m in cluster.members if m is not cluster.leader())
                os.kill(paused.pid, signal.SIGSTOP)
                faults["member paused"] = time.time()
            elif epoch == PAUSE_AT + 20 and paused is not None:
                os.kill(paused.pid, signal.SIGCONT)
            elif epoch == BAD_AT:
                publisher.bad("{not a document", "invalid_topology", followers)
                # Valid, but older than what any follower holds: 10 below the last good
                # epoch. One below would equal the epoch before it for a follower that never
                # saw the good epoch the garbage's compare-and-swap wrote (replaced at once
                # by this value), and an equal epoch is `unchanged`, not refused.
                lower = dict(start_document(), epoch=publisher.document["epoch"] - 10)
                publisher.bad(json.dumps(lower), "stale_epoch", followers)
                huge = dict(publisher.document, epoch=publisher.document["epoch"] + 1,
                            nodes=[{"id": f"n{i}"} for i in range(65_537)], strategy={"type": "jump"})
                publisher.bad(json.dumps(huge, separators=(",", ":")), "limit_exceeded", followers)
                continue
            publisher.write(next_document(publisher.document, epoch - 1))
            time.sleep(0.01)
        final = publisher.document["epoch"]
        wait_all(followers, final)
        for child in followers.values():
            child.send("quit")
            child.expect("done", timeout=30)
        return {"store": store_name, "not_cut": cannot_cut, **report(publisher.committed, faults, followers, final)}
    finally:
        if cut is not None:
            cut.heal()
        shut_down(followers, serve, store, root)


def report(committed: dict[int, float], faults: dict[str, float], followers: dict[str, JsonLinesChild],
           final: int) -> dict[str, Any]:
    rows = []
    for name, child in followers.items():
        events = list(child.events)
        installed = [(e["epoch"], e["t"]) for e in events if e.get("event") == "installed"]
        epochs = [epoch for epoch, _ in installed]
        delays = [(t - committed[epoch]) * 1000 for epoch, t in installed if epoch in committed]
        converge = {}
        # While a fault lasts for this follower (from the fault to its first epoch
        # committed after it), what it reads again may skip epochs.
        windows: list[tuple[float, float]] = []
        for fault, at in faults.items():
            after = min((epoch for epoch, t in committed.items() if t > at), default=None)
            seen = next((t for epoch, t in installed if after is not None and epoch >= after), None)
            converge[fault] = round((seen - at) * 1000, 1) if seen is not None else None
            windows.append((at, seen if seen is not None else float("inf")))
        seen_epochs = set(epochs)
        missed_outside = [epoch for epoch, t in sorted(committed.items())
                          if epoch not in seen_epochs and not any(start <= t <= end for start, end in windows)]
        done = next(e for e in events if e.get("event") == "done")
        refused: dict[str, int] = {}
        for e in events:
            if e.get("event") == "refused":
                refused[e["code"]] = refused.get(e["code"], 0) + 1
        rows.append({
            "follower": name, "epochs_seen": len(set(epochs)), "last_epoch": epochs[-1] if epochs else None,
            "increasing": epochs == sorted(set(epochs)),
            "p50_ms": round(percentile(delays, 0.5), 2), "p99_ms": round(percentile(delays, 0.99), 2),
            "max_ms": round(max(delays), 2) if delays else None, "converge_ms": converge,
            "missed_outside_faults": missed_outside,
            "refused": refused, "stats": done.get("stats", {}),
        })
    return {"final_epoch": final, "published": len(committed), "faults": list(faults), "rows": rows}


def table(result: dict[str, Any]) -> str:
    faults = result["faults"]
    head = "| follower | epochs seen | last epoch | propagation p50 / p99 / max (ms) | " + " | ".join(
        f"converged after {fault} (ms)" for fault in faults) + " | refused |"
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for row in result["rows"]:
        converge = " | ".join(str(row["converge_ms"].get(fault)) for fault in faults)
        refused = ", ".join(f"{code} {count}" for code, count in sorted(row["refused"].items())) or "—"
        lines.append(
            f"| {row['follower']} | {row['epochs_seen']} | {row['last_epoch']} | "
            f"{row['p50_ms']} / {row['p99_ms']} / {row['max_ms']} | {converge} | {refused} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=["etcd", "zookeeper"], default="etcd")
    parser.add_argument("--json", help="write the result here")
    args = parser.parse_args()
    result = run(args.store)
    print(table(result))
    print(f"\n{result['published']} epochs published, the last {result['final_epoch']}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
