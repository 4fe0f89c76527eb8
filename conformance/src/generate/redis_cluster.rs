//! `redis_cluster.json`: the Redis Cluster profile. Slots of a real `redis-server`
//! (`CLUSTER KEYSLOT`, transcribed into `reference/redis-cluster-keyslot.txt`: every
//! hash-tag edge, binary bytes, text, integers as decimal text), routing and replica
//! cases over the standard keys for the default split and an explicit slot map with
//! replicas, the `import_redis_cluster_slots` / `import_redis_cluster_shards`
//! operations, and rejected documents (non-default hashing, gaps, overlaps).

use serde_json::{json, Value};

use super::cases::{applied, apply_refused, expect_error, refused_documents, routing_cases, On};
use shardroute::strategy::compat::redis_cluster::redirect::Redirect;

use super::keys::{hex, owned_key, standard_keys, u64_key, utf8};
use super::reference::reference_lines;
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "redis_cluster",
        "The redis_cluster profile: CRC16 hash slots with Redis hash tags, integers as decimal text, slot ranges with replicas, the redis-cli --cluster create split, CLUSTER SLOTS / CLUSTER SHARDS import, and rejected documents.",
        "keyslot-ref cases: CLUSTER KEYSLOT of a real redis-server 7.0.15 (reference/redis-cluster-keyslot.txt); the default split: redis-cli 7.0 clusterManagerCommandCreate (0..=5460, 5461..=10922, 10923..=16383); all other values: generator, checked against redis-server, redis-py 8.1.0 and cluster-key-slot 1.1.2 by conformance/oracles",
    );
    let even = file.topology("even3", doc(&["m0", "m1", "m2"], json!({"type": "redis_cluster"})));
    let mapped_doc = doc(
        &["a", "a-r1", "a-r2", "b", "b-r1", "c", "c-r1", "spare"],
        json!({"type": "redis_cluster", "slots": [
            {"start": 12000, "end": 16383, "nodes": ["a", "a-r1", "a-r2"]},
            {"start": 0, "end": 8000, "nodes": ["a", "a-r2", "a-r1"]},
            {"start": 8001, "end": 11000, "nodes": ["b", "b-r1", "a-r1"]},
            {"start": 11001, "end": 11999, "nodes": ["c", "c-r1", "b-r1"]}
        ]}),
    )
    .epoch(2);
    let mapped = file.topology("mapped", mapped_doc.clone());
    // Slots from the real server: the core must agree before anything is written.
    for (index, line) in reference_lines("redis-cluster-keyslot.txt").iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let key = match (words[0], words[1]) {
            ("u64", value) => u64_key(value.parse().expect("u64")),
            (_, "-") => hex(&[]),
            (_, digits) => json!({ "hex": digits }),
        };
        let owned = owned_key(&key);
        let slot: u32 = words[2].parse().expect("slot");
        assert_eq!(even.route(owned.as_key()).expect("route"), slot, "{line}: core disagrees with redis-server");
        let node = mapped.node(owned.as_key()).expect("node");
        file.case(
            &format!("keyslot-ref/{index:03}"),
            json!({"op": "route", "topology": "mapped", "key": key, "expect": {"shard": slot, "node": node}}),
        );
    }
    routing_cases(&mut file, "even3", &even);
    routing_cases(&mut file, "mapped", &mapped);
    // Rejected documents.
    let slots = |rows: Value| doc(&["a", "b"], json!({"type": "redis_cluster", "slots": rows}));
    let bad = [
        ("hashing-section", mapped_doc.clone().hashing(json!({"hash_tag": "redis"}))),
        ("hashing-crc32", mapped_doc.clone().hashing(json!({"function": "crc32"}))),
        ("gap", slots(json!([{"start": 0, "end": 100, "nodes": ["a"]}, {"start": 102, "end": 16383, "nodes": ["b"]}]))),
        (
            "overlap",
            slots(json!([{"start": 0, "end": 100, "nodes": ["a"]}, {"start": 100, "end": 16383, "nodes": ["b"]}])),
        ),
        ("short", slots(json!([{"start": 0, "end": 16382, "nodes": ["a"]}]))),
        ("slot-16384", slots(json!([{"start": 0, "end": 16384, "nodes": ["a"]}]))),
        ("end-below-start", slots(json!([{"start": 5, "end": 4, "nodes": ["a"]}]))),
        ("unknown-node", slots(json!([{"start": 0, "end": 16383, "nodes": ["z"]}]))),
        ("no-master", slots(json!([{"start": 0, "end": 16383, "nodes": []}]))),
        ("node-twice", slots(json!([{"start": 0, "end": 16383, "nodes": ["a", "a"]}]))),
        ("weight", doc(json!([{"id": "a", "weight": 2}]), json!({"type": "redis_cluster"}))),
        ("unknown-field", doc(&["a"], json!({"type": "redis_cluster", "slot": []}))),
    ];
    refused_documents(&mut file, "reject/", bad.map(|(label, document)| (label, document, "invalid_topology")));
    // Replicas beyond a range's chain.
    let key = json!({"utf8": "{user1000}.following"});
    let count = 4;
    let outcome = mapped.replicas("{user1000}.following", count).map(|_| ());
    expect_error(
        &mut file,
        "mapped/replicas-too-many",
        json!({"op": "replicas", "topology": "mapped", "key": key, "count": count}),
        "invalid_argument",
        outcome,
    );
    import_cases(&mut file);
    redirect_cases(&mut file);
    file
}

