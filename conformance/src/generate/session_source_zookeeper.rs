//! The ZooKeeper source session's scenarios of `session_source.json` (written with the
//! ZooKeeper session, `core/src/session/zookeeper.rs`): each `(name, case)` is added to
//! the file after the etcd and HTTP scenarios, named `zookeeper/...`. The server's frames
//! are written with the core codec's reply encoders, which the core's unit tests check
//! byte for byte against frames captured from a real ZooKeeper 3.8
//! (`core/src/session/zookeeper/tests.rs`); they go in as `data_b64` chunks. Every step's
//! actions are the core's; the generator refuses to write the file unless each step's
//! actions are also what the scenario states by hand below (a frame sent in words:
//! `connect(zxid, timeout)`, `getData(xid path [watch])`, `exists(...)`, `setData(xid
//! path vN)`, `create(xid path [auth])`, `auth(user)`, `ping`, `closeSession(xid)`).

use serde_json::{json, Value};
use shardroute::session::zookeeper::codec::{
    self, code, connect_response, data_body, event, notification, path_body, reply, state as zk_state, Stat,
};
use shardroute::Router;

use super::session_source::{b64, failed, start, state, timer};

const PATH: &str = "/app/topology";

fn doc(epoch: u64) -> String {
    json!({"format": "shardroute/1", "epoch": epoch, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}})
        .to_string()
}

fn canonical(epoch: u64) -> String {
    Router::from_json(&doc(epoch)).expect("a document").to_json()
}

// -- steps --------------------------------------------------------------------------------

fn opened(id: u64, now: u64) -> Value {
    json!({"call": "opened", "id": id, "now": now})
}

fn bytes(id: u64, now: u64, data: &[u8]) -> Value {
    json!({"call": "chunk", "id": id, "now": now, "data_b64": b64(data)})
}

fn call(op: Value, now: u64) -> Value {
    json!({"call": "call", "op": op, "now": now})
}

fn close(now: u64) -> Value {
    json!({"call": "close", "now": now})
}

/// A `ConnectResponse` granting `granted` ms.
fn granted(id: u64, now: u64, granted: i32) -> Value {
    bytes(id, now, &connect_response(granted, 0x0100_0000_0000_0001, &[7; 16]))
}

fn stat(mzxid: i64, version: i32) -> Stat {
    Stat { czxid: 2, mzxid, version, pzxid: 2, ..Stat::default() }
}

/// `getData`'s answer to `xid`: `data` at `mzxid`, `version`.
fn data(id: u64, now: u64, xid: i32, zxid: i64, data: Option<&[u8]>, mzxid: i64, version: i32) -> Value {
    bytes(id, now, &reply(xid, zxid, 0, &data_body(data, &stat(mzxid, version))))
}

fn error(id: u64, now: u64, xid: i32, zxid: i64, err: i32) -> Value {
    bytes(id, now, &reply(xid, zxid, err, &[]))
}

fn event_step(id: u64, now: u64, kind: i32) -> Value {
    bytes(id, now, &notification(kind, zk_state::SYNC_CONNECTED, PATH))
}

// -- the hand-stated answers ------------------------------------------------------------

