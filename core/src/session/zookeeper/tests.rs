//! The ZooKeeper session's unit tests: the codec against bytes captured from a real
//! ZooKeeper 3.8 (Debian's `zookeeper`, standalone on 127.0.0.1, a 10 s session asked
//! for), and the session's rules.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{json, Value};

use super::codec::*;
use super::*;
use crate::limits::MAX_ANSWER_BYTES;

/// Hex, spaces ignored.
fn bytes(hex: &str) -> Vec<u8> {
    let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits.chunks(2).map(|pair| u8::from_str_radix(core::str::from_utf8(pair).unwrap(), 16).unwrap()).collect()
}

// -- captured from a real ZooKeeper 3.8 -------------------------------------------------

/// The `ConnectResponse` to a `connect_request(0, 10_000)`: timeout 10000 granted.
const REAL_CONNECT_RESPONSE: &str =
    "00000025 00000000 00002710 01000230a0b10000 00000010 358777eb1e61cf0c9b1936f997719051 00";
/// `create("/cap", "hello")` answered (xid 1, zxid 2): the path.
const REAL_CREATE_REPLY: &str = "00000018 00000001 0000000000000002 00000000 00000004 2f636170";
/// `getData("/cap", watch)` answered (xid 2): "hello" and its stat (created at zxid 2).
const REAL_GET_DATA_REPLY: &str = "0000005d 00000002 0000000000000002 00000000 00000005 68656c6c6f \
     0000000000000002 0000000000000002 000001a24f17fa76 000001a24f17fa76 00000000 00000000 00000000 \
     0000000000000000 00000005 00000000 0000000000000002";
/// `getData("/nope", watch)` answered NONODE (xid 3).
const REAL_NONODE_REPLY: &str = "00000010 00000003 0000000000000002 ffffff9b";
/// The watch notification of `setData("/cap")`: NodeDataChanged, SyncConnected, "/cap".
const REAL_NOTIFICATION: &str = "00000020 ffffffff ffffffffffffffff 00000000 00000003 00000003 00000004 2f636170";
/// `setData("/cap", "world", version 0)` answered (xid 5, zxid 3): the new stat.
const REAL_SET_DATA_REPLY: &str = "00000054 00000005 0000000000000003 00000000 \
     0000000000000002 0000000000000003 000001a24f17fa76 000001a24f17fa82 00000001 00000000 00000000 \
     0000000000000000 00000005 00000000 0000000000000002";
/// `setData` at a stale version answered BADVERSION (xid 6).
const REAL_BADVERSION_REPLY: &str = "00000010 00000006 0000000000000004 ffffff99";
/// A ping answered.
const REAL_PING_REPLY: &str = "00000010 fffffffe 0000000000000004 00000000";
/// A digest `AuthPacket` answered (accepted).
const REAL_AUTH_REPLY: &str = "00000010 fffffffc 0000000000000000 00000000";

fn real_stat(mzxid: i64, mtime: i64, version: i32) -> Stat {
    Stat { czxid: 2, mzxid, ctime: 0x01a2_4f17_fa76, mtime, version, data_length: 5, pzxid: 2, ..Stat::default() }
}

#[test]
fn the_requests_are_the_bytes_a_real_zookeeper_answered() {
    // The capture script sent these bytes (written by hand from the jute schema).
    assert_eq!(
        connect_request(0, 10_000),
        bytes(
            "0000002d 00000000 0000000000000000 00002710 0000000000000000 00000010 00000000000000000000000000000000 00"
        )
    );
    assert_eq!(get_data_request(2, "/cap", true), bytes("00000011 00000002 00000004 00000004 2f636170 01"));
    assert_eq!(exists_request(4, "/nope", true), bytes("00000012 00000004 00000003 00000005 2f6e6f7065 01"));
    assert_eq!(
        set_data_request(5, "/cap", b"world", 0),
        bytes("0000001d 00000005 00000005 00000004 2f636170 00000005 776f726c64 00000000")
    );
    assert_eq!(
        create_request(1, "/cap", b"hello", false),
        bytes(
            "00000038 00000001 00000001 00000004 2f636170 00000005 68656c6c6f \
             00000001 0000001f 00000005 776f726c64 00000006 616e796f6e65 00000000"
        )
    );
    assert_eq!(ping_request(), bytes("00000008 fffffffe 0000000b"));
    assert_eq!(close_request(7), bytes("00000008 00000007 fffffff5"));
    assert_eq!(
        auth_request("u", "p"),
        bytes("0000001d fffffffc 00000064 00000000 00000006 646967657374 00000003 753a70")
    );
}

