"""The Python conformance runner: every case of every file in conformance/vectors.

The format is specified in conformance/README.md. `vector_key` (shared with the other
tests, in conformance/python/shardroute_testing.py) builds the Python value a user
would pass for a vector key, `key_form` turns a key the API returns (a salted key)
back into a vector key; `run_case` calls the public API and returns what the case's
`expect` is compared with (as JSON values, object field order ignored). There is no
routing logic here. A case this runner cannot run (an unknown op or key form) counts
as failed, never skipped.

Prints `conformance python: N passed, M failed, 0 skipped`, writes
target/conformance/python.json, and fails unless M == 0 and N > 0. Set
SHARDROUTE_VECTORS_FILTER to a substring of case names to run only those.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import shardroute
from shardroute_testing import VECTORS, MalformedVector, vector_files, vector_key

RUNNER = "python"
REPORT = Path(__file__).resolve().parents[2] / "target" / "conformance" / f"{RUNNER}.json"


def key_form(key: object) -> Dict[str, str]:
    """A key returned by the API (a salted key) as a vector key: str -> utf8, bytes ->
    hex, int -> u64. The case's `expect` then checks that the type mirrors the input."""
    if type(key) is str:
        return {"utf8": key}
    if type(key) is bytes:
        return {"hex": key.hex()}
    if type(key) is int:
        return {"u64": str(key)}
    raise MalformedVector(f"salted key of unexpected type {type(key).__name__}")


def action_json(action: shardroute.Action) -> Dict[str, Any]:
    """A session action as the vectors write it, from the fields a user reads."""
    if action.kind == "send":
        return {"send": {"address": action.address, "host": action.host, "port": action.port,
                         "asking": action.asking, "readonly": action.readonly}}
    if action.kind == "wait":
        return {"wait": {"until_ms": str(action.until_ms), "delay_ms": action.delay_ms}}
    if action.kind == "fail":
        return {"fail": {"code": action.code}}
    return {action.kind: {}}


def session_step(session: shardroute.ClusterSession, current: List[shardroute.Command], step: Dict[str, Any]) -> Any:
    """One step of a session scenario (conformance/README.md, "Session scenarios").

    current: the commands begun, in order; a step's "command" (an index) picks one, else the last.
    """
    call, now = step["call"], step.get("now_ms", 0)
    picked = step.get("command", len(current) - 1)
    try:
        if call == "command":
            current.append(session.command([vector_key(key) for key in step["keys"]], step["access"], now))
            return {"slot": current[-1].slot}
        if call.startswith("pipeline_"):
            address, readonly = step["address"], step["readonly"]
            if call == "pipeline_queued":
                return {"queued": session.pipeline_queued(address, readonly)}
            if call == "pipeline_take":
                return {"write": session.pipeline_take(address, readonly)}
            if call == "pipeline_done":
                return {"write": session.pipeline_done(address, readonly)}
            if call == "pipeline_withdrawn":
                session.pipeline_withdrawn(address, readonly, step["count"])
                return {"ok": True}
            if call == "pipeline_pending":
                queued, writes = session.pipeline_pending(address, readonly)
                return {"queued": queued, "writes": writes}
        if call == "poll":
            return action_json(session.poll(current[picked], now))
        if call == "succeeded":
            return action_json(session.succeeded(current[picked], now))
        if call == "failed":
            return action_json(session.failed(current[picked], step["text"], step["names"], now))
        if call == "stalled":
            return action_json(session.stalled(current[picked], now))
        if call == "unreachable":
            return action_json(session.unreachable(current[picked], step["why"], now))
        if call == "deadline":
            deadline = session.deadline(current[picked])
            return {"deadline_ms": None if deadline is None else str(deadline)}
        if call == "on_deadline":
            return action_json(session.on_deadline(current[picked], now))
        if call == "refresh_sent":
            deadline = session.refresh_sent(step["address"], now)
            return {"deadline_ms": None if deadline is None else str(deadline)}
        if call == "next_deadline":
            deadline = session.next_deadline()
            return {"deadline_ms": None if deadline is None else str(deadline)}
        if call == "batch_deadline":
            deadline = session.batch_deadline(now)
            return {"deadline_ms": None if deadline is None else str(deadline)}
        if call == "timeout":
            return {"timed_out": session.timeout(now)}
        if call == "refreshed":
            session.refreshed(step["reply"], now)
            return {"ok": True}
        if call == "refresh_failed":
            session.refresh_failed(now)
            return {"ok": True}
        if call == "candidates":
            return {"addresses": session.refresh_candidates()}
        if call == "stats":
            return session.stats
        if call == "plan":
            groups = session.plan([vector_key(key) for key in step["keys"]], step["access"])
            return {"groups": [{"address": address, "readonly": readonly, "slots": [[slot, list(indices)] for slot, indices in slots]}
                               for address, readonly, slots in groups]}
    except shardroute.ShardrouteError as err:
        return {"error": err.code}
    raise MalformedVector(f"unknown session call {call!r}")


