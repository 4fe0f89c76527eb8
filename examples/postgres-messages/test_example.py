"""The example's promises, checked on real servers: `run.py` end to end (runs A and B,
both services, both faults), then its figures.

Run: .venv/bin/python -m pytest examples/postgres-messages (part of `make test`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SERVICES = os.environ.get("SHARDROUTE_EXAMPLE_SERVICES", "python,node").split(",")
RUNS = ["A", "B"]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("postgres-messages") / "results.json"
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "run.py"), "--services", ",".join(SERVICES), "--json", str(out)],
        capture_output=True, text=True, timeout=900,
    )
    print(done.stdout)
    print(done.stderr[-20000:], file=sys.stderr)
    assert out.exists(), f"run.py wrote no results (exit {done.returncode}):\n{done.stderr[-4000:]}"
    return {result["run"]: result for result in json.loads(out.read_text())}


def answers(result: dict[str, Any], service: str, phase: str | None = None) -> list[dict[str, Any]]:
    return [a for a in result["answers"] if a["service"] == service and (phase is None or a["phase"] == phase)]


@pytest.mark.parametrize("run", RUNS)
def test_no_step_failed(results: dict[str, dict[str, Any]], run: str) -> None:
    assert results[run]["failures"] == []
    for service in SERVICES:
        phases = {"before", "during", "after", "verify", "before-query", "during-query", "after-query"}
        phases |= {"first-reads"} if run == "B" else set()
        assert {a["phase"] for a in answers(results[run], service)} == phases


@pytest.mark.parametrize("run", RUNS)
def test_nothing_is_lost(results: dict[str, dict[str, Any]], run: str) -> None:
    result = results[run]
    assert result["lost"] == 0, result["lost_sample"]
    # Per user: the ids and the checksum of the bodies on the shards equal the logs.
    assert result["users_differ"] == 0
    assert result["body_mismatch"] == 0
    assert result["users_checked"] == 5000
    assert result["seeded"] == result["acknowledged_by"]["seed"] == 50_000
    assert result["acknowledged"] == sum(result["acknowledged_by"].values())
    for service in SERVICES:
        written = sum(a["writes"] for a in answers(result, service))
        if service == "node":
            # The killed process never answered for its last round, whose writes
            # are in the log all the same.
            assert result["acknowledged_by"][service] >= written
        else:
            assert result["acknowledged_by"][service] == written


@pytest.mark.parametrize("run", RUNS)
def test_no_duplicates(results: dict[str, dict[str, Any]], run: str) -> None:
    assert results[run]["duplicates"] == 0, results[run]["duplicate_sample"]
    assert results[run]["acknowledged_twice"] == 0


@pytest.mark.parametrize("run", RUNS)
def test_every_row_is_on_its_owner_under_the_final_epoch(results: dict[str, dict[str, Any]], run: str) -> None:
    assert results[run]["misplaced"] == 0
    assert results[run]["wrong_vbucket"] == 0


@pytest.mark.parametrize("run", RUNS)
def test_only_a_killed_writer_leaves_unacknowledged_rows(results: dict[str, dict[str, Any]], run: str) -> None:
    """A row on a shard that no log names can only be the one insert the Node service
    had in flight when it was killed; nothing from the Python service."""
    kept = results[run]["unacknowledged_kept"]
    assert kept.get("python", 0) == 0
    assert kept.get("node", 0) <= 1


@pytest.mark.parametrize("run", RUNS)
def test_reads_saw_every_acknowledged_write(results: dict[str, dict[str, Any]], run: str) -> None:
    assert results[run]["stale_reads"] == 0


@pytest.mark.parametrize("run", RUNS)
def test_epochs_seen_grow_to_the_final_one(results: dict[str, dict[str, Any]], run: str) -> None:
    result = results[run]
    # Run A: the plan, one epoch per batch of 16 of the ~126 moving vbuckets; run B:
    # the switch with `previous`, then the epoch without it; both: one more, the
    # reference group widened to the ten shards.
    if run == "A":
        assert result["final_epoch"] >= 9
    else:
        assert result["final_epoch"] == 4
    for service in SERVICES:
        seen = result["epochs_seen"][service]
        assert seen[0] == 1 and seen[-1] == result["final_epoch"], seen
        assert seen == sorted(set(seen))
        for answer in answers(result, service):
            assert answer["epochs_seen"] == sorted(set(answer["epochs_seen"])), answer


@pytest.mark.parametrize("run", RUNS)
def test_the_followers_refused_no_published_document(results: dict[str, dict[str, Any]], run: str) -> None:
    # The coordinator publishes through the core's follower (`publish`), the services
    # follow with it: nothing published is refused, by any service, at any time.
    for answer in results[run]["answers"]:
        assert answer["refused_documents"] == 0, answer


@pytest.mark.parametrize("run", RUNS)
def test_the_data_moved_while_the_services_wrote(results: dict[str, dict[str, Any]], run: str) -> None:
    result = results[run]
    # About half the users change shard from 5 to 10 shards, with their messages.
    assert 0.35 * result["seeded"] < result["rows_moved"] < 0.65 * result["acknowledged"]
    throughput = result["throughput_writes_per_s"]
    assert throughput["before"] > 0 and throughput["during"] > 0 and throughput["after"] > 0
    for service in SERVICES:
        assert sum(a["writes"] for a in answers(result, service, "during")) > 0
    if run == "B":
        assert result["moved_flags"] > 0
        lazily = sum(a.get("moved_users", 0) for a in result["answers"])
        swept = [e for e in result["coordinator_events"] if e["event"] == "done"][-1]["users_moved"]
        assert swept > 0, "the sweep moved the users nobody read"
        assert lazily > 0, "reads moved users"
        # Every move is logged by the shards in the transaction that sets the user's
        # flag: each flagged user has at least one logged move, and no move went
        # unflagged. Services and the sweep moved users at the same time (`raced_moves`,
        # the users moved more than once, reported: how often two movers meet depends on
        # timing); that they lost and duplicated nothing is test_nothing_is_lost and
        # test_no_duplicates.
        assert result["moved_units"] == result["moved_flags"], result


@pytest.mark.parametrize("run", RUNS)
def test_the_node_service_was_killed_and_restarted(results: dict[str, dict[str, Any]], run: str) -> None:
    if "node" not in SERVICES:
        pytest.skip("the Node service is not in SHARDROUTE_EXAMPLE_SERVICES")
    assert results[run]["faults"]["node_restart_s"] > 0
    # The restarted process came back at the epoch of the moment and kept writing.
    during = answers(results[run], "node", "during")
    assert all(a.get("failure") is None for a in during)
    assert sum(a["writes"] for a in during) > 0


def test_the_coordinator_resumed_a_copy_it_was_killed_in(results: dict[str, dict[str, Any]]) -> None:
    result = results["A"]
    assert len(result["faults"]["coordinator_kills"]) == 1
    events = result["coordinator_events"]
    resumed = [e for e in events if e["event"] == "resumed"]
    assert len(resumed) == 1 and resumed[0]["migrating"] > 0, events
    done = [e for e in events if e["event"] == "done"]
    assert len(done) == 1 and done[0]["resumed"], events
    # The kill fell in the middle of a batch: the restarted copy found rows of still
    # migrating vbuckets already on their new owner, and skipped them.
    assert done[0]["rows_already_there"] > 0, done
    assert done[0]["rows_deleted_by_sweep"] == 0


@pytest.mark.parametrize("run", RUNS)
def test_queries_answer_what_the_oracle_answers(results: dict[str, dict[str, Any]], run: str) -> None:
    """Messages by sender (the global index, then the data shards) and in a time range
    (scatter/gather), before, during and after the rebalance, in both languages: every
    answer equals the unsharded copy's. The one difference allowed is a row the killed
    writer stored on a shard and never acknowledged (it never reached the oracle)."""
    result = results[run]
    unacknowledged = set(result["unacknowledged_ids"])
    assert len(unacknowledged) <= 1
    for phase in ("before", "during", "after"):
        for service in SERVICES:
            q = result["queries"][f"{phase}-query/{service}"]
            assert q["queries_by_sender"] > 0 and q["queries_by_time"] > 0, q
            assert q["query_rows"] > 0, q
            assert q["query_missing"] == 0, q["missing_ids"]
            assert q["query_wrong"] == 0, q
            assert q["index_dangling"] == 0, q["dangling_ids"]
            assert set(q["extra_ids"]) <= unacknowledged, q["extra_ids"]
            if phase != "during":
                assert q["queries_while_moving"] == 0 and q["query_merged"] == 0, q


@pytest.mark.parametrize("run", RUNS)
def test_queries_ran_while_the_data_moved(results: dict[str, dict[str, Any]], run: str) -> None:
    """Some queries of each service were planned under a migration (the scan order of
    `Migration.scan_nodes`), and the copies under way showed: rows found on two nodes,
    merged by id."""
    result = results[run]
    for service in SERVICES:
        q = result["queries"][f"during-query/{service}"]
        assert q["queries_while_moving"] > 0, q
    assert sum(result["queries"][f"during-query/{service}"]["query_merged"] for service in SERVICES) > 0


@pytest.mark.parametrize("run", RUNS)
def test_the_global_index_has_one_entry_per_message_where_it_routes(results: dict[str, dict[str, Any]], run: str) -> None:
    result = results[run]
    assert result["index_missing"] == 0
    assert result["index_wrong"] == 0
    assert result["index_orphans"] == 0
    assert result["acknowledged"] <= result["index_entries"] <= result["stored"]


# -- tenants and the reference table (README.md, "Tenants and the reference table") -----

SHARDS_OF_THE_START = [f"shard_{i}" for i in range(1, 6)]
EVERY_SHARD = [f"shard_{i}" for i in range(1, 11)]


@pytest.mark.parametrize("run", RUNS)
def test_tenant_messages_lost_none_duplicated_none_misplaced_none(results: dict[str, dict[str, Any]], run: str) -> None:
    result = results[run]
    # Seeded: 2 messages on each of the 500 channels of each tenant the document names:
    # run A the spread tenant alone (a vbucket dictionary cannot place one), run B both.
    assert result["tenant_acknowledged_by"]["seed"] == (1000 if run == "A" else 2000)
    assert result["tenant_acknowledged"] == sum(result["tenant_acknowledged_by"].values())
    assert result["tenant_lost"] == 0
    assert result["tenant_duplicates"] == 0
    assert result["tenant_acknowledged_twice"] == 0
    assert result["tenant_misplaced"] == 0
    assert result["tenant_wrong_vbucket"] == 0
    assert result["tenant_body_mismatch"] == 0
    # The one insert the killed Node service had in flight is in one table or the other.
    assert result["tenant_unacknowledged_kept"].get("python", 0) == 0
    assert result["tenant_unacknowledged_kept"].get("node", 0) + result["unacknowledged_kept"].get("node", 0) <= 1
    for service in SERVICES:
        figures = result["tenants_by_service"][service]
        assert figures["tenant_writes"] > 0 and figures["tenant_reads"] > 0, figures
        assert figures["tenant_stale_reads"] == 0, figures
        during = answers(result, service, "during")
        assert sum(a.get("tenant_writes", 0) for a in during) > 0
    # Tenant channels moved with the rebalance too (the spread tenant's buckets).
    assert result["tenant_rows_moved"] > 0


@pytest.mark.parametrize("run", RUNS)
def test_a_placed_tenant_stays_in_its_group_and_a_spread_one_takes_several_shards(
    results: dict[str, dict[str, Any]], run: str
) -> None:
    result = results[run]
    if run == "A":
        assert result["placed_tenants"] == {}  # vbucket: no placing strategy
    else:
        placed = result["placed_tenants"]["acme"]
        assert placed["group"] == "eu" and placed["nodes"] == ["shard_1", "shard_2"]
        assert placed["rows"] > 1000  # its 1,000 seeded rows and the services' writes
        assert placed["outside_group"] == 0, placed
        # A placed tenant without `shards` keeps every key on one node of its group.
        assert len(placed["shards"]) == 1 and placed["shards"][0] in placed["nodes"], placed
    spread = result["spread_tenants"]["globex"]
    assert spread["buckets"] == 8
    assert spread["rows"] > 1000
    assert 2 <= len(spread["shards"]) <= 8, spread


@pytest.mark.parametrize("run", RUNS)
def test_the_reference_table_is_the_same_on_every_node_of_its_group(results: dict[str, dict[str, Any]], run: str) -> None:
    reference = results[run]["reference"]
    # After the growth, the coordinator widened the group from the start's five shards
    # to all ten (node_group_set): the final document's group lists them in order.
    assert reference["table"] == "plans" and reference["group"] == EVERY_SHARD
    assert reference["group_is_every_shard"]
    # 5 seeded plans and one row per service (its quota), on each of the ten shards.
    assert reference["rows_per_node"] == [5 + len(SERVICES)] * 10
    assert reference["differing"] == 0
    assert reference["outside_group"] == []
    assert reference["seed_wrong"] == 0
    assert reference["written_by"] == sorted(["seed", *SERVICES])
    picked = {}
    for service in SERVICES:
        figures = results[run]["tenants_by_service"][service]
        assert figures["plan_reads"] > 0 and figures["plan_wrong"] == 0, figures
        assert figures["plan_writes"] > 0, figures
        assert figures["plan_read_nodes"] and set(figures["plan_read_nodes"]) <= set(EVERY_SHARD), figures
        picked[service] = figures["plan_read_nodes"]
        # After the widening, the picks over the wider group reach shards that joined it.
        assert set(figures["plan_read_nodes_after"]) - set(SHARDS_OF_THE_START), figures
    # The read node is the core's pick: both languages read each seeded plan from the same node.
    assert len({tuple(nodes) for nodes in picked.values()}) == 1, picked


@pytest.mark.parametrize("run", RUNS)
def test_the_reference_group_was_widened_after_the_growth(results: dict[str, dict[str, Any]], run: str) -> None:
    """One `widened` event: the five shards that joined the group each got a copy of
    every `plans` row (the 5 seeded plans and each service's quota row, all written
    before the rebalance started), then the next epoch was published."""
    events = results[run]["coordinator_events"]
    widened = [e for e in events if e["event"] == "widened"]
    assert len(widened) == 1, events
    assert widened[0]["group"] == "catalog" and widened[0]["nodes_before"] == 5
    assert widened[0]["joined"] == EVERY_SHARD[5:]
    assert widened[0]["rows"] == 5 + len(SERVICES)
    assert widened[0]["rows_copied"] == 5 * (5 + len(SERVICES))
    assert widened[0]["epoch"] == results[run]["final_epoch"]
    # It came after the growth: the last event before `done`.
    assert [e["event"] for e in events][-2:] == ["widened", "done"], events
