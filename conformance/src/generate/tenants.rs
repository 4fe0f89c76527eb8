//! `tenants.json`: tenants placed on a node group or in a zone, and spread over shards,
//! beside tenants that route as without the section. Every route is stated by the rule of
//! `topology::tenants`, computed here by hand: a spread key routes as the key
//! `tenant#bucket` (bucket = hash of the whole key % shards) on the document without the
//! section; a placed key goes to `place[jump(h, len(place))]`, `h` the document's hash of
//! the key (of `tenant#bucket` when the tenant is spread too). Then the operations a
//! placement refuses, the suggestion it repairs, and the documents the section makes
//! invalid (errors style: `load` cases with `expect.error`).

use serde_json::{json, Value};

use shardroute::{jump, Router};

use super::cases::{applied, apply_refused, edited, expect_error, load_case, result_or_error, On, Refusals};
use super::keys::{owned_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

const SAAS: &str = "saas";
const SPREAD_RANGES: &str = "spread-key-range";

fn nodes() -> Value {
    json!([
        {"id": "db-1", "zone": "eu-1"}, {"id": "db-2", "zone": "eu-1"}, {"id": "db-3", "zone": "eu-2"},
        {"id": "db-4", "zone": "us-1"}, {"id": "db-5", "zone": "us-1"}, {"id": "db-6", "zone": "us-2"}
    ])
}

fn prefix_rule() -> Value {
    json!({"partition_key": {"rule": "prefix", "separator": ":"}})
}

/// The document without tenants: what every key without an entry routes by.
fn plain(strategy: Value) -> Value {
    let mut document = doc(&["x"], strategy).hashing(prefix_rule());
    document["nodes"] = nodes();
    document
}

fn entries() -> Value {
    json!({
        "acme": {"group": "eu"},
        "initech": {"zone": "us-1"},
        "globex": {"shards": 8},
        "hooli": {"group": "us", "shards": 3},
        "umbrella": {"group": "eu", "zone": "eu-1"}
    })
}

fn saas() -> Value {
    plain(json!({"type": "ring", "points_per_node": 64}))
        .with("node_groups", json!({"eu": ["db-3", "db-1", "db-2"], "us": ["db-6", "db-4", "db-5"]}))
        .with("tenants", json!({ "entries": entries() }))
}

/// A placed tenant's nodes, in the place's order.
fn place(tenant: &str) -> Vec<String> {
    let entry = &entries()[tenant];
    let all = nodes();
    let all = all.as_array().expect("nodes");
    let group: Vec<String> = match entry["group"].as_str() {
        Some(name) => saas()["node_groups"][name]
            .as_array()
            .expect("a group")
            .iter()
            .map(|id| id.as_str().expect("an id").to_string())
            .collect(),
        None => all.iter().map(|node| node["id"].as_str().expect("an id").to_string()).collect(),
    };
    match entry["zone"].as_str() {
        Some(zone) => group
            .into_iter()
            .filter(|id| all.iter().any(|node| node["id"] == id.as_str() && node["zone"] == zone))
            .collect(),
        None => group,
    }
}

/// `(shard, node)` of `key` by the rule, by hand, over the document without tenants.
fn by_rule(plain: &Router, key: &str) -> (u32, String) {
    let tenant = key.split(':').next().expect("a tenant");
    let entry = &entries()[tenant];
    if entry.is_null() {
        let shard = plain.route(key).expect("route");
        return (shard, plain.node(key).expect("node").to_string());
    }
    let spread = entry["shards"].as_u64().map(|shards| {
        let bucket = plain.hashing().hash_bytes(key.as_bytes()) % shards;
        format!("{tenant}#{bucket}")
    });
    if entry.get("group").is_none() && entry.get("zone").is_none() {
        let spread = spread.expect("a spread tenant");
        // Routed whole: `tenant#b` has no ':' so the prefix rule keeps all of it.
        return (plain.route(spread.as_str()).expect("route"), plain.node(spread.as_str()).expect("node").to_string());
    }
    let hash = match &spread {
        Some(spread) => plain.hashing().hash_bytes(spread.as_bytes()),
        None => plain.hash(key),
    };
    let members = place(tenant);
    let node = members[jump(hash, members.len() as u32).expect("jump") as usize].clone();
    let shard = plain.nodes().iter().position(|listed| listed.id == node).expect("a node") as u32;
    (shard, node)
}

fn keys() -> Vec<(String, String)> {
    let mut keys = Vec::new();
    for tenant in ["acme", "initech", "globex", "hooli", "umbrella", "wayne", "stark"] {
        for (label, rest) in
            [("order-17", "order:17"), ("order-18", "order:18"), ("user-1", "user:1"), ("invoice-9", "invoice:2026:9")]
        {
            keys.push((format!("{tenant}/{label}"), format!("{tenant}:{rest}")));
        }
    }
    keys
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "tenants",
        "Tenants: keys of a tenant with an entry in `tenants` are placed on a node group or zone (jump over the place's nodes) or spread over N shards (routed as `tenant#bucket`, bucket = hash of the whole key % N), or both; other tenants route as without the section. Replicas, reads and writes of placed keys, batches, operations that would break a placement, suggest's repair, and refused documents.",
        "routes stated by the rule by hand (jump over the place; the spread key routed on the document without tenants); refusals generator",
    );
    let router = file.topology(SAAS, saas());
    load_case(&mut file, SAAS, &router);
    let without = Router::from_value(&plain(json!({"type": "ring", "points_per_node": 64}))).expect("plain");

    let mut all = Vec::new();
    let mut shards = Vec::new();
    for (label, key) in keys() {
        let (shard, node) = by_rule(&without, &key);
        assert_eq!(router.route(key.as_str()).expect("route"), shard, "{key}");
        assert_eq!(router.node(key.as_str()).expect("node"), node, "{key}");
        file.case(
            &format!("{SAAS}/route/{label}"),
            json!({"op": "route", "topology": SAAS, "key": utf8(&key), "expect": {"shard": shard, "node": node}}),
        );
        all.push(utf8(&key));
        shards.push(shard);
    }
    // Integer keys have no tenant.
    for value in [0u64, 17, u64::MAX] {
        let key = json!({"u64": value.to_string()});
        let owned = owned_key(&key);
        let expect = json!({"shard": without.route(owned.as_key()).expect("route"), "node": without.node(owned.as_key()).expect("node")});
        file.case(
            &format!("{SAAS}/route/u64-{value}"),
            json!({"op": "route", "topology": SAAS, "key": key, "expect": expect}),
        );
    }
    file.case(
        &format!("{SAAS}/route_many"),
        json!({"op": "route_many", "topology": SAAS, "keys": all, "expect": {"shards": shards}}),
    );

    // Replicas, reads and writes of a placed key: the chosen node, then the rest of the
    // place in its order; one node reads and writes it.
    for (tenant, count) in
        [("acme", 2), ("acme", 3), ("acme", 4), ("hooli", 3), ("umbrella", 2), ("globex", 2), ("wayne", 2)]
    {
        let key = format!("{tenant}:order:17");
        let owned = utf8(&key);
        let expect = result_or_error(router.replicas(key.as_str(), count), |nodes| json!({ "nodes": nodes }));
        if !entries()[tenant].is_null()
            && (entries()[tenant].get("group").is_some() || entries()[tenant].get("zone").is_some())
        {
            let members = place(tenant);
            let (_, first) = by_rule(&without, &key);
            let mut stated: Vec<String> = vec![first.clone()];
            stated.extend(members.iter().filter(|id| **id != first).cloned());
            stated.truncate(count as usize);
            let stated = if count as usize > members.len() {
                json!({"error": "invalid_argument"})
            } else {
                json!({"nodes": stated})
            };
            assert_eq!(expect, stated, "{key} {count}");
        }
        file.case(
            &format!("{SAAS}/replicas-{count}/{tenant}"),
            json!({"op": "replicas", "topology": SAAS, "key": owned, "count": count, "expect": expect}),
        );
    }
    for tenant in ["acme", "initech", "globex", "hooli", "wayne"] {
        let key = format!("{tenant}:user:1");
        let (_, node) = by_rule(&without, &key);
        assert_eq!(router.route_read(key.as_str()).expect("read"), node);
        assert_eq!(router.route_write(key.as_str()).expect("write"), [node.as_str()]);
        file.case(
            &format!("{SAAS}/route_read/{tenant}"),
            json!({"op": "route_read", "topology": SAAS, "key": utf8(&key), "expect": {"node": node}}),
        );
        file.case(
            &format!("{SAAS}/route_write/{tenant}"),
            json!({"op": "route_write", "topology": SAAS, "key": utf8(&key), "expect": {"nodes": [node]}}),
        );
    }

    // A spread tenant under key ranges: the spread key `globex#b` falls in the range its
    // bytes do (the boundary `globex#2` splits the tenant), the other keys by their tenant.
    let ranges =
        json!({"type": "key_range", "boundaries": [utf8("globex#2"), utf8("m")], "ranges": ["db-1", "db-2", "db-3"]});
    let mut ranged = plain(ranges);
    let ranges_plain = Router::from_value(&ranged).expect("plain key ranges");
    ranged["tenants"] = json!({"entries": {"globex": {"shards": 4}}});
    let spread = file.topology(SPREAD_RANGES, ranged);
    load_case(&mut file, SPREAD_RANGES, &spread);
    for (label, key) in
        keys().into_iter().filter(|(label, _)| label.starts_with("globex/") || label.starts_with("wayne/"))
    {
        let routed = if key.starts_with("globex:") {
            format!("globex#{}", ranges_plain.hashing().hash_bytes(key.as_bytes()) % 4)
        } else {
            key.clone()
        };
        let shard = ranges_plain.route(routed.as_str()).expect("route");
        let node = ranges_plain.node(routed.as_str()).expect("node").to_string();
        assert_eq!(spread.route(key.as_str()).expect("route"), shard);
        file.case(
            &format!("{SPREAD_RANGES}/route/{label}"),
            json!({"op": "route", "topology": SPREAD_RANGES, "key": utf8(&key), "expect": {"shard": shard, "node": node}}),
        );
    }

    // A range scan: refused where the tenants break key order (ranges), every shard where
    // a hash scatters the range anyway.
    let outcome = spread.shards_for_range("a", Some(shardroute::Key::Bytes(b"h"))).map(drop);
    expect_error(
        &mut file,
        &format!("{SPREAD_RANGES}/shards_for_range/refused"),
        json!({"op": "shards_for_range", "topology": SPREAD_RANGES, "start": utf8("a"), "end": utf8("h")}),
        "invalid_argument",
        outcome,
    );
    let shards = router.shards_for_range("a", Some(shardroute::Key::Bytes(b"h"))).expect("every shard");
    assert_eq!(shards, (0..6).collect::<Vec<u32>>());
    file.case(
        &format!("{SAAS}/shards_for_range/every-shard"),
        json!({"op": "shards_for_range", "topology": SAAS, "start": utf8("a"), "end": utf8("h"), "expect": {"shards": shards}}),
    );

    // Operations: other nodes come and go; a node of a tenant's group, or the last of its
    // zone, stays; a tenant's key is not salted, and suggest says so rather than propose it.
    applied(
        &mut file,
        &format!("{SAAS}/apply/add-node"),
        On::Topology(SAAS),
        json!({"op": "add_node", "node": {"id": "db-7", "zone": "us-1"}}),
    );
    apply_refused(
        &mut file,
        &format!("{SAAS}/apply/remove-node-of-a-tenants-group"),
        On::Topology(SAAS),
        json!({"op": "remove_node", "id": "db-1"}),
        "invalid_topology",
    );
    apply_refused(
        &mut file,
        &format!("{SAAS}/apply/hot-key-of-a-tenant"),
        On::Topology(SAAS),
        json!({"op": "hot_key_add", "key": utf8("globex:1"), "fanout": 4}),
        "invalid_topology",
    );
    let mut zoned = plain(json!({"type": "jump"}));
    zoned["tenants"] = json!({"entries": {"initech": {"zone": "us-2"}}});
    let zoned = file.topology("zoned", zoned);
    load_case(&mut file, "zoned", &zoned);
    apply_refused(
        &mut file,
        "zoned/apply/remove-last-node-of-a-tenants-zone",
        On::Topology("zoned"),
        json!({"op": "remove_node", "id": "db-6"}),
        "invalid_topology",
    );
    applied(
        &mut file,
        "zoned/apply/remove-another-node",
        On::Topology("zoned"),
        json!({"op": "remove_node", "id": "db-5"}),
    );
    let suggestion = applied(
        &mut file,
        &format!("{SAAS}/apply/suggest-hot-keys"),
        On::Topology(SAAS),
        json!({"op": "suggest", "max_requests": 100, "keys": [
            {"key": utf8("globex:1"), "requests": 1000}, {"key": utf8("wayne:1"), "requests": 1000}]}),
    );
    let said: Vec<&Value> = suggestion["suggestions"].as_array().expect("suggestions").iter().collect();
    assert!(said.iter().any(|s| s["operation"]["op"] == "hot_key_add" && s["operation"]["key"] == utf8("wayne:1")));
    assert!(!said.iter().any(|s| s["operation"]["key"] == utf8("globex:1")));

    // The tenants' own operations: each next document is the input edited by hand.
    let edit = |change: &dyn Fn(&mut Value)| {
        let mut document = saas();
        change(&mut document);
        document
    };
    edited(
        &mut file,
        &format!("{SAAS}/apply/tenant-set/create"),
        SAAS,
        json!({"op": "tenant_set", "tenant": "wayne", "entry": {"group": "us"}}),
        edit(&|d| d["tenants"]["entries"]["wayne"] = json!({"group": "us"})),
        json!({"tenant": "wayne", "created": true, "from": null, "to": {"group": "us"}}),
    );
    edited(
        &mut file,
        &format!("{SAAS}/apply/tenant-set/replace"),
        SAAS,
        json!({"op": "tenant_set", "tenant": "acme", "entry": {"shards": 2, "group": "us"}}),
        edit(&|d| d["tenants"]["entries"]["acme"] = json!({"group": "us", "shards": 2})),
        json!({"tenant": "acme", "created": false, "from": {"group": "eu"}, "to": {"group": "us", "shards": 2}}),
    );
    edited(
        &mut file,
        &format!("{SAAS}/apply/tenant-remove"),
        SAAS,
        json!({"op": "tenant_remove", "tenant": "globex"}),
        edit(&|d| {
            d["tenants"]["entries"].as_object_mut().expect("entries").remove("globex");
        }),
        json!({"tenant": "globex", "from": {"shards": 8}}),
    );
    for (on, label, operation, code) in [
        (
            SAAS,
            "unknown-group",
            json!({"op": "tenant_set", "tenant": "acme", "entry": {"group": "asia"}}),
            "invalid_topology",
        ),
        (SAAS, "empty-entry", json!({"op": "tenant_set", "tenant": "acme", "entry": {}}), "invalid_topology"),
        (SAAS, "empty-name", json!({"op": "tenant_set", "tenant": "", "entry": {"shards": 2}}), "invalid_argument"),
        (
            SAAS,
            "name-not-a-string",
            json!({"op": "tenant_set", "tenant": 7, "entry": {"shards": 2}}),
            "invalid_argument",
        ),
        (
            SAAS,
            "name-over-the-limit",
            json!({"op": "tenant_set", "tenant": "t".repeat(257), "entry": {"shards": 2}}),
            "limit_exceeded",
        ),
        (SAAS, "remove-unknown", json!({"op": "tenant_remove", "tenant": "nobody"}), "invalid_argument"),
        (
            SAAS,
            "remove-the-group-of-a-tenant",
            json!({"op": "node_group_set", "group": "eu", "nodes": []}),
            "invalid_topology",
        ),
        (
            SPREAD_RANGES,
            "place-under-key-ranges",
            json!({"op": "tenant_set", "tenant": "acme", "entry": {"zone": "eu-1"}}),
            "invalid_topology",
        ),
    ] {
        apply_refused(&mut file, &format!("{on}/apply/tenant/{label}"), On::Topology(on), operation, code);
    }
    // The last entry goes, and with it the section.
    let mut lone = plain(json!({"type": "jump"}));
    lone["tenants"] = json!({"entries": {"globex": {"shards": 4}}});
    file.topology("one-tenant", lone);
    let result = edited(
        &mut file,
        "one-tenant/apply/tenant-remove/the-last",
        "one-tenant",
        json!({"op": "tenant_remove", "tenant": "globex"}),
        plain(json!({"type": "jump"})),
        json!({"tenant": "globex", "from": {"shards": 4}}),
    );
    assert!(result["topology"].get("tenants").is_none());

    let mut bad = Refusals::of(saas());
    bad.edit("unknown-group", "invalid_topology", |d| d["tenants"]["entries"]["acme"]["group"] = json!("asia"));
    bad.edit("unknown-entry-field", "invalid_topology", |d| d["tenants"]["entries"]["acme"]["rack"] = json!("r1"));
    bad.edit("unknown-section-field", "invalid_topology", |d| d["tenants"]["owner"] = json!("ops"));
    bad.edit("shards-zero", "invalid_topology", |d| d["tenants"]["entries"]["globex"]["shards"] = json!(0));
    bad.edit("shards-over-the-limit", "limit_exceeded", |d| d["tenants"]["entries"]["globex"]["shards"] = json!(1025));
    bad.edit("empty-entry", "invalid_topology", |d| d["tenants"]["entries"]["globex"] = json!({}));
    bad.edit("zone-without-nodes", "invalid_topology", |d| d["tenants"]["entries"]["initech"]["zone"] = json!("mars"));
    bad.edit("zone-outside-the-group", "invalid_topology", |d| {
        d["tenants"]["entries"]["umbrella"]["zone"] = json!("us-1")
    });
    bad.edit("placed-under-vbucket", "invalid_topology", |d| {
        d["strategy"] = json!({"type": "vbucket", "vbuckets": 64})
    });
    bad.edit("integer-keys", "invalid_topology", |d| d["hashing"] = json!({"keys": "u64"}));
    bad.edit("whole-key-tenants", "invalid_topology", |d| d["hashing"] = json!({}));
    bad.edit("hot-key-of-a-tenant", "invalid_topology", |d| d["hot_keys"] = json!({"keys": {"globex:1": 4}}));
    bad.edit("unknown-rule", "invalid_topology", |d| d["tenants"]["partition_key"] = json!({"rule": "suffix"}));
    bad.edit("entries-not-an-object", "invalid_topology", |d| d["tenants"]["entries"] = json!(["acme"]));
    // Past MAX_TENANTS (65,536 entries, 1.5 MB of text) is the core's unit test's.
    bad.edit("tenant-name-over-the-limit", "limit_exceeded", |d| {
        d["tenants"]["entries"] = json!({"t".repeat(257): {"shards": 2}})
    });
    // A tenant listed twice is a field named twice, refused by the reader (the core's unit
    // test: a vector of it would read as the last entry to JSON readers that keep one).
    bad.write(&mut file, &format!("{SAAS}/load/reject-"));
    file
}
