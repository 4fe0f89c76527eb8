//! `migration.json`: moving data between two topologies (`Migration`). The 1-based
//! `id % n ?: n` from 5 to 10 servers over a spread of user ids, a ring from 3 to 4
//! nodes, jump from 4 to 5 buckets, a vbucket dictionary in motion (`of_dictionary`) and
//! the dictionaries before and after its moves, a Redis slot moved: where keys go, where
//! writes and reads go, the moving shards and keys; `Router.shard_owner`; and the
//! refusals (a stale epoch, moving shards of node indices or of different partitions, a
//! dictionary with nothing moving, bad keys).

use serde_json::{json, Value};
use shardroute::migration::Migration;
use shardroute::Error;

use super::cases::{applied, expect_error, load_case, result_or_error, On};
use super::keys::{hex, owned_key, standard_keys, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, strategy, Document};

/// The two sides of a case: two topologies, or one vbucket dictionary in motion.
#[derive(Clone, Copy)]
enum Sides<'a> {
    Pair(&'a str, &'a str),
    Dictionary(&'a str),
}

impl Sides<'_> {
    /// The case fields that name the sides.
    fn fields(self, op: &str) -> Value {
        match self {
            Sides::Pair(before, after) => json!({"op": op, "before": before, "after": after}),
            Sides::Dictionary(id) => json!({"op": op, "dictionary": id}),
        }
    }

    /// The fields of a `migration` case for `key`.
    fn key(self, key: &Value, moved: bool) -> Value {
        let mut case = self.fields("migration");
        case["key"] = key.clone();
        case["moved"] = json!(moved);
        case
    }

    /// The fields of a `migration_keys` case for `keys`.
    fn keys(self, keys: &[Value]) -> Value {
        let mut case = self.fields("migration_keys");
        case["keys"] = json!(keys);
        case
    }

    /// The migration, as a runner builds it.
    fn build(self, file: &VectorFile) -> Result<Migration, Error> {
        match self {
            Sides::Pair(before, after) => Migration::new(file.router(before), file.router(after)),
            Sides::Dictionary(id) => Migration::of_dictionary(&file.router(id)),
        }
    }
}

/// A `migration` case `<what>`: what the core answers for `key` (moves, write target and
/// read targets with `moved`), or the error.
fn key_case(file: &mut VectorFile, sides: Sides, what: &str, key: &Value, moved: bool) -> Option<bool> {
    let owned = owned_key(key);
    let answer = sides.build(file).and_then(|migration| {
        let moves = migration.moves(owned.as_key())?;
        Ok(json!({
            "moves": moves.map(|(from, to)| [from, to]),
            "write_target": migration.write_target(owned.as_key())?,
            "read_targets": migration.read_targets(owned.as_key(), moved)?,
        }))
    });
    let moves = answer.as_ref().ok().map(|result| !result["moves"].is_null());
    let mut case = sides.key(key, moved);
    case["expect"] = result_or_error(answer, |result| result);
    file.case(what, case);
    moves
}

/// `migration` cases `<prefix>/<label>` for every key, with `moved` false, and again with
/// `moved` true (`<prefix>/<label>/moved`) for the first `moved_too` keys that move.
fn key_cases(file: &mut VectorFile, sides: Sides, prefix: &str, keys: &[(String, Value)], moved_too: usize) {
    let mut left = moved_too;
    for (label, key) in keys {
        let moves = key_case(file, sides, &format!("{prefix}/{label}"), key, false).expect("every key routes");
        if moves && left > 0 {
            key_case(file, sides, &format!("{prefix}/{label}/moved"), key, true);
            left -= 1;
        }
    }
}

/// A `migration_keys` case `<what>`: the indices of the keys that change node.
fn keys_case(file: &mut VectorFile, sides: Sides, what: &str, keys: &[Value]) {
    let owned: Vec<_> = keys.iter().map(owned_key).collect();
    let answer = sides.build(file).and_then(|migration| migration.moving_keys(owned.iter().map(|key| key.as_key())));
    let mut case = sides.keys(keys);
    case["expect"] = result_or_error(answer, |indices| json!({ "indices": indices }));
    file.case(what, case);
}

