//! The CRCs of the systems shardroute routes like: CRC-16/XMODEM (Redis Cluster slots),
//! CRC-32/IEEE (Couchbase vbuckets, the `crc32` key hash), CRC-32C (Tarantool vshard).
//!
//! The computations come from two well-kept `no_std` crates, measured side by side with
//! the byte-at-a-time tables this module used to hold (`make bench`, section "hashes"):
//! `crc32fast` for CRC-32/IEEE is faster at every key length (6 vs 10 ns for a 10-byte
//! key, 10 vs 118 ns for 64 bytes; with `std` it also picks PCLMULQDQ at run time); the
//! `crc` crate's byte-at-a-time table matches ours on short keys and its slice-by-16
//! table is 2-7x faster from 16 bytes up but 1.4x slower below 12, where its setup
//! costs more than it saves. So CRC-32C and CRC-16 take the crate's two tables by key
//! length. On wasm32 the slice-by-16 tables (56 KB with crc32fast's, which do not
//! compress) would weigh more in every download of the package than they save, so all
//! three CRCs take the byte-at-a-time table there. The values are the same either way.

use crc::{Crc, Table, CRC_16_XMODEM, CRC_32_ISCSI};

/// Below this many bytes a byte-at-a-time table beats slice-by-16 (measured).
const SLICED_FROM: usize = 12;

/// The slice-by-16 tables where they pay (not on wasm32, see the module docs).
#[cfg(not(target_arch = "wasm32"))]
type Long = Table<16>;
#[cfg(target_arch = "wasm32")]
type Long = Table<1>;

const CRC16_SHORT: Crc<u16, Table<1>> = Crc::<u16, Table<1>>::new(&CRC_16_XMODEM);
const CRC16_LONG: Crc<u16, Long> = Crc::<u16, Long>::new(&CRC_16_XMODEM);
const CRC32C_SHORT: Crc<u32, Table<1>> = Crc::<u32, Table<1>>::new(&CRC_32_ISCSI);
const CRC32C_LONG: Crc<u32, Long> = Crc::<u32, Long>::new(&CRC_32_ISCSI);
#[cfg(target_arch = "wasm32")]
const CRC32: Crc<u32, Table<1>> = Crc::<u32, Table<1>>::new(&crc::CRC_32_ISO_HDLC);

/// CRC-16/XMODEM: polynomial `0x1021`, not reflected, init 0, no final xor. Redis
/// Cluster's `HASH_SLOT = crc16(key) % 16384` uses it (Redis Cluster specification,
/// "Keys distribution model"; its reference check value: `crc16("123456789") == 0x31C3`).
///
/// # Example
/// ```
/// assert_eq!(shardroute::hash::crc16_xmodem(b"123456789"), 0x31C3);
/// ```
#[inline]
pub fn crc16_xmodem(bytes: &[u8]) -> u16 {
    if bytes.len() < SLICED_FROM {
        CRC16_SHORT.checksum(bytes)
    } else {
        CRC16_LONG.checksum(bytes)
    }
}

/// CRC-32/IEEE (zlib's `crc32`: reflected polynomial `0xEDB88320`, init and final xor
/// `0xFFFFFFFF`). Check value `0xCBF43926`.
///
/// # Example
/// ```
/// assert_eq!(shardroute::hash::crc32(b"123456789"), 0xCBF4_3926);
/// ```
#[inline]
pub fn crc32(bytes: &[u8]) -> u32 {
    #[cfg(not(target_arch = "wasm32"))]
    return crc32fast::hash(bytes);
    #[cfg(target_arch = "wasm32")]
    return CRC32.checksum(bytes);
}

/// CRC-32C (Castagnoli): reflected polynomial `0x82F63B78`, init and final xor
/// `0xFFFFFFFF` (iSCSI, ext4, `crc32c` packages). Check value `0xE3069283`.
///
/// # Example
/// ```
/// assert_eq!(shardroute::hash::crc32c(b"123456789"), 0xE306_9283);
/// ```
#[inline]
pub fn crc32c(bytes: &[u8]) -> u32 {
    if bytes.len() < SLICED_FROM {
        CRC32C_SHORT.checksum(bytes)
    } else {
        CRC32C_LONG.checksum(bytes)
    }
}

/// CRC-32C without the final xor: the register after init `0xFFFFFFFF` and the bytes.
/// Tarantool's `digest.crc32` returns this value, so vshard's `bucket_id_strcrc32` is
/// `crc32c_raw(key) % bucket_count + 1`.
///
/// # Example
/// ```
/// assert_eq!(shardroute::hash::crc32c_raw(b"123456789"), !0xE306_9283u32);
/// ```
#[inline]
pub fn crc32c_raw(bytes: &[u8]) -> u32 {
    !crc32c(bytes)
}
