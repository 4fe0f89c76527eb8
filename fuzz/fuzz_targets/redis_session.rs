//! Session scenarios: a Redis Cluster session driven by a script of calls read from the
//! input — commands on keys, the outcomes of their attempts (a reply, `MOVED`/`ASK` to
//! addresses from a small pool and to new ones, busy and demoted replies, transport
//! failures, any text), stalls, refreshes with whole, hostile or garbage replies,
//! refresh failures, candidates and batch plans, and the deadlines (issue 36): a
//! command's `deadline`, `reply_deadline` and `on_deadline`, the one-call path
//! (`send_now_timed`, `command_sent_at`), a refresh's `refresh_sent`, `next_deadline`,
//! `refresh_reply_deadline` and `timeout`, and `address_of` — at times that move forward
//! by any amount, go back, jump to 0 or to `u64::MAX`, under settings from 0 to
//! `u64::MAX` (the fields are public: `from_value`'s 2^53 bound does not hold here).
//!
//! Properties: nothing panics (the build has debug assertions: no overflow at
//! `u64::MAX`); every action is one of the documented kinds, a `fail` carries
//! `too_many_redirects`, `unavailable`, `invalid_argument` or `cross_slot`, a `wait` is
//! never before the time given and its `delay_ms` is the difference (capped at
//! `u32::MAX`); a command follows at most `max_redirects` redirects; the node table stays
//! bounded (issue 34: MOVEDs to ever new addresses do not grow it past the last refresh's
//! nodes plus one per slot), and every node of it owns a slot or came from the last
//! refresh (checked at the end of each script); the router's document loads back;
//! candidates are listed once each.
//!
//! Deadlines, as their docs promise them:
//! * after an `Action::Send` at `now`, the command's `deadline` is its first stall check
//!   or its command timeout, whichever is first (`stall_ms` / `command_timeout_ms` after
//!   `now`, saturating; none for a zero setting; for an attempt sent again to a node the
//!   command found silent, the refresh interval when sooner): never before `now`; `reply_deadline`
//!   is the command timeout; `in_flight` holds while a deadline does;
//! * after a `wait` from `poll`, an outcome or `on_deadline`, `deadline` is its
//!   `until_ms`; `on_deadline`'s wait ends at the command timeout at the latest;
//! * `on_deadline` before the deadline waits until it; with no deadline it is `poll`;
//!   after a stall asked for a refresh the deadline is the time of that call;
//! * a finished command (`done`, `too_many_redirects`, `unavailable`) has no deadline;
//! * `send_now_timed` gives what `command` then `poll` on a copy of the session give (the
//!   node, `READONLY`, the deadline) and, when it gives nothing, changes nothing;
//!   `command_sent_at` leaves the deadline of an attempt sent at its `sent_ms`;
//! * `refresh_sent` gives the same deadline as an attempt's (never before `now`), which
//!   `next_deadline` gives until `refreshed`, `refresh_failed`, the next `refresh_sent`
//!   or a `timeout` at or after it; `timeout` is true exactly then;
//!   `refresh_reply_deadline` is the command timeout, never before `next_deadline`;
//! * `address_of` gives each table node's endpoint address, and `None` for other ids.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use shardroute::session::{Access, Action, ClusterConfig, ClusterSession, Command, Transport};
use shardroute::{Key, OwnedKey, Router};
use shardroute_fuzz::redis;

const TEXTS: &[&str] = &[
    "TRYAGAIN Multiple keys request during rehashing of slot",
    "CLUSTERDOWN The cluster is down",
    "MASTERDOWN Link with MASTER is down",
    "LOADING Redis is loading the dataset in memory",
    "READONLY You can't write against a read only replica.",
    "UNBLOCKED force unblock from blocking operation",
    "ERR wrong number of arguments",
    "Connection is closed.",
];

