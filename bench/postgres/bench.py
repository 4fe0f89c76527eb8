"""Writes during the PostgreSQL example's 5 -> 10 rebalance, side by side with the same
workload and no rebalance, in one run (issue 38, item 7).

The workload is examples/postgres-messages' (run.py's seed, its two services, Python and
Node, each writing a message and reading a timeline in turn, its coordinator), without the
faults (no process is killed: a kill is a stall by design). A timeline read is a page, the
user's newest 10 messages (shards.py's TIMELINE_PAGE), as a messaging service reads one:
read whole, every write made the reads after it dearer, so CPU per write grew over a
window with no rebalance at all and the rebalance's seconds were compared with cheaper
ones before them. With 10 seeded messages a user, a page is full from the first read. A pass of a mode (background
copy of a vbucket dictionary; lazy moves of `user_id % n ?: n`) is: fresh data, both
services started, three seconds of warm-up writes; then, on the same processes and data,
the workload without the rebalance (`--before` seconds of writes, the rate before, then
rounds of one second for as long as that mode's last rebalance took, at most 15 s) and
right after it with the rebalance (`--before` seconds, then rounds of one second while the
coordinator runs). The modes alternate, their order rotating each pass, and the table
gives medians over the passes:

* writes/s of both services together before and during, and their ratio;
* CPU per acknowledged write before and during (every process of the workload: the
  services, the coordinator, etcd, every PostgreSQL backend; /proc), and their ratio:
  what the rate ratio would be on a machine of its own, where the workload is CPU-bound
  (the machine this runs on is shared, and other engineers' load moves writes/s between
  two windows by more than the rebalance does);
* the longest stall during: the longest gap between two acknowledged writes of one writer
  (the largest of either service's rounds), and the p99 latency of one write;
* lost, duplicates and misplaced (run.py's check of the shards against the logs, once per
  pass after the rebalance), summed over the passes.

The targets (issue 38): during / before at least 85% in both modes, longest stall under
50 ms. A ratio near 100% in the rows without a rebalance says the before/during windows
are comparable; compare the two rows of a mode, not figures across runs (the machine is
shared). Never asserted in a test: `make bench` records it.

Writes target/bench/postgres.md (a fragment of docs/benchmarks.md) and prints it.

    .venv/bin/python bench/postgres/bench.py [--passes 2] [--diagnose]

`--diagnose` also samples pg_stat_activity every 5 ms during each phase (the services'
backends: what they wait on) and prints the counts, with the coordinator's copy timings;
and per acknowledged write, before and during: the CPU of each part (each service, its
PostgreSQL backends by application_name, the coordinator's, the oracle's, etcd, the
rest of PostgreSQL), the services' statements to the shards (reads of two shards, lazy
moves' statements), and the shards' table statistics (pg_stat_user_tables: sequential
scans and the rows they read, index scans, rows inserted and deleted). `--statements`
starts the server with pg_stat_statements and prints each phase's dearest statements
(calls and the backends' time per acknowledged write: where PostgreSQL's share goes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import sys
import tempfile
import shutil
import threading
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "postgres-messages")
sys.path.insert(0, EXAMPLE)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import psycopg  # noqa: E402

import shardroute  # noqa: E402
from run import PYTHON, CoordinatorRun, Process, check, prepare, service_command  # noqa: E402
from servers import Servers  # noqa: E402
from shards import TIMELINE_PAGE, TOPOLOGY  # noqa: E402

COMMAND = ".venv/bin/python bench/postgres/bench.py"
SERVICES = ["python", "node"]
MODES = ["background", "lazy"]
TARGET_RATIO = 0.85
TARGET_STALL_MS = 50.0
USERS = 5000
PER_USER = 10
WARM_UP_S = 3.0
ROUND_S = 1.0
LAZY_WAIT_S = 2.0  # run.py's --lazy-wait
WITHOUT_MAX_S = 15.0  # the longest run without a rebalance


class Waits:
    """Samples what the services' backends wait on (pg_stat_activity) until stopped."""

    def __init__(self, postgres: str) -> None:
        host, _, port = postgres.rpartition(":")
        self.connection = psycopg.connect(host=host, port=int(port), user="postgres", dbname="postgres", autocommit=True)
        self.counts: dict[str, int] = {}
        self.samples = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopping.wait(0.005):
            rows = self.connection.execute(
                "SELECT state, wait_event_type, wait_event, left(query, 40) FROM pg_stat_activity "
                "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'"
            ).fetchall()
            self.samples += 1
            for state, kind, event, query in rows:
                key = f"{state} {kind or '-'}:{event or '-'} {query if kind == 'Lock' else ''}".strip()
                self.counts[key] = self.counts.get(key, 0) + 1

    def stop(self) -> dict[str, Any]:
        self.stopping.set()
        self.thread.join()
        self.connection.close()
        top = sorted(self.counts.items(), key=lambda item: -item[1])[:12]
        return {"samples": self.samples, "top": top}


