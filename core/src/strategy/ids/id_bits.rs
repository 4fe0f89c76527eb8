//! Ids that carry their shard: the shard number is a bit field of the id itself
//! (Twitter Snowflake, Instagram, Discord, Pinterest), or its residue modulo the
//! number of ticket servers that handed it out (Flickr's ticket servers, MySQL's
//! `auto_increment_offset` / `auto_increment_increment`).
//!
//! **Algorithm.** A *layout* cuts a `u64` id into fields, most significant first, and
//! one of them is the *routing field*:
//!
//! | `layout` | id | routing field | other fields (decode order) |
//! |---|---|---|---|
//! | `shard_high` | `shard << shard_shift \| local` | `(id >> shard_shift) & (2^shard_bits - 1)` | `local` (the bits below) |
//! | `snowflake` | `(t - epoch_ms) << (shard_bits + sequence_bits) \| shard << sequence_bits \| sequence` | the middle field | `timestamp_ms` (Unix ms, epoch added), `sequence` |
//! | `ticket` | `offset + sequence * servers`, `offset = shard + 1` | `(id - 1) % servers` | `sequence` (the server's n-th id) |
//! | `ulid` | 128 bits: `timestamp_ms << 80 \| shard << (80 - shard_bits) \| randomness`, written as 26 characters of Crockford base32 | the top `shard_bits` of the ULID's 80 random bits | `timestamp_ms` (Unix ms), `randomness` (the remaining `80 - shard_bits` bits) |
//!
//! The routing field is the shard, or, when the strategy has a `cells` directory, a
//! *cell* number that the directory maps to a shard. The shard lives on the node its
//! entry of the `shards` table names (by default shard `s` is on `nodes[s]`; never
//! `shard % n`, which would silently route the ids of a wrong layout somewhere).
//! Replicas are the next nodes in list order after the owner, wrapping, as for modulo.
//!
//! **The document.**
//!
//! ```json
//! {"type": "id_bits", "layout": "shard_high", "shard_bits": 8, "shard_shift": 56}
//! {"type": "id_bits", "layout": "snowflake", "timestamp_bits": 41, "shard_bits": 10,
//!  "sequence_bits": 12, "epoch_ms": 1288834974657, "shards": ["db-a", "db-b", "db-a"]}
//! {"type": "id_bits", "layout": "ticket", "servers": 2}
//! {"type": "id_bits", "layout": "ulid", "shard_bits": 8}
//! {"type": "id_bits", "layout": "shard_high", "shard_bits": 12, "cells": {"0": 0, "1": 0, "7": 1}}
//! ```
//!
//! | field | layouts | default | meaning |
//! |---|---|---|---|
//! | `layout` | all | required | `shard_high`, `snowflake`, `ticket` or `ulid`: the contract with every id ever minted, so never implied |
//! | `shard_bits` | `shard_high`, `snowflake`, `ulid` | 8; 10; 8 | width of the routing field, `1..=32` |
//! | `shard_shift` | `shard_high` | `64 - shard_bits` | bit position of the routing field's lowest bit |
//! | `timestamp_bits` | `snowflake` | 41 | width of the timestamp, `1..=64` |
//! | `sequence_bits` | `snowflake` | 12 | width of the per-millisecond sequence, `0..=63` |
//! | `epoch_ms` | `snowflake` | 1288834974657 (Twitter's) | Unix milliseconds of timestamp 0 (number or decimal string) |
//! | `servers` | `ticket` | required | the ticket servers' `auto_increment_increment`, `1..=65535` |
//! | `shards` | all | `nodes` in order | shard → node id table; its length is the shard count |
//! | `cells` | all | absent | cell directory: `{"<cell>": shard}`; the routing field is then a cell |
//!
//! The snowflake defaults are Twitter's layout (1 unused sign bit, 41 bits of
//! milliseconds since 2010-11-04T01:42:54.657Z, 10 bits of worker, 12 bits of sequence);
//! Discord's is `timestamp_bits: 42, epoch_ms: 1420070400000` (its 5-bit worker and
//! 5-bit process are one 10-bit routing field), Instagram's `timestamp_bits: 41,
//! shard_bits: 13, sequence_bits: 10`. Fields of another layout are rejected, and the
//! widths must fit 64 bits (`timestamp_bits + shard_bits + sequence_bits <= 64`,
//! `shard_shift + shard_bits <= 64`).
//!
//! **ULIDs** ([the ULID spec](https://github.com/ulid/spec)): 48 bits of Unix
//! milliseconds, then 80 bits of randomness whose top `shard_bits` carry the shard, so
//! the id stays a valid ULID that sorts by time, and ids of one shard within one
//! millisecond stay monotonic when the caller increments `randomness`. The key is the
//! ULID's text: exactly 26 characters of Crockford's base32 alphabet
//! (`0123456789ABCDEFGHJKMNPQRSTVWXYZ`), upper or lower case (the spec: "case
//! insensitive"). The spec's alphabet excludes `I`, `L`, `O` and `U`, so they are
//! refused, not read as Crockford's aliases `1`, `1`, `0` (one text per id: an alias
//! would route while naming a different stored key), as the Go reference package's
//! strict parser refuses them. A first character above `7` overflows 128 bits and is
//! refused, as the spec requires ("the largest valid ULID ... is
//! `7ZZZZZZZZZZZZZZZZZZZZZZZZZ`"). Every such refusal is `invalid_key`. The ULID is read
//! from the key's partition key when the `hashing` section has a `partition_key` rule
//! or a hash tag (so `01ARZ3NDEKTSV4RRFFQ69G5FAV/comments/7` routes by its ULID under
//! `{"rule": "prefix", "separator": "/"}`); integer keys are refused, and a document that
//! declares `"keys": "u64"` is refused at load (`invalid_topology`). `decode_id` takes a
//! 64-bit integer, so a ULID is decoded with the `id_bits_decode` operation.
//!
//! **Which ids route.** For the integer layouts, only integer keys are ids: a byte key is `invalid_key` (pass
//! the id as an unsigned 64-bit integer; a decimal string is a different key). An id
//! is also `invalid_key` when bits above its layout's fields are set (such an id was
//! not made by this layout), when it carries a shard with no entry in `shards`, a cell
//! missing from the directory, or, for `ticket`, when it is 0. A wrong id is never
//! silently routed somewhere. Ids are never hashed: the topology's
//! `hashing` section does not affect this strategy.
//!
//! **Guarantees.** Routing is the bit arithmetic, exactly: an id never changes shard.
//! Nothing moves when nodes are added; moving a shard to another node is an edit of one
//! `shards` entry, and moving a cell to another shard an edit of one directory entry,
//! which moves exactly that shard's or that cell's ids. Balance is whatever the id
//! minters chose (typically even, as each picks shards uniformly).
//! The layout itself is fixed for the life of the ids: changing a width, the epoch or
//! the number of ticket servers re-reads every existing id. To add ticket servers,
//! start a new id range and route ranges with `id_groups`: a group of `k` weight-1
//! shards listing server `k` first, then servers `1..k`, routes `id % k` exactly as
//! this layout routes `(id - 1) % k`.
//! `shards_for_range` of the `shard_high` layout returns only the shards whose ids
//! overlap the range (ranges of ids are ranges of shards); the other layouts spread
//! every range of ids over every shard.
//!
//! **Generators.** Core keeps no clock and no counter: the caller passes the time and
//! the counter, and gets the id and the next counter back. [`Snowflake::compose`],
//! [`ShardHigh::compose`], [`Tickets::compose`] build ids; [`next_ticket`](super::tickets::next_ticket),
//! [`ticket_ids`](super::tickets::ticket_ids) and [`reserve_block`](super::tickets::reserve_block) model MySQL's auto-increment with
//! `auto_increment_offset` and `auto_increment_increment`, including reserving a block
//! of ids in one round trip. The same generators are topology operations
//! (`id_bits_compose`, `id_bits_tickets`, `id_bits_reserve_block`) that return the
//! topology unchanged and the ids in their report, so every binding has them.
//!
//! **Cost.** A shift and a mask (a division for `ticket`) per id, plus a binary search
//! of the cell directory when there is one; memory 4 bytes per shard and 8 per cell.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::explain::{Hashed, Hit};
use crate::hashing::{KeyHashing, KeyType};
use crate::json::{self, Object, Put as _};
use crate::key::Key;
use crate::limits;
use crate::node::Node;
use crate::strategy::ids::{id_of, id_span};
use crate::strategy::spec::{DecodedId, Place, Spec};