/// A `migration_shards` case `<what>`: the shards whose owner changes.
fn shards_case(file: &mut VectorFile, sides: Sides, what: &str) {
    let answer = sides.build(file).and_then(|migration| {
        let shards = migration.moving_shards()?;
        Ok(shards.iter().map(|moving| json!([moving.shard, moving.from, moving.to])).collect::<Vec<_>>())
    });
    let mut case = sides.fields("migration_shards");
    case["expect"] = result_or_error(answer, |shards| json!({ "shards": shards }));
    file.case(what, case);
}

/// A `migration_scan` case `<what>`: the nodes a query over every key reads, in order.
/// Checked here by the relation that makes the order safe: for every shard that moves,
/// and every key of `keys` that moves, some read of the old node comes before some read
/// of the new one.
fn scan_case(file: &mut VectorFile, sides: Sides, what: &str, keys: &[Value]) {
    let migration = sides.build(file).expect("a migration");
    let order = migration.scan_nodes();
    let safe = |from: &str, to: &str| {
        let first = order.iter().position(|&id| id == from);
        let last = order.iter().rposition(|&id| id == to);
        matches!((first, last), (Some(first), Some(last)) if first < last)
    };
    for moving in migration.moving_shards().unwrap_or_default() {
        assert!(safe(moving.from, moving.to), "{what}: shard {moving:?} is not safe in {order:?}");
    }
    for key in keys {
        let key = crate::run::to_key(key).expect("a key form").expect("a key");
        if let Some((from, to)) = migration.moves(key.as_key()).expect("routes") {
            assert!(safe(from, to), "{what}: a key moving {from} -> {to} is not safe in {order:?}");
        }
    }
    let mut case = sides.fields("migration_scan");
    case["expect"] = json!({ "nodes": order });
    file.case(what, case);
}

/// `shard_owner` cases `shard-owner/<id>/<shard>`: the node, or the error.
fn owner_cases(file: &mut VectorFile, id: &str, shards: &[u32]) {
    let router = file.router(id);
    for &shard in shards {
        file.case(
            &format!("shard-owner/{id}/{shard}"),
            json!({"op": "shard_owner", "topology": id, "shard": shard,
                   "expect": result_or_error(router.shard_owner(shard), |node| json!({ "node": node }))}),
        );
    }
}

