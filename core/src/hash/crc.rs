//! Table-driven CRCs built at compile time.

/// CRC-16/XMODEM: polynomial `0x1021`, not reflected, init 0, no final xor. Redis
/// Cluster's `HASH_SLOT = crc16(key) % 16384` uses it (Redis Cluster specification,
/// "Keys distribution model"; its reference check value: `crc16("123456789") == 0x31C3`).
///
/// # Example
/// ```
/// assert_eq!(shardroute::hash::crc16_xmodem(b"123456789"), 0x31C3);
/// ```
pub fn crc16_xmodem(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in bytes {
        crc = (crc << 8) ^ CRC16_TABLE[usize::from(((crc >> 8) as u8) ^ byte)];
    }
    crc
}

const CRC16_TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut index = 0;
    while index < 256 {
        let mut crc = (index as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            bit += 1;
        }
        table[index] = crc;
        index += 1;
    }
    table
};

/// CRC-32C (Castagnoli): reflected polynomial `0x82F63B78`, init and final xor
/// `0xFFFFFFFF` (iSCSI, ext4, `crc32c` packages). Check value `0xE3069283`.
///
/// # Example
/// ```
/// assert_eq!(shardroute::hash::crc32c(b"123456789"), 0xE306_9283);
/// ```
pub fn crc32c(bytes: &[u8]) -> u32 {
    !crc32c_raw(bytes)
}

/// CRC-32C without the final xor: the register after init `0xFFFFFFFF` and the bytes.
/// Tarantool's `digest.crc32` returns this value, so vshard's `bucket_id_strcrc32` is
/// `crc32c_raw(key) % bucket_count + 1`.
///
/// # Example
/// ```
/// assert_eq!(shardroute::hash::crc32c_raw(b"123456789"), !0xE306_9283u32);
/// ```
pub fn crc32c_raw(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc = CRC32C_TABLE[((crc ^ u32::from(byte)) & 0xFF) as usize] ^ (crc >> 8);
    }
    crc
}

const CRC32C_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut index = 0;
    while index < 256 {
        let mut crc = index as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0x82F6_3B78 } else { crc >> 1 };
            bit += 1;
        }
        table[index] = crc;
        index += 1;
    }
    table
};
