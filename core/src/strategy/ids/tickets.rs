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

/// The ticket server a client asks next, by [`next_ticket_server`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicketPick {
    /// The server to ask: an index in `0..servers`.
    pub server: u32,
    /// The turn to pass next time: the position after `server`, in `0..servers`.
    pub next_turn: u64,
    /// The servers passed over because they are down, in the order they were passed.
    pub skipped: Vec<u32>,
}

/// Picks the ticket server to ask for the next id: rotation and failover, as Flickr's
/// clients use its two ticket servers (round-robin between them, to balance the load and
/// to ride out one being down: "Ticket Servers: Distributed Unique Primary Keys on the
/// Cheap", code.flickr.net, 2010; `conformance/reference/ticket-servers.txt`).
/// Deterministic from its inputs: no clock, no randomness, no state in core.
///
/// The rule: the servers are `0..servers` in order; start at `turn % servers` (the
/// caller's counter, any `u64`) and take the first server, going forward and wrapping,
/// that is not in `down` (the servers the caller reports down). `next_turn` is the
/// position after the chosen server, so successive calls with the returned turn take
/// the live servers in turn and share the load evenly among them (the load of a down
/// server is spread over the next live ones, not piled on one). On a failed request the
/// caller adds that server to `down` and calls again with the same `turn`: the next live
/// server in order answers. Because the servers' id series never overlap
/// (`auto_increment_offset` = server + 1, `auto_increment_increment` = `servers`), any
/// live server may hand out the next id; ids are then unique but not in time order
/// across servers, as Flickr's post notes.
///
/// # Errors
/// `invalid_argument` unless `1 <= servers <= 65535` or when `down` names a server
/// outside `0..servers` (repeats are allowed); `limit_exceeded` when `down` has more
/// than [`limits::MAX_TICKET_DOWN`] entries; `unavailable` when every server is down.
///
/// # Example
/// ```
/// use shardroute::strategy::ids::tickets::next_ticket_server;
/// // Flickr's two servers: turns alternate between them.
/// let pick = next_ticket_server(2, 0, &[]).unwrap();
/// assert_eq!((pick.server, pick.next_turn), (0, 1));
/// assert_eq!(next_ticket_server(2, pick.next_turn, &[]).unwrap().server, 1);
/// // Server 0 is down: every turn goes to server 1.
/// let pick = next_ticket_server(2, 0, &[0]).unwrap();
/// assert_eq!((pick.server, pick.next_turn, pick.skipped), (1, 0, vec![0]));
/// assert_eq!(next_ticket_server(2, 0, &[0, 1]).unwrap_err().code(), "unavailable");
/// ```
pub fn next_ticket_server(servers: u32, turn: u64, down: &[u32]) -> Result<TicketPick> {
    if !(1..=MAX_TICKET_SERVERS).contains(&servers) {
        return Err(Error::argument(format!("servers: {servers} is outside 1..={MAX_TICKET_SERVERS}")));
    }
    if down.len() > limits::MAX_TICKET_DOWN as usize {
        return Err(Error::limit(format!("down: {} servers; the limit is {}", down.len(), limits::MAX_TICKET_DOWN)));
    }
    let mut is_down = alloc::vec![false; servers as usize];
    for &server in down {
        let slot = is_down.get_mut(server as usize).ok_or_else(|| {
            Error::argument(format!("down: server {server} is not one of the {servers} ticket servers"))
        })?;
        *slot = true;
    }
    let count = u64::from(servers);
    let start = turn % count;
    let mut skipped = Vec::new();
    for step in 0..count {
        let position = (start + step) % count;
        let server = position as u32;
        if !is_down[position as usize] {
            return Ok(TicketPick { server, next_turn: (position + 1) % count, skipped });
        }
        skipped.push(server);
    }
    Err(Error::new(
        crate::error::ErrorKind::Unavailable,
        format!("every one of the {servers} ticket servers is down; no server can hand out an id"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive rule, spelled out: the servers in order from `turn % n`, the first
    /// one not down.
    fn naive(servers: u32, turn: u64, down: &[u32]) -> Option<(u32, u64)> {
        let order: Vec<u32> =
            (0..servers).cycle().skip((turn % u64::from(servers)) as usize).take(servers as usize).collect();
        let server = order.into_iter().find(|server| !down.contains(server))?;
        Some((server, (u64::from(server) + 1) % u64::from(servers)))
    }

    #[test]
    fn rotation_visits_every_server_in_turn() {
        let mut turn = 0;
        let mut seen = Vec::new();
        for _ in 0..6 {
            let pick = next_ticket_server(3, turn, &[]).unwrap();
            assert!(pick.skipped.is_empty());
            seen.push(pick.server);
            turn = pick.next_turn;
        }
        assert_eq!(seen, [0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn failover_spreads_a_down_server_over_the_live_ones() {
        // Server 1 of 3 down: the turns alternate between 0 and 2, never 1.
        let mut turn = 0;
        let mut seen = Vec::new();
        for _ in 0..4 {
            let pick = next_ticket_server(3, turn, &[1]).unwrap();
            seen.push(pick.server);
            turn = pick.next_turn;
        }
        assert_eq!(seen, [0, 2, 0, 2]);
        let pick = next_ticket_server(3, 1, &[1]).unwrap();
        assert_eq!((pick.server, pick.next_turn, pick.skipped), (2, 0, alloc::vec![1]));
    }

    #[test]
    fn retry_after_a_failure_takes_the_next_live_server() {
        let first = next_ticket_server(4, 2, &[]).unwrap();
        assert_eq!(first.server, 2);
        // The request to 2 failed: same turn, 2 reported down.
        let retry = next_ticket_server(4, 2, &[2]).unwrap();
        assert_eq!((retry.server, retry.skipped), (3, alloc::vec![2]));
        let again = next_ticket_server(4, 2, &[2, 3]).unwrap();
        assert_eq!((again.server, again.next_turn, again.skipped), (0, 1, alloc::vec![2, 3]));
    }

    #[test]
    fn all_down_is_unavailable_and_bad_input_is_refused() {
        assert_eq!(next_ticket_server(2, 7, &[1, 0, 1]).unwrap_err().code(), "unavailable");
        assert_eq!(next_ticket_server(2, 0, &[2]).unwrap_err().code(), "invalid_argument");
        assert_eq!(next_ticket_server(0, 0, &[]).unwrap_err().code(), "invalid_argument");
        assert_eq!(next_ticket_server(65_536, 0, &[]).unwrap_err().code(), "invalid_argument");
        let long = alloc::vec![0u32; limits::MAX_TICKET_DOWN as usize + 1];
        assert_eq!(next_ticket_server(2, 0, &long).unwrap_err().code(), "limit_exceeded");
    }

    #[test]
    fn agrees_with_the_naive_rule() {
        for servers in 1..=5u32 {
            for mask in 0..(1u32 << servers) {
                let down: Vec<u32> = (0..servers).filter(|s| mask >> s & 1 == 1).collect();
                for turn in [0u64, 1, 2, 3, 4, 5, 17, u64::MAX - 1, u64::MAX] {
                    let got = next_ticket_server(servers, turn, &down).ok().map(|pick| (pick.server, pick.next_turn));
                    assert_eq!(got, naive(servers, turn, &down), "servers {servers}, turn {turn}, down {down:?}");
                }
            }
        }
    }
}