/// `count` servers `shard_1..shard_count`.
fn servers(count: usize) -> Vec<String> {
    (1..=count).map(|i| format!("shard_{i}")).collect()
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "migration",
        "Migrations between two topologies: moves, write_target and read_targets (modulo 5 -> 10 over user ids, ring 3 -> 4, jump 4 -> 5, a vbucket dictionary in motion), moving_shards (vbucket dictionaries, a Redis slot, two vbuckets that trade places), scan_nodes (the order a query over every key reads the nodes in while data moves; each case checked by the generator: some read of every move's old node comes before a read of its new one), moving_keys, shard_owner, and the refusals (stale epochs, shards that are not fixed partitions, nothing moving, bad keys).",
        "generator; the modulo 5 -> 10 cases are plain arithmetic (user_id % 5 vs % 10, 0 as n)",
    );
    // The 1-based `id % n ?: n`, user ids as their own hash.
    let seed =
        |count: usize| doc(&servers(count)[..], strategy("modulo", json!({"one_based": true}))).hashing(identity());
    file.topology("modulo-5", seed(5));
    file.topology("modulo-10", seed(10).epoch(2));
    file.topology("modulo-5-shrunk", seed(5).epoch(3));
    file.topology("ring-3", doc(&["a", "b", "c"], json!({"type": "ring"})));
    file.topology("ring-4", doc(&["a", "b", "c", "d"], json!({"type": "ring"})).epoch(2));
    file.topology("jump-4", doc(4usize, json!({"type": "jump"})));
    file.topology("jump-5", doc(5usize, json!({"type": "jump"})).epoch(2));
    // A dictionary, the same in motion after a planned rebalance, and after its moves.
    file.topology("vbucket-start", doc(&servers(5)[..], json!({"type": "vbucket", "vbuckets": 64})));
    let add = json!({"op": "plan_rebalance", "add": [{"id": "shard_6"}, {"id": "shard_7"}]});
    let moving = applied(&mut file, "apply/plan-rebalance", On::Topology("vbucket-start"), add);
    file.topology("vbucket-moving", moving["topology"].clone());
    let complete = json!({"op": "complete_moves"});
    let done = applied(&mut file, "apply/complete-moves", On::Topology("vbucket-moving"), complete);
    file.topology("vbucket-done", done["topology"].clone());
    file.topology("vbucket-128", doc(&servers(5)[..], json!({"type": "vbucket", "vbuckets": 128})).epoch(4));
    // Two vbuckets that trade places (moves both ways between shard_1 and shard_2).
    let swap = |map: [&str; 4]| {
        let map: Vec<Value> = map.iter().map(|id| json!([id])).collect();
        doc(&servers(3)[..], json!({"type": "vbucket", "vbuckets": 4, "map": map}))
    };
    file.topology("vbucket-swap-before", swap(["shard_1", "shard_2", "shard_3", "shard_1"]));
    file.topology("vbucket-swap-after", swap(["shard_2", "shard_1", "shard_3", "shard_1"]).epoch(2));
    // The same map, but one key that lives on shard_3 sent by a vbucket override to
    // vbucket 0 (shard_1): no shard changes owner, the key moves all the same.
    let on_shard_3 = (0..)
        .map(|i| format!("user:{i}"))
        .find(|key| file.router("vbucket-swap-before").node(key.as_str()).expect("routes") == "shard_3")
        .expect("a key on shard_3");
    let mut overridden = swap(["shard_1", "shard_2", "shard_3", "shard_1"]).epoch(2);
    overridden["strategy"]["overrides"] = json!([{"key": utf8(&on_shard_3), "vbucket": 0}]);
    file.topology("vbucket-override-after", overridden);
    // Redis Cluster: one slot moved to another master.
    let cluster = doc(
        json!([{"id": "m1", "address": "127.0.0.1:7001"}, {"id": "m2", "address": "127.0.0.1:7002"},
               {"id": "m3", "address": "127.0.0.1:7003"}]),
        json!({"type": "redis_cluster", "slots": [
            {"start": 0, "end": 5460, "nodes": ["m1"]},
            {"start": 5461, "end": 10922, "nodes": ["m2"]},
            {"start": 10923, "end": 16383, "nodes": ["m3"]}
        ]}),
    )
    .epoch(5);
    let redis = file.topology("redis", cluster);
    let moved = redis.moved(100, "127.0.0.1:7003").expect("moved");
    file.topology("redis-moved", serde_json::from_str(&moved.to_json()).expect("canonical JSON"));
    for id in file.topology_ids() {
        let router = file.router(&id);
        load_case(&mut file, &id, &router);
    }

    // Where keys go, writes and reads: user ids across both tables and at the edges.
    let mut users: Vec<u64> = (0..=20).collect();
    users.extend([25, 26, 99, 100, 101, 4999, 5000, 65_537, 1 << 32, (1 << 53) + 1, u64::MAX]);
    let mut keys: Vec<(String, Value)> = users.iter().map(|&id| (format!("user-{id}"), u64_key(id))).collect();
    keys.extend([
        ("text".into(), utf8("user:1")),
        ("cyrillic".into(), utf8("ключ")),
        ("bytes".into(), hex(&[0xff, 0])),
    ]);
    // The arithmetic the source line states: `id % n`, 0 as `n`.
    let server = |id: u64, n: u64| format!("shard_{}", if id.is_multiple_of(n) { n } else { id % n });
    let seed_migration = Sides::Pair("modulo-5", "modulo-10").build(&file).expect("a migration forward");
    for &id in &users {
        let (from, to) = (server(id, 5), server(id, 10));
        let stated = (from != to).then_some((from.as_str(), to.as_str()));
        assert_eq!(seed_migration.moves(id).expect("routes"), stated, "user {id}: core disagrees");
    }
    key_cases(&mut file, Sides::Pair("modulo-5", "modulo-10"), "modulo-5-10", &keys, 4);
    key_cases(&mut file, Sides::Pair("modulo-10", "modulo-5-shrunk"), "modulo-10-5", &keys[..12], 0);
    let standard: Vec<(String, Value)> = standard_keys().into_iter().take(24).collect();
    key_cases(&mut file, Sides::Pair("ring-3", "ring-4"), "ring-3-4", &standard, 2);
    key_cases(&mut file, Sides::Pair("jump-4", "jump-5"), "jump-4-5", &standard, 2);
    let texts: Vec<(String, Value)> = (0..40).map(|i| (format!("user-{i}"), utf8(&format!("user:{i}")))).collect();
    key_cases(&mut file, Sides::Dictionary("vbucket-moving"), "dictionary", &texts, 3);

    // What a copy job moves: the keys of a list, the shards of fixed partitions.
    let hundred: Vec<Value> = (1..=100).map(u64_key).collect();
    let standard_values: Vec<Value> = standard_keys().into_iter().map(|(_, key)| key).collect();
    let text_values: Vec<Value> = (0..100).map(|i| utf8(&format!("user:{i}"))).collect();
    keys_case(&mut file, Sides::Pair("modulo-5", "modulo-10"), "moving-keys/modulo-5-10/users-1-100", &hundred);
    keys_case(&mut file, Sides::Pair("modulo-5", "modulo-10"), "moving-keys/modulo-5-10/standard", &standard_values);
    keys_case(&mut file, Sides::Pair("modulo-5", "modulo-10"), "moving-keys/modulo-5-10/none", &[]);
    keys_case(&mut file, Sides::Pair("ring-3", "ring-4"), "moving-keys/ring-3-4/standard", &standard_values);
    keys_case(&mut file, Sides::Pair("jump-4", "jump-5"), "moving-keys/jump-4-5/standard", &standard_values);
    keys_case(&mut file, Sides::Dictionary("vbucket-moving"), "moving-keys/dictionary/users", &text_values);
    keys_case(
        &mut file,
        Sides::Pair("vbucket-start", "vbucket-done"),
        "moving-keys/vbucket-start-done/users",
        &text_values,
    );
    shards_case(&mut file, Sides::Dictionary("vbucket-moving"), "moving-shards/dictionary");
    shards_case(&mut file, Sides::Pair("vbucket-start", "vbucket-done"), "moving-shards/vbucket-start-done");
    shards_case(&mut file, Sides::Pair("vbucket-start", "vbucket-moving"), "moving-shards/vbucket-start-moving");
    shards_case(&mut file, Sides::Pair("redis", "redis-moved"), "moving-shards/redis-moved");
    shards_case(&mut file, Sides::Pair("vbucket-swap-before", "vbucket-swap-after"), "moving-shards/swap");

    // The nodes a query over every key reads while data moves, in order.
    let many: Vec<Value> = (0..2000).map(u64_key).chain((0..500).map(|i| utf8(&format!("user:{i}")))).collect();
    for (what, sides) in [
        ("dictionary", Sides::Dictionary("vbucket-moving")),
        ("vbucket-start-done", Sides::Pair("vbucket-start", "vbucket-done")),
        ("vbucket-start-moving", Sides::Pair("vbucket-start", "vbucket-moving")),
        ("swap", Sides::Pair("vbucket-swap-before", "vbucket-swap-after")),
        ("override", Sides::Pair("vbucket-swap-before", "vbucket-override-after")),
        ("redis-moved", Sides::Pair("redis", "redis-moved")),
        ("modulo-5-10", Sides::Pair("modulo-5", "modulo-10")),
        ("modulo-10-5", Sides::Pair("modulo-10", "modulo-5-shrunk")),
        ("ring-3-4", Sides::Pair("ring-3", "ring-4")),
        ("jump-4-5", Sides::Pair("jump-4", "jump-5")),
        ("vbucket-to-redis", Sides::Pair("vbucket-start", "redis-moved")),
    ] {
        scan_case(&mut file, sides, &format!("scan-nodes/{what}"), &many);
    }

    // Who owns a shard, in the range route returns and just outside it.
    owner_cases(&mut file, "modulo-5", &[0, 1, 2, 3, 4, 5, 6]);
    owner_cases(&mut file, "ring-3", &[0, 1, 2, 3]);
    owner_cases(&mut file, "jump-5", &[0, 4, 5]);
    owner_cases(&mut file, "vbucket-moving", &[0, 1, 31, 63, 64]);
    owner_cases(&mut file, "redis-moved", &[0, 99, 100, 101, 5461, 16383, 16384, u32::MAX]);

    refusals(&mut file);
    file
}

