//! `indexes.json`: global secondary indexes (term-partitioned) named in the topology
//! document. Every index route is stated by a relation: the term routed by a document
//! of its own (the index's strategy and hashing over the same nodes, no indexes). Every
//! write plan is stated the same way: the document's shard by the data document alone,
//! each term's shard by its index's document alone, grouped here per index and shard in
//! first-term order. Then the documents and calls an index makes invalid.

use serde_json::{json, Value};

use shardroute::Router;

use super::cases::{apply_refused, expect_error, load_case, On, Refusals};
use super::keys::{owned_key, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

const NODES: [&str; 5] = ["m0", "m1", "m2", "m3", "m4"];

/// A write-plan case: its name, the document's key, and its `(index, term)` pairs.
type Write = (&'static str, Value, Vec<(&'static str, Value)>);

fn by_sender() -> Value {
    json!({"strategy": {"type": "jump"}})
}

fn by_day() -> Value {
    json!({"strategy": {"type": "key_range", "boundaries": [utf8("2026-03"), utf8("2026-06"), utf8("2026-09")],
        "ranges": ["m0", "m1", "m2", "m3"]}})
}

fn by_tag() -> Value {
    json!({"hashing": {"function": "crc32"}, "strategy": {"type": "vbucket", "vbuckets": 16}})
}

/// The messages table: modulo over five shards, three global indexes.
fn messages() -> Value {
    doc(&NODES, json!({"type": "modulo"}))
        .hashing(json!({"integers": "identity"}))
        .with("indexes", json!({"by_sender": by_sender(), "by_day": by_day(), "by_tag": by_tag()}))
}

