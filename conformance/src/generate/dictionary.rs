//! `dictionary.json`: the vbucket dictionary in motion: planning (by count or weighted by
//! load) and completing a rebalance, routing reads and writes while vbuckets move, epochs
//! that only grow, doubling and halving the vbucket count, checksums, the binary form, and
//! `diff`.

use serde_json::{json, Value};
use shardroute::dictionary;

use super::cases::{applied, apply_refused, expect_error, refused_documents, refused_text, result_or_error, On};
use super::keys::{hex_digits, owned_key, standard_keys, u64_key};
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, Document};

fn dictionary_doc(nodes: usize, vbuckets: u32, replicas: u32, epoch: u64) -> Value {
    let entries: Vec<Value> = (0..nodes)
        .map(|i| json!({"id": format!("n{i}"), "address": format!("10.0.0.{i}:11210"), "zone": format!("z{}", i % 2)}))
        .collect();
    doc(Value::Array(entries), json!({"type": "vbucket", "vbuckets": vbuckets, "replicas": replicas})).epoch(epoch)
}

/// `plan_rebalance` with `vbucket_weights`: actives balanced by load. On `dict-4` the
/// actives of `n0` (every fourth vbucket) are hot, so the count plan sees balance and
/// moves nothing while the weighted one moves `n0`'s surplus. Each result is the core's,
/// checked here against the bound the planner promises: every node's active load at most
/// its target plus the heaviest vbucket less 1, and no active leaving a node within its
/// target.
fn weighted_plans(file: &mut VectorFile) {
    let hot: Vec<Value> = (0..64).map(|v| if v % 4 == 0 { json!(1000) } else { json!(10) }).collect();
    // Sizes as decimal strings, some vbuckets unmeasured (0).
    let sizes: Vec<Value> = (0..64u64).map(|v| json!(format!("{}", (v * 7919) % 50 * 1_000_000_000))).collect();
    let mut overflow = vec![json!(0); 64];
    overflow[1] = json!("18446744073709551615");
    overflow[3] = json!(1);
    let equal: Vec<Value> = vec![json!(7); 64];
    for (label, operation) in [
        ("plan-count-sees-balance", json!({"op": "plan_rebalance"})),
        ("plan-weighted-hot-node", json!({"op": "plan_rebalance", "vbucket_weights": hot})),
        (
            "plan-weighted-add-node",
            json!({"op": "plan_rebalance", "add": [{"id": "n4", "zone": "z0"}], "vbucket_weights": sizes}),
        ),
        (
            "plan-weighted-fail-node",
            json!({"op": "plan_rebalance", "fail": ["n1"], "vbucket_weights": hot, "max_moves_per_node": 1}),
        ),
        (
            "plan-weighted-remove-and-reweight",
            json!({"op": "plan_rebalance", "remove": ["n3"], "weights": {"n0": 2}, "vbucket_weights": sizes}),
        ),
        ("plan-weighted-equal", json!({"op": "plan_rebalance", "add": [{"id": "n4"}], "vbucket_weights": equal})),
        ("plan-weighted-unmeasured", json!({"op": "plan_rebalance", "remove": ["n2"], "vbucket_weights": vec![0; 64]})),
    ] {
        let weights = operation.get("vbucket_weights").cloned();
        let result = applied(file, &format!("apply/{label}"), On::Topology("dict-4"), operation);
        if let Some(weights) = weights {
            check_weighted(label, file.document("dict-4"), &weights, &result);
        }
    }
    for (label, weights) in [
        ("short", json!(vec![1; 63])),
        ("negative", json!([1, 2, 3, -4])),
        ("fraction", json!([1, 2, 3, 4.5])),
        ("not-decimal", json!([1, 2, 3, "0x10"])),
        ("not-an-array", json!({"0": 1})),
        ("sum-overflows", json!(overflow)),
    ] {
        apply_refused(
            file,
            &format!("apply/reject-plan-weights-{label}"),
            On::Topology("dict-4"),
            json!({"op": "plan_rebalance", "vbucket_weights": weights}),
            "invalid_argument",
        );
    }
}

