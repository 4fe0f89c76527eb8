//! Ids that carry their shard: the shard is read out of the id itself ([`id_bits`]:
//! bit fields, Snowflake, ticket servers, cells) or from the id interval it falls in
//! ([`id_groups`]: groups of weighted shards). Nothing moves when shards are added.

pub mod id_bits;
pub mod id_groups;
pub mod tickets;
