//! MD5 (RFC 1321), from RustCrypto's `md-5` crate: 1.1x faster than the table-driven
//! compression this module used to hold on short keys and 1.3x on 64-byte ones (`make
//! bench`, section "hashes"). Only for placement, where ketama continuums are defined
//! by it; it is not used for anything security-related.

use md5::{Digest, Md5};

/// The 16-byte MD5 digest of `data`.
///
/// # Example
/// ```
/// // RFC 1321 test suite: MD5("abc") = 900150983cd24fb0d6963f7d28e17f72.
/// let digest = shardroute::hash::md5(b"abc");
/// assert_eq!(digest[..4], [0x90, 0x01, 0x50, 0x98]);
/// ```
#[inline]
pub fn md5(data: &[u8]) -> [u8; 16] {
    Md5::digest(data).into()
}
