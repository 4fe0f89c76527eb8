//! Ticket servers: the id sequences of Flickr's ticket servers, MySQL's auto-increment
//! with an offset and an increment (`auto_increment_offset` = server number,
//! `auto_increment_increment` = server count), so server `s` of `n` hands out
//! `s, s + n, s + 2n, ...` and an id's server is `(id - 1) % n + 1` (the `ticket`
//! layout of [`id_bits`](crate::strategy::ids::id_bits) reads it back). These functions
//! compute what such a server hands out next, for clients that reserve blocks of ids
//! instead of asking per row; `conformance/reference/mysql-auto-increment.txt` holds
//! the values a real MySQL server gave.

use alloc::format;
use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::limits;
use crate::strategy::ids::id_bits::MAX_TICKET_SERVERS;

/// Ids handed out by [`ticket_ids`]: the ids and the table's next `AUTO_INCREMENT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicketIds {
    /// The ids, ascending, `increment` apart.
    pub ids: Vec<u64>,
    /// The counter to pass next time: the last id plus one.
    pub auto_increment: u64,
}

/// A block of ids reserved by [`reserve_block`]: `first, first + step, ..., last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TicketBlock {
    /// The first id of the block.
    pub first: u64,
    /// The last id of the block.
    pub last: u64,
    /// The distance between consecutive ids: the increment.
    pub step: u32,
    /// How many ids the block holds.
    pub count: u32,
    /// The counter to pass next time: `last + 1`.
    pub auto_increment: u64,
}

fn check_ticket_server(offset: u32, increment: u32) -> Result<()> {
    if !(1..=MAX_TICKET_SERVERS).contains(&increment) {
        return Err(Error::argument(format!("increment {increment} is outside 1..={MAX_TICKET_SERVERS}")));
    }
    if !(1..=increment).contains(&offset) {
        // MySQL silently ignores such an offset; a silent fallback is how two servers
        // end up handing out the same ids, so it is refused here.
        return Err(Error::argument(format!("offset {offset} is outside 1..={increment} (the increment)")));
    }
    Ok(())
}

fn exhausted() -> Error {
    Error::argument("the ticket server's ids are exhausted: the next id would pass 2^64 - 2")
}

/// The id MySQL's next insert takes: the least `offset + N * increment` (`N >= 0`) that is
/// at least `auto_increment`, the table's counter (the largest id so far plus one; 1
/// for an empty table).
///
/// This is MySQL's rule for `auto_increment_offset` and `auto_increment_increment`
/// exactly, including after either changed: the series is computed without regard to
/// the ids already present, and the next id is the least member above the largest one.
/// A server with offset `i` of `k` servers hands out `i, i + k, i + 2k, ...`, so `k`
/// servers with offsets `1..=k` never collide and together cover every id.
///
/// # Errors
/// `invalid_argument` unless `1 <= offset <= increment <= 65535` (MySQL ignores a larger
/// offset; refused here), or when the id would exceed `u64::MAX - 1` (the counter
/// after it must fit a `u64`).
///
/// # Example
/// ```
/// use shardroute::strategy::ids::tickets::next_ticket;
/// // The MySQL manual: increment 10, offset 5, after ids 1, 11, 21, 31.
/// assert_eq!(next_ticket(5, 10, 32).unwrap(), 35);
/// assert_eq!(next_ticket(5, 10, 1).unwrap(), 5);
/// assert_eq!(next_ticket(11, 10, 1).unwrap_err().code(), "invalid_argument");
/// ```
pub fn next_ticket(offset: u32, increment: u32, auto_increment: u64) -> Result<u64> {
    check_ticket_server(offset, increment)?;
    let (offset, increment) = (u64::from(offset), u64::from(increment));
    let Some(above) = auto_increment.checked_sub(offset).filter(|&above| above > 0) else { return Ok(offset) };
    let steps = above / increment + u64::from(above % increment != 0);
    steps
        .checked_mul(increment)
        .and_then(|distance| distance.checked_add(offset))
        .filter(|&id| id < u64::MAX)
        .ok_or_else(exhausted)
}

/// The next `count` ids of a ticket server, and its counter afterwards: what `count`
/// inserts into a MySQL table with these settings return.
///
/// # Errors
/// As [`next_ticket`]; `invalid_argument` for `count == 0`, `limit_exceeded` above
/// [`limits::MAX_TICKET_BATCH`] (reserve larger blocks with [`reserve_block`]).
///
/// # Example
/// ```
/// use shardroute::strategy::ids::tickets::ticket_ids;
/// // The MySQL manual: increment 10, offset 1, an empty table.
/// let batch = ticket_ids(1, 10, 1, 4).unwrap();
/// assert_eq!(batch.ids, [1, 11, 21, 31]);
/// assert_eq!(ticket_ids(5, 10, batch.auto_increment, 4).unwrap().ids, [35, 45, 55, 65]);
/// ```
pub fn ticket_ids(offset: u32, increment: u32, auto_increment: u64, count: u32) -> Result<TicketIds> {
    let block = reserve_block(offset, increment, auto_increment, count)?;
    if count > limits::MAX_TICKET_BATCH {
        return Err(Error::limit(format!(
            "count {count}: at most {} ids per call; reserve a block instead",
            limits::MAX_TICKET_BATCH
        )));
    }
    let ids = (0..u64::from(count)).map(|j| block.first + j * u64::from(increment)).collect();
    Ok(TicketIds { ids, auto_increment: block.auto_increment })
}

/// Reserves the next `block_size` ids of a ticket server in one step: the caller stores
/// the returned counter (one round trip to the ticket database) and then hands out
/// `first, first + step, ..., last` from memory.
///
/// # Errors
/// As [`next_ticket`]; `invalid_argument` for `block_size == 0`.
///
/// # Example
/// ```
/// use shardroute::strategy::ids::tickets::reserve_block;
/// let block = reserve_block(2, 2, 1, 1000).unwrap();
/// assert_eq!((block.first, block.last, block.step, block.auto_increment), (2, 2000, 2, 2001));
/// assert_eq!(reserve_block(2, 2, block.auto_increment, 1).unwrap().first, 2002);
/// ```
pub fn reserve_block(offset: u32, increment: u32, auto_increment: u64, block_size: u32) -> Result<TicketBlock> {
    let first = next_ticket(offset, increment, auto_increment)?;
    if block_size == 0 {
        return Err(Error::argument("the block size (count) must be at least 1"));
    }
    let last = (u64::from(block_size) - 1)
        .checked_mul(u64::from(increment))
        .and_then(|span| span.checked_add(first))
        .filter(|&last| last < u64::MAX)
        .ok_or_else(exhausted)?;
    Ok(TicketBlock { first, last, step: increment, count: block_size, auto_increment: last + 1 })
}
