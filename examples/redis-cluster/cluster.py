"""A real Redis Cluster on 127.0.0.1, run by this example's own script.

Starts Debian's `redis-server` processes in cluster mode on free high ports (each port
p with its cluster bus p + 10000 free), each in its own directory under one temp dir,
forms the cluster with `redis-cli --cluster create`, and changes it the way an operator
does: `redis-cli --cluster reshard`, `add-node` + `rebalance`, and a primary killed with
SIGKILL so its replica is promoted. Every process is stopped by its PID when the
`Cluster` context ends, also on failure (and on SIGTERM/SIGINT of the running script).

Standard library only (redis-cli does the talking), so the example's orchestration does
not depend on the client library whose behaviour it tests.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # examples/harness.py
from harness import ServerProcess, StoppedOnExit  # noqa: E402

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")
# How long a node may be unreachable before the others mark it failed (ms): short, so
# the failover phase takes seconds, not the default 15 s.
NODE_TIMEOUT_MS = 2000


def free_port() -> int:
    """A port p in 20000..55535 with p and p + 10000 (the cluster bus) both free."""
    rng = random.Random()
    for _ in range(500):
        port = rng.randrange(20_000, 55_536)
        try:
            with socket.socket() as first, socket.socket() as bus:
                first.bind(("127.0.0.1", port))
                bus.bind(("127.0.0.1", port + 10_000))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port pair (p, p + 10000) for redis-server")


class Node(ServerProcess):
    """One `redis-server --cluster-enabled yes`."""

    def __init__(self, root: str) -> None:
        assert REDIS_SERVER, "needs redis-server (apt-get install -y redis-server)"
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.dir = os.path.join(root, str(self.port))
        os.makedirs(self.dir)
        self.log_path = os.path.join(self.dir, "redis.log")
        self.process = subprocess.Popen(
            [
                REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--protected-mode", "no",
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                # Other slots stay available while one primary is down (the failover phase).
                "--cluster-require-full-coverage", "no",
                "--save", "", "--appendonly", "no", "--dir", self.dir, "--daemonize", "no",
                "--logfile", self.log_path,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.id = ""
        deadline = time.monotonic() + 20
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server on port {self.port} exited:\n{self.log_tail()}")
            try:
                if self.cli("PING") == "PONG":
                    break
            except subprocess.CalledProcessError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {self.port} did not answer:\n{self.log_tail()}")
            time.sleep(0.05)
        self.id = self.cli("CLUSTER", "MYID")

    def cli(self, *args: str, timeout: float = 10) -> str:
        """One command through redis-cli; its reply as text."""
        assert REDIS_CLI, "needs redis-cli (apt-get install -y redis-tools)"
        done = subprocess.run(
            [REDIS_CLI, "-h", "127.0.0.1", "-p", str(self.port), *args],
            capture_output=True, text=True, timeout=timeout, check=True,
        )
        return done.stdout.strip()

    def info(self, section: str) -> dict[str, str]:
        lines = self.cli("CLUSTER", "INFO") if section == "cluster" else self.cli("INFO", section)
        return dict(line.split(":", 1) for line in lines.splitlines() if ":" in line)

class Cluster(StoppedOnExit):
    """3 primaries + 3 replicas (by default) on loopback, stopped by PID on exit."""

    def __init__(self, primaries: int = 3, replicas_per_primary: int = 1) -> None:
        self.root = tempfile.mkdtemp(prefix="shardroute-redis-cluster-")
        self.nodes: list[Node] = []
        self._primaries = primaries
        self._replicas = replicas_per_primary
        self._stopped = False

    # -- life ---------------------------------------------------------------------

    def __enter__(self) -> Cluster:
        cluster: Cluster = super().__enter__()
        return cluster

    def start(self) -> None:
        count = self._primaries * (1 + self._replicas)
        self.nodes = [Node(self.root) for _ in range(count)]
        self.redis_cli(
            "--cluster", "create", *(node.address for node in self.nodes),
            "--cluster-replicas", str(self._replicas), "--cluster-yes",
        )
        self.wait_until("the cluster is formed", self.healthy)
        replicas = self._primaries * self._replicas
        self.wait_until("every node knows every replica", lambda: self.replicas_known() == replicas)
        self.wait_until("every replica is in sync", self.replicas_synced)

    def replicas_synced(self) -> bool:
        """Every replica's link to its primary is up (it has the data, it serves reads)."""
        try:
            for node in self.live():
                info = node.info("replication")
                if info.get("role") == "slave" and info.get("master_link_status") != "up":
                    return False
            return True
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            return False

    def replicas_known(self) -> int:
        """The fewest replicas any live node knows of (gossip takes a moment to agree)."""
        try:
            return min(
                sum(1 for line in node.cli("CLUSTER", "NODES").splitlines() if " slave " in f" {line.split()[2].replace(',', ' ')} ")
                for node in self.live()
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            return -1

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        for node in self.nodes:
            try:
                node.stop()
            except Exception:  # noqa: BLE001 - keep stopping the others
                node.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def pids(self) -> list[int]:
        return [node.pid for node in self.nodes if node.alive()]

    # -- state --------------------------------------------------------------------

    def live(self) -> list[Node]:
        return [node for node in self.nodes if node.alive()]

    def seed(self) -> Node:
        return self.live()[0]

    def topology_lines(self) -> list[list[str]]:
        """`CLUSTER NODES` of a live node, one split line per node."""
        return [line.split() for line in self.seed().cli("CLUSTER", "NODES").splitlines() if line]

    def primaries(self) -> list[Node]:
        """Live primaries that own slots, as the cluster sees them."""
        masters = {fields[0] for fields in self.topology_lines() if "master" in fields[2] and "fail" not in fields[2] and len(fields) > 8}
        return [node for node in self.live() if node.id in masters]

    def replica_of(self, primary: Node) -> Node:
        for fields in self.topology_lines():
            if fields[3] == primary.id:
                return next(node for node in self.nodes if node.id == fields[0])
        raise RuntimeError(f"{primary.address} has no replica")

    def healthy(self) -> bool:
        """Every live node says cluster_state:ok, covers all 16384 slots, suspects no
        node, and sees the same slot owners (redis-cli refuses to reshard until gossip
        has agreed)."""
        try:
            views = set()
            for node in self.live():
                info = node.info("cluster")
                if info.get("cluster_state") != "ok" or info.get("cluster_slots_ok") != "16384":
                    return False
                lines = [line.split() for line in node.cli("CLUSTER", "NODES").splitlines() if line]
                if any("fail?" in fields[2] for fields in lines):
                    return False
                views.add(tuple(sorted((fields[0], *fields[8:]) for fields in lines if "master" in fields[2])))
            return len(views) == 1
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            return False

    def wait_until(self, what: str, check: object, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():  # type: ignore[operator]
                return
            time.sleep(0.1)
        raise RuntimeError(f"timed out after {timeout}s waiting until {what}")

    # -- what an operator does ----------------------------------------------------

    def redis_cli(self, *args: str, timeout: float = 600) -> str:
        assert REDIS_CLI, "needs redis-cli"
        done = subprocess.run([REDIS_CLI, *args], capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli {' '.join(args[:3])} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return done.stdout

    def reshard(self, source: Node, target: Node, slots: int) -> None:
        """`redis-cli --cluster reshard`: moves `slots` slots (and their keys, by MIGRATE)
        from `source` to `target` while clients run."""
        self.redis_cli(
            "--cluster", "reshard", self.seed().address,
            "--cluster-from", source.id, "--cluster-to", target.id,
            "--cluster-slots", str(slots), "--cluster-yes", "--cluster-pipeline", "200",
        )
        self.wait_until("the reshard settles", self.healthy)

    def add_primary(self) -> Node:
        """A new empty primary joins (`add-node`) with a replica of its own, then
        `rebalance` gives it its share."""
        node = Node(self.root)
        self.nodes.append(node)
        self.redis_cli("--cluster", "add-node", node.address, self.seed().address)
        self.wait_until("the new node is known to all", lambda: self.knows(node))
        replica = Node(self.root)
        self.nodes.append(replica)
        self.redis_cli("--cluster", "add-node", replica.address, self.seed().address, "--cluster-slave", "--cluster-master-id", node.id)
        self.wait_until("the new replica is known to all", lambda: self.knows(replica))
        self.wait_until("the cluster settles", self.healthy)
        self.redis_cli(
            "--cluster", "rebalance", self.seed().address, "--cluster-use-empty-masters", "--cluster-pipeline", "200",
        )
        self.wait_until("the rebalance settles", self.healthy)
        self.wait_until("the new replica is in sync", self.replicas_synced)
        return node

    def knows(self, node: Node) -> bool:
        """Every live node lists `node` in `CLUSTER NODES`."""
        try:
            return all(node.id in other.cli("CLUSTER", "NODES") for other in self.live())
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            return False

    def kill_primary(self, primary: Node) -> Node:
        """SIGKILL a primary; returns its replica once the cluster has promoted it."""
        replica = self.replica_of(primary)
        primary.kill()

        def promoted() -> bool:
            try:
                return replica.info("replication").get("role") == "master" and self.healthy()
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                return False

        self.wait_until(f"{replica.address} is promoted", promoted)
        return replica

    def slot_owners(self) -> dict[str, int]:
        """Primary address -> number of slots, from `CLUSTER NODES`."""
        owners: dict[str, int] = {}
        for fields in self.topology_lines():
            if "master" not in fields[2] or "fail" in fields[2]:
                continue
            count = 0
            for part in fields[8:]:
                if part.startswith("["):
                    continue
                start, _, end = part.partition("-")
                count += int(end or start) - int(start) + 1
            owners[fields[1].split("@")[0]] = count
        return owners


def addresses(nodes: Iterable[Node]) -> list[str]:
    return [node.address for node in nodes]