/// Splits one captured frame off its length, through [`Frames`].
fn one_frame(hex: &str) -> Vec<u8> {
    let mut frames = Frames::default();
    frames.push(&bytes(hex)).unwrap();
    let frame = frames.next_frame().unwrap();
    assert_eq!(frames.held(), 0);
    frame
}

#[test]
fn real_answers_decode_and_the_server_encoders_write_them_byte_for_byte() {
    let connected = decode_connect(&one_frame(REAL_CONNECT_RESPONSE)).unwrap();
    assert_eq!(connected, Connected { timeout_ms: 10_000, session_id: 0x0100_0230_a0b1_0000 });
    let password: [u8; 16] = bytes("358777eb1e61cf0c9b1936f997719051").try_into().unwrap();
    assert_eq!(connect_response(10_000, 0x0100_0230_a0b1_0000, &password), bytes(REAL_CONNECT_RESPONSE));

    assert_eq!(reply(1, 2, 0, &path_body("/cap")), bytes(REAL_CREATE_REPLY));

    let Reply::Answer { xid: 2, zxid: 2, err: 0, body } = decode_reply(&one_frame(REAL_GET_DATA_REPLY)).unwrap() else {
        panic!("a getData answer")
    };
    let node = decode_data(&body).unwrap();
    let stat = real_stat(2, 0x01a2_4f17_fa76, 0);
    assert_eq!(node, Node { data: Some(b"hello".to_vec()), stat: stat.clone() });
    assert_eq!(reply(2, 2, 0, &data_body(Some(b"hello"), &stat)), bytes(REAL_GET_DATA_REPLY));

    assert_eq!(
        decode_reply(&one_frame(REAL_NONODE_REPLY)).unwrap(),
        Reply::Answer { xid: 3, zxid: 2, err: code::NONODE, body: Vec::new() }
    );
    assert_eq!(reply(3, 2, code::NONODE, &[]), bytes(REAL_NONODE_REPLY));
    assert_eq!(class(code::NONODE), Class::Absent);

    let Reply::Notification(event) = decode_reply(&one_frame(REAL_NOTIFICATION)).unwrap() else {
        panic!("a notification")
    };
    assert!(event.changes("/cap") && !event.ends_session());
    assert_eq!(notification(event::NODE_DATA_CHANGED, state::SYNC_CONNECTED, "/cap"), bytes(REAL_NOTIFICATION));

    let Reply::Answer { xid: 5, zxid: 3, err: 0, body } = decode_reply(&one_frame(REAL_SET_DATA_REPLY)).unwrap() else {
        panic!("a setData answer")
    };
    let stat = real_stat(3, 0x01a2_4f17_fa82, 1);
    assert_eq!(decode_stat(&body).unwrap(), stat);
    assert_eq!(reply(5, 3, 0, &stat.encode()), bytes(REAL_SET_DATA_REPLY));

    assert_eq!(reply(6, 4, code::BADVERSION, &[]), bytes(REAL_BADVERSION_REPLY));
    assert_eq!(class(code::BADVERSION), Class::Conflict);
    assert_eq!(decode_reply(&one_frame(REAL_PING_REPLY)).unwrap(), Reply::Pong);
    assert_eq!(reply(XID_PING, 4, 0, &[]), bytes(REAL_PING_REPLY));
    assert_eq!(decode_reply(&one_frame(REAL_AUTH_REPLY)).unwrap(), Reply::Auth { err: 0 });
    assert_eq!(reply(XID_AUTH, 0, 0, &[]), bytes(REAL_AUTH_REPLY));
}