/// What a smart client asks while the cluster changes: MOVED and ASK (the calls and the
/// `redis_moved` operation), redirect lines, one-slot multi-key commands, grouping by
/// node, and replica reads.
fn redirect_cases(file: &mut VectorFile) {
    let cluster = file.topology(
        "cluster6",
        doc(
            json!([
                {"id": "m1", "address": "127.0.0.1:7001"}, {"id": "m2", "address": "127.0.0.1:7002"},
                {"id": "m3", "address": "127.0.0.1:7003"}, {"id": "r1", "address": "127.0.0.1:7004"},
                {"id": "r2", "address": "127.0.0.1:7005"}, {"id": "r3", "address": "127.0.0.1:7006"}
            ]),
            json!({"type": "redis_cluster", "slots": [
                {"start": 0, "end": 5460, "nodes": ["m1", "r1"]},
                {"start": 5461, "end": 10922, "nodes": ["m2", "r2"]},
                {"start": 10923, "end": 16383, "nodes": ["m3", "r3"]}
            ]}),
        )
        .epoch(5),
    );
    let even = file.router("even3");
    let mapped = file.router("mapped");
    // MOVED: to a known node, to a new address, to the owner itself, at both ends.
    let moves = [
        ("cluster6", 7, "127.0.0.1:7003"),
        ("cluster6", 5461, "127.0.0.1:7010"),
        ("cluster6", 0, "127.0.0.1:7001"),
        ("cluster6", 16383, "[::1]:7000"),
        ("even3", 100, "10.0.0.9:6379"),
    ];
    for (index, (topology, slot, address)) in moves.into_iter().enumerate() {
        let router = if topology == "even3" { &even } else { &cluster };
        let next = router.moved(slot, address).expect("moved");
        file.case(
            &format!("moved/{index}"),
            json!({"op": "moved", "topology": topology, "slot": slot, "address": address,
                   "expect": {"to_json": next.to_json()}}),
        );
        applied(
            file,
            &format!("redis-moved/{index}"),
            On::Topology(topology),
            json!({"op": "redis_moved", "slot": slot, "address": address}),
        );
        file.case(
            &format!("ask/{index}"),
            json!({"op": "ask", "topology": topology, "slot": slot, "address": address,
                   "expect": {"address": router.ask(slot, address).expect("ask")}}),
        );
    }
    let jump = file.topology("jump2", doc(&["a", "b"], json!({"type": "jump"})));
    for (index, (slot, address)) in
        [(16384, "127.0.0.1:7001"), (1, "127.0.0.1"), (1, "127.0.0.1:0"), (1, "bad host:1"), (1, "")]
            .into_iter()
            .enumerate()
    {
        for op in ["moved", "ask"] {
            let outcome = if op == "moved" {
                cluster.moved(slot, address).map(drop)
            } else {
                cluster.ask(slot, address).map(drop)
            };
            expect_error(
                file,
                &format!("{op}/refused-{index}"),
                json!({"op": op, "topology": "cluster6", "slot": slot, "address": address}),
                "invalid_argument",
                outcome,
            );
        }
    }
    for op in ["moved", "ask"] {
        let outcome = if op == "moved" { jump.moved(1, "h:1").map(drop) } else { jump.ask(1, "h:1").map(drop) };
        let case = json!({"op": op, "topology": "jump2", "slot": 1, "address": "h:1"});
        expect_error(file, &format!("{op}/not-redis"), case, "invalid_argument", outcome);
        apply_refused(
            file,
            &format!("redis-moved/{op}-not-redis"),
            On::Topology("jump2"),
            json!({"op": "redis_moved", "slot": 1, "address": "h:1"}),
            "invalid_argument",
        );
    }
    // A node a MOVED adds takes the address as its id: one longer than an id may be is
    // refused, or the router's own to_json() would not load back.
    let long_address = format!("{}:7001", "h".repeat(2000));
    apply_refused(
        file,
        "redis-moved/address-longer-than-an-id",
        On::Topology("cluster6"),
        json!({"op": "redis_moved", "slot": 1, "address": long_address}),
        "limit_exceeded",
    );
    apply_refused(
        file,
        "redis-moved/slot-16384",
        On::Topology("cluster6"),
        json!({"op": "redis_moved", "slot": 16384, "address": "127.0.0.1:7001"}),
        "invalid_argument",
    );
    // Redirect lines as clients receive them.
    let lines = [
        "MOVED 3999 127.0.0.1:6381",
        "ASK 0 127.0.0.1:7000",
        "-ASK 16383 [::1]:7000\r\n",
        "MOVED 1 :7000",
        "  MOVED   12   10.0.0.1:6379  ",
        "",
        "MOVED",
        "MOVED 1",
        "MOVED abc h:1",
        "MOVED -1 h:1",
        "MOVED 16384 h:1",
        "MOVED 1 h",
        "MOVED 1 h:0",
        "MOVED 1 h:65536",
        "MOVED 1 h:1 extra",
        "moved 1 h:1",
        "ERR unknown command",
    ];
    for (index, line) in lines.iter().enumerate() {
        let case = json!({"op": "parse_redirect", "line": line});
        match Redirect::parse(line) {
            Ok(redirect) => {
                let mut case = case;
                case["expect"] =
                    json!({"kind": redirect.kind.as_str(), "slot": redirect.slot, "address": redirect.address});
                file.case(&format!("parse-redirect/{index:02}"), case);
            }
            Err(err) => expect_error(file, &format!("parse-redirect/{index:02}"), case, "invalid_argument", Err(err)),
        }
    }
    // Multi-key commands: one slot, or cross_slot.
    let groups = [
        vec![utf8("{user:1}.name"), utf8("{user:1}.mail"), utf8("user:1")],
        vec![utf8("{42}"), u64_key(42)],
        vec![hex(b"{\xff}a"), hex(b"{\xff}b")],
        vec![utf8("{user:1}.name"), utf8("{user:2}.name")],
        vec![utf8("a"), utf8("b"), utf8("c")],
        vec![],
    ];
    for (index, keys) in groups.into_iter().enumerate() {
        let owned: Vec<_> = keys.iter().map(owned_key).collect();
        let case = json!({"op": "same_slot", "topology": "cluster6", "keys": keys});
        match cluster.same_slot(owned.iter().map(|key| key.as_key())) {
            Ok(shard) => {
                let mut case = case;
                case["expect"] = json!({"shard": shard});
                file.case(&format!("same-slot/{index}"), case);
            }
            Err(err) => {
                let code = err.code();
                expect_error(file, &format!("same-slot/{index}"), case, code, Err(err));
            }
        }
    }
    // Pipelines: keys grouped by node, every key once, in input order.
    let keys: Vec<Value> = standard_keys().into_iter().map(|(_, key)| key).take(60).collect();
    let owned: Vec<_> = keys.iter().map(owned_key).collect();
    for (topology, router) in [("cluster6", &cluster), ("mapped", &mapped), ("even3", &even)] {
        let groups = router.group_by_node(owned.iter().map(|key| key.as_key())).expect("groups");
        let groups: Vec<Value> =
            groups.iter().map(|(node, indices)| json!([router.nodes()[*node as usize].id, indices])).collect();
        file.case(
            &format!("group-by-node/{topology}"),
            json!({"op": "group_by_node", "topology": topology, "keys": keys, "expect": {"groups": groups}}),
        );
    }
    // Replica reads: round-robin over the chain's replicas; the owner without one.
    for (topology, router) in [("cluster6", &cluster), ("mapped", &mapped), ("even3", &even)] {
        for (index, key) in keys.iter().take(8).enumerate() {
            for turn in [0u32, 1, 2, 7] {
                let node = router.read_replica(owned[index].as_key(), turn).expect("read_replica");
                file.case(
                    &format!("read-replica/{topology}/{index}-{turn}"),
                    json!({"op": "read_replica", "topology": topology, "key": key, "turn": turn, "expect": {"node": node}}),
                );
            }
        }
    }
}