/// Twitter's Snowflake epoch: 2010-11-04T01:42:54.657Z in Unix milliseconds.
pub const TWITTER_EPOCH_MS: u64 = 1_288_834_974_657;

/// The largest `auto_increment_increment` (and offset) MySQL accepts, and the most
/// ticket servers a `ticket` layout may have.
pub const MAX_TICKET_SERVERS: u32 = 65_535;

/// The low `bits` bits set (`bits` may be 0 or 64).
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `invalid_key` for an id whose bits above the layout are set.
fn check_reserved(id: u64, used_bits: u32, layout: &str) -> Result<()> {
    if used_bits < 64 && id >> used_bits != 0 {
        return Err(Error::key(format!(
            "id {id} does not fit the {layout} layout: bits {used_bits}..=63 must be zero"
        )));
    }
    Ok(())
}

/// The `shard_high` layout: `id = shard << shard_shift | local`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardHigh {
    shard_bits: u32,
    shard_shift: u32,
}

impl ShardHigh {
    /// The issue's layout: an 8-bit shard in the top byte, 56 bits of local id.
    pub const DEFAULT: ShardHigh = ShardHigh { shard_bits: 8, shard_shift: 56 };

    /// A layout with a `shard_bits`-wide routing field whose lowest bit is `shard_shift`.
    ///
    /// # Errors
    /// `invalid_argument` unless `1 <= shard_bits <= 32` and `shard_shift + shard_bits <= 64`.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::ids::id_bits::ShardHigh;
    /// // Pinterest: 2 reserved bits, 16 bits of shard, 46 bits of type and local id.
    /// let pinterest = ShardHigh::new(16, 46).unwrap();
    /// assert_eq!(pinterest.compose(3429, 0).unwrap(), 3429 << 46);
    /// assert_eq!(ShardHigh::new(16, 50).unwrap_err().code(), "invalid_argument");
    /// ```
    pub fn new(shard_bits: u32, shard_shift: u32) -> Result<ShardHigh> {
        if !(1..=32).contains(&shard_bits) {
            return Err(Error::argument(format!("shard_bits: {shard_bits} is outside 1..=32")));
        }
        if shard_shift > 64 - shard_bits {
            return Err(Error::argument(format!(
                "shard_shift: {shard_shift} + {shard_bits} shard bits pass bit 63; at most {}",
                64 - shard_bits
            )));
        }
        Ok(ShardHigh { shard_bits, shard_shift })
    }

    /// The width of the routing field.
    pub fn shard_bits(&self) -> u32 {
        self.shard_bits
    }

    /// The bit position of the routing field's lowest bit (the width of `local`).
    pub fn shard_shift(&self) -> u32 {
        self.shard_shift
    }

    /// Builds `shard << shard_shift | local`.
    ///
    /// # Errors
    /// `invalid_argument` when `shard` does not fit `shard_bits` or `local` does not fit
    /// the `shard_shift` bits below it.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::ids::id_bits::ShardHigh;
    /// assert_eq!(ShardHigh::DEFAULT.compose(3, 42).unwrap(), 3 << 56 | 42);
    /// assert_eq!(ShardHigh::DEFAULT.compose(256, 0).unwrap_err().code(), "invalid_argument");
    /// ```
    pub fn compose(&self, shard: u32, local: u64) -> Result<u64> {
        let shard_max = mask(self.shard_bits);
        if u64::from(shard) > shard_max {
            return Err(Error::argument(format!("shard {shard} does not fit {} bits", self.shard_bits)));
        }
        if local > mask(self.shard_shift) {
            return Err(Error::argument(format!("local {local} does not fit {} bits", self.shard_shift)));
        }
        // shard_shift <= 63 because shard_bits >= 1.
        Ok(u64::from(shard) << self.shard_shift | local)
    }

    /// Splits an id into `(shard, local)`: the inverse of [`compose`](ShardHigh::compose).
    ///
    /// # Errors
    /// `invalid_key` when bits above the shard field are set.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::ids::id_bits::ShardHigh;
    /// assert_eq!(ShardHigh::DEFAULT.decode(3 << 56 | 42).unwrap(), (3, 42));
    /// ```
    pub fn decode(&self, id: u64) -> Result<(u32, u64)> {
        check_reserved(id, self.shard_shift + self.shard_bits, "shard_high")?;
        Ok(((id >> self.shard_shift & mask(self.shard_bits)) as u32, id & mask(self.shard_shift)))
    }
}

/// The `snowflake` layout: `timestamp | shard | sequence`, most significant first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snowflake {
    timestamp_bits: u32,
    shard_bits: u32,
    sequence_bits: u32,
    epoch_ms: u64,
}

/// The fields of a snowflake id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnowflakeParts {
    /// Unix milliseconds: the layout's epoch plus the id's timestamp field.
    pub timestamp_ms: u64,
    /// The routing field (a shard, or a cell under a cell directory).
    pub shard: u32,
    /// The per-millisecond sequence.
    pub sequence: u64,
}

impl Snowflake {
    /// Twitter's layout: 41 bits of milliseconds since [`TWITTER_EPOCH_MS`], 10 bits of
    /// worker, 12 bits of sequence (the top bit stays 0).
    pub const TWITTER: Snowflake =
        Snowflake { timestamp_bits: 41, shard_bits: 10, sequence_bits: 12, epoch_ms: TWITTER_EPOCH_MS };

