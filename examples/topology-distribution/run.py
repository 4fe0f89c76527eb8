"""A topology followed from a 3-member etcd cluster, or a 3-member ZooKeeper ensemble, that
loses its leader and has a member paused, while 200 epochs are published and bad documents
slipped in around the compare-and-swap. Issue 23's live proof, and issue 35's.

1. `EtcdCluster` (examples/harness.py) starts three etcd members on 127.0.0.1 (Debian's
   `etcd-server`), or `ZooKeeperEnsemble` three ZooKeeper members (Debian's `zookeeper`)
   with `--store zookeeper`, each stopped by PID at the end, also on failure.
   On etcd, the members serve https only, ask for a client certificate and have etcd's
   authentication on (`EtcdTls`, `enable_etcd_auth`: `--plain` turns that off), and each
   follower's member list starts with a member of its own that answers every request
   503 with gRPC code 14, as one going away does (`UnavailableMember`).
2. The followers start, each a process of its own: `shardroute.etcd`'s `EtcdFollower`
   (threads) and `AsyncEtcdFollower` (asyncio) (`follow.py`), `shardroute/etcd`'s
   `EtcdFollower` in Node (`follow.mjs`), and a bare etcd watch as the baseline
   (`follow.py --raw`: what etcd itself delivers, no follower). With ZooKeeper:
   `shardroute.zookeeper`'s `ZooKeeperFollower` (threads) and `AsyncZooKeeperFollower`
   (asyncio), `shardroute/zookeeper`'s in Node, all on the core's ZooKeeper session, and a
   bare kazoo data watch as the baseline.
   And `shardroute serve` follows the cluster and serves the last good document over
   HTTP, which the WASM package follows inside Deno (`follow-http.mjs`: `HttpFollower` of
   `shardroute-wasm/http`, long polls) and inside workerd (`follow-worker.mjs`, started
   by `follow-workerd.mjs`).
   On etcd, QUIET_S (5 s) with no write then: every watch goes idle (1 s) and is read
   again, which must not count as a lost source, nor send a follower back to its 503
   member (each follower's counters, asked with `stats` on its stdin, before and after).
3. The publisher writes 200 epochs with `shardroute.etcd.publish` (the core's follower
   builds each compare-and-swap): a vbucket dictionary that gains a node
   (`plan_rebalance`), completes the moves, loses it, completes again, 50 times.
4. Faults, at fixed epochs: the leader SIGKILLed (and restarted 30 epochs later), a member
   SIGSTOPped for 3 s; and three bad values written straight to the key (garbage, a lower
   epoch, 65,537 nodes), each left until every follower that decides has refused it, then
   replaced by the next good epoch with a compare-and-swap on the bad value; the garbage
   by the package's repair (`publish(..., replace=True)` on etcd), which every follower
   must install.
5. The report, one row per follower: epochs seen, the last, propagation from the commit
   to the follower's new router (p50/p99/max), the time to converge after each fault (to
   the first epoch committed after it), the epochs it missed that were committed outside
   every fault (from a fault to its convergence), and the refusals by code; on etcd, the
   requests each 503 member got (at start, in the quiet period, in all) and what each
   follower counted in the quiet period.

    .venv/bin/python examples/topology-distribution/run.py [--store etcd|zookeeper] [--plain] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
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
from harness import (  # noqa: E402
    MEMBER_UIDS, EtcdCluster, EtcdTls, JsonLinesChild, PeerCut, UnavailableMember, ZooKeeperEnsemble, can_cut,
    enable_etcd_auth,
)
from kazoo.client import KazooClient  # type: ignore[import-untyped]  # noqa: E402
from shardroute import etcd, zookeeper  # noqa: E402

PYTHON = os.environ.get("SHARDROUTE_PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
KEY = "/shardroute/live/topology"
EPOCHS = 200
KILL_AT, RESTART_AT, CUT_AT, HEAL_AT, PAUSE_AT, BAD_AT = 60, 90, 100, 115, 120, 160
QUIET_S = 5.0  # no write for this long, before the first fault: every watch idles (1 s) and is read again
USER = "shardroute"  # the secure etcd's application user: read-write under /shardroute/, nothing else
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

    def flags(self, follower: str = "") -> list[str]:
        """What `follower` (follow.py, follow.mjs) is given to follow the document."""
        raise NotImplementedError

    def serve_flags(self) -> list[str]:
        """What `shardroute serve` is given."""
        return self.flags("serve")

    def serve_env(self) -> dict[str, str] | None:
        """`shardroute serve`'s environment (None: this process's)."""
        return None

    def unavailable(self) -> dict[str, int]:
        """Per follower, the requests its member answering 503 got so far (none here)."""
        return {}

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

    def repair(self, document: Any) -> None:
        """Writes `document` over a stored value the followers refuse: the package's own
        repair where it has one, else `replace`."""
        self.replace(json.dumps(document))

    def stop(self) -> None:
        self.cluster.stop()


class EtcdStore(Store):
    """With `secure`, the members serve https only, ask for a client certificate, and
    have etcd's authentication on (`USER`, a password of the run's, in a file); with
    `unavailable`, each follower's member list starts with a member of its own that
    answers every request with 503 (`UnavailableMember`: one going away), before the
    cluster's three."""

    name = "etcd"
    unreachable = (etcd.EtcdError,)

    def __init__(self, root: str, uids: list[int] | None, timeout: float = 1.0, *, secure: bool = False,
                 unavailable: bool = False) -> None:
        self.tls = EtcdTls(root) if secure else None
        self.cluster = EtcdCluster(root, 3, uids, tls=self.tls)
        self.password_file: str | None = None
        if self.tls is not None:
            self.password = secrets.token_urlsafe(18)
            self.password_file = os.path.join(self.tls.dir, "password")
            with open(os.open(self.password_file, os.O_CREAT | os.O_WRONLY, 0o600), "w") as out:
                out.write(self.password)
            enable_etcd_auth(self.cluster.urls[0], USER, self.password, "/shardroute/", self.tls)
        self.with_unavailable = unavailable
        self.unavailable_members: dict[str, UnavailableMember] = {}
        self.client = etcd.Etcd(self.cluster.urls, timeout=timeout, **self.options())

    def options(self) -> dict[str, Any]:
        """`Etcd`'s arguments for the secure cluster (none for a plain one)."""
        if self.tls is None:
            return {}
        return {"ca_file": self.tls.ca, "cert_file": self.tls.client_cert, "key_file": self.tls.client_key,
                "user": USER, "password": self.password}

    def members(self, follower: str) -> str:
        urls = list(self.cluster.urls)
        if self.with_unavailable:
            if follower not in self.unavailable_members:
                self.unavailable_members[follower] = UnavailableMember(self.tls)
            urls.insert(0, self.unavailable_members[follower].url)
        return ",".join(urls)

    def flags(self, follower: str = "") -> list[str]:
        secure = [] if self.tls is None else [
            "--ca", self.tls.ca, "--cert", self.tls.client_cert, "--cert-key", self.tls.client_key,
            "--user", USER, "--password-file", str(self.password_file)]
        return ["--etcd", self.members(follower), "--key", KEY, *secure]

    def serve_flags(self) -> list[str]:
        secure = [] if self.tls is None else [
            "--etcd-ca", self.tls.ca, "--etcd-cert", self.tls.client_cert, "--etcd-key", self.tls.client_key,
            "--etcd-user", USER]
        # The followers' times (follow.py's IDLE_S and TIMEOUT_S, follow.mjs's), not the core's
        # defaults (10 s idle, 5 s a request): `serve` is measured against them.
        times = ["--etcd-idle-ms", "1000", "--etcd-timeout-ms", "1000"]
        return ["--etcd", self.members("serve"), "--key", KEY, *times, *secure]

    def serve_env(self) -> dict[str, str] | None:
        # The password in the environment, where the CLI reads it: not on its command line.
        return None if self.tls is None else {**os.environ, "SHARDROUTE_ETCD_PASSWORD": self.password}

    def unavailable(self) -> dict[str, int]:
        return {name: member.requests for name, member in self.unavailable_members.items()}

    def publish(self, document: Any) -> None:
        etcd.publish(self.client, KEY, document)

    def repair(self, document: Any) -> None:
        # `publish` with replace: still a compare-and-swap on the value read, and the new
        # epoch above what the followers hold (read back through the key's history).
        etcd.publish(self.client, KEY, document, replace=True)

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
        # publish's session: one for the run, as a service keeps one (a session of its own
        # per write would cost the ensemble two more transactions each), moving to another
        # member by itself when its member fails; made at the first write.
        self.timeout = timeout
        self.writer: zookeeper.ZooKeeperFollower | None = None

    def flags(self, follower: str = "") -> list[str]:
        return ["--zookeeper", self.cluster.hosts, "--path", KEY]

    def serve_flags(self) -> list[str]:
        # The followers' 2 s sessions (follow.py's SESSION_S, follow.mjs's), not the core's
        # default (10 s): `serve` is measured against them.
        return [*self.flags("serve"), "--zookeeper-session-ms", "2000"]

    def publish(self, document: Any) -> None:
        # The kazoo client above is the run's raw writer (bad values), not publish's.
        if self.writer is None:
            self.writer = zookeeper.ZooKeeperFollower(self.cluster.hosts, KEY, timeout=self.timeout)
        zookeeper.publish(self.writer, KEY, document)

    def put(self, value: str) -> None:
        self.client.set(KEY, value.encode())

    def stored(self) -> Any:
        return json.loads(self.client.get(KEY)[0])

    def replace(self, value: str) -> None:
        _, stat = self.client.get(KEY)
        self.client.set(KEY, value.encode(), version=stat.version)  # BadVersionError if it lost

    def stop(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.client.stop()
        self.client.close()
        self.cluster.stop()


def stop_store(store: Store) -> None:
    store.stop()
    for member in getattr(store, "unavailable_members", {}).values():
        member.stop()


class Publisher:
    """Publishes through the core's follower (`publish`), retrying while the cluster has
    no leader; records when each epoch's write was acknowledged."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.document: Any = start_document()
        self.committed: dict[int, float] = {}
        self.repaired: int | None = None  # the epoch `bad(..., repair=True)` wrote

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

    def bad(self, value: str, code: str, followers: dict[str, JsonLinesChild], repair: bool = False) -> None:
        """Writes `value` straight to the key (no follower check), waits until every
        follower that decides (not the bare watches, not the WASM ones behind `serve`) has
        refused it with `code`, or 30 s, then replaces it with the next good epoch by a
        compare-and-swap on it. A follower that never reads it fails the test then; a
        fixed wait let a follower that was still catching up after a fault miss it.
        With `repair`, the package's repair writes it (`publish(..., replace=True)` on
        etcd), and every follower is given up to 30 s to install it before the run goes
        on (the test checks that each did)."""
        before = {name: refusals(child, code) for name, child in followers.items() if decides(name)}
        self.store.put(value)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(
                refusals(followers[name], code) <= count for name, count in before.items()):
            time.sleep(0.02)
        time.sleep(0.1)  # the bare watches and `serve` read it too
        following = next_document(self.document, self.document["epoch"] - 1)
        started = time.time()
        if repair:
            self.store.repair(following)
            self.repaired = following["epoch"]
        else:
            self.store.replace(json.dumps(following))
        self.committed[following["epoch"]] = started
        self.document = following
        if repair:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not all(
                    any(epoch == following["epoch"] for epoch, _ in installs(child)) for child in followers.values()):
                time.sleep(0.02)


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
    subprocess.run(["cargo", "build", "-q", "-p", "shardroute-cli"], cwd=ROOT, check=True)
    serve = JsonLinesChild("serve", [os.path.join(ROOT, "target", "debug", "shardroute"), "serve", *store.serve_flags(),
                                     "--listen", "127.0.0.1:0"], stdin=False, stderr=subprocess.DEVNULL,
                           env=store.serve_env())
    serving = serve.expect("listening", timeout=60)["url"]
    followers: dict[str, JsonLinesChild] = {}
    for name, flags in FOLLOWERS[store.name].items():
        if name == "node":
            command = [shutil.which("node") or "node", os.path.join(HERE, "follow.mjs"), *store.flags(name)]
        elif not name.startswith("wasm"):
            command = [PYTHON, os.path.join(HERE, "follow.py"), *store.flags(name), *flags]
        elif name.startswith("wasm in deno"):
            command = [DENO, "run", "-A", os.path.join(HERE, "follow-http.mjs"), serving]
        elif name.startswith("wasm in workerd"):
            command = [shutil.which("node") or "node", os.path.join(HERE, "follow-workerd.mjs"), serving]
        followers[name] = JsonLinesChild(name, command)
        followers[name].expect("ready", timeout=60)
    return serve, followers


def installs(child: JsonLinesChild) -> list[tuple[int, float]]:
    return [(e["epoch"], e["t"]) for e in list(child.events) if e.get("event") == "installed"]


def asked(follower: str) -> bool:
    """Whether a follower answers `stats` (follow.py, follow.mjs: not the WASM ones)."""
    return not follower.startswith("wasm")


def stats_now(child: JsonLinesChild) -> dict[str, Any]:
    child.send("stats")
    return child.expect("stats", timeout=30)


def quiet_period(store: Store, followers: dict[str, JsonLinesChild]) -> dict[str, Any]:
    """QUIET_S with no write: every follower's watch goes idle (1 s) several times and is
    read again. Per follower, what its counters and its 503 member counted meanwhile (a
    quiet watch is not a lost source, and a follower that left the 503 member does not
    go back to it), and the member it is on after it."""
    names = [name for name in followers if asked(name)]
    before = {name: stats_now(followers[name]) for name in names}
    hits = store.unavailable()
    time.sleep(QUIET_S)
    after = {name: stats_now(followers[name]) for name in names}
    hits_after = store.unavailable()
    quiet: dict[str, Any] = {}
    for name in names:
        was, now = before[name]["stats"], after[name]["stats"]
        for key, alias in (("disconnects", ""), ("reads", ""), ("watch_restarts", "watchRestarts"), ("requests", "")):
            if key in now or alias in now:  # Node's counters are named in camelCase
                quiet.setdefault(name, {})[key] = now.get(key, now.get(alias, 0)) - was.get(key, was.get(alias, 0))
        quiet.setdefault(name, {})["member"] = after[name].get("member")
    for name in hits_after:
        quiet.setdefault(name, {})["unavailable_requests"] = hits_after[name] - hits.get(name, 0)
    return quiet


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
        stop_store(store)
    shutil.rmtree(root, ignore_errors=True)


def run(store_name: str = "etcd", secure: bool = True) -> dict[str, Any]:
    root = tempfile.mkdtemp(prefix=f"shardroute-live-{store_name}-")
    followers: dict[str, JsonLinesChild] = {}
    faults: dict[str, float] = {}
    serve: JsonLinesChild | None = None
    store: Store | None = None
    cut: PeerCut | None = None
    try:
        cannot_cut = can_cut()
        uids = None if cannot_cut else MEMBER_UIDS
        store = (EtcdStore(root, uids, secure=secure, unavailable=True) if store_name == "etcd"
                 else ZooKeeperStore(root, uids))
        cluster = store.cluster
        publisher = Publisher(store)
        publisher.write(start_document())
        serve, followers = start_followers(store)
        time.sleep(0.5)
        at_start = store.unavailable()
        quiet = quiet_period(store, followers) if store_name == "etcd" else {}
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
                publisher.bad("{not a document", "invalid_topology", followers, repair=True)
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
        # Per follower, the requests its 503 member got: at start, in the quiet period, in all.
        unavailable = {}
        for name, whole_run in store.unavailable().items():
            unavailable[name] = {"url": getattr(store, "unavailable_members")[name].url, "at_start": at_start[name],
                                 "quiet": quiet[name]["unavailable_requests"], "whole_run": whole_run}
        return {
            "store": store_name, "not_cut": cannot_cut, "secure": getattr(store, "tls", None) is not None,
            "quiet_s": QUIET_S if quiet else None, "quiet": quiet, "unavailable": unavailable,
            "repaired_epoch": publisher.repaired,
            **report(publisher.committed, faults, followers, final, publisher.repaired),
        }
    finally:
        if cut is not None:
            cut.heal()
        shut_down(followers, serve, store, root)


def report(committed: dict[int, float], faults: dict[str, float], followers: dict[str, JsonLinesChild],
           final: int, repaired: int | None = None) -> dict[str, Any]:
    rows = []
    for name, child in followers.items():
        events = list(child.events)
        installed = [(e["epoch"], e["t"]) for e in events if e.get("event") == "installed"]
        epochs = [epoch for epoch, _ in installed]
        # Not the first epoch: it was written before the followers started.
        delays = [(t - committed[epoch]) * 1000 for epoch, t in installed if epoch in committed and epoch != min(committed)]
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
            "refused": refused, "stats": done.get("stats", {}), "member": done.get("member"),
            "installed_repaired": repaired in seen_epochs,
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
    if result.get("quiet"):
        lines += ["", f"| follower | member answering 503: requests at start / in the quiet {result['quiet_s']:g} s / "
                  "whole run | disconnects in the quiet | reads in the quiet |", "|---|---|---|---|"]
        for name, hits in result["unavailable"].items():
            quiet = result["quiet"].get(name, {})
            lines.append(f"| {name} | {hits['at_start']} / {hits['quiet']} / {hits['whole_run']} | "
                         f"{quiet.get('disconnects', '—')} | {quiet.get('reads', '—')} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=["etcd", "zookeeper"], default="etcd")
    parser.add_argument("--json", help="write the result here")
    parser.add_argument("--plain", action="store_true", help="etcd without TLS and authentication")
    args = parser.parse_args()
    result = run(args.store, secure=not args.plain)
    print(table(result))
    print(f"\n{result['published']} epochs published, the last {result['final_epoch']}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
