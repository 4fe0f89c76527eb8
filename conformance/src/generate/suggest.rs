//! `suggest.json`: operations suggested from measured load (`apply` with `suggest`, a
//! generator). Every report is written here by hand from the measurements: the fanout
//! `ceil(requests / max_requests)`, the middle of a hash range (`start + (end - start) /
//! 2`, from the uniform boundaries `k * 2^64 / n`), the sample a key range splits over,
//! the sums per owner, and for a weighted rebalance the targets and what the plan moves;
//! for the cooling side the sums under `cool_percent`, and for headroom the percents of
//! capacity and the share of a lost node's load. The core must give exactly that, and
//! each suggested operation must then apply to the topology.

use serde_json::{json, Value};

use super::cases::{apply_refused, On};
use super::keys::{u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

/// A suggestion written out: the operation (or null) and its reason.
fn said(operation: Value, reason: &str) -> Value {
    json!({"operation": operation, "reason": reason})
}

fn node(id: &str, bytes: u64, requests: u64, keys: u64, shards: u32) -> Value {
    json!({"node": id, "bytes": bytes, "requests": requests, "keys": keys, "shards": shards})
}

/// An `apply` case whose report is stated by hand; checks the core, and that every
/// suggested operation applies.
fn stated(file: &mut VectorFile, name: &str, on: &str, operation: Value, report: Value) {
    let topology = file.parsed(on);
    let result = shardroute::ops::apply(&topology, &operation).unwrap_or_else(|err| panic!("{name}: {err}"));
    let canonical = shardroute::Topology::from_value(&result["topology"]).expect("the topology comes back");
    assert_eq!(canonical, topology, "{name}: suggest changes nothing");
    for field in ["suggestions", "nodes"] {
        assert_eq!(result[field], report[field], "{name}: {field}");
    }
    for suggestion in report["suggestions"].as_array().expect("suggestions") {
        if !suggestion["operation"].is_null() {
            shardroute::ops::apply(&topology, &suggestion["operation"]).unwrap_or_else(|err| {
                panic!("{name}: the suggested {} does not apply: {err}", suggestion["operation"])
            });
        }
    }
    file.case(name, json!({"op": "apply", "topology": on, "operation": operation, "expect": {"result": result}}));
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "suggest",
        "Operations suggested from measured load (apply with suggest): hot_key_add for a key over max_requests, range_split or range_split_median for a range over a threshold, plan_rebalance with vbucket_weights for a vbucket dictionary whose node passes its target by more than max_imbalance; the cooling side (hot_key_remove for a salted key under cool_percent of max_requests, range_merge of adjacent cooled ranges, id_groups_set_writable closing a hot writable id group and reopening a cooled one, a warning with vbucket_double under min_vbuckets_per_node); headroom warnings past capacity_warn and capacity_alert percent of a node's capacity and the capacity cascade of losing the most loaded node; and the load per node.",
        "every report written by hand from the measurements (fanouts, the middles of uniform hash ranges, samples, sums per owner, the weighted planner's targets and moves, cooled sums, percents of capacity, the even spread of a lost node's load) and checked against the core; each suggested operation applies",
    );
    file.topology("hash-4", doc(&["a", "b", "c", "d"], json!({"type": "hash_range"})));
    file.topology(
        "keys-3",
        doc(&["a", "b", "c"], json!({"type": "key_range", "boundaries": [utf8("g"), utf8("p")]}))
            .with("hot_keys", json!({"keys": {"already": 8}})),
    );
    file.topology("jump-3", doc(&["a", "b", "c"], json!({"type": "jump"})));

    // Hash ranges of 2^62 each: shard 1 is [2^62, 2^63), shard 2 [2^63, 3 * 2^62).
    let operation = json!({"op": "suggest", "max_bytes": 1000, "max_requests": 1500,
        "shards": [
            {"shard": 0, "bytes": 900, "requests": 100, "keys": 10},
            {"shard": 1, "bytes": 5000, "requests": 100, "keys": 50},
            {"shard": 2, "bytes": 10, "requests": 2000, "keys": 5},
            {"shard": 3}
        ],
        "keys": [{"key": utf8("celebrity"), "requests": 9000}, {"key": u64_key(42), "requests": 9000},
                 {"key": utf8("calm"), "requests": 1500}, {"key": utf8("just-over"), "requests": 1501}]});
    let report = json!({
        "suggestions": [
            said(json!({"op": "hot_key_add", "key": utf8("celebrity"), "fanout": 6}),
                "key {\"utf8\":\"celebrity\"}: 9000 requests/s over 1500: salted over 6 keys, each gets at most 1500"),
            said(Value::Null, "key {\"u64\":\"42\"}: 9000 requests/s over 1500, but only text keys can be salted"),
            said(json!({"op": "hot_key_add", "key": utf8("just-over"), "fanout": 2}),
                "key {\"utf8\":\"just-over\"}: 1501 requests/s over 1500: salted over 2 keys, each gets at most 1500"),
            said(json!({"op": "range_split", "shard": 1, "at": "6917529027641081856"}),
                "shard 1: 5000 bytes over 1000: split at the middle of its hashes"),
            said(json!({"op": "range_split", "shard": 2, "at": "11529215046068469760"}),
                "shard 2: 2000 requests/s over 1500: split at the middle of its hashes"),
        ],
        "nodes": [node("a", 900, 100, 10, 1), node("b", 5000, 100, 50, 1), node("c", 10, 2000, 5, 1), node("d", 0, 0, 0, 1)],
    });
    stated(&mut file, "apply/hash-ranges-and-hot-keys", "hash-4", operation, report);

    // Key ranges split at a sample's median, or say they cannot; a key already salted
    // far enough is left alone.
    let sample = json!([utf8("ant"), utf8("bee"), utf8("cat"), utf8("dog")]);
    let operation = json!({"op": "suggest", "max_bytes": 100,
        "shards": [{"shard": 0, "bytes": 101, "sample": sample}, {"shard": 2, "bytes": 500, "keys": 3}, {"shard": 1, "bytes": 100}],
        "keys": [{"key": utf8("already"), "requests": 1000000}]});
    let report = json!({
        "suggestions": [
            said(json!({"op": "range_split_median", "shard": 0, "sample": sample}),
                "shard 0: 101 bytes over 100: split at the median of its 4 sample keys"),
            said(Value::Null, "shard 2: 500 bytes over 100, but a key range splits at a key: measure a sample of its keys"),
        ],
        "nodes": [node("a", 101, 0, 0, 1), node("b", 100, 0, 0, 1), node("c", 500, 0, 3, 1)],
    });
    stated(&mut file, "apply/key-ranges", "keys-3", operation, report);
    let operation = json!({"op": "suggest", "max_requests": 10, "shards": [{"shard": 2, "requests": 11}]});
    let report = json!({
        "suggestions": [said(Value::Null, "shard 2: 11 requests/s over 10; the jump strategy has no split: weigh a rebalance")],
        "nodes": [node("a", 0, 0, 0, 0), node("b", 0, 0, 0, 0), node("c", 0, 11, 0, 1)],
    });
    stated(&mut file, "apply/no-split-in-jump", "jump-3", operation, report);
    stated(
        &mut file,
        "apply/nothing-over",
        "jump-3",
        json!({"op": "suggest", "max_bytes": 10, "shards": [{"shard": 0, "bytes": 10}]}),
        json!({"suggestions": [], "nodes": [node("a", 10, 0, 0, 1), node("b", 0, 0, 0, 0), node("c", 0, 0, 0, 0)]}),
    );
    // `already` is salted over 8: 80 requests/s at 10 each needs 8, 81 needs 9.
    stated(
        &mut file,
        "apply/hot-key-salted-far-enough-or-not",
        "keys-3",
        json!({"op": "suggest", "max_requests": 10, "keys": [{"key": utf8("already"), "requests": 80}, {"key": utf8("already"), "requests": 81}]}),
        json!({
            "suggestions": [said(json!({"op": "hot_key_add", "key": utf8("already"), "fanout": 9}),
                "key {\"utf8\":\"already\"}: 81 requests/s over 10: salted over 9 keys, each gets at most 10")],
            "nodes": [node("a", 0, 0, 0, 0), node("b", 0, 0, 0, 0), node("c", 0, 0, 0, 0)],
        }),
    );
    vbucket_rebalances(&mut file);
    cooling(&mut file);
    headroom(&mut file);
    for (what, operation, code) in [
        ("shard-out-of-range", json!({"op": "suggest", "shards": [{"shard": 3}]}), "invalid_argument"),
        ("shard-twice", json!({"op": "suggest", "shards": [{"shard": 1}, {"shard": 1}]}), "invalid_argument"),
        ("threshold-0", json!({"op": "suggest", "max_bytes": 0}), "invalid_argument"),
        ("unknown-field", json!({"op": "suggest", "min_bytes": 1}), "invalid_argument"),
        ("shard-unknown-field", json!({"op": "suggest", "shards": [{"shard": 0, "load": 1}]}), "invalid_argument"),
        ("negative-bytes", json!({"op": "suggest", "shards": [{"shard": 0, "bytes": -1}]}), "invalid_argument"),
        ("key-not-a-key", json!({"op": "suggest", "keys": [{"key": "x", "requests": 1}]}), "invalid_argument"),
        ("weight-by-unknown", json!({"op": "suggest", "max_imbalance": 10, "weight_by": "cpu"}), "invalid_argument"),
        ("imbalance-negative", json!({"op": "suggest", "max_imbalance": -1}), "invalid_argument"),
        ("imbalance-past-limit", json!({"op": "suggest", "max_imbalance": 10001}), "invalid_argument"),
        ("cool-percent-past-100", json!({"op": "suggest", "cool_percent": 101}), "invalid_argument"),
        ("min-vbuckets-negative", json!({"op": "suggest", "min_vbuckets_per_node": -1}), "invalid_argument"),
        ("capacity-0", json!({"op": "suggest", "capacity": {"requests": 0}}), "invalid_argument"),
        ("capacity-unknown-measure", json!({"op": "suggest", "capacity": {"cpu": 1}}), "invalid_argument"),
        ("capacity-not-an-object", json!({"op": "suggest", "capacity": 1000}), "invalid_argument"),
        (
            "node-capacity-unknown-node",
            json!({"op": "suggest", "node_capacity": [{"node": "z", "bytes": 1}]}),
            "invalid_argument",
        ),
        (
            "node-capacity-twice",
            json!({"op": "suggest", "node_capacity": [{"node": "a", "bytes": 1}, {"node": "a", "keys": 1}]}),
            "invalid_argument",
        ),
        (
            "node-capacity-not-an-id",
            json!({"op": "suggest", "node_capacity": [{"node": 1, "bytes": 1}]}),
            "invalid_argument",
        ),
        (
            "capacity-alert-under-warn",
            json!({"op": "suggest", "capacity_warn": 80, "capacity_alert": 70}),
            "invalid_argument",
        ),
        ("capacity-warn-0", json!({"op": "suggest", "capacity_warn": 0}), "invalid_argument"),
        ("capacity-alert-past-100", json!({"op": "suggest", "capacity_alert": 101}), "invalid_argument"),
    ] {
        apply_refused(&mut file, &format!("apply/reject-{what}"), On::Topology("jump-3"), operation, code);
    }
    file
}