    /// A layout of the given widths and epoch.
    ///
    /// # Errors
    /// `invalid_argument` unless `1 <= timestamp_bits`, `1 <= shard_bits <= 32`, the three
    /// widths sum to at most 64, and `epoch_ms` plus the largest timestamp fits a `u64`.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::ids::id_bits::Snowflake;
    /// // Discord: 42 bits of milliseconds since 2015, 5 + 5 bits of worker and process.
    /// let discord = Snowflake::new(42, 10, 12, 1_420_070_400_000).unwrap();
    /// let parts = discord.decode(175928847299117063).unwrap();
    /// assert_eq!((parts.timestamp_ms, parts.shard, parts.sequence), (1462015105796, 32, 7));
    /// ```
    pub fn new(timestamp_bits: u32, shard_bits: u32, sequence_bits: u32, epoch_ms: u64) -> Result<Snowflake> {
        if timestamp_bits == 0 || !(1..=32).contains(&shard_bits) {
            return Err(Error::argument("a snowflake needs timestamp_bits >= 1 and shard_bits in 1..=32"));
        }
        let total = u64::from(timestamp_bits) + u64::from(shard_bits) + u64::from(sequence_bits);
        if total > 64 {
            return Err(Error::argument(format!(
                "timestamp_bits + shard_bits + sequence_bits = {total}; an id has 64 bits"
            )));
        }
        if epoch_ms.checked_add(mask(timestamp_bits)).is_none() {
            return Err(Error::argument(format!(
                "epoch_ms {epoch_ms} plus the largest {timestamp_bits}-bit timestamp exceeds 2^64 - 1"
            )));
        }
        Ok(Snowflake { timestamp_bits, shard_bits, sequence_bits, epoch_ms })
    }

    /// Width of the timestamp field.
    pub fn timestamp_bits(&self) -> u32 {
        self.timestamp_bits
    }

    /// Width of the routing field.
    pub fn shard_bits(&self) -> u32 {
        self.shard_bits
    }

    /// Width of the sequence field.
    pub fn sequence_bits(&self) -> u32 {
        self.sequence_bits
    }

    /// Unix milliseconds of timestamp 0.
    pub fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }

    /// The last Unix millisecond this layout can encode: ids run out after it.
    pub fn last_timestamp_ms(&self) -> u64 {
        self.epoch_ms + mask(self.timestamp_bits)
    }

    /// Builds the id of `(timestamp_ms, shard, sequence)`. Core keeps no clock and no
    /// sequence: the caller passes the current time and its per-millisecond counter.
    ///
    /// # Errors
    /// `invalid_argument` when `timestamp_ms` is before the epoch or after
    /// [`last_timestamp_ms`](Snowflake::last_timestamp_ms), or `shard` or `sequence`
    /// does not fit its field.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::ids::id_bits::Snowflake;
    /// // Wikipedia's example tweet id: 2022-06-28T16:07:40.105Z, machine 378, sequence 0.
    /// assert_eq!(Snowflake::TWITTER.compose(1656432460105, 378, 0).unwrap(), 1541815603606036480);
    /// assert_eq!(Snowflake::TWITTER.compose(0, 0, 0).unwrap_err().code(), "invalid_argument");
    /// ```
    pub fn compose(&self, timestamp_ms: u64, shard: u32, sequence: u64) -> Result<u64> {
        let Some(elapsed) = timestamp_ms.checked_sub(self.epoch_ms) else {
            return Err(Error::argument(format!(
                "timestamp_ms {timestamp_ms} is before the layout's epoch {}",
                self.epoch_ms
            )));
        };
        if elapsed > mask(self.timestamp_bits) {
            return Err(Error::argument(format!(
                "timestamp_ms {timestamp_ms} is after {}, the last millisecond {} timestamp bits hold",
                self.last_timestamp_ms(),
                self.timestamp_bits
            )));
        }
        if u64::from(shard) > mask(self.shard_bits) {
            return Err(Error::argument(format!("shard {shard} does not fit {} bits", self.shard_bits)));
        }
        if sequence > mask(self.sequence_bits) {
            return Err(Error::argument(format!("sequence {sequence} does not fit {} bits", self.sequence_bits)));
        }
        // Every shift is below 64: timestamp_bits >= 1 and the widths sum to <= 64.
        let low = self.shard_bits + self.sequence_bits;
        Ok(elapsed << low | u64::from(shard) << self.sequence_bits | sequence)
    }

    /// Splits an id into its fields: the inverse of [`compose`](Snowflake::compose).
    ///
    /// # Errors
    /// `invalid_key` when bits above the timestamp are set (Twitter's sign bit).
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::ids::id_bits::Snowflake;
    /// let parts = Snowflake::TWITTER.decode(1541815603606036480).unwrap();
    /// assert_eq!((parts.timestamp_ms, parts.shard, parts.sequence), (1656432460105, 378, 0));
    /// assert_eq!(Snowflake::TWITTER.decode(1 << 63).unwrap_err().code(), "invalid_key");
    /// ```
    pub fn decode(&self, id: u64) -> Result<SnowflakeParts> {
        let low = self.shard_bits + self.sequence_bits;
        check_reserved(id, self.timestamp_bits + low, "snowflake")?;
        Ok(SnowflakeParts {
            // No overflow: `new` checked epoch_ms + the largest timestamp.
            timestamp_ms: self.epoch_ms + (id >> low),
            shard: (id >> self.sequence_bits & mask(self.shard_bits)) as u32,
            sequence: id & mask(self.sequence_bits),
        })
    }
}

/// The `ticket` layout: shard `s` is the ticket server with MySQL
/// `auto_increment_offset = s + 1` and `auto_increment_increment = servers`, so its ids
/// are `s + 1, s + 1 + servers, s + 1 + 2 * servers, ...` (Flickr ran two: odd and even).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tickets {
    servers: u32,
}

impl Tickets {
    /// A layout of `servers` interleaved ticket servers.
    ///
    /// # Errors
    /// `invalid_argument` unless `1 <= servers <= 65535` (MySQL's range for
    /// `auto_increment_increment`).
    pub fn new(servers: u32) -> Result<Tickets> {
        if !(1..=MAX_TICKET_SERVERS).contains(&servers) {
            return Err(Error::argument(format!("servers: {servers} is outside 1..={MAX_TICKET_SERVERS}")));
        }
        Ok(Tickets { servers })
    }

    /// The number of ticket servers (their `auto_increment_increment`).
    pub fn servers(&self) -> u32 {
        self.servers
    }

    /// The `sequence`-th id (from 0) of server `shard`: `shard + 1 + sequence * servers`.
    ///
    /// # Errors
    /// `invalid_argument` when `shard >= servers` or the id would exceed `u64::MAX - 1`.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::ids::id_bits::Tickets;
    /// let flickr = Tickets::new(2).unwrap();
    /// assert_eq!(flickr.compose(1, 0).unwrap(), 2);
    /// assert_eq!(flickr.compose(0, 5).unwrap(), 11);
    /// assert_eq!(flickr.decode(11).unwrap(), (0, 5));
    /// ```
    pub fn compose(&self, shard: u32, sequence: u64) -> Result<u64> {
        if shard >= self.servers {
            return Err(Error::argument(format!("shard {shard} is not one of the {} ticket servers", self.servers)));
        }
        sequence
            .checked_mul(u64::from(self.servers))
            .and_then(|base| base.checked_add(u64::from(shard) + 1))
            .filter(|&id| id < u64::MAX)
            .ok_or_else(|| Error::argument(format!("sequence {sequence} is past the end of the id space")))
    }