def run_session(case: Dict[str, Any]) -> Dict[str, Any]:
    try:
        session = shardroute.ClusterSession(case["seeds"], case.get("config"))
    except shardroute.ShardrouteError as err:
        return {"error": err.code}
    current: List[shardroute.Command] = []
    return {"results": [session_step(session, current, step) for step in case["steps"]]}


def follower_step(file: Dict[str, Any], follower: shardroute.TopologyFollower, step: Dict[str, Any]) -> Any:
    """One step of a follower scenario (conformance/README.md, "Session scenarios")."""
    call, now = step["call"], step.get("now_ms", 0)

    def document() -> Any:
        if "document" in step:
            return json.dumps(file["topologies"][step["document"]])
        return step["document_json"]

    try:
        if call == "offer":
            offered = follower.offer(document(), step["revision"], now)
        elif call == "offer_dictionary":
            offered = follower.offer_dictionary(bytes.fromhex(step["hex"]), step["revision"], now)
        elif call == "offer_bytes":
            offered = follower.offer_bytes(bytes.fromhex(step["hex"]), step["revision"], now)
        elif call == "disconnected":
            return {"reconnect_at_ms": str(follower.disconnected(now))}
        elif call == "connected":
            follower.connected()
            return {"ok": True}
        elif call == "publish":
            write = follower.publish(document())
            revision = write["expected_revision"]
            return {"expected_revision": None if revision is None else str(revision), "epoch": str(write["epoch"]),
                    "document": write["document"]}
        elif call == "state":
            router, revision = follower.router, follower.revision
            return {"epoch": None if router is None else str(router.epoch), "revision": None if revision is None else str(revision)}
        elif call == "stats":
            return follower.stats
        elif call == "next_deadline":
            deadline = follower.next_deadline()
            return {"deadline_ms": None if deadline is None else str(deadline)}
        else:
            raise MalformedVector(f"unknown follower call {call!r}")
    except shardroute.ShardrouteError as err:
        return {"error": err.code}
    if offered.kind == "installed":
        return {"installed": {"epoch": str(offered.epoch)}}
    if offered.kind == "refused":
        return {"refused": {"code": offered.code}}
    return {offered.kind: {}}


def run_follower(file: Dict[str, Any], case: Dict[str, Any]) -> Dict[str, Any]:
    try:
        follower = shardroute.TopologyFollower(case.get("config"))
    except shardroute.ShardrouteError as err:
        return {"error": err.code}
    return {"results": [follower_step(file, follower, step) for step in case["steps"]]}


