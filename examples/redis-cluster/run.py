"""Runs the example: a live Redis Cluster changes under three services at once.

Starts 6 redis-servers (3 primaries + 3 replicas, `cluster.py`), then three services as
separate processes: Python (`workload.py`, `shardroute.redis.ClusterClient`), Python
asyncio (`workload.py --asyncio`, `AsyncClusterClient`) and Node (`workload.mjs`,
`shardroute/redis`), and drives them through the phases while it changes the cluster:

1. steady: each service writes its keys (MSET per hash tag) and reads them back with
   pipelines grouped by node;
2. reshard: `redis-cli --cluster reshard` moves slots between primaries, then a 4th
   primary joins (`add-node` + `rebalance`), while both services write and read;
3. failover: a primary is killed with SIGKILL and its replica promoted;
4. pause, pause-2: a primary is stopped with SIGSTOP past cluster-node-timeout, its
   replica promoted, then resumed (it comes back as a replica); twice, each time on
   another primary, so that one lucky run cannot pass it. The promotion is timed
   (`cluster.Pause`) and given to the services with `stop`: every command must end
   within `PROMOTION_TARGET_MS` of the promotion, or of its own start if that is later;
5. graceful: `CLUSTER FAILOVER` on a replica;
6. migrate: slots moved by hand (SETSLOT IMPORTING/MIGRATING, MIGRATE 5 keys at a time)
   with keys in flight, so the ASK and TRYAGAIN windows are met;
7. remove: a primary's slots are moved away and it leaves the cluster;

in phases 3 to 5 the services write with `WAIT 1` (a write counts as acknowledged once a
replica has it). After each change every service refreshes its table and reads every
key once more (`settle`: the MOVED count must be back at 0), and at the end every key must
read back its last acknowledged value. What the clients raised to the services is counted
by kind (`app_errors`). Prints the table, writes it as JSON (`--json`), and exits 1 when a count is off.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # examples/harness.py

from cluster import Cluster, Pause  # noqa: E402
from harness import JsonLinesChild  # noqa: E402

#: The pause phases: in each, every command of every service ends within this many ms
#: of the replica's promotion, or of its own start when it started later
#: (`late_after_promotion_ms`, workload.py's `after_promotion`).
PAUSES = ("pause", "pause-2")
PROMOTION_TARGET_MS = 1000


class Service(JsonLinesChild):
    """One service process, spoken to over its stdin/stdout."""


def both(services: list[Service], line: str) -> list[dict[str, Any]]:
    for service in services:
        service.send(line)
    return [dict(service.expect("done"), service=service.name) for service in services]


def run(keys: int, services_wanted: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with Cluster() as cluster:
        seeds = ",".join(node.address for node in cluster.live())
        services: list[Service] = []
        try:
            python = os.environ.get("SHARDROUTE_PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
            if "python" in services_wanted:
                services.append(Service("python", [python, os.path.join(HERE, "workload.py"), "--seeds", seeds, "--prefix", "py", "--keys", str(keys)]))
            if "python-asyncio" in services_wanted:
                services.append(Service("python-asyncio", [python, os.path.join(HERE, "workload.py"), "--asyncio", "--seeds", seeds, "--prefix", "pa", "--keys", str(keys)]))
            if "node" in services_wanted:
                node = shutil.which("node") or "node"
                services.append(Service("node", [node, os.path.join(HERE, "workload.mjs"), "--seeds", seeds, "--prefix", "js", "--keys", str(keys)]))
            for service in services:
                service.expect("ready", timeout=60)

            # Phase 1: steady state.
            rows += both(services, "load")

            # Phase 2: live resharding, then a new primary joins.
            for service in services:
                service.send("churn reshard")
            time.sleep(1.0)
            primaries = cluster.primaries()
            cluster.reshard(primaries[0], primaries[1], 3000)
            cluster.add_primary()
            time.sleep(1.0)
            rows += both(services, "stop")
            rows += both(services, "settle reshard")

            # Phase 3: a primary is killed; its replica takes over.
            def victim() -> Any:
                return cluster.primaries()[0]

            changes: list[tuple[str, Callable[[], object]]] = [
                ("failover", lambda: cluster.kill_primary(cluster.with_replica())),
                *((phase, lambda: cluster.pause_primary(cluster.with_replica(), seconds=1.0)) for phase in PAUSES),
                ("graceful", lambda: cluster.graceful_failover(cluster.with_replica())),
                ("migrate", lambda: cluster.migrate_slots(victim(), cluster.primaries()[1], slots_of(cluster, victim(), 20))),
                ("remove", lambda: cluster.remove_primary(victim())),
            ]
            for phase, change in changes:
                for service in services:
                    service.send(f"churn {phase}")
                time.sleep(1.0)
                started = time.monotonic()
                changed = change()
                print(f"{phase}: the cluster changed in {time.monotonic() - started:.1f} s", file=sys.stderr)
                time.sleep(1.0)
                if isinstance(changed, Pause):
                    print(f"{phase}: {changed.primary} stopped, {changed.replica} promoted "
                          f"{changed.promoted_at - changed.stopped_at:.2f} s later", file=sys.stderr)
                    rows += both(services, f"stop {changed.promoted_at:.6f}")
                else:
                    rows += both(services, "stop")
                rows += both(services, f"settle {phase}")
            rows += both(services, "verify")
        finally:
            for service in services:
                service.stop()
    return rows


def slots_of(cluster: Cluster, primary: Any, count: int) -> list[int]:
    """The first `count` slots `primary` serves that hold keys (the services' keys, so
    that their commands meet the migration)."""
    for fields in cluster.topology_lines():
        if fields[0] == primary.id:
            slots: list[int] = []
            for part in fields[8:]:
                if not part.startswith("["):
                    start, _, end = part.partition("-")
                    slots.extend(range(int(start), int(end or start) + 1))
            with_keys: list[int] = []
            for slot in slots:
                if len(with_keys) == count:
                    break
                if primary.cli("CLUSTER", "COUNTKEYSINSLOT", str(slot)) != "0":
                    with_keys.append(slot)
            return with_keys
    raise RuntimeError(f"{primary.address} is not in CLUSTER NODES")


def table(rows: list[dict[str, Any]]) -> str:
    header = "| service | phase | command | ops | MOVED | ASK | errors retried | raised to the service | refreshes | longest redirect chain | p50 µs | p99 µs |"
    lines = [header, "|---" * (header.count("|") - 1) + "|"]
    for row in rows:
        lines.append(
            f"| {row['service']} | {row['phase']} | {row['command']} | {row['ops']:,} | {row['moved']} | {row['ask']} | "
            f"{row['errors']} | {raised(row)} | {row['refreshes']} | {row['longest_redirect_chain']} | {row['p50_us']} | {row['p99_us']} |"
        )
    for row in rows:
        if "late_after_promotion_ms" in row:
            lines.append(
                f"\n{row['service']} {row['phase']}: every command ended within {row['late_after_promotion_ms']} ms "
                f"of the promotion (or of its start, if later); {row['in_flight_at_promotion']} in flight across it"
            )
    ends = [row for row in rows if row["command"] == "verify"]
    for row in ends:
        lines.append(
            f"\n{row['service']}: {row['ops']:,} keys verified: lost {row['lost']}, stale {row['stale']}; "
            f"writes the server accepted but no replica acknowledged before the failover: "
            f"{row['unreplicated_writes_lost']} lost, {row['unreplicated_writes_kept']} kept"
        )
    return "\n".join(lines)


def raised(row: dict[str, Any]) -> str:
    kinds = row.get("app_errors") or {}
    return ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())) or "0"


def problems(rows: list[dict[str, Any]]) -> list[str]:
    """Every count the example promises, checked."""
    found = []
    for row in rows:
        where = f"{row['service']} {row['command']} {row['phase']}"
        if row.get("failure"):
            found.append(f"{where}: failed with {row['failure']}")
        if row["command"] in ("load", "settle") and (row["moved"] or row["ask"]):
            found.append(f"{where}: {row['moved']} MOVED, {row['ask']} ASK (expected 0 with a fresh table)")
        if row["stale_reads"]:
            found.append(f"{where}: {row['stale_reads']} reads saw an old value")
        if row["command"] == "verify" and (row["lost"] or row["stale"]):
            found.append(f"{where}: {row['lost']} keys lost, {row['stale']} stale")
        if row["command"] != "churn" and row["errors"]:
            found.append(f"{where}: {row['errors']} errors ({row['error_kinds']})")
        if row.get("app_errors"):
            found.append(f"{where}: the client raised {raised(row)} to the service")
        if row["command"] == "churn" and row["phase"] in PAUSES and not row.get("failure"):
            if row["late_after_promotion_ms"] >= PROMOTION_TARGET_MS:
                found.append(f"{where}: a command ended {row['late_after_promotion_ms']} ms after the promotion "
                             f"(or its start), not within {PROMOTION_TARGET_MS} ms")
            if row["in_flight_at_promotion"] < 1:
                found.append(f"{where}: no command was in flight across the promotion")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=100_000, help="keys per service (default 100,000)")
    parser.add_argument("--services", default="python,python-asyncio,node", help="which services run (default all three)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    rows = run(args.keys, args.services.split(","))
    print(table(rows))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    found = problems(rows)
    for problem in found:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
