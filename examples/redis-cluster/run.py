"""Runs the example: a live Redis Cluster changes under two services at once.

Starts 6 redis-servers (3 primaries + 3 replicas, `cluster.py`), then a Python service
(`workload.py`, `shardroute.redis`) and a Node service (`workload.mjs`,
`shardroute/redis`) as separate processes, and drives them through the phases while it
changes the cluster:

1. steady: each service writes its keys (MSET per hash tag) and reads them back with
   pipelines grouped by node;
2. reshard: `redis-cli --cluster reshard` moves slots between primaries, then a 4th
   primary joins (`add-node` + `rebalance`), while both services write and read;
3. failover: a primary is killed with SIGKILL and its replica promoted, while both
   services write with `WAIT 1` and read;

after phases 2 and 3 each service refreshes its table and reads every key once more (`settle`: the MOVED count
must be back at 0), and at the end every key must read back its last acknowledged
value. Prints the table, writes it as JSON (`--json`), and exits 1 when a count is off.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # examples/harness.py

from cluster import Cluster  # noqa: E402
from harness import JsonLinesChild  # noqa: E402


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
            if "python" in services_wanted:
                python = os.environ.get("SHARDROUTE_PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
                services.append(Service("python", [python, os.path.join(HERE, "workload.py"), "--seeds", seeds, "--prefix", "py", "--keys", str(keys)]))
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
            for service in services:
                service.send("churn failover")
            time.sleep(1.0)
            victim = cluster.primaries()[0]
            promoted = cluster.kill_primary(victim)
            print(f"killed {victim.address} (pid {victim.pid}); {promoted.address} promoted", file=sys.stderr)
            time.sleep(2.0)
            rows += both(services, "stop")
            rows += both(services, "settle failover")
            rows += both(services, "verify")
        finally:
            for service in services:
                service.stop()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    header = "| service | phase | command | ops | MOVED | ASK | errors | refreshes | longest redirect chain | p50 µs | p99 µs |"
    lines = [header, "|---" * (header.count("|") - 1) + "|"]
    for row in rows:
        lines.append(
            f"| {row['service']} | {row['phase']} | {row['command']} | {row['ops']:,} | {row['moved']} | {row['ask']} | "
            f"{row['errors']} | {row['refreshes']} | {row['longest_redirect_chain']} | {row['p50_us']} | {row['p99_us']} |"
        )
    ends = [row for row in rows if row["command"] == "verify"]
    for row in ends:
        lines.append(
            f"\n{row['service']}: {row['ops']:,} keys verified: lost {row['lost']}, stale {row['stale']}; "
            f"writes the server accepted but no replica acknowledged before the failover: "
            f"{row['unreplicated_writes_lost']} lost, {row['unreplicated_writes_kept']} kept"
        )
    return "\n".join(lines)


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
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=100_000, help="keys per service (default 100,000)")
    parser.add_argument("--services", default="python,node", help="which services run (default python,node)")
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