/// Vbucket dictionaries whose load leans on one node: `max_imbalance` proposes a
/// `plan_rebalance` weighted by the measured load. Targets, loads and what the plan moves
/// are worked out by hand in the comments.
fn vbucket_rebalances(file: &mut VectorFile) {
    // Vbucket v: active on node v % 3, replica on (v + 1) % 3.
    file.topology("vb-3", doc(&["a", "b", "c"], json!({"type": "vbucket", "vbuckets": 12, "replicas": 1})));
    file.topology(
        "vb-3-moving",
        doc(
            &["a", "b", "c"],
            json!({"type": "vbucket", "vbuckets": 3, "map": [["a", "b"], ["b", "c"], ["c", "a"]],
                "forward_map": [["b", "a"], ["b", "c"], ["c", "a"]], "states": {"0": "migrating"}}),
        ),
    );
    let requests = |hot: u64, cool: u64| -> Vec<Value> {
        (0..12u32)
            .map(|v| json!({"shard": v, "requests": if v % 3 == 0 { hot } else { cool }, "bytes": 1000}))
            .collect()
    };
    let weights =
        |hot: u64, cool: u64| -> Vec<u64> { (0..12u64).map(|v| if v % 3 == 0 { hot } else { cool }).collect() };
    // a: 4 x 300 = 1200 requests/s, b and c 200. 1,600 in units of 50 is 32, 10.67 a node:
    // targets 550, 550, 500 (the two remainders to the first nodes). a is over by more
    // than 20% (1200 > 660). The plan: a keeps vbucket 0 (300; 600 would pass 550);
    // vbucket 3 is promoted to its replica on b (room 350); vbucket 6 is copied to c (room
    // 300, the most); vbucket 9 then finds the most room on a itself (250) and stays.
    stated(
        file,
        "apply/vbucket-rebalance-weighted-by-requests",
        "vb-3",
        json!({"op": "suggest", "max_imbalance": 20, "shards": requests(300, 50)}),
        json!({
            "suggestions": [said(json!({"op": "plan_rebalance", "vbucket_weights": weights(300, 50)}),
                "node a: 1200 requests/s against a target of 550 (max_imbalance 20%): a rebalance weighted by requests moves 2 actives and leaves a at 600")],
            "nodes": [node("a", 4000, 1200, 0, 4), node("b", 4000, 200, 0, 4), node("c", 4000, 200, 0, 4)],
        }),
    );
    // Weighed by bytes, the same measurements are even: 4,000 a node, targets 4,000.
    stated(
        file,
        "apply/vbucket-even-by-bytes",
        "vb-3",
        json!({"op": "suggest", "max_imbalance": 20, "weight_by": "bytes", "shards": requests(300, 50)}),
        json!({
            "suggestions": [],
            "nodes": [node("a", 4000, 1200, 0, 4), node("b", 4000, 200, 0, 4), node("c", 4000, 200, 0, 4)],
        }),
    );
    // One vbucket of 5,000 requests/s: a carries 5,030, b and c 40. 5,110 in units of 10
    // is 511, 170.33 a node: targets 1710, 1700, 1700. a keeps its three light vbuckets;
    // vbucket 0 cannot be promoted (b's room is 1,660) and the most room is a's own
    // (1,680): nothing moves, so there is nothing to apply.
    stated(
        file,
        "apply/vbucket-too-heavy-to-move",
        "vb-3",
        json!({"op": "suggest", "max_imbalance": 20, "shards": requests(10, 10).into_iter().enumerate()
            .map(|(v, mut load)| { if v == 0 { load["requests"] = json!(5000) } load }).collect::<Vec<Value>>()}),
        json!({
            "suggestions": [said(Value::Null,
                "node a: 5030 requests/s against a target of 1710 (max_imbalance 20%), but a rebalance weighted by requests moves no active: a vbucket outweighs the room left on every node (vbucket_double splits each vbucket's keys in two, hot_key_add spreads a hot key)")],
            "nodes": [node("a", 4000, 5030, 0, 4), node("b", 4000, 40, 0, 4), node("c", 4000, 40, 0, 4)],
        }),
    );
    // A rebalance is running: a carries 1,000 of 1,020 keys against a target of 340.
    stated(
        file,
        "apply/vbucket-rebalance-running",
        "vb-3-moving",
        json!({"op": "suggest", "max_imbalance": 0, "weight_by": "keys",
            "shards": [{"shard": 0, "keys": 1000}, {"shard": 1, "keys": 10}, {"shard": 2, "keys": 10}]}),
        json!({
            "suggestions": [said(Value::Null,
                "node a: 1000 keys against a target of 340 (max_imbalance 0%), but plan_rebalance refuses: plan_rebalance: a rebalance is already running; complete its moves first"),
                // 3 vbuckets over 3 nodes: under the default 4 a node.
                said(json!({"op": "vbucket_double"}),
                "3 vbuckets over 3 nodes, fewer than min_vbuckets_per_node 4 a node: a vbucket is a coarse share of a node's load, and the dictionary cannot grow past 3 nodes: vbucket_double makes 6 without moving a key")],
            "nodes": [node("a", 0, 0, 1000, 1), node("b", 0, 0, 10, 1), node("c", 0, 0, 10, 1)],
        }),
    );
    // Other strategies: max_imbalance says nothing.
    stated(
        file,
        "apply/max-imbalance-off-vbuckets",
        "jump-3",
        json!({"op": "suggest", "max_imbalance": 0, "shards": [{"shard": 0, "requests": 100}]}),
        json!({"suggestions": [], "nodes": [node("a", 0, 100, 0, 1), node("b", 0, 0, 0, 0), node("c", 0, 0, 0, 0)]}),
    );
}