/// Cases every runner must refuse with the core's code.
fn refusals(file: &mut VectorFile) {
    let user = u64_key(7);
    // A migration goes forward: after's epoch must be higher than before's.
    for (label, before, after) in [("older", "modulo-10", "modulo-5"), ("same", "modulo-5", "modulo-5")] {
        let sides = Sides::Pair(before, after);
        let outcome = sides.build(file).map(drop);
        for (op, case) in [
            ("migration", sides.key(&user, false)),
            ("shards", sides.fields("migration_shards")),
            ("keys", sides.keys(std::slice::from_ref(&user))),
        ] {
            expect_error(file, &format!("stale-epoch/{label}/{op}"), case, "stale_epoch", outcome.clone());
        }
    }
    // Moving shards needs the same fixed partitions on both sides.
    for (label, before, after) in [
        ("modulo", "modulo-5", "modulo-10"),
        ("ring", "ring-3", "ring-4"),
        ("jump", "jump-4", "jump-5"),
        ("vbucket-to-redis", "vbucket-start", "redis-moved"),
        ("vbucket-64-to-128", "vbucket-start", "vbucket-128"),
    ] {
        let sides = Sides::Pair(before, after);
        let outcome = sides.build(file).and_then(|migration| migration.moving_shards().map(drop));
        let what = format!("moving-shards/refused-{label}");
        expect_error(file, &what, sides.fields("migration_shards"), "invalid_argument", outcome);
    }
    // of_dictionary needs a vbucket dictionary with a forward map.
    for id in ["vbucket-start", "vbucket-done", "modulo-5", "redis"] {
        let sides = Sides::Dictionary(id);
        let outcome = sides.build(file).map(drop);
        for (op, case) in
            [("migration", sides.key(&utf8("user:1"), false)), ("shards", sides.fields("migration_shards"))]
        {
            expect_error(file, &format!("of-dictionary/refused-{id}/{op}"), case, "invalid_argument", outcome.clone());
        }
    }
    // Keys the core refuses, alone or in a list.
    for (label, key) in [
        ("u64-negative", json!({"u64": "-1"})),
        ("u64-2p64", json!({"u64": "18446744073709551616"})),
        ("lone-surrogate", json!({"utf16": [0xD800]})),
    ] {
        let outcome = crate::run::to_key(&key).expect("a key form").map(drop);
        for (name, sides) in
            [("modulo-5-10", Sides::Pair("modulo-5", "modulo-10")), ("dictionary", Sides::Dictionary("vbucket-moving"))]
        {
            let what = format!("bad-key/{name}/{label}");
            expect_error(file, &what, sides.key(&key, true), "invalid_key", outcome.clone());
            let list = sides.keys(&[user.clone(), key.clone()]);
            expect_error(file, &format!("{what}/keys"), list, "invalid_key", outcome.clone());
        }
    }
}
