//! Compatibility profiles: one real system's placement reproduced bit for bit, each a thin
//! profile over a generic family (slot or vbucket tables, token rings, keyranges) with the
//! system's own key hash. Each module names the system version and the client code it
//! was checked against; `docs/compatibility.md` lists the oracles.

pub mod cassandra;
pub mod couchbase;
pub mod elasticsearch;
pub mod kafka;
pub mod redis_cluster;
pub mod vitess;
pub mod vshard;
