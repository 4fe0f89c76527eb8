"""A real Redis Cluster on 127.0.0.1, run by this example's own script.

Starts Debian's `redis-server` processes in cluster mode, each on two ports of
examples/harness.py's `reserve_ports()` (its port and its cluster bus, `--cluster-port`;
fresh ones while one is taken), each in its own directory under one temp dir,
forms the cluster with `redis-cli --cluster create`, and changes it the way an operator
does: `redis-cli --cluster reshard`, `add-node` + `rebalance`, a primary killed with
SIGKILL so its replica is promoted, or stopped with SIGSTOP until it is (the promotion
timed to within `PROMOTION_POLL_S`, `Pause`). Every process is stopped by its PID when the
`Cluster` context ends, also on failure (and on SIGTERM/SIGINT of the running script).

Standard library only (redis-cli does the talking; a plain socket polls `ROLE`), so the example's orchestration does
not depend on the client library whose behaviour it tests.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # examples/harness.py
from harness import ServerProcess, StoppedOnExit, start_on_ports  # noqa: E402

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")
# How long a node may be unreachable before the others mark it failed (ms): short, so
# the failover phase takes seconds, not the default 15 s.
NODE_TIMEOUT_MS = 2000
# How often a paused primary's replica is asked for its role (s): the promotion is known
# within this much (plus one ROLE round trip on loopback).
PROMOTION_POLL_S = 0.02


@dataclass(frozen=True)
class Pause:
    """What `Cluster.pause_primary` did, in wall-clock seconds (`time.time()`, the clock
    the services stamp their commands with).

    `promoted_at` is the last moment the replica was still seen a replica: it was
    promoted after it, within `PROMOTION_POLL_S` (and one ROLE round trip). So it is a
    lower bound of the promotion, and a command's end less it is an upper bound of how
    long after the promotion the command ended."""

    primary: str  # the paused primary's address
    replica: str  # the replica that was promoted
    stopped_at: float  # SIGSTOP sent
    promoted_at: float
    resumed_at: float  # SIGCONT sent


class Node(ServerProcess):
    """One `redis-server --cluster-enabled yes`."""

    def __init__(self, root: str) -> None:
        assert REDIS_SERVER, "needs redis-server (apt-get install -y redis-server)"
        start_on_ports(2, lambda ports: self.start(root, ports[0], ports[1]))

    def start(self, root: str, port: int, bus: int) -> None:
        """Starts it on `port` (its cluster bus on `bus`) and waits for PONG; an error with
        its log when it exits first (stopped when it lingers)."""
        assert REDIS_SERVER, "needs redis-server (apt-get install -y redis-server)"
        self.port = port
        self.address = f"127.0.0.1:{self.port}"
        self.dir = os.path.join(root, str(self.port))
        os.makedirs(self.dir)
        self.log_path = os.path.join(self.dir, "redis.log")
        self.process = subprocess.Popen(
            [
                REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--protected-mode", "no",
                "--cluster-enabled", "yes", "--cluster-port", str(bus), "--cluster-config-file", "nodes.conf",
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
                if self.cli("PING", timeout=2) == "PONG":
                    break
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                pass  # not up yet (or another server holds the port: the exit above tells)
            if time.monotonic() > deadline:
                self.stop()
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

    def role(self) -> str:
        """`ROLE`'s first word ("master" or "slave"), asked over a plain socket: one
        loopback round trip, not a redis-cli process, so that polling it is cheap."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as conn:
            conn.sendall(b"*1\r\n$4\r\nROLE\r\n")
            reply = b""
            while reply.count(b"\r\n") < 3:  # *<n>, $<len>, <role>
                chunk = conn.recv(4096)
                if not chunk:
                    raise OSError(f"{self.address} closed the connection during ROLE")
                reply += chunk
        return reply.split(b"\r\n")[2].decode()

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
        self.paused: set[int] = set()  # PIDs stopped with SIGSTOP (not live until resumed)

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
        for pid in list(self.paused):
            os.kill(pid, signal.SIGCONT)
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
        return [node for node in self.nodes if node.alive() and node.pid not in self.paused]

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
        self.wait_until(f"{replica.address} is promoted", lambda: self.promoted(replica))
        return replica

    def promoted(self, replica: Node) -> bool:
        """`replica` is a master and the live nodes agree the cluster is whole."""
        try:
            return replica.info("replication").get("role") == "master" and self.healthy()
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            return False

    def pause_primary(self, primary: Node, seconds: float) -> Pause:
        """SIGSTOP a primary until its replica is promoted (cluster-node-timeout and an
        election), `seconds` more, then SIGCONT: it comes back as a replica. Returns when
        it has rejoined and every replica is in sync.

        While it is stopped the replica's `ROLE` is polled every `PROMOTION_POLL_S`: the
        `Pause` names the last moment it was still a replica (`promoted_at`)."""
        replica = self.replica_of(primary)
        os.kill(primary.pid, signal.SIGSTOP)
        stopped_at = time.time()
        self.paused.add(primary.pid)
        try:
            promoted_at = self.watch_promotion(replica)
            self.wait_until(f"{replica.address} is promoted", lambda: self.promoted(replica))
            time.sleep(max(0.0, seconds))
        finally:
            os.kill(primary.pid, signal.SIGCONT)
            resumed_at = time.time()
            self.paused.discard(primary.pid)
        self.wait_until(f"{primary.address} rejoins as a replica",
                        lambda: primary.info("replication").get("role") == "slave" and self.healthy())
        self.wait_until("every replica is in sync", self.replicas_synced)
        return Pause(primary.address, replica.address, stopped_at, promoted_at, resumed_at)

    def watch_promotion(self, replica: Node, timeout: float = 60) -> float:
        """Polls `replica`'s role every `PROMOTION_POLL_S` until it is "master"; returns
        the wall-clock time of the last poll that still found it a replica (sent before
        the promotion, so never after it). A failed poll tells nothing and moves nothing."""
        last_replica = time.time()
        deadline = time.monotonic() + timeout
        while True:
            before = time.time()
            try:
                if replica.role() == "master":
                    return last_replica
                last_replica = before
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout}s waiting until {replica.address} is promoted")
            time.sleep(PROMOTION_POLL_S)

    def with_replica(self) -> Node:
        """The first primary (in start order) with a live replica in sync: one a failover
        can promote (a primary promoted after SIGKILL has none until one is added)."""
        lines = self.topology_lines()
        live = {node.id for node in self.live()}
        for primary in self.primaries():
            if any(fields[3] == primary.id and fields[0] in live and "fail" not in fields[2] for fields in lines):
                return primary
        raise RuntimeError("no primary has a live replica")

    def graceful_failover(self, primary: Node) -> Node:
        """`CLUSTER FAILOVER` on the primary's replica: the two swap roles without loss."""
        replica = self.replica_of(primary)
        replica.cli("CLUSTER", "FAILOVER")
        self.wait_until(f"{replica.address} takes over", lambda: self.promoted(replica))
        self.wait_until("every replica is in sync", self.replicas_synced)
        return replica

    def migrate_slots(self, source: Node, target: Node, slots: list[int], batch: int = 5) -> None:
        """Moves `slots` by hand as redis-cli does, in small batches of keys so that
        clients meet the ASK and TRYAGAIN windows: IMPORTING on the target, MIGRATING
        on the source, MIGRATE `batch` keys at a time, then SETSLOT NODE everywhere."""
        for slot in slots:
            target.cli("CLUSTER", "SETSLOT", str(slot), "IMPORTING", source.id)
            source.cli("CLUSTER", "SETSLOT", str(slot), "MIGRATING", target.id)
            while keys := source.cli("CLUSTER", "GETKEYSINSLOT", str(slot), str(batch)).split():
                source.cli("MIGRATE", "127.0.0.1", str(target.port), "", "0", "5000", "KEYS", *keys)
                time.sleep(0.005)
            for node in [target, source, *(n for n in self.primaries() if n not in (source, target))]:
                node.cli("CLUSTER", "SETSLOT", str(slot), "NODE", target.id)
        self.wait_until("the migration is known everywhere", self.healthy)

    def remove_primary(self, primary: Node) -> None:
        """Moves every slot of `primary` to the other primaries, then removes it and its
        replicas from the cluster (`redis-cli --cluster del-node`, which shuts them down)."""
        replicas = [node for node in self.live() if node is not primary and self.is_replica_of(node, primary)]
        others = [node for node in self.primaries() if node is not primary]
        for index, target in enumerate(others):
            left = self.slot_owners().get(primary.address, 0)
            share = left if index == len(others) - 1 else left // (len(others) - index)
            if share:
                self.redis_cli(
                    "--cluster", "reshard", self.seed().address, "--cluster-from", primary.id, "--cluster-to", target.id,
                    "--cluster-slots", str(share), "--cluster-yes", "--cluster-pipeline", "200",
                )
                self.wait_until("the reshard settles", self.healthy)
        for node in [*replicas, primary]:
            seed = next(other for other in self.live() if other is not node and other not in replicas)
            self.redis_cli("--cluster", "del-node", seed.address, node.id)
            node.stop()
        self.wait_until("the cluster forgets them", self.healthy)

    def is_replica_of(self, node: Node, primary: Node) -> bool:
        return any(fields[0] == node.id and fields[3] == primary.id for fields in self.topology_lines())

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