    /// Splits an id into `(shard, sequence)`: the inverse of [`compose`](Tickets::compose).
    ///
    /// # Errors
    /// `invalid_key` for id 0, which no ticket server hands out.
    pub fn decode(&self, id: u64) -> Result<(u32, u64)> {
        match id.checked_sub(1) {
            Some(zero_based) => {
                let servers = u64::from(self.servers);
                Ok(((zero_based % servers) as u32, zero_based / servers))
            }
            None => Err(Error::key("id 0 is not a ticket id: ticket servers hand out ids from 1")),
        }
    }
}

/// The ULID alphabet: Crockford's base32 without `I`, `L`, `O`, `U`.
const ULID_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The length of a ULID's text.
pub const ULID_TEXT_LEN: usize = 26;

/// The value of one ULID character (either case), or `None` outside the alphabet.
fn ulid_digit(byte: u8) -> Option<u8> {
    let upper = byte.to_ascii_uppercase();
    match upper {
        b'0'..=b'9' => Some(upper - b'0'),
        b'I' | b'L' | b'O' | b'U' => None,
        b'A'..=b'Z' => {
            // Letters after each excluded one shift down by one.
            let skipped = [b'I', b'L', b'O', b'U'].iter().filter(|&&gap| upper > gap).count() as u8;
            Some(upper - b'A' + 10 - skipped)
        }
        _ => None,
    }
}

/// Reads a ULID's text (26 characters of Crockford base32, either case) as its 128 bits.
///
/// # Errors
/// `invalid_key` for a text of another length, a character outside the ULID alphabet
/// (`I`, `L`, `O`, `U` included), or a first character above `7` (past 128 bits).
///
/// # Example
/// ```
/// use shardroute::strategy::ids::id_bits::{ulid_from_text, ulid_to_text};
/// let ulid = ulid_from_text(b"01an4z07by79ka1307sr9x4mv3").unwrap();
/// assert_eq!(ulid >> 80, 1465824320894);
/// assert_eq!(ulid_to_text(ulid), "01AN4Z07BY79KA1307SR9X4MV3");
/// assert_eq!(ulid_from_text(b"8ZZZZZZZZZZZZZZZZZZZZZZZZZ").unwrap_err().code(), "invalid_key");
/// ```
pub fn ulid_from_text(text: &[u8]) -> Result<u128> {
    if text.len() != ULID_TEXT_LEN {
        return Err(Error::key(format!(
            "a ULID is {ULID_TEXT_LEN} characters of Crockford base32; got a key of {} bytes",
            text.len()
        )));
    }
    let mut value: u128 = 0;
    for (position, &byte) in text.iter().enumerate() {
        let Some(digit) = ulid_digit(byte) else {
            let shown =
                if byte.is_ascii_graphic() { format!("{:?}", byte as char) } else { format!("byte 0x{byte:02x}") };
            return Err(Error::key(format!(
                "not a ULID: {shown} at position {position} is not in the ULID alphabet 0123456789ABCDEFGHJKMNPQRSTVWXYZ (either case; I, L, O and U are excluded)"
            )));
        };
        if position == 0 && digit > 7 {
            return Err(Error::key(format!(
                "not a ULID: the first character {:?} overflows 128 bits; the largest ULID is 7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
                byte as char
            )));
        }
        value = value << 5 | u128::from(digit);
    }
    Ok(value)
}

/// Writes 128 bits as a ULID's canonical text: 26 upper-case characters.
pub fn ulid_to_text(value: u128) -> String {
    (0..ULID_TEXT_LEN)
        .map(|position| ULID_ALPHABET[(value >> (5 * (ULID_TEXT_LEN - 1 - position)) & 31) as usize] as char)
        .collect()
}

/// The fields of a ULID of the `ulid` layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UlidParts {
    /// Unix milliseconds (48 bits).
    pub timestamp_ms: u64,
    /// The routing field: the top `shard_bits` of the randomness.
    pub shard: u32,
    /// The remaining `80 - shard_bits` bits of randomness.
    pub randomness: u128,
}

/// The `ulid` layout: a 128-bit ULID whose top `shard_bits` random bits are the shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ulid {
    shard_bits: u32,
}

impl Ulid {
    /// The largest timestamp a ULID holds: `2^48 - 1` milliseconds.
    pub const MAX_TIMESTAMP_MS: u64 = (1 << 48) - 1;

    /// A layout whose routing field is the top `shard_bits` of the 80 random bits.
    ///
    /// # Errors
    /// `invalid_argument` unless `1 <= shard_bits <= 32`.
    pub fn new(shard_bits: u32) -> Result<Ulid> {
        if !(1..=32).contains(&shard_bits) {
            return Err(Error::argument(format!("shard_bits: {shard_bits} is outside 1..=32")));
        }
        Ok(Ulid { shard_bits })
    }

    /// Width of the routing field.
    pub fn shard_bits(&self) -> u32 {
        self.shard_bits
    }

    /// Width of the randomness the caller supplies: `80 - shard_bits`.
    pub fn randomness_bits(&self) -> u32 {
        80 - self.shard_bits
    }

    /// Builds the ULID of `(timestamp_ms, shard, randomness)` as its 128 bits. Core keeps
    /// no clock and draws no randomness: the caller passes the time and its random bits
    /// (for monotonic ids within a millisecond, the previous randomness plus one).
    ///
    /// # Errors
    /// `invalid_argument` when `timestamp_ms` passes 48 bits, `shard` does not fit
    /// `shard_bits` or `randomness` does not fit `80 - shard_bits` bits.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::ids::id_bits::{ulid_to_text, Ulid};
    /// let layout = Ulid::new(8).unwrap();
    /// let ulid = layout.compose(1469918176385, 3, 42).unwrap();
    /// assert_eq!(layout.decode(ulid).shard, 3);
    /// assert_eq!(ulid_to_text(ulid).len(), 26);
    /// assert_eq!(layout.compose(1469918176385, 256, 0).unwrap_err().code(), "invalid_argument");
    /// ```
    pub fn compose(&self, timestamp_ms: u64, shard: u32, randomness: u128) -> Result<u128> {
        if timestamp_ms > Self::MAX_TIMESTAMP_MS {
            return Err(Error::argument(format!(
                "timestamp_ms {timestamp_ms} does not fit a ULID's 48 bits (at most {})",
                Self::MAX_TIMESTAMP_MS
            )));
        }
        if u64::from(shard) > mask(self.shard_bits) {
            return Err(Error::argument(format!("shard {shard} does not fit {} bits", self.shard_bits)));
        }
        let low = self.randomness_bits();
        if randomness >> low != 0 {
            return Err(Error::argument(format!(
                "randomness {randomness} does not fit {low} bits (80 random bits less {} shard bits)",
                self.shard_bits
            )));
        }
        Ok(u128::from(timestamp_ms) << 80 | u128::from(shard) << low | randomness)
    }

