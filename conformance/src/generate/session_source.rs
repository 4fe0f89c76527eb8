//! `session_source.json`: scenarios of the source sessions (`core/src/session/etcd.rs`
//! here; the HTTP session's from `session_source_http.rs`, ZooKeeper's from
//! `session_source_zookeeper.rs`). Each case makes a session from a config and scripts it: starts and calls, the answers of etcd's JSON gateway
//! (as etcd 3.4.23 writes them: captured from a real member and copied, only keys,
//! values and revisions changed), stream chunks, transport failures and the passing of
//! deadlines. Every step's actions are the core's; the generator refuses to write the
//! file unless each step's actions are also what the scenario states by hand below.

use serde_json::{json, Value};
use shardroute::Router;

use super::vector_file::VectorFile;

const A: &str = "http://etcd-1:2379";
const B: &str = "http://etcd-2:2379";
const C: &str = "http://etcd-3:2379";
const KEY: &str = "/app/topology";
const TOKEN: &str = "mfRYgfgitCKyVVoA.19";

/// Standard base64, as etcd's gateway writes bytes.
pub(super) fn b64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let n = (u32::from(group[0]) << 16)
            | (u32::from(*group.get(1).unwrap_or(&0)) << 8)
            | u32::from(*group.get(2).unwrap_or(&0));
        for i in 0..4 {
            out.push(if i <= group.len() { ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char } else { '=' });
        }
    }
    out
}

/// A topology document of `epoch` in its canonical form (what a publisher writes).
fn doc(epoch: u64) -> String {
    let nodes: Vec<Value> = (0..=epoch.min(4)).map(|i| json!({"id": format!("n{i}")})).collect();
    let text = json!({"format": "shardroute/1", "epoch": epoch, "nodes": nodes, "strategy": {"type": "jump"}});
    Router::from_value(&text).expect("a document").to_json()
}

// -- etcd's answers, as etcd 3.4.23 writes them ---------------------------------------

fn header(revision: u64) -> Value {
    json!({"cluster_id": "15118495548433857066", "member_id": "13668033151171901709", "revision": revision.to_string(), "raft_term": "2"})
}

/// A kv of `key` holding `value`, last written at `mod_revision`.
fn kv(key: &str, value: &[u8], mod_revision: u64) -> Value {
    json!({"key": b64(key.as_bytes()), "create_revision": "2", "mod_revision": mod_revision.to_string(), "version": "1", "value": b64(value)})
}

/// A `/v3/kv/range` answer: the key's kv, or none (absent).
fn range(revision: u64, found: Option<Value>) -> String {
    match found {
        Some(kv) => json!({"header": header(revision), "kvs": [kv], "count": "1"}),
        None => json!({"header": header(revision)}),
    }
    .to_string()
}

/// A txn of range requests answered: one kv (or none) per key.
fn ranges(revision: u64, found: Vec<Option<Value>>) -> String {
    let responses: Vec<Value> = found
        .into_iter()
        .map(|kv| match kv {
            Some(kv) => {
                json!({"response_range": {"header": {"revision": revision.to_string()}, "kvs": [kv], "count": "1"}})
            }
            None => json!({"response_range": {"header": {"revision": revision.to_string()}}}),
        })
        .collect();
    json!({"header": header(revision), "succeeded": true, "responses": responses}).to_string()
}

/// The follower's read of the key alone: `doc` at `mod_revision`, store at `revision`.
fn read(revision: u64, document: Option<(&str, u64)>) -> String {
    ranges(revision, vec![document.map(|(text, at)| kv(KEY, text.as_bytes(), at))])
}

fn txn_ok(revision: u64) -> String {
    json!({"header": header(revision), "succeeded": true, "responses": [{"response_put": {"header": {"revision": revision.to_string()}}}]}).to_string()
}

fn txn_failed(revision: u64) -> String {
    json!({"header": header(revision)}).to_string()
}

fn error_body(message: &str, code: u64) -> String {
    json!({"error": message, "message": message, "code": code}).to_string()
}

fn created(revision: u64) -> String {
    format!("{}\n", json!({"result": {"header": header(revision), "created": true}}))
}

fn events(revision: u64) -> String {
    let kv = kv(KEY, doc(9).as_bytes(), revision);
    format!("{}\n", json!({"result": {"header": header(revision), "events": [{"kv": kv}]}}))
}

/// A watch line of one event on the key: a PUT of `document`, or a DELETE (`None`), at
/// `revision` (as etcd 3.4.23 writes them, see `verbatim::PUT_EVENT` / `DELETE_EVENT`).
fn event(revision: u64, document: Option<&str>) -> String {
    let event = match document {
        Some(text) => json!({"kv": kv(KEY, text.as_bytes(), revision)}),
        None => json!({"type": "DELETE", "kv": {"key": b64(KEY.as_bytes()), "mod_revision": revision.to_string()}}),
    };
    format!("{}\n", json!({"result": {"header": header(revision), "events": [event]}}))
}

fn progress(revision: u64) -> String {
    format!("{}\n", json!({"result": {"header": header(revision)}}))
}

fn compacted_line(at: u64) -> String {
    let header = json!({"cluster_id": "15118495548433857066", "member_id": "13668033151171901709", "raft_term": "2"});
    format!("{}\n", json!({"result": {"header": header, "canceled": true, "compact_revision": at.to_string()}}))
}

/// Answers of etcd 3.4.23's gateway, byte for byte as a real member wrote them (key `/t`
/// holding `{"epoch":1}`, companion `/u` absent).
mod verbatim {
    pub const AUTH: &str = r#"{"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"7","raft_term":"2"},"token":"mfRYgfgitCKyVVoA.19"}"#;
    pub const INVALID_TOKEN: &str =
        r#"{"error":"etcdserver: invalid auth token","message":"etcdserver: invalid auth token","code":16}"#;
    pub const GET_MANY: &str = r#"{"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"2","raft_term":"2"},"succeeded":true,"responses":[{"response_range":{"header":{"revision":"2"},"kvs":[{"key":"L3Q=","create_revision":"2","mod_revision":"2","version":"1","value":"eyJlcG9jaCI6MX0="}],"count":"1"}},{"response_range":{"header":{"revision":"2"}}}]}"#;
    pub const RANGE: &str = r#"{"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"2","raft_term":"2"},"kvs":[{"key":"L3Q=","create_revision":"2","mod_revision":"2","version":"1","value":"eyJlcG9jaCI6MX0="}],"count":"1"}"#;
    pub const DELETED: &str = r#"{"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"5","raft_term":"2"},"deleted":"1"}"#;
    pub const CREATED: &str = "{\"result\":{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"5\",\"raft_term\":\"2\"},\"created\":true}}\n";
    pub const PUT_EVENT: &str = "{\"result\":{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"6\",\"raft_term\":\"2\"},\"events\":[{\"kv\":{\"key\":\"L3Q=\",\"create_revision\":\"2\",\"mod_revision\":\"6\",\"version\":\"3\",\"value\":\"eyJlcG9jaCI6M30=\"}}]}}\n";
    pub const DELETE_EVENT: &str = "{\"result\":{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"7\",\"raft_term\":\"2\"},\"events\":[{\"type\":\"DELETE\",\"kv\":{\"key\":\"L3Q=\",\"mod_revision\":\"7\"}}]}}\n";
    pub const COMPACTED: &str = "{\"result\":{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"7\",\"raft_term\":\"2\"},\"created\":true}}\n{\"result\":{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"raft_term\":\"2\"},\"canceled\":true,\"compact_revision\":\"3\"}}\n";
}

// -- steps --------------------------------------------------------------------------------

pub(super) fn start(now: u64) -> Value {
    json!({"call": "start", "now": now})
}

fn call(op: Value, now: u64) -> Value {
    json!({"call": "call", "op": op, "now": now})
}

