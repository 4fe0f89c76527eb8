"""Runs the example: sharded PostgreSQL grows from 5 to 10 shards under a Python and a
Node service, twice (run A: background copy of a vbucket dictionary; run B: lazy moves
of the 1-based `user_id % n ?: n`), with the topology in etcd.

For each run, on the same servers with fresh data (`servers.py`):

1. the start topology goes to etcd (epoch 1) and 5,000 users get 10 messages each
   (ids reserved from the Python ticket counter, logged in `seed.log`);
2. both services start (`service.py`, `service.mjs`) and write for a few seconds
   (throughput *before*);
3. the coordinator runs (`coordinator.py background`, or `lazy`) while both services
   write in rounds (*during*); the Node service is killed with SIGKILL in the first
   round and started again; in run A the coordinator is killed with SIGKILL in the
   middle of a vbucket copy and started again, and resumes from etcd and the shards;
   in run B both services then read every user at once (racing first reads, and the
   coordinator's sweep) before writing on;
4. both services write again (*after*), then read every user's timeline at once;
5. the shards are checked against the acknowledgement logs: lost, duplicates, rows
   off their owner under the final epoch, per-user id sets and body checksums; the same
   for the tenants' channels, with the placed tenant's rows on its group, the spread
   tenant's on several shards, and the reference table alike on every node of its group,
   which the coordinator widened to all ten shards after the growth.

Prints the report, writes it as JSON (`--json`), exits 1 when a figure is off.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # examples/harness.py

import shardroute  # noqa: E402
from harness import JsonLinesChild  # noqa: E402
from shardroute.etcd import Etcd  # noqa: E402
from servers import Servers  # noqa: E402
from shards import (  # noqa: E402
    CHANNELS, COLUMNS, INDEX, PLAN_ROWS, PLANS, SHARD_NAMES, TENANT_COLUMNS, TENANT_TABLE, TICKET_SERVER, TIMELINE_PAGE, TOPOLOGY, Oracle,
    Shards, body_digest, modulo, tenant_key, vbucket_start,
)
from service import Ids  # noqa: E402

PYTHON = os.environ.get("SHARDROUTE_PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))


class Process(JsonLinesChild):
    """A child of this example (a service or the coordinator), run in its folder."""

    def __init__(self, name: str, command: list[str], stdin: bool = True, stderr: Any = None) -> None:
        super().__init__(name, command, cwd=HERE, stdin=stdin, stderr=stderr)


def service_command(name: str, postgres: str, etcd: str, users: int, log: str) -> list[str]:
    arguments = ["--postgres", postgres, "--etcd", etcd, "--service", name, "--users", str(users), "--log", log,
                 "--page", str(TIMELINE_PAGE)]  # both services read the same page
    if name == "python":
        return [PYTHON, os.path.join(HERE, "service.py"), *arguments]
    return [shutil.which("node") or "node", os.path.join(HERE, "service.mjs"), *arguments]


def seed(etcd: Etcd, postgres: str, start: shardroute.Topology, users: int, per_user: int, log_path: str) -> int:
    """Every user's first messages, under the start topology, straight into the shards
    (COPY), with their `by_sender` index entries and their copy in the oracle; ids from a
    block of the Python ticket counter, so no service reuses one."""
    router = shardroute.Router(start)
    index = router.index(INDEX)
    vbuckets = start["strategy"]["type"] == "vbucket"
    ids = Ids(etcd, "python").reserve(users * per_user)
    by_shard: dict[str, list[tuple[Any, ...]]] = {}
    entries: dict[str, list[tuple[int, int, int]]] = {}
    at = datetime.now(timezone.utc) - timedelta(days=1)
    with open(log_path, "w") as log:
        for number, message_id in enumerate(ids):
            user = number % users + 1
            sender = number * 7919 % users + 1
            body = f"seed message {number // users} of user {user}"
            row = (message_id, user, router.route(user) if vbuckets else 0, at + timedelta(seconds=number), body, "seed", sender)
            by_shard.setdefault(router.node(user), []).append(row)
            entries.setdefault(index.node(sender), []).append((sender, message_id, user))
            log.write(f"{message_id} {user} {body_digest(body)}\n")
    shards = Shards(postgres)
    oracle = Oracle(postgres)
    try:
        copies = [(shards.connections[shard], "messages", COLUMNS, rows) for shard, rows in by_shard.items()]
        copies += [(shards.connections[shard], "by_sender", "sender_id, message_id, user_id", rows) for shard, rows in entries.items()]
        copies.append((oracle.connection, "messages", COLUMNS, [row for rows in by_shard.values() for row in rows]))
        for connection, table, columns, rows in copies:
            with connection.cursor() as cursor:
                with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
        for connection in [*shards.connections.values(), oracle.connection]:
            connection.execute("ANALYZE")
    finally:
        shards.close()
        oracle.close()
    return len(ids)


def seed_tenants(etcd: Etcd, postgres: str, start: shardroute.Topology, per_channel: int, log_path: str) -> int:
    """The tenants' first messages (`per_channel` on each channel of each tenant the
    document names), where the start router sends each key, and the reference table's
    rows (PLAN_ROWS) through its write plan, on every node of its group. Returns the
    tenant rows written."""
    router = shardroute.Router(start)
    vbuckets = start["strategy"]["type"] == "vbucket"
    tenants = sorted(start.get("tenants", {}).get("entries", {}))
    epoch = int(start["epoch"])
    ids = Ids(etcd, "python").reserve(len(tenants) * CHANNELS * per_channel)
    by_shard: dict[str, list[tuple[Any, ...]]] = {}
    at = datetime.now(timezone.utc) - timedelta(hours=12)
    with open(log_path + ".tenants", "w") as log:
        for number, message_id in enumerate(ids):
            tenant = tenants[number % len(tenants)]
            key = tenant_key(tenant, number // len(tenants) % CHANNELS + 1)
            body = f"seed message {number} on {key}"
            row = (message_id, key, tenant, router.route(key) if vbuckets else 0, at + timedelta(seconds=number), body, "seed")
            by_shard.setdefault(router.node(key), []).append(row)
            log.write(f"{message_id} {key} {body_digest(body)}\n")
    shards = Shards(postgres)
    try:
        for shard, rows in by_shard.items():
            shards.insert_tenant_rows(shard, epoch, rows)
        plans = router.table(PLANS)
        for plan, max_messages in sorted(PLAN_ROWS.items()):
            shards.write_reference(plans.route_write(plan), epoch, plan, max_messages, "seed")
    finally:
        shards.close()
    return len(ids)


class CoordinatorRun:
    """The coordinator in a thread of its own: started, optionally killed with SIGKILL
    at its `kill_after`-th `copy` event of batch `kill_batch`, started again; done when
    a process says `done`."""

    def __init__(self, command: list[str], kill_batch: int | None, kill_after: int = 1) -> None:
        self.command = command
        self.kill_batch = kill_batch
        self.kill_after = kill_after
        self.events: list[dict[str, Any]] = []
        self.kills: list[dict[str, Any]] = []
        self.failure: str | None = None
        self.started = time.monotonic()
        self.seconds = 0.0
        self.finished = threading.Event()
        self.process: Process | None = None
        self.stopping = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        try:
            while not self.stopping:
                self.process = Process("coordinator", self.command, stdin=False)
                if self._follow(self.process) != "killed":
                    break
        except Exception as err:  # noqa: BLE001 - reported by run.py
            self.failure = repr(err)
        finally:
            self.seconds = time.monotonic() - self.started
            self.finished.set()

    def stop(self) -> None:
        """Ends the coordinator if it still runs (run.py stopping early)."""
        self.stopping = True
        if self.process is not None:
            self.process.kill()

    def _follow(self, process: Process) -> str:
        """One coordinator process to its end: "done", "refused" or "killed"."""
        seen = 0
        while (event := process.next_event()) is not None:
            self.events.append(event)
            if event["event"] == "copy" and event["batch"] == self.kill_batch and not self.kills:
                seen += 1
                if seen == self.kill_after:
                    process.kill()
                    self.kills.append({"after_copy_event": event, "at_s": round(time.monotonic() - self.started, 3)})
                    print(f"killed the coordinator (pid {process.process.pid}) in the middle of batch {self.kill_batch}", file=sys.stderr)
                    return "killed"
            if event["event"] == "refused":
                self.failure = event["reason"]
            if event["event"] in ("done", "refused"):
                process.process.wait(timeout=30)
                return str(event["event"])
        raise RuntimeError(f"the coordinator exited with {process.process.wait()} before done")


def prepare(kind: str, servers: Servers, wanted: list[str], users: int, per_user: int,
            work: str, tenants: bool = False) -> tuple[str, str, Etcd, Any, dict[str, str], Any]:
    """A fresh start for a run of `kind`: the servers reset, its first topology in etcd,
    an empty log per service (and the seed's) in `work`, and the users seeded; with
    `tenants`, a document with the tenants and the reference table, both seeded. Returns
    (postgres, etcd_url, etcd, the first topology, the logs, what the seed wrote)."""
    assert servers.postgres is not None and servers.etcd is not None
    postgres, etcd_url = servers.postgres.address, servers.etcd.url
    etcd = Etcd(etcd_url)
    servers.reset()
    start = vbucket_start(tenants) if kind == "background" else modulo(5, 1, tenants)
    etcd.put(TOPOLOGY, json.dumps(start))
    logs = {name: os.path.join(work, f"{kind}-{name}.log") for name in ["seed", *wanted]}
    for path in logs.values():
        open(path, "w").close()
        open(path + ".tenants", "w").close()
    seeded = seed(etcd, postgres, start, users, per_user, logs["seed"])
    if tenants:
        seed_tenants(etcd, postgres, start, 2, logs["seed"])
    return postgres, etcd_url, etcd, start, logs, seeded


def run_once(kind: str, servers: Servers, wanted: list[str], args: argparse.Namespace, work: str) -> dict[str, Any]:
    postgres, etcd_url, etcd, start, logs, seeded = prepare(kind, servers, wanted, args.users, args.per_user, work, tenants=True)

    processes: dict[str, Process] = {}
    answers: list[dict[str, Any]] = []
    faults: dict[str, Any] = {}

    def start_service(name: str) -> Process:
        process = Process(name, service_command(name, postgres, etcd_url, args.users, logs[name]))
        processes[name] = process
        process.expect("ready", timeout=60)
        return process

    def round_of(phase: str, command: str, seconds: float | None = None) -> None:
        began = time.monotonic()
        for process in processes.values():
            process.send(command)
        for name, process in processes.items():
            answer = process.expect("done")
            answers.append(dict(answer, service=name, phase=phase, elapsed_s=round(time.monotonic() - began, 3)))

    coordinator: CoordinatorRun | None = None
    try:
        for name in wanted:
            start_service(name)
        round_of("before", f"write {args.before}")
        round_of("before-query", f"query {args.query}")

        coordinator_command = [PYTHON, os.path.join(HERE, "coordinator.py"), "--etcd", etcd_url, "--postgres", postgres]
        if kind == "background":
            coordinator_command += ["--throttle-ms", str(args.throttle_ms), "--duty", str(args.duty), "background"]
        else:
            coordinator_command += ["--throttle-ms", str(args.throttle_ms), "--duty", str(args.duty), "--wait", str(args.lazy_wait), "lazy"]
        coordinator = CoordinatorRun(coordinator_command, kill_batch=2 if kind == "background" else None)
        rounds = 0
        while True:
            began = time.monotonic()
            for process in processes.values():
                process.send(f"write {args.round}")
            if rounds == 0 and "node" in processes:
                # The Node service dies mid-write and comes back: same log, new id block.
                time.sleep(args.round / 2)
                processes["node"].kill()
                killed_at = time.monotonic()
                restarted = start_service("node")
                faults["node_restart_s"] = round(time.monotonic() - killed_at, 3)
                print(f"killed the Node service and started it again ({faults['node_restart_s']} s)", file=sys.stderr)
                restarted.send(f"write {args.round / 2}")
            for name, process in processes.items():
                answer = process.expect("done")
                answers.append(dict(answer, service=name, phase="during", elapsed_s=round(time.monotonic() - began, 3)))
            # The queries, writers paused (the oracle's answer is then fixed) while the
            # coordinator goes on moving data under them.
            round_of("during-query", f"query {args.query}")
            rounds += 1
            if rounds == 1 and kind == "lazy":
                # Both services read every user, in the same order, at the same time,
                # while the sweep runs: first reads of one user by two movers (three,
                # with the sweep) race for real.
                round_of("first-reads", "read-all")
            if coordinator.finished.is_set():
                break
        faults["coordinator_kills"] = coordinator.kills
        if coordinator.failure:
            raise RuntimeError(f"the coordinator failed: {coordinator.failure}")
        round_of("after", f"write {args.after}")
        round_of("after-query", f"query {args.query}")
        round_of("verify", "read-all")
    finally:
        if coordinator is not None:
            coordinator.stop()
        for process in processes.values():
            process.stop()

    final_text, _ = etcd.get(TOPOLOGY)
    assert final_text is not None
    result = {
        "run": "A" if kind == "background" else "B", "kind": kind, "seeded": seeded,
        "final_epoch": json.loads(final_text)["epoch"], "rebalance_s": round(coordinator.seconds, 3),
        "coordinator_events": [event for event in coordinator.events if event["event"] != "copy"],
        "copy_events": sum(1 for event in coordinator.events if event["event"] == "copy"),
        "faults": faults, "answers": answers,
    }
    result.update(check(postgres, shardroute.Router(final_text), logs, wanted, kind))
    result.update(check_tenants(postgres, shardroute.Router(final_text), logs, kind))
    result.update(figures(result, wanted))
    return result


def check(postgres: str, final: shardroute.Router, logs: dict[str, str], wanted: list[str], kind: str) -> dict[str, Any]:
    """The shards against the acknowledgement logs."""
    acknowledged: dict[int, tuple[int, str]] = {}
    acknowledged_twice = 0
    logged = {name: 0 for name in logs}
    for name, path in logs.items():
        with open(path) as log:
            for line in log:
                logged[name] += 1
                logged_id, logged_user, digest = line.split()
                acknowledged_twice += int(logged_id) in acknowledged
                acknowledged[int(logged_id)] = (int(logged_user), digest)
    where: dict[int, list[str]] = {}
    stored: dict[int, tuple[int, str]] = {}
    senders: dict[int, int] = {}
    entries: dict[int, list[tuple[int, int, str]]] = {}  # message id -> (sender, user, shard) of its index entries
    misplaced = wrong_vbucket = 0
    index = final.index(INDEX)
    final_nodes = {node["id"] for node in json.loads(final.to_json())["nodes"]}
    shards = Shards(postgres)
    try:
        for shard in SHARD_NAMES:
            rows = shards.connections[shard].execute("SELECT id, user_id, vbucket, body, sender_id FROM messages").fetchall()
            for message_id, user, vbucket, body, sender in rows:
                where.setdefault(message_id, []).append(shard)
                stored[message_id] = (user, body_digest(body))
                senders[message_id] = sender
                wrong_vbucket += vbucket != (final.route(user) if kind == "background" else 0)
            # The core's consistency check (MigrationSession.misplaced): the rows this shard
            # holds whose user the final router places elsewhere.
            # A shard outside the final topology (the bench's runs without a rebalance) owns none.
            misplaced += (
                shardroute.MigrationSession.misplaced(final, shard, [user for _, user, *_ in rows])["count"]
                if shard in final_nodes else len(rows)
            )
            for sender, message_id, user in shards.connections[shard].execute("SELECT sender_id, message_id, user_id FROM by_sender"):
                entries.setdefault(message_id, []).append((sender, user, shard))
        moved_flags = sum(
            shards.connections[shard].execute("SELECT count(*) FROM moved").fetchone()[0]  # type: ignore[index]
            for shard in SHARD_NAMES
        )
        # Every committed move is a row of `moves`, in the transaction that sets the flag:
        # a user moved by two movers at once has two. Durable, so a mover killed mid-run
        # takes nothing with it.
        moves_logged = moved_units = 0
        for shard in SHARD_NAMES:
            row = shards.connections[shard].execute("SELECT count(*), count(DISTINCT unit) FROM moves").fetchone()
            assert row is not None
            moves_logged += row[0]
            moved_units += row[1]
    finally:
        shards.close()
    lost = [message_id for message_id in acknowledged if message_id not in stored]
    duplicates = [message_id for message_id, places in where.items() if len(places) > 1]
    unacknowledged = [message_id for message_id in stored if message_id not in acknowledged]
    minted_by = {number: name for name, number in TICKET_SERVER.items()}
    unacknowledged_by = {name: 0 for name in wanted}
    for message_id in unacknowledged:
        minter = minted_by[(message_id - 1) % len(TICKET_SERVER)]
        unacknowledged_by[minter] = unacknowledged_by.get(minter, 0) + 1
    body_mismatch = sum(1 for message_id, kept in stored.items() if message_id in acknowledged and acknowledged[message_id] != kept)

    def per_user(table: dict[int, tuple[int, str]], only: set[int] | None = None) -> dict[int, str]:
        """user -> sha256 over its sorted (id, body digest) pairs."""
        pairs: dict[int, list[str]] = {}
        for message_id, (user, digest) in table.items():
            if only is None or message_id in only:
                pairs.setdefault(user, []).append(f"{message_id}:{digest}")
        return {user: hashlib.sha256("\n".join(sorted(items)).encode()).hexdigest() for user, items in pairs.items()}

    expected = per_user(acknowledged)
    found = per_user(stored, only=set(acknowledged))
    users_differ = sum(1 for user in expected.keys() | found.keys() if expected.get(user) != found.get(user))
    # The global index: one entry per stored message, on the shard the index routes its
    # sender to, naming the message's sender and user. A message the killed writer
    # stored without its entry is not acknowledged, and not counted.
    index_missing = sum(1 for message_id in stored if message_id in acknowledged and message_id not in entries)
    index_wrong = sum(
        1 for message_id, listed in entries.items()
        if message_id in stored and listed != [(senders[message_id], stored[message_id][0], index.node(senders[message_id]))]
    )
    index_orphans = sum(1 for message_id in entries if message_id not in stored)
    return {
        "acknowledged": len(acknowledged), "acknowledged_by": logged, "acknowledged_twice": acknowledged_twice,
        "stored": len(stored),
        "lost": len(lost), "lost_sample": lost[:10], "duplicates": len(duplicates), "duplicate_sample": duplicates[:10],
        "misplaced": misplaced, "wrong_vbucket": wrong_vbucket, "body_mismatch": body_mismatch,
        "users_checked": len(expected), "users_differ": users_differ,
        "unacknowledged_kept": unacknowledged_by, "moved_flags": moved_flags,
        "moves_logged": moves_logged, "moved_units": moved_units,
        "unacknowledged_ids": sorted(unacknowledged),
        "index_entries": sum(len(listed) for listed in entries.values()), "index_missing": index_missing,
        "index_wrong": index_wrong, "index_orphans": index_orphans,
    }


def check_tenants(postgres: str, final: shardroute.Router, logs: dict[str, str], kind: str) -> dict[str, Any]:
    """The tenants' channels against their acknowledgement logs, and the reference table
    on every node, counted on the shards themselves: lost, duplicates, misplaced (a row
    on a shard other than the final router's `node(key)`, the core's `misplaced`), every
    row of a placed tenant on a node of its group, the spread tenant's rows on more than
    one shard, and the reference table the same on every node of its group (and nowhere
    else), the group widened to every shard after the growth. The groups and the
    tenants' entries are read from the final document."""
    document = json.loads(final.to_json())
    entries: dict[str, Any] = document.get("tenants", {}).get("entries", {})
    groups: dict[str, list[str]] = document.get("node_groups", {})
    acknowledged: dict[int, tuple[str, str]] = {}
    acknowledged_twice = 0
    logged = {name: 0 for name in logs}
    for name, path in logs.items():
        with open(path + ".tenants") as log:
            for line in log:
                logged[name] += 1
                logged_id, key, digest = line.split()
                acknowledged_twice += int(logged_id) in acknowledged
                acknowledged[int(logged_id)] = (key, digest)
    where: dict[int, list[str]] = {}
    stored: dict[int, tuple[str, str]] = {}
    tenant_shards: dict[str, dict[str, int]] = {}  # tenant -> shard -> rows
    misplaced = wrong_vbucket = 0
    reference: dict[str, list[tuple[Any, ...]]] = {}  # shard -> its `plans` rows
    shards = Shards(postgres)
    try:
        for shard in SHARD_NAMES:
            rows = shards.connections[shard].execute(f"SELECT id, key, tenant, vbucket, body FROM {TENANT_TABLE}").fetchall()
            for message_id, key, tenant, vbucket, body in rows:
                where.setdefault(message_id, []).append(shard)
                stored[message_id] = (key, body_digest(body))
                counts = tenant_shards.setdefault(tenant, {})
                counts[shard] = counts.get(shard, 0) + 1
                wrong_vbucket += vbucket != (final.route(key) if kind == "background" else 0)
            misplaced += shardroute.MigrationSession.misplaced(final, shard, [key for _, key, *_ in rows])["count"]
            plans = shards.connections[shard].execute(f"SELECT plan, max_messages, written_by FROM {PLANS} ORDER BY plan").fetchall()
            if plans:
                reference[shard] = plans
    finally:
        shards.close()
    minted_by = {number: name for name, number in TICKET_SERVER.items()}
    unacknowledged_by: dict[str, int] = {}
    for message_id in stored.keys() - acknowledged.keys():
        minter = minted_by[(message_id - 1) % len(TICKET_SERVER)]
        unacknowledged_by[minter] = unacknowledged_by.get(minter, 0) + 1
    placed = {
        tenant: {
            "group": entry["group"], "nodes": groups[entry["group"]],
            "rows": sum(tenant_shards.get(tenant, {}).values()),
            "shards": sorted(tenant_shards.get(tenant, {})),
            # Rows of the tenant on a shard its group does not name: must be 0.
            "outside_group": sum(rows for shard, rows in tenant_shards.get(tenant, {}).items() if shard not in groups[entry["group"]]),
        }
        for tenant, entry in sorted(entries.items()) if "group" in entry
    }
    spread = {
        tenant: {"buckets": entry["shards"], "rows": sum(tenant_shards.get(tenant, {}).values()), "shards": sorted(tenant_shards.get(tenant, {}))}
        for tenant, entry in sorted(entries.items()) if "shards" in entry and "group" not in entry
    }
    family = next(family for family in document["table_families"].values() if PLANS in family["tables"])
    group = groups[family["group"]] if "group" in family else [node["id"] for node in document["nodes"]]
    first = reference.get(group[0], [])
    seeded = {plan: max_messages for plan, max_messages, written_by in first if written_by == "seed"}
    return {
        "tenant_acknowledged": len(acknowledged), "tenant_acknowledged_by": logged, "tenant_acknowledged_twice": acknowledged_twice, "tenant_stored": len(stored),
        "tenant_lost": sum(1 for message_id in acknowledged if message_id not in stored),
        "tenant_duplicates": sum(1 for places in where.values() if len(places) > 1),
        "tenant_misplaced": misplaced, "tenant_wrong_vbucket": wrong_vbucket,
        "tenant_body_mismatch": sum(1 for message_id, kept in stored.items() if message_id in acknowledged and acknowledged[message_id] != kept),
        "tenant_unacknowledged_kept": unacknowledged_by,
        "placed_tenants": placed, "spread_tenants": spread,
        "reference": {
            "table": PLANS, "group": group, "rows_per_node": [len(reference.get(shard, [])) for shard in group],
            # The coordinator widened the group after the growth: every shard keeps the table.
            "group_is_every_shard": group == SHARD_NAMES,
            # Nodes of the group whose table differs from the group's first node's.
            "differing": sum(1 for shard in group if reference.get(shard, []) != first),
            "outside_group": sorted(shard for shard in reference if shard not in group),
            # The seeded rows, against the values stated in shards.py.
            "seed_wrong": int(seeded != PLAN_ROWS),
            "written_by": sorted({written_by for _, _, written_by in first}),
        },
    }


def figures(result: dict[str, Any], wanted: list[str]) -> dict[str, Any]:
    """Throughput per phase, the longest stall, the epochs each service saw, rows moved."""
    answers = result["answers"]
    throughput: dict[str, float] = {}
    for phase in ("before", "during", "after"):
        rows = [answer for answer in answers if answer["phase"] == phase]
        per_service = {}
        for name in wanted:
            mine = [answer for answer in rows if answer["service"] == name]
            seconds = sum(answer["elapsed_s"] for answer in mine)
            per_service[name] = sum(answer.get("writes", 0) for answer in mine) / seconds if seconds else 0.0
        throughput[phase] = round(sum(per_service.values()), 1)
    stall = max((answer.get("longest_stall_ms", 0) for answer in answers if answer["command"] == "write"), default=0)
    epochs = {
        name: sorted({epoch for answer in answers if answer["service"] == name for epoch in answer.get("epochs_seen", [])})
        for name in wanted
    }
    events = result["coordinator_events"]
    if result["kind"] == "background":
        switched = [event for event in events if event["event"] == "switched"]
        rows_moved = switched[0]["rows_to_move"] if switched else 0
        raced = 0
    else:
        done = [event for event in events if event["event"] == "done"]
        rows_moved = sum(answer.get("moved_rows", 0) for answer in answers) + (done[-1]["rows_moved"] if done else 0)
        # Users moved by more than one mover at once (two services, or a service and the
        # sweep): the moves the shards logged less the users they moved.
        raced = result["moves_logged"] - result["moved_units"]
    queries: dict[str, Any] = {}
    for phase in ("before-query", "during-query", "after-query"):
        for name in wanted:
            mine = [answer for answer in answers if answer["phase"] == phase and answer["service"] == name]
            totals = {
                field: sum(answer.get(field, 0) for answer in mine)
                for field in ("queries_by_sender", "queries_by_time", "queries_while_moving", "query_rows", "query_missing",
                              "query_extra", "query_wrong", "query_merged", "index_dangling", "query_restarts")
            }
            for field in ("extra_ids", "missing_ids", "dangling_ids"):
                totals[field] = sorted({i for answer in mine for i in answer.get(field, [])})
            for field in ("sender_p50_us", "time_p50_us", "oracle_sender_p50_us", "oracle_time_p50_us"):
                values = sorted(answer[field] for answer in mine if answer.get(field))
                totals[field] = values[len(values) // 2] if values else 0.0
            queries[f"{phase}/{name}"] = totals
    tenants = {
        name: {
            field: sum(answer.get(field, 0) for answer in answers if answer["service"] == name)
            for field in ("tenant_writes", "tenant_reads", "tenant_stale_reads", "plan_reads", "plan_wrong", "plan_writes")
        } | {
            "plan_read_nodes": sorted({node for answer in answers if answer["service"] == name for node in answer.get("plan_read_nodes", [])}),
            # After the growth and the widening of the reference group: the core's picks over all ten.
            "plan_read_nodes_after": sorted({
                node for answer in answers if answer["service"] == name and answer["phase"] == "after"
                for node in answer.get("plan_read_nodes", [])
            }),
        }
        for name in wanted
    }
    if result["kind"] == "background":
        tenant_rows_moved = switched[0].get("tenant_rows_to_move", 0) if switched else 0
    else:
        tenant_rows_moved = done[-1].get("tenant_rows_moved", 0) if done else 0
    return {
        "tenants_by_service": tenants, "tenant_rows_moved": tenant_rows_moved,
        "queries": queries,
        "raced_moves": raced,
        "throughput_writes_per_s": throughput, "longest_stall_ms": stall, "epochs_seen": epochs, "rows_moved": rows_moved,
        "failures": [answer.get("failure") for answer in answers if answer.get("failure")],
        "stale_reads": sum(answer.get("stale_reads", 0) for answer in answers),
    }


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| run | rows moved | rebalance s | writes/s before | during | after | longest stall ms | final epoch | lost | duplicates | misplaced | users differing |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        t = r["throughput_writes_per_s"]
        lines.append(
            f"| {r['run']} ({r['kind']}) | {r['rows_moved']:,} | {r['rebalance_s']} | {t['before']} | {t['during']} | {t['after']} | "
            f"{r['longest_stall_ms']} | {r['final_epoch']} | {r['lost']} | {r['duplicates']} | {r['misplaced']} | {r['users_differ']} |"
        )
    for r in results:
        epochs = "; ".join(f"{name} {seen}" for name, seen in r["epochs_seen"].items())
        lines.append(
            f"\nrun {r['run']}: {r['acknowledged']:,} acknowledged rows ({r['seeded']:,} seeded), {r['stored']:,} stored; "
            f"epochs seen: {epochs}; unacknowledged rows kept: {r['unacknowledged_kept']}; "
            f"{'users moved by more than one mover at once: ' + str(r['raced_moves']) + '; ' if r['kind'] == 'lazy' else ''}"
            f"faults: {json.dumps(r['faults'])}"
        )
        for event in r["coordinator_events"]:
            if event["event"] == "widened":
                lines.append(
                    f"run {r['run']}: reference group {event['group']} widened from {event['nodes_before']} to "
                    f"{event['nodes_before'] + len(event['joined'])} nodes at epoch {event['epoch']}: {event['rows']} rows copied "
                    f"to each of {event['joined']} ({event['rows_copied']} written), the group's fences raised in "
                    f"{event['fenced_ms']} ms, {event['ms']} ms in all"
                )
    lines += [
        "",
        "| run | tenant rows acknowledged | stored | moved | lost | duplicates | misplaced | placed tenant: group, shards holding it, rows outside the group "
        "| spread tenant: buckets, shards holding it | reference table on its group: rows per node, nodes differing, rows elsewhere "
        "| reads (python; node): rows read, wrong, nodes read from (after the widening) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        placed = "; ".join(
            f"{tenant}: {p['group']} {p['nodes']}, {p['shards']} ({p['rows']:,} rows), {p['outside_group']}" for tenant, p in r["placed_tenants"].items()
        ) or "none (the vbucket dictionary cannot place)"
        spread = "; ".join(f"{tenant}: {p['buckets']}, {len(p['shards'])} {p['shards']} ({p['rows']:,} rows)" for tenant, p in r["spread_tenants"].items())
        ref = r["reference"]
        reads = "; ".join(
            f"{name} {t['plan_reads']}, {t['plan_wrong']}, {t['plan_read_nodes']} ({t['plan_read_nodes_after']})"
            for name, t in r["tenants_by_service"].items()
        )
        lines.append(
            f"| {r['run']} | {r['tenant_acknowledged']:,} | {r['tenant_stored']:,} | {r['tenant_rows_moved']:,} | {r['tenant_lost']} | "
            f"{r['tenant_duplicates']} | {r['tenant_misplaced']} | {placed} | {spread} | "
            f"{ref['table']} on {len(ref['group'])} nodes: {ref['rows_per_node']}, {ref['differing']}, {ref['outside_group'] or 0} | {reads} |"
        )
    lines += [
        "",
        "| run | queries (service, phase) | by sender | by time | while data moved | rows | missing | extra | wrong | "
        "merged | restarts | by sender p50 us (oracle) | by time p50 us (oracle) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for key, q in r["queries"].items():
            phase, service = key.split("/")
            lines.append(
                f"| {r['run']} | {service}, {phase.removesuffix('-query')} | {q['queries_by_sender']} | {q['queries_by_time']} | "
                f"{q['queries_while_moving']} | {q['query_rows']:,} | {q['query_missing']} | {q['query_extra']} | {q['query_wrong']} | "
                f"{q['query_merged']} | {q['query_restarts']} | {q['sender_p50_us']} ({q['oracle_sender_p50_us']}) | "
                f"{q['time_p50_us']} ({q['oracle_time_p50_us']}) |"
            )
    return "\n".join(lines)


def problems(results: list[dict[str, Any]], wanted: list[str]) -> list[str]:
    found = []
    for r in results:
        where = f"run {r['run']}"
        for key in ("lost", "duplicates", "misplaced", "wrong_vbucket", "body_mismatch", "users_differ", "acknowledged_twice",
                    "stale_reads", "index_missing", "index_wrong", "index_orphans"):
            if r[key]:
                found.append(f"{where}: {key} = {r[key]}")
        for key in ("tenant_lost", "tenant_duplicates", "tenant_misplaced", "tenant_wrong_vbucket", "tenant_body_mismatch",
                    "tenant_acknowledged_twice"):
            if r[key]:
                found.append(f"{where}: {key} = {r[key]}")
        for tenant, placed in r["placed_tenants"].items():
            if placed["outside_group"] or not placed["rows"]:
                found.append(f"{where}: placed tenant {tenant}: {placed['outside_group']} of {placed['rows']} rows outside group {placed['group']}")
        if r["kind"] == "lazy" and not r["placed_tenants"]:
            found.append(f"{where}: no placed tenant (modulo can place one)")
        for tenant, spread in r["spread_tenants"].items():
            if len(spread["shards"]) < 2:
                found.append(f"{where}: spread tenant {tenant} on {spread['shards']}, not on more than one shard")
        if not r["spread_tenants"]:
            found.append(f"{where}: no spread tenant")
        ref = r["reference"]
        if ref["differing"] or ref["outside_group"] or ref["seed_wrong"] or 0 in ref["rows_per_node"]:
            found.append(f"{where}: reference table {ref}")
        if not ref["group_is_every_shard"]:
            found.append(f"{where}: the reference group {ref['group']} was not widened to every shard")
        widened = [event for event in r["coordinator_events"] if event["event"] == "widened"]
        if len(widened) != 1:
            found.append(f"{where}: the coordinator widened the reference group {len(widened)} times, not once")
        for name, t in r["tenants_by_service"].items():
            if not t["tenant_writes"] or not t["tenant_reads"] or not t["plan_reads"] or t["plan_wrong"] or t["tenant_stale_reads"]:
                found.append(f"{where}: {name}'s tenant and reference figures: {t}")
            if name not in ref["written_by"]:
                found.append(f"{where}: {name}'s reference row is not on the group's nodes")
        unacknowledged_node = r["unacknowledged_kept"].get("node", 0) + r["tenant_unacknowledged_kept"].get("node", 0)
        if r["tenant_unacknowledged_kept"].get("python", 0) or unacknowledged_node > 1:
            found.append(f"{where}: unacknowledged tenant rows kept: {r['tenant_unacknowledged_kept']}")
        unacknowledged = set(r["unacknowledged_ids"])
        for phase, q in r["queries"].items():
            for key in ("query_missing", "query_wrong", "index_dangling"):
                if q[key]:
                    found.append(f"{where}: {phase}: {key} = {q[key]} ({q['missing_ids'] or q['dangling_ids']})")
            # A row the sharded query found and the oracle lacks can only be the insert the
            # killed writer had stored on a shard and not yet in the oracle: never acknowledged.
            if not set(q["extra_ids"]) <= unacknowledged:
                found.append(f"{where}: {phase}: rows the oracle lacks that were acknowledged: {sorted(set(q['extra_ids']) - unacknowledged)}")
            if not q["queries_by_sender"] or not q["queries_by_time"]:
                found.append(f"{where}: {phase}: no query of each kind ran")
            if phase.startswith("during") and not q["queries_while_moving"]:
                found.append(f"{where}: {phase}: no query ran while data moved")
        if r["failures"]:
            found.append(f"{where}: failed steps: {r['failures']}")
        for name, kept in r["unacknowledged_kept"].items():
            if kept > (1 if name == "node" else 0):
                found.append(f"{where}: {kept} rows of {name} on the shards that it never acknowledged")
        for name, seen in r["epochs_seen"].items():
            if not seen or seen[-1] != r["final_epoch"]:
                found.append(f"{where}: {name} saw epochs {seen}, not the final {r['final_epoch']}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=5000)
    parser.add_argument("--per-user", type=int, default=10, help="seeded messages per user")
    parser.add_argument("--services", default="python,node", help="which services run (default python,node)")
    parser.add_argument("--runs", default="A,B", help="A (background copy), B (lazy), or both")
    parser.add_argument("--before", type=float, default=3.0, help="seconds of writes before the rebalance")
    parser.add_argument("--after", type=float, default=3.0, help="seconds of writes after it")
    parser.add_argument("--round", type=float, default=2.0, help="seconds per write round during it")
    parser.add_argument("--throttle-ms", type=float, default=20.0, help="the coordinator's shortest pause between two steps")
    parser.add_argument(
        "--duty", type=float, default=0.25,
        help="the coordinator's largest share of the wall time (its own default, 0.05, keeps writes at full speed; "
             "this run checks, and measures no rate: bench/postgres/bench.py does)",
    )
    parser.add_argument("--lazy-wait", type=float, default=2.0, help="seconds of lazy moves before the sweep (run B)")
    parser.add_argument("--query", type=float, default=1.0, help="seconds per query round (before, during, after)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    wanted = args.services.split(",")
    kinds = {"A": "background", "B": "lazy"}
    results = []
    work = tempfile.mkdtemp(prefix="shardroute-postgres-messages-logs-")
    try:
        with Servers() as servers:
            for run in args.runs.split(","):
                results.append(run_once(kinds[run], servers, wanted, args, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(table(results))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
    found = problems(results, wanted)
    for problem in found:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