/// A frame the session sent, in words.
fn frame_words(data: &[u8]) -> String {
    let int = |at: usize| data.get(at..at + 4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let text = |at: usize| -> (String, usize) {
        let length = int(at).unwrap_or(0).max(0) as usize;
        let raw = data.get(at + 4..at + 4 + length).unwrap_or_default();
        (String::from_utf8_lossy(raw).into_owned(), at + 4 + length)
    };
    let (Some(first), Some(second)) = (int(4), int(8)) else { return "?".into() };
    if first == 0 {
        let zxid = data.get(8..16).map_or(0, |b| i64::from_be_bytes(b.try_into().unwrap_or_default()));
        return format!("connect({zxid}, {})", int(16).unwrap_or(0));
    }
    let watch = |at: usize| if data.get(at) == Some(&1) { " watch" } else { "" };
    match second {
        codec::op::GET_DATA => {
            let (path, end) = text(12);
            format!("getData({first} {path}{})", watch(end))
        }
        codec::op::EXISTS => {
            let (path, end) = text(12);
            format!("exists({first} {path}{})", watch(end))
        }
        codec::op::SET_DATA => {
            let (path, end) = text(12);
            let (_, end) = text(end);
            format!("setData({first} {path} v{})", int(end).unwrap_or(-9))
        }
        codec::op::CREATE => {
            let (path, end) = text(12);
            let (value, end) = text(end);
            let (scheme, _) = text(end + 8);
            let what = if value.is_empty() { " empty" } else { "" };
            format!("create({first} {path}{what} {scheme})")
        }
        codec::op::PING => "ping".into(),
        codec::op::AUTH => {
            let (_, end) = text(16);
            let (auth, _) = text(end);
            format!("auth({})", auth.split(':').next().unwrap_or(""))
        }
        codec::op::CLOSE_SESSION => format!("closeSession({first})"),
        other => format!("op {other}"),
    }
}

/// One action in words: `connect ID HOST:PORT by D`, `send ID FRAME`, `cancel ID`,
/// `offered installed|unchanged|refused X @REV [changed]`, `lost CODE AT`, `done CALL
/// RESULT`, `failed CALL CODE`.
fn action_words(action: &Value) -> String {
    if let Some(connect) = action.get("connect") {
        return format!(
            "connect {} {}:{} by {}",
            connect["id"],
            connect["host"].as_str().unwrap_or("?"),
            connect["port"],
            connect["deadline"]
        );
    }
    if let Some(send) = action.get("send") {
        let data = crate::session::decode_b64(send["data_b64"].as_str().unwrap_or("")).unwrap_or_default();
        return format!("send {} {}", send["id"], frame_words(&data));
    }
    if let Some(cancel) = action.get("cancel") {
        return format!("cancel {}", cancel["id"]);
    }
    if let Some(offered) = action.get("offered") {
        let result = &offered["result"];
        let what = if let Some(installed) = result.get("installed") {
            format!("installed {}", installed["epoch"].as_str().unwrap_or("?"))
        } else if let Some(refused) = result.get("refused") {
            format!("refused {}", refused["code"].as_str().unwrap_or("?"))
        } else {
            "unchanged".to_string()
        };
        let changed = if offered["changed"] == json!(true) { " changed" } else { "" };
        return format!("offered {what} @{}{changed}", offered["revision"].as_str().unwrap_or("?"));
    }
    if let Some(lost) = action.get("lost") {
        return format!("lost {} {}", lost["error"]["code"].as_str().unwrap_or("?"), lost["retry_at"]);
    }
    if let Some(done) = action.get("done") {
        return format!("done {} {}", done["call"], done["result"]);
    }
    if let Some(failed) = action.get("failed") {
        return format!("failed {} {}", failed["call"], failed["error"]["code"].as_str().unwrap_or("?"));
    }
    format!("? {action}")
}

/// A step's result in words: `call N: ACTIONS | deadline D`, `error CODE`, or for
/// `state`: `state EPOCH REVISION MEMBER sessions=N events=N reads=N pings=N
/// disconnects=N`.
fn words(result: &Value) -> String {
    if let Some(stats) = result.get("stats") {
        let text = |value: &Value| value.as_str().unwrap_or("-").to_string();
        return format!(
            "state {} {} {} sessions={} events={} reads={} pings={} disconnects={}",
            text(&result["epoch"]),
            text(&result["revision"]),
            result["member"].as_str().unwrap_or(""),
            stats["sessions"],
            stats["events"],
            stats["reads"],
            stats["pings"],
            stats["disconnects"]
        );
    }
    if let Some(error) = result.get("error") {
        return format!("error {}", error["code"].as_str().unwrap_or("?"));
    }
    let actions: Vec<String> =
        result["actions"].as_array().map(|a| a.iter().map(action_words).collect()).unwrap_or_default();
    let deadline = result["deadline"].as_u64().map_or("-".to_string(), |d| d.to_string());
    let call = result.get("call").map(|n| format!("call {n}: ")).unwrap_or_default();
    format!("{call}{} | deadline {deadline}", actions.join("; "))
}

/// A scenario: its name, its config's fields beyond the base, and its steps with the
/// answer each must get.
type Scenario = (&'static str, Value, Vec<(Value, String)>);

fn s(text: &str) -> String {
    text.to_string()
}

/// The steps that open a session on connection `id` at `now` (asked 6 s, granted
/// `granted`): `start` (or a call) already made the connection.
fn scenarios() -> Vec<Scenario> {
    let doc1 = doc(1);
    let doc2 = doc(2);
    let d1 = doc1.as_bytes();
    let d2 = doc2.as_bytes();
    vec![
        (
            "zookeeper/follow/handshake-read-watch",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 5), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 10, 6000), s("send 1 getData(1 /app/topology watch) | deadline 2010")),
                (data(1, 20, 1, 0x30, Some(d1), 0x2a, 0), s("offered installed 1 @42 changed | deadline 2010")),
                (state(), s("state 1 42 zk1:2181 sessions=1 events=0 reads=1 pings=0 disconnects=0")),
            ],
        ),
        (
            "zookeeper/follow/absent-then-created",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 0, 6000), s("send 1 getData(1 /app/topology watch) | deadline 2000")),
                (error(1, 1, 1, 7, code::NONODE), s("send 1 exists(2 /app/topology watch) | deadline 2001")),
                (error(1, 2, 2, 7, code::NONODE), s(" | deadline 2001")),
                (event_step(1, 50, event::NODE_CREATED), s("send 1 getData(3 /app/topology watch) | deadline 2050")),
                (data(1, 60, 3, 9, Some(d1), 9, 0), s("offered installed 1 @9 changed | deadline 2050")),
            ],
        ),
        (
            "zookeeper/follow/empty-data-is-absent",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 0, 6000), s("send 1 getData(1 /app/topology watch) | deadline 2000")),
                (data(1, 1, 1, 5, Some(b""), 5, 0), s(" | deadline 2000")),
                (event_step(1, 10, event::NODE_DATA_CHANGED), s("send 1 getData(2 /app/topology watch) | deadline 2010")),
                (data(1, 11, 2, 6, None, 6, 1), s(" | deadline 2010")),
            ],
        ),
        (
            "zookeeper/follow/data-changed-and-coalesced-reads",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 0, 6000), s("send 1 getData(1 /app/topology watch) | deadline 2000")),
                (data(1, 1, 1, 5, Some(d1), 5, 0), s("offered installed 1 @5 changed | deadline 2000")),
                (event_step(1, 10, event::NODE_DATA_CHANGED), s("send 1 getData(2 /app/topology watch) | deadline 2010")),
                // Two more events while that read is in flight: one more read after it.
                (event_step(1, 11, event::NODE_DATA_CHANGED), s(" | deadline 2010")),
                (event_step(1, 12, event::NODE_DELETED), s(" | deadline 2010")),
                (
                    data(1, 13, 2, 6, Some(d2), 6, 1),
                    s("offered installed 2 @6 changed; send 1 getData(3 /app/topology watch) | deadline 2013"),
                ),
                (data(1, 14, 3, 6, Some(d2), 6, 1), s("offered unchanged @6 | deadline 2013")),
                (state(), s("state 2 6 zk1:2181 sessions=1 events=3 reads=3 pings=0 disconnects=0")),
            ],
        ),
        (
            "zookeeper/liveness/pings-then-silent-member-left",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 0, 6000), s("send 1 getData(1 /app/topology watch) | deadline 2000")),
                (data(1, 10, 1, 5, Some(d1), 5, 0), s("offered installed 1 @5 changed | deadline 2000")),
                // Nothing sent for T/3 = 2000: a ping; nothing heard for 2T/3 = 4000: left.
                (timer(2000), s("send 1 ping | deadline 4000")),
                (bytes(1, 2001, &reply(codec::XID_PING, 5, 0, &[])), s(" | deadline 4000")),
                (timer(4000), s("send 1 ping | deadline 6000")),
                (timer(6001), s("cancel 1; connect 2 zk2:2181 by 8001 | deadline 8001")),
                (opened(2, 6002), s("send 2 connect(5, 6000) | deadline 8001")),
                (granted(2, 6003, 6000), s("send 2 getData(1 /app/topology watch) | deadline 8003")),
                (data(2, 6004, 1, 5, Some(d1), 5, 0), s("offered unchanged @5 | deadline 8003")),
                (state(), s("state 1 5 zk2:2181 sessions=2 events=0 reads=2 pings=2 disconnects=0")),
            ],
        ),
        (
            "zookeeper/members/silent-handshake-then-refusals-then-lost-and-backoff",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                // zk1 takes the connection and says nothing: zk2 after read_timeout/2.
                (timer(2000), s("cancel 1; connect 2 zk2:2181 by 4000 | deadline 4000")),
                (opened(2, 2001), s("send 2 connect(0, 6000) | deadline 4000")),
                // zk2 is behind us: a timeout of 0, the round is over.
                (granted(2, 2002, 0), s("cancel 2; lost unreachable 2102 | deadline 2102")),
                (timer(2102), s("connect 3 zk1:2181 by 4102 | deadline 4102")),
                (failed(3, 2103, "closed", "eof"), s("connect 4 zk2:2181 by 4103 | deadline 4103")),
                (failed(4, 2104, "unreachable", "connection refused"), s("lost unreachable 2304 | deadline 2304")),
                (timer(2304), s("connect 5 zk1:2181 by 4304 | deadline 4304")),
                (opened(5, 2305), s("send 5 connect(0, 6000) | deadline 4304")),
                (granted(5, 2306, 6000), s("send 5 getData(1 /app/topology watch) | deadline 4306")),
                (data(5, 2307, 1, 5, Some(d1), 5, 0), s("offered installed 1 @5 changed | deadline 4306")),
                (state(), s("state 1 5 zk1:2181 sessions=1 events=0 reads=1 pings=0 disconnects=2")),
            ],
        ),
        (
            "zookeeper/members/expired-event-moves-on",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 0, 6000), s("send 1 getData(1 /app/topology watch) | deadline 2000")),
                (data(1, 1, 1, 0x11, Some(d1), 0x11, 0), s("offered installed 1 @17 changed | deadline 2000")),
                (
                    bytes(1, 5, &notification(event::NONE, zk_state::EXPIRED, "")),
                    s("cancel 1; connect 2 zk2:2181 by 2005 | deadline 2005"),
                ),
                (opened(2, 6), s("send 2 connect(17, 6000) | deadline 2005")),
            ],
        ),
        (
            "zookeeper/malformed/oversize-frame",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 0, 6000), s("send 1 getData(1 /app/topology watch) | deadline 2000")),
                // 2^31 - 1 bytes announced: refused from its head, the next member.
                (bytes(1, 1, &[0x7f, 0xff, 0xff, 0xff, 0, 0]), s("cancel 1; connect 2 zk2:2181 by 2001 | deadline 2001")),
            ],
        ),
        (
            "zookeeper/malformed/negative-length",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (bytes(1, 1, &[0xff, 0xff, 0xff, 0xfe]), s("cancel 1; connect 2 zk2:2181 by 2001 | deadline 2001")),
            ],
        ),
        (
            "zookeeper/malformed/answer-to-no-request",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 0, 6000), s("send 1 getData(1 /app/topology watch) | deadline 2000")),
                (error(1, 1, 99, 5, 0), s("cancel 1; connect 2 zk2:2181 by 2001 | deadline 2001")),
                (failed(2, 2, "unreachable", "refused"), s("lost unreachable 102 | deadline 102")),
            ],
        ),
        (
            "zookeeper/auth/ok",
            json!({"user": "app", "password": "secret"}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 1, 6000), s("send 1 auth(app) | deadline 2000")),
                (error(1, 2, codec::XID_AUTH, 0, 0), s("send 1 getData(1 /app/topology watch) | deadline 2002")),
            ],
        ),
        (
            "zookeeper/auth/failed-is-not-retried",
            json!({"user": "app", "password": "wrong"}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (call(json!({"op": "get"}), 0), s("call 2:  | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 1, 6000), s("send 1 auth(app) | deadline 2000")),
                (
                    error(1, 2, codec::XID_AUTH, 0, code::AUTHFAILED),
                    s("cancel 1; failed 2 unauthenticated; lost unauthenticated 102 | deadline 102"),
                ),
            ],
        ),
        (
            "zookeeper/auth/noauth-read",
            json!({}),
            vec![
                (start(0), s("connect 1 zk1:2181 by 2000 | deadline 2000")),
                (opened(1, 0), s("send 1 connect(0, 6000) | deadline 2000")),
                (granted(1, 0, 6000), s("send 1 getData(1 /app/topology watch) | deadline 2000")),
                (error(1, 1, 1, 3, code::NOAUTH), s("lost unauthenticated 101 | deadline 101")),
                (timer(101), s("send 1 getData(2 /app/topology watch) | deadline 2101")),
            ],
        ),
        (
            "zookeeper/calls/get-and-refresh",
            json!({}),
            vec![
                (call(json!({"op": "get"}), 0), s("call 1: connect 2 zk1:2181 by 2000 | deadline 2000")),
                (call(json!({"op": "refresh"}), 1), s("call 3:  | deadline 2000")),
                (opened(2, 2), s("send 2 connect(0, 6000) | deadline 2000")),
                (
                    granted(2, 3, 6000),
                    s("send 2 getData(1 /app/topology); send 2 getData(2 /app/topology) | deadline 2003"),
                ),
                (
                    data(2, 4, 1, 8, Some(d1), 8, 0),
                    s("offered installed 1 @8 changed; done 3 {\"offered\":{\"installed\":{\"epoch\":\"1\"}},\"revision\":\"8\"} | deadline 2003"),
                ),
                (
                    data(2, 5, 2, 8, Some(d1), 8, 0),
                    format!("done 1 {} | deadline 2003", json!({"mzxid": "8", "value": doc1, "version": 0})),
                ),
                (call(json!({"op": "get", "path": "/none"}), 6), s("call 4: send 2 getData(3 /none) | deadline 2006")),
                (
                    error(2, 7, 3, 8, code::NONODE),
                    s("done 4 {\"mzxid\":\"0\",\"value\":null,\"version\":null} | deadline 2006"),
                ),
                (close(8), s("send 2 closeSession(4); cancel 2 | deadline -")),
            ],
        ),
        (
            "zookeeper/calls/deadline",
            json!({"path": null, "request_timeout_ms": 1000}),
            vec![
                (call(json!({"op": "get", "path": "/x"}), 0), s("call 1: connect 2 zk1:2181 by 2000 | deadline 1000")),
                (timer(1000), s("failed 1 unreachable | deadline 2000")),
            ],
        ),
        (
            "zookeeper/publish/create-with-parents",
            json!({"path": null}),
            vec![
                (
                    call(json!({"op": "publish", "path": "/a/b", "document": doc1}), 0),
                    s("call 1: connect 2 zk1:2181 by 2000 | deadline 2000"),
                ),
                (opened(2, 0), s("send 2 connect(0, 6000) | deadline 2000")),
                (granted(2, 0, 6000), s("send 2 getData(1 /a/b) | deadline 2000")),
                (error(2, 1, 1, 4, code::NONODE), s("send 2 create(2 /a/b world) | deadline 2001")),
                (error(2, 2, 2, 4, code::NONODE), s("send 2 create(3 /a empty world) | deadline 2002")),
                (bytes(2, 3, &reply(3, 5, 0, &path_body("/a"))), s("send 2 create(4 /a/b world) | deadline 2003")),
                (
                    bytes(2, 4, &reply(4, 6, 0, &path_body("/a/b"))),
                    s("done 1 {\"epoch\":\"1\",\"revision\":\"6\"} | deadline 2003"),
                ),
            ],
        ),
        (
            "zookeeper/publish/set-data-and-conflict",
            json!({"path": null}),
            vec![
                (
                    call(json!({"op": "publish", "path": "/t", "document": doc2}), 0),
                    s("call 1: connect 2 zk1:2181 by 2000 | deadline 2000"),
                ),
                (opened(2, 0), s("send 2 connect(0, 6000) | deadline 2000")),
                (granted(2, 0, 6000), s("send 2 getData(1 /t) | deadline 2000")),
                (data(2, 1, 1, 4, Some(d1), 4, 3), s("send 2 setData(2 /t v3) | deadline 2001")),
                (
                    bytes(2, 2, &reply(2, 5, 0, &stat(5, 4).encode())),
                    s("done 1 {\"epoch\":\"2\",\"revision\":\"5\"} | deadline 2001"),
                ),
                (
                    call(json!({"op": "publish", "path": "/t", "document": doc(3)}), 3),
                    s("call 3: send 2 getData(3 /t) | deadline 2003"),
                ),
                (data(2, 4, 3, 5, Some(d2), 5, 4), s("send 2 setData(4 /t v4) | deadline 2004")),
                (error(2, 5, 4, 6, code::BADVERSION), s("failed 3 conflict | deadline 2004")),
            ],
        ),
        (
            "zookeeper/publish/refused-stored-then-replace",
            json!({"path": null}),
            vec![
                (
                    call(json!({"op": "publish", "path": "/t", "document": doc(5)}), 0),
                    s("call 1: connect 2 zk1:2181 by 2000 | deadline 2000"),
                ),
                (opened(2, 0), s("send 2 connect(0, 6000) | deadline 2000")),
                (granted(2, 0, 6000), s("send 2 getData(1 /t) | deadline 2000")),
                (data(2, 1, 1, 4, Some(b"{\"epoch\": 4, \"broken\": true}"), 4, 2), s("failed 1 invalid_topology | deadline 2000")),
                (
                    call(json!({"op": "publish", "path": "/t", "document": doc(4), "replace": true}), 2),
                    s("call 3: send 2 getData(2 /t) | deadline 2002"),
                ),
                (data(2, 3, 2, 4, Some(b"{\"epoch\": 4, \"broken\": true}"), 4, 2), s("failed 3 stale_epoch | deadline 2002")),
                (
                    call(json!({"op": "publish", "path": "/t", "document": doc(5), "replace": true}), 4),
                    s("call 4: send 2 getData(3 /t) | deadline 2004"),
                ),
                (data(2, 5, 3, 4, Some(b"{\"epoch\": 4, \"broken\": true}"), 4, 2), s("send 2 setData(4 /t v2) | deadline 2005")),
                (
                    call(json!({"op": "publish", "path": "/u", "document": doc(5), "replace": true}), 6),
                    s("call 5: send 2 getData(5 /u) | deadline 2006"),
                ),
                // No epoch field to tell what followers hold: refused.
                (data(2, 7, 5, 4, Some(b"not json"), 4, 0), s("failed 5 invalid_argument | deadline 2006")),
            ],
        ),
        (
            "zookeeper/publish/create-conflict-and-noauth",
            json!({"path": null, "user": "app", "password": "secret"}),
            vec![
                (
                    call(json!({"op": "publish", "path": "/t", "document": doc1}), 0),
                    s("call 1: connect 2 zk1:2181 by 2000 | deadline 2000"),
                ),
                (opened(2, 0), s("send 2 connect(0, 6000) | deadline 2000")),
                (granted(2, 0, 6000), s("send 2 auth(app) | deadline 2000")),
                (error(2, 1, codec::XID_AUTH, 0, 0), s("send 2 getData(1 /t) | deadline 2001")),
                // With a user, a node is created for it alone (the `auth` scheme).
                (error(2, 2, 1, 4, code::NONODE), s("send 2 create(2 /t auth) | deadline 2002")),
                (error(2, 3, 2, 5, code::NODEEXISTS), s("failed 1 conflict | deadline 2002")),
                (call(json!({"op": "get", "path": "/t"}), 4), s("call 3: send 2 getData(3 /t) | deadline 2004")),
                (error(2, 5, 3, 5, code::NOAUTH), s("failed 3 unauthenticated | deadline 2004")),
            ],
        ),
        (
            "zookeeper/publish/ambiguous-write-read-back",
            json!({"path": null}),
            vec![
                (
                    call(json!({"op": "publish", "path": "/t", "document": doc2}), 0),
                    s("call 1: connect 2 zk1:2181 by 2000 | deadline 2000"),
                ),
                (opened(2, 0), s("send 2 connect(0, 6000) | deadline 2000")),
                (granted(2, 0, 6000), s("send 2 getData(1 /t) | deadline 2000")),
                (data(2, 1, 1, 4, Some(d1), 4, 3), s("send 2 setData(2 /t v3) | deadline 2001")),
                (failed(2, 2, "closed", "eof"), s("connect 3 zk2:2181 by 2002 | deadline 2002")),
                (opened(3, 3), s("send 3 connect(4, 6000) | deadline 2002")),
                (granted(3, 4, 6000), s("send 3 getData(1 /t) | deadline 2004")),
                (
                    data(3, 5, 1, 5, Some(canonical(2).as_bytes()), 5, 4),
                    s("done 1 {\"epoch\":\"2\",\"revision\":\"5\"} | deadline 2004"),
                ),
            ],
        ),
    ]
}