#[test]
fn frames_are_split_whatever_the_reads_and_refused_from_their_head() {
    let stream = [bytes(REAL_PING_REPLY), bytes(REAL_GET_DATA_REPLY)].concat();
    let mut frames = Frames::default();
    for &byte in &stream[..stream.len() - 1] {
        frames.push(&[byte]).unwrap();
    }
    assert_eq!(frames.next_frame(), Some(bytes(REAL_PING_REPLY)[4..].to_vec()));
    assert_eq!(frames.next_frame(), None, "one byte missing");
    frames.push(&stream[stream.len() - 1..]).unwrap();
    assert_eq!(frames.next_frame(), Some(bytes(REAL_GET_DATA_REPLY)[4..].to_vec()));
    assert_eq!(frames.next_frame(), None);

    let over = format!("{:08x}", MAX_ANSWER_BYTES + 1);
    for head in ["ffffffff", "80000000", over.as_str()] {
        let mut frames = Frames::default();
        // The head and a first piece of the body: refused, nothing kept.
        let mut data = bytes(head);
        data.extend_from_slice(&[0u8; 1000]);
        assert!(frames.push(&data).unwrap_err().contains("a frame of"), "{head}");
        assert_eq!(frames.held(), 0, "{head}");
    }
}

#[test]
fn records_cut_short_or_with_bad_lengths_are_errors_not_panics() {
    assert!(decode_connect(&bytes("00000000 0000")).is_err());
    assert!(decode_reply(&bytes("00000001 00")).is_err());
    assert!(decode_data(&bytes("fffffffe")).unwrap_err().contains("negative"));
    assert!(decode_data(&bytes("00000005 6162")).unwrap_err().contains("cut short"));
    let full = bytes(REAL_GET_DATA_REPLY);
    for end in 0..full.len() {
        let _ = decode_reply(&full[4..end.max(4)]);
        let _ = decode_data(&full[..end]);
        let _ = decode_connect(&full[..end]);
    }
}

#[test]
fn members_and_paths() {
    assert_eq!(parse_host("zk1:2182"), Ok(("zk1".into(), 2182)));
    assert_eq!(parse_host(" zk1 "), Ok(("zk1".into(), 2181)));
    assert_eq!(parse_host("[::1]:2181"), Ok(("::1".into(), 2181)));
    assert_eq!(parse_host("::1"), Ok(("::1".into(), 2181)));
    assert!(parse_host("zk:x").is_err());
    assert!(parse_host(":2181").is_err());
    for good in ["/", "/a", "/a/b.c", "/shardroute/topology"] {
        assert_eq!(check_path(good), Ok(()), "{good}");
    }
    for bad in ["", "a", "/a/", "//a", "/a/./b", "/.."] {
        assert!(check_path(bad).is_err(), "{bad}");
    }
    assert_eq!(parents("/a/b/c"), ["/a", "/a/b"]);
    assert!(parents("/a").is_empty());
}

// -- the session ----------------------------------------------------------------------------

fn doc(epoch: u64) -> String {
    json!({"format": "shardroute/1", "epoch": epoch, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}})
        .to_string()
}

fn session(extra: Value) -> ZookeeperSession {
    let mut config = json!({"source": "zookeeper", "members": ["zk1:2181", "zk2"], "path": "/app/topology"});
    for (name, value) in extra.as_object().unwrap() {
        config[name] = value.clone();
    }
    ZookeeperSession::from_config(&config).unwrap()
}

fn sent(actions: &[Action]) -> Vec<Vec<u8>> {
    actions.iter().filter_map(|a| if let Action::Send { data, .. } = a { Some(data.clone()) } else { None }).collect()
}

fn connect_id(actions: &[Action]) -> u64 {
    actions.iter().find_map(|a| if let Action::Connect { id, .. } = a { Some(*id) } else { None }).unwrap()
}

/// Opens a session granting `granted` ms at time `now`: the connection's id.
fn open(session: &mut ZookeeperSession, actions: &[Action], now: u64, granted: i32) -> (u64, Vec<Action>) {
    let id = connect_id(actions);
    let handshake = session.opened(id, now);
    assert_eq!(sent(&handshake), [connect_request(session.zxid, 10_000)]);
    (id, session.chunk(id, now, &connect_response(granted, 7, &[0; 16])))
}

