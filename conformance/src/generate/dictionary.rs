//! `dictionary.json`: the vbucket dictionary in motion: planning and completing a
//! rebalance, routing reads and writes while vbuckets move, epochs that only grow,
//! doubling and halving the vbucket count, checksums, the binary form, and `diff`.

use serde_json::{json, Value};
use shardroute::{dictionary, ops, Router, Topology};

use super::{expect_error, standard_keys, u64_key, VectorFile};

fn dictionary_doc(nodes: usize, vbuckets: u32, replicas: u32, epoch: u64) -> Value {
    let ids: Vec<Value> = (0..nodes)
        .map(|i| json!({"id": format!("n{i}"), "address": format!("10.0.0.{i}:11210"), "zone": format!("z{}", i % 2)}))
        .collect();
    json!({"format": "shardroute/1", "epoch": epoch, "nodes": ids, "strategy": {"type": "vbucket", "vbuckets": vbuckets, "replicas": replicas}})
}

fn applied(file: &mut VectorFile, label: &str, from: &str, operation: Value) -> Value {
    let source = file.topologies.iter().find(|(id, _)| id == from).map(|(_, doc)| doc.clone()).expect("known topology");
    let topology = Topology::from_value(&source).expect("topology");
    let result = ops::apply(&topology, &operation).unwrap_or_else(|err| panic!("{label}: {err}"));
    file.case(
        &format!("apply/{label}"),
        json!({"op": "apply", "topology": from, "operation": operation, "expect": {"result": result}}),
    );
    result["topology"].clone()
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "dictionary",
        "The vbucket dictionary in motion: plan_rebalance, complete_moves, route_read/route_write during migration, read-only vbuckets, stale epochs, vbucket_double/halve, checksums, the binary form, diff.",
        "generator; the modulo 5 -> 10 diff is plain arithmetic (user_id % 5 vs % 10)",
    );
    file.topology("dict-4", dictionary_doc(4, 64, 1, 10));
    let during = applied(
        &mut file,
        "plan-add-node",
        "dict-4",
        json!({"op": "plan_rebalance", "add": [{"id": "n4", "zone": "z0"}], "max_moves_per_node": 3}),
    );
    file.topology("dict-during", during);
    let after = applied(&mut file, "complete-all", "dict-during", json!({"op": "complete_moves"}));
    file.topology("dict-after", after);
    applied(&mut file, "complete-some", "dict-during", json!({"op": "complete_moves", "vbuckets": [0, 1, 2, 3, 63]}));
    let failed = applied(&mut file, "plan-fail-node", "dict-4", json!({"op": "plan_rebalance", "fail": ["n1"]}));
    file.topology("dict-failed", failed);
    applied(&mut file, "complete-failover", "dict-failed", json!({"op": "complete_moves"}));
    applied(
        &mut file,
        "plan-remove-and-reweight",
        "dict-4",
        json!({"op": "plan_rebalance", "remove": ["n3"], "weights": {"n0": 2}, "max_moves_per_node": 1}),
    );
    applied(&mut file, "plan-more-replicas", "dict-4", json!({"op": "plan_rebalance", "replicas": 2}));
    applied(&mut file, "double", "dict-4", json!({"op": "vbucket_double"}));
    let doubled = applied(&mut file, "double-during", "dict-during", json!({"op": "vbucket_double"}));
    file.topology("dict-doubled", doubled);
    applied(&mut file, "halve-doubled", "dict-doubled", json!({"op": "vbucket_halve"}));
    let read_only = json!({"format": "shardroute/1", "epoch": 3, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
        "strategy": {"type": "vbucket", "vbuckets": 4, "map": [["a", "b"], ["b", "c"], ["c", "a"], ["a", "c"]],
            "forward_map": [["b", "a"], ["b", "c"], ["c", "a"], ["c", "a"]], "states": {"0": "migrating", "2": "read_only", "3": "migrating"}}});
    file.topology("dict-states", read_only);
    for (label, from, operation, code) in [
        ("plan-while-running", "dict-during", json!({"op": "plan_rebalance"}), "invalid_argument"),
        ("complete-nothing-running", "dict-4", json!({"op": "complete_moves"}), "invalid_argument"),
        ("plan-unknown-node", "dict-4", json!({"op": "plan_rebalance", "remove": ["zz"]}), "invalid_argument"),
        ("plan-too-many-replicas", "dict-4", json!({"op": "plan_rebalance", "replicas": 4}), "invalid_argument"),
        ("plan-zero-moves", "dict-4", json!({"op": "plan_rebalance", "max_moves_per_node": 0}), "invalid_argument"),
        ("halve-split-pair", "dict-states", json!({"op": "vbucket_halve"}), "invalid_argument"),
        ("complete-bad-vbucket", "dict-during", json!({"op": "complete_moves", "vbuckets": [64]}), "invalid_argument"),
    ] {
        let source = file.topologies.iter().find(|(id, _)| id == from).map(|(_, doc)| doc.clone()).expect("topology");
        let outcome = ops::apply(&Topology::from_value(&source).expect("topology"), &operation).map(drop);
        expect_error(
            &mut file,
            &format!("apply/reject-{label}"),
            json!({"op": "apply", "topology": from, "operation": operation}),
            code,
            outcome,
        );
    }
    let jump = file.topology("jump-3", super::doc(1, super::nodes(&["a", "b", "c"]), json!({"type": "jump"})));
    expect_error(
        &mut file,
        "apply/reject-plan-on-jump",
        json!({"op": "apply", "topology": "jump-3", "operation": {"op": "plan_rebalance"}}),
        "invalid_argument",
        ops::apply(jump.topology(), &json!({"op": "plan_rebalance"})).map(drop),
    );

    // Reads and writes while vbuckets move; read-only vbuckets.
    for id in ["dict-during", "dict-states", "jump-3"] {
        let router = Router::from_value(&file.topologies.iter().find(|(name, _)| name == id).expect("topology").1)
            .expect("router");
        for (label, key) in standard_keys().into_iter().take(20) {
            let owned = super::owned_key(&key);
            let read = router.route_read(owned.as_key()).expect("read");
            file.case(
                &format!("route_read/{id}/{label}"),
                json!({"op": "route_read", "topology": id, "key": key, "expect": {"node": read}}),
            );
            let write = match router.route_write(owned.as_key()) {
                Ok(nodes) => json!({ "nodes": nodes }),
                Err(err) => json!({ "error": err.code() }),
            };
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
        let case = json!({"op": "replace", "topology": current, "next": next});
        match expected {
            Some(epoch) => {
                let mut case = case;
                case["expect"] = json!({ "epoch": epoch });
                file.case(&format!("replace/{label}"), case);
            }
            None => {
                let router = |id: &str| {
                    Router::from_value(&file.topologies.iter().find(|(name, _)| name == id).expect("t").1).expect("r")
                };
                let outcome = router(current).replace(router(next)).map(drop);
                expect_error(&mut file, &format!("replace/{label}"), case, "stale_epoch", outcome);
            }
        }
    }

    // Checksums and node states on load.
    let checksummed = file.topologies.iter().find(|(name, _)| name == "dict-during").expect("t").1.clone();
    let text = checksummed.to_string();
    let epoch = checksummed["epoch"].as_u64().expect("epoch");
    let edited = text.replace(&format!("\"epoch\":{epoch}"), &format!("\"epoch\":{}", epoch + 1));
    expect_error(
        &mut file,
        "load/checksum-mismatch",
        json!({"op": "load", "topology_json": edited}),
        "invalid_topology",
        Topology::from_json(&edited).map(drop),
    );
    let truncated_text = text.replacen("[\"n4\",", "[\"n3\",", 1);
    expect_error(
        &mut file,
        "load/checksum-edited-map",
        json!({"op": "load", "topology_json": truncated_text}),
        "invalid_topology",
        Topology::from_json(&truncated_text).map(drop),
    );
    for (label, doc, code) in [
        (
            "unknown-node-state",
            json!({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a", "state": "sleeping"}], "strategy": {"type": "jump"}}),
            "invalid_topology",
        ),
        (
            "forward-without-map",
            json!({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "vbucket", "vbuckets": 1, "forward_map": [["a"]]}}),
            "invalid_topology",
        ),
        (
            "migrating-without-forward",
            json!({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "vbucket", "vbuckets": 1, "map": [["a"]], "states": {"0": "migrating"}}}),
            "invalid_topology",
        ),
        (
            "state-out-of-range",
            json!({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "vbucket", "vbuckets": 1, "map": [["a"]], "states": {"1": "read_only"}}}),
            "invalid_topology",
        ),
        (
            "bad-checksum-text",
            json!({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "jump"}, "checksum": "md5:00"}),
            "invalid_topology",
        ),
    ] {
        let raw = doc.to_string();
        expect_error(
            &mut file,
            &format!("load/reject-{label}"),
            json!({"op": "load", "topology_json": raw}),
            code,
            Topology::from_json(&raw).map(drop),
        );
    }

    // The binary form.
    let wide_nodes: Vec<Value> = (0..300).map(|i| json!({"id": format!("node-{i:03}"), "weight": 1 + i % 3})).collect();
    file.topology("dict-wide", json!({"format": "shardroute/1", "epoch": "18446744073709551615", "nodes": wide_nodes,
        "hashing": {"function": "crc32", "hash_tag": "redis"}, "strategy": {"type": "vbucket", "vbuckets": 16, "replicas": 2},
        "placement": {"bucket": "b_{shard:02}"}, "hot_keys": {"keys": {"hot": 3}}}));
    for id in ["dict-4", "dict-during", "dict-failed", "dict-states", "dict-wide"] {
        let doc = file.topologies.iter().find(|(name, _)| name == id).expect("t").1.clone();
        let topology = Topology::from_value(&doc).expect("topology");
        let bytes = dictionary::encode(&topology).expect("encode");
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
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
        let damaged_hex: String = damaged.iter().map(|b| format!("{b:02x}")).collect();
        expect_error(
            &mut file,
            &format!("binary/reject-damaged/{id}"),
            json!({"op": "decode_dictionary", "hex": damaged_hex}),
            "invalid_topology",
            dictionary::decode(&damaged).map(drop),
        );
    }
    expect_error(
        &mut file,
        "binary/reject-jump",
        json!({"op": "encode_dictionary", "topology": "jump-3"}),
        "invalid_argument",
        dictionary::encode(jump.topology()).map(drop),
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
    let router = |file: &VectorFile, id: &str| {
        Router::from_value(&file.topologies.iter().find(|(name, _)| name == id).expect("t").1).expect("r")
    };
    let report = shardroute::diff::diff(
        &router(&file, "dict-4"),
        &router(&file, "dict-after"),
        keys.iter().map(super::owned_key).collect::<Vec<_>>().iter().map(|k| k.as_key()),
    )
    .expect("diff");
    file.case("diff/dict-4-to-after", json!({"op": "diff", "old": "dict-4", "new": "dict-after", "keys": keys, "expect": {"result": report.to_value()}}));
    let modulo = |n: usize, epoch: u64| {
        let ids: Vec<String> = (0..n).map(|i| format!("server-{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let mut doc = super::doc(epoch, super::nodes(&refs), json!({"type": "modulo"}));
        doc["hashing"] = json!({"integers": "identity"});
        doc
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
        json!({"op": "diff", "old": "users-mod-5", "new": "users-mod-10", "keys": users,
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
