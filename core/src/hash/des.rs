//! DES (FIPS 46-3), encryption of one block, from RustCrypto's `des` crate. Vitess'
//! `hash` vindex maps an integer id to its keyspace id as `DES_encrypt(key = 0,
//! big_endian(id))` (it builds a triple-DES cipher from 24 zero bytes, which is single
//! DES under the zero key). Used here only as that fixed permutation of 64-bit ids,
//! never for secrecy.
//!
//! The crate with its key schedule made once is 8.6x faster per id than the
//! bit-by-bit permutations this module used to hold (`make bench`, section "hashes"):
//! [`Des`] keeps the schedule, which is what the Vitess placement holds.

use des::cipher::{BlockCipherEncrypt, KeyInit};

/// A DES key with its schedule computed once.
#[derive(Clone, Debug)]
pub struct Des(des::Des);

impl Des {
    /// The cipher of a 64-bit key (big-endian bytes as a `u64`).
    pub fn new(key: u64) -> Des {
        Des(des::Des::new(&key.to_be_bytes().into()))
    }

    /// Encrypts one 64-bit block (big-endian bytes as a `u64`).
    #[inline]
    pub fn encrypt(&self, block: u64) -> u64 {
        let mut bytes = block.to_be_bytes().into();
        self.0.encrypt_block(&mut bytes);
        u64::from_be_bytes(bytes.into())
    }
}

/// Encrypts one 64-bit block (big-endian bytes as a `u64`) under a 64-bit key: the same
/// as `Des::new(key).encrypt(block)`.
///
/// # Example
/// ```
/// // The classic FIPS 81 / Stallings example: key 133457799BBCDFF1,
/// // plaintext 0123456789ABCDEF -> ciphertext 85E813540F0AB405.
/// assert_eq!(shardroute::hash::des_encrypt(0x1334_5779_9BBC_DFF1, 0x0123_4567_89AB_CDEF), 0x85E8_1354_0F0A_B405);
/// ```
pub fn des_encrypt(key: u64, block: u64) -> u64 {
    Des::new(key).encrypt(block)
}