/// `apply` cases of the import operations, with replies shaped as redis-server 7.0
/// returns them (RESP2 arrays; CLUSTER SHARDS also as RESP3 maps).
fn import_cases(file: &mut VectorFile) {
    let id = |c: char| c.to_string().repeat(40);
    let slots_reply = json!([
        [0, 8000, ["10.0.0.1", 6379, id('a'), []], ["10.0.0.3", 6379, id('c'), []]],
        [8001, 11999, ["10.0.0.2", 6380, id('b'), []]],
        [12000, 16383, ["10.0.0.1", 6379, id('a'), []], ["10.0.0.3", 6379, id('c'), []]]
    ]);
    let node = |c: char, ip: &str, port: u64, role: &str, health: &str| {
        json!([
            "id",
            id(c),
            "port",
            port,
            "ip",
            ip,
            "endpoint",
            ip,
            "role",
            role,
            "replication-offset",
            0,
            "health",
            health
        ])
    };
    let shards_resp2 = json!([
        [
            "slots",
            [0, 8000, 12000, 16383],
            "nodes",
            [node('a', "10.0.0.1", 6379, "master", "online"), node('c', "10.0.0.3", 6379, "replica", "failed")]
        ],
        ["slots", [8001, 11999], "nodes", [node('b', "::1", 6380, "master", "online")]],
        ["slots", [], "nodes", [node('d', "10.0.0.4", 6379, "master", "online")]]
    ]);
    let shards_resp3 = json!([
        {"slots": [[0, 16383]], "nodes": [{"id": id('a'), "port": 7000, "ip": "127.0.0.1", "endpoint": "?", "role": "master", "health": "online"}]}
    ]);
    let cases = [
        ("import-slots", json!({"op": "import_redis_cluster_slots", "reply": slots_reply})),
        ("import-shards-resp2", json!({"op": "import_redis_cluster_shards", "reply": shards_resp2})),
        ("import-shards-resp3", json!({"op": "import_redis_cluster_shards", "reply": shards_resp3})),
    ];
    for (what, operation) in cases {
        applied(file, &format!("mapped/{what}"), On::Topology("mapped"), operation);
    }
    let bad = [
        ("import-gap", json!({"op": "import_redis_cluster_slots", "reply": [[0, 100, ["h", 1, id('a')]]]})),
        ("import-no-id", json!({"op": "import_redis_cluster_slots", "reply": [[0, 16383, ["h", 1]]]})),
        ("import-not-array", json!({"op": "import_redis_cluster_slots", "reply": {}})),
        (
            "import-shards-two-masters",
            json!({"op": "import_redis_cluster_shards", "reply": [
            {"slots": [0, 16383], "nodes": [
                {"id": id('a'), "ip": "h", "port": 1, "role": "master"},
                {"id": id('b'), "ip": "h", "port": 2, "role": "master"}]}]}),
        ),
    ];
    for (what, operation) in bad {
        apply_refused(file, &format!("mapped/{what}"), On::Topology("mapped"), operation, "invalid_argument");
    }
    // Hostile replies (issue 34): refused before the work they would cause, and node ids
    // held to the document's rules (an import never installs an id `to_json` cannot load).
    let master = |c: char| json!({"id": id(c), "ip": "h", "port": 1, "role": "master"});
    let replica = |c: char| json!({"id": id(c), "ip": "h", "port": 2, "role": "replica"});
    let shard_of = |slots: Value, nodes: Vec<Value>| json!({"op": "import_redis_cluster_shards", "reply": [{"slots": slots, "nodes": nodes}]});
    let shard_ids = |master_id: &str| {
        json!({"op": "import_redis_cluster_shards", "reply": [
            {"slots": [0, 16383], "nodes": [{"id": master_id, "ip": "h", "port": 1, "role": "master"}]}]})
    };
    let slots_ids =
        |master_id: &str| json!({"op": "import_redis_cluster_slots", "reply": [[0, 16383, ["h", 1, master_id]]]});
    let long_id = "n".repeat(1025);
    // 17 nodes: one past 1 master + 15 replicas.
    let mut chain = vec![master('a')];
    chain.extend("bcdefghijklmnopq".chars().map(replica));
    let hostile = [
        ("import-shards-overlap", shard_of(json!([[0, 16383], [0, 0]]), vec![master('a')]), "invalid_argument"),
        (
            "import-shards-overlap-across-shards",
            json!({"op": "import_redis_cluster_shards", "reply": [
                {"slots": [0, 100], "nodes": [master('a')]}, {"slots": [100, 16383], "nodes": [master('b')]}]}),
            "invalid_argument",
        ),
        ("import-shards-end-before-start", shard_of(json!([16383, 0]), vec![master('a')]), "invalid_argument"),
        (
            "import-shards-more-pairs-than-slots",
            shard_of(Value::Array(vec![json!(0); 2 * 16_385]), vec![master('a')]),
            "limit_exceeded",
        ),
        ("import-shards-chain-past-replica-limit", shard_of(json!([0, 16383]), chain), "limit_exceeded"),
        (
            "import-shards-node-listed-twice",
            shard_of(json!([0, 16383]), vec![master('a'), replica('b'), replica('a')]),
            "invalid_argument",
        ),
        (
            "import-slots-overlap",
            json!({"op": "import_redis_cluster_slots", "reply": [[0, 16383, ["h", 1, id('a')]], [5, 5, ["h", 2, id('b')]]]}),
            "invalid_argument",
        ),
        ("import-shards-empty-id", shard_ids(""), "invalid_argument"),
        ("import-shards-id-past-1024-bytes", shard_ids(&long_id), "limit_exceeded"),
        ("import-slots-empty-id", slots_ids(""), "invalid_argument"),
        ("import-slots-id-past-1024-bytes", slots_ids(&long_id), "limit_exceeded"),
    ];
    for (what, operation, code) in hostile {
        apply_refused(file, &format!("mapped/{what}"), On::Topology("mapped"), operation, code);
    }
}
