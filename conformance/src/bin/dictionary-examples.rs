//! Writes the example dictionaries of `docs/examples/` from the core's own operations,
//! so they are real outputs, not hand-written approximations.
//!
//! ```text
//! cargo run -p shardroute-conformance --bin dictionary-examples
//! ```

use serde_json::{json, Value};
use shardroute::{ops, Topology};
use shardroute_conformance::documents::{doc, Document};

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("json");
    text.push('\n');
    text
}

fn main() {
    let dir = shardroute_conformance::root().join("../docs/examples");
    std::fs::create_dir_all(&dir).expect("docs/examples");
    let nodes = json!([
        {"id": "cb-1", "address": "10.0.1.1:11210", "zone": "eu-west-1a"},
        {"id": "cb-2", "address": "10.0.1.2:11210", "zone": "eu-west-1b"},
        {"id": "cb-3", "address": "10.0.1.3:11210", "zone": "eu-west-1a"},
        {"id": "cb-4", "address": "10.0.1.4:11210", "zone": "eu-west-1b"}
    ]);
    let start = doc(nodes, json!({"type": "vbucket", "vbuckets": 16, "replicas": 1}))
        .epoch(41)
        .hashing(json!({"function": "crc32", "hash_tag": "redis"}))
        .with("placement", json!({"bucket": "travel-sample"}))
        .with("hot_keys", json!({"keys": {"airline:10": 4}}));
    let start = Topology::from_value(&start).expect("start");
    std::fs::write(dir.join("dictionary-derived.json"), pretty(&start.to_value())).expect("write");
    let planned = ops::apply(&start, &json!({"op": "plan_rebalance"})).expect("plan");
    let balanced = Topology::from_value(&planned["topology"]).expect("t");
    let done = ops::apply(&balanced, &json!({"op": "complete_moves"}))
        .map(|r| Topology::from_value(&r["topology"]).expect("t"))
        .unwrap_or(balanced);
    std::fs::write(dir.join("dictionary-explicit.json"), pretty(&done.to_value())).expect("write");
    let rebalance = ops::apply(
        &done,
        &json!({"op": "plan_rebalance", "add": [{"id": "cb-5", "address": "10.0.1.5:11210", "zone": "eu-west-1a"}], "fail": ["cb-2"]}),
    )
    .expect("rebalance");
    std::fs::write(dir.join("dictionary-rebalancing.json"), pretty(&rebalance["topology"])).expect("write");
    let mut report = rebalance.clone();
    report.as_object_mut().expect("object").remove("topology");
    std::fs::write(dir.join("dictionary-rebalancing.plan.json"), pretty(&report)).expect("write");
    let overridden =
        ops::apply(&done, &json!({"op": "vbucket_override", "key": {"utf8": "user:moved-to-eu"}, "vbucket": 3}))
            .expect("override");
    std::fs::write(dir.join("dictionary-overrides.json"), pretty(&overridden["topology"])).expect("write");
    println!("wrote docs/examples/dictionary-*.json");
}