fn address(u: &mut Unstructured, fresh: &mut u32) -> Result<String> {
    Ok(match u.int_in_range(0..=5u8)? {
        // A new address every time: the table must not grow with them.
        0 | 1 => {
            *fresh += 1;
            format!("10.9.{}.{}:6379", *fresh >> 8 & 0xff, *fresh & 0xff)
        }
        2 => ":7000".into(),
        _ => format!("10.0.{}.{}:7000", u.int_in_range(0..=3u8)?, u.int_in_range(0..=2u8)?),
    })
}

/// A setting in milliseconds: 0 (none), small, the default, near 2^53, or up to `u64::MAX`.
fn setting(u: &mut Unstructured, default: u64) -> Result<u64> {
    Ok(match u.int_in_range(0..=7u8)? {
        0 => 0,
        1 => u64::from(u.int_in_range(1..=5u8)?),
        2 => u64::from(u.int_in_range(0..=1_000u16)?),
        3 => 1 << 53,
        4 => u64::MAX,
        5 => u64::MAX - u64::from(u.int_in_range(0..=3u8)?),
        6 => u.arbitrary()?,
        _ => default,
    })
}

/// The next time: mostly forward by a little, but also back, far forward, 0, near or at
/// `u64::MAX`, or any time at all (a shell's clock is its own; the session must not trust it).
fn next_time(u: &mut Unstructured, now: u64) -> Result<u64> {
    Ok(match u.int_in_range(0..=15u8)? {
        0..=8 => now.saturating_add(u64::from(u.int_in_range(0..=400u16)?)),
        9 => now.saturating_add(u64::from(u.arbitrary::<u32>()?)),
        10 => now.saturating_sub(u64::from(u.int_in_range(1..=1_000u16)?)),
        11 => u64::MAX,
        12 => u64::MAX - u64::from(u.int_in_range(0..=1_000u16)?),
        13 => 0,
        14 => u.arbitrary()?,
        _ => now,
    })
}

/// An attempt's deadlines as the docs give them, for a send at `now`: (the first stall
/// check or the command timeout, whichever is first; the command timeout). A zero
/// setting sets no deadline; a time past `u64::MAX` is `u64::MAX`.
fn attempt_deadlines(config: &ClusterConfig, now: u64) -> (Option<u64>, Option<u64>) {
    let after = |ms: u64| (ms > 0).then(|| now.saturating_add(ms));
    let end = after(config.command_timeout_ms);
    let first = match (after(config.stall_ms), end) {
        (Some(stall), Some(end)) => Some(stall.min(end)),
        (stall, end) => stall.or(end),
    };
    (first, end)
}

fn check_action(action: &Action, now: u64) {
    match action {
        Action::Fail(err) => assert!(
            ["too_many_redirects", "unavailable", "invalid_argument", "cross_slot"].contains(&err.code()),
            "{err}"
        ),
        Action::Wait { until_ms, delay_ms } => {
            assert!(*until_ms >= now, "a wait until {until_ms} before the time given {now}");
            assert_eq!(u64::from(*delay_ms), (until_ms - now).min(u64::from(u32::MAX)), "delay_ms");
        }
        Action::Send(target) => assert!(target.endpoint.port() > 0),
        Action::Refresh | Action::Done => {}
    }
}

/// Which call gave an action: what its deadline then is depends on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    /// `poll`, or an outcome (`succeeded`, `failed`, `unreachable`).
    Poll,
    /// `stalled`: its wait keeps the attempt's deadline.
    Stalled,
    OnDeadline,
}

