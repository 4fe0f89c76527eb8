//! `ClusterSession::send_now` is `command` + `poll` in one call: for any history of
//! replies, refreshes and times, a twin session that takes the general path gives the same
//! first action (or `send_now` declines, and the twin's first action is not a plain send),
//! the same counters after, and the same next actions for the command `command_sent`
//! rebuilds. The histories are random sequences of the session's inputs.

use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::session::{Access, Action, ClusterConfig, ClusterSession};
use shardroute::Key;

/// A `CLUSTER SHARDS` reply: three masters on 7000-7002 with a replica each on 7003-7005,
/// `shift` moving the boundaries (a reshard).
fn shards(shift: u32) -> Value {
    let node = |port: u32, role: &str| {
        json!({"id": format!("{port:040}"), "endpoint": "127.0.0.1", "ip": "127.0.0.1", "port": port,
               "role": role, "health": "online", "replication-offset": 0})
    };
    let bounds = [0, 5461 + shift, 10923 + shift, 16384];
    Value::Array(
        (0..3)
            .map(|i| {
                json!({"slots": [bounds[i], bounds[i + 1] - 1],
                       "nodes": [node(7000 + i as u32, "master"), node(7003 + i as u32, "replica")]})
            })
            .collect(),
    )
}

#[derive(Clone, Debug)]
enum Event {
    /// Time passes.
    Advance(u64),
    /// A refresh installs the table shifted by this much.
    Refreshed(u32),
    /// A refresh fails.
    RefreshFailed,
    /// A command on this key is sent and answered, or MOVED to this port.
    Command { key: u16, read: bool, moved_to: Option<u32> },
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (0u64..400).prop_map(Event::Advance),
        (0u32..100).prop_map(Event::Refreshed),
        Just(Event::RefreshFailed),
        (any::<u16>(), any::<bool>(), prop::option::of(7000u32..7006))
            .prop_map(|(key, read, moved_to)| Event::Command { key, read, moved_to }),
    ]
}

fn access(read: bool) -> Access {
    if read {
        Access::Read
    } else {
        Access::Write
    }
}

/// Runs `event` on `session` the general way (command, poll, then the reply).
fn play(session: &mut ClusterSession, event: &Event, now: &mut u64) {
    match event {
        Event::Advance(ms) => *now += ms,
        Event::Refreshed(shift) => {
            let _ = session.refreshed(&shards(*shift), *now);
        }
        Event::RefreshFailed => session.refresh_failed(*now),
        Event::Command { key, read, moved_to } => {
            let text = format!("k{key}");
            let keys = [Key::from(text.as_str())];
            let mut command = session.command(&keys, access(*read), *now).unwrap();
            if let Action::Send(_) = session.poll(&mut command, *now) {
                match moved_to {
                    Some(port) => {
                        let reply = format!("MOVED {} 127.0.0.1:{port}", command.slot());
                        let _ = session.failed(&mut command, &reply, &["MovedError"], *now);
                    }
                    None => {
                        let _ = session.succeeded(&mut command, *now);
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn send_now_is_command_then_poll(
        history in prop::collection::vec(event(), 0..40),
        replicas in any::<bool>(),
        key in any::<u16>(),
        read in any::<bool>(),
        failure in 0usize..4,
    ) {
        let config = ClusterConfig { read_from_replicas: replicas, ..ClusterConfig::default() };
        let mut general = ClusterSession::new(&["127.0.0.1:7000"], config).unwrap();
        let mut now = 0;
        for event in &history {
            play(&mut general, event, &mut now);
        }
        let mut fast = general.clone();
        let text = format!("k{key}");
        let keys = [Key::from(text.as_str())];

        let mut command = general.command(&keys, access(read), now).unwrap();
        let expected = general.poll(&mut command, now);
        let got = fast.send_now(&keys, access(read), now).unwrap();
        match (&expected, got) {
            (Action::Send(target), Some((node, readonly))) => {
                prop_assert!(!target.asking);
                prop_assert_eq!(&fast.endpoints()[node as usize], &target.endpoint);
                prop_assert_eq!(readonly, target.readonly);
            }
            (Action::Send(target), None) => prop_assert!(false, "send_now declined a send to {:?}", target),
            (other, Some(node)) => prop_assert!(false, "send_now sent to {:?} where poll said {:?}", node, other),
            (_, None) => {
                // Declined, nothing counted: the general path's command is the only one.
                prop_assert_eq!(fast.stats().commands + 1, general.stats().commands);
                return Ok(());
            }
        }
        prop_assert_eq!(fast.stats(), general.stats());
        // The attempt's reply is read until the polled command's reply deadline.
        prop_assert_eq!(fast.sent_reply_deadline(now), general.reply_deadline(&command));

        // Whatever the attempt gets next, the rebuilt command goes on as the polled one.
        let Action::Send(target) = expected else { unreachable!() };
        let mut rebuilt = fast.command_sent(&keys, access(read), &target.endpoint.address()).unwrap();
        let later = now + 600;
        let (a, b) = match failure {
            0 => (
                general.failed(&mut command, "TRYAGAIN Multiple keys request during rehashing of slot", &[], later),
                fast.failed(&mut rebuilt, "TRYAGAIN Multiple keys request during rehashing of slot", &[], later),
            ),
            1 => {
                let moved = format!("MOVED {} 127.0.0.1:7005", command.slot());
                (general.failed(&mut command, &moved, &[], later), fast.failed(&mut rebuilt, &moved, &[], later))
            }
            2 => (general.stalled(&mut command, later), fast.stalled(&mut rebuilt, later)),
            _ => (general.succeeded(&mut command, later), fast.succeeded(&mut rebuilt, later)),
        };
        prop_assert_eq!(a, b);
        prop_assert_eq!(general.poll(&mut command, later + 1000), fast.poll(&mut rebuilt, later + 1000));
        prop_assert_eq!(general.stats(), fast.stats());
    }
}

#[test]
fn send_now_declines_without_a_table_and_refuses_what_command_refuses() {
    let mut session = ClusterSession::new(&["127.0.0.1:7000"], ClusterConfig::default()).unwrap();
    assert_eq!(session.send_now(&[Key::from("a")], Access::Read, 0).unwrap(), None);
    assert!(session.endpoints().is_empty());
    let err = session.send_now(&[Key::from("a"), Key::from("b")], Access::Read, 0).unwrap_err();
    assert_eq!(err.code(), "cross_slot");
    assert_eq!(session.send_now(&[], Access::Read, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(
        session.command_sent(&[Key::from("a")], Access::Read, "no port").unwrap_err().code(),
        "invalid_argument"
    );
    session.refreshed(&shards(0), 0).unwrap();
    assert_eq!(session.endpoints().len(), 6);
    // "a" is slot 15495: the third master, 127.0.0.1:7002.
    let (node, readonly) = session.send_now(&[Key::from("a")], Access::Write, 1).unwrap().unwrap();
    assert_eq!((session.endpoints()[node as usize].address().as_str(), readonly), ("127.0.0.1:7002", false));
    assert_eq!(session.stats().commands, 1);
}