def migration_step(session: shardroute.MigrationSession, step: Dict[str, Any]) -> Any:
    """One step of a migration session scenario."""
    call = step["call"]
    try:
        if call == "fence_epoch":
            return {"epoch": str(session.fence_epoch)}
        if call == "mode":
            return {"mode": session.mode}
        if call == "scan_nodes":
            return {"nodes": session.scan_nodes()}
        if call == "read_plan":
            return {"nodes": session.read_plan(vector_key(step["key"]), step["moved"])}
        if call == "read_plan_at":
            return {"nodes": session.read_plan_at(vector_key(step["key"]), int(step["now_ms"]), step["moved"])}
        if call == "next_deadline":
            deadline = session.next_deadline(int(step["now_ms"]))
            return {"deadline_ms": None if deadline is None else str(deadline)}
        if call == "actions":
            return {"actions": session.actions(int(step["now_ms"]), step["moved"])}
        if call == "write_plan":
            node, epoch = session.write_plan(vector_key(step["key"]))
            return {"node": node, "fence_epoch": str(epoch)}
        if call == "lazy_steps":
            steps = session.lazy_steps(vector_key(step["key"]))
            return {"steps": None if steps is None else {**steps, "fence_epoch": str(steps["fence_epoch"])}}
        if call == "copy_batch":
            batch = session.copy_batch(step["cursor"], step["max"])
            return {"units": [list(unit) for unit in batch["units"]], "next": batch["next"]}
        if call == "fenced":
            return {session.fenced(int(step["min_epoch"])): {}}
        if call == "lazy_groups":
            groups = session.lazy_groups([vector_key(key) for key in step["keys"]])
            return {"groups": [
                {"steps": {**group["steps"], "fence_epoch": str(group["steps"]["fence_epoch"])}, "indices": group["indices"]}
                for group in groups
            ]}
        if call == "resume_at":
            min_pause = int(step["min_pause_ms"]) if "min_pause_ms" in step else None
            resume = session.resume_at(
                int(step["started_ms"]), int(step["finished_ms"]), step.get("duty_per_mille"), min_pause
            )
            return {"resume_ms": str(resume)}
    except shardroute.ShardrouteError as err:
        return {"error": err.code}
    raise MalformedVector(f"unknown migration session call {call!r}")


def run_migration_session(file: Dict[str, Any], case: Dict[str, Any]) -> Dict[str, Any]:
    def optional(side: str) -> Optional[shardroute.Router]:
        return shardroute.Router(file["topologies"][case[side]]) if side in case else None

    try:
        if "topology" in case:
            # The routing a service holds: the session decides its mode.
            topology = shardroute.Router(file["topologies"][case["topology"]])
            session = shardroute.MigrationSession.of_topology(topology, optional("previous"), optional("held"))
            return {"results": [migration_step(session, step) for step in case["steps"]]}
        if "dictionary" in case:
            migration = shardroute.Migration.of_dictionary(shardroute.Router(file["topologies"][case["dictionary"]]))
        else:
            before, after = (shardroute.Router(file["topologies"][case[side]]) for side in ("before", "after"))
            migration = shardroute.Migration(before, after)
        until_ms = int(case["until_ms"]) if "until_ms" in case else None
        session = shardroute.MigrationSession(migration, case["mode"], until_ms)
    except shardroute.ShardrouteError as err:
        return {"error": err.code}
    return {"results": [migration_step(session, step) for step in case["steps"]]}


def run_misplaced(file: Dict[str, Any], case: Dict[str, Any]) -> Dict[str, Any]:
    """A consistency check case: the keys found on a node (or shard) that it does not own."""
    try:
        router = shardroute.Router(file["topologies"][case["topology"]])
        holder = case["node"] if "node" in case else case["shard"]
        found: Dict[str, Any] = shardroute.MigrationSession.misplaced(router, holder, [vector_key(k) for k in case["keys"]])
        return found
    except shardroute.ShardrouteError as err:
        return {"error": err.code}


def step_bytes(step: Dict[str, Any], field: str, absent: Optional[bytes]) -> bytes:
    """A step's bytes: `field` (text, as UTF-8) or `field`_b64 (standard base64, padding
    optional), never both; neither is `absent` (None: the step is malformed)."""
    if field in step and f"{field}_b64" in step:
        raise MalformedVector(f"a step has {field} (text) or {field}_b64, not both")
    if f"{field}_b64" in step:
        encoded = step[f"{field}_b64"].rstrip("=")
        return base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    if field in step:
        text: str = step[field]
        return text.encode()
    if absent is None:
        raise MalformedVector(f"a step has {field} (text) or {field}_b64")
    return absent


