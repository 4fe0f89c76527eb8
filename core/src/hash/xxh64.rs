//! XXH64 (Yann Collet, xxHash specification v0.1.1, 64-bit variant).

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

fn round(accumulator: u64, lane: u64) -> u64 {
    accumulator.wrapping_add(lane.wrapping_mul(P2)).rotate_left(31).wrapping_mul(P1)
}

fn merge(accumulator: u64, lane: u64) -> u64 {
    (accumulator ^ round(0, lane)).wrapping_mul(P1).wrapping_add(P4)
}

fn read_u64(bytes: &[u8]) -> u64 {
    u64::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7]])
}

/// XXH64 of `data` with `seed`. Vitess' `xxhash` vindex is `xxh64(bytes, 0)`.
///
/// # Example
/// ```
/// // The xxHash reference value for the empty input, seed 0.
/// assert_eq!(shardroute::hash::xxh64(b"", 0), 0xEF46_DB37_51D8_E999);
/// ```
pub fn xxh64(data: &[u8], seed: u64) -> u64 {
    let mut rest = data;
    let mut hash = if data.len() >= 32 {
        let mut v1 = seed.wrapping_add(P1).wrapping_add(P2);
        let mut v2 = seed.wrapping_add(P2);
        let mut v3 = seed;
        let mut v4 = seed.wrapping_sub(P1);
        while rest.len() >= 32 {
            v1 = round(v1, read_u64(&rest[0..]));
            v2 = round(v2, read_u64(&rest[8..]));
            v3 = round(v3, read_u64(&rest[16..]));
            v4 = round(v4, read_u64(&rest[24..]));
            rest = &rest[32..];
        }
        let mut hash = v1
            .rotate_left(1)
            .wrapping_add(v2.rotate_left(7))
            .wrapping_add(v3.rotate_left(12))
            .wrapping_add(v4.rotate_left(18));
        hash = merge(hash, v1);
        hash = merge(hash, v2);
        hash = merge(hash, v3);
        merge(hash, v4)
    } else {
        seed.wrapping_add(P5)
    };
    hash = hash.wrapping_add(data.len() as u64);
    while rest.len() >= 8 {
        hash ^= round(0, read_u64(rest));
        hash = hash.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        let lane = u64::from(u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]));
        hash ^= lane.wrapping_mul(P1);
        hash = hash.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        rest = &rest[4..];
    }
    for &byte in rest {
        hash ^= u64::from(byte).wrapping_mul(P5);
        hash = hash.rotate_left(11).wrapping_mul(P1);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(P2);
    hash ^= hash >> 29;
    hash = hash.wrapping_mul(P3);
    hash ^ (hash >> 32)
}
