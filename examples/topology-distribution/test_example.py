"""The live run's promises (run.py), checked for both stores (a 3-member etcd cluster and
a 3-member ZooKeeper ensemble): every follower converges to the last epoch, never goes
back, refuses each bad value with its reason and installs none of them, and installs the
document that repaired the garbage. On etcd (TLS with client certificates, and etcd's
authentication, for every follower) also: a member answering 503 first in every
follower's list is asked once and left, and a quiet watch is not a lost source.

Run: .venv/bin/python -m pytest examples/topology-distribution (part of `make test`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import decides  # noqa: E402  (the run's own rule of which followers decide)


FOLLOWERS = {
    "etcd": {"python", "python-asyncio", "node", "wasm in deno (http, serve)", "wasm in workerd (http, serve)",
             "raw etcd watch"},
    "zookeeper": {"python", "python-asyncio", "node", "wasm in deno (http, serve)", "wasm in workerd (http, serve)",
                  "raw kazoo watch"},
}


@pytest.fixture(scope="module", params=["etcd", "zookeeper"])
def result(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("live") / "result.json"
    done = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--store", request.param, "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    print(done.stdout)
    print(done.stderr[-4000:], file=sys.stderr)
    assert out.exists(), f"run.py wrote no result (exit {done.returncode})"
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def test_every_follower_converges_and_never_goes_back(result: dict[str, Any]) -> None:
    assert result["final_epoch"] == 200 and result["published"] >= 200
    for row in result["rows"]:
        assert row["last_epoch"] == result["final_epoch"], row
        assert row["increasing"], row
        # Coalesced reads may skip an epoch; most arrive one by one. Through HTTP (`serve`
        # follows, then the long poll carries the last one) more are merged: epochs come
        # 10 ms apart, about one long poll's round trip on a busy machine. The bare watches
        # are the baseline (a one-shot ZooKeeper watch set again after each event misses
        # more on a loaded machine: kazoo's saw 130 of 200 once).
        if not decides(row["follower"]):
            assert row["epochs_seen"] > 100, row
            continue
        # A follower of the core skips epochs only while a fault lasts for it (from the
        # fault to its convergence, at most 15 s: test_the_faults_were_ridden_out), when it
        # reads the key again after a lost watch; outside, at most 10 of 200 (an epoch that
        # a bad value replaced at once, a one-shot ZooKeeper watch set again). The count
        # seen varies with how many epochs a fault spans on a busy machine; this does not.
        assert len(row["missed_outside_faults"]) <= 10, row
    assert {row["follower"] for row in result["rows"]} == FOLLOWERS[result["store"]]


def test_each_bad_value_is_refused_with_its_reason(result: dict[str, Any]) -> None:
    for row in result["rows"]:
        if row["follower"].startswith("raw "):
            assert row["refused"] == {}  # the baseline decides nothing
            continue
        if row["follower"].startswith("wasm"):
            # `serve` serves only documents its own follower installed: none reaches it.
            assert row["refused"] == {} and row["stats"]["refused"] == {}, row
            continue
        # Garbage, a lower epoch, 65,537 nodes: each read at least once, counted by the
        # core's follower (the same counts in its stats), none installed.
        assert set(row["refused"]) == {"invalid_topology", "stale_epoch", "limit_exceeded"}, (result["store"], row)
        assert row["stats"]["refused"] == row["refused"], row
        assert row["stats"]["installed"] == row["epochs_seen"], row


def test_the_garbage_is_repaired_and_every_follower_installs_the_repair(result: dict[str, Any]) -> None:
    # On etcd the repair is `publish(..., replace=True)` (a compare-and-swap on the garbage,
    # the epoch above the one the followers hold, read back through the key's history); on
    # ZooKeeper a compare-and-swap on it. Every follower, the bare watches and the WASM ones
    # too, installs it (the run waits up to 30 s for each before the next bad value).
    assert result["repaired_epoch"] is not None
    for row in result["rows"]:
        assert row["installed_repaired"], (result["repaired_epoch"], row)


# etcd only (its gateway's 503, its idle watches, its TLS and authentication): these tests
# take the etcd run alone (the same run the module's other tests read), rather than
# being skipped in the ZooKeeper one.
etcd_only = pytest.mark.parametrize("result", ["etcd"], indirect=True)


@etcd_only
def test_followed_over_tls_with_authentication(result: dict[str, Any]) -> None:
    # Members on https only, client certificates required, authentication on: every
    # follower (Python, asyncio, Node, the bare watch, `serve` for the WASM ones) had the
    # CA, the client certificate and the user's password, or it would not have converged
    # (test_every_follower_converges_and_never_goes_back).
    assert result["store"] == "etcd"
    assert result["secure"] is True
    for name, member in result["unavailable"].items():
        assert member["url"].startswith("https://"), name
    for row in result["rows"]:
        if not row["follower"].startswith("wasm"):  # the WASM followers read `serve` over HTTP
            assert row["member"].startswith("https://"), row  # the member it ended on


@etcd_only
def test_a_member_answering_503_first_is_left_for_the_next(result: dict[str, Any]) -> None:
    # Each follower (and `serve`) had a member of its own first in its list, answering
    # every request 503 with gRPC code 14 (a member going away). It was asked at start,
    # left for the next, and not asked again while nothing failed (the quiet period's
    # idle reads go to the member in use); a follower pinned to it, retrying it with
    # backoff, would count dozens. After a fault, going round the list may pass it again.
    assert result["store"] == "etcd"
    assert set(result["unavailable"]) == {"serve", "python", "python-asyncio", "node", "raw etcd watch"}
    for name, hits in result["unavailable"].items():
        assert hits["at_start"] >= 1, (name, hits)
        assert hits["quiet"] == 0, (name, hits)
        assert hits["whole_run"] <= 25, (name, hits)
    for row in result["rows"]:
        if row["follower"] in result["unavailable"]:
            assert row["member"] != result["unavailable"][row["follower"]]["url"], row


@etcd_only
def test_a_quiet_watch_is_not_a_lost_source(result: dict[str, Any]) -> None:
    # No write for quiet_s (5 s) with the followers' watches idle after 1 s: each idle
    # watch is read again (reads counted) and watched again, never counted as a lost
    # source. The asyncio follower counted every quiet second as one before issue 35 (5
    # disconnects and 5 watch restarts in these 5 s).
    assert result["store"] == "etcd"
    for name in ("python", "python-asyncio", "node"):
        quiet = result["quiet"][name]
        assert quiet["disconnects"] == 0, (name, quiet)
        assert quiet.get("watch_restarts", 0) == 0, (name, quiet)
        assert quiet["reads"] >= 2, (name, quiet)


def test_the_faults_were_ridden_out(result: dict[str, Any]) -> None:
    if os.geteuid() == 0:
        # Root (as CI runs): the leader is cut off too (nftables by the members' uids).
        assert result["not_cut"] is None, result["not_cut"]
        assert result["faults"] == ["leader killed", "leader cut off", "member paused"]
    else:
        assert result["faults"] == ["leader killed", "member paused"]
        pytest.skip(f"the leader was not cut off: {result['not_cut']}")
    for row in result["rows"]:
        for fault, ms in row["converge_ms"].items():
            assert ms is not None and ms < 15_000, (row["follower"], fault, ms)