#[test]
fn a_follower_reads_with_a_watch_offers_the_mzxid_and_pings_on_time() {
    let mut s = session(json!({}));
    let start = s.start(0);
    assert_eq!(
        start,
        [Action::Connect { id: 1, host: "zk1".into(), port: 2181, deadline: 3333 }],
        "the handshake gets the read timeout (2/3 of 10 s) over two members"
    );
    let (id, ready) = open(&mut s, &start, 10, 6000);
    assert_eq!(sent(&ready), [get_data_request(1, "/app/topology", true)]);
    let stat = Stat { mzxid: 0x42, version: 3, ..Stat::default() };
    let answer = s.chunk(id, 20, &reply(1, 0x50, 0, &data_body(Some(doc(4).as_bytes()), &stat)));
    assert_eq!(answer, [Action::Offered { offered: Offered::Installed { epoch: 4 }, changed: true, revision: 0x42 }]);
    // The read sent at 10: a third of 6 s later, a ping; heard at 20: lost at 20 + 4000.
    assert_eq!(s.deadline(), Some(2010));
    assert_eq!(s.timer(2010), [Action::Send { id, data: ping_request() }]);
    assert_eq!(s.deadline(), Some(4010));
    assert_eq!(s.timer(4010), [Action::Send { id, data: ping_request() }]);
    assert_eq!(s.deadline(), Some(4020));
    let lost = s.timer(4020);
    assert_eq!(lost[0], Action::Cancel { id });
    assert!(matches!(&lost[1], Action::Connect { host, .. } if host == "zk2"), "{lost:?}");
    assert_eq!(s.zxid, 0x50, "the next session tells the largest zxid seen");
}

#[test]
fn events_during_a_read_make_one_more_read_and_absent_nodes_get_an_exists_watch() {
    let mut s = session(json!({}));
    let start = s.start(0);
    let (id, _) = open(&mut s, &start, 0, 6000);
    // Two events while the first read is in flight: one more read after it.
    assert!(s.chunk(id, 1, &notification(event::NODE_DATA_CHANGED, 3, "/app/topology")).is_empty());
    assert!(s.chunk(id, 1, &notification(event::NODE_DATA_CHANGED, 3, "/app/topology")).is_empty());
    let after = s.chunk(id, 2, &reply(1, 9, code::NONODE, &[]));
    assert_eq!(sent(&after), [exists_request(2, "/app/topology", true)]);
    let after = s.chunk(id, 3, &reply(2, 9, code::NONODE, &[]));
    assert_eq!(sent(&after), [get_data_request(3, "/app/topology", true)]);
    assert!(s.chunk(id, 4, &reply(3, 9, code::NONODE, &[])).len() == 1);
    assert_eq!(s.state()["stats"]["events"], 2);
}

#[test]
fn a_malformed_frame_leaves_the_member_and_all_members_down_is_lost_with_a_backoff() {
    let mut s = session(json!({}));
    let start = s.start(0);
    let (id, _) = open(&mut s, &start, 0, 6000);
    let out = s.chunk(id, 5, &bytes("ffffffff"));
    assert_eq!(out[0], Action::Cancel { id });
    let next = connect_id(&out);
    let out = s.failed(next, 6, "unreachable", "connection refused");
    assert!(matches!(&out[..], [Action::Lost { error, retry_at: 106 }] if error.code == "unreachable"), "{out:?}");
    assert_eq!(s.deadline(), Some(106));
    let again = s.timer(106);
    assert!(matches!(&again[..], [Action::Connect { host, .. }] if host == "zk1"), "{again:?}");
}

#[test]
fn a_publish_creates_missing_parents_then_the_node() {
    let mut s = session(json!({"path": null}));
    let (call, out) = s.call(&json!({"op": "publish", "path": "/a/b", "document": doc(1)}), 0).unwrap();
    let (id, ready) = open(&mut s, &out, 0, 6000);
    assert_eq!(sent(&ready), [get_data_request(1, "/a/b", false)]);
    let out = s.chunk(id, 1, &reply(1, 5, code::NONODE, &[]));
    let canonical = Router::from_json(&doc(1)).unwrap().to_json();
    assert_eq!(sent(&out), [create_request(2, "/a/b", canonical.as_bytes(), false)]);
    let out = s.chunk(id, 2, &reply(2, 5, code::NONODE, &[]));
    assert_eq!(sent(&out), [create_request(3, "/a", b"", false)]);
    let out = s.chunk(id, 3, &reply(3, 6, 0, &path_body("/a")));
    assert_eq!(sent(&out), [create_request(4, "/a/b", canonical.as_bytes(), false)]);
    let out = s.chunk(id, 4, &reply(4, 7, 0, &path_body("/a/b")));
    assert_eq!(out, [Action::Done { call, result: json!({"revision": "7", "epoch": "1"}) }]);
}