/// The deadlines a command has after `action` (given `via` at `now`).
fn check_deadlines(session: &ClusterSession, command: &Command, action: &Action, now: u64, via: Via) {
    let config = session.config();
    let deadline = session.deadline(command);
    let reply = session.reply_deadline(command);
    match action {
        Action::Send(_) => {
            let (first, end) = attempt_deadlines(config, now);
            // Sent again to a node the command found silent: checked at the refresh pace
            // when that is sooner (ClusterSession::attempt_started).
            let paced = first
                .filter(|_| config.stall_ms > 0)
                .map(|first| first.min(now.saturating_add(config.refresh_interval_ms.max(1))));
            assert!(deadline == first || deadline == paced, "the deadline of an attempt sent at {now}: {deadline:?}");
            assert_eq!(reply, end, "the reply deadline of an attempt sent at {now}");
            assert!(deadline.is_none_or(|deadline| deadline >= now), "a fresh attempt's deadline before its send");
            assert_eq!(command.in_flight(), first.is_some(), "in_flight after a send");
        }
        Action::Wait { until_ms, .. } if via != Via::Stalled => {
            assert_eq!(deadline, Some(*until_ms), "the deadline of a wait");
            if via == Via::OnDeadline {
                assert!(reply.is_none_or(|end| *until_ms <= end), "on_deadline waits past the command timeout");
            }
        }
        Action::Done => {
            assert_eq!(deadline, None, "a finished command has a deadline");
            assert_eq!(reply, None, "a finished command has a reply deadline");
            assert!(!command.in_flight());
        }
        Action::Fail(err) if err.code() != "invalid_argument" => {
            assert_eq!(deadline, None, "a command given up has a deadline");
            assert_eq!(reply, None, "a command given up has a reply deadline");
            assert!(!command.in_flight());
        }
        _ => {}
    }
    if let (Some(deadline), Some(end)) = (deadline, reply) {
        assert!(deadline <= end, "the deadline {deadline} is after the command timeout {end}");
    }
}

/// The refresh request's deadlines hang together.
fn check_refresh(session: &ClusterSession) {
    if let Some(end) = session.refresh_reply_deadline() {
        let next = session.next_deadline().expect("a reply deadline without a request in flight");
        assert!(next <= end, "the refresh's deadline {next} is after its reply deadline {end}");
    }
}

