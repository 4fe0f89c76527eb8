use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Value};

use crate::{jump, Key, Router, Topology};

fn base() -> Value {
    json!({"format": "shardroute/1", "epoch": 3,
        "hashing": {"partition_key": {"rule": "prefix", "separator": ":"}},
        "nodes": [{"id": "a", "zone": "z1"}, {"id": "b", "zone": "z1"}, {"id": "c", "zone": "z2"}, {"id": "d"}, {"id": "e", "zone": "z2"}],
        "strategy": {"type": "jump"}})
}

fn saas() -> Value {
    let mut document = base();
    document["node_groups"] = json!({"eu": ["c", "a"]});
    document["tenants"] = json!({"entries": {
        "acme": {"group": "eu"},
        "initech": {"zone": "z2"},
        "globex": {"shards": 4},
        "hooli": {"group": "eu", "shards": 2},
        "umbrella": {"group": "eu", "zone": "z1"}}});
    document
}

fn refused(change: impl FnOnce(&mut Value)) -> (String, String) {
    let mut document = saas();
    change(&mut document);
    let err = Router::from_value(&document).unwrap_err();
    (err.code().to_string(), err.message().to_string())
}

fn ids(router: &Router, indices: &[u32]) -> Vec<String> {
    indices.iter().map(|&at| router.nodes()[at as usize].id.clone()).collect()
}

#[test]
fn tenants_without_an_entry_route_as_without_the_section() {
    let with = Router::from_value(&saas()).unwrap();
    let without = Router::from_value(&base()).unwrap();
    for key in ["users:1", "zz", "", "acmes:1", "acm", "glo:bex"] {
        assert_eq!(with.route(key).unwrap(), without.route(key).unwrap(), "{key}");
    }
    // A key without the tenant part is its own tenant, as it is its own partition key.
    assert_ne!(with.route("acme").unwrap(), without.route("acme").unwrap());
    for value in [0u64, 7, u64::MAX] {
        assert_eq!(with.route(Key::U64(value)).unwrap(), without.route(Key::U64(value)).unwrap());
    }
}

#[test]
fn placed_tenants_stay_on_their_place_by_jump() {
    let router = Router::from_value(&saas()).unwrap();
    let eu = ["c", "a"];
    for i in 0..200 {
        let key = alloc::format!("acme:order:{i}");
        // The document's hash of the key (its partition key, "acme"), jumped over the group.
        let expected = eu[jump(router.hash(key.as_str()), 2).unwrap() as usize];
        assert_eq!(router.node(key.as_str()).unwrap(), expected);
        assert_eq!(router.route_read(key.as_str()).unwrap(), expected);
        assert_eq!(router.route_write(key.as_str()).unwrap(), [expected]);
        assert_eq!(router.read_replica(key.as_str(), 1).unwrap(), expected);
        assert_eq!(router.replicas(key.as_str(), 2).unwrap(), [expected, eu.iter().find(|&&n| n != expected).unwrap()]);
        assert_eq!(router.replicas(key.as_str(), 3).unwrap_err().code(), "invalid_argument");
        let zone = router.node(alloc::format!("initech:{i}").as_str()).unwrap();
        assert!(["c", "e"].contains(&zone), "{zone}");
        assert_eq!(router.node(alloc::format!("umbrella:{i}").as_str()).unwrap(), "a");
        // A spread tenant on a group uses the whole group.
        let hooli = alloc::format!("hooli:{i}");
        let bucket = router.hashing().hash_bytes(hooli.as_bytes()) % 2;
        let spread = alloc::format!("hooli#{bucket}");
        let expected = eu[jump(router.hashing().hash_bytes(spread.as_bytes()), 2).unwrap() as usize];
        assert_eq!(router.node(hooli.as_str()).unwrap(), expected);
    }
    let explained = router.explain("acme:1").unwrap();
    assert_eq!(explained.node, router.node("acme:1").unwrap());
    assert_eq!(explained.hit, crate::explain::Hit::Jump { buckets: 2 });
}