STAT_COLUMNS = ["seq_scan", "seq_tup_read", "idx_scan", "idx_tup_fetch", "n_tup_ins", "n_tup_del", "n_dead_tup",
                "autovacuum_count", "autoanalyze_count"]


def table_stats(postgres: str) -> dict[str, int]:
    """The shards' table statistics (pg_stat_user_tables), summed over the shards, by
    `<table> <column>` and `<old|new> <column>` (shard_1..5, shard_6..10)."""
    host, _, port = postgres.rpartition(":")
    found: dict[str, int] = {}
    for number in range(1, 11):
        with psycopg.connect(host=host, port=int(port), user="postgres", dbname=f"shard_{number}", autocommit=True) as connection:
            for row in connection.execute(f"SELECT relname, {', '.join(STAT_COLUMNS)} FROM pg_stat_user_tables").fetchall():
                for column, value in zip(STAT_COLUMNS, row[1:]):
                    for key in (f"{row[0]} {column}", f"{'old' if number <= 5 else 'new'} {row[0]} {column}"):
                        found[key] = found.get(key, 0) + int(value or 0)
    return found


class Statements:
    """pg_stat_statements (the server started with it: `--statements`): each phase's
    statements by text, across the shards, as calls and time (execution and planning, the
    backends' wall time) per acknowledged write."""

    def __init__(self, postgres: str) -> None:
        host, _, port = postgres.rpartition(":")
        self.connection = psycopg.connect(host=host, port=int(port), user="postgres", dbname="postgres", autocommit=True)
        self.connection.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

    def reset(self) -> None:
        self.connection.execute("SELECT pg_stat_statements_reset()")

    def per_write(self, writes: int, top: int = 18) -> list[list[Any]]:
        """[text, calls, µs] per write, the dearest first; a text is the statement without
        the fence's part (shards.py's FENCED_READ_HEAD, `fenced`), its first 110 characters."""
        rows = self.connection.execute(
            "SELECT regexp_replace(query, '\\s+', ' ', 'g'), sum(calls), sum(total_exec_time + total_plan_time) "
            "FROM pg_stat_statements GROUP BY 1 ORDER BY 3 DESC LIMIT %s", (top,)
        ).fetchall()
        fence = re.compile(r"^(SELECT f\.min_epoch, q\.\* FROM fence f LEFT JOIN \(SELECT \S+ AS present, row_number\(\) OVER \(\) AS n, s\.\* FROM \("
                           r"|WITH f AS MATERIALIZED \(SELECT min_epoch, min_epoch <= \$\d+::bigint AS ok FROM fence FOR SHARE\), )")
        return [[fence.sub("", text)[:110], round(int(calls) / max(1, writes), 3), round(float(ms) * 1000 / max(1, writes), 1)]
                for text, calls, ms in rows]


def stats_per_write(start: dict[str, int], end: dict[str, int], writes: int) -> dict[str, float]:
    return {key: round((end[key] - start.get(key, 0)) / max(1, writes), 3) for key in sorted(end)
            if end[key] != start.get(key, 0) and not key.startswith(("old", "new"))}


TICK = os.sysconf("SC_CLK_TCK")


def stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a process, from /proc/<pid>/stat; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rpartition(")")[2].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


