//! Auto-pipelining: which of the commands queued for one node's connection go out in
//! one write, and when.
//!
//! The rule (ioredis' `enableAutoPipelining`, bounded): a command that finds its node's
//! connection idle (nothing queued, no write in flight, no flush scheduled) is written at
//! once, alone, as one write, so one command at a time pays no deferral. Any other command
//! joins its node's queue in the shell; the first one of an event-loop turn schedules one
//! flush of that node at the end of the turn, and the flush writes what is queued then, at most
//! [`ClusterConfig::pipeline_max_commands`](super::redis::ClusterConfig::pipeline_max_commands)
//! commands a write and at most
//! [`ClusterConfig::pipeline_max_writes`](super::redis::ClusterConfig::pipeline_max_writes)
//! writes in flight on the connection. What waits behind that limit is written when a
//! write's replies are all read (or its connection failed): nothing ever waits on a
//! timer, only on what is already queued or in flight. Each queued command is still its
//! own [`Command`](super::redis::Command) of the session (its reply, its redirect, its
//! deadline): this module only counts.
//!
//! Cost: one lookup in a map of the connections (`log n` string comparisons). A connection
//! that goes idle keeps its entry while the map holds at most [`KEEP_IDLE`] connections per
//! kind, so one command at a time (a join, then the write's end, on the same connection)
//! allocates and frees nothing; past that, an idle connection's entry goes at once. The
//! map is bounded by the shell's connections with work plus [`KEEP_IDLE`] idle ones of each
//! kind.

use alloc::collections::BTreeMap;
use alloc::string::String;

/// What the shell does with a command that joined a connection's queue
/// ([`ClusterSession::pipeline_queued`](super::redis::ClusterSession::pipeline_queued)). The bindings return it as its number
/// (`0` wait, `1` flush, `2` write now).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum PipelineQueued {
    /// It waits in the queue: a flush is already scheduled, or
    /// [`ClusterConfig::pipeline_max_writes`](super::redis::ClusterConfig::pipeline_max_writes) writes are in flight
    /// ([`ClusterSession::pipeline_done`](super::redis::ClusterSession::pipeline_done) will say when it goes).
    Wait = 0,
    /// Schedule one flush of the connection at the end of the current event-loop turn
    /// ([`ClusterSession::pipeline_take`](super::redis::ClusterSession::pipeline_take)).
    Flush = 1,
    /// The connection was idle: write this command now, alone, as one write (it is not in
    /// the queue's count); it is one write in flight until its
    /// [`ClusterSession::pipeline_done`](super::redis::ClusterSession::pipeline_done).
    Write = 2,
}

/// One connection's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Queue {
    /// Commands in the shell's queue, not yet written.
    queued: u32,
    /// Writes whose replies are not all read.
    writes: u32,
    /// A flush is scheduled (at the end of the shell's event-loop turn).
    scheduled: bool,
}

impl Queue {
    fn idle(&self) -> bool {
        self.queued == 0 && self.writes == 0 && !self.scheduled
    }
}

/// The limits of one write and of the writes in flight, as the session's config gives
/// them (`commands` 1 and `writes` unbounded when auto-pipelining is off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) enabled: bool,
    pub(crate) commands: u32,
    pub(crate) writes: u32,
}

/// How many connections of each kind (plain, `READONLY`) the map keeps while idle: about a
/// cluster's primaries and replicas, so a steady client never allocates per command; a
/// shell naming more addresses than this pays one allocation per burst on the rest.
pub(crate) const KEEP_IDLE: usize = 64;

/// The queues of the connections that have work (and up to [`KEEP_IDLE`] idle ones of
/// each kind): plain ones and `READONLY` ones apart.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pipelines {
    nodes: [BTreeMap<String, Queue>; 2],
}

impl Pipelines {
    fn queue(&mut self, address: &str, readonly: bool) -> Option<&mut Queue> {
        self.nodes[usize::from(readonly)].get_mut(address)
    }

    /// Drops the queue of `address` when nothing is queued, in flight or scheduled and the
    /// map holds more than [`KEEP_IDLE`] connections of its kind.
    fn settle(&mut self, address: &str, readonly: bool) {
        let nodes = &mut self.nodes[usize::from(readonly)];
        if nodes.len() > KEEP_IDLE && nodes.get(address).is_some_and(Queue::idle) {
            nodes.remove(address);
        }
    }

