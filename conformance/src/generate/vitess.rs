//! `vitess.json`: the `vitess` profile (vindexes `hash`, `xxhash`, `numeric` over
//! keyranges in Vitess notation). Routing over the standard keys (text keys under the
//! integer vindexes are `invalid_key`) plus decimal-text keys; oracle cases whose
//! keyspace ids are Vitess' published `hash` values, an independent DES (pycryptodome
//! 4.4.0) and XXH64 (PyPI xxhash 4.1.0), each in a keyspace where the keyspace id alone
//! is one shard; keyrange edges; rejected documents.

use serde_json::{json, Value};
use shardroute::Router;

use super::cases::{route_case, routed, stated_route, Refusals};
use super::keys::{hex, standard_keys, u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, Document};

fn keyspace(epoch: u64, vindex: &str, shards: &[(&str, &str)]) -> Value {
    let mut ids: Vec<&str> = shards.iter().map(|(_, node)| *node).collect();
    ids.sort_unstable();
    ids.dedup();
    let list: Vec<Value> = shards.iter().map(|(name, node)| json!({"name": name, "node": node})).collect();
    doc(&ids[..], json!({"type": "vitess", "vindex": vindex, "shards": list})).epoch(epoch)
}

const FOUR: [(&str, &str); 4] = [("-40", "a"), ("40-80", "b"), ("80-c0", "a"), ("c0-", "b")];