fn answer(id: u64, now: u64, status: u16, body: &str) -> Value {
    json!({"call": "response", "id": id, "now": now, "status": status, "headers": {"content-type": "application/json"}, "body": body})
}

fn ok(id: u64, now: u64, body: &str) -> Value {
    answer(id, now, 200, body)
}

/// A watch's head (status 200, its body to come in chunks).
fn head(id: u64, now: u64) -> Value {
    answer(id, now, 200, "")
}

fn chunk(id: u64, now: u64, data: &str) -> Value {
    json!({"call": "chunk", "id": id, "now": now, "data": data})
}

pub(super) fn failed(id: u64, now: u64, code: &str, message: &str) -> Value {
    json!({"call": "failed", "id": id, "now": now, "code": code, "message": message})
}

pub(super) fn timer(now: u64) -> Value {
    json!({"call": "timer", "now": now})
}

pub(super) fn state() -> Value {
    json!({"call": "state"})
}

fn unavailable_503() -> String {
    error_body("etcdserver: server stopped", 14)
}

// -- the hand-stated answers ------------------------------------------------------------

fn short(url: &str) -> String {
    url.trim_start_matches("http://").replace(":2379", "")
}

/// One action in words: `req ID HOST/PATH [auth]`, `watch ID HOST from N [auth]`,
/// `cancel ID`, `offered installed|unchanged|refused X @REV [changed]`, `lost CODE AT`,
/// `done CALL RESULT`, `failed CALL CODE`.
fn action_words(action: &Value) -> String {
    if let Some(request) = action.get("request") {
        let url = short(request["url"].as_str().unwrap_or(""));
        let auth = if request["headers"].get("authorization").is_some() { " auth" } else { "" };
        if request["stream"] == json!(true) {
            let body: Value = serde_json::from_str(request["body"].as_str().unwrap_or("")).unwrap_or_default();
            let from = body["create_request"]["start_revision"].as_str().unwrap_or("?").to_string();
            return format!("watch {} {} from {from}{auth}", request["id"], url.trim_end_matches("/v3/watch"));
        }
        return format!("req {} {url}{auth}", request["id"]);
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

/// A step's result in words: `call N: ACTIONS | deadline D` (`-` for none; actions
/// joined by `; `), `error CODE`, or for `state`: `state EPOCH REVISION MEMBER
/// reads=N restarts=N disconnects=N`.
fn words(result: &Value) -> String {
    if let Some(stats) = result.get("stats") {
        let text = |value: &Value| value.as_str().unwrap_or("-").to_string();
        return format!(
            "state {} {} {} reads={} restarts={} disconnects={}",
            text(&result["epoch"]),
            text(&result["revision"]),
            short(result["member"].as_str().unwrap_or("")),
            stats["reads"],
            stats["watch_restarts"],
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

/// A scenario: its name, its config, and its steps with the answer each must get.
type Scenario = (&'static str, Value, Vec<(Value, String)>);

fn etcd(members: &[&str], extra: Value) -> Value {
    let mut config = json!({"source": "etcd", "members": members});
    if let Value::Object(fields) = extra {
        for (name, value) in fields {
            config[name] = value;
        }
    }
    config
}

fn follow(members: &[&str]) -> Value {
    etcd(members, json!({"key": KEY}))
}

fn s(text: &str) -> String {
    text.to_string()
}

fn scenarios() -> Vec<Scenario> {
    let d1 = doc(1);
    let d2 = doc(2);
    let d3 = doc(3);
    let d4 = doc(4);
    vec![
        (
            "follow-reads-then-watches-from-the-read-revision-plus-one",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 10, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5010")),
                (head(2, 12), s(" | deadline 10012")),
                (chunk(2, 13, &created(5)), s(" | deadline 10013")),
                // No companions: the event's value is offered as it comes, no read.
                (chunk(2, 500, &event(6, Some(&d2))), s("offered installed 2 @6 changed | deadline 10500")),
                (state(), s("state 2 6 etcd-1 reads=1 restarts=0 disconnects=0")),
            ],
        ),
        (
            // One watch line is at most one offer: of two events for the key in one line,
            // the newest is offered (as a read would coalesce them); the older one is
            // superseded, neither told nor refused. Two offers from one line made every
            // shell read the newest router after the line and tell it twice.
            "one-watch-line-of-two-events-offers-its-newest",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 10, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5010")),
                (head(2, 12), s(" | deadline 10012")),
                (chunk(2, 13, &created(5)), s(" | deadline 10013")),
                (
                    chunk(
                        2,
                        500,
                        &format!(
                            "{}\n",
                            json!({"result": {"header": header(7), "events": [
                                {"kv": kv(KEY, d2.as_bytes(), 6)},
                                {"kv": kv(KEY, d3.as_bytes(), 7)},
                            ]}})
                        ),
                    ),
                    s("offered installed 3 @7 changed | deadline 10500"),
                ),
                (state(), s("state 3 7 etcd-1 reads=1 restarts=0 disconnects=0")),
            ],
        ),
        (
            // With companions, events ask for a read (one txn's events may not carry every
            // companion).
            "with-companions-events-during-a-read-make-one-more-read-after-it",
            etcd(&[A], json!({"key": KEY, "also": ["/app/config"]})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (
                    ok(1, 1, &ranges(5, vec![Some(kv(KEY, d1.as_bytes(), 4)), None])),
                    s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5001"),
                ),
                (head(2, 2), s(" | deadline 10002")),
                (chunk(2, 3, &events(6)), s("req 3 etcd-1/v3/kv/txn | deadline 5003")),
                (chunk(2, 4, &format!("{}{}", events(7), events(8))), s(" | deadline 5003")),
                (
                    ok(3, 5, &ranges(6, vec![Some(kv(KEY, d2.as_bytes(), 6)), None])),
                    s("offered installed 2 @6 changed; req 4 etcd-1/v3/kv/txn | deadline 5005"),
                ),
                (
                    ok(4, 6, &ranges(8, vec![Some(kv(KEY, d3.as_bytes(), 8)), None])),
                    s("offered installed 3 @8 changed | deadline 10004"),
                ),
                (state(), s("state 3 8 etcd-1 reads=3 restarts=0 disconnects=0")),
            ],
        ),
        (
            // Issue 35, defect 1: a quiet stream is idle, answered by a read and a new
            // watch; not a lost source (no `lost`, no backoff, no disconnect counted).
            "a-quiet-watch-is-read-and-watched-again-not-lost",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (chunk(2, 0, &created(5)), s(" | deadline 10000")),
                (timer(10_000), s("cancel 2; req 3 etcd-1/v3/kv/txn | deadline 15000")),
                (ok(3, 10_001, &read(5, Some((&d1, 4)))), s("offered unchanged @4; watch 4 etcd-1 from 6 | deadline 15001")),
                (head(4, 10_002), s(" | deadline 20002")),
                (timer(20_002), s("cancel 4; req 5 etcd-1/v3/kv/txn | deadline 25002")),
                (ok(5, 20_003, &read(7, Some((&d2, 7)))), s("offered installed 2 @7 changed; watch 6 etcd-1 from 8 | deadline 25003")),
                (state(), s("state 2 7 etcd-1 reads=3 restarts=0 disconnects=0")),
            ],
        ),
        (
            "a-progress-line-resets-the-idle-deadline",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (chunk(2, 9_000, &progress(5)), s(" | deadline 19000")),
                (chunk(2, 18_000, "{\"result\":{\"header\":"), s(" | deadline 28000")),
                (chunk(2, 18_001, &format!("{}}}}}\n", header(5))), s(" | deadline 28001")),
            ],
        ),
        (
            "idle-ms-zero-keeps-no-idle-deadline",
            etcd(&[A], json!({"key": KEY, "idle_ms": 0})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline -")),
                (timer(1_000_000), s(" | deadline -")),
            ],
        ),
        (
            // A quiet watch on a member that stopped answering: the read finds out, at
            // the next member; still no loss.
            "a-quiet-watch-on-a-dead-member-reads-the-next",
            follow(&[A, B]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (timer(10_000), s("cancel 2; req 3 etcd-1/v3/kv/txn | deadline 15000")),
                (timer(15_000), s("cancel 3; req 4 etcd-2/v3/kv/txn | deadline 20000")),
                (ok(4, 15_010, &read(5, Some((&d1, 4)))), s("offered unchanged @4; watch 5 etcd-2 from 6 | deadline 20010")),
                (state(), s("state 1 4 etcd-2 reads=2 restarts=0 disconnects=0")),
            ],
        ),
        (
            // Issue 35, defect 2: a member answering 503 (a member shutting down) is
            // left for the next, for a call.
            "a-503-member-listed-first-is-left-for-the-next-call",
            etcd(&[A, B], json!({})),
            vec![
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 5000")),
                (answer(2, 3, 503, &unavailable_503()), s("req 3 etcd-2/v3/kv/range | deadline 5003")),
                (
                    ok(3, 4, &range(5, Some(kv(KEY, d1.as_bytes(), 4)))),
                    format!("done 1 {} | deadline -", json!({"value": d1, "mod_revision": "4"})),
                ),
                (call(json!({"op": "get", "key": KEY}), 5), s("call 4: req 5 etcd-2/v3/kv/range | deadline 5005")),
                (state(), s("state - - etcd-2 reads=0 restarts=0 disconnects=0")),
            ],
        ),
        (
            "a-503-member-listed-first-is-left-for-the-next-follower-read",
            follow(&[A, B]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (answer(1, 1, 503, &unavailable_503()), s("req 2 etcd-2/v3/kv/txn | deadline 5001")),
                (ok(2, 2, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 3 etcd-2 from 6 | deadline 5002")),
                (state(), s("state 1 4 etcd-2 reads=1 restarts=0 disconnects=0")),
            ],
        ),
        (
            "a-503-member-is-left-for-the-next-watch-opening",
            follow(&[A, B]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 1, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5001")),
                (answer(2, 2, 503, &unavailable_503()), s("watch 3 etcd-2 from 6 | deadline 5002")),
                (head(3, 3), s(" | deadline 10003")),
                (state(), s("state 1 4 etcd-2 reads=1 restarts=0 disconnects=0")),
            ],
        ),
        (
            "grpc-unavailable-in-an-error-body-moves-on-whatever-the-status",
            etcd(&[A, B], json!({})),
            vec![
                (call(json!({"op": "put", "key": KEY, "value": "x"}), 0), s("call 1: req 2 etcd-1/v3/kv/put | deadline 5000")),
                (answer(2, 1, 502, &error_body("upstream connect error", 14)), s("req 3 etcd-2/v3/kv/put | deadline 5001")),
                (ok(3, 2, &json!({"header": header(9)}).to_string()), s("done 1 {\"revision\":\"9\"} | deadline -")),
            ],
        ),
        (
            "no-leader-and-leader-changed-move-on",
            etcd(&[A, B, C], json!({})),
            vec![
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 5000")),
                (answer(2, 1, 503, &error_body("etcdserver: no leader", 14)), s("req 3 etcd-2/v3/kv/range | deadline 5001")),
                (answer(3, 2, 503, &error_body("etcdserver: leader changed", 14)), s("req 4 etcd-3/v3/kv/range | deadline 5002")),
                (ok(4, 3, &range(5, None)), s("done 1 {\"mod_revision\":\"0\",\"value\":null} | deadline -")),
            ],
        ),
        (
            "every-member-unreachable-fails-with-the-last-error-round-the-list-once",
            etcd(&[A, B, C], json!({})),
            vec![
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 5000")),
                (failed(2, 1, "unreachable", "connection refused"), s("req 3 etcd-2/v3/kv/range | deadline 5001")),
                (failed(3, 2, "unreachable", "connection refused"), s("req 4 etcd-3/v3/kv/range | deadline 5002")),
                (answer(4, 3, 503, &unavailable_503()), s("failed 1 http | deadline -")),
                (state(), s("state - - etcd-1 reads=0 restarts=0 disconnects=0")),
            ],
        ),
        (
            "a-request-past-its-deadline-is-cancelled-and-sent-to-the-next",
            etcd(&[A, B], json!({"request_timeout_ms": 2000})),
            vec![
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 2000")),
                (timer(1_999), s(" | deadline 2000")),
                (timer(2_000), s("cancel 2; req 3 etcd-2/v3/kv/range | deadline 4000")),
                (ok(2, 2_001, &range(5, None)), s(" | deadline 4000")),
                (timer(4_000), s("cancel 3; failed 1 unreachable | deadline -")),
            ],
        ),
        (
            // One request timeout for all: a call, a follower's read and a watch's
            // opening (until its head; then the idle deadline).
            "one-request-timeout-for-calls-reads-and-watch-openings",
            etcd(&[A], json!({"key": KEY, "request_timeout_ms": 700, "idle_ms": 3000})),
            vec![
                (start(100), s("req 1 etcd-1/v3/kv/txn | deadline 800")),
                (call(json!({"op": "get", "key": "/other"}), 200), s("call 2: req 3 etcd-1/v3/kv/range | deadline 800")),
                (ok(1, 300, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 4 etcd-1 from 6 | deadline 900")),
                (ok(3, 400, &range(5, None)), s("done 2 {\"mod_revision\":\"0\",\"value\":null} | deadline 1000")),
                (head(4, 500), s(" | deadline 3500")),
            ],
        ),
        (
            // No poll interval for etcd (interval minus elapsed is HTTP's): after each
            // read the watch opens at once, and only request and idle deadlines remain.
            "etcd-has-no-poll-interval-the-watch-opens-at-once",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 4_999, &read(5, None)), s("watch 2 etcd-1 from 6 | deadline 9999")),
                (head(2, 5_000), s(" | deadline 15000")),
                (state(), s("state - - etcd-1 reads=1 restarts=0 disconnects=0")),
            ],
        ),
        (
            "another-http-error-is-not-retried",
            etcd(&[A, B], json!({})),
            vec![
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 5000")),
                (answer(2, 1, 404, "404 page not found\n"), s("failed 1 http | deadline -")),
                (state(), s("state - - etcd-1 reads=0 restarts=0 disconnects=0")),
            ],
        ),
        (
            "a-concurrent-call-that-moved-on-is-not-skipped-past",
            etcd(&[A, B, C], json!({})),
            vec![
                (call(json!({"op": "get", "key": "/x"}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 5000")),
                (call(json!({"op": "get", "key": "/y"}), 0), s("call 3: req 4 etcd-1/v3/kv/range | deadline 5000")),
                (answer(2, 1, 503, &unavailable_503()), s("req 5 etcd-2/v3/kv/range | deadline 5000")),
                (answer(4, 2, 503, &unavailable_503()), s("req 6 etcd-2/v3/kv/range | deadline 5001")),
                (state(), s("state - - etcd-2 reads=0 restarts=0 disconnects=0")),
            ],
        ),
        (
            "an-answer-that-is-not-etcds-is-malformed",
            etcd(&[A], json!({})),
            vec![
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 5000")),
                (ok(2, 1, "<html>proxy</html>"), s("failed 1 malformed | deadline -")),
                (call(json!({"op": "get", "key": KEY}), 0), s("call 3: req 4 etcd-1/v3/kv/range | deadline 5000")),
                (ok(4, 1, "[1]"), s("failed 3 malformed | deadline -")),
                (call(json!({"op": "put", "key": KEY, "value": "v"}), 0), s("call 5: req 6 etcd-1/v3/kv/put | deadline 5000")),
                (ok(6, 1, "{}"), s("failed 5 malformed | deadline -")),
                (call(json!({"op": "get", "key": KEY}), 0), s("call 7: req 8 etcd-1/v3/kv/range | deadline 5000")),
                (
                    ok(8, 1, &json!({"header": header(3), "kvs": [{"key": "L3Q=", "mod_revision": "3", "value": "not base64!"}]}).to_string()),
                    s("failed 7 malformed | deadline -"),
                ),
            ],
        ),
        (
            "calls-get-get-many-put-delete-prefix-txn",
            etcd(&[A], json!({})),
            vec![
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 5000")),
                (ok(2, 1, &range(7, Some(kv(KEY, b"hello", 6)))), s("done 1 {\"mod_revision\":\"6\",\"value\":\"hello\"} | deadline -")),
                (call(json!({"op": "get_many", "keys": [KEY, "/app/extra"]}), 2), s("call 3: req 4 etcd-1/v3/kv/txn | deadline 5002")),
                (
                    ok(4, 3, &ranges(7, vec![Some(kv(KEY, b"hello", 6)), None])),
                    s("done 3 {\"revision\":\"7\",\"values\":{\"/app/extra\":{\"mod_revision\":\"0\",\"value\":null},\"/app/topology\":{\"mod_revision\":\"6\",\"value\":\"hello\"}}} | deadline -"),
                ),
                (call(json!({"op": "put", "key": KEY, "value": "v"}), 4), s("call 5: req 6 etcd-1/v3/kv/put | deadline 5004")),
                (ok(6, 5, &json!({"header": header(8)}).to_string()), s("done 5 {\"revision\":\"8\"} | deadline -")),
                (call(json!({"op": "delete_prefix", "prefix": "/app/"}), 6), s("call 7: req 8 etcd-1/v3/kv/deleterange | deadline 5006")),
                (ok(8, 7, &json!({"header": header(9), "deleted": "2"}).to_string()), s("done 7 {\"deleted\":2} | deadline -")),
                (call(json!({"op": "delete_prefix", "prefix": "/none/"}), 8), s("call 9: req 10 etcd-1/v3/kv/deleterange | deadline 5008")),
                (ok(10, 9, &json!({"header": header(9)}).to_string()), s("done 9 {\"deleted\":0} | deadline -")),
                (
                    call(json!({"op": "txn", "compare": [{"key": KEY, "target": "mod", "mod_revision": "9"}], "puts": {KEY: "w"}, "deletes": ["/old"]}), 10),
                    s("call 11: req 12 etcd-1/v3/kv/txn | deadline 5010"),
                ),
                (ok(12, 11, &txn_ok(10)), s("done 11 {\"revision\":\"10\"} | deadline -")),
                (
                    call(json!({"op": "txn", "compare": [{"key": KEY, "target": "value", "value": "x"}], "puts": {KEY: "y"}}), 12),
                    s("call 13: req 14 etcd-1/v3/kv/txn | deadline 5012"),
                ),
                (ok(14, 13, &txn_failed(10)), s("failed 13 conflict | deadline -")),
                (call(json!({"op": "watch", "key": KEY}), 14), s("error invalid_argument")),
                (call(json!({"op": "get"}), 14), s("error invalid_argument")),
                (call(json!({"op": "txn", "compare": [{"key": KEY, "target": "mod"}]}), 14), s("error invalid_argument")),
            ],
        ),
        (
            "publish-the-first-document-creates-the-key",
            etcd(&[A], json!({})),
            vec![
                (call(json!({"op": "publish", "key": KEY, "document": d1}), 0), s("call 1: req 2 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(2, 1, &read(3, None)), s("req 3 etcd-1/v3/kv/txn | deadline 5001")),
                (ok(3, 2, &txn_ok(4)), s("done 1 {\"epoch\":\"1\",\"revision\":\"4\"} | deadline -")),
            ],
        ),
        (
            "publish-the-next-epoch-with-companions",
            etcd(&[A], json!({})),
            vec![
                (
                    call(json!({"op": "publish", "key": KEY, "document": d2, "also": {"/app/config": "{\"v\":2}"}}), 0),
                    s("call 1: req 2 etcd-1/v3/kv/txn | deadline 5000"),
                ),
                (ok(2, 1, &ranges(5, vec![Some(kv(KEY, d1.as_bytes(), 4)), None])), s("req 3 etcd-1/v3/kv/txn | deadline 5001")),
                (ok(3, 2, &txn_ok(6)), s("done 1 {\"epoch\":\"2\",\"revision\":\"6\"} | deadline -")),
                (call(json!({"op": "publish", "key": KEY, "document": d4}), 3), s("call 4: req 5 etcd-1/v3/kv/txn | deadline 5003")),
                (ok(5, 4, &read(6, Some((&d2, 6)))), s("failed 4 stale_epoch | deadline -")),
                (call(json!({"op": "publish", "key": KEY, "document": d3}), 5), s("call 6: req 7 etcd-1/v3/kv/txn | deadline 5005")),
                (ok(7, 6, &read(6, Some((&d2, 6)))), s("req 8 etcd-1/v3/kv/txn | deadline 5006")),
                (ok(8, 7, &txn_failed(7)), s("failed 6 conflict | deadline -")),
            ],
        ),
        (
            "publish-does-not-overwrite-a-refused-document-without-replace",
            etcd(&[A], json!({})),
            vec![
                (call(json!({"op": "publish", "key": KEY, "document": d2}), 0), s("call 1: req 2 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(2, 1, &read(9, Some(("{\"epoch\": 7, \"broken\"", 9)))), s("failed 1 invalid_topology | deadline -")),
            ],
        ),
        (
            "publish-replace-reads-the-history-for-the-epoch-followers-hold",
            etcd(&[A], json!({})),
            vec![
                (
                    call(json!({"op": "publish", "key": KEY, "document": d3, "replace": true}), 0),
                    s("call 1: req 2 etcd-1/v3/kv/txn | deadline 5000"),
                ),
                (ok(2, 1, &read(9, Some(("not json", 9)))), s("req 3 etcd-1/v3/kv/range | deadline 5001")),
                (ok(3, 2, &range(9, Some(kv(KEY, b"{}", 8)))), s("req 4 etcd-1/v3/kv/range | deadline 5002")),
                (ok(4, 3, &range(9, Some(kv(KEY, d2.as_bytes(), 5)))), s("req 5 etcd-1/v3/kv/txn | deadline 5003")),
                (ok(5, 4, &txn_ok(10)), s("done 1 {\"epoch\":\"3\",\"revision\":\"10\"} | deadline -")),
                (
                    call(json!({"op": "publish", "key": KEY, "document": d2, "replace": true}), 5),
                    s("call 6: req 7 etcd-1/v3/kv/txn | deadline 5005"),
                ),
                (ok(7, 6, &read(11, Some(("not json", 11)))), s("req 8 etcd-1/v3/kv/range | deadline 5006")),
                (ok(8, 7, &range(11, Some(kv(KEY, d2.as_bytes(), 5)))), s("failed 6 stale_epoch | deadline -")),
            ],
        ),
        (
            "publish-replace-with-compacted-history-uses-the-stored-epoch-field",
            etcd(&[A], json!({})),
            vec![
                (
                    call(json!({"op": "publish", "key": KEY, "document": d4, "replace": true}), 0),
                    s("call 1: req 2 etcd-1/v3/kv/txn | deadline 5000"),
                ),
                (ok(2, 1, &read(9, Some(("{\"epoch\": 3, \"nodes\": []}", 9)))), s("req 3 etcd-1/v3/kv/range | deadline 5001")),
                (
                    answer(3, 2, 400, &error_body("etcdserver: mvcc: required revision has been compacted", 11)),
                    s("req 4 etcd-1/v3/kv/txn | deadline 5002"),
                ),
                (ok(4, 3, &txn_ok(10)), s("done 1 {\"epoch\":\"4\",\"revision\":\"10\"} | deadline -")),
            ],
        ),
        (
            "publish-replace-refuses-when-no-epoch-can-be-told",
            etcd(&[A], json!({})),
            vec![
                (
                    call(json!({"op": "publish", "key": KEY, "document": d4, "replace": true}), 0),
                    s("call 1: req 2 etcd-1/v3/kv/txn | deadline 5000"),
                ),
                (ok(2, 1, &read(9, Some(("garbage", 9)))), s("req 3 etcd-1/v3/kv/range | deadline 5001")),
                (ok(3, 2, &range(9, None)), s("failed 1 invalid_argument | deadline -")),
            ],
        ),
        (
            "publish-with-no-answer-reads-back-and-finds-its-document",
            etcd(&[A, B], json!({})),
            vec![
                (call(json!({"op": "publish", "key": KEY, "document": d2}), 0), s("call 1: req 2 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(2, 1, &read(5, Some((&d1, 4)))), s("req 3 etcd-1/v3/kv/txn | deadline 5001")),
                (failed(3, 2, "unreachable", "connection reset"), s("req 4 etcd-1/v3/kv/range | deadline 5002")),
                (failed(4, 3, "unreachable", "connection refused"), s("req 5 etcd-2/v3/kv/range | deadline 5003")),
                (ok(5, 4, &range(6, Some(kv(KEY, d2.as_bytes(), 6)))), s("done 1 {\"epoch\":\"2\",\"revision\":\"6\"} | deadline -")),
            ],
        ),
        (
            "publish-with-no-answer-reads-back-unchanged-unreachable-or-changed-conflict",
            etcd(&[A], json!({})),
            vec![
                (call(json!({"op": "publish", "key": KEY, "document": d2}), 0), s("call 1: req 2 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(2, 1, &read(5, Some((&d1, 4)))), s("req 3 etcd-1/v3/kv/txn | deadline 5001")),
                (timer(5_001), s("cancel 3; req 4 etcd-1/v3/kv/range | deadline 10001")),
                (ok(4, 5_002, &range(5, Some(kv(KEY, d1.as_bytes(), 4)))), s("failed 1 unreachable | deadline -")),
                (call(json!({"op": "publish", "key": KEY, "document": d2}), 6_000), s("call 5: req 6 etcd-1/v3/kv/txn | deadline 11000")),
                (ok(6, 6_001, &read(5, Some((&d1, 4)))), s("req 7 etcd-1/v3/kv/txn | deadline 11001")),
                (failed(7, 6_002, "unreachable", "connection reset"), s("req 8 etcd-1/v3/kv/range | deadline 11002")),
                (ok(8, 6_003, &range(6, Some(kv(KEY, d3.as_bytes(), 6)))), s("failed 5 conflict | deadline -")),
            ],
        ),
        (
            "a-compacted-watch-reads-again-at-once-without-backoff",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 1), s(" | deadline 10001")),
                (chunk(2, 2, &format!("{}{}", created(20), compacted_line(15))), s("cancel 2; req 3 etcd-1/v3/kv/txn | deadline 5002")),
                (ok(3, 3, &read(20, Some((&d2, 18)))), s("offered installed 2 @18 changed; watch 4 etcd-1 from 21 | deadline 5003")),
                (state(), s("state 2 18 etcd-1 reads=2 restarts=1 disconnects=0")),
            ],
        ),
        (
            // An `error` line (grpc-gateway's stream error) loses the source: the
            // follower's backoff, then a read, connected, and a new watch.
            "an-error-line-is-lost-then-backoff-read-and-watch-again",
            etcd(&[A, B], json!({"key": KEY, "reconnect_first_ms": 100, "reconnect_max_ms": 1000})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (
                    chunk(2, 50, "{\"error\":{\"grpc_code\":14,\"http_code\":503,\"message\":\"etcdserver: server stopped\",\"http_status\":\"Service Unavailable\"}}\n"),
                    s("cancel 2; lost http 150 | deadline 150"),
                ),
                (timer(150), s("req 3 etcd-2/v3/kv/txn | deadline 5150")),
                (ok(3, 160, &read(5, Some((&d1, 4)))), s("offered unchanged @4; watch 4 etcd-2 from 6 | deadline 5160")),
                (head(4, 170), s(" | deadline 10170")),
                (state(), s("state 1 4 etcd-2 reads=2 restarts=1 disconnects=1")),
            ],
        ),
        (
            "a-closed-stream-and-failed-reads-back-off-doubling-until-a-read-succeeds",
            etcd(&[A], json!({"key": KEY, "reconnect_first_ms": 100, "reconnect_max_ms": 300})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (failed(2, 10, "closed", "end of stream"), s("lost unreachable 110 | deadline 110")),
                (timer(110), s("req 3 etcd-1/v3/kv/txn | deadline 5110")),
                (failed(3, 120, "unreachable", "connection refused"), s("lost unreachable 320 | deadline 320")),
                (timer(320), s("req 4 etcd-1/v3/kv/txn | deadline 5320")),
                (failed(4, 330, "unreachable", "connection refused"), s("lost unreachable 630 | deadline 630")),
                (timer(630), s("req 5 etcd-1/v3/kv/txn | deadline 5630")),
                (ok(5, 640, &read(9, Some((&d2, 9)))), s("offered installed 2 @9 changed; watch 6 etcd-1 from 10 | deadline 5640")),
                (head(6, 650), s(" | deadline 10650")),
                (failed(6, 700, "closed", "end of stream"), s("lost unreachable 800 | deadline 800")),
                (state(), s("state 2 9 etcd-1 reads=2 restarts=1 disconnects=4")),
            ],
        ),
        (
            // Idle is the session's deadline, never a transport message's words (the CLI
            // matched "timed out" and "WouldBlock"): a stream the transport lost is lost.
            "a-transport-message-saying-timed-out-is-a-loss-not-idle",
            etcd(&[A], json!({"key": KEY})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (
                    ok(1, 0, &read(5, Some((&d1, 4)))),
                    s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000"),
                ),
                (head(2, 0), s(" | deadline 10000")),
                (
                    failed(2, 3_000, "unreachable", "Resource temporarily unavailable (os error 11, WouldBlock): timed out"),
                    s("lost unreachable 3100 | deadline 3100"),
                ),
                (state(), s("state 1 4 etcd-1 reads=1 restarts=0 disconnects=1")),
            ],
        ),
        (
            "a-watch-line-that-is-not-etcds-is-lost-malformed",
            etcd(&[A], json!({"key": KEY})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (chunk(2, 1, "<html>\n"), s("cancel 2; lost malformed 101 | deadline 101")),
            ],
        ),
        (
            "a-first-read-that-fails-backs-off-then-reads-and-watches",
            etcd(&[A, B], json!({"key": KEY})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (failed(1, 1, "unreachable", "connection refused"), s("req 2 etcd-2/v3/kv/txn | deadline 5001")),
                (timer(5_001), s("cancel 2; lost unreachable 5101 | deadline 5101")),
                (timer(5_101), s("req 3 etcd-1/v3/kv/txn | deadline 10101")),
                (ok(3, 5_102, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 4 etcd-1 from 6 | deadline 10102")),
                (state(), s("state 1 4 etcd-1 reads=1 restarts=0 disconnects=1")),
            ],
        ),
        (
            "a-value-that-is-not-utf8-is-refused-not-replaced",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (
                    ok(1, 0, &ranges(5, vec![Some(json!({"key": b64(KEY.as_bytes()), "mod_revision": "4", "value": b64(b"{\"epoch\": \xff}")}))])),
                    s("offered refused invalid_topology @4; watch 2 etcd-1 from 6 | deadline 5000"),
                ),
            ],
        ),
        (
            "companions-read-with-the-document-a-change-is-changed",
            etcd(&[A], json!({"key": KEY, "also": ["/app/config"]})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (
                    ok(1, 0, &ranges(5, vec![Some(kv(KEY, d1.as_bytes(), 4)), Some(kv("/app/config", b"v1", 5))])),
                    s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000"),
                ),
                (head(2, 0), s(" | deadline 10000")),
                (chunk(2, 1, &events(6)), s("req 3 etcd-1/v3/kv/txn | deadline 5001")),
                (
                    ok(3, 2, &ranges(6, vec![Some(kv(KEY, d1.as_bytes(), 4)), Some(kv("/app/config", b"v2", 6))])),
                    s("offered unchanged @4 changed | deadline 10001"),
                ),
                (chunk(2, 3, &events(7)), s("req 4 etcd-1/v3/kv/txn | deadline 5003")),
                (ok(4, 4, &ranges(7, vec![Some(kv(KEY, d1.as_bytes(), 4)), None])), s("offered unchanged @4 changed | deadline 10003")),
            ],
        ),
        (
            "authenticate-first-then-every-request-carries-the-token",
            etcd(&[A, B], json!({"key": KEY, "user": "root", "password": "pw"})),
            vec![
                (start(0), s("req 1 etcd-1/v3/auth/authenticate | deadline 5000")),
                (answer(1, 1, 503, &unavailable_503()), s("req 2 etcd-2/v3/auth/authenticate | deadline 5001")),
                (ok(2, 2, &json!({"header": header(7), "token": TOKEN}).to_string()), s("req 3 etcd-2/v3/kv/txn auth | deadline 5002")),
                (ok(3, 3, &read(7, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 4 etcd-2 from 8 auth | deadline 5003")),
                (call(json!({"op": "get", "key": KEY}), 4), s("call 5: req 6 etcd-2/v3/kv/range auth | deadline 5003")),
            ],
        ),
        (
            "an-invalid-token-is-renewed-once-and-the-request-resent",
            etcd(&[A], json!({"user": "root", "password": "pw"})),
            vec![
                (call(json!({"op": "put", "key": KEY, "value": "v"}), 0), s("call 1: req 2 etcd-1/v3/auth/authenticate | deadline 5000")),
                (ok(2, 1, &json!({"header": header(7), "token": TOKEN}).to_string()), s("req 3 etcd-1/v3/kv/put auth | deadline 5001")),
                (answer(3, 2, 401, &error_body("etcdserver: invalid auth token", 16)), s("req 4 etcd-1/v3/auth/authenticate | deadline 5002")),
                (ok(4, 3, &json!({"header": header(7), "token": "other.20"}).to_string()), s("req 5 etcd-1/v3/kv/put auth | deadline 5003")),
                (answer(5, 4, 401, &error_body("etcdserver: invalid auth token", 16)), s("failed 1 unauthenticated | deadline -")),
            ],
        ),
        (
            "a-refused-password-is-unauthenticated",
            etcd(&[A], json!({"key": KEY, "user": "root", "password": "no"})),
            vec![
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/auth/authenticate | deadline 5000")),
                (
                    answer(2, 1, 400, &error_body("etcdserver: authentication failed, invalid user ID or password", 3)),
                    s("failed 1 unauthenticated | deadline -"),
                ),
                (start(2), s("req 3 etcd-1/v3/auth/authenticate | deadline 5002")),
                (
                    answer(3, 3, 400, &error_body("etcdserver: authentication failed, invalid user ID or password", 3)),
                    s("lost unauthenticated 103 | deadline 103"),
                ),
            ],
        ),
        (
            "a-watch-cancelled-for-its-token-authenticates-and-watches-again",
            etcd(&[A], json!({"key": KEY, "user": "root", "password": "pw"})),
            vec![
                (start(0), s("req 1 etcd-1/v3/auth/authenticate | deadline 5000")),
                (ok(1, 0, &json!({"header": header(7), "token": TOKEN}).to_string()), s("req 2 etcd-1/v3/kv/txn auth | deadline 5000")),
                (ok(2, 0, &read(7, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 3 etcd-1 from 8 auth | deadline 5000")),
                (head(3, 1), s(" | deadline 10001")),
                (
                    chunk(3, 2, &format!("{}\n", json!({"result": {"header": header(7), "watch_id": "-1", "created": true, "canceled": true,
                        "cancel_reason": "rpc error: code = Unauthenticated desc = etcdserver: invalid auth token"}}))),
                    s("cancel 3; req 4 etcd-1/v3/auth/authenticate | deadline 5002"),
                ),
                (ok(4, 3, &json!({"header": header(7), "token": "other.20"}).to_string()), s("watch 5 etcd-1 from 8 auth | deadline 5003")),
                (head(5, 4), s(" | deadline 10004")),
                (state(), s("state 1 4 etcd-1 reads=1 restarts=0 disconnects=0")),
            ],
        ),
        (
            // etcd 3.4.23's own bytes: authentication, a read of a document and an absent
            // companion, created / put / delete lines, an expired token, a compacted
            // watch, and two calls.
            "verbatim-answers-of-etcd-3-4-23",
            etcd(&[A], json!({"key": "/t", "also": ["/u"], "user": "root", "password": "pw"})),
            vec![
                (start(0), s("req 1 etcd-1/v3/auth/authenticate | deadline 5000")),
                (ok(1, 1, verbatim::AUTH), s("req 2 etcd-1/v3/kv/txn auth | deadline 5001")),
                (ok(2, 2, verbatim::GET_MANY), s("offered refused invalid_topology @2; watch 3 etcd-1 from 3 auth | deadline 5002")),
                (head(3, 3), s(" | deadline 10003")),
                (chunk(3, 4, verbatim::CREATED), s(" | deadline 10004")),
                (chunk(3, 5, verbatim::PUT_EVENT), s("req 4 etcd-1/v3/kv/txn auth | deadline 5005")),
                (answer(4, 6, 401, verbatim::INVALID_TOKEN), s("req 5 etcd-1/v3/auth/authenticate | deadline 5006")),
                (ok(5, 7, verbatim::AUTH), s("req 6 etcd-1/v3/kv/txn auth | deadline 5007")),
                (ok(6, 8, verbatim::GET_MANY), s(" | deadline 10005")), // refused at @2 before: said once
                (chunk(3, 9, verbatim::DELETE_EVENT), s("req 7 etcd-1/v3/kv/txn auth | deadline 5009")),
                (ok(7, 10, verbatim::GET_MANY), s(" | deadline 10009")),
                (chunk(3, 11, verbatim::COMPACTED), s("cancel 3; req 8 etcd-1/v3/kv/txn auth | deadline 5011")),
                (ok(8, 12, verbatim::GET_MANY), s("watch 9 etcd-1 from 3 auth | deadline 5012")),
                (call(json!({"op": "delete_prefix", "prefix": "/p/"}), 13), s("call 10: req 11 etcd-1/v3/kv/deleterange auth | deadline 5012")),
                (ok(11, 14, verbatim::DELETED), s("done 10 {\"deleted\":1} | deadline 5012")),
                (call(json!({"op": "get", "key": "/t"}), 15), s("call 12: req 13 etcd-1/v3/kv/range auth | deadline 5012")),
                (ok(13, 16, verbatim::RANGE), s("done 12 {\"mod_revision\":\"2\",\"value\":\"{\\\"epoch\\\":1}\"} | deadline 5012")),
                (state(), s("state - - etcd-1 reads=4 restarts=1 disconnects=0")),
            ],
        ),
        (
            // `{"op": "refresh"}`: the follow policy's read, now; its document offered as a
            // follow read's (the same `offered` action), the call ended with that offer
            // (or null: the key absent) and the store's revision of the read.
            "refresh-reads-now-offers-as-a-follow-read-and-ends-with-the-offer",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (call(json!({"op": "refresh"}), 100), s("call 3: req 4 etcd-1/v3/kv/txn | deadline 5100")),
                (
                    ok(4, 110, &read(8, Some((&d2, 7)))),
                    s("offered installed 2 @7 changed; done 3 {\"offered\":{\"installed\":{\"epoch\":\"2\"}},\"revision\":\"8\"} | deadline 10000"),
                ),
                (call(json!({"op": "refresh"}), 120), s("call 5: req 6 etcd-1/v3/kv/txn | deadline 5120")),
                (
                    ok(6, 130, &read(8, Some((&d2, 7)))),
                    s("offered unchanged @7; done 5 {\"offered\":{\"unchanged\":{}},\"revision\":\"8\"} | deadline 10000"),
                ),
                (call(json!({"op": "refresh"}), 140), s("call 7: req 8 etcd-1/v3/kv/txn | deadline 5140")),
                (ok(8, 150, &read(9, None)), s("done 7 {\"offered\":null,\"revision\":\"9\"} | deadline 10000")),
                (state(), s("state 2 7 etcd-1 reads=4 restarts=0 disconnects=0")),
            ],
        ),
        (
            // One read at a time, offered in the order sent: a refresh called while the
            // policy's read is in flight is answered by the next read, sent when that one
            // ends (a read that started before the call cannot answer it).
            "a-refresh-during-a-follow-read-is-answered-by-the-next-read",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (call(json!({"op": "refresh"}), 1), s("call 2:  | deadline 5000")),
                (
                    ok(1, 2, &read(5, Some((&d1, 4)))),
                    s("offered installed 1 @4 changed; watch 3 etcd-1 from 6; req 4 etcd-1/v3/kv/txn | deadline 5002"),
                ),
                (head(3, 3), s(" | deadline 5002")),
                (
                    ok(4, 5, &read(6, Some((&d2, 6)))),
                    s("offered installed 2 @6 changed; done 2 {\"offered\":{\"installed\":{\"epoch\":\"2\"}},\"revision\":\"6\"} | deadline 10003"),
                ),
                (state(), s("state 2 6 etcd-1 reads=2 restarts=0 disconnects=0")),
            ],
        ),
        (
            // No companions: a DELETE event is what a read that finds the key absent is
            // (nothing offered, the router kept); a later PUT is offered again; an event
            // at or below a revision offered already (replayed) is skipped.
            "without-companions-a-delete-event-is-an-absent-key",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (chunk(2, 1, &event(6, None)), s(" | deadline 10001")),
                (chunk(2, 2, &event(7, Some(&d2))), s("offered installed 2 @7 changed | deadline 10002")),
                (chunk(2, 3, &format!("{}{}", event(5, Some(&d3)), event(7, Some(&d3)))), s(" | deadline 10003")),
                (chunk(2, 4, verbatim::DELETE_EVENT), s(" | deadline 10004")),
                (state(), s("state 2 7 etcd-1 reads=1 restarts=0 disconnects=0")),
            ],
        ),
        (
            // No companions: an event newer than a read in flight is offered at once; the
            // read's older answer is not offered again (it would be refused as stale),
            // and the refresh it answers gets what a read of the event's value would
            // give: unchanged (null after a DELETE). A read above the event, or sent after
            // it, is offered.
            "without-companions-an-event-during-a-read-wins-over-its-older-answer",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (call(json!({"op": "refresh"}), 1), s("call 3: req 4 etcd-1/v3/kv/txn | deadline 5001")),
                (chunk(2, 2, &event(7, Some(&d3))), s("offered installed 3 @7 changed | deadline 5001")),
                (
                    ok(4, 3, &read(6, Some((&d2, 6)))),
                    s("done 3 {\"offered\":{\"unchanged\":{}},\"revision\":\"6\"} | deadline 10002"),
                ),
                (call(json!({"op": "refresh"}), 4), s("call 5: req 6 etcd-1/v3/kv/txn | deadline 5004")),
                (chunk(2, 5, &event(8, None)), s(" | deadline 5004")),
                (ok(6, 6, &read(7, Some((&d3, 7)))), s("done 5 {\"offered\":null,\"revision\":\"7\"} | deadline 10005")),
                (call(json!({"op": "refresh"}), 7), s("call 7: req 8 etcd-1/v3/kv/txn | deadline 5007")),
                (
                    ok(8, 8, &read(9, Some((&d4, 9)))),
                    s("offered installed 4 @9 changed; done 7 {\"offered\":{\"installed\":{\"epoch\":\"4\"}},\"revision\":\"9\"} | deadline 10005"),
                ),
                // Sent after every event: the store as it is, offered as any read.
                (call(json!({"op": "refresh"}), 9), s("call 9: req 10 etcd-1/v3/kv/txn | deadline 5009")),
                (
                    ok(10, 10, &read(9, Some((&d4, 9)))),
                    s("offered unchanged @9; done 9 {\"offered\":{\"unchanged\":{}},\"revision\":\"9\"} | deadline 10005"),
                ),
                (state(), s("state 4 9 etcd-1 reads=5 restarts=0 disconnects=0")),
            ],
        ),
        (
            // A refresh's read rotates members as any read; when it fails, the call fails
            // with its error and nothing else: no `lost`, no backoff, the watch kept.
            "a-failed-refresh-is-not-a-lost-source",
            follow(&[A, B]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (call(json!({"op": "refresh"}), 100), s("call 3: req 4 etcd-1/v3/kv/txn | deadline 5100")),
                (answer(4, 101, 503, &unavailable_503()), s("req 5 etcd-2/v3/kv/txn | deadline 5101")),
                (failed(5, 102, "unreachable", "connection refused"), s("failed 3 unreachable | deadline 10000")),
                (call(json!({"op": "refresh"}), 200), s("call 6: req 7 etcd-1/v3/kv/txn | deadline 5200")),
                (ok(7, 201, "<html>proxy</html>"), s("failed 6 malformed | deadline 10000")),
                (state(), s("state 1 4 etcd-1 reads=1 restarts=0 disconnects=0")),
            ],
        ),
        (
            // A read that succeeds is a read, whoever asked for it: during the backoff,
            // a refresh's read reconnects the follower and opens the watch.
            "a-refresh-that-succeeds-during-the-backoff-reconnects-and-watches",
            etcd(&[A], json!({"key": KEY, "reconnect_first_ms": 1000})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (failed(2, 100, "closed", "end of stream"), s("lost unreachable 1100 | deadline 1100")),
                (call(json!({"op": "refresh"}), 200), s("call 3: req 4 etcd-1/v3/kv/txn | deadline 1100")),
                (
                    ok(4, 210, &read(7, Some((&d2, 7)))),
                    s("offered installed 2 @7 changed; done 3 {\"offered\":{\"installed\":{\"epoch\":\"2\"}},\"revision\":\"7\"}; watch 5 etcd-1 from 8 | deadline 5210"),
                ),
                (head(5, 220), s(" | deadline 10220")),
                (timer(1_100), s(" | deadline 10220")),
                (state(), s("state 2 7 etcd-1 reads=2 restarts=1 disconnects=1")),
            ],
        ),
        (
            // The source lost while a refresh's read is in flight: that read goes on for
            // the refresh (not cancelled), and its success reconnects.
            "a-loss-while-a-refresh-reads-lets-its-read-end-for-the-refresh",
            follow(&[A]),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (ok(1, 0, &read(5, Some((&d1, 4)))), s("offered installed 1 @4 changed; watch 2 etcd-1 from 6 | deadline 5000")),
                (head(2, 0), s(" | deadline 10000")),
                (call(json!({"op": "refresh"}), 1), s("call 3: req 4 etcd-1/v3/kv/txn | deadline 5001")),
                (chunk(2, 2, "<html>\n"), s("cancel 2; lost malformed 102 | deadline 102")),
                (
                    ok(4, 3, &read(5, Some((&d1, 4)))),
                    s("offered unchanged @4; done 3 {\"offered\":{\"unchanged\":{}},\"revision\":\"5\"}; watch 5 etcd-1 from 6 | deadline 5003"),
                ),
                (timer(102), s(" | deadline 5003")),
                (state(), s("state 1 4 etcd-1 reads=2 restarts=1 disconnects=1")),
            ],
        ),
        (
            // Every op refuses a field it does not have (as the HTTP session does): a
            // misspelt optional field is an error, never a default silently used. No call
            // number is spent on a refused op.
            "an-op-with-an-unknown-field-is-refused",
            etcd(&[A], json!({"key": KEY})),
            vec![
                (call(json!({"op": "refresh", "extra": 1}), 0), s("error invalid_argument")),
                (call(json!({"op": "get", "key": KEY, "extra": 1}), 0), s("error invalid_argument")),
                (call(json!({"op": "get_many", "keys": [KEY], "extra": 1}), 0), s("error invalid_argument")),
                (call(json!({"op": "put", "key": KEY, "value": "v", "extra": 1}), 0), s("error invalid_argument")),
                (call(json!({"op": "delete_prefix", "prefix": "/p/", "extra": 1}), 0), s("error invalid_argument")),
                (call(json!({"op": "txn", "puts": {KEY: "v"}, "extra": 1}), 0), s("error invalid_argument")),
                (
                    call(json!({"op": "txn", "compare": [{"key": KEY, "target": "value", "value": "x", "extra": 1}]}), 0),
                    s("error invalid_argument"),
                ),
                (call(json!({"op": "publish", "key": KEY, "document": "{}", "replaces": true}), 0), s("error invalid_argument")),
                (call(json!({"op": "refresh"}), 0), s("call 1: req 2 etcd-1/v3/kv/txn | deadline 5000")),
            ],
        ),
        (
            // An optional field given as null is left out, as `config()` writes it (so
            // what `config()` gives reads back): no key to follow, no user.
            "optional-config-fields-given-as-null-are-left-out",
            etcd(&[A], json!({"key": null, "also": null, "user": null, "password": null})),
            vec![
                (start(0), s(" | deadline -")),
                (call(json!({"op": "refresh"}), 0), s("error invalid_argument")),
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 5000")),
            ],
        ),
        (
            "refresh-needs-a-key-to-follow",
            etcd(&[A], json!({})),
            vec![
                (call(json!({"op": "refresh"}), 0), s("error invalid_argument")),
                (call(json!({"op": "get", "key": KEY}), 0), s("call 1: req 2 etcd-1/v3/kv/range | deadline 5000")),
            ],
        ),
        (
            // Invalid Unicode is refused, never replaced: a companion that is not UTF-8
            // makes the read malformed (the document not offered; for the follow policy
            // a lost source with backoff, for a refresh a failed call).
            "a-companion-that-is-not-utf8-is-malformed-never-replaced",
            etcd(&[A], json!({"key": KEY, "also": ["/app/config"], "reconnect_first_ms": 100})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (
                    ok(1, 0, &ranges(5, vec![Some(kv(KEY, d1.as_bytes(), 4)), Some(kv("/app/config", b"v\xff1", 5))])),
                    s("lost malformed 100 | deadline 100"),
                ),
                (state(), s("state - - etcd-1 reads=0 restarts=0 disconnects=1")),
                (timer(100), s("req 2 etcd-1/v3/kv/txn | deadline 5100")),
                (
                    ok(2, 101, &ranges(6, vec![Some(kv(KEY, d1.as_bytes(), 4)), Some(kv("/app/config", b"v1", 6))])),
                    s("offered installed 1 @4 changed; watch 3 etcd-1 from 7 | deadline 5101"),
                ),
                (head(3, 102), s(" | deadline 10102")),
                (call(json!({"op": "refresh"}), 103), s("call 4: req 5 etcd-1/v3/kv/txn | deadline 5103")),
                (
                    ok(5, 104, &ranges(7, vec![Some(kv(KEY, d1.as_bytes(), 4)), Some(kv("/app/config", b"\xc3", 7))])),
                    s("failed 4 malformed | deadline 10102"),
                ),
                (state(), s("state 1 4 etcd-1 reads=1 restarts=0 disconnects=1")),
            ],
        ),
        (
            "close-cancels-everything-and-answers-nothing-after",
            etcd(&[A], json!({"key": KEY})),
            vec![
                (start(0), s("req 1 etcd-1/v3/kv/txn | deadline 5000")),
                (call(json!({"op": "get", "key": KEY}), 0), s("call 2: req 3 etcd-1/v3/kv/range | deadline 5000")),
                (json!({"call": "close", "now": 1}), s("cancel 1; cancel 3; failed 2 closed | deadline -")),
                (ok(1, 2, &read(5, Some((&d1, 4)))), s(" | deadline -")),
                (timer(10_000), s(" | deadline -")),
                (call(json!({"op": "get", "key": KEY}), 3), s("call 4: failed 4 closed | deadline -")),
            ],
        ),
    ]
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "session_source",
        "Scenarios of the source sessions (sans-IO): etcd through its v3 JSON gateway (reads, watches from the read revision + 1, idle watches read again, compaction, lost sources and the follower's backoff, member rotation on unreachable, deadlines, 503 and gRPC UNAVAILABLE, authentication, the calls and publish with its compare-and-swap, replace and read-back, refresh: a read now that shares the one read in flight, companions that are not UTF-8 refused as malformed), HTTP (the poll schedule, ETags) and ZooKeeper over TCP (the jute handshake, reads with a watch, absent and empty nodes, pings and liveness, members left for the next, digest authentication, publish with setData or create, conflicts, replace and read-back; frames in data_b64); each step's actions and deadline as the session gives them.",
        "generator; etcd's answers copied from etcd 3.4.23's gateway (keys, values and revisions changed); each step's actions are also stated by hand in conformance/src/generate/session_source.rs and checked before writing",
    );
    for (name, config, steps) in scenarios() {
        let mut case = json!({"op": "session_source", "config": config});
        case["steps"] = Value::Array(steps.iter().map(|(step, _)| step.clone()).collect());
        let expect = crate::session::session_source(&case).unwrap_or_else(|err| panic!("{name}: {err}"));
        let results = expect["results"].as_array().cloned().unwrap_or_default();
        assert_eq!(results.len(), steps.len(), "{name}: {expect}");
        for (index, ((step, wanted), got)) in steps.iter().zip(&results).enumerate() {
            let said = words(got);
            assert_eq!(&said, wanted, "{name}: step {index} {step} answered {got}");
        }
        case["expect"] = expect;
        file.case(name, case);
    }
    for (what, config) in [
        ("no-members", json!({"source": "etcd", "members": []})),
        ("members-missing", json!({"source": "etcd", "key": KEY})),
        ("not-http", json!({"source": "etcd", "members": ["unix:///var/run/etcd.sock"]})),
        ("no-host", json!({"source": "etcd", "members": ["http://:2379"]})),
        ("user-without-password", json!({"source": "etcd", "members": [A], "user": "root"})),
        ("unknown-field", json!({"source": "etcd", "members": [A], "timeout": 5})),
        ("zero-request-timeout", json!({"source": "etcd", "members": [A], "request_timeout_ms": 0})),
        ("fractional-idle", json!({"source": "etcd", "members": [A], "idle_ms": 1.5})),
        ("also-without-key", json!({"source": "etcd", "members": [A], "also": ["/x"]})),
        // "***" is how config() shows a password: never taken as one.
        ("password-is-the-mask", json!({"source": "etcd", "members": [A], "user": "root", "password": "***"})),
        ("unknown-source", json!({"source": "consul", "members": [A]})),
    ] {
        let mut case = json!({"op": "session_source", "config": config, "steps": []});
        let expect = crate::session::session_source(&case).expect("runs");
        assert_eq!(expect, json!({"error": {"code": "invalid_argument"}}), "config {what}");
        case["expect"] = expect;
        file.case(&format!("bad-config/{what}"), case);
    }
    for (name, case) in super::session_source_http::http_cases() {
        file.case(&name, case);
    }
    file
}