def source_step(session: shardroute.SourceSession, step: Dict[str, Any]) -> Any:
    """One step of a source session scenario (conformance/README.md, "Session
    scenarios", `session_source`): the actions it returns and the deadline after it."""
    call, now = step["call"], step.get("now", 0)
    try:
        if call == "start":
            actions = session.start(now)
        elif call == "call":
            number, actions = session.call(step["op"], now)
            return {"call": number, "actions": actions, "deadline": session.deadline}
        elif call == "response":
            body = step_bytes(step, "body", b"")
            actions = session.response(step["id"], now, step["status"], step.get("headers", {}), body)
        elif call == "opened":
            actions = session.opened(step["id"], now)
        elif call == "chunk":
            actions = session.chunk(step["id"], now, step_bytes(step, "data", None))
        elif call == "failed":
            actions = session.failed(step["id"], now, step["code"], step["message"])
        elif call == "timer":
            actions = session.timer(now)
        elif call == "close":
            actions = session.close(now)
        elif call == "state":
            return session.state
        else:
            raise MalformedVector(f"unknown source session call {call!r}")
    except shardroute.ShardrouteError as err:
        return {"error": {"code": err.code}, "deadline": session.deadline}
    return {"actions": actions, "deadline": session.deadline}


def run_source(case: Dict[str, Any]) -> Dict[str, Any]:
    try:
        session = shardroute.SourceSession(case["config"])
    except shardroute.ShardrouteError as err:
        return {"error": {"code": err.code}}
    return {"results": [source_step(session, step) for step in case["steps"]]}