/// The weighted plan's promises, checked on the core's report: targets summing to the
/// total, every node's load after at most its target plus the heaviest vbucket less 1, the load
/// before as the map says, and no active off a node within its target.
fn check_weighted(label: &str, before: &Value, weights: &Value, result: &Value) {
    let weights: Vec<u64> = weights
        .as_array()
        .expect("weights")
        .iter()
        .map(|w| w.as_u64().or_else(|| w.as_str().and_then(|t| t.parse().ok())).expect("a weight"))
        .collect();
    let number = |value: &Value| value.as_u64().or_else(|| value.as_str().and_then(|t| t.parse().ok())).expect("u64");
    let heaviest = weights.iter().copied().max().unwrap_or(0);
    let total: u64 = weights.iter().sum();
    let targets = result["target"].as_object().expect("target");
    assert_eq!(targets.values().map(number).sum::<u64>(), total, "{label}");
    let ids: Vec<&str> =
        before["nodes"].as_array().expect("nodes").iter().map(|n| n["id"].as_str().expect("id")).collect();
    let chains = |map: &Value| -> Vec<String> {
        map.as_array().expect("map").iter().map(|chain| chain[0].as_str().expect("active").to_string()).collect()
    };
    let round_robin: Vec<String> = (0..64).map(|v| ids[v % ids.len()].to_string()).collect();
    let now = before["strategy"].get("map").map_or(round_robin, chains);
    let next = result["topology"]["strategy"].get("forward_map").unwrap_or(&result["topology"]["strategy"]["map"]);
    let next = chains(next);
    for (id, target) in targets {
        let target = number(target);
        let load =
            |actives: &[String]| actives.iter().zip(&weights).filter(|(a, _)| *a == id).map(|(_, w)| w).sum::<u64>();
        assert_eq!(number(&result["load"][id]["before"]), load(&now), "{label}: {id} before");
        assert_eq!(number(&result["load"][id]["after"]), load(&next), "{label}: {id} after");
        let bound = target + heaviest.saturating_sub(1);
        assert!(load(&next) <= bound, "{label}: {id} at {} over {target} + {heaviest} - 1", load(&next));
        let serving = result["topology"]["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .any(|n| n["id"] == id.as_str() && n.get("state").is_none_or(|s| s == "active"));
        if serving && load(&now) <= target {
            assert!(now.iter().zip(&next).all(|(a, b)| a != id || b == id), "{label}: an active left {id}");
        }
    }
}

/// Failover (issue 34): a failed node's active vbuckets are all promoted to a live
/// replica at once (room or not), then balanced by copies from live nodes only; a vbucket
/// whose every copy was on failed nodes is `lost` (a new, empty owner at once); the map
/// installed at once and the forward map name no failed node, so no read, replica read
/// or write goes to one. Cases: the docs' example dictionary (`fail cb-2`, alone and with
/// `cb-5` added), no replicas, two failures (some vbuckets with both copies on them, by
/// count and by load), two replicas with two failures and an added node; then reads,
/// replica reads and writes on the failed-over dictionaries.
fn failover_plans(file: &mut VectorFile) {
    let example: Value =
        serde_json::from_str(include_str!("../../../docs/examples/dictionary-explicit.json")).expect("the example");
    file.topology("dict-example", example);
    file.topology("dict-4-solo", dictionary_doc(4, 16, 0, 10));
    file.topology("dict-5-r2", dictionary_doc(5, 20, 2, 10));
    let hot: Vec<Value> = (0..64).map(|v| if v % 4 == 1 { json!(1000) } else { json!(10 + v) }).collect();
    let mut routed = Vec::new();
    for (label, from, operation, next) in [
        ("example", "dict-example", json!({"op": "plan_rebalance", "fail": ["cb-2"]}), Some("dict-example-failed")),
        (
            "example-add",
            "dict-example",
            json!({"op": "plan_rebalance", "fail": ["cb-2"], "add": [{"id": "cb-5", "address": "10.0.1.5:11210", "zone": "eu-west-1b"}]}),
            Some("dict-example-failed-add"),
        ),
        ("no-replicas", "dict-4-solo", json!({"op": "plan_rebalance", "fail": ["n1"]}), Some("dict-solo-failed")),
        ("two-nodes", "dict-4", json!({"op": "plan_rebalance", "fail": ["n1", "n2"]}), Some("dict-two-failed")),
        (
            "two-nodes-weighted",
            "dict-4",
            json!({"op": "plan_rebalance", "fail": ["n1", "n2"], "vbucket_weights": hot, "max_moves_per_node": 1}),
            None,
        ),
        (
            "two-replicas-two-nodes-add",
            "dict-5-r2",
            json!({"op": "plan_rebalance", "fail": ["n1", "n2"], "add": [{"id": "n5", "zone": "z1"}]}),
            Some("dict-r2-failed"),
        ),
    ] {
        let failed: Vec<String> =
            operation["fail"].as_array().expect("fail").iter().map(|id| id.as_str().expect("id").to_string()).collect();
        let before = file.document(from).clone();
        let result = applied(file, &format!("apply/failover-{label}"), On::Topology(from), operation);
        check_failover(label, &before, &result, &failed);
        if let Some(next) = next {
            file.topology(next, result["topology"].clone());
            routed.push((next, failed));
        }
    }
    // Completing a failover drops the failed nodes: without replicas every move took
    // effect at once, but the forward map stays for this step.
    for (id, failed) in &routed {
        let result =
            applied(file, &format!("apply/failover-complete/{id}"), On::Topology(id), json!({"op": "complete_moves"}));
        assert_eq!(result["removed_nodes"], json!(failed), "{id}");
    }
    for (id, failed) in routed {
        let router = file.router(id);
        for (label, key) in standard_keys().into_iter().take(20) {
            let owned = owned_key(&key);
            let read = router.route_read(owned.as_key()).expect("read");
            assert!(!failed.iter().any(|f| f == read), "{id}: {label} read from the failed {read}");
            file.case(
                &format!("route_read/{id}/{label}"),
                json!({"op": "route_read", "topology": id, "key": key, "expect": {"node": read}}),
            );
            for turn in 0..2u32 {
                let node = router.read_replica(owned.as_key(), turn).expect("read_replica");
                assert!(!failed.iter().any(|f| f == node), "{id}: {label} replica read from the failed {node}");
                file.case(
                    &format!("read_replica/{id}/{label}/{turn}"),
                    json!({"op": "read_replica", "topology": id, "key": key, "turn": turn, "expect": {"node": node}}),
                );
            }
            let write = router.route_write(owned.as_key()).expect("write");
            assert!(write.iter().all(|node| !failed.iter().any(|f| f == node)), "{id}: {label} written to {write:?}");
            file.case(
                &format!("route_write/{id}/{label}"),
                json!({"op": "route_write", "topology": id, "key": key, "expect": {"nodes": write}}),
            );
        }
    }
}

/// The failover's promises, checked on the core's report and document: no copy from a
/// failed node; every active vbucket of a failed node with a live replica promoted to one
/// (first, and served by it in `map` at once), every other one `lost` and served at once
/// by its new owner; no failed node in `map` or `forward_map`.
fn check_failover(label: &str, before: &Value, result: &Value, failed: &[String]) {
    let is_failed = |id: &Value| failed.iter().any(|f| id == f.as_str());
    let moves = result["moves"].as_array().expect("moves");
    for mv in moves {
        assert!(mv["kind"] != "copy" || !is_failed(&mv["from"]), "{label}: a copy from a failed node: {mv}");
    }
    let strategy = &result["topology"]["strategy"];
    for field in ["map", "forward_map"] {
        for (vbucket, chain) in strategy[field].as_array().into_iter().flatten().enumerate() {
            assert!(!chain.as_array().expect("chain").iter().any(is_failed), "{label}: {field}[{vbucket}] = {chain}");
        }
    }
    let ids: Vec<Value> = before["nodes"].as_array().expect("nodes").iter().map(|n| n["id"].clone()).collect();
    let replicas = before["strategy"]["replicas"].as_u64().unwrap_or(0) as usize;
    let chains: Vec<Vec<Value>> = match before["strategy"].get("map") {
        Some(map) => map.as_array().expect("map").iter().map(|c| c.as_array().expect("chain").clone()).collect(),
        None => (0..before["strategy"]["vbuckets"].as_u64().expect("vbuckets") as usize)
            .map(|v| (0..=replicas).map(|r| ids[(v + r) % ids.len()].clone()).collect())
            .collect(),
    };
    let (mut promoted, mut lost) = (0, 0);
    for (vbucket, chain) in chains.iter().enumerate() {
        if !is_failed(&chain[0]) {
            continue;
        }
        let first = moves.iter().find(|m| m["vbucket"] == vbucket && m["role"] == "active").expect("a failover move");
        if chain[1..].iter().any(|n| !is_failed(n)) {
            assert_eq!(first["kind"], "promotion", "{label}: vbucket {vbucket}: {first}");
            assert!(chain[1..].contains(&first["to"]), "{label}: {first}");
            promoted += 1;
        } else {
            assert_eq!(first["kind"], "lost", "{label}: vbucket {vbucket}: {first}");
            lost += 1;
        }
        assert_eq!(strategy["map"][vbucket][0], first["to"], "{label}: vbucket {vbucket}");
    }
    assert!(promoted + lost > 0, "{label}: nothing failed over");
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "dictionary",
        "The vbucket dictionary in motion: plan_rebalance (by count, and by load with vbucket_weights), failover (promotion before copy, lost vbuckets, no read or copy from a failed node), complete_moves, route_read/route_write during migration, read-only vbuckets, stale epochs, vbucket_double/halve, checksums, the binary form, diff.",
        "generator; the modulo 5 -> 10 diff is plain arithmetic (user_id % 5 vs % 10)",
    );
    file.topology("dict-4", dictionary_doc(4, 64, 1, 10));
    // Each result that names a topology is added under that name for the cases after it.
    for (label, from, operation, next) in [
        (
            "plan-add-node",
            "dict-4",
            json!({"op": "plan_rebalance", "add": [{"id": "n4", "zone": "z0"}], "max_moves_per_node": 3}),
            Some("dict-during"),
        ),
        ("complete-all", "dict-during", json!({"op": "complete_moves"}), Some("dict-after")),
        ("complete-some", "dict-during", json!({"op": "complete_moves", "vbuckets": [0, 1, 2, 3, 63]}), None),
        ("plan-fail-node", "dict-4", json!({"op": "plan_rebalance", "fail": ["n1"]}), Some("dict-failed")),
        ("complete-failover", "dict-failed", json!({"op": "complete_moves"}), None),
        (
            "plan-remove-and-reweight",
            "dict-4",
            json!({"op": "plan_rebalance", "remove": ["n3"], "weights": {"n0": 2}, "max_moves_per_node": 1}),
            None,
        ),
        ("plan-more-replicas", "dict-4", json!({"op": "plan_rebalance", "replicas": 2}), None),
        ("double", "dict-4", json!({"op": "vbucket_double"}), None),
        ("double-during", "dict-during", json!({"op": "vbucket_double"}), Some("dict-doubled")),
        ("halve-doubled", "dict-doubled", json!({"op": "vbucket_halve"}), None),
    ] {
        let result = applied(&mut file, &format!("apply/{label}"), On::Topology(from), operation);
        if let Some(next) = next {
            file.topology(next, result["topology"].clone());
        }
    }
    weighted_plans(&mut file);
    failover_plans(&mut file);
    let read_only = doc(
        &["a", "b", "c"],
        json!({"type": "vbucket", "vbuckets": 4, "map": [["a", "b"], ["b", "c"], ["c", "a"], ["a", "c"]],
            "forward_map": [["b", "a"], ["b", "c"], ["c", "a"], ["c", "a"]], "states": {"0": "migrating", "2": "read_only", "3": "migrating"}}),
    );
    file.topology("dict-states", read_only.epoch(3));
    file.topology("jump-3", doc(&["a", "b", "c"], json!({"type": "jump"})));
    for (label, from, operation) in [
        ("plan-while-running", "dict-during", json!({"op": "plan_rebalance"})),
        ("complete-nothing-running", "dict-4", json!({"op": "complete_moves"})),
        ("plan-unknown-node", "dict-4", json!({"op": "plan_rebalance", "remove": ["zz"]})),
        ("plan-too-many-replicas", "dict-4", json!({"op": "plan_rebalance", "replicas": 4})),
        ("plan-zero-moves", "dict-4", json!({"op": "plan_rebalance", "max_moves_per_node": 0})),
        ("halve-split-pair", "dict-states", json!({"op": "vbucket_halve"})),
        ("complete-bad-vbucket", "dict-during", json!({"op": "complete_moves", "vbuckets": [64]})),
        ("plan-on-jump", "jump-3", json!({"op": "plan_rebalance"})),
    ] {
        apply_refused(&mut file, &format!("apply/reject-{label}"), On::Topology(from), operation, "invalid_argument");
    }

    // Reads and writes while vbuckets move; read-only vbuckets.
    for id in ["dict-during", "dict-states", "jump-3"] {
        let router = file.router(id);
        for (label, key) in standard_keys().into_iter().take(20) {
            let owned = owned_key(&key);
            let read = router.route_read(owned.as_key()).expect("read");
            file.case(
                &format!("route_read/{id}/{label}"),
                json!({"op": "route_read", "topology": id, "key": key, "expect": {"node": read}}),
            );
            let write = result_or_error(router.route_write(owned.as_key()), |nodes| json!({ "nodes": nodes }));
            file.case(
                &format!("route_write/{id}/{label}"),
                json!({"op": "route_write", "topology": id, "key": key, "expect": write}),
            );
        }
    }

    // Epochs only grow.
    let mut older = dictionary_doc(4, 64, 1, 9);
    older["nodes"][0]["address"] = json!("10.9.9.9:11210");
    file.topology("dict-4-epoch-9", older);
    let mut same_epoch = dictionary_doc(4, 64, 1, 10);
    same_epoch["nodes"][0]["weight"] = json!(2);
    file.topology("dict-4-epoch-10-other", same_epoch);
    file.topology("dict-4-again", dictionary_doc(4, 64, 1, 10));
    for (label, current, next, expected) in [
        ("newer", "dict-4", "dict-during", Some("11")),
        ("same-document", "dict-4", "dict-4-again", Some("10")),
        ("older", "dict-4", "dict-4-epoch-9", None),
        ("same-epoch-other-content", "dict-4", "dict-4-epoch-10-other", None),
        ("back-from-during", "dict-during", "dict-4", None),
    ] {
        let mut case = json!({"op": "replace", "topology": current, "next": next});
        let outcome = file.router(current).replace(file.router(next));
        match expected {
            Some(epoch) => {
                assert_eq!(outcome.expect("replace").epoch().to_string(), epoch, "{label}");
                case["expect"] = json!({ "epoch": epoch });
                file.case(&format!("replace/{label}"), case);
            }
            None => expect_error(&mut file, &format!("replace/{label}"), case, "stale_epoch", outcome.map(drop)),
        }
    }

    // Checksums and node states on load.
    let checksummed = file.document("dict-during").clone();
    let text = checksummed.to_string();
    let epoch = checksummed["epoch"].as_u64().expect("epoch");
    let edited = text.replace(&format!("\"epoch\":{epoch}"), &format!("\"epoch\":{}", epoch + 1));
    refused_text(&mut file, "load/checksum-mismatch", &edited, "invalid_topology");
    let truncated_text = text.replacen("[\"n4\",", "[\"n3\",", 1);
    refused_text(&mut file, "load/checksum-edited-map", &truncated_text, "invalid_topology");
    let one = |strategy: Value| doc(&["a"], strategy);
    refused_documents(
        &mut file,
        "load/reject-",
        [
            ("unknown-node-state", doc(json!([{"id": "a", "state": "sleeping"}]), json!({"type": "jump"}))),
            ("forward-without-map", one(json!({"type": "vbucket", "vbuckets": 1, "forward_map": [["a"]]}))),
            (
                "migrating-without-forward",
                one(json!({"type": "vbucket", "vbuckets": 1, "map": [["a"]], "states": {"0": "migrating"}})),
            ),
            (
                "state-out-of-range",
                one(json!({"type": "vbucket", "vbuckets": 1, "map": [["a"]], "states": {"1": "read_only"}})),
            ),
            ("bad-checksum-text", one(json!({"type": "jump"})).with("checksum", json!("md5:00"))),
        ]
        .map(|(label, document)| (label, document, "invalid_topology")),
    );

    // The binary form.
    let wide_nodes: Vec<Value> = (0..300).map(|i| json!({"id": format!("node-{i:03}"), "weight": 1 + i % 3})).collect();
    let wide = doc(Value::Array(wide_nodes), json!({"type": "vbucket", "vbuckets": 16, "replicas": 2}))
        .epoch("18446744073709551615")
        .hashing(json!({"function": "crc32", "hash_tag": "redis"}))
        .with("placement", json!({"bucket": "b_{shard:02}"}))
        .with("hot_keys", json!({"keys": {"hot": 3}}));
    file.topology("dict-wide", wide);
    for id in ["dict-4", "dict-during", "dict-failed", "dict-states", "dict-wide"] {
        let bytes = dictionary::encode(&file.parsed(id)).expect("encode");
        let hex = hex_digits(&bytes);
        file.case(
            &format!("binary/encode/{id}"),
            json!({"op": "encode_dictionary", "topology": id, "expect": {"hex": hex}}),
        );
        let back = dictionary::decode(&bytes).expect("decode");
        file.case(
            &format!("binary/decode/{id}"),
            json!({"op": "decode_dictionary", "hex": hex, "expect": {"to_json": back.to_json()}}),
        );
        let mut damaged = bytes.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 1;
        expect_error(
            &mut file,
            &format!("binary/reject-damaged/{id}"),
            json!({"op": "decode_dictionary", "hex": hex_digits(&damaged)}),
            "invalid_topology",
            dictionary::decode(&damaged).map(drop),
        );
    }
    let outcome = dictionary::encode(&file.parsed("jump-3")).map(drop);
    expect_error(
        &mut file,
        "binary/reject-jump",
        json!({"op": "encode_dictionary", "topology": "jump-3"}),
        "invalid_argument",
        outcome,
    );
    expect_error(
        &mut file,
        "binary/reject-short",
        json!({"op": "decode_dictionary", "hex": "5352"}),
        "invalid_topology",
        dictionary::decode(&[0x53, 0x52]).map(drop),
    );

    // diff: the rebalance above, and the classic user_id % 5 -> % 10.
    let keys: Vec<Value> = standard_keys().into_iter().map(|(_, key)| key).collect();
    let owned: Vec<_> = keys.iter().map(owned_key).collect();
    let (before, after) = (file.router("dict-4"), file.router("dict-after"));
    let report = shardroute::diff::diff(&before, &after, owned.iter().map(|k| k.as_key()), true).expect("diff");
    file.case("diff/dict-4-to-after", json!({"op": "diff", "old": "dict-4", "new": "dict-after", "keys": keys, "per_key": true, "expect": {"result": report.to_value()}}));
    // Without the per-key list: the same counts and flows, no "keys".
    let mut counts = report.to_value();
    counts.as_object_mut().expect("an object").remove("keys");
    file.case(
        "diff/dict-4-to-after-counts",
        json!({"op": "diff", "old": "dict-4", "new": "dict-after", "keys": keys, "expect": {"result": counts}}),
    );
    let modulo = |n: usize, epoch: u64| {
        let ids: Vec<String> = (0..n).map(|i| format!("server-{i}")).collect();
        doc(&ids[..], json!({"type": "modulo"})).epoch(epoch).hashing(identity())
    };
    file.topology("users-mod-5", modulo(5, 1));
    file.topology("users-mod-10", modulo(10, 2));
    let users: Vec<Value> = (0..20).map(u64_key).collect();
    let moved: Vec<Value> = (0..20u64)
        .map(|id| {
            let (old, new) = (id % 5, id % 10);
            json!({"old_shard": old, "new_shard": new, "old_node": format!("server-{old}"), "new_node": format!("server-{new}"), "moved": old != new})
        })
        .collect();
    let flows: Vec<Value> = (0..5u64)
        .map(|k| json!({"from": format!("server-{k}"), "to": format!("server-{}", k + 5), "keys": 2}))
        .collect();
    file.case(
        "diff/users-mod-5-to-10",
        json!({"op": "diff", "old": "users-mod-5", "new": "users-mod-10", "keys": users, "per_key": true,
        "expect": {"result": {"keys": moved, "total": 20, "moved": 10, "moved_ppm": 500000, "flows": flows}}}),
    );
    expect_error(
        &mut file,
        "diff/reject-bad-key",
        json!({"op": "diff", "old": "users-mod-5", "new": "users-mod-10", "keys": [{"u64": "-1"}]}),
        "invalid_key",
        shardroute::key::parse_u64("-1").map(drop),
    );
    file
}
