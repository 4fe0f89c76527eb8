"""The example's promises, checked on a real cluster: `run.py` end to end, then the counts.

Run: .venv/bin/python -m pytest examples/redis-cluster (part of `make test`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = int(os.environ.get("SHARDROUTE_EXAMPLE_KEYS", "100000"))
SERVICES = {"python", "python-asyncio", "node"}
#: The pause phase, run twice (on two primaries): one lucky run cannot pass it.
PAUSES = ("pause", "pause-2")
FAULTS = ("failover", *PAUSES, "graceful", "migrate", "remove")
#: Every command of a pause phase ends within this much of the replica's promotion (or
#: of its own start, when it started later): `late_after_promotion_ms` (README.md).
PROMOTION_TARGET_MS = 1000


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("redis-cluster") / "rows.json"
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "run.py"), "--keys", str(KEYS), "--json", str(out)],
        capture_output=True, text=True, timeout=1200,
    )
    print(done.stdout)
    print(done.stderr, file=sys.stderr)
    assert out.exists(), f"run.py wrote no rows (exit {done.returncode}):\n{done.stderr[-4000:]}"
    rows: list[dict[str, Any]] = json.loads(out.read_text())
    return rows


def pick(rows: list[dict[str, Any]], command: str, phase: str) -> list[dict[str, Any]]:
    found = [row for row in rows if row["command"] == command and row["phase"] == phase]
    assert {row["service"] for row in found} == SERVICES, f"{command} {phase}: {found}"
    return found


def test_no_step_failed(rows: list[dict[str, Any]]) -> None:
    assert [row for row in rows if row.get("failure")] == []


def test_no_error_reaches_the_application(rows: list[dict[str, Any]]) -> None:
    # Every phase, faults included: what the clients raised to the services, by kind.
    assert [(row["service"], row["phase"], row["app_errors"]) for row in rows if row["app_errors"]] == []


def test_steady_state_has_no_redirect(rows: list[dict[str, Any]]) -> None:
    for row in pick(rows, "load", "steady"):
        assert row["keys"] == KEYS
        assert row["ops"] >= KEYS
        assert (row["moved"], row["ask"], row["errors"]) == (0, 0, 0), row


def test_resharding_is_followed(rows: list[dict[str, Any]]) -> None:
    churn = pick(rows, "churn", "reshard")
    # The cluster really changed under the services: between them they were redirected.
    assert sum(row["moved"] + row["ask"] for row in churn) > 0, churn
    for row in churn:
        assert row["ops"] > 0
        assert row["stale_reads"] == 0, row
        assert row["longest_redirect_chain"] <= 5, row
        assert row["refreshes"] <= row["moved"] + row["errors"] + 1, row


def test_every_fault_is_survived(rows: list[dict[str, Any]]) -> None:
    for phase in FAULTS:
        for row in pick(rows, "churn", phase):
            assert row["ops"] > 0, row
            assert row["stale_reads"] == 0, row
            assert row["longest_redirect_chain"] <= 5, row
    # A master changed under every service: the table was read again.
    for phase in ("failover", *PAUSES, "graceful"):
        for row in pick(rows, "churn", phase):
            assert row["refreshes"] >= 1, row
    # Slots moved under the services: between them they were redirected.
    for phase in ("migrate", "remove"):
        assert sum(row["moved"] + row["ask"] for row in pick(rows, "churn", phase)) > 0, phase


def test_a_refreshed_table_is_current(rows: list[dict[str, Any]]) -> None:
    for phase in ("reshard", *FAULTS):
        for row in pick(rows, "settle", phase):
            assert (row["moved"], row["ask"], row["errors"], row["stale_reads"]) == (0, 0, 0, 0), row


def test_nothing_is_lost(rows: list[dict[str, Any]]) -> None:
    for row in pick(rows, "verify", "end"):
        assert row["ops"] == KEYS
        assert (row["lost"], row["stale"]) == (0, 0), row


@pytest.mark.parametrize("phase", PAUSES)
def test_every_command_finishes_within_a_second_of_the_promotion(rows: list[dict[str, Any]], phase: str) -> None:
    # A primary was stopped with SIGSTOP; cluster.py timed its replica's promotion (the
    # last moment it was seen a replica, so the measure is an upper bound). Every command
    # of every service that ended after the promotion ended within 1 s of it, or of its
    # own start when it started later; and the pause held at least one command of each
    # service across the promotion, so the phase tested the clients' stall handling.
    for row in pick(rows, "churn", phase):
        where = (f"{row['service']} {phase}: latest {row['latest_command']} (ms from the promotion), "
                 f"{row['errors']} errors retried {row['error_kinds']}")
        assert row["in_flight_at_promotion"] >= 1, where
        assert row["commands_after_promotion"] >= row["in_flight_at_promotion"], where
        assert 0 <= row["late_after_promotion_ms"] < PROMOTION_TARGET_MS, where
    promoted = [row["promoted_at"] for row in pick(rows, "churn", phase)]
    assert max(promoted) - min(promoted) < 0.001, promoted  # all three measured from the same promotion


def test_the_promotion_measure_is_as_documented() -> None:
    # No cluster: the definition itself (README.md), on spans made up for it. P = 100 s.
    sys.path.insert(0, HERE)
    from workload import after_promotion

    spans = [
        (90.0, 95.0, "get"),  # ended before the promotion: not counted
        (96.0, 100.7, "set_and_wait"),  # held by the pause: counted from P, 700 ms
        (100.2, 100.9, "get"),  # started after P: counted from its start, 700 ms
        (101.0, 101.8, "set"),  # 800 ms from its start, the latest
        (100.0, 100.05, "get"),  # started at P exactly: in flight, 50 ms
    ]
    measured = after_promotion(spans, 100.0)
    assert measured["late_after_promotion_ms"] == pytest.approx(800, abs=0.2)
    assert measured["in_flight_at_promotion"] == 2
    assert measured["commands_after_promotion"] == 4
    assert measured["latest_command"]["command"] == "set"
    assert after_promotion(spans[:1], 100.0)["in_flight_at_promotion"] == 0