#[test]
fn spread_tenants_route_by_tenant_and_bucket() {
    let router = Router::from_value(&saas()).unwrap();
    let plain = Router::from_value(&base()).unwrap();
    let mut shards = alloc::collections::BTreeSet::new();
    for i in 0..400 {
        let key = alloc::format!("globex:{i}");
        let bucket = plain.hashing().hash_bytes(key.as_bytes()) % 4;
        let spread = alloc::format!("globex#{bucket}");
        let shard = router.route(key.as_str()).unwrap();
        assert_eq!(shard, plain.route(spread.as_str()).unwrap());
        assert_eq!(router.replicas(key.as_str(), 2).unwrap(), plain.replicas(spread.as_str(), 2).unwrap());
        shards.insert(shard);
    }
    // Without the entry every key of the tenant is on one shard; with it, on several.
    assert!(shards.len() > 1, "{shards:?}");
    assert_eq!(
        (0..50)
            .map(|i| plain.route(alloc::format!("globex:{i}").as_str()).unwrap())
            .collect::<alloc::collections::BTreeSet<_>>()
            .len(),
        1
    );
}

#[test]
fn batches_honour_the_tenants() {
    let router = Router::from_value(&saas()).unwrap();
    let keys: Vec<String> =
        (0..64).map(|i| alloc::format!("{}:{i}", ["acme", "globex", "hooli", "users", "initech"][i % 5])).collect();
    let one_by_one: Vec<u32> = keys.iter().map(|key| router.route(key.as_str()).unwrap()).collect();
    let mut out = Vec::new();
    router.route_many_into(keys.iter().map(String::as_str), &mut out).unwrap();
    assert_eq!(out, one_by_one);
    let mut data = Vec::new();
    let mut offsets = alloc::vec![0u32];
    for key in &keys {
        data.extend_from_slice(key.as_bytes());
        offsets.push(data.len() as u32);
    }
    router.route_packed_into(&data, &offsets, &mut out).unwrap();
    assert_eq!(out, one_by_one);
    router.node_index_many_into(keys.iter().map(String::as_str), &mut out).unwrap();
    assert_eq!(
        ids(&router, &out),
        keys.iter().map(|key| router.node(key.as_str()).unwrap().to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn one_based_modulo_places_on_the_nodes_shard() {
    let mut document = saas();
    document["strategy"] = json!({"type": "modulo", "one_based": true});
    let router = Router::from_value(&document).unwrap();
    for i in 0..50 {
        let key = alloc::format!("umbrella:{i}");
        assert_eq!(router.route(key.as_str()).unwrap(), 1, "a is node 0, shard 1");
        assert_eq!(router.node(key.as_str()).unwrap(), "a");
    }
}

#[test]
fn range_scans_are_refused_where_tenants_break_key_order() {
    let mut document = saas();
    document["strategy"] = json!({"type": "key_range", "boundaries": [{"utf8": "m"}]});
    document["tenants"] = json!({"entries": {"globex": {"shards": 4}}});
    let router = Router::from_value(&document).unwrap();
    assert_eq!(router.shards_for_range("a", Some(Key::Bytes(b"b"))).unwrap_err().code(), "invalid_argument");
    // A hashed strategy visits every shard anyway.
    let router = Router::from_value(&saas()).unwrap();
    assert_eq!(router.shards_for_range("a", Some(Key::Bytes(b"b"))).unwrap(), [0, 1, 2, 3, 4]);
}

#[test]
fn the_section_round_trips_and_a_tenants_only_document_has_no_empty_sections() {
    let router = Router::from_value(&saas()).unwrap();
    let again = Router::from_json(&router.to_json()).unwrap();
    assert_eq!(again.topology(), router.topology());
    let mut document = base();
    document["tenants"] =
        json!({"partition_key": {"rule": "field", "separator": ":", "index": 0}, "entries": {"globex": {"shards": 3}}});
    let router = Router::from_value(&document).unwrap();
    let text = router.to_json();
    assert!(!text.contains("node_groups") && !text.contains("table_families"), "{text}");
    assert_eq!(Topology::from_json(&text).unwrap(), *router.topology());
    assert!(Router::from_value(&document).unwrap().topology().tenants().unwrap().partition_key.is_some());
}

#[test]
fn refusals_name_the_field() {
    type Case = (fn(&mut Value), &'static str, &'static str);
    let cases: [Case; 16] = [
        (
            |d| d["tenants"]["entries"]["acme"]["group"] = json!("us"),
            "invalid_topology",
            "tenants.entries.acme.group: tenant \"acme\" names group \"us\", which is not in node_groups (it has eu)",
        ),
        (
            |d| d["tenants"]["entries"]["acme"]["rack"] = json!("r1"),
            "invalid_topology",
            "tenants.entries.acme.rack: unknown field",
        ),
        (|d| d["tenants"]["owner"] = json!("x"), "invalid_topology", "tenants.owner: unknown field"),
        (
            |d| d["tenants"]["entries"]["globex"]["shards"] = json!(0),
            "invalid_topology",
            "tenants.entries.globex.shards: expected an integer in 1..=1024",
        ),
        (
            |d| d["tenants"]["entries"]["globex"]["shards"] = json!(1025),
            "limit_exceeded",
            "tenants.entries.globex.shards: 1025 exceeds the limit of 1024",
        ),
        (
            |d| d["tenants"]["entries"]["globex"] = json!({}),
            "invalid_topology",
            "tenants.entries.globex: an entry places",
        ),
        (
            |d| d["tenants"]["entries"]["initech"]["zone"] = json!("mars"),
            "invalid_topology",
            "tenants.entries.initech.zone: no node is in zone \"mars\", where tenant \"initech\" is placed",
        ),
        (
            |d| d["tenants"]["entries"]["umbrella"]["zone"] = json!("z3"),
            "invalid_topology",
            "tenants.entries.umbrella.zone: no node of group \"eu\" is in zone \"z3\"",
        ),
        (
            |d| d["strategy"] = json!({"type": "vbucket", "vbuckets": 8}),
            "invalid_topology",
            "tenants.entries.acme: tenant \"acme\" is placed, and the vbucket strategy's shards are not its nodes",
        ),
        (|d| d["hashing"] = json!({"keys": "u64"}), "invalid_topology", "tenants: the keys are integers"),
        (|d| d["hashing"] = json!({}), "invalid_topology", "tenants: a key's tenant is a part of the key"),
        (
            |d| d["hot_keys"] = json!({"keys": {"globex:1": 4}}),
            "invalid_topology",
            "tenants.entries.globex: tenant \"globex\" has a hot key",
        ),
        (
            |d| {
                // The tenant rule alone: the document routes whole keys, so salting itself is fine.
                d["hashing"] = json!({});
                d["tenants"]["partition_key"] = json!({"rule": "prefix", "separator": ":"});
                d["hot_keys"] = json!({"keys": {"users:1": 4, "acme:1": 2}});
            },
            "invalid_topology",
            "tenants.entries.acme: tenant \"acme\" has a hot key, \"acme:1\"",
        ),
        (
            |d| d["tenants"]["partition_key"] = json!({"rule": "suffix"}),
            "invalid_topology",
            "tenants.partition_key.rule: unknown partition key rule",
        ),
        (
            |d| {
                let many: serde_json::Map<String, Value> =
                    (0..=crate::limits::MAX_TENANTS).map(|i| (alloc::format!("t{i}"), json!({"shards": 2}))).collect();
                d["tenants"]["entries"] = Value::Object(many);
            },
            "limit_exceeded",
            "tenants.entries: 65537 tenants; the limit is 65536",
        ),
        (|d| d["tenants"]["entries"] = json!({"x".repeat(257): {"shards": 2}}), "limit_exceeded", "tenants.entries."),
    ];
    for (change, code, message) in cases {
        let (got_code, got) = refused(change);
        assert_eq!(got_code, code, "{got}");
        assert!(got.starts_with(message), "{got:?} does not start with {message:?}");
    }
    // A tenant listed twice is a field named twice.
    let text =
        saas().to_string().replace("\"globex\":{\"shards\":4}", "\"globex\":{\"shards\":4},\"globex\":{\"shards\":2}");
    assert!(text.contains("\"globex\":{\"shards\":2}"), "{text}");
    let err = Router::from_json(&text).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("tenants.entries: the field \"globex\" appears twice"), "{}", err.message());
}

#[test]
fn operations_that_break_a_placement_are_refused_naming_the_tenant() {
    let topology = Topology::from_value(&saas()).unwrap();
    // The last node of zone z2 outside the group is e; c is in the group.
    let err = crate::ops::apply(&topology, &json!({"op": "remove_node", "id": "c"})).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().contains("tenant \"acme\""), "{}", err.message());
    let mut zoned = saas();
    zoned["tenants"]["entries"] = json!({"initech": {"zone": "z2"}});
    zoned["nodes"][2]["zone"] = json!("z1");
    let topology = Topology::from_value(&zoned).unwrap();
    let err = crate::ops::apply(&topology, &json!({"op": "remove_node", "id": "e"})).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("tenants.entries.initech.zone: no node is in zone \"z2\""), "{}", err.message());
    // Other nodes come and go; a hot key of a tenant with an entry is refused.
    let applied = crate::ops::apply(&topology, &json!({"op": "remove_node", "id": "d"})).unwrap();
    assert!(Router::from_value(&applied["topology"]).is_ok());
    let err = crate::ops::apply(&topology, &json!({"op": "hot_key_add", "key": {"utf8": "initech:9"}, "fanout": 2}))
        .unwrap_err();
    assert!(err.message().contains("tenant \"initech\" has a hot key"), "{}", err.message());
}