/// `route` cases for every standard key and some decimal texts; keys the vindex cannot
/// map are `invalid_key`.
fn integer_routing(file: &mut VectorFile, id: &str, router: &Router) {
    let mut keys = standard_keys();
    for (label, text) in [
        ("utf8-dec-0", "0"),
        ("utf8-dec-42", "42"),
        ("utf8-dec-max", "18446744073709551615"),
        ("utf8-dec-2p64", "18446744073709551616"),
        ("utf8-dec-minus", "-1"),
        ("utf8-dec-plus", "+1"),
    ] {
        keys.push((label.into(), utf8(text)));
    }
    for (label, key) in &keys {
        route_case(file, id, router, label, key);
    }
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "vitess",
        "The vitess profile: vindexes hash (DES, zero key, over the big-endian id), xxhash (XXH64 seed 0; integers as decimal text) and numeric, keyranges in Vitess notation ([start, end), trailing zeros ignored) covering the keyspace exactly; oracle keyspace ids; rejected documents.",
        "the `oracle` cases: Vitess go/vt/vtgate/vindexes/hash_test.go (ids 1-5), DES from pycryptodome 4.4.0 and XXH64 from PyPI xxhash 4.1.0 (conformance/oracles/test_vitess.py compares over 10,000 keys per vindex with them); the rest: generator",
    );
    let router = file.topology("vitess-hash-4", keyspace(1, "hash", &FOUR));
    integer_routing(&mut file, "vitess-hash-4", &router);
    let router = file.topology("vitess-numeric-4", keyspace(1, "numeric", &FOUR));
    integer_routing(&mut file, "vitess-numeric-4", &router);
    let uneven = [("-4000", "a"), ("4000-80", "b"), ("80-c0a0", "c"), ("c0a0-", "a")];
    routed(&mut file, "vitess-xxhash-uneven", keyspace(2, "xxhash", &uneven));
    routed(&mut file, "vitess-xxhash-single", keyspace(1, "xxhash", &[("-", "only")]));

    // Oracle keyspace ids: shard 1 of `-k`, `k-(k+1)`, `(k+1)-` is the id k alone.
    let oracle: [(&str, &str, Value, u64); 12] = [
        ("hash-1", "hash", u64_key(1), 0x166b_40b4_4aba_4bd6),
        ("hash-2", "hash", u64_key(2), 0x06e7_ea22_ce92_708f),
        ("hash-3", "hash", u64_key(3), 0x4eb1_90c9_a2fa_169c),
        ("hash-4", "hash", u64_key(4), 0xd2fd_8867_d50d_2dfe),
        ("hash-5", "hash", u64_key(5), 0x70bb_023c_810c_a87a),
        ("hash-6", "hash", u64_key(6), 0xf098_480a_c4c4_be71),
        ("hash-42-text", "hash", utf8("42"), 0x61f0_f4f6_10d0_a79a),
        ("hash-max", "hash", u64_key(u64::MAX), 0x3555_50b2_150e_2451),
        ("xxhash-empty", "xxhash", hex(b""), 0xef46_db37_51d8_e999),
        ("xxhash-u64-1", "xxhash", u64_key(1), 0xb7b4_1276_3605_64d4),
        ("xxhash-user-1", "xxhash", utf8("user:1"), 0xd9c7_c460_9e60_80f3),
        ("xxhash-ff", "xxhash", hex(&[0xff]), 0x9563_4172_a60b_7544),
    ];
    for (label, vindex, key, ksid) in oracle {
        let id = format!("vitess-oracle-{label}");
        let (start, end) = (format!("{ksid:016x}"), format!("{:016x}", ksid + 1));
        let names = [format!("-{start}"), format!("{start}-{end}"), format!("{end}-")];
        let shards: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), "a")).collect();
        let router = file.topology(&id, keyspace(1, vindex, &shards));
        stated_route(&mut file, &id, &router, "oracle", key, (1, "a"));
    }

    // Keyrange edges under numeric (the keyspace id is the id): [start, end), trailing zeros ignored.
    let id = "vitess-numeric-edges";
    let edges = [("-80", "a"), ("8000-c000000000000001", "b"), ("c000000000000001-", "c")];
    let router = file.topology(id, keyspace(1, "numeric", &edges));
    for (what, value, shard) in [
        ("zero", 0u64, 0u32),
        ("below-80", 0x7fff_ffff_ffff_ffff, 0),
        ("at-80", 0x8000_0000_0000_0000, 1),
        ("below-c0..01", 0xc000_0000_0000_0000, 1),
        ("at-c0..01", 0xc000_0000_0000_0001, 2),
        ("max", u64::MAX, 2),
    ] {
        let node = ["a", "b", "c"][shard as usize];
        stated_route(&mut file, id, &router, &format!("stated/{what}"), u64_key(value), (shard, node));
    }
    rejected(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let mut bad = Refusals::of(keyspace(1, "hash", &[("-", "a")]));
    for (label, names) in [
        ("gap", &["-80", "c0-"][..]),
        ("overlap", &["-80", "40-"]),
        ("missing-start", &["80-"]),
        ("missing-end", &["-80"]),
        ("open-end-not-last", &["-80", "80-", "c0-"]),
        ("out-of-order", &["80-", "-80"]),
        ("empty-range", &["-80", "80-80", "80-"]),
        ("reversed-range", &["-80", "80-40", "40-"]),
        ("odd-hex", &["-8", "8-"]),
        ("not-hex", &["-zz", "zz-"]),
        ("no-dash", &["0"]),
        ("past-8-bytes", &["-800000000000000001", "800000000000000001-"]),
        ("no-shards", &[]),
    ] {
        let shards: Vec<Value> = names.iter().map(|name| json!({"name": name, "node": "a"})).collect();
        bad.edit(label, "invalid_topology", |d| d["strategy"]["shards"] = json!(shards));
    }
    bad.edit("unknown-vindex", "invalid_topology", |d| d["strategy"]["vindex"] = json!("md5"));
    bad.edit("vindex-missing", "invalid_topology", |d| drop(d["strategy"].as_object_mut().map(|s| s.remove("vindex"))));
    bad.edit("hashing-not-default", "invalid_topology", |d| d["hashing"] = identity());
    bad.edit("unknown-node", "invalid_topology", |d| d["strategy"]["shards"][0]["node"] = json!("z"));
    bad.edit("weight", "invalid_topology", |d| d["nodes"][0]["weight"] = json!(2));
    bad.write(file, "load/reject-");
}