/// The document an index routes by, alone: its strategy and hashing over the same nodes.
fn alone(index: &Value) -> Router {
    let mut document = doc(&NODES, index["strategy"].clone());
    if let Some(hashing) = index.get("hashing") {
        document = document.hashing(hashing.clone());
    }
    Router::from_value(&document).expect("the index's document alone")
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "indexes",
        "Global secondary indexes (term-partitioned): an index routes terms by its own strategy and hashing over the document's nodes; a write plan lists the document's shard and each index shard its terms touch.",
        "index routes and write plans stated by a relation: each index's document alone (same nodes, its strategy and hashing) routes the terms, the data document alone routes the key; refusals generator",
    );
    let router = file.topology("messages", messages());
    load_case(&mut file, "messages", &router);
    let data = Router::from_value(&doc(&NODES, json!({"type": "modulo"})).hashing(json!({"integers": "identity"})))
        .expect("the data document alone");
    let indexes = [("by_sender", by_sender()), ("by_day", by_day()), ("by_tag", by_tag())];
    let terms: [(&str, Value); 12] = [
        ("by_sender", utf8("alice")),
        ("by_sender", utf8("bob")),
        ("by_sender", utf8("carol")),
        ("by_sender", utf8("")),
        ("by_sender", u64_key(42)),
        ("by_day", utf8("2026-01-15")),
        ("by_day", utf8("2026-06")),
        ("by_day", utf8("2026-11-27")),
        ("by_day", utf8("1999")),
        ("by_tag", utf8("rust")),
        ("by_tag", utf8("sharding")),
        ("by_tag", utf8("ключ")),
    ];
    for (index, term) in &terms {
        let spec = &indexes.iter().find(|(name, _)| name == index).expect("an index of the document").1;
        let reference = alone(spec);
        let key = owned_key(term);
        let (shard, node) =
            (reference.route(key.as_key()).expect("route"), reference.node(key.as_key()).expect("node"));
        let via = router.index(index).expect("index");
        assert_eq!(
            (via.route(key.as_key()).unwrap(), via.node(key.as_key()).unwrap()),
            (shard, node),
            "{index} {term}"
        );
        let label = term.as_object().and_then(|o| o.values().next()).map_or(String::new(), ToString::to_string);
        let label = match label.trim_matches('"') {
            "" => "(empty)",
            text => text,
        };
        file.case(
            &format!("messages/index_route/{index}/{label}"),
            json!({"op": "index_route", "topology": "messages", "index": index, "key": term, "expect": {"shard": shard, "node": node}}),
        );
    }

    // Write plans: the message id routes the row; its sender, day and tags route entries.
    let writes: [Write; 4] = [
        (
            "one-term-each",
            u64_key(1001),
            vec![("by_sender", utf8("alice")), ("by_day", utf8("2026-11-27")), ("by_tag", utf8("rust"))],
        ),
        (
            "tags-grouped-by-shard",
            u64_key(1002),
            vec![
                ("by_tag", utf8("rust")),
                ("by_tag", utf8("sharding")),
                ("by_tag", utf8("ключ")),
                ("by_tag", utf8("rust")),
            ],
        ),
        ("no-terms", u64_key(7), vec![]),
        (
            "text-key",
            utf8("message:9"),
            vec![("by_day", utf8("2026-01-15")), ("by_sender", utf8("bob")), ("by_day", utf8("2026-02-01"))],
        ),
    ];
    for (what, key, pairs) in writes {
        let owned = owned_key(&key);
        let shard = data.route(owned.as_key()).expect("data route");
        // Grouped by hand: one visit per (index, index shard), in first-term order.
        let mut visits: Vec<(String, u32, String, Vec<u32>)> = Vec::new();
        for (position, (index, term)) in pairs.iter().enumerate() {
            let reference = alone(&indexes.iter().find(|(name, _)| name == index).expect("index").1);
            let term = owned_key(term);
            let (term_shard, node) =
                (reference.route(term.as_key()).unwrap(), reference.node(term.as_key()).unwrap().to_string());
            match visits.iter_mut().find(|visit| visit.0 == *index && visit.1 == term_shard) {
                Some(visit) => visit.3.push(position as u32),
                None => visits.push((index.to_string(), term_shard, node, vec![position as u32])),
            }
        }
        let expect = json!({
            "shard": shard,
            "node": data.node(owned.as_key()).unwrap(),
            "indexes": visits.iter().map(|(index, shard, node, terms)| json!({"index": index, "shard": shard, "node": node, "terms": terms})).collect::<Vec<Value>>(),
        });
        let core_pairs: Vec<(String, shardroute::OwnedKey)> =
            pairs.iter().map(|(name, term)| (name.to_string(), owned_key(term))).collect();
        let core_terms: Vec<(&str, shardroute::Key<'_>)> =
            core_pairs.iter().map(|(name, term)| (name.as_str(), term.as_key())).collect();
        let got = router.index_write_plan(owned.as_key(), &core_terms).expect("write plan").to_value(&router);
        assert_eq!(got, expect, "{what}: the core's write plan differs from the one stated");
        let terms: Vec<Value> = pairs.iter().map(|(name, term)| json!([name, term])).collect();
        file.case(
            &format!("messages/index_write_plan/{what}"),
            json!({"op": "index_write_plan", "topology": "messages", "key": key, "terms": terms, "expect": expect}),
        );
    }
    for (what, case, code) in [
        (
            "unknown-index",
            json!({"op": "index_route", "topology": "messages", "index": "by_subject", "key": utf8("x")}),
            "invalid_argument",
        ),
        (
            "write-plan-unknown-index",
            json!({"op": "index_write_plan", "topology": "messages", "key": u64_key(1), "terms": [["by_subject", utf8("x")]]}),
            "invalid_argument",
        ),
    ] {
        let outcome = router.index("by_subject").map(drop);
        expect_error(&mut file, &format!("messages/reject/{what}"), case, code, outcome);
    }

    // Node operations carry the indexes along (jump and vbucket follow the node list; the
    // key_range index names its owners, so removing one of them is refused).
    let ops_id = "messages-jump-indexes";
    file.topology(
        ops_id,
        doc(&NODES, json!({"type": "jump"})).with("indexes", json!({"by_sender": by_sender(), "by_day": by_day()})),
    );
    super::cases::applied(
        &mut file,
        &format!("{ops_id}/apply/add-node"),
        On::Topology(ops_id),
        json!({"op": "add_node", "node": {"id": "m5"}}),
    );
    apply_refused(
        &mut file,
        &format!("{ops_id}/apply/remove-node-named-by-an-index"),
        On::Topology(ops_id),
        json!({"op": "remove_node", "id": "m1"}),
        "invalid_topology",
    );
    apply_refused(
        &mut file,
        &format!("{ops_id}/apply/import-replaces-the-node-list"),
        On::Topology(ops_id),
        json!({"op": "import_cassandra_ring", "tokens": {"m0": ["0"]}}),
        "invalid_argument",
    );

    let mut bad = Refusals::of(messages());
    bad.edit("not-an-object", "invalid_topology", |d| d["indexes"] = json!([]));
    bad.edit("no-strategy", "invalid_topology", |d| d["indexes"]["by_sender"] = json!({}));
    bad.edit("unknown-field", "invalid_topology", |d| d["indexes"]["by_sender"]["nodes"] = json!([]));
    bad.edit("empty-name", "invalid_topology", |d| d["indexes"][""] = by_sender());
    bad.edit("profile", "invalid_topology", |d| {
        d["indexes"]["by_sender"] = json!({"strategy": {"type": "redis_cluster"}})
    });
    bad.edit("unknown-node", "invalid_topology", |d| d["indexes"]["by_day"]["strategy"]["ranges"][0] = json!("m9"));
    bad.edit("weighted-node-for-jump", "invalid_topology", |d| {
        d["strategy"] = json!({"type": "ring"});
        d["nodes"][0]["weight"] = json!(2);
    });
    bad.edit("too-many", "limit_exceeded", |d| {
        let many: serde_json::Map<String, Value> = (0..65).map(|i| (format!("i{i:02}"), by_sender())).collect();
        d["indexes"] = Value::Object(many);
    });
    bad.write(&mut file, "load/reject-");
    file
}