fn run(u: &mut Unstructured) -> Result<()> {
    let config = ClusterConfig {
        max_redirects: u.int_in_range(0..=6u32)?,
        refresh_interval_ms: u.int_in_range(0..=300u64)?,
        read_from_replicas: u.arbitrary()?,
        stall_ms: setting(u, 500)?,
        command_timeout_ms: setting(u, 5_000)?,
        retry_budget_ms: setting(u, 20_000)?,
        backoff_first_ms: setting(u, 20)?,
        backoff_max_ms: setting(u, 500)?,
        ..ClusterConfig::default()
    };
    let max_redirects = config.max_redirects;
    let mut session = ClusterSession::new(&["10.0.0.0:7000"], config).expect("a seed");
    let mut now = 0u64;
    let mut fresh = 0u32;
    let mut command: Option<Command> = None;
    // Nodes of the last refresh: the table holds them and nodes that serve a slot.
    let mut refreshed_ids: BTreeSet<String> = BTreeSet::new();
    let mut redirects_seen = 0u32;
    for _ in 0..u.int_in_range(1..=48u8)? {
        let mut redirected = false;
        now = next_time(u, now)?;
        let action = match u.int_in_range(0..=21u8)? {
            0 | 1 => {
                let key = shardroute_fuzz::key(u)?;
                let access = if u.arbitrary()? { Access::Read } else { Access::Write };
                match session.command(&[key.as_key()], access, now) {
                    Ok(begun) => {
                        assert_eq!(session.deadline(&begun), None, "a command begun has a deadline");
                        command = Some(begun);
                    }
                    Err(err) => assert!(["invalid_argument", "cross_slot", "invalid_key"].contains(&err.code())),
                }
                None
            }
            2 | 3 => command.as_mut().map(|command| (session.poll(command, now), Via::Poll)),
            4 => command.as_mut().map(|command| (session.succeeded(command, now), Via::Poll)),
            5 | 6 => {
                redirected = true;
                let slot = match &command {
                    Some(command) if u.ratio(3, 4)? => command.slot(),
                    _ => u.int_in_range(0..=16383u32)?,
                };
                let kind = if u.ratio(3, 4)? { "MOVED" } else { "ASK" };
                let text = format!("{kind} {slot} {}", address(u, &mut fresh)?);
                command.as_mut().map(|command| (session.failed(command, &text, &[], now), Via::Poll))
            }
            7 => {
                let text = if u.arbitrary()? { redis::redirect_text(u)? } else { (*u.choose(TEXTS)?).to_string() };
                command.as_mut().map(|command| (session.failed(command, &text, &["ResponseError"], now), Via::Poll))
            }
            8 => {
                let why = *u.choose(&[Transport::Refused, Transport::Reset, Transport::Timeout])?;
                command.as_mut().map(|command| (session.unreachable(command, why, now), Via::Poll))
            }
            9 => command.as_mut().map(|command| (session.stalled(command, now), Via::Stalled)),
            10 | 11 => {
                let reply = if u.ratio(2, 3)? { redis::valid_shards(u)? } else { redis::shards_reply(u, 4)? };
                match session.refreshed(&reply, now) {
                    Ok(()) => {
                        let router = session.router().expect("a table");
                        refreshed_ids = router.nodes().iter().map(|node| node.id.clone()).collect();
                    }
                    Err(err) => assert_eq!(err.code(), "invalid_argument"),
                }
                assert_eq!(session.next_deadline(), None, "a refresh request outlives refreshed");
                None
            }
            12 => {
                session.refresh_failed(now);
                assert_eq!(session.next_deadline(), None, "a refresh request outlives refresh_failed");
                None
            }
            13 => {
                let candidates = session.refresh_candidates();
                let distinct: BTreeSet<String> = candidates.iter().map(|endpoint| endpoint.address()).collect();
                assert_eq!(distinct.len(), candidates.len(), "a candidate listed twice");
                let keys = shardroute_fuzz::keys(u, 6)?;
                let keys: Vec<Key<'_>> = keys.iter().map(|key| key.as_key()).collect();
                if let Ok(groups) = session.plan(&keys, Access::Read) {
                    let planned: usize = groups.iter().flat_map(|group| &group.slots).map(|(_, keys)| keys.len()).sum();
                    assert_eq!(planned, keys.len());
                }
                None
            }
            14..=16 => command.as_mut().map(|command| (on_deadline(&mut session, command, now), Via::OnDeadline)),
            17 | 18 => {
                let key = shardroute_fuzz::key(u)?;
                let access = if u.arbitrary()? { Access::Read } else { Access::Write };
                if let Some(sent) = send_now_timed(u, &mut session, &key, access, now)? {
                    command = Some(sent);
                }
                None
            }
            19 => {
                refresh_request(u, &mut session, now, &mut fresh)?;
                None
            }
            20 => {
                let before = session.next_deadline();
                let gave_up = session.timeout(now);
                assert_eq!(gave_up, before.is_some_and(|deadline| now >= deadline), "timeout at {now}, due {before:?}");
                if gave_up {
                    assert_eq!(session.next_deadline(), None, "a request given up still has a deadline");
                    assert_eq!(session.refresh_reply_deadline(), None);
                } else {
                    assert_eq!(session.next_deadline(), before, "a timeout not due changed the deadline");
                }
                None
            }
            _ => {
                check_addresses(u, &session)?;
                None
            }
        };
        if let (Some((action, via)), Some(command)) = (&action, &command) {
            check_action(action, now);
            check_deadlines(&session, command, action, now, *via);
        }
        check_refresh(&session);
        if let Some(command) = &command {
            assert!(command.redirects() <= max_redirects + 1, "a command followed too many redirects");
            if let (Some(deadline), Some(end)) = (session.deadline(command), session.reply_deadline(command)) {
                assert!(deadline <= end, "a deadline after the command timeout");
            }
        }
        if let Some(router) = session.router() {
            assert!(router.nodes().len() <= refreshed_ids.len() + 16_384, "the node table grew past the slots");
            assert_eq!(session.endpoints().len(), router.nodes().len());
        }
        if redirected {
            redirects_seen += 1;
        }
    }
    // Once per script (the check reads all 16,384 slots): a node a MOVED added is a
    // slot's whole chain, and once it owns no slot it leaves.
    if let Some(router) = session.router() {
        if redirects_seen > 0 {
            let owners: BTreeSet<&str> =
                (0..16_384u32).map(|slot| router.shard_owner(slot).expect("every slot has an owner")).collect();
            for node in router.nodes() {
                assert!(
                    owners.contains(node.id.as_str()) || refreshed_ids.contains(&node.id),
                    "node {} owns no slot and was not in the last refresh",
                    node.id
                );
            }
        }
        Router::from_json(&router.to_json()).expect("the session's document loads back");
    }
    Ok(())
}