def run_case(file: Dict[str, Any], routers: Dict[str, Any], case: Dict[str, Any]) -> Dict[str, Any]:
    """Runs one case; returns the result or `{"error": code}` to compare with `expect`."""

    def document(topology_id: str) -> Any:
        if topology_id not in file["topologies"]:
            raise MalformedVector(f"unknown topology id {topology_id!r}")
        return file["topologies"][topology_id]  # a dict, as a user's json.load gives (typed Any)

    def router_for(topology_id: str) -> shardroute.Router:
        if topology_id not in routers:
            routers[topology_id] = shardroute.Router(document(topology_id))
        router: shardroute.Router = routers[topology_id]
        if "table" in case:  # a case naming a table runs on its family's router
            return router.table(case["table"])
        return router

    def migration_for() -> shardroute.Migration:
        if "dictionary" in case and "before" not in case and "after" not in case:
            return shardroute.Migration.of_dictionary(router_for(case["dictionary"]))
        if "dictionary" not in case and "before" in case and "after" in case:
            return shardroute.Migration(router_for(case["before"]), router_for(case["after"]))
        raise MalformedVector("a migration case names before and after, or dictionary")

    op = case["op"]
    if op == "redis_session":
        return run_session(case)
    if op == "topology_follower":
        return run_follower(file, case)
    if op == "migration_session":
        return run_migration_session(file, case)
    if op == "misplaced":
        return run_misplaced(file, case)
    if op == "session_source":
        return run_source(case)
    try:
        if op == "load":
            if "topology_json" in case:
                router = shardroute.Router(case["topology_json"])
            else:
                router = shardroute.Router(document(case["topology"]))
            if type(router.epoch) is not int:
                raise MalformedVector(f"epoch is {type(router.epoch).__name__}, not int")
            return {"epoch": str(router.epoch), "to_json": router.to_json()}
        if op == "route":
            router = router_for(case["topology"])
            key = vector_key(case["key"])
            return {"shard": router.route(key), "node": router.node(key)}
        if op == "replicas":
            router = router_for(case["topology"])
            return {"nodes": router.replicas(vector_key(case["key"]), case["count"])}
        if op == "route_many":
            router = router_for(case["topology"])
            return {"shards": router.route_many(vector_key(key) for key in case["keys"])}
        if op == "hash_key":
            key = vector_key(case["key"])
            hashed = shardroute.hash_key(key) if "hashing" not in case else shardroute.hash_key(key, case["hashing"])
            return {"hash": str(hashed)}
        if op == "jump":
            return {"shard": shardroute.jump(int(case["hash"]), case["buckets"])}
        if op == "scatter":
            router = router_for(case["topology"])
            policy = {"read_from": case["read_from"], "turn": case["turn"], "zone": case["zone"]}
            if case["scope"] == "every":
                plan = router.scatter_every(**policy)
            elif case["scope"] == "range":
                end = None if case["end"] is None else vector_key(case["end"])
                plan = router.scatter_range(vector_key(case["start"]), end, **policy)
            else:
                plan = router.scatter_keys([vector_key(key) for key in case["keys"]], **policy)
            key_lists = plan["keys"] if case["scope"] == "keys" else [[] for _ in plan["shards"]]
            if case["scope"] != "keys" and plan["keys"] is not None:
                raise MalformedVector("scatter: keys must be None outside scatter_keys")
            assert key_lists is not None
            visits = [{"shard": shard, "node": node, "keys": indices}
                      for shard, node, indices in zip(plan["shards"], plan["nodes"], key_lists, strict=True)]
            return {"gather": plan["gather"], "visits": visits}
        if op == "shards_for_range":
            router = router_for(case["topology"])
            end = None if case["end"] is None else vector_key(case["end"])
            return {"shards": router.shards_for_range(vector_key(case["start"]), end)}
        if op == "decode_id":
            decoded = router_for(case["topology"]).decode_id(int(case["id"]))
            fields = []
            for name, value in decoded["fields"].items():
                if type(value) is not int:
                    raise MalformedVector(f"decode_id field {name} is {type(value).__name__}, not int")
                fields.append([name, str(value)])
            return {"shard": decoded["shard"], "fields": fields}
        if op == "locate":
            return dict(router_for(case["topology"]).locate(vector_key(case["key"])))
        if op == "salted_key":
            salted = router_for(case["topology"]).salted_key(vector_key(case["key"]), case["salt"])
            return {"key": key_form(salted)}
        if op == "salted_keys":
            pairs = router_for(case["topology"]).salted_keys(vector_key(case["key"]))
            return {"keys": [[key_form(salted), shard] for salted, shard in pairs]}
        if op == "apply":
            source = case["topology_json"] if "topology_json" in case else document(case["topology"])
            return {"result": shardroute.apply(source, case["operation"])}
        if op == "modulo_moves":
            return {"moves": shardroute.modulo_moves(case["old"], case["new"])}
        if op == "read_near":
            return {"node": router_for(case["topology"]).read_near(vector_key(case["key"]), case["zone"])}
        if op == "route_read":
            return {"node": router_for(case["topology"]).route_read(vector_key(case["key"]))}
        if op == "route_write":
            return {"nodes": router_for(case["topology"]).route_write(vector_key(case["key"]))}
        if op == "read_replica":
            return {"node": router_for(case["topology"]).read_replica(vector_key(case["key"]), case["turn"])}
        if op == "stats":
            return {"result": dict(router_for(case["topology"]).stats([vector_key(key) for key in case["keys"]]))}
        if op == "same_slot":
            return {"shard": router_for(case["topology"]).same_slot([vector_key(key) for key in case["keys"]])}
        if op == "group_by_node":
            groups = router_for(case["topology"]).group_by_node([vector_key(key) for key in case["keys"]])
            return {"groups": [[node, indices] for node, indices in groups]}
        if op == "moved":
            return {"to_json": router_for(case["topology"]).moved(case["slot"], case["address"]).to_json()}
        if op == "ask":
            return {"address": router_for(case["topology"]).ask(case["slot"], case["address"])}
        if op == "parse_redirect":
            redirect = shardroute.parse_redirect(case["line"])
            if type(redirect) is not shardroute.Redirect:
                raise MalformedVector(f"parse_redirect returned {type(redirect).__name__}, not Redirect")
            return {"kind": redirect.kind, "slot": redirect.slot, "address": redirect.address}
        if op == "migration":
            migration = migration_for()
            key = vector_key(case["key"])
            moves = migration.moves(key)
            return {
                "moves": None if moves is None else list(moves),
                "write_target": migration.write_target(key),
                "read_targets": migration.read_targets(key, case["moved"]),
            }
        if op == "migration_salted":
            migration = migration_for()
            key = vector_key(case["key"])
            return {
                "read_keys": [key_form(read) for read in migration.read_keys(key)],
                "write_key": key_form(migration.write_key(key, case["salt"])),
            }
        if op == "index_route":
            index = router_for(case["topology"]).index(case["index"])
            key = vector_key(case["key"])
            return {"shard": index.route(key), "node": index.node(key)}
        if op == "index_write_plan":
            terms = [(name, vector_key(term)) for name, term in case["terms"]]
            return dict(router_for(case["topology"]).index_write_plan(vector_key(case["key"]), terms))
        if op == "migration_shards":
            return {"shards": [list(shard) for shard in migration_for().moving_shards()]}
        if op == "migration_scan":
            return {"nodes": migration_for().scan_nodes()}
        if op == "migration_keys":
            return {"indices": migration_for().moving_keys([vector_key(key) for key in case["keys"]])}
        if op == "shard_owner":
            return {"node": router_for(case["topology"]).shard_owner(case["shard"])}
        if op == "replace":
            replaced = router_for(case["topology"]).replace(document(case["next"]))
            if type(replaced) is not shardroute.Router:
                raise MalformedVector(f"replace returned {type(replaced).__name__}, not Router")
            return {"epoch": str(replaced.epoch)}
        if op == "diff":
            keys = [vector_key(key) for key in case["keys"]]
            per_key = case.get("per_key", False)
            return {"result": shardroute.diff(router_for(case["old"]), router_for(case["new"]), keys, per_key=per_key)}
        if op == "encode_dictionary":
            encoded = shardroute.encode_dictionary(document(case["topology"]))
            if type(encoded) is not bytes:
                raise MalformedVector(f"encode_dictionary returned {type(encoded).__name__}, not bytes")
            return {"hex": encoded.hex()}
        if op == "decode_dictionary":
            return {"to_json": shardroute.decode_dictionary(bytes.fromhex(case["hex"]))}
    except shardroute.ShardrouteError as err:
        if not isinstance(err, ValueError) or type(err).code != err.code:
            raise MalformedVector(f"{type(err).__name__} carries code {err.code!r}")
        return {"error": err.code}
    raise MalformedVector(f"unknown op {op!r}")