class Cpu:
    """CPU seconds used by the workload's processes: the services, the coordinator, etcd,
    and PostgreSQL (the postmaster and every backend, found as its children). Sampled
    after each round, each process's highest figure kept, so a backend that exits
    between two samples loses at most a round's worth. Other engineers' load on the
    machine does not count here, which is what makes CPU per write steadier than writes/s."""

    def __init__(self, roots: list[int], postmaster: int, names: dict[int, str] | None = None,
                 postgres: str | None = None) -> None:
        self.roots = roots
        self.postgres = postgres  # to ask pg_stat_activity whose a backend is (its application_name)
        self.postmaster = postmaster
        self.seen: dict[int, float] = {}
        self.names = dict(names or {})  # pid -> its part in `parts` (the roots'); PostgreSQL's by title

    def add(self, pid: int, name: str = "coordinator") -> None:
        self.roots.append(pid)
        self.names[pid] = name

    def name(self, pid: int) -> str:
        if pid not in self.names:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as file:
                    title = file.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                title = ""
            # A backend's title: "postgres: <user> <database> <client> <state>".
            words = title.split()
            self.names[pid] = f"pg {words[2]}" if len(words) > 3 and words[0] == "postgres:" and words[1] == "postgres" else "pg other"
            if self.names[pid].startswith("pg shard_"):
                self.names[pid] = "pg shards"
                if self.postgres is not None:
                    host, _, port = self.postgres.rpartition(":")
                    with psycopg.connect(host=host, port=int(port), user="postgres", dbname="postgres", autocommit=True) as connection:
                        row = connection.execute("SELECT application_name FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
                    if row is not None and row[0]:
                        self.names[pid] = f"pg shards: {row[0]}"
        return self.names[pid]

    def parts(self) -> dict[str, float]:
        """The CPU seconds seen so far, by part (a service, the coordinator, etcd, the
        shards' backends, the oracle's, PostgreSQL's other processes); after `total`."""
        found: dict[str, float] = {}
        for pid, seconds in self.seen.items():
            found[self.name(pid)] = found.get(self.name(pid), 0.0) + seconds
        return found

    def total(self) -> float:
        pids = set(self.roots) | {self.postmaster}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                found = stat(int(entry))
                if found is not None and found[0] == self.postmaster:
                    pids.add(int(entry))
        for pid in pids:
            found = stat(pid)
            if found is not None:
                if pid not in self.seen:
                    self.name(pid)  # while it is there to ask
                self.seen[pid] = max(self.seen.get(pid, 0.0), found[1])
        return sum(self.seen.values())


def rate(answers: list[dict[str, Any]]) -> float:
    """Writes/s of the services together: per service, its writes over its rounds' time."""
    total = 0.0
    for name in SERVICES:
        mine = [a for a in answers if a["service"] == name]
        seconds = sum(a["elapsed_s"] for a in mine)
        total += sum(a["writes"] for a in mine) / seconds if seconds else 0.0
    return total


def pair(servers: Servers, mode: str, before_s: float, during_s: float, work: str, diagnose: bool,
         coordinator_args: list[str], statements: Statements | None = None) -> list[dict[str, Any]]:
    """One pass of a mode: fresh data, both services, a warm-up; then the same workload
    twice in a row on the same processes and data: without a rebalance (`before_s`, then
    `during_s` seconds of writes), then with it (`before_s`, then rounds while the
    coordinator runs). Returns the two samples; the shards are checked at the end."""
    assert servers.postgres is not None and servers.etcd is not None
    postgres, etcd_url, etcd, _, logs, _ = prepare(mode, servers, list(SERVICES), USERS, PER_USER, work)
    processes = {name: Process(name, service_command(name, postgres, etcd_url, USERS, logs[name])) for name in SERVICES}
    coordinator: CoordinatorRun | None = None
    samples = []
    try:
        for process in processes.values():
            process.expect("ready", timeout=60)

        def round_of(seconds: float) -> list[dict[str, Any]]:
            began = time.monotonic()
            for process in processes.values():
                process.send(f"write {seconds}")
            answers = []
            for name, process in processes.items():
                answer = process.expect("done")
                if answer.get("failure"):
                    raise RuntimeError(f"{name}: {answer['failure']}")
                answers.append(dict(answer, service=name, elapsed_s=time.monotonic() - began))
            return answers

        assert servers.postgres.process is not None and servers.etcd.process is not None
        cpu = Cpu([process.process.pid for process in processes.values()] + [servers.etcd.process.pid], servers.postgres.process.pid,
                  {**{process.process.pid: name for name, process in processes.items()}, servers.etcd.process.pid: "etcd"},
                  postgres if diagnose else None)
        round_of(WARM_UP_S)
        for rebalance in (False, True):
            diagnosis: dict[str, Any] = {}
            waits = Waits(postgres) if diagnose else None
            stats_start = table_stats(postgres) if diagnose else {}
            if statements:
                statements.reset()
            cpu_start = cpu.total()
            parts_start = cpu.parts()
            before = round_of(before_s)
            cpu_before = cpu.total() - cpu_start
            parts_before = cpu.parts()
            stats_before = table_stats(postgres) if diagnose else {}
            if statements:
                diagnosis["statements_before"] = statements.per_write(sum(a["writes"] for a in before))
                statements.reset()
            cpu_start = cpu.total()
            if waits:
                diagnosis["before"] = waits.stop()
            during: list[dict[str, Any]] = []
            waits = Waits(postgres) if diagnose else None
            began = time.monotonic()
            wall = time.time()
            if rebalance:
                command = [PYTHON, os.path.join(EXAMPLE, "coordinator.py"), "--etcd", etcd_url, "--postgres", postgres]
                command += coordinator_args
                command += ["background"] if mode == "background" else ["--wait", str(LAZY_WAIT_S), "lazy"]
                coordinator = CoordinatorRun(command, kill_batch=None)
                while not coordinator.finished.is_set():
                    if coordinator.process is not None and coordinator.process.process.pid not in cpu.roots:
                        cpu.add(coordinator.process.process.pid)
                    during += round_of(ROUND_S)
                    cpu.total()
                if coordinator.failure:
                    raise RuntimeError(f"the coordinator failed: {coordinator.failure}")
                seconds = coordinator.seconds
                done = [e for e in coordinator.events if e["event"] == "done"]
                diagnosis["coordinator_done"] = done[-1] if done else None
            else:
                while time.monotonic() - began < during_s:
                    during += round_of(ROUND_S)
                    cpu.total()
                seconds = time.monotonic() - began
            cpu_during = cpu.total() - cpu_start
            parts_during = cpu.parts()
            stats_during = table_stats(postgres) if diagnose else {}
            if statements:
                diagnosis["statements_during"] = statements.per_write(sum(a["writes"] for a in during))
            writes_before = sum(a["writes"] for a in before)
            writes_during = sum(a["writes"] for a in during)
            # CPU per acknowledged write by part, µs: before, during.
            diagnosis["cpu_parts_us"] = {
                part: [round((parts_before.get(part, 0.0) - parts_start.get(part, 0.0)) / max(1, writes_before) * 1e6),
                       round((parts_during.get(part, 0.0) - parts_before.get(part, 0.0)) / max(1, writes_during) * 1e6)]
                for part in sorted(parts_during)
            }
            if diagnose:
                diagnosis["table_stats_per_write"] = {
                    "before": stats_per_write(stats_start, stats_before, sum(a["writes"] for a in before)),
                    "during": stats_per_write(stats_before, stats_during, sum(a["writes"] for a in during)),
                }
            # What the services did per acknowledged write, before and during.
            diagnosis["per_write"] = {
                key: [round(sum(a.get(key, 0) for a in answers) / max(1, sum(a["writes"] for a in answers)), 3) for answers in (before, during)]
                for key in ("reads", "statements", "two_shard_reads", "moved_users", "move_statements", "refused_by_fence")
            }
            if waits:
                diagnosis["during"] = waits.stop()
            # The longest stalls and when they were (seconds since the phase began): the
            # read before the write and the write.
            diagnosis["stalls"] = [
                [a["service"], a["longest_stall_ms"], a.get("longest_stall_parts_ms"), round(a.get("longest_stall_at", wall) - wall, 2)]
                for a in sorted(during, key=lambda a: -a["longest_stall_ms"])[:4]
            ]
            if coordinator is not None and rebalance:
                diagnosis["events"] = [
                    [e["event"], round(e["at"] - wall, 2)] for e in coordinator.events if e["event"] in ("switched", "batch", "done")
                ]
            samples.append({
                "mode": mode, "rebalance": rebalance, "seconds": seconds,
                "before": rate(before), "during": rate(during),
                # CPU (every process of the workload) per acknowledged write, µs.
                "cpu_before_us": cpu_before / max(1, writes_before) * 1e6,
                "cpu_during_us": cpu_during / max(1, writes_during) * 1e6,
                "stall_ms": max(a["longest_stall_ms"] for a in during),
                "write_p99_us": max(a["write_p99_us"] for a in during),
                "refused_by_fence": sum(a["refused_by_fence"] for a in during),
                "refreshes": sum(int(a["refreshes"]) for a in during),
                "moved_users": sum(a["moved_users"] for a in during),
                # Each service's time per write in its writes, its reads (lazy moves
                # included) and its lazy moves, µs a write, and its writes/s.
                "us_per_write": {
                    f"{name} {phase}": [
                        round(sum(a.get(f"{part}_us", 0) for a in answers if a["service"] == name)
                              / max(1, sum(a["writes"] for a in answers if a["service"] == name)))
                        for part in ("insert", "read", "move")
                    ] + [round(rate([a for a in answers if a["service"] == name]))]
                    for name in SERVICES for phase, answers in (("before", before), ("during", during))
                },
                "diagnosis": diagnosis,
            })
        for process in processes.values():
            process.send("quit")
    finally:
        if coordinator is not None:
            coordinator.stop()
        for process in processes.values():
            process.stop()
    final_text, _ = etcd.get(TOPOLOGY)
    assert final_text is not None
    checked = check(postgres, shardroute.Router(final_text), logs, SERVICES, mode)
    samples[-1].update(lost=checked["lost"], duplicates=checked["duplicates"],
                       misplaced=checked["misplaced"] + checked["wrong_vbucket"])
    return samples


def fragment(samples: list[dict[str, Any]], passes: int) -> str:
    lines = [
        "## PostgreSQL example: writes during a rebalance",
        "",
        f"Date: {datetime.date.today().isoformat()}. Command: `{COMMAND}` (part of `make bench`). "
        "examples/postgres-messages' workload (both services, Python and Node, each writing a message and "
        f"reading a timeline page, the newest {TIMELINE_PAGE} messages, in turn, 5,000 users, 50,000 seeded rows), "
        "with and without its 5 -> 10 rebalance, "
        f"{passes} interleaved passes, medians; no fault injected. Writes/s are both services together; "
        "CPU is every process of the workload (services, coordinator, etcd, PostgreSQL) per acknowledged write, "
        "and its before / during is the rate ratio the workload would have on a machine of its own; "
        "the stall is the longest gap between two acknowledged writes of one writer during the rebalance "
        "(or the same seconds without it); lost, duplicates and misplaced are checked once per pass, after the "
        "rebalance, over the data of both rows, and summed over the passes.",
        "",
        "| mode | rebalance | seconds | writes/s before | during | during / before | CPU us a write before | during "
        "| before / during | longest stall ms | write p99 us | fence refusals | refreshes | lost | duplicates | misplaced |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    medians: dict[tuple[str, bool], dict[str, float]] = {}
    for mode in MODES:
        for rebalance in (True, False):
            mine = [s for s in samples if s["mode"] == mode and s["rebalance"] == rebalance]
            if not mine:
                continue
            m: dict[str, float] = {
                key: statistics.median(s[key] for s in mine)
                for key in ("seconds", "before", "during", "cpu_before_us", "cpu_during_us", "stall_ms", "write_p99_us",
                            "refused_by_fence", "refreshes")
            }
            m["ratio"] = statistics.median(s["during"] / s["before"] for s in mine)
            m["cpu_ratio"] = statistics.median(s["cpu_before_us"] / s["cpu_during_us"] for s in mine)
            medians[(mode, rebalance)] = m
            checks = " | ".join(str(sum(s[key] for s in mine)) if rebalance else "–" for key in ("lost", "duplicates", "misplaced"))
            lines.append(
                f"| {mode} | {'yes' if rebalance else 'no'} | {m['seconds']:.1f} | {m['before']:.0f} | {m['during']:.0f} | "
                f"{m['ratio']:.0%} | {m['cpu_before_us']:.0f} | {m['cpu_during_us']:.0f} | {m['cpu_ratio']:.0%} | {m['stall_ms']:.1f} | {m['write_p99_us']:.0f} | {m['refused_by_fence']:.0f} | "
                f"{m['refreshes']:.0f} | {checks} |"
            )
    lines += ["", "| target (issue 38) | measured | |", "|---|---|---|"]
    for mode in MODES:
        target = medians.get((mode, True))
        if target is None:
            continue
        lines.append(f"| {mode}: writes during the rebalance >= 85% of before | {target['ratio']:.0%} | "
                     f"{'met' if target['ratio'] >= TARGET_RATIO else '**not met**'} |")
        lines.append(f"| {mode}: the same on CPU per write (before / during, the machine's load aside) >= 85% | "
                     f"{target['cpu_ratio']:.0%} | {'met' if target['cpu_ratio'] >= TARGET_RATIO else '**not met**'} |")
        lines.append(f"| {mode}: longest write stall < 50 ms | {target['stall_ms']:.1f} ms | "
                     f"{'met' if target['stall_ms'] < TARGET_STALL_MS else '**not met**'} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=int(os.environ.get("SHARDROUTE_BENCH_PASSES", "2")))
    parser.add_argument("--before", type=float, default=3.0, help="seconds of writes before (the rate before)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--diagnose", action="store_true", help="sample pg_stat_activity; print the coordinator's timings")
    parser.add_argument("--statements", action="store_true",
                        help="load pg_stat_statements in the server and print each phase's dearest statements per write")
    parser.add_argument("--coordinator", default="", help="more arguments for coordinator.py (e.g. \"--duty 0.3\")")
    parser.add_argument("--out", default=os.path.join(ROOT, "target", "bench", "postgres.md"))
    parser.add_argument("--json", help="write every sample here")
    parser.add_argument("--without-max", type=float, default=WITHOUT_MAX_S,
                        help="the longest run without a rebalance, s (as long as the last rebalance, up to this)")
    args = parser.parse_args()
    modes = args.modes.split(",")
    samples: list[dict[str, Any]] = []
    last_seconds = {mode: 12.0 for mode in modes}
    work = tempfile.mkdtemp(prefix="shardroute-bench-postgres-")
    try:
        options = ["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all"] if args.statements else []
        with Servers(options) as servers:
            assert servers.postgres is not None
            statements = Statements(servers.postgres.address) if args.statements else None
            for number in range(args.passes):
                for mode in modes[number % len(modes):] + modes[:number % len(modes)]:
                    for one in pair(servers, mode, args.before, last_seconds[mode], work, args.diagnose, args.coordinator.split(), statements):
                        samples.append(one)
                        if one["rebalance"]:
                            # The next run without: as long, up to WITHOUT_MAX_S (a rate needs no more).
                            last_seconds[mode] = min(one["seconds"], args.without_max)
                        print(f"pass {number + 1} {mode} rebalance={one['rebalance']}: {one['seconds']:.1f} s, "
                              f"{one['before']:.0f} -> {one['during']:.0f} writes/s ({one['during'] / one['before']:.0%}), "
                              f"CPU us/write {one['cpu_before_us']:.0f} -> {one['cpu_during_us']:.0f} "
                              f"({one['cpu_before_us'] / one['cpu_during_us']:.0%}), "
                              f"stall {one['stall_ms']} ms, write p99 {one['write_p99_us']} us, "
                              f"fence refusals {one['refused_by_fence']}, refreshes {one['refreshes']}, "
                              f"moved users {one['moved_users']}, us/write [write, read, move, rate] {one['us_per_write']}, checks {[one.get(k) for k in ('lost', 'duplicates', 'misplaced')]}",
                              file=sys.stderr, flush=True)
                        if one["diagnosis"]:
                            print(json.dumps(one["diagnosis"]), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = fragment(samples, args.passes)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as out:
        out.write(text)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(samples, out, indent=1)
    print(text)
    bad = [s for s in samples if s.get("lost") or s.get("duplicates") or s.get("misplaced")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