#[test]
fn the_dictionary_and_imports_refuse_tenants_rather_than_drop_them() {
    let mut document = base();
    document["hashing"] = json!({});
    document["strategy"] = json!({"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["c"], ["d"]]});
    document["tenants"] =
        json!({"partition_key": {"rule": "prefix", "separator": ":"}, "entries": {"globex": {"shards": 2}}});
    let topology = Topology::from_value(&document).unwrap();
    let err = crate::dictionary::encode(&topology).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert!(err.message().contains("tenants"), "{}", err.message());
    let import = json!({"op": "import_cassandra_ring", "tokens": {"a": ["0"]}});
    let err = crate::ops::apply(&topology, &import).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert!(err.message().contains("tenants"), "{}", err.message());
}

#[test]
fn suggest_does_not_salt_a_key_of_a_tenant_with_an_entry() {
    let topology = Topology::from_value(&saas()).unwrap();
    let result = crate::ops::apply(
        &topology,
        &json!({"op": "suggest", "max_requests": 10, "keys": [{"key": {"utf8": "globex:1"}, "requests": 100}, {"key": {"utf8": "users:1"}, "requests": 100}]}),
    )
    .unwrap();
    let suggestions = result["suggestions"].as_array().unwrap();
    let salted: Vec<&Value> = suggestions.iter().filter(|s| s["operation"]["op"] == "hot_key_add").collect();
    assert_eq!(salted.len(), 1, "{suggestions:?}");
    assert_eq!(salted[0]["operation"]["key"], json!({"utf8": "users:1"}));
    assert!(
        suggestions
            .iter()
            .any(|s| s["operation"].is_null() && s["reason"].as_str().unwrap().contains("tenant \"globex\"")),
        "{suggestions:?}"
    );
}

#[test]
fn each_place_is_computed_once_however_many_entries_name_it() {
    // 4,096 entries over one group of 1,000 nodes and two zones: two places in all, each
    // group read once (not once per entry, which was entries x group x nodes of work).
    let nodes: Vec<Value> = (0..1000)
        .map(|i| json!({"id": alloc::format!("n{i}"), "zone": if i % 2 == 0 { "z1" } else { "z2" }}))
        .collect();
    let ids: Vec<String> = (0..1000).rev().map(|i| alloc::format!("n{i}")).collect();
    let entries: serde_json::Map<String, Value> = (0..4096)
        .map(|i| {
            (
                alloc::format!("t{i}"),
                if i % 2 == 0 { json!({"group": "big"}) } else { json!({"group": "big", "zone": "z2"}) },
            )
        })
        .collect();
    let mut document = base();
    document["nodes"] = Value::Array(nodes);
    document["node_groups"] = json!({ "big": ids });
    document["tenants"] = json!({ "entries": entries });
    let topology = Topology::from_value(&document).unwrap();
    let tenants = topology.tenants().unwrap();
    let groups = &topology.tables.as_ref().unwrap().groups;
    let (places, of_entry) = super::places(tenants, groups, &topology.nodes).unwrap();
    assert_eq!(places.len(), 2);
    assert_eq!(places.iter().map(Vec::len).sum::<usize>(), 1500);
    assert_eq!(of_entry.len(), 4096);
    assert_eq!(places[0][0], 999, "the group's order");
    let router = Router::new(topology).unwrap();
    assert!(router.node("t1:x").unwrap().trim_start_matches('n').parse::<u32>().unwrap() % 2 == 1);
}