    /// One command joined the queue: whether it waits, the shell schedules a flush, or it
    /// is written now (alone, on an idle connection: counted as one write in flight).
    pub(crate) fn queued(&mut self, address: &str, readonly: bool, limits: Limits) -> PipelineQueued {
        let queue = match self.queue(address, readonly) {
            Some(queue) => queue,
            None => self.nodes[usize::from(readonly)].entry(String::from(address)).or_default(),
        };
        if !limits.enabled {
            queue.queued = queue.queued.saturating_add(1);
            return PipelineQueued::Flush;
        }
        if queue.idle() {
            queue.writes = 1;
            return PipelineQueued::Write;
        }
        queue.queued = queue.queued.saturating_add(1);
        if queue.scheduled || queue.writes >= limits.writes {
            return PipelineQueued::Wait;
        }
        queue.scheduled = true;
        PipelineQueued::Flush
    }

    /// The next write of the queue, as many commands as it takes (`queue.scheduled` left
    /// as it is).
    fn next_write(queue: &mut Queue, limits: Limits) -> u32 {
        if queue.writes >= limits.writes {
            return 0;
        }
        let count = queue.queued.min(limits.commands);
        if count > 0 {
            queue.queued -= count;
            queue.writes = queue.writes.saturating_add(1);
        }
        count
    }

    /// The flush: how many queued commands the next write takes.
    pub(crate) fn take(&mut self, address: &str, readonly: bool, limits: Limits) -> u32 {
        let Some(queue) = self.queue(address, readonly) else { return 0 };
        queue.scheduled = false;
        let count = Self::next_write(queue, limits);
        self.settle(address, readonly);
        count
    }

    /// One write ended (its replies read, its connection failed, or abandoned): how many
    /// queued commands the next write takes now.
    pub(crate) fn done(&mut self, address: &str, readonly: bool, limits: Limits) -> u32 {
        let Some(queue) = self.queue(address, readonly) else { return 0 };
        queue.writes = queue.writes.saturating_sub(1);
        // Off: every command had a flush of its own. A flush scheduled: it writes them,
        // with what else joins in this turn.
        let count = if !limits.enabled || queue.scheduled { 0 } else { Self::next_write(queue, limits) };
        self.settle(address, readonly);
        count
    }

    /// `count` queued commands left the queue unwritten.
    pub(crate) fn withdrawn(&mut self, address: &str, readonly: bool, count: u32) {
        let Some(queue) = self.queue(address, readonly) else { return };
        queue.queued = queue.queued.saturating_sub(count);
        self.settle(address, readonly);
    }

    /// `(queued, writes in flight)` of a connection.
    pub(crate) fn pending(&self, address: &str, readonly: bool) -> (u32, u32) {
        self.nodes[usize::from(readonly)].get(address).map_or((0, 0), |queue| (queue.queued, queue.writes))
    }

    /// The connections with work.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.nodes[0].len() + self.nodes[1].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ON: Limits = Limits { enabled: true, commands: 3, writes: 1 };
    const ON2: Limits = Limits { enabled: true, commands: 3, writes: 2 };

    use PipelineQueued::{Flush, Wait, Write};

    #[test]
    fn a_turn_flushes_once_and_the_rest_waits_for_the_write() {
        let mut pipelines = Pipelines::default();
        // A write in flight already (the idle connection's first command).
        assert_eq!(pipelines.queued("a:1", false, ON), Write);
        assert_eq!(pipelines.queued("a:1", false, ON), Wait, "one write in flight: no flush");
        assert_eq!(pipelines.done("a:1", false, ON), 1, "the waiting one goes when it ends");
        assert_eq!(pipelines.queued("a:1", false, ON2), Flush, "a second write may go: flush");
        assert_eq!(pipelines.queued("a:1", false, ON2), Wait, "a flush is scheduled");
        assert_eq!(pipelines.queued("a:1", true, ON2), Write, "a READONLY connection is another queue");
        assert_eq!(pipelines.take("a:1", false, ON2), 2);
        assert_eq!(pipelines.take("a:1", false, ON2), 0, "two writes in flight");
        for _ in 0..4 {
            assert_eq!(pipelines.queued("a:1", false, ON2), Wait, "the write limit holds: no flush");
        }
        assert_eq!(pipelines.done("a:1", false, ON2), 3, "at most pipeline_max_commands");
        assert_eq!(pipelines.pending("a:1", false), (1, 2));
        pipelines.withdrawn("a:1", false, 5);
        assert_eq!(pipelines.done("a:1", false, ON2), 0);
        assert_eq!(pipelines.done("a:1", false, ON2), 0);
        assert_eq!(pipelines.pending("a:1", false), (0, 0));
        assert_eq!(pipelines.done("a:1", true, ON), 0);
        assert_eq!(pipelines.pending("a:1", true), (0, 0));
        assert_eq!(pipelines.len(), 2, "idle connections are kept (KEEP_IDLE)");
        // Calls about a connection never queued on: nothing, and nothing kept.
        assert_eq!((pipelines.take("b:1", false, ON), pipelines.done("b:1", false, ON)), (0, 0));
        pipelines.withdrawn("b:1", false, 1);
        assert_eq!(pipelines.len(), 2);
    }