/// The cooling side: a salted key that cooled, adjacent ranges to merge, a hot writable
/// id group to close, and a dictionary with too few vbuckets a node. "Cooled" is under
/// `cool_percent` (default 50) of each threshold given: `value * 100 < max * percent`.
fn cooling(file: &mut VectorFile) {
    // `already` is salted over 8. At max_requests 10, 5 requests/s is not under 50% (500
    // is not < 500), 4 is; `calm` is not salted, so it has nothing to undo.
    stated(
        file,
        "apply/hot-key-cooled",
        "keys-3",
        json!({"op": "suggest", "max_requests": 10, "keys": [
            {"key": utf8("already"), "requests": 5}, {"key": utf8("already"), "requests": 4}, {"key": utf8("calm"), "requests": 0}]}),
        json!({
            "suggestions": [said(json!({"op": "hot_key_remove", "key": utf8("already")}),
                "key {\"utf8\":\"already\"}: 4 requests/s, under 50% of max_requests 10: it has cooled, so stop salting it over 8 keys")],
            "nodes": [node("a", 0, 0, 0, 0), node("b", 0, 0, 0, 0), node("c", 0, 0, 0, 0)],
        }),
    );
    // hash-4: shard i on node i. Shards 0 and 1 sum 400 bytes (< 500) and 40 requests/s
    // (< 50): merged on b, which holds the larger part; 2 and 3 sum 60 requests/s, not
    // under 50. With cool_percent 70 (under 700 and 70), 2 and 3 merge too, on c (a tie
    // of bytes keeps the first's owner).
    let shards = json!([
        {"shard": 0, "bytes": 100, "requests": 10}, {"shard": 1, "bytes": 300, "requests": 30},
        {"shard": 2, "bytes": 200, "requests": 20}, {"shard": 3, "bytes": 200, "requests": 40}]);
    let nodes =
        json!([node("a", 100, 10, 0, 1), node("b", 300, 30, 0, 1), node("c", 200, 20, 0, 1), node("d", 200, 40, 0, 1)]);
    let first = said(json!({"op": "range_merge", "shard": 0, "node": "b"}),
        "shards 0 and 1: 400 bytes and 40 requests/s together, under 50% of max_bytes 1000 and max_requests 100: merge them on node b: 100 bytes move from node a");
    stated(
        file,
        "apply/hash-ranges-merged",
        "hash-4",
        json!({"op": "suggest", "max_bytes": 1000, "max_requests": 100, "shards": shards}),
        json!({"suggestions": [first], "nodes": nodes}),
    );
    stated(
        file,
        "apply/hash-ranges-merged-cool-percent-70",
        "hash-4",
        json!({"op": "suggest", "max_bytes": 1000, "max_requests": 100, "cool_percent": 70, "shards": shards}),
        json!({"suggestions": [
            said(json!({"op": "range_merge", "shard": 0, "node": "b"}),
                "shards 0 and 1: 400 bytes and 40 requests/s together, under 70% of max_bytes 1000 and max_requests 100: merge them on node b: 100 bytes move from node a"),
            said(json!({"op": "range_merge", "shard": 2}),
                "shards 2 and 3: 400 bytes and 60 requests/s together, under 70% of max_bytes 1000 and max_requests 100: merge them on node c: 200 bytes move from node d"),
        ], "nodes": nodes}),
    );
    stated(
        file,
        "apply/cool-percent-0-merges-nothing",
        "hash-4",
        json!({"op": "suggest", "max_bytes": 1000, "max_requests": 100, "cool_percent": 0, "shards": shards}),
        json!({"suggestions": [], "nodes": nodes}),
    );
    // keys-3 ranges on a, b, c; only max_bytes counts. Shard 0 is not measured, so it
    // never pairs; shards 1 and 2 sum 40 bytes (< 50) and c holds more of them.
    stated(
        file,
        "apply/key-ranges-merged",
        "keys-3",
        json!({"op": "suggest", "max_bytes": 100, "shards": [{"shard": 2, "bytes": 30, "requests": 9000}, {"shard": 1, "bytes": 10}]}),
        json!({
            "suggestions": [said(json!({"op": "range_merge", "shard": 1, "node": "c"}),
                "shards 1 and 2: 40 bytes together, under 50% of max_bytes 100: merge them on node c: 10 bytes move from node b")],
            "nodes": [node("a", 0, 0, 0, 0), node("b", 10, 0, 0, 1), node("c", 30, 9000, 0, 1)],
        }),
    );
    // Id groups: g1 (shards 0 and 1 on a and b), g2 (shard 2 on c), g3 writable (shard 3
    // on d). g3's shard passes max_requests: close it. g1 (300 requests/s) and g2 (50)
    // have cooled (each shard under 500): g2, the cooler, is reopened.
    file.topology(
        "ids-3",
        doc(
            &["a", "b", "c", "d"],
            json!({"type": "id_groups", "groups": [
            {"id": "g1", "intervals": [[0, 1_000_000]], "shards": [{"node": "a"}, {"node": "b"}]},
            {"id": "g2", "intervals": [[1_000_000, 2_000_000]], "shards": [{"node": "c"}]},
            {"id": "g3", "intervals": [[2_000_000, 3_000_000]], "writable": true, "shards": [{"node": "d"}]}]}),
        ),
    );
    stated(
        file,
        "apply/id-group-closed-and-cooled-one-reopened",
        "ids-3",
        json!({"op": "suggest", "max_requests": 1000, "shards": [
            {"shard": 0, "requests": 100}, {"shard": 1, "requests": 200}, {"shard": 2, "requests": 50}, {"shard": 3, "requests": 1500}]}),
        json!({
            "suggestions": [said(json!({"op": "id_groups_set_writable", "group": "g2"}),
                "id group \"g3\" (writable): shard 3: 1500 requests/s over 1000: close it to new ids, and reopen \"g2\", whose shards have cooled (under 50% of max_requests 1000)")],
            "nodes": [node("a", 0, 100, 0, 1), node("b", 0, 200, 0, 1), node("c", 0, 50, 0, 1), node("d", 0, 1500, 0, 1)],
        }),
    );
    // g2 is not measured and g1's shard 1 is at 600 (not under 500): none has cooled. A
    // closed group's hot shard (1 is not over 1000 here) would get the strategy's reason.
    stated(
        file,
        "apply/id-group-hot-none-cooled",
        "ids-3",
        json!({"op": "suggest", "max_requests": 1000, "shards": [
            {"shard": 0, "requests": 100}, {"shard": 1, "requests": 600}, {"shard": 3, "requests": 1001}]}),
        json!({
            "suggestions": [said(Value::Null,
                "id group \"g3\" (writable): shard 3: 1001 requests/s over 1000: close it to new ids, but no closed group has cooled (every shard measured and under 50% of max_requests 1000): add one with id_groups_add_group")],
            "nodes": [node("a", 0, 100, 0, 1), node("b", 0, 600, 0, 1), node("c", 0, 0, 0, 0), node("d", 0, 1001, 0, 1)],
        }),
    );
    // vb-3: 12 vbuckets over 3 nodes is 4 a node, the default minimum; asked for 5, it warns.
    stated(
        file,
        "apply/vbuckets-per-node-warning",
        "vb-3",
        json!({"op": "suggest", "min_vbuckets_per_node": 5}),
        json!({
            "suggestions": [said(json!({"op": "vbucket_double"}),
                "12 vbuckets over 3 nodes, fewer than min_vbuckets_per_node 5 a node: a vbucket is a coarse share of a node's load, and the dictionary cannot grow past 12 nodes: vbucket_double makes 24 without moving a key")],
            "nodes": [node("a", 0, 0, 0, 0), node("b", 0, 0, 0, 0), node("c", 0, 0, 0, 0)],
        }),
    );
    stated(
        file,
        "apply/vbuckets-per-node-warning-off",
        "vb-3-moving",
        json!({"op": "suggest", "min_vbuckets_per_node": 0}),
        json!({"suggestions": [], "nodes": [node("a", 0, 0, 0, 0), node("b", 0, 0, 0, 0), node("c", 0, 0, 0, 0)]}),
    );
}

