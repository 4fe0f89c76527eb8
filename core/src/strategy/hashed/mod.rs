//! Shard functions that compute a key's node from its hash and the node list alone: no
//! table to keep in sync, only the list (and its order, weights or seeds) to agree on.
//! What moves when a node joins differs: almost everything under [`modulo`], about
//! `1/(n+1)` under the others.

pub mod jump;
pub mod ketama;
pub mod maglev;
pub mod modulo;
pub mod rendezvous;
pub mod ring;