    /// Splits a ULID's 128 bits into its fields: the inverse of [`compose`](Ulid::compose).
    pub fn decode(&self, ulid: u128) -> UlidParts {
        let low = self.randomness_bits();
        UlidParts {
            timestamp_ms: (ulid >> 80) as u64,
            shard: ((ulid >> low) as u64 & mask(self.shard_bits)) as u32,
            randomness: ulid & ((1u128 << low) - 1),
        }
    }
}

/// How an id's bits are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdLayout {
    /// `shard << shard_shift | local`.
    ShardHigh(ShardHigh),
    /// `timestamp | shard | sequence`.
    Snowflake(Snowflake),
    /// Interleaved ticket servers.
    Ticket(Tickets),
    /// A ULID (128 bits, text keys) with the shard in its top random bits.
    Ulid(Ulid),
}

impl IdLayout {
    /// The `layout` name in the document.
    pub fn name(&self) -> &'static str {
        match self {
            IdLayout::ShardHigh(_) => "shard_high",
            IdLayout::Snowflake(_) => "snowflake",
            IdLayout::Ticket(_) => "ticket",
            IdLayout::Ulid(_) => "ulid",
        }
    }

    /// How many values the routing field takes: `2^shard_bits`, or `servers`.
    pub fn capacity(&self) -> u64 {
        match self {
            IdLayout::ShardHigh(layout) => 1 << layout.shard_bits,
            IdLayout::Snowflake(layout) => 1 << layout.shard_bits,
            IdLayout::Ticket(layout) => u64::from(layout.servers),
            IdLayout::Ulid(layout) => 1 << layout.shard_bits,
        }
    }

    /// The routing field of an id (the fast path: no allocation).
    ///
    /// # Errors
    /// `invalid_key` when the id is not one of this layout.
    #[inline]
    pub fn field_of(&self, id: u64) -> Result<u32> {
        match self {
            IdLayout::ShardHigh(layout) => layout.decode(id).map(|(field, _)| field),
            IdLayout::Snowflake(layout) => layout.decode(id).map(|parts| parts.shard),
            IdLayout::Ticket(layout) => layout.decode(id).map(|(field, _)| field),
            IdLayout::Ulid(_) => Err(integer_ulid(id)),
        }
    }

    /// The routing field and every field, most significant first, the routing field
    /// named `routing_name`.
    fn fields(&self, id: u64, routing_name: &'static str) -> Result<(u32, Vec<(&'static str, u64)>)> {
        Ok(match self {
            IdLayout::ShardHigh(layout) => {
                let (field, local) = layout.decode(id)?;
                (field, alloc::vec![(routing_name, u64::from(field)), ("local", local)])
            }
            IdLayout::Snowflake(layout) => {
                let parts = layout.decode(id)?;
                (
                    parts.shard,
                    alloc::vec![
                        ("timestamp_ms", parts.timestamp_ms),
                        (routing_name, u64::from(parts.shard)),
                        ("sequence", parts.sequence)
                    ],
                )
            }
            IdLayout::Ticket(layout) => {
                let (field, sequence) = layout.decode(id)?;
                (field, alloc::vec![("sequence", sequence), (routing_name, u64::from(field))])
            }
            IdLayout::Ulid(_) => return Err(integer_ulid(id)),
        })
    }
}

/// `invalid_key` for an integer given to the `ulid` layout.
fn integer_ulid(id: u64) -> Error {
    Error::key(format!(
        "the ulid layout's ids are ULID text (26 characters of Crockford base32), not integers; got {id} (decode a ULID with the id_bits_decode operation)"
    ))
}

/// `{"type": "id_bits", "layout": ..., widths, "shards": [...], "cells": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdBitsSpec {
    pub(crate) layout: IdLayout,
    /// Node index of each shard.
    pub(crate) shards: Vec<u32>,
    /// `(cell, shard)`, sorted by cell.
    pub(crate) cells: Option<Vec<(u32, u32)>>,
}

impl IdBitsSpec {
    /// The id layout.
    pub fn layout(&self) -> &IdLayout {
        &self.layout
    }

    /// The node index of each shard, shard 0 first.
    pub fn shards(&self) -> &[u32] {
        &self.shards
    }

    /// The cell directory as `(cell, shard)` pairs sorted by cell, when there is one.
    pub fn cells(&self) -> Option<&[(u32, u32)]> {
        self.cells.as_deref()
    }

    /// The name of the routing field: `"cell"` under a directory, else `"shard"`.
    pub(crate) fn routing_name(&self) -> &'static str {
        if self.cells.is_some() {
            "cell"
        } else {
            "shard"
        }
    }
}

/// The fields each layout takes, for rejecting another layout's fields.
const LAYOUT_FIELDS: &[(&str, &[&str])] = &[
    ("shard_high", &["shard_bits", "shard_shift"]),
    ("snowflake", &["timestamp_bits", "shard_bits", "sequence_bits", "epoch_ms"]),
    ("ticket", &["servers"]),
    ("ulid", &["shard_bits"]),
];

fn bits_param(object: &Object<'_>, name: &str, default: u32, min: u32, max: u32) -> Result<u32> {
    match object.optional(name) {
        Some(value) => json::u32_in(&object.path_of(name), value, min, max),
        None => Ok(default),
    }
}

fn parse_layout(object: &Object<'_>) -> Result<IdLayout> {
    let layout_path = object.path_of("layout");
    let name = json::str(&layout_path, object.required("layout")?)?;
    let Some((_, own)) = LAYOUT_FIELDS.iter().find(|(layout, _)| *layout == name) else {
        return Err(json::at(
            &layout_path,
            format_args!("unknown layout {name:?}; expected shard_high, snowflake, ticket or ulid"),
        ));
    };
    for (other, fields) in LAYOUT_FIELDS {
        for field in fields.iter().filter(|field| !own.contains(field)) {
            if object.optional(field).is_some() {
                return Err(json::at(
                    &object.path_of(field),
                    format_args!("not a parameter of the {name} layout (it belongs to {other})"),
                ));
            }
        }
    }
    Ok(match name {
        "shard_high" => {
            let shard_bits = bits_param(object, "shard_bits", 8, 1, 32)?;
            let shard_shift = bits_param(object, "shard_shift", 64 - shard_bits, 0, 64 - shard_bits)?;
            IdLayout::ShardHigh(ShardHigh { shard_bits, shard_shift })
        }
        "snowflake" => {
            let timestamp_bits = bits_param(object, "timestamp_bits", 41, 1, 64)?;
            let shard_bits = bits_param(object, "shard_bits", 10, 1, 32)?;
            let sequence_bits = bits_param(object, "sequence_bits", 12, 0, 63)?;
            let epoch_ms = match object.optional("epoch_ms") {
                Some(value) => json::u64(&object.path_of("epoch_ms"), value)?,
                None => TWITTER_EPOCH_MS,
            };
            if timestamp_bits + shard_bits + sequence_bits > 64 {
                return Err(json::at(
                    &object.path_of("timestamp_bits"),
                    format_args!(
                        "timestamp_bits + shard_bits + sequence_bits = {}; an id has 64 bits",
                        timestamp_bits + shard_bits + sequence_bits
                    ),
                ));
            }
            let layout = Snowflake::new(timestamp_bits, shard_bits, sequence_bits, epoch_ms)
                .map_err(|err| json::at(&object.path_of("epoch_ms"), err.message()))?;
            IdLayout::Snowflake(layout)
        }
        "ulid" => IdLayout::Ulid(Ulid { shard_bits: bits_param(object, "shard_bits", 8, 1, 32)? }),
        _ => {
            let servers = json::u32_in(&object.path_of("servers"), object.required("servers")?, 1, MAX_TICKET_SERVERS)?;
            IdLayout::Ticket(Tickets { servers })
        }
    })
}