/// `on_deadline`, checked against what its docs promise before the call.
fn on_deadline(session: &mut ClusterSession, command: &mut Command, now: u64) -> Action {
    let before = session.deadline(command);
    let reply_before = session.reply_deadline(command);
    let in_flight = command.in_flight();
    // With no deadline: as poll (on copies, so the run goes on with the real call).
    let as_poll = before.is_none().then(|| session.clone().poll(&mut command.clone(), now));
    let action = session.on_deadline(command, now);
    if let Some(polled) = as_poll {
        assert_eq!(action, polled, "on_deadline with no deadline is not poll");
    }
    match before {
        // Early: wait on until the deadline.
        Some(deadline) if now < deadline => {
            assert_eq!(
                action,
                Action::Wait { until_ms: deadline, delay_ms: delay(deadline, now) },
                "on_deadline early"
            );
        }
        // A stall check of an attempt still within its command timeout that asks for a
        // refresh: the deadline is now.
        Some(_) if in_flight && action == Action::Refresh && reply_before.is_none_or(|end| now < end) => {
            assert_eq!(session.deadline(command), Some(now), "the deadline after a stall's refresh");
        }
        _ => {}
    }
    action
}

fn delay(until: u64, now: u64) -> u32 {
    u32::try_from(until.saturating_sub(now)).unwrap_or(u32::MAX)
}

/// The one-call path: `send_now_timed` against `command` then `poll` on a copy of the
/// session, then (for an attempt it sent) the `Command` from `command_sent_at`.
fn send_now_timed(
    u: &mut Unstructured,
    session: &mut ClusterSession,
    key: &OwnedKey,
    access: Access,
    now: u64,
) -> Result<Option<Command>> {
    let keys = [key.as_key()];
    let mut copy = session.clone();
    let before = format!("{session:?}");
    let sent = match session.send_now_timed(&keys, access, now) {
        Ok(sent) => sent,
        Err(err) => {
            assert!(["invalid_argument", "cross_slot", "invalid_key"].contains(&err.code()));
            assert!(copy.command(&keys, access, now).is_err(), "send_now_timed refused what command takes");
            return Ok(None);
        }
    };
    let mut general = copy.command(&keys, access, now).expect("command takes what send_now_timed took");
    let polled = copy.poll(&mut general, now);
    let Some((node, readonly, deadline)) = sent else {
        assert!(!matches!(polled, Action::Send(_)), "send_now_timed gave nothing where poll sends: {polled:?}");
        assert_eq!(format!("{session:?}"), before, "send_now_timed gave nothing but changed the session");
        return Ok(None);
    };
    let Action::Send(target) = &polled else { panic!("send_now_timed sent where poll gives {polled:?}") };
    let endpoint = session.endpoints().get(node as usize).expect("send_now_timed's node is in endpoints");
    assert_eq!(endpoint, &target.endpoint, "send_now_timed and poll send to different nodes");
    assert_eq!(readonly, target.readonly, "send_now_timed and poll differ on READONLY");
    assert!(!target.asking);
    assert_eq!(deadline, copy.deadline(&general), "send_now_timed's deadline is not poll's");
    assert_eq!(deadline, attempt_deadlines(session.config(), now).0);
    assert!(deadline.is_none_or(|deadline| deadline >= now), "a fresh attempt's deadline before its send");
    assert_eq!(session.stats(), copy.stats(), "send_now_timed counted differently from command");
    // The Command of that attempt, at the send's time (the deadline it gave) or, as a
    // shell whose clock moved may do, at any other.
    let sent_ms = if u.ratio(3, 4)? { now } else { next_time(u, now)? };
    let address = endpoint.address();
    let made = session.command_sent_at(&keys, access, &address, sent_ms).expect("an address from endpoints");
    let (first, end) = attempt_deadlines(session.config(), sent_ms);
    assert_eq!(session.deadline(&made), first, "command_sent_at's deadline");
    assert_eq!(session.reply_deadline(&made), end, "command_sent_at's reply deadline");
    if sent_ms == now {
        assert_eq!(session.deadline(&made), deadline, "command_sent_at's deadline is not send_now_timed's");
    }
    assert_eq!(made.in_flight(), first.is_some());
    assert_eq!(session.stats(), copy.stats(), "command_sent_at counted the command again");
    Ok(Some(made))
}