#[test]
fn a_write_whose_session_was_lost_is_read_back() {
    let mut s = session(json!({"path": null}));
    let (call, out) = s.call(&json!({"op": "publish", "path": "/t", "document": doc(2)}), 0).unwrap();
    let (id, _) = open(&mut s, &out, 0, 6000);
    let stored = Stat { mzxid: 4, version: 1, ..Stat::default() };
    let out = s.chunk(id, 1, &reply(1, 5, 0, &data_body(Some(doc(1).as_bytes()), &stored)));
    let canonical = Router::from_json(&doc(2)).unwrap().to_json();
    assert_eq!(sent(&out), [set_data_request(2, "/t", canonical.as_bytes(), 1)]);
    let out = s.failed(id, 2, "closed", "eof");
    let (id, ready) = open(&mut s, &out, 3, 6000);
    assert_eq!(sent(&ready), [get_data_request(1, "/t", false)]);
    let now = Stat { mzxid: 6, version: 2, ..Stat::default() };
    let out = s.chunk(id, 4, &reply(1, 6, 0, &data_body(Some(canonical.as_bytes()), &now)));
    assert_eq!(out, [Action::Done { call, result: json!({"revision": "6", "epoch": "2"}) }]);
}

#[test]
fn configs_are_checked_and_the_password_hidden() {
    for bad in [
        json!({"source": "zookeeper", "members": []}),
        json!({"source": "zookeeper", "members": ["zk:x"]}),
        json!({"source": "zookeeper", "members": ["zk"], "path": "a/b"}),
        json!({"source": "zookeeper", "members": ["zk"], "user": "u"}),
        json!({"source": "zookeeper", "members": ["zk"], "session_timeout_ms": 0}),
        json!({"source": "zookeeper", "members": ["zk"], "extra": 1}),
        json!({"source": "zookeeper", "members": ["zk"], "user": "u", "password": "***"}),
    ] {
        assert_eq!(ZookeeperSession::from_config(&bad).unwrap_err().code(), "invalid_argument", "{bad}");
    }
    let s = session(json!({"user": "u", "password": "secret"}));
    assert_eq!(s.config()["password"], "***");
    assert!(!format!("{s:?}").contains("secret"));
}

#[test]
fn no_input_panics() {
    let mut s = session(json!({"user": "u", "password": "p"}));
    let start = s.start(0);
    let id = connect_id(&start);
    s.opened(id, 0);
    let stream = [
        connect_response(6000, 1, &[0; 16]),
        bytes(REAL_AUTH_REPLY),
        bytes(REAL_GET_DATA_REPLY),
        bytes(REAL_NOTIFICATION),
        bytes(REAL_SET_DATA_REPLY),
    ]
    .concat();
    for cut in 0..stream.len() {
        let mut copy = session(json!({}));
        let start = copy.start(0);
        let id = connect_id(&start);
        copy.opened(id, 0);
        let mut garbled = stream.clone();
        garbled[cut] ^= 0xA5;
        copy.chunk(id, 1, &garbled[..cut]);
        copy.chunk(id, 2, &garbled[cut..]);
        copy.timer(10_000);
    }
    s.chunk(id, 1, &stream);
}

#[test]
fn the_handshake_gets_the_read_timeout_over_the_members_at_least_100_ms_in_all() {
    // 2/3 of 90 ms is 60: the floor, 100 ms, over two members.
    let mut s = session(json!({"session_timeout_ms": 90}));
    assert!(matches!(&s.start(7)[..], [Action::Connect { deadline: 57, .. }]));
    let mut s = session(json!({"members": ["a", "b", "c"], "session_timeout_ms": 30_000}));
    assert!(matches!(&s.start(0)[..], [Action::Connect { deadline: 6666, .. }]));
}

#[test]
fn an_auth_failed_state_event_is_unauthenticated_and_not_tried_elsewhere() {
    let mut s = session(json!({"user": "u", "password": "p"}));
    let start = s.start(0);
    let (id, out) = open(&mut s, &start, 0, 6000);
    assert_eq!(sent(&out), [auth_request("u", "p")]);
    let out = s.chunk(id, 1, &notification(event::NONE, state::AUTH_FAILED, ""));
    assert_eq!(out[0], Action::Cancel { id });
    assert!(matches!(&out[1..], [Action::Lost { error, .. }] if error.code == "unauthenticated"), "{out:?}");
    assert!(s.conn.is_none(), "no other member tried");
}
