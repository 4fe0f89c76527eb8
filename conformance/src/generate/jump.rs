//! `jump.json`: jump consistent hash. The bare function against published values, and
//! the jump strategy.

use serde_json::json;

use super::cases::{expect_error, routed};
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, Document};

/// A `jump` case.
fn jump_case(file: &mut VectorFile, what: &str, hash: u64, buckets: u32, shard: u32) {
    file.case(what, json!({"op": "jump", "hash": hash.to_string(), "buckets": buckets, "expect": {"shard": shard}}));
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "jump",
        "Jump consistent hash: the bare function against published values, and the jump strategy.",
        "ref-cpp cases: values of the paper's reference C++ code as published in dgryski/go-jump jump_test.go; ref-guava cases: Guava HashingTest.testConsistentHash_linearCongruentialGeneratorCompatibility; strategy cases: generator",
    );
    let reference: [(u64, &[u32]); 4] = [
        (0, &[0; 20]),
        (1, &[0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 17, 17]),
        (0xdeadbeef, &[0, 1, 2, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 16, 16, 16]),
        (0x0ddc0ffeebadf00d, &[0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 15, 15, 15, 15]),
    ];
    for (key, buckets) in reference {
        for (index, &expected) in buckets.iter().enumerate() {
            let n = index as u32 + 1;
            jump_case(&mut file, &format!("ref-cpp/{key:#x}/{n}"), key, n, expected);
        }
    }
    for (key, expected) in [(1u64, 55u32), (2, 62), (3, 8), (4, 45), (5, 59)] {
        jump_case(&mut file, &format!("ref-guava/{key}/100"), key, 100, expected);
    }
    for (hash, buckets) in
        [(u64::MAX, 1u32), (u64::MAX, 1_000_000), (0x8000_0000_0000_0000, 4_294_967_295), (12345, 65_536)]
    {
        let shard = shardroute::jump(hash, buckets).expect("jump");
        jump_case(&mut file, &format!("edge/{hash:#x}/{buckets}"), hash, buckets, shard);
    }
    expect_error(
        &mut file,
        "reject/zero-buckets",
        json!({"op": "jump", "hash": "7", "buckets": 0}),
        "no_nodes",
        shardroute::jump(7, 0).map(drop),
    );
    expect_error(
        &mut file,
        "reject/hash-2p64",
        json!({"op": "jump", "hash": "18446744073709551616", "buckets": 3}),
        "invalid_key",
        shardroute::key::parse_u64("18446744073709551616").map(drop),
    );
    let ten: Vec<String> = (0..10).map(|i| format!("shard-{i:02}")).collect();
    routed(&mut file, "jump-10", doc(&ten[..], json!({"type": "jump"})));
    routed(&mut file, "jump-identity-7", doc(&ten[..7], json!({"type": "jump"})).epoch(2).hashing(identity()));
    file
}