/// Headroom and the capacity cascade: each node's load by owner against `capacity` (and
/// `node_capacity`), warned past `capacity_warn` (70) and `capacity_alert` (80) percent
/// (`load * 100 > capacity * percent`); losing the most loaded node spreads its load over
/// the other active nodes, each getting at least `ceil(load / count)`.
fn headroom(file: &mut VectorFile) {
    // jump-3: shard i on node i. Requests: a 65% (nothing), b 75% (past 70), c 85% (past
    // 80); c's own bytes capacity 100 holds 120. Losing c (850 requests/s) gives a and b
    // at least 425 each: 1075 and 1175, past 1000. Bytes: only c has a capacity, and it is
    // the one lost.
    stated(
        file,
        "apply/headroom-and-cascade",
        "jump-3",
        json!({"op": "suggest", "capacity": {"requests": 1000}, "node_capacity": [{"node": "c", "bytes": 100}],
            "shards": [{"shard": 0, "requests": 650}, {"shard": 1, "requests": 750}, {"shard": 2, "requests": 850, "bytes": 120}]}),
        json!({
            "suggestions": [
                said(Value::Null, "node b: 750 requests/s is 75% of its capacity of 1000, past 70%: its headroom is being spent; plan the next node"),
                said(Value::Null, "node c: 120 bytes is 120% of its capacity of 100, over its capacity: move load off it or add nodes now"),
                said(Value::Null, "node c: 850 requests/s is 85% of its capacity of 1000, past 80%: less than the 20% headroom a node needs for peaks and a neighbour's failure is left; add nodes or move load off it"),
                said(Value::Null, "losing node c (the most loaded, 850 requests/s) spreads at least 425 requests/s onto each of the 2 other active nodes, pushing node a to 1075 of its capacity of 1000, node b to 1175 of its capacity of 1000: failure detection and an automatic rebalance would move load onto nodes already full, and they could fail in turn (a capacity cascade); add capacity first"),
            ],
            "nodes": [node("a", 0, 650, 0, 1), node("b", 0, 750, 0, 1), node("c", 120, 850, 0, 1)],
        }),
    );
    // Two nodes at 60% and 50%: no headroom warning, but losing a puts 600 on b.
    file.topology("jump-2", doc(&["a", "b"], json!({"type": "jump"})));
    let shards = json!([{"shard": 0, "keys": 600}, {"shard": 1, "keys": 500}]);
    let cascade = said(Value::Null, "losing node a (the most loaded, 600 keys) spreads at least 600 keys onto each of the 1 other active nodes, pushing node b to 1100 of its capacity of 1000: failure detection and an automatic rebalance would move load onto nodes already full, and they could fail in turn (a capacity cascade); add capacity first");
    stated(
        file,
        "apply/capacity-cascade-without-headroom-warning",
        "jump-2",
        json!({"op": "suggest", "capacity": {"keys": 1000}, "shards": shards}),
        json!({"suggestions": [cascade], "nodes": [node("a", 0, 0, 600, 1), node("b", 0, 0, 500, 1)]}),
    );
    // The marks overridden: past 50% warns (a at 60%, not past 60), b at 50% is not past 50.
    stated(
        file,
        "apply/headroom-marks-overridden",
        "jump-2",
        json!({"op": "suggest", "capacity": {"keys": 1000}, "capacity_warn": 50, "capacity_alert": 60, "shards": shards}),
        json!({
            "suggestions": [said(Value::Null, "node a: 600 keys is 60% of its capacity of 1000, past 50%: its headroom is being spent; plan the next node"), cascade],
            "nodes": [node("a", 0, 0, 600, 1), node("b", 0, 0, 500, 1)],
        }),
    );
    // Room enough: even split of a tie (a is lost first) leaves b and c under capacity.
    stated(
        file,
        "apply/headroom-room-enough",
        "jump-3",
        json!({"op": "suggest", "capacity": {"requests": 1000, "bytes": 1000}, "shards": [
            {"shard": 0, "requests": 300}, {"shard": 1, "requests": 300}, {"shard": 2, "requests": 300}]}),
        json!({"suggestions": [], "nodes": [node("a", 0, 300, 0, 1), node("b", 0, 300, 0, 1), node("c", 0, 300, 0, 1)]}),
    );
}