/// The ZooKeeper cases, in order: the scenarios, then the refused configs.
pub(crate) fn zookeeper_cases() -> Vec<(String, Value)> {
    let mut cases = Vec::new();
    for (name, extra, steps) in scenarios() {
        let mut config = json!({"source": "zookeeper", "members": ["zk1:2181", "zk2:2181"], "path": PATH,
                                "session_timeout_ms": 6000});
        if let Value::Object(fields) = extra {
            for (field, value) in fields {
                config[field] = value;
            }
        }
        let mut case = json!({"op": "session_source", "config": config});
        case["steps"] = Value::Array(steps.iter().map(|(step, _)| step.clone()).collect());
        let expect = crate::session::session_source(&case).unwrap_or_else(|err| panic!("{name}: {err}"));
        let results = expect["results"].as_array().cloned().unwrap_or_default();
        assert_eq!(results.len(), steps.len(), "{name}: {expect}");
        for (index, ((step, wanted), got)) in steps.iter().zip(&results).enumerate() {
            assert_eq!(&words(got), wanted, "{name}: step {index} {step} answered {got}");
        }
        case["expect"] = expect;
        cases.push((name.to_string(), case));
    }
    for (what, config) in [
        ("no-members", json!({"source": "zookeeper", "members": []})),
        ("bad-port", json!({"source": "zookeeper", "members": ["zk1:x"]})),
        ("relative-path", json!({"source": "zookeeper", "members": ["zk1"], "path": "app/topology"})),
        ("trailing-slash", json!({"source": "zookeeper", "members": ["zk1"], "path": "/app/"})),
        ("user-without-password", json!({"source": "zookeeper", "members": ["zk1"], "user": "app"})),
        ("password-is-the-mask", json!({"source": "zookeeper", "members": ["zk1"], "user": "a", "password": "***"})),
        ("unknown-field", json!({"source": "zookeeper", "members": ["zk1"], "timeout": 5})),
        ("zero-session-timeout", json!({"source": "zookeeper", "members": ["zk1"], "session_timeout_ms": 0})),
        ("zero-request-timeout", json!({"source": "zookeeper", "members": ["zk1"], "request_timeout_ms": 0})),
    ] {
        let mut case = json!({"op": "session_source", "config": config, "steps": []});
        let expect = crate::session::session_source(&case).expect("runs");
        assert_eq!(expect, json!({"error": {"code": "invalid_argument"}}), "config {what}");
        case["expect"] = expect;
        cases.push((format!("zookeeper/bad-config/{what}"), case));
    }
    cases
}

/// `session_source.json` with the ZooKeeper cases after its others.
pub(crate) fn with_cases(mut file: super::vector_file::VectorFile) -> super::vector_file::VectorFile {
    for (name, case) in zookeeper_cases() {
        file.case(&name, case);
    }
    file
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_scenario_answers_as_stated() {
        assert_eq!(super::zookeeper_cases().len(), 20 + 9);
    }
}
