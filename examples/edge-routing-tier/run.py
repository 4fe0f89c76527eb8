"""Runs the example: the edge is the routing tier. A module worker (worker.mjs), in
workerd and in Deno at once, routes users' messages to the shard services of a sharded
PostgreSQL while it grows from 5 to 10 shards, twice (run A: background copy of a vbucket
dictionary; run B: lazy moves of the 1-based `user_id % n ?: n`), with the topology in
etcd, served over HTTP by `shardroute serve`.

Once: PostgreSQL and etcd (examples/postgres-messages/servers.py), and one shard service
per database (shard_service.py). For each run, on fresh data:

1. the start topology goes to etcd (epoch 1) and every user gets a few messages;
2. two `shardroute serve --etcd` start, one following the key `topology`, one `previous`;
   the worker starts in workerd (bundle.mjs, then `workerd serve`) and in Deno
   (deno.mjs), and each is given the serves' and the shard services' URLs (`POST
   /follow`, kept open: the followers live in it);
3. clients (load.py) read and write through both workers, and send each request again
   straight to the shard service that served it (*before*); the coordinator of
   examples/postgres-messages runs (`background` or `lazy`) while they go on (*during*),
   then they write for a while more (*after*);
4. every user is read once through the workers; the shards are checked against every
   acknowledged write (lost, duplicates, rows off their final owner), and every request
   a shard service served is judged against the documents etcd held (misrouted).

Prints the report, writes it as JSON (`--json`), exits 1 when a figure is off.

    .venv/bin/python examples/edge-routing-tier/run.py [--runs A,B] [--json out.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
POSTGRES_EXAMPLE = os.path.join(ROOT, "examples", "postgres-messages")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # examples/harness.py

import shardroute  # noqa: E402
from harness import JsonLinesChild, StoppedOnExit, stop_process, workerd_ports  # noqa: E402
from judge import History, judge, percentile  # noqa: E402
from load import Ack, Book, Client, Connection, digest, verify  # noqa: E402
from servers import Servers  # noqa: E402
from shardroute.etcd import Etcd  # noqa: E402
from shards import PREVIOUS, SHARD_NAMES, TOPOLOGY, Shards, modulo, vbucket_start  # noqa: E402

PYTHON = os.environ.get("SHARDROUTE_PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
DENO = os.path.join(ROOT, "bindings-wasm", "node_modules", "deno", "deno")  # npm's deno, installed by setup
CLI = os.path.join(ROOT, "target", "debug", "shardroute")
RUNTIMES = ["workerd", "deno"]
PROBE_ID = 10**15  # the fence probe's message ids (never stored)


class Fleet(StoppedOnExit):
    """Every process this script starts besides the servers (shard services, serves,
    workerd, Deno, the coordinator), each stopped by its PID: on leaving the block, on
    failure, at exit and on SIGTERM/SIGINT."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[Any]] = []
        self.lock = threading.Lock()

    def start(self) -> None:
        pass

    def add(self, process: subprocess.Popen[Any]) -> subprocess.Popen[Any]:
        with self.lock:
            self.processes.append(process)
        return process

    def child(self, name: str, command: list[str], **options: Any) -> JsonLinesChild:
        child = JsonLinesChild(name, command, **options)
        self.add(child.process)
        return child

    def stop_one(self, process: subprocess.Popen[Any]) -> None:
        stop_process(process, signal.SIGTERM, timeout=10)

    def stop(self) -> None:
        with self.lock:
            processes, self.processes = self.processes[::-1], []
        for process in processes:
            self.stop_one(process)


class Follow:
    """The driver's `POST /follow` to one worker, held open for the run (the worker's
    followers live in it); `ready` once the worker has a topology."""

    def __init__(self, url: str, config: dict[str, Any]) -> None:
        host, _, port = url.removeprefix("http://").partition(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=60)
        self.connection.request("POST", "/follow", json.dumps(config), {"content-type": "application/json"})
        self.response = self.connection.getresponse()
        first = json.loads(self.response.readline())
        assert first["event"] == "ready", first
        self.lines: list[dict[str, Any]] = [first]
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            while line := self.response.readline():
                self.lines.append(json.loads(line))
        except (OSError, ValueError, http.client.HTTPException):
            pass

    def close(self) -> None:
        """Ends the request (the worker closes its followers): the socket shut down, the
        reader joined, then the connection closed."""
        sock = self.connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(timeout=10)
        self.connection.close()


