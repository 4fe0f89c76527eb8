//! `scatter.json`: scatter/gather plans (`Router::scatter`): every shard, a key range or
//! a set of keys, one node per shard under each read policy, and the gather rule. The
//! small cases state their plan by hand (a vbucket map of 8 and a key range of 3 read
//! off the documents, and a set of keys grouped by their routed shards), and the
//! generator checks the core gives exactly that before writing anything; the rest pin
//! the core's answer.

use serde_json::{json, Value};

use shardroute::scatter::{ReadFrom, Scope};
use shardroute::{OwnedKey, Router};

use super::cases::expect_error;
use super::keys::{owned_key, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::doc;

/// The vbucket map of vbucket.json's `vbucket-map-8`, with zones on the nodes.
fn map8() -> Value {
    doc(
        json!([{"id": "a", "zone": "east"}, {"id": "b", "zone": "west"}, {"id": "c", "zone": "west"}]),
        json!({"type": "vbucket", "vbuckets": 8, "map": [["b", "a"], ["c"], ["a", "c", "b"], ["a", "b"], ["b"], ["c", "a"], ["a"], ["b", "c"]]}),
    )
}

/// The policy fields of a case.
fn policy(read_from: &str, turn: u32, zone: Option<&str>) -> Value {
    json!({"read_from": read_from, "turn": turn, "zone": zone})
}

fn merged(mut case: Value, more: Value) -> Value {
    if let (Value::Object(case), Value::Object(more)) = (&mut case, more) {
        case.extend(more);
    }
    case
}

/// The core's plan for `case` (its scope and policy fields).
fn plan(router: &Router, case: &Value) -> shardroute::Result<Value> {
    let read_from = ReadFrom::from_name(
        case["read_from"].as_str().expect("read_from"),
        case["turn"].as_u64().expect("turn") as u32,
        case["zone"].as_str(),
    )?;
    let keys: Vec<OwnedKey> =
        case.get("keys").map_or_else(Vec::new, |keys| keys.as_array().expect("keys").iter().map(owned_key).collect());
    let core_keys: Vec<shardroute::Key<'_>> = keys.iter().map(OwnedKey::as_key).collect();
    let start = case.get("start").map(owned_key);
    let end = case.get("end").filter(|end| !end.is_null()).map(owned_key);
    let scope = match case["scope"].as_str().expect("scope") {
        "every" => Scope::Every,
        "range" => {
            Scope::Range { start: start.as_ref().expect("start").as_key(), end: end.as_ref().map(OwnedKey::as_key) }
        }
        _ => Scope::Keys(&core_keys),
    };
    Ok(router.scatter(scope, read_from)?.to_value(router))
}

/// A case whose plan is stated by hand: the core must give `expect`.
fn stated(file: &mut VectorFile, router: &Router, name: &str, case: Value, expect: Value) {
    let got = plan(router, &case).unwrap_or_else(|err| panic!("{name}: {err}"));
    assert_eq!(got, expect, "{name}: the core's plan differs from the one stated by hand");
    file.case(name, merged(case, json!({"expect": expect})));
}

/// A case that pins the core's plan.
fn pinned(file: &mut VectorFile, router: &Router, name: &str, case: Value) {
    let got = plan(router, &case).unwrap_or_else(|err| panic!("{name}: {err}"));
    file.case(name, merged(case, json!({"expect": got})));
}

fn visit(shard: u32, node: &str, keys: &[u32]) -> Value {
    json!({"shard": shard, "node": node, "keys": keys})
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "scatter",
        "Scatter/gather plans: every shard, a key range or a set of keys; one node per shard (primary, replicas in turn, a zone); the gather rule (union, concat, merge).",
        "the map-8 and key-range cases stated by hand from their documents and checked against the core; the others generator",
    );

    // A vbucket map of 8: every shard under each policy, read off the map by hand.
    let map = file.topology("scatter-map-8", map8());
    let chains: [&[&str]; 8] =
        [&["b", "a"], &["c"], &["a", "c", "b"], &["a", "b"], &["b"], &["c", "a"], &["a"], &["b", "c"]];
    let every = |pick: &dyn Fn(u32, &[&str]) -> &'static str| -> Value {
        let visits: Vec<Value> =
            (0u32..8).map(|shard| visit(shard, pick(shard, chains[shard as usize]), &[])).collect();
        json!({"gather": "union", "visits": visits})
    };
    let name = |node: &str| -> &'static str {
        match node {
            "a" => "a",
            "b" => "b",
            _ => "c",
        }
    };
    let base = json!({"op": "scatter", "topology": "scatter-map-8", "scope": "every"});
    stated(
        &mut file,
        &map,
        "scatter/map-8/every/primary",
        merged(base.clone(), policy("primary", 0, None)),
        every(&|_, chain| name(chain[0])),
    );
    // Replicas: shard i reads replica (turn + i) % len of the chain past its owner.
    for turn in [0u32, 1, 4_294_967_295] {
        let expect = every(&|shard, chain| match chain {
            [owner] => name(owner),
            [_, replicas @ ..] => name(replicas[(turn.wrapping_add(shard) as usize) % replicas.len()]),
            [] => unreachable!(),
        });
        stated(
            &mut file,
            &map,
            &format!("scatter/map-8/every/replicas-turn-{turn}"),
            merged(base.clone(), policy("replicas", turn, None)),
            expect,
        );
    }
    // Zone "east" is a's: a shard whose chain holds a reads a; the others their owner.
    let east = every(&|_, chain| if chain.contains(&"a") { "a" } else { name(chain[0]) });
    stated(
        &mut file,
        &map,
        "scatter/map-8/every/zone-east",
        merged(base.clone(), policy("zone", 0, Some("east"))),
        east,
    );
    let nowhere = every(&|_, chain| name(chain[0]));
    stated(
        &mut file,
        &map,
        "scatter/map-8/every/zone-without-nodes",
        merged(base.clone(), policy("zone", 0, Some("mars"))),
        nowhere,
    );
    // A range over a hashed placement visits every shard and merges by key.
    let range =
        json!({"op": "scatter", "topology": "scatter-map-8", "scope": "range", "start": utf8("a"), "end": utf8("b")});
    let mut expect = every(&|_, chain| name(chain[0]));
    expect["gather"] = json!("merge");
    stated(&mut file, &map, "scatter/map-8/range/primary", merged(range, policy("primary", 0, None)), expect);

    // A key range of three: boundaries g and p; a range's shards in key order, concatenated.
    let ranges = file.topology(
        "scatter-key-range-3",
        doc(&["r0", "r1", "r2"], json!({"type": "key_range", "boundaries": [utf8("g"), utf8("p")]})),
    );
    for (label, start, end, shards) in [
        ("a-to-c", utf8("a"), utf8("c"), vec![0u32]),
        ("h-to-z", utf8("h"), utf8("z"), vec![1, 2]),
        ("a-to-end", utf8("a"), Value::Null, vec![0, 1, 2]),
        ("g-to-p", utf8("g"), utf8("p"), vec![1]),
    ] {
        let visits: Vec<Value> =
            shards.iter().map(|&shard| visit(shard, ["r0", "r1", "r2"][shard as usize], &[])).collect();
        stated(
            &mut file,
            &ranges,
            &format!("scatter/key-range-3/range/{label}"),
            merged(
                json!({"op": "scatter", "topology": "scatter-key-range-3", "scope": "range", "start": start, "end": end}),
                policy("primary", 0, None),
            ),
            json!({"gather": "concat", "visits": visits}),
        );
    }
    expect_error(
        &mut file,
        "scatter/key-range-3/range/end-before-start",
        merged(
            json!({"op": "scatter", "topology": "scatter-key-range-3", "scope": "range", "start": utf8("z"), "end": utf8("a")}),
            policy("primary", 0, None),
        ),
        "invalid_argument",
        ranges.scatter(Scope::Range { start: "z".into(), end: Some("a".into()) }, ReadFrom::Primary).map(drop),
    );

    // A set of keys on jump: each distinct shard once, in first-key order, with its keys;
    // the expectation grouped here from each key's routed shard.
    let jump = file.topology("scatter-jump-4", doc(&["j0", "j1", "j2", "j3"], json!({"type": "jump"})));
    let keys: Vec<Value> = (0u64..12).map(u64_key).chain(["user:1", "user:2", "", "ünï"].map(utf8)).collect();
    let mut groups: Vec<(u32, Vec<u32>)> = Vec::new();
    for (index, key) in keys.iter().enumerate() {
        let shard = jump.route(owned_key(key).as_key()).expect("route");
        match groups.iter_mut().find(|(known, _)| *known == shard) {
            Some((_, indices)) => indices.push(index as u32),
            None => groups.push((shard, vec![index as u32])),
        }
    }
    let visits: Vec<Value> = groups
        .iter()
        .map(|(shard, indices)| visit(*shard, ["j0", "j1", "j2", "j3"][*shard as usize], indices))
        .collect();
    let keyed = json!({"op": "scatter", "topology": "scatter-jump-4", "scope": "keys", "keys": keys});
    stated(
        &mut file,
        &jump,
        "scatter/jump-4/keys/primary",
        merged(keyed.clone(), policy("primary", 0, None)),
        json!({"gather": "union", "visits": visits}),
    );
    // Hashed placements have no replica chains: replicas and zones read the owner too.
    pinned(&mut file, &jump, "scatter/jump-4/keys/replicas", merged(keyed.clone(), policy("replicas", 7, None)));
    pinned(
        &mut file,
        &jump,
        "scatter/jump-4/every/primary",
        merged(json!({"op": "scatter", "topology": "scatter-jump-4", "scope": "every"}), policy("primary", 0, None)),
    );
    pinned(
        &mut file,
        &jump,
        "scatter/jump-4/keys/none",
        merged(
            json!({"op": "scatter", "topology": "scatter-jump-4", "scope": "keys", "keys": []}),
            policy("primary", 0, None),
        ),
    );

    // Redis Cluster: slots with replicas; a set of keys with hash tags shares slots.
    let redis = file.topology(
        "scatter-redis-6",
        doc(
            json!([{"id": "m1", "zone": "z1"}, {"id": "m2", "zone": "z2"}, {"id": "m3", "zone": "z3"}, {"id": "r1", "zone": "z2"}, {"id": "r2", "zone": "z3"}, {"id": "r3", "zone": "z1"}]),
            json!({"type": "redis_cluster", "slots": [
                {"start": 0, "end": 5460, "nodes": ["m1", "r1"]},
                {"start": 5461, "end": 10922, "nodes": ["m2", "r2"]},
                {"start": 10923, "end": 16383, "nodes": ["m3", "r3"]}
            ]}),
        ),
    );
    let tagged: Vec<Value> = ["{user:1}.name", "{user:1}.mail", "user:2", "{user:1}.tags", "a", "b"].map(utf8).into();
    for (label, read_from, turn, zone) in
        [("primary", "primary", 0, None), ("replicas", "replicas", 0, None), ("zone-z1", "zone", 0, Some("z1"))]
    {
        pinned(
            &mut file,
            &redis,
            &format!("scatter/redis-6/keys/{label}"),
            merged(
                json!({"op": "scatter", "topology": "scatter-redis-6", "scope": "keys", "keys": tagged}),
                policy(read_from, turn, zone),
            ),
        );
    }

    // Refusals: a policy the core does not know, a zone policy without a zone, a bad key.
    for (label, read_from, zone, code) in [
        ("unknown-policy", "nearest", None, "invalid_argument"),
        ("zone-without-zone", "zone", None, "invalid_argument"),
    ] {
        expect_error(
            &mut file,
            &format!("scatter/map-8/every/{label}"),
            merged(json!({"op": "scatter", "topology": "scatter-map-8", "scope": "every"}), policy(read_from, 0, zone)),
            code,
            ReadFrom::from_name(read_from, 0, zone).map(drop),
        );
    }
    file
}
