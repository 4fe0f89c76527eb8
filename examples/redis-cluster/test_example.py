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
FAULTS = ("failover", "pause", "graceful", "migrate", "remove")


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
    for phase in ("failover", "pause", "graceful"):
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
