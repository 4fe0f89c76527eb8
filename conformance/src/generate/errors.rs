//! `errors.json`: rejected documents, keys and arguments, with the error code each must
//! give in every language.

use serde_json::{json, Value};

use super::cases::{expect_error, refused_key, Refusals};
use super::keys::utf8;
use super::vector_file::VectorFile;
use crate::documents::{doc, nodes};

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "errors",
        "Rejected documents, keys and arguments, with the error code each must give in every language.",
        "generator (expected codes stated by hand and checked against the core)",
    );
    let base = doc(&["a", "b", "c"], json!({"type": "ring"}));
    let mut bad = Refusals::of(base.clone());
    bad.text("not-json", "{\"format\": ".into(), "invalid_topology");
    bad.text("nan-literal", base.to_string().replace("\"epoch\":1", "\"epoch\":NaN"), "invalid_topology");
    bad.text("array", "[]".into(), "invalid_topology");
    bad.text("empty-object", "{}".into(), "invalid_topology");
    bad.text("trailing-garbage", format!("{base} x"), "invalid_topology");
    // Past limits::MAX_JSON_NESTING (64): a limit, refused before serde_json recurses.
    bad.text("deep-nesting", format!("{}{}", "[".repeat(200), "]".repeat(200)), "limit_exceeded");
    let remove = |field: &'static str| move |d: &mut Value| drop(d.as_object_mut().map(|o| o.remove(field)));
    bad.edit("format-missing", "invalid_topology", remove("format"));
    bad.edit("format-unknown", "invalid_topology", |d| d["format"] = json!("shardroute/2"));
    bad.edit("epoch-missing", "invalid_topology", remove("epoch"));
    bad.edit("epoch-negative", "invalid_topology", |d| d["epoch"] = json!(-1));
    bad.edit("epoch-float", "invalid_topology", |d| d["epoch"] = json!(1.5));
    bad.edit("epoch-2p64", "invalid_topology", |d| d["epoch"] = json!("18446744073709551616"));
    bad.edit("epoch-bool", "invalid_topology", |d| d["epoch"] = json!(true));
    bad.edit("unknown-top-field", "invalid_topology", |d| d["shards"] = json!(3));
    bad.edit("unknown-node-field", "invalid_topology", |d| d["nodes"][1]["wieght"] = json!(2));
    bad.edit("unknown-strategy-field", "invalid_topology", |d| d["strategy"]["points"] = json!(2));
    bad.edit("nodes-not-array", "invalid_topology", |d| d["nodes"] = json!({"a": {}}));
    bad.edit("nodes-empty", "no_nodes", |d| d["nodes"] = json!([]));
    bad.edit("node-id-missing", "invalid_topology", |d| d["nodes"][0] = json!({"weight": 1}));
    bad.edit("node-id-empty", "invalid_topology", |d| d["nodes"][0]["id"] = json!(""));
    bad.edit("node-id-number", "invalid_topology", |d| d["nodes"][0]["id"] = json!(7));
    bad.edit("node-id-duplicate", "invalid_topology", |d| d["nodes"][2]["id"] = json!("a"));
    bad.edit("node-id-too-long", "limit_exceeded", |d| d["nodes"][0]["id"] = json!("n".repeat(1025)));
    bad.edit("weight-zero", "invalid_topology", |d| d["nodes"][0]["weight"] = json!(0));
    bad.edit("weight-negative", "invalid_topology", |d| d["nodes"][0]["weight"] = json!(-1));
    bad.edit("weight-string", "invalid_topology", |d| d["nodes"][0]["weight"] = json!("1"));
    bad.edit("weight-huge", "invalid_topology", |d| d["nodes"][0]["weight"] = json!(1e7));
    bad.edit("address-number", "invalid_topology", |d| d["nodes"][0]["address"] = json!(6379));
    bad.edit("strategy-missing", "invalid_topology", remove("strategy"));
    // A salted key is text (key + separator + salt): no integer key type routes it.
    bad.edit("hot-keys-with-u64-keys", "invalid_topology", |d| {
        d["hashing"] = json!({"keys": "u64"});
        d["hot_keys"] = json!({"keys": {"7": 3}, "separator": "#"});
    });
    bad.strategy("strategy-unknown", "invalid_topology", json!({"type": "random"}));
    bad.strategy("strategy-no-type", "invalid_topology", json!({"points_per_node": 3}));
    bad.edit("ring-points-zero", "invalid_topology", |d| d["strategy"]["points_per_node"] = json!(0));
    bad.edit("ring-points-over-limit", "limit_exceeded", |d| d["strategy"]["points_per_node"] = json!(100_000));
    bad.edit("ring-total-points-over-limit", "limit_exceeded", |d| {
        d["strategy"]["points_per_node"] = json!(65_536);
        d["nodes"] = nodes(300);
    });
    bad.edit("jump-weighted", "invalid_topology", |d| {
        d["strategy"] = json!({"type": "jump"});
        d["nodes"][1]["weight"] = json!(2);
    });
    for (label, code, strategy) in [
        ("modulo-one-based-string", "invalid_topology", json!({"type": "modulo", "one_based": "yes"})),
        ("vbucket-zero", "invalid_topology", json!({"type": "vbucket", "vbuckets": 0})),
        ("vbucket-over-limit", "limit_exceeded", json!({"type": "vbucket", "vbuckets": 2_097_152})),
        ("vbucket-map-short", "invalid_topology", json!({"type": "vbucket", "vbuckets": 3, "map": [["a"], ["b"]]})),
        (
            "vbucket-map-missing-node",
            "invalid_topology",
            json!({"type": "vbucket", "vbuckets": 2, "map": [["a"], ["z"]]}),
        ),
        ("vbucket-map-empty-chain", "invalid_topology", json!({"type": "vbucket", "vbuckets": 2, "map": [["a"], []]})),
        (
            "vbucket-map-repeated-node",
            "invalid_topology",
            json!({"type": "vbucket", "vbuckets": 2, "map": [["a", "a"], ["b"]]}),
        ),
        (
            "vbucket-map-and-replicas",
            "invalid_topology",
            json!({"type": "vbucket", "vbuckets": 1, "map": [["a"]], "replicas": 1}),
        ),
        ("vbucket-replicas-too-many", "invalid_topology", json!({"type": "vbucket", "replicas": 3})),
    ] {
        bad.strategy(label, code, strategy);
    }
    bad.edit("hashing-unknown-function", "invalid_topology", |d| d["hashing"] = json!({"function": "fnv"}));
    bad.write(&mut file, "load/");
    let router = file.topology("ring-3", base);
    let key_errors = [
        ("lone-high", json!({"utf16": [0x61, 0xD800]})),
        ("lone-low", json!({"utf16": [0xDC00, 0x61]})),
        ("u64-2p64", json!({"u64": "18446744073709551616"})),
        ("u64-negative", json!({"u64": "-1"})),
    ];
    for (label, key) in key_errors {
        let outcome = crate::run::to_key(&key).expect("well-formed vector").map(drop);
        refused_key(&mut file, "ring-3", &key, Some(utf8("fine")), outcome, |op| format!("{op}/{label}"));
    }
    for count in [0u32, 4] {
        let outcome = router.replicas("k", count).map(drop);
        expect_error(
            &mut file,
            &format!("replicas/count-{count}"),
            json!({"op": "replicas", "topology": "ring-3", "key": utf8("k"), "count": count}),
            "invalid_argument",
            outcome,
        );
    }
    let short = doc(&["a", "b"], json!({"type": "vbucket", "vbuckets": 1, "map": [["a"]]}));
    let short = file.topology("vbucket-short-chain", short);
    expect_error(
        &mut file,
        "replicas/longer-than-chain",
        json!({"op": "replicas", "topology": "vbucket-short-chain", "key": utf8("k"), "count": 2}),
        "invalid_argument",
        short.replicas("k", 2).map(drop),
    );
    file
}