def get_json(url: str) -> Any:
    host, _, rest = url.removeprefix("http://").partition(":")
    port, _, path = rest.partition("/")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("GET", "/" + path)
        return json.loads(connection.getresponse().read())
    finally:
        connection.close()


def wait_answering(url: str, process: subprocess.Popen[Any], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            get_json(url + "/stats")
            return
        except (OSError, ValueError, http.client.HTTPException):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer (exit {process.poll()})") from None
            time.sleep(0.1)


def start_workerd(fleet: Fleet, out: str) -> tuple[subprocess.Popen[Any], str]:
    bundled = subprocess.run([shutil.which("node") or "node", os.path.join(HERE, "bundle.mjs"), out],
                             check=True, capture_output=True, text=True, cwd=HERE)
    binary = json.loads(bundled.stdout.strip().splitlines()[-1])["workerd"]
    # Its socket listens on 127.0.0.1:0: workerd binds a port itself and says which on the
    # control pipe (no port guessed beforehand). The read end stays open while it runs.
    control, control_child = os.pipe()
    with open(os.path.join(out, "workerd.log"), "ab") as log:
        process = fleet.add(subprocess.Popen([binary, "serve", "config.capnp", "--control-fd", str(control_child)],
                                             cwd=out, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                             pass_fds=(control_child,)))
    os.close(control_child)
    url = f"http://127.0.0.1:{workerd_ports(control, process)[0]}"
    wait_answering(url, process)
    return process, url


def start_deno(fleet: Fleet) -> tuple[JsonLinesChild, str]:
    child = fleet.child("deno", [DENO, "run", "-A", os.path.join(HERE, "deno.mjs"), "0"], cwd=HERE, stdin=False)
    url = str(child.expect("listening", timeout=60)["url"])
    wait_answering(url, child.process)
    return child, url


def seed(postgres: str, start: shardroute.Topology, users: int, per_user: int, book: Book) -> int:
    """Every user's first messages under the start topology, straight into the shards
    (COPY), acknowledged in `book` as the start data's; ids 1.. (the clients' are far above)."""
    router = shardroute.Router(start)
    vbuckets = start["strategy"]["type"] == "vbucket"
    at = datetime.now(timezone.utc) - timedelta(days=1)
    by_shard: dict[str, list[tuple[Any, ...]]] = {}
    for index in range(users * per_user):
        message_id, user = index + 1, index % users + 1
        body = f"seed message {index // users} of user {user}"
        row = (message_id, user, router.route(user) if vbuckets else 0, at + timedelta(seconds=index), body, "seed")
        by_shard.setdefault(router.node(user), []).append(row)
        book.ack(message_id, Ack(user, digest(body), "seed", "seed", 0.0))
    shards = Shards(postgres, by_shard)
    try:
        for shard, rows in by_shard.items():
            with shards.connections[shard].cursor() as cursor:
                with cursor.copy("COPY messages (id, user_id, vbucket, time, body, sender) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            shards.connections[shard].execute("ANALYZE messages")
    finally:
        shards.close()
    return users * per_user


def check(postgres: str, final: shardroute.Router, book: Book, kind: str) -> dict[str, Any]:
    """The shards against every acknowledged write: each must be stored exactly once, on
    its owner under the final epoch, with its body."""
    where: dict[int, list[str]] = {}
    stored: dict[int, tuple[int, str, str]] = {}
    misplaced = wrong_vbucket = 0
    shards = Shards(postgres)
    try:
        for shard in SHARD_NAMES:
            rows = shards.connections[shard].execute("SELECT id, user_id, vbucket, body, sender FROM messages").fetchall()
            for message_id, user, vbucket, body, sender in rows:
                where.setdefault(message_id, []).append(shard)
                stored[message_id] = (user, digest(body), sender)
                wrong_vbucket += vbucket != (final.route(user) if kind == "background" else 0)
            # The core's consistency check (MigrationSession.misplaced): the rows this shard
            # holds whose user the final router places elsewhere.
            misplaced += shardroute.MigrationSession.misplaced(final, shard, [user for _, user, *_ in rows])["count"]
    finally:
        shards.close()
    lost: dict[str, int] = {}  # by whom it was acknowledged: not stored exactly once on its final owner
    missing = 0
    for message_id, ack in book.acks.items():
        places = where.get(message_id, [])
        missing += not places
        if places != [final.node(ack.user)]:
            lost[ack.via] = lost.get(ack.via, 0) + 1
    unacknowledged: dict[str, int] = {}
    for message_id, (_, _, sender) in stored.items():
        if message_id not in book.acks:
            unacknowledged[sender] = unacknowledged.get(sender, 0) + 1
    return {
        "acknowledged": len(book.acks), "stored": len(stored),
        "acknowledged_by": {via: sum(1 for a in book.acks.values() if a.via == via) for via in ["seed", *RUNTIMES, "direct"]},
        "lost": sum(lost.values()), "lost_by": lost, "missing": missing,
        "duplicates": sum(1 for places in where.values() if len(places) > 1),
        "misplaced": misplaced, "wrong_vbucket": wrong_vbucket,
        "body_mismatch": sum(1 for i, a in book.acks.items() if i in stored and (a.user, a.digest) != stored[i][:2]),
        "unacknowledged_kept": unacknowledged,
    }


def probe_fences(shard_urls: dict[str, str], stale_epoch: int, epoch: int, writes: int = 10) -> dict[str, int]:
    """After the rebalance every fence is above epoch 1: `writes` writes under it to each
    shard service must each be refused (409, nothing stored), more than its pool of
    connections, and the service must still answer a read afterwards (a refusal gives
    its connection back). Logged with `x-via: probe`, which the judge leaves out."""
    found = {"refused": 0, "accepted": 0, "answered": 0}
    for shard, url in shard_urls.items():
        connection = Connection(url)
        try:
            for number in range(writes):
                message = {"id": PROBE_ID + number, "body": "a write under a fenced epoch", "vbucket": 0, "sender": "probe"}
                status = connection.request("POST", f"/users/1/messages?epoch={stale_epoch}", message, "probe")[0]
                found["refused" if status == 409 else "accepted"] += 1
            found["answered"] += connection.request("GET", f"/users/1/moved?epoch={epoch}", None, "probe")[0] == 200
        finally:
            connection.close()
    return found


def latency(book: Book, runtime: str, phases: set[str] | None = None) -> dict[str, Any]:
    """Through the tier vs straight to the shard (ms), over the pairs whose direct half was served."""
    pairs = [s for s in book.samples if s.runtime == runtime and s.direct_s is not None and (phases is None or s.phase in phases)]
    tier = [s.tier_s * 1000 for s in pairs]
    direct = [s.direct_s * 1000 for s in pairs if s.direct_s is not None]
    out: dict[str, Any] = {"pairs": len(pairs)}
    for name, values in (("tier", tier), ("direct", direct)):
        out[f"{name}_p50_ms"] = round(percentile(values, 0.50), 2)
        out[f"{name}_p99_ms"] = round(percentile(values, 0.99), 2)
    out["added_p50_ms"] = round(out["tier_p50_ms"] - out["direct_p50_ms"], 2)
    out["added_p99_ms"] = round(out["tier_p99_ms"] - out["direct_p99_ms"], 2)
    return out


def run_once(kind: str, servers: Servers, fleet: Fleet, services: dict[str, JsonLinesChild], shard_urls: dict[str, str],
             args: argparse.Namespace, work: str) -> dict[str, Any]:
    assert servers.postgres is not None and servers.etcd is not None
    postgres, etcd_url = servers.postgres.address, servers.etcd.url
    etcd = Etcd(etcd_url)
    run = "A" if kind == "background" else "B"
    servers.reset()
    start = vbucket_start() if kind == "background" else modulo(5, 1)
    revision = etcd.put(TOPOLOGY, json.dumps(start))
    history = History(etcd, revision)
    book = Book()
    seeded = seed(postgres, start, args.users, args.per_user, book)
    logs = {shard: os.path.join(work, f"{run}-{shard}.log") for shard in SHARD_NAMES}
    for shard, service in services.items():
        service.send(f"log {logs[shard]}")
        service.expect("logging")

    started: list[subprocess.Popen[Any]] = []
    follows: dict[str, Follow] = {}
    stop = threading.Event()
    clients: list[Client] = []
    coordinator: JsonLinesChild | None = None
    events: list[dict[str, Any]] = []
    try:
        serves = {}
        for key in (TOPOLOGY, PREVIOUS):
            serve = fleet.child(f"serve {key}", [CLI, "serve", "--etcd", etcd_url, "--key", key, "--listen", "127.0.0.1:0"],
                                stdin=False, stderr=subprocess.DEVNULL)
            started.append(serve.process)
            serves[key] = str(serve.expect("listening", timeout=60)["url"])
        out = os.path.join(work, f"{run}-workerd")
        os.makedirs(out)
        workerd, workerd_url = start_workerd(fleet, out)
        started.append(workerd)
        workers = {"workerd": workerd_url}
        deno, workers["deno"] = start_deno(fleet)
        started.append(deno.process)
        for runtime, url in workers.items():
            config = {"topology": serves[TOPOLOGY], "previous": serves[PREVIOUS], "shards": shard_urls, "runtime": runtime}
            follows[runtime] = Follow(url, config)

        for runtime, url in workers.items():
            for number in range(args.clients):
                clients.append(Client(f"{runtime}-{number}", runtime, url, shard_urls, book, args.users, args.rate,
                                      args.write_share, stop))
        began = time.monotonic()
        for client in clients:
            client.start()
        time.sleep(args.before)
        book.phase = "during"
        command = [PYTHON, os.path.join(POSTGRES_EXAMPLE, "coordinator.py"), "--etcd", etcd_url, "--postgres", postgres]
        command += ["--throttle-ms", str(args.throttle_ms), "background"] if kind == "background" else ["--wait", str(args.lazy_wait), "lazy"]
        rebalance_started = time.monotonic()
        coordinator = fleet.child("coordinator", command, cwd=POSTGRES_EXAMPLE, stdin=False)
        while (event := coordinator.next_event()) is not None:
            if event["event"] != "copy":
                events.append(event)
            if event["event"] in ("done", "refused"):
                break
            if time.monotonic() - rebalance_started > 300:
                raise RuntimeError("the coordinator took more than 300 s")
        rebalance_s = time.monotonic() - rebalance_started
        if coordinator.process.wait(timeout=30) != 0 or not events or events[-1]["event"] != "done":
            raise RuntimeError(f"the coordinator failed: {events[-1:]}")
        book.phase = "after"
        time.sleep(args.after)
        stop.set()
        for client in clients:
            client.join(timeout=60)
        load_s = time.monotonic() - began
        final_text, _ = etcd.get(TOPOLOGY)
        assert final_text is not None
        final = shardroute.Router(final_text)
        deadline = time.monotonic() + 30
        while any(get_json(url + "/stats")["epoch"] != str(final.epoch) for url in workers.values()):
            if time.monotonic() > deadline:
                raise RuntimeError("a worker never reached the final epoch")
            time.sleep(0.05)
        verified = verify(book, workers, args.users)
        fence_probe = probe_fences(shard_urls, 1, final.epoch)
        worker_stats = {runtime: get_json(url + "/stats") for runtime, url in workers.items()}
    except BaseException:
        log = os.path.join(work, f"{run}-workerd", "workerd.log")
        if os.path.exists(log):
            with open(log, errors="replace") as lines:
                print(f"workerd's log:\n{''.join(lines.readlines()[-30:])}", file=sys.stderr)
        raise
    finally:
        stop.set()
        for follow in follows.values():
            follow.close()
        for process in [*started[::-1], *([coordinator.process] if coordinator else [])]:
            fleet.stop_one(process)
        for service in services.values():
            service.send("log")
            service.expect("logging")
        history.close()

    result: dict[str, Any] = {
        "run": run, "kind": kind, "seeded": seeded, "final_epoch": final.epoch, "rebalance_s": round(rebalance_s, 3),
        "load_s": round(load_s, 3), "coordinator_events": events, "verify": verified,
        "fence_probe": fence_probe,
        "workers": worker_stats, "failures": book.failures[:20], "counts": book.counts,
    }
    result.update(check(postgres, final, book, kind))
    judged = judge(history, logs)
    result["judged"] = judged
    result["runtimes"] = {}
    for runtime in RUNTIMES:
        stats = worker_stats[runtime]["stats"]
        requests = {phase: sum(n for name, n in book.counts.items() if name.startswith(f"{runtime}/{phase}/"))
                    for phase in ("before", "during", "after")}
        result["runtimes"][runtime] = {
            "requests": sum(requests.values()), "requests_by_phase": requests,
            "reads": stats["reads"], "writes": stats["writes"], "failed": stats["failed"],
            "served_by_shards": judged["served"].get(runtime, 0), "misrouted": judged["misrouted"].get(runtime, 0),
            "former_owner": judged["former_owner"].get(runtime, {}),
            "lost": result["lost_by"].get(runtime, 0),
            "stale_own": book.counts.get(f"{runtime}/stale_own", 0),
            "stale_others": book.counts.get(f"{runtime}/stale_others", 0),
            "direct_refused": book.counts.get(f"{runtime}/direct_refused", 0),
            "refused_by_fence": stats["refused_by_fence"], "refreshes": stats["refreshes"],
            "lazy_moves": stats["lazy_moves"], "moved_rows": stats["moved_rows"], "catch_up_reads": stats["catch_up_reads"],
            "refused_documents": stats["refused_documents"],
            "epochs": sorted({int(i["epoch"]) for i in worker_stats[runtime]["installs"]}),
            "modes": [f"{i['epoch']}:{i['mode']}" for i in worker_stats[runtime]["installs"]],
            "latency": latency(book, runtime), "latency_outside_rebalance": latency(book, runtime, {"before", "after"}),
        }
    done = events[-1]
    if kind == "background":
        switched = [e for e in events if e["event"] == "switched"]
        result["rows_moved"] = switched[0]["rows_to_move"] if switched else 0
    else:
        result["rows_moved"] = done["rows_moved"] + sum(r["moved_rows"] for r in result["runtimes"].values())
    return result


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| run | runtime | requests (before / during / after) | shard requests served | misrouted | served by a former owner (allowed) "
        "| lost | stale reads | tier p50 / p99 ms | direct p50 / p99 ms | added p50 / p99 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for runtime, f in r["runtimes"].items():
            p = f["requests_by_phase"]
            former = ", ".join(f"{kind} {n}" for kind, n in sorted(f["former_owner"].items())) or "0"
            lat = f["latency"]
            lines.append(
                f"| {r['run']} ({r['kind']}) | {runtime} | {f['requests']:,} ({p['before']:,} / {p['during']:,} / {p['after']:,}) | "
                f"{f['served_by_shards']:,} | {f['misrouted']} | {former} | {f['lost']} | {f['stale_own']} | "
                f"{lat['tier_p50_ms']} / {lat['tier_p99_ms']} | {lat['direct_p50_ms']} / {lat['direct_p99_ms']} | "
                f"{lat['added_p50_ms']} / {lat['added_p99_ms']} |"
            )
    for r in results:
        direct = r["judged"]
        lines.append(
            f"\nrun {r['run']}: {r['acknowledged']:,} acknowledged writes ({r['seeded']:,} seeded, "
            f"{r['acknowledged_by']['direct']:,} direct), {r['stored']:,} stored; lost {r['lost']}, duplicates {r['duplicates']}, "
            f"misplaced {r['misplaced']}; rows moved {r['rows_moved']:,}; rebalance {r['rebalance_s']} s; final epoch {r['final_epoch']}; "
            f"direct requests served {direct['served'].get('direct', 0):,}, misrouted {direct['misrouted'].get('direct', 0)}; "
            f"every user read at the end: {r['verify']}; writes under epoch 1 at the end: {r['fence_probe']}"
        )
        for runtime, f in r["runtimes"].items():
            lines.append(
                f"  {runtime}: routings {' '.join(f['modes'])}; fence refusals {f['refused_by_fence']}, refreshes {f['refreshes']}, "
                f"lazy moves {f['lazy_moves']} ({f['moved_rows']} rows), catch-up reads {f['catch_up_reads']}, "
                f"reads missing another client's earlier write {f['stale_others']}, direct replays refused {f['direct_refused']}; "
                f"outside the rebalance: added p50 / p99 {f['latency_outside_rebalance']['added_p50_ms']} / "
                f"{f['latency_outside_rebalance']['added_p99_ms']} ms"
            )
    return "\n".join(lines)


def problems(results: list[dict[str, Any]]) -> list[str]:
    found = []
    for r in results:
        where = f"run {r['run']}"
        for key in ("lost", "duplicates", "misplaced", "wrong_vbucket", "body_mismatch"):
            if r[key]:
                found.append(f"{where}: {key} = {r[key]}")
        if r["unacknowledged_kept"]:
            found.append(f"{where}: rows no client saw acknowledged: {r['unacknowledged_kept']}")
        if r["judged"]["history_failure"] or r["judged"]["history_conflicts"]:
            found.append(f"{where}: etcd's history: {r['judged']['history_failure']}, {r['judged']['history_conflicts']} conflicts")
        if r["failures"]:
            found.append(f"{where}: failed requests: {r['failures'][:5]}")
        if r["judged"]["misrouted"]:
            found.append(f"{where}: misrouted {r['judged']['misrouted']}: {r['judged']['misrouted_sample'][:5]}")
        if r["fence_probe"]["accepted"] or r["fence_probe"]["answered"] != len(SHARD_NAMES):
            found.append(f"{where}: writes under epoch 1 after the fences rose: {r['fence_probe']}")
        if any(r["verify"].values()):
            found.append(f"{where}: the final reads: {r['verify']}")
        for runtime, f in r["runtimes"].items():
            if f["requests_by_phase"]["during"] == 0:
                found.append(f"{where}: {runtime} served no request during the rebalance")
            if f["stale_own"]:
                found.append(f"{where}: {runtime}: {f['stale_own']} reads missed the reader's own writes")
            if not f["epochs"] or f["epochs"][0] != 1 or f["epochs"][-1] != r["final_epoch"]:
                found.append(f"{where}: {runtime} routed under epochs {f['epochs']}, not 1 .. {r['final_epoch']}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="A,B", help="A (background copy), B (lazy), or both")
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--per-user", type=int, default=5, help="seeded messages per user")
    parser.add_argument("--clients", type=int, default=2, help="clients per runtime")
    parser.add_argument("--rate", type=float, default=100, help="operations per second per client, at most")
    parser.add_argument("--write-share", type=float, default=0.5, help="the share of writes among the operations")
    parser.add_argument("--before", type=float, default=3.0, help="seconds of load before the rebalance")
    parser.add_argument("--after", type=float, default=3.0, help="seconds of load after it")
    parser.add_argument("--throttle-ms", type=float, default=20.0, help="the copy's pause per vbucket (run A)")
    parser.add_argument("--lazy-wait", type=float, default=3.0, help="seconds of lazy moves before the sweep (run B)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "-q", "-p", "shardroute-cli"], cwd=ROOT, check=True)
    kinds = {"A": "background", "B": "lazy"}
    results = []
    work = tempfile.mkdtemp(prefix="shardroute-edge-routing-tier-")
    try:
        with Servers() as servers, Fleet() as fleet:
            assert servers.postgres is not None
            services: dict[str, JsonLinesChild] = {}
            for shard in SHARD_NAMES:
                services[shard] = fleet.child(shard, [PYTHON, os.path.join(HERE, "shard_service.py"),
                                                      "--postgres", servers.postgres.address, "--shard", shard], cwd=HERE)
            shard_urls = {shard: str(service.expect("ready", timeout=60)["url"]) for shard, service in services.items()}
            for run in args.runs.split(","):
                results.append(run_once(kinds[run], servers, fleet, services, shard_urls, args, work))
            for service in services.values():
                service.send("quit")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(table(results))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
    found = problems(results)
    for problem in found:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