    #[test]
    fn an_idle_connection_writes_its_first_command_at_once_and_the_burst_behind_it_is_flushed() {
        let mut pipelines = Pipelines::default();
        assert_eq!(pipelines.queued("a:1", false, ON2), Write, "idle: written now, alone");
        assert_eq!(pipelines.pending("a:1", false), (0, 1), "counted as one write in flight");
        assert_eq!(pipelines.queued("a:1", false, ON2), Flush, "the rest of the turn: one flush");
        assert_eq!(pipelines.queued("a:1", false, ON2), Wait);
        assert_eq!(pipelines.take("a:1", false, ON2), 2, "the burst does not wait for the first reply");
        assert_eq!(pipelines.done("a:1", false, ON2), 0);
        assert_eq!(pipelines.done("a:1", false, ON2), 0);
        assert_eq!(pipelines.pending("a:1", false), (0, 0));
        assert_eq!(pipelines.queued("a:1", false, ON2), Write, "idle again: the next one goes at once");
        assert_eq!(pipelines.done("a:1", false, ON2), 0);
        // A flush scheduled but not run yet: not idle, the command waits for it.
        assert_eq!(pipelines.queued("b:1", false, ON2), Write);
        assert_eq!(pipelines.queued("b:1", false, ON2), Flush);
        assert_eq!(pipelines.done("b:1", false, ON2), 0, "a flush is scheduled: it writes them");
        assert_eq!(pipelines.queued("b:1", false, ON2), Wait, "queued 1, flush scheduled: not idle");
        assert_eq!(pipelines.take("b:1", false, ON2), 2);
        assert_eq!(pipelines.done("b:1", false, ON2), 0);
        assert_eq!(pipelines.pending("b:1", false), (0, 0));
    }

    #[test]
    fn idle_connections_past_the_bound_are_forgotten_and_busy_ones_are_not() {
        let mut pipelines = Pipelines::default();
        let address = |i: usize| alloc::format!("h:{i}");
        // 100 connections each with one write in flight; then every write ends.
        for i in 0..100 {
            assert_eq!(pipelines.queued(&address(i), false, ON), Write);
        }
        assert_eq!(pipelines.len(), 100, "busy connections are all kept");
        for i in 0..100 {
            assert_eq!(pipelines.done(&address(i), false, ON), 0);
        }
        // Each end past the bound drops its connection: 64 idle ones stay (the last 64).
        assert_eq!(pipelines.len(), 64);
        assert_eq!(pipelines.pending(&address(0), false), (0, 0));
        // A forgotten connection and a kept one answer alike.
        assert_eq!(pipelines.queued(&address(0), false, ON), Write);
        assert_eq!(pipelines.queued(&address(99), false, ON), Write);
        assert_eq!(pipelines.len(), 65);
        assert_eq!(pipelines.done(&address(0), false, ON), 0);
        assert_eq!(pipelines.len(), 64, "past the bound again: the idle one goes");
    }

    #[test]
    fn off_every_command_is_its_own_write() {
        let off = Limits { enabled: false, commands: 1, writes: u32::MAX };
        let mut pipelines = Pipelines::default();
        assert_eq!(pipelines.queued("a:1", false, off), Flush);
        assert_eq!(pipelines.queued("a:1", false, off), Flush);
        assert_eq!(pipelines.take("a:1", false, off), 1);
        assert_eq!(pipelines.take("a:1", false, off), 1);
        assert_eq!(pipelines.take("a:1", false, off), 0);
        assert_eq!(pipelines.done("a:1", false, off), 0);
        assert_eq!(pipelines.done("a:1", false, off), 0);
        assert_eq!(pipelines.pending("a:1", false), (0, 0));
    }
}