fn node_index(path: &str, value: &Value, nodes: &[Node]) -> Result<u32> {
    let id = json::str(path, value)?;
    nodes
        .iter()
        .position(|node| node.id == id)
        .map(|index| index as u32)
        .ok_or_else(|| json::at(path, format_args!("names node {id:?}, which is not in nodes")))
}

fn parse_shards(object: &Object<'_>, nodes: &[Node], layout: &IdLayout, has_cells: bool) -> Result<Vec<u32>> {
    let path = object.path_of("shards");
    // Without a directory the routing field is the shard, so a shard beyond the field's
    // capacity could never be routed to.
    let reachable = if has_cells { u64::from(limits::MAX_ID_SHARDS) } else { layout.capacity() };
    let Some(value) = object.optional("shards") else {
        if nodes.len() as u64 > reachable {
            return Err(json::at(
                &path,
                format_args!(
                    "absent, so shard s is nodes[s]; but the {} nodes exceed the {reachable} shards the routing field addresses: list a shards table",
                    nodes.len()
                ),
            ));
        }
        return Ok((0..nodes.len() as u32).collect());
    };
    let entries = json::array(&path, value)?;
    if entries.is_empty() {
        return Err(json::at(&path, "needs at least one shard"));
    }
    if entries.len() as u64 > u64::from(limits::MAX_ID_SHARDS) {
        return Err(Error::limit(format!("{path}: {} shards; the limit is {}", entries.len(), limits::MAX_ID_SHARDS)));
    }
    if entries.len() as u64 > reachable {
        return Err(json::at(
            &path,
            format_args!(
                "{} shards, but the {} layout's routing field addresses only {reachable}",
                entries.len(),
                layout.name()
            ),
        ));
    }
    entries.iter().enumerate().map(|(shard, entry)| node_index(&format!("{path}[{shard}]"), entry, nodes)).collect()
}

fn parse_cells(object: &Object<'_>, layout: &IdLayout, shard_count: u32) -> Result<Option<Vec<(u32, u32)>>> {
    let Some(value) = object.optional("cells") else { return Ok(None) };
    let path = object.path_of("cells");
    let Value::Object(map) = value else {
        return Err(json::at(&path, format_args!("expected an object cell → shard, found {}", json::type_name(value))));
    };
    if map.is_empty() {
        return Err(json::at(&path, "the cell directory is empty; list at least one cell"));
    }
    if map.len() as u64 > u64::from(limits::MAX_ID_CELLS) {
        return Err(Error::limit(format!("{path}: {} cells; the limit is {}", map.len(), limits::MAX_ID_CELLS)));
    }
    let mut cells = Vec::with_capacity(map.len());
    for (name, shard) in map {
        let cell_path = json::join(&path, name);
        let cell = crate::key::parse_decimal_u64(name)
            .filter(|cell| cell.to_string() == *name && *cell < layout.capacity())
            .ok_or_else(|| {
                json::at(
                    &cell_path,
                    format_args!(
                        "a cell is a decimal integer without leading zeros below {} (the routing field's capacity)",
                        layout.capacity()
                    ),
                )
            })?;
        let shard = json::u32_in(&cell_path, shard, 0, shard_count - 1)?;
        cells.push((cell as u32, shard));
    }
    cells.sort_unstable();
    Ok(Some(cells))
}

impl Spec for IdBitsSpec {
    const TYPE: &'static str = "id_bits";
    const FIELDS: &'static [&'static str] = &[
        "type",
        "layout",
        "shard_bits",
        "shard_shift",
        "timestamp_bits",
        "sequence_bits",
        "epoch_ms",
        "servers",
        "shards",
        "cells",
    ];
    type Placement = IdBits;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<IdBitsSpec> {
        let layout = parse_layout(object)?;
        let shards = parse_shards(object, nodes, &layout, object.optional("cells").is_some())?;
        let cells = parse_cells(object, &layout, shards.len() as u32)?;
        Ok(IdBitsSpec { layout, shards, cells })
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("layout", self.layout.name().into());
        match &self.layout {
            IdLayout::ShardHigh(layout) => {
                object.put("shard_bits", layout.shard_bits.into());
                object.put("shard_shift", layout.shard_shift.into());
            }
            IdLayout::Snowflake(layout) => {
                object.put("timestamp_bits", layout.timestamp_bits.into());
                object.put("shard_bits", layout.shard_bits.into());
                object.put("sequence_bits", layout.sequence_bits.into());
                object.put("epoch_ms", json::u64_value(layout.epoch_ms));
            }
            IdLayout::Ticket(layout) => {
                object.put("servers", layout.servers.into());
            }
            IdLayout::Ulid(layout) => {
                object.put("shard_bits", layout.shard_bits.into());
            }
        }
        let shards = self.shards.iter().map(|&index| node_id(nodes, index)).collect();
        object.put("shards", Value::Array(shards));
        if let Some(cells) = &self.cells {
            let directory = cells.iter().map(|(cell, shard)| (cell.to_string(), Value::from(*shard))).collect();
            object.put("cells", Value::Object(directory));
        }
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<IdBits> {
        if matches!(self.layout, IdLayout::Ulid(_)) && hashing.keys == KeyType::U64 {
            return Err(json::at(
                "hashing.keys",
                "the ulid layout routes ULID text keys; \"u64\" declares every key an integer (use \"bytes\", the default)",
            ));
        }
        if let Some(shard) = self.shards.iter().position(|&index| index as usize >= nodes.len()) {
            return Err(json::at(&format!("strategy.shards[{shard}]"), "names a node index beyond the node list"));
        }
        if let Some((cell, _)) = self.cells.iter().flatten().find(|(_, shard)| *shard as usize >= self.shards.len()) {
            return Err(json::at(&format!("strategy.cells.{cell}"), "names a shard beyond the shards table"));
        }
        Ok(IdBits {
            layout: self.layout,
            shards: self.shards.clone(),
            cells: self.cells.clone(),
            node_count: nodes.len() as u32,
        })
    }
}

