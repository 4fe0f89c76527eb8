//! Shard functions whose placement is a table the topology states: fixed partitions
//! (vbuckets, multilevel maps), trie leaves, token ranges, key and hash ranges, and
//! explicit directories. Moving data is editing the table, so what moves is exactly what
//! the edit says (see [`crate::ops`]).

pub mod directory;
pub mod hash_range;
pub mod key_range;
pub mod key_table;
pub mod multilevel;
pub mod ranges;
pub mod token_ring;
pub mod trie;
pub mod vbucket;
