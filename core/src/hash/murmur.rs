//! MurmurHash2 (Kafka's variant) and MurmurHash3 (Austin Appleby, SMHasher).
//!
//! Our own: each system hashes with its own variant (Kafka's seed and `int` bit pattern,
//! Cassandra's sign-extended tail bytes, Elasticsearch over UTF-16LE), which general
//! Murmur crates do not reproduce; the tests check each against the system's published
//! values.

/// Kafka's `Utils.murmur2`: MurmurHash2, 32-bit, seed `0x9747b28c`, little-endian
/// blocks. The default partitioner sends a keyed record to
/// `(murmur2(key) & 0x7fffffff) % partitions`. Returned as the `u32` bit pattern of
/// Java's `int`.
///
/// # Example
/// ```
/// // Kafka's UtilsTest.testMurmur2: murmur2("21") == -973932308 as a Java int.
/// assert_eq!(shardroute::hash::murmur2_kafka(b"21") as i32, -973_932_308);
/// ```
pub fn murmur2_kafka(data: &[u8]) -> u32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let length = data.len() as u32;
    let mut h = SEED ^ length;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let mut k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = blocks.remainder();
    if tail.len() >= 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        h ^= u32::from(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h
}

/// MurmurHash3_x86_32 with a seed (SMHasher's reference; `mmh3.hash` as unsigned).
///
/// # Example
/// ```
/// // mmh3.hash("foo") == -156908512
/// assert_eq!(shardroute::hash::murmur3_x86_32(b"foo", 0) as i32, -156_908_512);
/// ```
pub fn murmur3_x86_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let mut k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    let mut k: u32 = 0;
    if tail.len() >= 3 {
        k ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        k ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        k ^= u32::from(tail[0]);
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    }
    h ^= data.len() as u32;
    fmix32(h)
}

fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// MurmurHash3_x64_128 with a seed, as `(h1, h2)`.
///
/// With `java_signed_tail`, the 1 to 15 trailing bytes are sign-extended before they
/// are shifted into place, as Cassandra's `MurmurHash.hash3_x64_128` does (Java bytes
/// are signed); without it, this is SMHasher's reference (`mmh3.hash64`). The two
/// differ only when a tail byte is `>= 0x80`. Cassandra's Murmur3Partitioner token is
/// `h1` as a signed `i64`, with `i64::MIN` replaced by `i64::MAX`.
///
/// # Example
/// ```
/// use shardroute::hash::murmur3_x64_128;
/// assert_eq!(murmur3_x64_128(b"", 0, false), (0, 0));
/// ```
pub fn murmur3_x64_128(data: &[u8], seed: u64, java_signed_tail: bool) -> (u64, u64) {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let mut h1 = seed;
    let mut h2 = seed;
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        let mut k1 =
            u64::from_le_bytes([block[0], block[1], block[2], block[3], block[4], block[5], block[6], block[7]]);
        let mut k2 =
            u64::from_le_bytes([block[8], block[9], block[10], block[11], block[12], block[13], block[14], block[15]]);
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1.rotate_left(27).wrapping_add(h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
        h2 = h2.rotate_left(31).wrapping_add(h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    // A tail byte as a u64: zero-extended (C's uint8_t) or sign-extended (Java's byte).
    let byte = |index: usize| -> u64 {
        if java_signed_tail {
            tail[index] as i8 as i64 as u64
        } else {
            u64::from(tail[index])
        }
    };
    let mut k1: u64 = 0;
    let mut k2: u64 = 0;
    for index in (8..tail.len()).rev() {
        k2 ^= byte(index) << ((index - 8) * 8);
    }
    if tail.len() > 8 {
        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
    }
    for index in (0..tail.len().min(8)).rev() {
        k1 ^= byte(index) << (index * 8);
    }
    if !tail.is_empty() {
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
    }
    let length = data.len() as u64;
    h1 ^= length;
    h2 ^= length;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}