def same(actual: Any, expected: Any) -> bool:
    """JSON equality, strict about types (1 is not 1.0, True is not 1)."""
    return json.dumps(actual, sort_keys=True) == json.dumps(expected, sort_keys=True)


def run_all(name_filter: str) -> Tuple[int, List[Tuple[str, str]]]:
    passed, failures = 0, []
    for path, file in vector_files():
        if file.get("format") != "shardroute-vectors/1":
            failures.append((path.name, f"unknown vector format {file.get('format')!r}"))
            continue
        routers: Dict[str, Any] = {}
        for case in file["cases"]:
            if name_filter not in case["name"]:
                continue
            try:
                actual = run_case(file, routers, case)
            except Exception as err:  # a vector we cannot run, or a non-shardroute error
                failures.append((case["name"], f"{type(err).__name__}: {err}"))
                continue
            if same(actual, case["expect"]):
                passed += 1
            else:
                failures.append((case["name"], f"expected {case['expect']}, got {actual}"))
    return passed, failures


def test_vectors(capsys: pytest.CaptureFixture[str]) -> None:
    passed, failures = run_all(os.environ.get("SHARDROUTE_VECTORS_FILTER", ""))
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    report = {"runner": RUNNER, "passed": passed, "failed": len(failures), "skipped": 0}
    REPORT.write_text(json.dumps(report) + "\n", encoding="utf-8")
    with capsys.disabled():
        for name, reason in failures[:50]:
            print(f"FAILED {name}: {reason}")
        print(f"\nconformance {RUNNER}: {passed} passed, {len(failures)} failed, 0 skipped")
    assert not failures, f"{len(failures)} conformance cases failed (first: {failures[0]})"
    assert passed > 0, f"no conformance case ran (vectors in {VECTORS})"
