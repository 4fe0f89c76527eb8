//! Writes the vector files. Values marked `source: generator` are computed by the core
//! at the commit that writes them (they pin behaviour: a change is a visible diff);
//! values from published references are read from `reference/` and copied unchanged,
//! and error cases state the intended error code, which the generator checks the core
//! produces before writing anything.
//!
//! The machinery is in `vector_file` (a file being assembled), `keys` (keys in vector
//! form), `reference` (published values) and `cases` (the shapes of case), with
//! documents from `crate::documents`; every other module writes one vector file.

mod cases;
mod keys;
mod reference;
mod vector_file;

mod calls;
mod cassandra;
mod couchbase;
mod dictionary;
mod directory;
mod elasticsearch;
mod errors;
mod hash_range;
mod hashing;
mod hot_keys;
mod id_groups;
mod ids;
mod indexes;
mod jump;
mod kafka;
mod ketama;
mod key_range;
mod key_type;
mod maglev;
mod migration;
mod modulo;
mod multilevel;
mod partition_key;
mod redis_cluster;
mod rendezvous;
mod ring;
mod scatter;
mod session_follower;
mod session_migration;
mod session_redis;
mod session_source;
mod session_source_http;
mod session_source_zookeeper;
mod stats;
mod suggest;
mod tables;
mod tenants;
mod token_ring;
mod topology;
mod trie;
mod vbucket;
mod vitess;
mod vshard;

/// Every vector file as `(file name, text)`, in a fixed order. A new file is one
/// module under `generate/` and one entry here.
pub fn all() -> Vec<(String, String)> {
    [
        hashing::file(),
        jump::file(),
        modulo::file(),
        ring::file(),
        rendezvous::file(),
        vbucket::file(),
        errors::file(),
        topology::file(),
        calls::file(),
        dictionary::file(),
        // More strategies: add `<module>::file(),` entries below this line.
        cassandra::file(),
        vitess::file(),
        kafka::file(),
        elasticsearch::file(),
        ketama::file(),
        ids::file(),
        id_groups::file(),
        key_range::file(),
        hash_range::file(),
        directory::file(),
        multilevel::file(),
        trie::file(),
        token_ring::file(),
        maglev::file(),
        redis_cluster::file(),
        couchbase::file(),
        vshard::file(),
        migration::file(),
        partition_key::file(),
        key_type::file(),
        hot_keys::file(),
        indexes::file(),
        tables::file(),
        tenants::file(),
        suggest::file(),
        stats::file(),
        scatter::file(),
        session_redis::file(),
        session_follower::file(),
        session_migration::file(),
        session_source_zookeeper::with_cases(session_source::file()),
    ]
    .iter()
    .map(vector_file::VectorFile::render)
    .collect()
}