/// The id of node `index`, or an empty string for an index past the list (only a
/// hand-built topology can have one, and compiling it fails).
fn node_id(nodes: &[Node], index: u32) -> Value {
    Value::String(nodes.get(index as usize).map(|node| node.id.clone()).unwrap_or_default())
}

/// A ULID's canonical text, written only when an error message needs it.
struct UlidText(u128);

impl core::fmt::Display for UlidText {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&ulid_to_text(self.0))
    }
}

/// A compiled `id_bits` strategy.
#[derive(Clone, Debug)]
pub struct IdBits {
    layout: IdLayout,
    shards: Vec<u32>,
    cells: Option<Vec<(u32, u32)>>,
    node_count: u32,
}

impl IdBits {
    /// The shard of a routing field value.
    #[inline]
    fn resolve(&self, id: impl core::fmt::Display, field: u32) -> Result<u32> {
        match &self.cells {
            Some(cells) => match cells.binary_search_by_key(&field, |&(cell, _)| cell) {
                Ok(index) => Ok(cells[index].1),
                Err(_) => Err(Error::key(format!("id {id} carries cell {field}, which is not in the cell directory"))),
            },
            None if (field as usize) < self.shards.len() => Ok(field),
            None => Err(Error::key(format!(
                "id {id} carries shard {field}, but the topology has shards 0..{}",
                self.shards.len()
            ))),
        }
    }

    /// The shard of an id.
    ///
    /// # Errors
    /// `invalid_key` as described in the module docs.
    #[inline]
    pub fn shard_of(&self, id: u64) -> Result<u32> {
        let field = self.layout.field_of(id)?;
        self.resolve(id, field)
    }

    /// The ULID of a key of the `ulid` layout (its partition key, when the hashing
    /// section picks one).
    fn ulid_of(hashing: &KeyHashing, key: Key<'_>) -> Result<u128> {
        match key {
            Key::Bytes(bytes) => ulid_from_text(hashing.routed_bytes(bytes)),
            Key::U64(id) => Err(integer_ulid(id)),
        }
    }

    /// Decodes a ULID's text (`ulid` layout): the shard and the fields, most significant
    /// first (`timestamp_ms`, the `cell` under a directory, `randomness`), the randomness
    /// as a `u128`.
    ///
    /// # Errors
    /// `invalid_key` for text that is not a ULID, or one whose shard (cell) the topology
    /// lacks; `invalid_argument` for another layout.
    pub fn decode_ulid(&self, text: &[u8]) -> Result<(u32, Vec<(&'static str, u128)>)> {
        let IdLayout::Ulid(layout) = self.layout else {
            return Err(Error::argument(format!(
                "ULID text needs the ulid layout, not {}; decode its ids with decode_id",
                self.layout.name()
            )));
        };
        let ulid = ulid_from_text(text)?;
        let parts = layout.decode(ulid);
        let shard = self.resolve(UlidText(ulid), parts.shard)?;
        let mut fields = alloc::vec![("timestamp_ms", u128::from(parts.timestamp_ms))];
        if self.cells.is_some() {
            fields.push(("cell", u128::from(parts.shard)));
        }
        fields.push(("randomness", parts.randomness));
        Ok((shard, fields))
    }
}

impl Place for IdBits {
    #[inline]
    fn shard(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<u32> {
        match self.layout {
            IdLayout::Ulid(layout) => {
                let ulid = Self::ulid_of(hashing, key)?;
                self.resolve(UlidText(ulid), layout.decode(ulid).shard)
            }
            _ => self.shard_of(id_of(key)?),
        }
    }

    fn explain(&self, hashing: &KeyHashing, key: Key<'_>) -> Result<(Option<Hashed>, Hit, u32)> {
        Ok((None, Hit::Shard, self.shard(hashing, key)?))
    }

    #[inline]
    fn owner(&self, shard: u32) -> u32 {
        self.shards[shard as usize]
    }

    fn max_replicas(&self) -> u32 {
        self.node_count
    }

    fn shard_range(&self) -> core::ops::Range<u32> {
        0..self.shards.len() as u32
    }

    fn shards_for_range(&self, hashing: &KeyHashing, start: Key<'_>, end: Option<Key<'_>>) -> Result<Vec<u32>> {
        if let IdLayout::Ulid(_) = self.layout {
            // ULIDs sort by time first: a range of them spans every shard.
            let first = Self::ulid_of(hashing, start)?;
            if let Some(end) = end {
                if Self::ulid_of(hashing, end)? <= first {
                    return Err(Error::argument("shards_for_range: end must be after start"));
                }
            }
            return Ok(self.shard_range().collect());
        }
        let (start, last) = id_span(start, end)?;
        let IdLayout::ShardHigh(layout) = self.layout else { return Ok(self.shard_range().collect()) };
        let top = layout.shard_shift + layout.shard_bits;
        let last = last.min(mask(top));
        if start > last {
            return Ok(Vec::new());
        }
        let first_field = (start >> layout.shard_shift) as u32;
        let last_field = (last >> layout.shard_shift) as u32;
        Ok(match &self.cells {
            None => {
                let count = self.shards.len() as u32;
                if first_field >= count {
                    Vec::new()
                } else {
                    (first_field..=last_field.min(count - 1)).collect()
                }
            }
            Some(cells) => {
                let from = cells.partition_point(|&(cell, _)| cell < first_field);
                let to = cells.partition_point(|&(cell, _)| cell <= last_field);
                let mut seen = alloc::vec![false; self.shards.len()];
                let mut shards = Vec::new();
                for &(_, shard) in &cells[from..to] {
                    if !core::mem::replace(&mut seen[shard as usize], true) {
                        shards.push(shard);
                    }
                }
                shards
            }
        })
    }

    fn decode_id(&self, id: u64) -> Result<DecodedId> {
        let (field, mut fields) = self.layout.fields(id, "cell")?;
        let shard = self.resolve(id, field)?;
        if self.cells.is_none() {
            fields.retain(|(name, _)| *name != "cell");
        }
        Ok(DecodedId { shard, fields })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;

    /// Base32 written plainly: each character's index in the alphabet, 5 bits each.
    fn naive_text(value: u128) -> String {
        let mut digits = Vec::new();
        let mut rest = value;
        for _ in 0..ULID_TEXT_LEN {
            digits.push(ULID_ALPHABET[(rest % 32) as usize] as char);
            rest /= 32;
        }
        digits.iter().rev().collect()
    }

    fn ulid_router(strategy: &str, hashing: &str) -> crate::Result<Router> {
        Router::from_json(&format!(
            r#"{{"format": "shardroute/1", "epoch": 1, "nodes": [{{"id": "a"}}, {{"id": "b"}}, {{"id": "c"}}, {{"id": "d"}}],
                "hashing": {hashing}, "strategy": {strategy}}}"#
        ))
    }

