//! The hash functions of the systems shardroute routes like, each exactly as that system
//! computes it. Each function cites the system and the published values its tests check.
//!
//! | function | used by |
//! |---|---|
//! | [`crc16_xmodem`] | Redis Cluster key slots |
//! | [`crc32`] | Couchbase vbuckets, the `crc32` key hash of documents |
//! | [`crc32c`], [`crc32c_raw`] | Tarantool vshard (`bucket_id_strcrc32`: raw register, no final xor) |
//! | [`murmur2_kafka`] | Kafka's default partitioner (Java client `Utils.murmur2`) |
//! | [`murmur3_x86_32`] | Elasticsearch routing (over UTF-16LE), Guava `murmur3_32` |
//! | [`murmur3_x64_128`] | Cassandra's Murmur3Partitioner (with Java's sign-extended tail bytes) |
//! | [`xxh64`] | Maglev (Envoy's node id hash), Vitess `xxhash` vindex, document checksums |
//! | [`md5`] | ketama continuums (libketama, libmemcached, Couchbase memcached buckets) |
//! | [`des_encrypt`] | Vitess `hash` vindex (DES, all-zero key, over the big-endian id) |
//!
//! All are `no_std`, allocation-free, and never panic. The CRCs, MD5, DES and XXH64 come
//! from well-kept crates (`crc32fast`, `crc`, `md-5`, `des`, `xxhash-rust`), each at
//! least as fast as the code it replaced (each module gives the measurement); the Murmur
//! variants are our own, because each system hashes with its own variant.

mod crc;
mod des;
mod md5;
mod murmur;
mod xxh64;

pub use self::crc::{crc16_xmodem, crc32, crc32c, crc32c_raw};
pub use self::des::{des_encrypt, Des};
pub use self::md5::md5;
pub use self::murmur::{murmur2_kafka, murmur3_x64_128, murmur3_x86_32};
pub use self::xxh64::xxh64;
