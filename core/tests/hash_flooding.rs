//! Hash flooding, shown. Under the public default SipHash key anyone can compute where a
//! key lands, so a user who picks keys can aim them all at one shard: this test finds
//! 10,000 keys that all land on shard 0 of 10 by trying candidates (about 100,000 hashes,
//! milliseconds). Under a secret `seed` the same list spreads like any other keys: its
//! per-shard counts pass a chi-square test. A compatibility profile hashes as the system
//! it copies (CRC16 for Redis Cluster) and refuses a `hashing` section, so no seed can
//! protect it.
//! `docs/security-and-limits.md` explains the trade-off; `scripts/hash-flooding.py` times
//! the same attack through the Python package for the docs.

mod common;

use common::doc;
use serde_json::json;
use shardroute::{Key, Router};

const SHARDS: u32 = 10;
const FLOOD: usize = 10_000;

/// The chi-square statistic of `counts` against an even spread.
fn chi_square(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    let expected = total as f64 / counts.len() as f64;
    counts.iter().map(|&count| (count as f64 - expected).powi(2) / expected).sum()
}

/// The chi-square value with 9 degrees of freedom that an even spread exceeds with
/// probability 1e-4 (tables, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.4): the bound is loose
/// enough that no honest seed fails, and a flood (chi-square 90,000) is far past it.
const CHI_SQUARE_9_DF_P_1E4: f64 = 33.72;

/// Ten shards under jump hash, whose shards each take exactly 1/10 of the hash space (a
/// ring's arcs differ by a few percent, which would blur the even-spread test); `seed` is
/// the document's secret SipHash key, when it has one.
fn ten_shards(seed: Option<&str>) -> Router {
    let hashing = match seed {
        Some(seed) => json!({"seed": seed}),
        None => json!({}),
    };
    doc(SHARDS as usize).strategy(json!({"type": "jump"})).hashing(hashing).router()
}

/// What an attacker does with the public default key: try `user:0`, `user:1`, ... and
/// keep the keys that land on shard 0 of `target`.
fn flood(target: &Router) -> Vec<String> {
    (0u64..)
        .map(|i| format!("user:{i}"))
        .filter(|key| target.route(Key::from(key.as_str())).unwrap() == 0)
        .take(FLOOD)
        .collect()
}

fn counts(router: &Router, keys: &[String]) -> Vec<u64> {
    let mut counts = vec![0u64; router.shard_range().end as usize];
    for key in keys {
        counts[router.route(Key::from(key.as_str())).unwrap() as usize] += 1;
    }
    counts
}

/// 16 key bytes as 32 hex digits, from a splitmix64 stream (a stand-in for a secret drawn
/// from the operating system's generator).
fn secret(stream: &mut u64) -> String {
    let mut next = || {
        *stream = stream.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *stream;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    format!("{:016x}{:016x}", next(), next())
}

#[test]
fn the_public_key_lets_keys_be_aimed_and_a_secret_seed_spreads_them() {
    let public = ten_shards(None);
    let keys = flood(&public);
    // The victim's router is built from the same public document: every key hits shard 0.
    let victim = ten_shards(None);
    let aimed = counts(&victim, &keys);
    assert_eq!(aimed[0], FLOOD as u64);
    assert!(chi_square(&aimed) > 80_000.0, "{aimed:?}");

    // Twenty secret seeds: under each, the attacker's list spreads evenly.
    let mut stream = 0x5eed_u64;
    for _ in 0..20 {
        let seed = secret(&mut stream);
        let spread = counts(&ten_shards(Some(&seed)), &keys);
        let statistic = chi_square(&spread);
        assert!(statistic < CHI_SQUARE_9_DF_P_1E4, "seed {seed}: {spread:?}, chi-square {statistic:.1}");
        assert!(spread.iter().all(|&count| count > 850 && count < 1150), "seed {seed}: {spread:?}");
    }
}

#[test]
fn a_compatibility_profile_cannot_take_a_seed() {
    // Redis Cluster routes CRC16(key) mod 16384 as every Redis client does; a `hashing`
    // section (a seed) is refused rather than silently ignored, so keys aimed at one slot
    // range under one deployment stay aimed under every other.
    let seeded = doc(SHARDS as usize)
        .strategy(json!({"type": "redis_cluster"}))
        .hashing(json!({"seed": "8f1e2d3c4b5a69788796a5b4c3d2e1f0"}))
        .load()
        .unwrap_err();
    assert_eq!(seeded.code(), "invalid_topology");
    assert!(seeded.message().starts_with("hashing: "), "{}", seeded.message());
}

#[test]
fn chi_square_of_known_counts() {
    // The statistic itself, on counts worked by hand: (10-20)^2/20 + (30-20)^2/20 = 10.
    assert_eq!(chi_square(&[10, 30]), 10.0);
    assert_eq!(chi_square(&[7, 7, 7]), 0.0);
}