    #[test]
    fn ulid_text_round_trips_and_matches_the_naive_codec() {
        // The spec's example: timestamp 01AN4Z07BY.
        let spec = ulid_from_text(b"01AN4Z07BY79KA1307SR9X4MV3").unwrap();
        assert_eq!(spec >> 80, 1_465_824_320_894);
        for value in [0u128, 1, spec, u128::MAX, u128::MAX / 3, 1 << 127, 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210] {
            let text = ulid_to_text(value);
            assert_eq!(text, naive_text(value));
            assert_eq!(ulid_from_text(text.as_bytes()).unwrap(), value);
            assert_eq!(ulid_from_text(text.to_ascii_lowercase().as_bytes()).unwrap(), value);
        }
        assert_eq!(ulid_to_text(u128::MAX), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
    }

    #[test]
    fn every_character_outside_the_alphabet_is_refused() {
        for byte in 0..=255u8 {
            let mut text = *b"01AN4Z07BY79KA1307SR9X4MV3";
            text[12] = byte;
            let expected = ULID_ALPHABET.contains(&byte.to_ascii_uppercase());
            assert_eq!(ulid_from_text(&text).is_ok(), expected, "byte {byte:#04x}");
            if !expected {
                let err = ulid_from_text(&text).unwrap_err();
                assert_eq!(err.code(), "invalid_key");
                assert!(err.message().contains("position 12"), "{}", err.message());
            }
        }
        for excluded in [b'I', b'L', b'O', b'U', b'i', b'l', b'o', b'u'] {
            let mut text = *b"01AN4Z07BY79KA1307SR9X4MV3";
            text[20] = excluded;
            assert_eq!(ulid_from_text(&text).unwrap_err().code(), "invalid_key");
        }
    }

    #[test]
    fn overflow_and_length_are_refused() {
        let err = ulid_from_text(b"8ZZZZZZZZZZZZZZZZZZZZZZZZZ").unwrap_err();
        assert_eq!(err.code(), "invalid_key");
        assert!(err.message().contains("overflows 128 bits"), "{}", err.message());
        assert!(ulid_from_text(b"7ZZZZZZZZZZZZZZZZZZZZZZZZZ").is_ok());
        for text in [&b""[..], b"01AN4Z07BY79KA1307SR9X4MV", b"01AN4Z07BY79KA1307SR9X4MV30"] {
            assert_eq!(ulid_from_text(text).unwrap_err().code(), "invalid_key");
        }
    }

    #[test]
    fn compose_and_decode_are_inverse_and_check_widths() {
        for shard_bits in [1u32, 8, 16, 32] {
            let layout = Ulid::new(shard_bits).unwrap();
            let shard = (1u32 << (shard_bits - 1)) | 1;
            let randomness = (1u128 << layout.randomness_bits()) - 1;
            let ulid = layout.compose(Ulid::MAX_TIMESTAMP_MS, shard, randomness).unwrap();
            assert_eq!(ulid, u128::MAX ^ (u128::from(mask(shard_bits) ^ u64::from(shard)) << layout.randomness_bits()));
            assert_eq!(layout.decode(ulid), UlidParts { timestamp_ms: Ulid::MAX_TIMESTAMP_MS, shard, randomness });
            assert_eq!(layout.compose(0, 0, randomness + 1).unwrap_err().code(), "invalid_argument");
        }
        let layout = Ulid::new(8).unwrap();
        assert_eq!(layout.compose(1 << 48, 0, 0).unwrap_err().code(), "invalid_argument");
        assert_eq!(layout.compose(0, 256, 0).unwrap_err().code(), "invalid_argument");
        assert_eq!(Ulid::new(0).unwrap_err().code(), "invalid_argument");
        assert_eq!(Ulid::new(33).unwrap_err().code(), "invalid_argument");
    }

    #[test]
    fn a_ulid_routes_by_its_top_random_bits() {
        let router = ulid_router(r#"{"type": "id_bits", "layout": "ulid", "shard_bits": 8}"#, "{}").unwrap();
        let layout = Ulid::new(8).unwrap();
        for shard in 0..4u32 {
            let text = ulid_to_text(layout.compose(1_469_918_176_385, shard, 12345).unwrap());
            assert_eq!(router.route(text.as_str()).unwrap(), shard);
            assert_eq!(router.route(text.to_ascii_lowercase().as_str()).unwrap(), shard);
        }
        let text = ulid_to_text(layout.compose(0, 4, 0).unwrap());
        let err = router.route(text.as_str()).unwrap_err();
        assert_eq!(err.code(), "invalid_key");
        assert!(err.message().contains(&text), "{}", err.message());
        assert_eq!(router.route(7u64).unwrap_err().code(), "invalid_key");
        assert_eq!(router.decode_id(7).unwrap_err().code(), "invalid_key");
        assert_eq!(router.route("01AN4Z07BY79KA1307SR9X4MVI").unwrap_err().code(), "invalid_key");
    }

    #[test]
    fn a_partition_key_rule_picks_the_ulid() {
        let router = ulid_router(
            r#"{"type": "id_bits", "layout": "ulid", "shard_bits": 2}"#,
            r#"{"partition_key": {"rule": "prefix", "separator": "/"}}"#,
        )
        .unwrap();
        let text = ulid_to_text(Ulid::new(2).unwrap().compose(5, 3, 9).unwrap());
        assert_eq!(router.route(format!("{text}/comments/7").as_str()).unwrap(), 3);
    }

    #[test]
    fn u64_keys_are_refused_at_load() {
        let err = ulid_router(r#"{"type": "id_bits", "layout": "ulid"}"#, r#"{"keys": "u64"}"#).unwrap_err();
        assert_eq!(err.code(), "invalid_topology");
        assert!(err.message().starts_with("hashing.keys"), "{}", err.message());
        // The other layouts keep taking declared integer keys.
        assert!(ulid_router(r#"{"type": "id_bits", "layout": "shard_high"}"#, r#"{"keys": "u64"}"#).is_ok());
        // Another layout's field.
        let err = ulid_router(r#"{"type": "id_bits", "layout": "ulid", "servers": 2}"#, "{}").unwrap_err();
        assert_eq!(err.code(), "invalid_topology");
    }

    #[test]
    fn ranges_of_ulids_span_every_shard_and_are_checked() {
        let router = ulid_router(r#"{"type": "id_bits", "layout": "ulid"}"#, "{}").unwrap();
        let low = "01AN4Z07BY79KA1307SR9X4MV3";
        let high = "01AN4Z07BZ79KA1307SR9X4MV3";
        assert_eq!(router.shards_for_range(low, Some(high.into())).unwrap(), [0, 1, 2, 3]);
        assert_eq!(router.shards_for_range(low, None).unwrap(), [0, 1, 2, 3]);
        assert_eq!(router.shards_for_range(high, Some(low.into())).unwrap_err().code(), "invalid_argument");
        assert_eq!(router.shards_for_range("x", None).unwrap_err().code(), "invalid_key");
    }
}
