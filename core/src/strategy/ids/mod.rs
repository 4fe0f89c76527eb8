//! Ids that carry their shard: the shard is read out of the id itself ([`id_bits`]:
//! bit fields, Snowflake, ticket servers, ULIDs with shard bits, cells) or from the id
//! interval it falls in ([`id_groups`]: groups of weighted shards). Nothing moves when
//! shards are added. [`tickets`] also picks the ticket server a client asks next.

pub mod id_bits;
pub mod id_groups;
pub mod tickets;

use crate::error::{Error, Result};
use crate::key::Key;

/// The id of a key: id strategies route integers only (`invalid_key` for bytes).
pub(crate) fn id_of(key: Key<'_>) -> Result<u64> {
    match key {
        Key::U64(id) => Ok(id),
        Key::Bytes(_) => Err(Error::key(
            "id strategies route integer ids; got a byte key (pass the id as an unsigned 64-bit integer)",
        )),
    }
}

/// The ids `[start, end)` of a scan as the inclusive `(first, last)` (`end` `None`: to
/// the largest id); `invalid_argument` when the range is empty.
pub(crate) fn id_span(start: Key<'_>, end: Option<Key<'_>>) -> Result<(u64, u64)> {
    let start = id_of(start)?;
    let last = match end {
        None => u64::MAX,
        Some(end) => match id_of(end)?.checked_sub(1) {
            Some(last) if last >= start => last,
            _ => return Err(Error::argument("shards_for_range: end must be after start")),
        },
    };
    Ok((start, last))
}
