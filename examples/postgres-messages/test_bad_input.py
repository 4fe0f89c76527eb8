"""Bad input, on real servers: a topology in etcd that does not parse, or that has a
lower epoch, is refused by each service with a logged error (naming the error code)
and its router kept; the coordinator refuses a plan whose source epoch is no longer
the one in etcd.

Run: .venv/bin/python -m pytest examples/postgres-messages/test_bad_input.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from coordinator import Coordinator, StalePlan  # noqa: E402
from shardroute.etcd import Etcd  # noqa: E402
from run import Process, service_command  # noqa: E402
from servers import Servers  # noqa: E402
from shards import TOPOLOGY, modulo, vbucket_start  # noqa: E402

SERVICES = os.environ.get("SHARDROUTE_EXAMPLE_SERVICES", "python,node").split(",")


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    with Servers() as running:
        yield running


@pytest.fixture()
def etcd(servers: Servers) -> Etcd:
    servers.reset()
    assert servers.etcd is not None
    return Etcd(servers.etcd.url)


def wait_for(log_path: str, *needles: str, timeout: float = 10) -> str:
    """The service's stderr once it holds every needle."""
    deadline = time.monotonic() + timeout
    while True:
        with open(log_path) as log:
            text = log.read()
        if all(needle in text for needle in needles):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"no {needles} in the service's log:\n{text[-3000:]}")
        time.sleep(0.1)


@pytest.mark.parametrize("name", SERVICES)
def test_a_service_refuses_bad_topologies_and_keeps_its_router(
    name: str, servers: Servers, etcd: Etcd, tmp_path: Any
) -> None:
    assert servers.postgres is not None and servers.etcd is not None
    etcd.put(TOPOLOGY, json.dumps(modulo(5, 7)))
    stderr_path = str(tmp_path / "stderr.log")
    command = service_command(name, servers.postgres.address, servers.etcd.url, 50, str(tmp_path / "ack.log"))
    with open(stderr_path, "w") as stderr:
        service = Process(name, command, stderr=stderr)
    try:
        assert service.expect("ready", timeout=60)["epoch"] == 7

        etcd.put(TOPOLOGY, '{"format": "shardroute/1", "epoch": 8, "nodes": [')  # does not parse
        wait_for(stderr_path, "invalid_topology")
        etcd.put(TOPOLOGY, json.dumps(dict(modulo(5, 8), strategy={"type": "no_such_strategy"})))  # parses, not a topology
        etcd.put(TOPOLOGY, json.dumps(modulo(10, 6)))  # an older epoch
        wait_for(stderr_path, "invalid_topology", "stale_epoch")

        # Still routing with epoch 7: writes land and are acknowledged.
        service.send("write 0.5")
        answer = service.expect("done")
        assert answer.get("failure") is None, answer
        assert answer["writes"] > 0
        assert answer["epochs_seen"] == [7], answer
        assert answer["refused_documents"] >= 2, answer  # counted by the core's follower

        # And still watching: a newer document is taken.
        etcd.put(TOPOLOGY, json.dumps(modulo(5, 9)))
        service.send("write 0.5")
        answer = service.expect("done")
        assert answer["epochs_seen"] == [7, 9], answer
    finally:
        service.stop()


def test_the_coordinator_refuses_a_stale_plan(servers: Servers, etcd: Etcd) -> None:
    """Planned from epoch 1; someone else publishes epoch 2 first: the CAS fails and
    etcd keeps the other document."""
    assert servers.postgres is not None
    etcd.put(TOPOLOGY, json.dumps(vbucket_start()))
    coordinator = Coordinator(etcd, servers.postgres.address)
    source, revision = coordinator.read()
    other = dict(vbucket_start(), epoch=2)
    etcd.put(TOPOLOGY, json.dumps(other))
    import shardroute

    plan = shardroute.apply(source, {"op": "plan_rebalance", "add": [{"id": "shard_6"}]})["topology"]
    with pytest.raises(StalePlan, match="planned from epoch 1.*etcd now holds epoch 2"):
        coordinator.commit(source, revision, plan)
    assert json.loads(etcd.get(TOPOLOGY)[0] or "{}") == other
    coordinator.shards.close()


@pytest.mark.parametrize("mode", ["background", "lazy"])
def test_the_coordinator_command_refuses_an_unexpected_epoch(servers: Servers, etcd: Etcd, mode: str) -> None:
    assert servers.postgres is not None and servers.etcd is not None
    start = vbucket_start() if mode == "background" else modulo(5, 1)
    etcd.put(TOPOLOGY, json.dumps(dict(start, epoch=4)))
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "coordinator.py"), "--etcd", servers.etcd.url,
         "--postgres", servers.postgres.address, "--expect-epoch", "3", mode],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert "planned from epoch 3, but etcd holds epoch 4" in done.stderr
    assert json.loads(etcd.get(TOPOLOGY)[0] or "{}")["epoch"] == 4