/// A refresh's `CLUSTER SHARDS` sent to a candidate, any address, or a text that is not one.
fn refresh_request(u: &mut Unstructured, session: &mut ClusterSession, now: u64, fresh: &mut u32) -> Result<()> {
    let before = (session.next_deadline(), session.refresh_reply_deadline());
    let address = match u.int_in_range(0..=3u8)? {
        0 | 1 => {
            let candidates = session.refresh_candidates();
            if candidates.is_empty() {
                address(u, fresh)?
            } else {
                candidates[u.choose_index(candidates.len())?].address()
            }
        }
        2 => address(u, fresh)?,
        _ => {
            let text: &str = u.arbitrary()?;
            text.chars().take(80).collect()
        }
    };
    match session.refresh_sent(&address, now) {
        Ok(deadline) => {
            let (first, end) = attempt_deadlines(session.config(), now);
            assert_eq!(deadline, first, "refresh_sent's deadline at {now}");
            assert!(deadline.is_none_or(|deadline| deadline >= now), "a refresh's deadline before its send");
            assert_eq!(session.next_deadline(), deadline, "next_deadline is not refresh_sent's");
            assert_eq!(session.refresh_reply_deadline(), deadline.and(end), "refresh_reply_deadline");
        }
        Err(err) => {
            assert_eq!(err.code(), "invalid_argument", "{err}");
            assert_eq!((session.next_deadline(), session.refresh_reply_deadline()), before, "a refused request");
        }
    }
    Ok(())
}

/// `address_of`: each node of the table by its id, and ids it lacks.
fn check_addresses(u: &mut Unstructured, session: &ClusterSession) -> Result<()> {
    match session.router() {
        Some(router) => {
            let endpoints = session.endpoints();
            let ids: BTreeSet<&str> = router.nodes().iter().map(|node| node.id.as_str()).collect();
            for (node, endpoint) in router.nodes().iter().zip(endpoints) {
                assert_eq!(session.address_of(&node.id), Some(endpoint.address()), "address_of({})", node.id);
            }
            let other: String = u.arbitrary::<&str>()?.chars().take(60).collect();
            if !ids.contains(other.as_str()) {
                assert_eq!(session.address_of(&other), None, "address_of an id the table lacks");
            }
        }
        None => {
            let other: &str = u.arbitrary()?;
            assert_eq!(session.address_of(other), None, "address_of before the first table");
            assert_eq!(session.address_of("10.0.0.0:7000"), None, "a seed is not a table node");
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
