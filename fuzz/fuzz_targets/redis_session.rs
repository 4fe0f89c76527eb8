//! Session scenarios: a Redis Cluster session driven by a script of calls read from the
//! input — commands on keys, the outcomes of their attempts (a reply, `MOVED`/`ASK` to
//! addresses from a small pool and to new ones, busy and demoted replies, transport
//! failures, any text), stalls, refreshes with whole, hostile or garbage replies,
//! refresh failures, candidates and batch plans — at times that move forward by any
//! amount.
//!
//! Properties: nothing panics; every action is one of the documented kinds, a `fail`
//! carries `too_many_redirects`, `unavailable`, `invalid_argument` or `cross_slot`, a
//! `wait` is never before the time given; a command follows at most `max_redirects`
//! redirects; the node table stays bounded (issue 34: MOVEDs to ever new addresses do
//! not grow it past the last refresh's nodes plus one per slot), and every node of it
//! owns a slot or came from the last refresh (checked at the end of each script); the
//! router's document loads back; candidates are listed once each.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use shardroute::session::{Access, Action, ClusterConfig, ClusterSession, Command, Transport};
use shardroute::{Key, Router};
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

fn check_action(action: &Action, now: u64) {
    match action {
        Action::Fail(err) => assert!(
            ["too_many_redirects", "unavailable", "invalid_argument", "cross_slot"].contains(&err.code()),
            "{err}"
        ),
        Action::Wait { until_ms, .. } => assert!(*until_ms >= now),
        Action::Send(target) => assert!(target.endpoint.port() > 0),
        Action::Refresh | Action::Done => {}
    }
}

fn run(u: &mut Unstructured) -> Result<()> {
    let config = ClusterConfig {
        max_redirects: u.int_in_range(0..=6u32)?,
        refresh_interval_ms: u.int_in_range(0..=300u64)?,
        read_from_replicas: u.arbitrary()?,
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
        now = now.saturating_add(u64::from(u.int_in_range(0..=400u16)?));
        let action = match u.int_in_range(0..=13u8)? {
            0 | 1 => {
                let key = shardroute_fuzz::key(u)?;
                let access = if u.arbitrary()? { Access::Read } else { Access::Write };
                match session.command(&[key.as_key()], access, now) {
                    Ok(begun) => command = Some(begun),
                    Err(err) => assert!(["invalid_argument", "cross_slot", "invalid_key"].contains(&err.code())),
                }
                None
            }
            2 | 3 => command.as_mut().map(|command| session.poll(command, now)),
            4 => command.as_mut().map(|command| session.succeeded(command, now)),
            5 | 6 => {
                redirected = true;
                let slot = match &command {
                    Some(command) if u.ratio(3, 4)? => command.slot(),
                    _ => u.int_in_range(0..=16383u32)?,
                };
                let kind = if u.ratio(3, 4)? { "MOVED" } else { "ASK" };
                let text = format!("{kind} {slot} {}", address(u, &mut fresh)?);
                command.as_mut().map(|command| session.failed(command, &text, &[], now))
            }
            7 => {
                let text = if u.arbitrary()? { redis::redirect_text(u)? } else { (*u.choose(TEXTS)?).to_string() };
                command.as_mut().map(|command| session.failed(command, &text, &["ResponseError"], now))
            }
            8 => {
                let why = *u.choose(&[Transport::Refused, Transport::Reset, Transport::Timeout])?;
                command.as_mut().map(|command| session.unreachable(command, why, now))
            }
            9 => command.as_mut().map(|command| session.stalled(command, now)),
            10 | 11 => {
                let reply = if u.ratio(2, 3)? { redis::valid_shards(u)? } else { redis::shards_reply(u, 4)? };
                match session.refreshed(&reply, now) {
                    Ok(()) => {
                        let router = session.router().expect("a table");
                        refreshed_ids = router.nodes().iter().map(|node| node.id.clone()).collect();
                    }
                    Err(err) => assert_eq!(err.code(), "invalid_argument"),
                }
                None
            }
            12 => {
                session.refresh_failed(now);
                None
            }
            _ => {
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
        };
        if let Some(action) = &action {
            check_action(action, now);
        }
        if let Some(command) = &command {
            assert!(command.redirects() <= max_redirects + 1, "a command followed too many redirects");
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

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
