"""The example's promises, checked on real servers: `run.py` end to end (runs A and B,
the worker in workerd and in Deno at once), then its figures.

Run: .venv/bin/python -m pytest examples/edge-routing-tier (part of `make test`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = ["A", "B"]
RUNTIMES = ["workerd", "deno"]
USERS = 1000


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("edge-routing-tier") / "results.json"
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "run.py"), "--users", str(USERS), "--per-user", "4", "--before", "2",
         "--after", "2", "--throttle-ms", "10", "--lazy-wait", "2", "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    print(done.stdout)
    print(done.stderr[-20000:], file=sys.stderr)
    assert out.exists(), f"run.py wrote no results (exit {done.returncode}):\n{done.stderr[-4000:]}"
    return {result["run"]: result for result in json.loads(out.read_text())}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_both_runtimes_served_requests_through_the_rebalance(results: dict[str, dict[str, Any]], run: str, runtime: str) -> None:
    result = results[run]
    figures = result["runtimes"][runtime]
    assert figures["requests"] > 0
    for phase in ("before", "during", "after"):
        assert figures["requests_by_phase"][phase] > 0, figures["requests_by_phase"]
    assert figures["served_by_shards"] >= figures["requests"]
    assert figures["failed"] == 0 and result["failures"] == []
    # It routed under the first epoch and the last, never going back.
    assert figures["epochs"][0] == 1 and figures["epochs"][-1] == result["final_epoch"], figures["modes"]
    epochs = [int(mode.split(":")[0]) for mode in figures["modes"]]
    assert epochs == sorted(epochs)
    assert figures["refused_documents"] == 0


@pytest.mark.parametrize("run", RUNS)
def test_no_acknowledged_write_is_lost(results: dict[str, dict[str, Any]], run: str) -> None:
    result = results[run]
    # Every acknowledged POST (through either worker, or straight to a shard) and every
    # seeded row: stored exactly once, on its owner under the final epoch, with its body.
    assert result["lost"] == 0, result["lost_by"]
    assert result["missing"] == 0
    assert result["duplicates"] == 0
    assert result["misplaced"] == 0 and result["wrong_vbucket"] == 0
    assert result["body_mismatch"] == 0
    assert result["unacknowledged_kept"] == {}
    assert result["acknowledged"] == result["stored"]
    for runtime in RUNTIMES:
        assert result["acknowledged_by"][runtime] > 0
        assert result["runtimes"][runtime]["lost"] == 0
    assert result["acknowledged_by"]["direct"] > 0


@pytest.mark.parametrize("run", RUNS)
def test_nothing_is_misrouted(results: dict[str, dict[str, Any]], run: str) -> None:
    """Every request a shard served went where the protocol sends it under the epoch it
    carried (judge.py); requests served by a former owner, one epoch behind and admitted
    by its fence, are what the protocol allows, reported and not counted."""
    judged = results[run]["judged"]
    assert judged["history_failure"] is None and judged["history_conflicts"] == 0
    assert judged["misrouted"] == {}, judged["misrouted_sample"]
    for via in [*RUNTIMES, "direct"]:
        assert judged["served"][via] > 0
        for kind in judged["former_owner"].get(via, {}):
            assert kind in ("read", "write")


@pytest.mark.parametrize("run", RUNS)
def test_a_write_under_a_fenced_epoch_is_refused(results: dict[str, dict[str, Any]], run: str) -> None:
    # After the rebalance every shard's fence is above epoch 1: ten writes under it to
    # each shard service (more than its connections) are all refused, and it answers after.
    assert results[run]["fence_probe"] == {"refused": 100, "accepted": 0, "answered": 10}


@pytest.mark.parametrize("run", RUNS)
def test_reads_see_every_acknowledged_write(results: dict[str, dict[str, Any]], run: str) -> None:
    result = results[run]
    for runtime in RUNTIMES:
        assert result["runtimes"][runtime]["stale_own"] == 0
    # At the end, every user read once through the workers has every message
    # acknowledged to anyone.
    assert result["verify"] == {f"{runtime}_{what}": 0 for runtime in RUNTIMES for what in ("missing", "failed")}


@pytest.mark.parametrize("run", RUNS)
def test_the_workers_followed_the_migration(results: dict[str, dict[str, Any]], run: str) -> None:
    result = results[run]
    # About half the users change shard from 5 to 10 shards, with their messages.
    assert 0.3 * result["seeded"] < result["rows_moved"] < 0.7 * result["acknowledged"]
    for runtime in RUNTIMES:
        figures = result["runtimes"][runtime]
        modes = {mode.split(":")[1] for mode in figures["modes"]}
        if run == "A":
            assert result["final_epoch"] >= 8
            assert "background" in modes, figures["modes"]
        else:
            assert result["final_epoch"] == 3
            assert "lazy" in modes, figures["modes"]
            assert figures["lazy_moves"] > 0


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_added_latency_is_measured(results: dict[str, dict[str, Any]], run: str, runtime: str) -> None:
    latency = results[run]["runtimes"][runtime]["latency"]
    assert latency["pairs"] > 100
    assert latency["tier_p50_ms"] > 0 and latency["direct_p50_ms"] > 0
    # The tier is one more hop on loopback: it adds, but not seconds.
    assert 0 < latency["tier_p50_ms"] < 1000


def test_the_judges_raw_watch_sees_every_event_and_closes_from_another_thread(tmp_path: Any) -> None:
    """judge.py's own watch (moved here from the package's tests with `Etcd.watch`): every
    event of the range in order, deletes included, and `close()` from another thread
    ends a quiet stream silently. Against a real etcd (examples/harness.py)."""
    import threading

    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))  # examples/harness.py
    from harness import EtcdServer
    from judge import RawWatch
    from shardroute.etcd import Etcd

    server = EtcdServer(str(tmp_path), name="judge")
    try:
        etcd = Etcd(server.url)
        start = etcd.put("/w/a", "1") + 1
        etcd.put("/w/a", "2")
        etcd.put("/x", "outside the range")
        etcd.delete_prefix("/w/")
        watch = RawWatch(server.url, "/w/", "/w0", start)
        seen: list[tuple[str, str, str | None]] = []
        for batch in watch:
            seen += [(kind, key, value) for kind, key, value, _ in batch]
            if len(seen) == 2:
                break
        watch.close()
        assert seen == [("put", "/w/a", "2"), ("delete", "/w/a", None)]
        quiet = RawWatch(server.url, "/w/", "/w0", 0)
        threading.Timer(0.2, quiet.close).start()
        assert [batch for batch in quiet if batch] == []  # ends silently once closed
    finally:
        server.stop()
