//! Source sessions (issue 35): a `SourceSession` of any kind, etcd, HTTP or ZooKeeper,
//! made from a config read from the input (etcd: 1 to 4 members, a key with companions
//! or calls only, a user and password or none, `idle_ms` 0 or not; HTTP: interval,
//! long-poll wait; ZooKeeper: 1 to 3 members, a path or calls only, a user and password
//! or none, any session timeout; all: request timeouts from 1 ms to 2^53, any backoff;
//! one input in eight a
//! config that is not valid, which must be refused with `invalid_argument`), then driven
//! by a script of up to 64 steps: `start`; `call` (`get`, `get_many`, `put`,
//! `delete_prefix`, `txn`, `publish` with and without `replace` and `also`, `refresh`,
//! and ops that are not valid); `response` to a request out, one already finished or an
//! id never given, with any status, headers and body (etcd's own answers built from the
//! input — range, txn, put, deleterange, authenticate, error bodies — for the request
//! they answer or another, and garbage); `chunk` (watch lines: created, events,
//! progress, cancelled for compaction, for the token or for no reason, `error` lines,
//! garbage; `\n` or `\r\n`, split anywhere); `failed` (`unreachable`, `closed`,
//! `limit_exceeded`, any code); `timer` (at, before and after `deadline()`, or any
//! time); `close`. ZooKeeper's connections: `opened`, and chunks of frames the core
//! codec's server-side encoders write from the input (connect responses of any timeout,
//! replies to the xids in flight or others with any error code and a getData, stat or
//! create record, pings, auth answers, notifications of any type and state, garbage,
//! lengths negative or past the limit), split anywhere. Times move forward, go back, drop to 0 or sit at `u64::MAX`. Every
//! script ends with a `close` and the calls a shell may still make after it.
//!
//! A twin session is driven by the same steps, except that each chunk's pieces are
//! handed to it as one chunk: every step must give both the same actions, deadline and
//! state (lines are the session's business, not the transport's).
//!
//! Properties, as `core/src/session/source.rs` and each kind's docs state them:
//! * nothing panics (debug assertions on: no overflow at `u64::MAX`);
//! * ids come from one counter for requests and calls, 1, 2, 3, ...: each new one is
//!   the last plus one (never reused); a refused op takes none;
//! * a request's deadline is `now + request_timeout_ms` (HTTP: plus the long poll's
//!   wait), saturating, so never before the `now` of the call that made it; its limit is
//!   `MAX_ANSWER_BYTES` (etcd) or `MAX_DOCUMENT_BYTES` (HTTP); only an etcd watch is a
//!   stream; HTTP's headers are `accept`, `if-none-match` exactly when an ETag is known
//!   and `prefer: wait=N` only beside it; etcd's carry `authorization` when a user is
//!   configured (but `/v3/auth/authenticate`);
//! * a `Cancel` names a request given and not yet finished (answered, failed or
//!   cancelled; a stream whose head came is open until it fails or is cancelled);
//! * an answer, chunk or failure for an id that is not open gives no action;
//! * a `Done`/`Failed` names a call given and not yet ended, once; a `Done`'s result has
//!   its op's documented shape (revisions as decimal strings); every error code is a
//!   documented one, `http` with a status;
//! * `Lost` only for a started follower, `retry_at >= now`, and `deadline()` then at or
//!   before `retry_at`; `Offered` only for a session with a follower;
//! * `timer(now)` before `deadline()` does nothing; after `timer(now)`, `deadline()` is
//!   `None` or later than `now` (or saturated at `u64::MAX`): a shell never spins;
//! * a call in flight keeps a deadline; a started follower keeps a deadline or an open
//!   stream (nothing stalls silently);
//! * `close()` cancels every open request and fails every call in flight (code
//!   `closed` in both kinds, as their vectors say), and from then on every call
//!   gives no `Request`, `Offered` or `Lost`: `call` one `Failed` of that code,
//!   everything else nothing; `deadline()` is `None`;
//! * `state()` has the documented keys and types and agrees with `follower()`;
//!   `config()` shows a password as `"***"` (and reads back through `from_config`
//!   when none is set; `"***"` is refused there), and the password appears in no config,
//!   state, error or request but the authenticate request's body.
//!
//! ZooKeeper: a `Connect` is to a configured member, its deadline not before now; a
//! `Send` goes to a connection given and not closed, is whole frames, and holds the
//! password only in an `AuthPacket` (xid -4); `close` may send `closeSession` first.
//!
//! Not checked here: the bytes an etcd watch buffers for a line (no public accessor,
//! and the limit, `MAX_ANSWER_BYTES`, is 128 MiB and cannot be lowered from outside the
//! crate: the unit test `etcd::tests` lowers it and checks the bound).
#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use shardroute::limits::{MAX_ANSWER_BYTES, MAX_DOCUMENT_BYTES};
use shardroute::session::source::{Action, Request, SourceError, SourceSession};
use shardroute::session::zookeeper::codec as zk;
use shardroute::session::Offered;

const MAX_MS: u64 = 1 << 53;
/// A password no generated answer contains: it must appear only in the authenticate body.
const PASSWORD: &str = "pw\u{7f}Zq9!secret";
const MEMBERS: &[&str] =
    &["http://127.0.0.1:2379", "https://etcd-2:2379/", "http://[::1]:2380", "http://etcd-4", "http://e5:1//"];
const KEYS: &[&str] = &["/app/topology", "/app/topology/extra", "/a", "", "/app/\u{e9}", "/app/topology\u{0}", "/z"];
const URLS: &[&str] = &["http://127.0.0.1:8080/topology.json", "HTTPS://example.com", "http://u@h:1/t?x#y"];
/// Codes of `SourceError` (source.rs) and of the core `Error`s a call can carry.
const CODES: &[&str] = &[
    "unreachable",
    "http",
    "malformed",
    "conflict",
    "idle",
    "closed",
    "unauthenticated",
    "limit_exceeded",
    "invalid_topology",
    "stale_epoch",
    "invalid_argument",
    "no_nodes",
];
const MESSAGES: &[&str] = &[
    "etcdserver: no leader",
    "etcdserver: leader changed",
    "etcdserver: invalid auth token",
    "etcdserver: authentication failed, invalid user ID or password",
    "etcdserver: user name is empty",
    "etcdserver: mvcc: required revision has been compacted",
    "etcdserver: request timed out",
    "etcdserver: server stopped",
    "rpc error: code = Unauthenticated desc = etcdserver: invalid auth token",
    "",
];

fn doc(epoch: u64, nodes: u8) -> String {
    let nodes: Vec<String> = (0..nodes.max(1)).map(|i| format!("{{\"id\": \"n{i}\"}}")).collect();
    format!(
        r#"{{"format": "shardroute/1", "epoch": {epoch}, "nodes": [{}], "strategy": {{"type": "jump"}}}}"#,
        nodes.join(", ")
    )
}

/// A binary vbucket dictionary (for a body or a value told by its magic).
fn dictionary() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let topology = shardroute::Topology::from_json(
            r#"{"format": "shardroute/1", "epoch": 2, "nodes": [{"id": "a"}, {"id": "b"}],
                "strategy": {"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["a"], ["b"]]}}"#,
        )
        .expect("a topology");
        shardroute::dictionary::encode(&topology).expect("a dictionary")
    })
}

fn b64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let b = [group[0], group.get(1).copied().unwrap_or(0), group.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            out.push(if i <= group.len() { char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]) } else { '=' });
        }
    }
    out
}

fn text(u: &mut Unstructured, most: usize) -> Result<String> {
    let raw: &str = u.arbitrary()?;
    Ok(raw.chars().take(most).collect())
}

fn bytes(u: &mut Unstructured, most: usize) -> Result<Vec<u8>> {
    let raw: &[u8] = u.arbitrary()?;
    Ok(raw.iter().take(most).copied().collect())
}

fn key(u: &mut Unstructured) -> Result<String> {
    if u.ratio(7, 8)? {
        Ok(KEYS[u.choose_index(KEYS.len())?].to_string())
    } else {
        text(u, 12)
    }
}

/// A setting in milliseconds within `lo..=most`: the edges, small, or any.
fn ms(u: &mut Unstructured, lo: u64, most: u64, default: u64) -> Result<u64> {
    Ok(match u.int_in_range(0..=6u8)? {
        0 => lo,
        1 => most,
        2 => u.int_in_range(lo..=most.min(lo + 50))?,
        3 => u.int_in_range(lo..=most.min(lo + 20_000))?,
        4 => u.int_in_range(lo..=most)?,
        5 => most.saturating_sub(u.int_in_range(0..=3)?).max(lo),
        _ => default.clamp(lo, most),
    })
}

/// The next time: mostly forward a little, also back, far, 0, at or near `u64::MAX`.
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

#[derive(Clone, Debug)]
enum Kind {
    Etcd { members: Vec<String>, has_key: bool, also: Vec<String>, user: bool, timeout: u64 },
    Http { timeout: u64, wait_s: u64 },
    Zookeeper { members: Vec<(String, u16)>, has_path: bool, user: bool },
}

const ZK_MEMBERS: &[&str] = &["127.0.0.1:2181", "zk2", "[::1]:2182", "zk-4:1"];
const ZK_PATHS: &[&str] = &["/app/topology", "/a/b/c", "/", "/z"];

/// What `from_config` must do with a config.
enum Made {
    Valid(Kind),
    Refused,
    Any,
}

/// A config: valid (mostly), refused, or anything.
fn config(u: &mut Unstructured) -> Result<(Value, Made)> {
    let broken = u.ratio(1, 8)?;
    let mut fields = Map::new();
    let kind = if u.ratio(2, 3)? {
        fields.insert("source".into(), json!("etcd"));
        let count = u.int_in_range(1..=4usize)?;
        let mut members = Vec::new();
        for _ in 0..count {
            members.push(MEMBERS[u.choose_index(MEMBERS.len())?].to_string());
        }
        let normal: Vec<String> = members.iter().map(|m| m.trim_end_matches('/').to_string()).collect();
        fields.insert("members".into(), json!(members));
        let has_key = u.ratio(2, 3)?;
        let mut also = Vec::new();
        if has_key {
            fields.insert("key".into(), json!(key(u)?));
            for _ in 0..u.int_in_range(0..=3u8)? {
                also.push(key(u)?);
            }
            if !also.is_empty() || u.arbitrary()? {
                fields.insert("also".into(), json!(also));
            }
        }
        let timeout = ms(u, 1, MAX_MS, 5_000)?;
        fields.insert("request_timeout_ms".into(), json!(timeout));
        if u.arbitrary()? {
            fields.insert("idle_ms".into(), json!(if u.arbitrary()? { 0 } else { ms(u, 0, MAX_MS, 10_000)? }));
        }
        let user = u.arbitrary()?;
        if user {
            fields.insert("user".into(), json!("root"));
            fields.insert("password".into(), json!(PASSWORD));
        }
        Kind::Etcd { members: normal, has_key, also, user, timeout }
    } else if u.ratio(1, 2)? {
        fields.insert("source".into(), json!("zookeeper"));
        let mut members = Vec::new();
        let mut parsed = Vec::new();
        for _ in 0..u.int_in_range(1..=3usize)? {
            let member = ZK_MEMBERS[u.choose_index(ZK_MEMBERS.len())?];
            members.push(member);
            parsed.push(zk::parse_host(member).expect("a member"));
        }
        fields.insert("members".into(), json!(members));
        let has_path = u.ratio(2, 3)?;
        if has_path {
            fields.insert("path".into(), json!(ZK_PATHS[u.choose_index(ZK_PATHS.len())?]));
        }
        fields.insert("request_timeout_ms".into(), json!(ms(u, 1, MAX_MS, 5_000)?));
        if u.arbitrary()? {
            fields.insert("session_timeout_ms".into(), json!(ms(u, 1, i32::MAX as u64, 10_000)?));
        }
        let user = u.arbitrary()?;
        if user {
            fields.insert("user".into(), json!("root"));
            fields.insert("password".into(), json!(PASSWORD));
        }
        Kind::Zookeeper { members: parsed, has_path, user }
    } else {
        fields.insert("source".into(), json!("http"));
        fields.insert("url".into(), json!(URLS[u.choose_index(URLS.len())?]));
        fields.insert("interval_ms".into(), json!(ms(u, 0, MAX_MS, 1_000)?));
        let wait_s = ms(u, 0, MAX_MS / 1000, 30)?;
        fields.insert("wait_s".into(), json!(wait_s));
        let timeout = ms(u, 1, MAX_MS, 5_000)?;
        fields.insert("request_timeout_ms".into(), json!(timeout));
        Kind::Http { timeout, wait_s }
    };
    if u.arbitrary()? {
        let first = ms(u, 1, MAX_MS, 100)?;
        fields.insert("reconnect_first_ms".into(), json!(first));
        fields.insert("reconnect_max_ms".into(), json!(ms(u, first, MAX_MS, 5_000)?));
    }
    if broken {
        // One field made wrong: each is refused with invalid_argument.
        let etcd = fields.contains_key("members");
        let zookeeper = fields.get("source") == Some(&json!("zookeeper"));
        let (name, value) = match u.int_in_range(0..=7u8)? {
            3 | 5 if zookeeper => ("members", json!(["zk:port"])),
            6 if zookeeper => ("path", json!("a/b/")),
            0 => ("request_timeout_ms", json!(0)),
            1 => ("request_timeout_ms", json!(MAX_MS + 1)),
            2 => ("reconnect_first_ms", json!(0)),
            3 => ("source", json!("zookeeper")),
            4 => ("unknown", json!(1)),
            5 if etcd => ("members", json!(["ftp://x"])),
            5 => ("url", json!("ftp://x/")),
            6 if etcd => {
                fields.remove("password");
                ("user", json!("only-a-user"))
            }
            6 => ("wait_s", json!(1.5)),
            _ => {
                // Any value in any field: accepted or refused, never a panic.
                let names = ["members", "key", "also", "idle_ms", "url", "interval_ms", "password"];
                let value = match u.int_in_range(0..=4u8)? {
                    0 => Value::Null,
                    1 => json!(u.arbitrary::<i64>()?),
                    2 => json!(text(u, 8)?),
                    3 => json!([text(u, 8)?]),
                    _ => json!({}),
                };
                fields.insert(names[u.choose_index(names.len())?].into(), value);
                return Ok((Value::Object(fields), Made::Any));
            }
        };
        fields.insert(name.into(), value);
        return Ok((Value::Object(fields), Made::Refused));
    }
    Ok((Value::Object(fields), Made::Valid(kind)))
}

/// What a call was, for its result's shape.
#[derive(Clone, Debug)]
enum Op {
    Get,
    GetMany(Vec<String>),
    Put,
    DeletePrefix,
    Txn,
    Publish,
    Refresh,
    /// `{"op": "refresh", "extra": 1}`: etcd takes it, HTTP refuses it.
    RefreshExtra,
    /// Not valid: refused.
    Invalid,
    /// Any op: taken or refused.
    Other,
}

fn op(u: &mut Unstructured, revision: u64) -> Result<(Value, Op)> {
    Ok(match u.int_in_range(0..=11u8)? {
        0 => (json!({"op": "get", "key": key(u)?}), Op::Get),
        1 => {
            let keys: Vec<String> = (0..u.int_in_range(0..=3u8)?).map(|_| key(u)).collect::<Result<_>>()?;
            (json!({"op": "get_many", "keys": keys}), Op::GetMany(keys))
        }
        2 => (json!({"op": "put", "key": key(u)?, "value": text(u, 16)?}), Op::Put),
        3 => (json!({"op": "delete_prefix", "prefix": key(u)?}), Op::DeletePrefix),
        4 => {
            let mut compare = Vec::new();
            for _ in 0..u.int_in_range(0..=2u8)? {
                compare.push(if u.arbitrary()? {
                    json!({"key": key(u)?, "target": "mod", "mod_revision": revision.to_string()})
                } else {
                    json!({"key": key(u)?, "target": "value", "value": text(u, 8)?})
                });
            }
            let mut puts = Map::new();
            for _ in 0..u.int_in_range(0..=2u8)? {
                puts.insert(key(u)?, json!(text(u, 8)?));
            }
            let deletes: Vec<String> = (0..u.int_in_range(0..=2u8)?).map(|_| key(u)).collect::<Result<_>>()?;
            (json!({"op": "txn", "compare": compare, "puts": puts, "deletes": deletes}), Op::Txn)
        }
        5..=7 => {
            let document =
                if u.ratio(7, 8)? { doc(u.int_in_range(0..=6)?, u.int_in_range(1..=3)?) } else { text(u, 40)? };
            let mut op = json!({"op": "publish", "key": KEYS[0], "document": document});
            if u.arbitrary()? {
                op["replace"] = json!(u.arbitrary::<bool>()?);
            }
            if u.arbitrary()? {
                op["also"] = json!({KEYS[1]: text(u, 8)?});
            }
            (op, Op::Publish)
        }
        8 | 9 => (json!({"op": "refresh"}), Op::Refresh),
        _ => {
            // Not valid: a field missing or of the wrong type, an unknown op, not an object.
            match u.int_in_range(0..=6u8)? {
                0 => (json!({"op": "get"}), Op::Invalid),
                1 => (json!({"op": "watch", "key": "/a"}), Op::Invalid),
                2 => (json!({"op": "txn", "compare": [{"key": "/a", "target": "lease"}]}), Op::Invalid),
                3 => (json!({"op": "publish", "key": "/a", "document": "{}", "replace": "yes"}), Op::Invalid),
                4 => (json!({"op": "refresh", "extra": 1}), Op::RefreshExtra),
                5 => (json!([1, 2]), Op::Invalid),
                _ => (json!({"op": text(u, 8)?, "key": u.arbitrary::<u32>()?}), Op::Other),
            }
        }
    })
}

/// A value stored under a key: a document (valid, stale, refused, not UTF-8, a
/// dictionary) or any text.
fn stored_value(u: &mut Unstructured) -> Result<Vec<u8>> {
    Ok(match u.int_in_range(0..=7u8)? {
        0..=3 => doc(u.int_in_range(0..=6)?, u.int_in_range(1..=3)?).into_bytes(),
        4 => {
            let mut raw = doc(u.int_in_range(1..=6)?, 2).into_bytes();
            let at = u.choose_index(raw.len())?;
            raw.insert(at, 0xff);
            raw
        }
        5 => dictionary().to_vec(),
        6 => br#"{"epoch": 9, "format": "shardroute/1"}"#.to_vec(),
        _ => bytes(u, 24)?,
    })
}

/// A revision as etcd writes it (a decimal string), sometimes as a number, or not one.
fn revision(u: &mut Unstructured, counter: &mut u64) -> Result<Value> {
    *counter = counter.saturating_add(u64::from(u.int_in_range(0..=3u8)?));
    Ok(match u.int_in_range(0..=15u8)? {
        0 => json!(*counter),
        1 => json!("18446744073709551615"),
        2 => json!("0"),
        3 => json!(["-1", "x", "", "18446744073709551616", "1.5"][u.choose_index(5)?]),
        4 => json!(u.arbitrary::<u64>()?.to_string()),
        _ => json!(counter.to_string()),
    })
}

fn kv(u: &mut Unstructured, counter: &mut u64) -> Result<Value> {
    let mut kv = json!({"key": b64(b"/app/topology"), "create_revision": "2", "version": "1"});
    kv["mod_revision"] = revision(u, counter)?;
    match u.int_in_range(0..=11u8)? {
        0 => {}
        1 => kv["value"] = Value::Null,
        2 => kv["value"] = json!("not base64!"),
        3 => kv["value"] = json!(7),
        _ => kv["value"] = json!(b64(&stored_value(u)?)),
    }
    Ok(kv)
}

fn range(u: &mut Unstructured, counter: &mut u64) -> Result<Value> {
    let mut range = json!({"header": {"revision": counter.to_string()}});
    match u.int_in_range(0..=5u8)? {
        0 => {}
        1 => range["kvs"] = json!([]),
        2 => range["kvs"] = json!("x"),
        _ => {
            range["kvs"] = json!([kv(u, counter)?]);
            range["count"] = json!("1");
        }
    }
    Ok(range)
}

/// One of etcd's answers (or not): `kind` is what the request asks for, unless the input
/// picks another.
fn etcd_body(u: &mut Unstructured, request: Option<&Request>, counter: &mut u64) -> Result<Vec<u8>> {
    let path = request.map_or("", |r| r.url.rsplit_once("/v3/").map_or("", |(_, path)| path));
    let body = request.and_then(|r| r.body.as_deref()).unwrap_or("");
    let matching = match path {
        "auth/authenticate" => 0,
        "kv/txn" if body.contains("compare") => 1,
        "kv/txn" => 2,
        "kv/range" => 3,
        "kv/put" => 4,
        "kv/deleterange" => 5,
        _ => 8,
    };
    let choice = if u.ratio(3, 4)? { matching } else { u.int_in_range(0..=9u8)? };
    let mut header = json!({"cluster_id": "15118495548433857066", "member_id": "1", "raft_term": "2"});
    header["revision"] = revision(u, counter)?;
    let answer = match choice {
        0 => {
            let token = ["tok.1", "", "tok.2.very-long"][u.choose_index(3)?];
            json!({"header": header, "token": token})
        }
        1 => {
            let mut answer = json!({"header": header});
            match u.int_in_range(0..=3u8)? {
                0 => {}
                1 => answer["succeeded"] = json!("yes"),
                _ => answer["succeeded"] = json!(u.arbitrary::<bool>()?),
            }
            answer
        }
        2 => {
            let asked = body.matches("request_range").count();
            let count = if u.ratio(7, 8)? { asked } else { u.int_in_range(0..=4)? };
            let mut responses = Vec::new();
            for _ in 0..count {
                responses.push(if u.ratio(15, 16)? {
                    json!({"response_range": range(u, counter)?})
                } else {
                    json!({"response_put": {}})
                });
            }
            let mut answer = json!({"header": header, "succeeded": true});
            if count > 0 || u.arbitrary()? {
                answer["responses"] = json!(responses);
            }
            answer
        }
        3 => {
            let mut answer = range(u, counter)?;
            answer["header"] = header;
            answer
        }
        4 => json!({"header": header}),
        5 => {
            let mut answer = json!({"header": header});
            if u.arbitrary()? {
                answer["deleted"] = revision(u, counter)?;
            }
            answer
        }
        6 | 7 => {
            let message = MESSAGES[u.choose_index(MESSAGES.len())?];
            let code = [2, 3, 11, 14, 16, -1, i64::MAX][u.choose_index(7)?];
            json!({"error": message, "code": code, "message": message})
        }
        8 => return Ok(Vec::new()),
        _ => return bytes(u, 64),
    };
    Ok(answer.to_string().into_bytes())
}

/// One line of an etcd watch stream.
fn watch_line(u: &mut Unstructured, counter: &mut u64) -> Result<String> {
    let mut header = json!({"cluster_id": "1", "member_id": "1", "raft_term": "2"});
    header["revision"] = revision(u, counter)?;
    let line = match u.int_in_range(0..=11u8)? {
        0 => json!({"result": {"header": header, "created": true}}),
        1..=3 => {
            let kv = kv(u, counter)?;
            json!({"result": {"header": header, "events": [{"kv": kv}]}})
        }
        4 => json!({"result": {"header": header}}),
        5 => json!({"result": {"header": header, "events": []}}),
        6 => {
            let at = revision(u, counter)?;
            json!({"result": {"header": header, "canceled": true, "compact_revision": at}})
        }
        7 => {
            let reason = MESSAGES[u.choose_index(MESSAGES.len())?];
            json!({"result": {"header": header, "canceled": true, "cancel_reason": reason}})
        }
        8 => {
            let message = MESSAGES[u.choose_index(MESSAGES.len())?];
            let (grpc, http) = [(14, 503), (16, 401), (2, 500), (11, 400)][u.choose_index(4)?];
            json!({"error": {"grpc_code": grpc, "http_code": http, "message": message, "http_status": "x"}})
        }
        9 => json!({"result": {"events": 3}}),
        10 => return Ok(String::new()),
        _ => return text(u, 30),
    };
    Ok(line.to_string())
}

fn http_body(u: &mut Unstructured) -> Result<Vec<u8>> {
    Ok(match u.int_in_range(0..=7u8)? {
        0..=3 => doc(u.int_in_range(0..=6)?, u.int_in_range(1..=3)?).into_bytes(),
        4 => dictionary().to_vec(),
        5 => Vec::new(),
        _ => bytes(u, 64)?,
    })
}

fn headers(u: &mut Unstructured) -> Result<Value> {
    let mut headers = Map::new();
    if u.ratio(2, 3)? {
        let name = ["ETag", "etag", "ETAG"][u.choose_index(3)?];
        let value = match u.int_in_range(0..=3u8)? {
            0 => json!(format!("\"e{}\"", u.int_in_range(0..=3u8)?)),
            1 => json!(7),
            2 => json!(""),
            _ => json!(text(u, 10)?),
        };
        headers.insert(name.into(), value);
    }
    if u.ratio(2, 3)? {
        let kind = ["application/json", "Application/Octet-Stream; x=y", "application/octet-stream", "text/html", ""]
            [u.choose_index(5)?];
        headers.insert("Content-Type".into(), json!(kind));
    }
    Ok(if u.ratio(1, 16)? { json!([1]) } else { Value::Object(headers) })
}

fn status(u: &mut Unstructured) -> Result<u16> {
    Ok(match u.int_in_range(0..=15u8)? {
        0..=7 => 200,
        8 => 304,
        9 => 503,
        10 => 500,
        11 => 401,
        12 => 400,
        13 => 404,
        _ => u.arbitrary()?,
    })
}

/// A ZooKeeper op: `get` (its path or the config's), `publish` (with and without
/// `replace`), `refresh`, and ones that are not valid.
fn zk_op(u: &mut Unstructured) -> Result<(Value, Op)> {
    Ok(match u.int_in_range(0..=7u8)? {
        0 => (json!({"op": "get"}), Op::Other),
        1 => (json!({"op": "get", "path": ZK_PATHS[u.choose_index(ZK_PATHS.len())?]}), Op::Get),
        2..=4 => {
            let document =
                if u.ratio(7, 8)? { doc(u.int_in_range(0..=6)?, u.int_in_range(1..=3)?) } else { text(u, 40)? };
            let mut op =
                json!({"op": "publish", "path": ZK_PATHS[u.choose_index(ZK_PATHS.len())?], "document": document});
            if u.arbitrary()? {
                op["replace"] = json!(u.arbitrary::<bool>()?);
            }
            (op, Op::Publish)
        }
        5 => (json!({"op": "refresh"}), Op::Refresh),
        6 => (json!({"op": "get", "path": "no/slash"}), Op::Invalid),
        _ => (json!({"op": "publish", "document": "{}", "replace": "yes"}), Op::Invalid),
    })
}

/// Frames a ZooKeeper server could send (and some it could not), as the core codec's
/// encoders write them.
fn zk_frames(u: &mut Unstructured, counter: &mut u64) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    for _ in 0..u.int_in_range(1..=4u8)? {
        *counter += 1;
        let zxid = *counter as i64;
        let stat = zk::Stat { mzxid: zxid, version: u.int_in_range(-1..=3)?, ..zk::Stat::default() };
        let body = match u.int_in_range(0..=4u8)? {
            0 => zk::data_body(Some(&stored_value(u)?), &stat),
            1 => zk::data_body(if u.arbitrary()? { None } else { Some(b"") }, &stat),
            2 => stat.encode(),
            3 => zk::path_body(ZK_PATHS[u.choose_index(ZK_PATHS.len())?]),
            _ => bytes(u, 16)?,
        };
        let err = [0, 0, 0, -101, -102, -103, -110, -112, -115, -4, -8][u.choose_index(11)?];
        data.extend(match u.int_in_range(0..=9u8)? {
            0 => {
                let timeout = [0, 1, 3, 6000, -5, i32::MAX][u.choose_index(6)?];
                zk::connect_response(timeout, zxid, &[1; 16])
            }
            1..=4 => zk::reply(u.int_in_range(1..=6)?, zxid, if u.ratio(2, 3)? { 0 } else { err }, &body),
            5 => zk::reply(zk::XID_PING, zxid, 0, &[]),
            6 => zk::reply(zk::XID_AUTH, 0, if u.arbitrary()? { 0 } else { -115 }, &[]),
            7 => {
                let kind = [-1, 1, 2, 3, 4][u.choose_index(5)?];
                let state = [3, -112, 4, 0, 7][u.choose_index(5)?];
                zk::notification(kind, state, ZK_PATHS[u.choose_index(ZK_PATHS.len())?])
            }
            8 => {
                let head: i32 = [-1, -2, i32::MAX, (MAX_ANSWER_BYTES as i32).wrapping_add(1)][u.choose_index(4)?];
                let mut frame = head.to_be_bytes().to_vec();
                frame.extend(bytes(u, 8)?);
                frame
            }
            _ => bytes(u, 24)?,
        });
    }
    Ok(data)
}

fn is_decimal(value: &Value) -> bool {
    value.as_str().is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) && t.parse::<u64>().is_ok())
}

fn check_error(error: &SourceError) {
    assert!(CODES.contains(&error.code), "an undocumented code: {error:?}");
    if error.code == "http" {
        assert!(error.status.is_some(), "http without a status: {error:?}");
    }
    if error.status.is_some() {
        assert!(["http", "unauthenticated"].contains(&error.code), "a status on {error:?}");
    }
    assert!(!error.message.contains(PASSWORD), "the password in an error: {error:?}");
}

/// An `Offered` result as written (`{"installed": {"epoch"}}`, `{"unchanged": {}}`,
/// `{"refused": {"code", "message"}}`).
fn check_offered_value(value: &Value) {
    let fields = value.as_object().expect("an offered result is an object");
    assert_eq!(fields.len(), 1, "{value}");
    if let Some(installed) = fields.get("installed") {
        assert!(is_decimal(&installed["epoch"]), "{value}");
    } else if let Some(refused) = fields.get("refused") {
        assert!(refused["code"].as_str().is_some_and(|code| CODES.contains(&code)), "{value}");
    } else {
        assert_eq!(fields.get("unchanged"), Some(&json!({})), "{value}");
    }
}

fn check_result(kind: &Kind, op: &Op, result: &Value) {
    let entry = |value: &Value| {
        assert!(value["value"].is_string() || value["value"].is_null(), "{value}");
        assert!(is_decimal(&value["mod_revision"]), "{value}");
        if value["value"].is_null() {
            assert_eq!(value["mod_revision"], "0", "absent: revision 0: {value}");
        }
    };
    match op {
        Op::Get if matches!(kind, Kind::Zookeeper { .. }) => {
            assert!(result["value"].is_string() || result["value"].is_null(), "{result}");
            assert!(result["version"].is_i64() || result["version"].is_null(), "{result}");
            assert!(is_decimal(&result["mzxid"]), "{result}");
        }
        Op::Get => entry(result),
        Op::GetMany(keys) => {
            assert!(is_decimal(&result["revision"]), "{result}");
            let values = result["values"].as_object().expect("values");
            for (name, value) in values {
                assert!(keys.contains(name), "{name} not asked: {result}");
                entry(value);
            }
        }
        Op::Put | Op::Txn => assert!(is_decimal(&result["revision"]), "{result}"),
        Op::DeletePrefix => assert!(result["deleted"].is_u64(), "{result}"),
        Op::Publish => assert!(is_decimal(&result["revision"]) && is_decimal(&result["epoch"]), "{result}"),
        // One shape in both kinds: {"offered": <result> | null, "revision": "N"} (HTTP:
        // null before its first body).
        Op::Refresh | Op::RefreshExtra => {
            let http_unread = matches!(kind, Kind::Http { .. }) && result["revision"].is_null();
            assert!(is_decimal(&result["revision"]) || http_unread, "{result}");
            let names: Vec<&str> = result.as_object().expect("an object").keys().map(String::as_str).collect();
            assert_eq!(names, ["offered", "revision"], "{result}");
            if !result["offered"].is_null() {
                check_offered_value(&result["offered"]);
            }
        }
        Op::Invalid => panic!("a refused op ended: {result}"),
        Op::Other => {}
    }
}

/// What the shell knows, and every property checked against it.
struct Model {
    kind: Kind,
    last_id: u64,
    requests: BTreeMap<u64, Request>,
    /// Requests given and not finished.
    open: BTreeSet<u64>,
    /// Streams whose head came (open until they fail or are cancelled).
    streaming: BTreeSet<u64>,
    calls: BTreeMap<u64, Op>,
    started: bool,
    closed: bool,
    counter: u64,
}

impl Model {
    fn follower(&self) -> bool {
        matches!(
            self.kind,
            Kind::Etcd { has_key: true, .. } | Kind::Http { .. } | Kind::Zookeeper { has_path: true, .. }
        )
    }

    fn new_id(&mut self, id: u64) {
        assert_eq!(id, self.last_id + 1, "ids are 1, 2, 3, ...: {id} after {}", self.last_id);
        self.last_id = id;
    }

    /// Checks one call's actions and records them.
    fn actions(&mut self, session: &SourceSession, actions: &[Action], now: u64) {
        let mut lost_at = None;
        let etag = session.state()["etag"].as_str().map(str::to_string);
        for action in actions {
            match action {
                Action::Request(request) => {
                    assert!(!self.closed, "a request after close: {request:?}");
                    self.new_id(request.id);
                    self.request(request, now, etag.as_deref());
                    self.open.insert(request.id);
                    self.requests.insert(request.id, request.clone());
                }
                Action::Connect { id, host, port, deadline } => {
                    assert!(!self.closed, "a connection after close");
                    self.new_id(*id);
                    let Kind::Zookeeper { members, .. } = &self.kind else {
                        panic!("a connection from {:?}", self.kind)
                    };
                    assert!(members.iter().any(|(h, p)| h == host && p == port), "{host}:{port}");
                    assert!(*deadline >= now, "a connection's deadline {deadline} before {now}");
                    self.open.insert(*id);
                }
                Action::Send { id, data } => {
                    assert!(self.open.contains(id), "a send to {id}, not open: {actions:?}");
                    let mut rest = &data[..];
                    while !rest.is_empty() {
                        let length = i32::from_be_bytes(rest[..4].try_into().expect("a frame's head"));
                        assert!(length >= 0 && rest.len() >= 4 + length as usize, "not whole frames: {data:?}");
                        let frame = &rest[..4 + length as usize];
                        let password = PASSWORD.as_bytes();
                        if frame.windows(password.len()).any(|w| w == password) {
                            assert_eq!(frame[4..8], zk::XID_AUTH.to_be_bytes(), "the password outside auth");
                            assert!(matches!(self.kind, Kind::Zookeeper { user: true, .. }), "a password not given");
                        }
                        rest = &rest[4 + length as usize..];
                    }
                }
                Action::Cancel { id } => {
                    assert!(self.open.remove(id), "a cancel of {id}, not open: {actions:?}");
                    self.streaming.remove(id);
                }
                Action::Offered { offered, changed, .. } => {
                    assert!(!self.closed, "offered after close");
                    assert!(self.follower(), "offered without a follower");
                    if let Offered::Refused(_) = offered {
                        assert!(!changed, "a refusal changed something");
                    }
                    check_offered_value(&offered.to_value());
                }
                Action::Lost { error, retry_at } => {
                    assert!(!self.closed, "lost after close");
                    assert!(self.follower() && self.started, "lost while not following: {error:?}");
                    assert!(*retry_at >= now, "retry_at {retry_at} before now {now}");
                    check_error(error);
                    lost_at = Some(*retry_at);
                }
                Action::Done { call, result } => {
                    let op = self.calls.remove(call).unwrap_or_else(|| panic!("done for call {call}, not in flight"));
                    check_result(&self.kind, &op, result);
                }
                Action::Failed { call, error } => {
                    assert!(self.calls.remove(call).is_some(), "failed for call {call}, not in flight");
                    check_error(error);
                }
            }
        }
        let deadline = session.deadline();
        if let Some(retry_at) = lost_at {
            assert!(deadline.is_some_and(|at| at <= retry_at), "lost until {retry_at}, deadline {deadline:?}");
        }
        if self.closed {
            assert_eq!(deadline, None, "a deadline after close");
            assert!(self.calls.is_empty(), "calls in flight after close: {:?}", self.calls);
            assert!(self.open.is_empty(), "requests not cancelled by close: {:?}", self.open);
        } else {
            if !self.calls.is_empty() {
                assert!(deadline.is_some(), "calls in flight without a deadline: {:?}", self.calls);
            }
            if self.started && self.follower() {
                assert!(deadline.is_some() || !self.streaming.is_empty(), "a follower without a deadline or a stream");
            }
        }
    }

    /// A request's fields, as documented.
    fn request(&self, request: &Request, now: u64, etag: Option<&str>) {
        let names: Vec<&str> = request.headers.iter().map(|(name, _)| *name).collect();
        assert!(names.iter().all(|name| !name.bytes().any(|b| b.is_ascii_uppercase())), "{names:?}");
        match &self.kind {
            Kind::Etcd { members, user, timeout, .. } => {
                assert_eq!(request.method, "POST");
                assert!(members.iter().any(|m| request.url.starts_with(&format!("{m}/v3/"))), "{}", request.url);
                assert_eq!(request.deadline, Some(now.saturating_add(*timeout)), "an etcd request's deadline");
                assert_eq!(request.limit, MAX_ANSWER_BYTES);
                assert_eq!(request.stream, request.url.ends_with("/v3/watch"));
                let auth = request.url.ends_with("/v3/auth/authenticate");
                assert_eq!(names.contains(&"authorization"), *user && !auth, "authorization: {request:?}");
                if !auth {
                    assert!(!format!("{request:?}").contains(PASSWORD), "the password in {request:?}");
                }
                let body = request.body.as_deref().expect("a body");
                assert!(serde_json::from_str::<Value>(body).is_ok_and(|v| v.is_object()), "{body}");
            }
            Kind::Zookeeper { .. } => panic!("an HTTP request from ZooKeeper: {request:?}"),
            Kind::Http { timeout, wait_s } => {
                assert_eq!((request.method, request.body.as_deref(), request.stream), ("GET", None, false));
                assert_eq!(request.limit, MAX_DOCUMENT_BYTES);
                assert_eq!(names[0], "accept");
                let header = |name: &str| request.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str());
                assert_eq!(header("if-none-match"), etag, "if-none-match is the ETag known");
                let long = header("prefer").is_some();
                if long {
                    assert!(etag.is_some() && *wait_s > 0);
                    assert_eq!(header("prefer"), Some(format!("wait={wait_s}").as_str()));
                }
                let wait = if long { wait_s * 1000 } else { 0 };
                assert_eq!(request.deadline, Some(now.saturating_add(*timeout).saturating_add(wait)));
            }
        }
        assert!(request.deadline.is_none_or(|at| at >= now));
    }

    fn state(&self, session: &SourceSession) {
        let state = session.state();
        let text = state.to_string();
        assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(state.clone()), "state round trip");
        assert!(!text.contains(PASSWORD), "the password in the state");
        let fields = state.as_object().expect("state is an object");
        let follower = session.follower();
        let revision = follower.and_then(|f| f.revision()).map(|r| r.to_string());
        assert_eq!(state["revision"].as_str().map(str::to_string), revision, "{state}");
        let epoch = follower.and_then(|f| f.router()).map(|r| r.epoch().to_string());
        assert_eq!(state["epoch"].as_str().map(str::to_string), epoch, "{state}");
        let stats = state["stats"].as_object().expect("stats");
        for name in ["offered", "installed", "unchanged", "disconnects"] {
            assert!(stats[name].is_u64(), "{state}");
        }
        assert!(stats["refused"].as_object().is_some_and(|r| r.values().all(Value::is_u64)), "{state}");
        let mut names: Vec<&str> = fields.keys().map(String::as_str).collect();
        names.sort_unstable();
        match &self.kind {
            Kind::Etcd { members, also, has_key, .. } => {
                assert_eq!(names, ["companions", "epoch", "member", "revision", "stats"], "{state}");
                assert!(members.iter().any(|m| state["member"] == m.as_str()), "{state}");
                let companions = state["companions"].as_object().expect("companions");
                let expected: BTreeSet<&str> = also.iter().map(String::as_str).collect();
                let got: BTreeSet<&str> = companions.keys().map(String::as_str).collect();
                assert_eq!(got, expected, "{state}");
                assert!(companions.values().all(|v| v.is_string() || v.is_null()), "{state}");
                assert!(stats["reads"].is_u64() && stats["watch_restarts"].is_u64(), "{state}");
                assert_eq!(follower.is_some(), *has_key);
                let config = session.config();
                let shown = config["password"].clone();
                assert!(shown == json!("***") || shown.is_null(), "{config}");
                assert!(!config.to_string().contains(PASSWORD), "the password in the config");
                // It reads back to itself without a password; with one, "***" is refused.
                match SourceSession::from_config(&config) {
                    Ok(again) => assert_eq!(again.config(), config),
                    Err(error) => assert!(!config["user"].is_null(), "config() refused: {error:?}"),
                }
            }
            Kind::Zookeeper { has_path, .. } => {
                assert_eq!(names, ["epoch", "member", "revision", "stats"], "{state}");
                for name in ["sessions", "events", "reads", "pings"] {
                    assert!(stats[name].is_u64(), "{state}");
                }
                assert_eq!(follower.is_some(), *has_path);
                let config = session.config();
                assert!(!config.to_string().contains(PASSWORD), "the password in the config");
                match SourceSession::from_config(&config) {
                    Ok(again) => assert_eq!(again.config(), config),
                    Err(error) => assert!(!config["user"].is_null(), "config() refused: {error:?}"),
                }
            }
            Kind::Http { .. } => {
                assert_eq!(names, ["epoch", "etag", "revision", "stats"], "{state}");
                assert!(state["etag"].is_string() || state["etag"].is_null(), "{state}");
                assert!(stats["requests"].is_u64() && stats["not_modified"].is_u64(), "{state}");
                assert!(follower.is_some());
                // Every field, defaults filled in: the config reads back to itself.
                let again = SourceSession::from_config(&session.config()).expect("config() reads back");
                assert_eq!(again.config(), session.config());
            }
        }
    }
}

/// The twin agrees: same actions, deadline and state.
fn same(a: &SourceSession, b: &SourceSession, got: &[Action], twin: &[Action]) {
    assert_eq!(got, twin, "the twin differs");
    assert_eq!(a.deadline(), b.deadline(), "the twin's deadline differs");
    assert_eq!(a.state(), b.state(), "the twin's state differs");
}

/// An id to answer: an open one (mostly), a finished one, or one never given.
fn pick_id(u: &mut Unstructured, model: &Model, streams: bool) -> Result<u64> {
    let pool: Vec<u64> = if streams {
        model.streaming.iter().copied().collect()
    } else {
        model.open.iter().filter(|id| !model.streaming.contains(id)).copied().collect()
    };
    Ok(match u.int_in_range(0..=9u8)? {
        0 => model.last_id + 1,
        1 => u.arbitrary()?,
        2 if model.last_id > 0 => u.int_in_range(1..=model.last_id)?,
        _ if !pool.is_empty() => pool[u.choose_index(pool.len())?],
        _ => u.int_in_range(0..=model.last_id + 1)?,
    })
}

fn run(u: &mut Unstructured) -> Result<()> {
    let (config, expected) = config(u)?;
    let made = SourceSession::from_config(&config);
    let kind = match expected {
        Made::Valid(kind) => kind,
        Made::Refused => {
            let error = made.err().unwrap_or_else(|| panic!("a config taken that is not valid: {config}"));
            assert_eq!(error.code(), "invalid_argument", "{error}");
            return Ok(());
        }
        Made::Any => {
            if let Err(error) = made {
                assert_eq!(error.code(), "invalid_argument", "{error}");
            }
            return Ok(());
        }
    };
    let mut session = made.unwrap_or_else(|error| panic!("a valid config refused: {error}: {config}"));
    let mut twin = SourceSession::from_config(&config).expect("the same config");
    let mut model = Model {
        kind,
        last_id: 0,
        requests: BTreeMap::new(),
        open: BTreeSet::new(),
        streaming: BTreeSet::new(),
        calls: BTreeMap::new(),
        started: false,
        closed: false,
        counter: 1,
    };
    let etcd = matches!(model.kind, Kind::Etcd { .. });
    let zookeeper = matches!(model.kind, Kind::Zookeeper { .. });
    let mut now = 0u64;
    for _ in 0..u.int_in_range(1..=64u8)? {
        if u.is_empty() {
            break;
        }
        now = next_time(u, now)?;
        let (got, twin_got) = match u.int_in_range(0..=19u8)? {
            0 => {
                let got = session.start(now);
                if !model.closed && model.follower() {
                    model.started = true;
                }
                (got, twin.start(now))
            }
            1..=4 => {
                let (op, what) = match op(u, model.counter)? {
                    _ if zookeeper && u.ratio(2, 3)? => zk_op(u)?,
                    // etcd's ops: `{"op": "get"}` is ZooKeeper's get of its path.
                    (op, Op::Invalid) if zookeeper => (op, Op::Other),
                    made => made,
                };
                let result = session.call(&op, now);
                let twin_result = twin.call(&op, now);
                assert_eq!(result.is_ok(), twin_result.is_ok());
                match result {
                    Ok((number, got)) => {
                        assert!(!matches!(what, Op::Invalid), "an op that is not valid taken: {op}");
                        assert!(!matches!(what, Op::RefreshExtra), "a refresh with another field taken: {op}");
                        model.new_id(number);
                        model.calls.insert(number, what);
                        let twin_got = twin_result.expect("ok").1;
                        (got, twin_got)
                    }
                    Err(error) => {
                        assert_eq!(error.code(), "invalid_argument", "{error}");
                        let refresh = matches!(what, Op::Refresh | Op::RefreshExtra);
                        let refresh_without_follower = refresh && !model.follower();
                        let not_http = !etcd && !matches!(what, Op::Refresh);
                        assert!(
                            matches!(what, Op::Invalid | Op::Other | Op::RefreshExtra)
                                || refresh_without_follower
                                || not_http,
                            "a valid op refused: {op}: {error}"
                        );
                        (Vec::new(), Vec::new())
                    }
                }
            }
            5..=9 if zookeeper => {
                // `opened` for a connection (or any id); `response` is never used.
                let id = pick_id(u, &model, false)?;
                if u.ratio(1, 4)? {
                    let got = session.response(id, now, 200, &json!({}), b"{}");
                    assert!(got.is_empty(), "a response did something: {got:?}");
                    (got, twin.response(id, now, 200, &json!({}), b"{}"))
                } else {
                    let was_open = model.open.contains(&id) && !model.streaming.contains(&id);
                    let got = session.opened(id, now);
                    if was_open {
                        model.streaming.insert(id);
                    } else {
                        assert!(got.is_empty(), "opened({id}), not a connection given, did something: {got:?}");
                    }
                    (got, twin.opened(id, now))
                }
            }
            10..=13 if zookeeper => {
                let id = pick_id(u, &model, true)?;
                let data = zk_frames(u, &mut model.counter)?;
                let mut cuts: Vec<usize> =
                    (0..u.int_in_range(0..=3u8)?).map(|_| u.int_in_range(0..=data.len())).collect::<Result<_>>()?;
                cuts.sort_unstable();
                let mut got = Vec::new();
                let mut from = 0;
                for cut in cuts.into_iter().chain([data.len()]) {
                    got.extend(session.chunk(id, now, &data[from..cut]));
                    from = cut;
                }
                if !model.streaming.contains(&id) {
                    assert!(got.is_empty(), "a chunk of {id}, not a connection open, did something: {got:?}");
                }
                (got, twin.chunk(id, now, &data))
            }
            5..=9 => {
                let id = pick_id(u, &model, false)?;
                let status = status(u)?;
                let headers = headers(u)?;
                let body = if etcd {
                    let request = model.requests.get(&id).cloned();
                    if request.as_ref().is_some_and(|r| r.stream) && status == 200 && u.ratio(7, 8)? {
                        Vec::new()
                    } else {
                        etcd_body(u, request.as_ref(), &mut model.counter)?
                    }
                } else {
                    http_body(u)?
                };
                let was_open = model.open.contains(&id) && !model.streaming.contains(&id);
                let got = session.response(id, now, status, &headers, &body);
                let twin_got = twin.response(id, now, status, &headers, &body);
                if was_open {
                    if model.requests[&id].stream && status == 200 {
                        model.streaming.insert(id);
                    } else {
                        model.open.remove(&id);
                    }
                } else {
                    assert!(got.is_empty(), "an answer to {id}, not open, did something: {got:?}");
                }
                (got, twin_got)
            }
            10..=13 => {
                let id = pick_id(u, &model, true)?;
                let mut data = Vec::new();
                for _ in 0..u.int_in_range(1..=4u8)? {
                    data.extend_from_slice(watch_line(u, &mut model.counter)?.as_bytes());
                    if u.ratio(7, 8)? {
                        data.extend_from_slice(if u.arbitrary()? { b"\r\n" } else { b"\n" });
                    }
                }
                let mut cuts: Vec<usize> =
                    (0..u.int_in_range(0..=3u8)?).map(|_| u.int_in_range(0..=data.len())).collect::<Result<_>>()?;
                cuts.sort_unstable();
                let mut got = Vec::new();
                let mut from = 0;
                for cut in cuts.into_iter().chain([data.len()]) {
                    got.extend(session.chunk(id, now, &data[from..cut]));
                    from = cut;
                }
                if !model.streaming.contains(&id) {
                    assert!(got.is_empty(), "a chunk of {id}, not a stream open, did something: {got:?}");
                }
                (got, twin.chunk(id, now, &data))
            }
            14 | 15 => {
                let streams = u.arbitrary()?;
                let id = pick_id(u, &model, streams)?;
                let code = match u.int_in_range(0..=4u8)? {
                    0 | 1 => "unreachable".to_string(),
                    2 => "closed".to_string(),
                    3 => "limit_exceeded".to_string(),
                    _ => text(u, 12)?,
                };
                let message = text(u, 20)?;
                let was_open = model.open.remove(&id);
                model.streaming.remove(&id);
                let got = session.failed(id, now, &code, &message);
                if !was_open {
                    assert!(got.is_empty(), "a failure of {id}, not open, did something: {got:?}");
                }
                (got, twin.failed(id, now, &code, &message))
            }
            16..=18 => {
                let before = session.deadline();
                now = match (before, u.int_in_range(0..=3u8)?) {
                    (Some(at), 0 | 1) => at,
                    (Some(at), 2) => at.saturating_sub(u64::from(u.int_in_range(1..=100u8)?)),
                    (Some(at), _) => at.saturating_add(u64::from(u.int_in_range(1..=100u8)?)),
                    (None, _) => now,
                };
                let got = session.timer(now);
                if before.is_none_or(|at| now < at) {
                    assert!(got.is_empty(), "a timer before the deadline {before:?} at {now}: {got:?}");
                    assert_eq!(session.deadline(), before, "a timer before the deadline moved it");
                }
                let after = session.deadline();
                assert!(after.is_none_or(|at| at > now || at == u64::MAX), "after timer({now}): deadline {after:?}");
                (got, twin.timer(now))
            }
            _ => {
                let got = session.close(now);
                assert!(
                    got.iter().all(|a| matches!(a, Action::Cancel { .. } | Action::Failed { .. })
                        || (zookeeper && matches!(a, Action::Send { .. }))),
                    "close gave {got:?}"
                );
                for action in &got {
                    if let Action::Failed { error, .. } = action {
                        assert_eq!(error.code, "closed", "a call ended by close: {error:?}");
                    }
                }
                model.closed = true;
                (got, twin.close(now))
            }
        };
        same(&session, &twin, &got, &twin_got);
        model.actions(&session, &got, now);
        model.state(&session);
    }
    // The end: close, then every call a shell may still make.
    now = next_time(u, now).unwrap_or(now);
    let got = session.close(now);
    model.closed = true;
    model.actions(&session, &got, now);
    assert!(session.close(now).is_empty(), "a second close did something");
    assert!(session.start(now).is_empty(), "start after close did something");
    assert!(session.timer(u64::MAX).is_empty(), "a timer after close did something");
    for id in 0..=model.last_id + 1 {
        assert!(session.response(id, now, 200, &json!({}), b"{}").is_empty(), "an answer after close");
        assert!(session.chunk(id, now, b"{\"result\":{\"events\":[{}]}}\n").is_empty(), "a chunk after close");
        assert!(session.failed(id, now, "unreachable", "x").is_empty(), "a failure after close");
        assert!(session.opened(id, now).is_empty(), "opened after close");
    }
    let refresh = json!({"op": "refresh"});
    let op = if etcd && !model.follower() {
        json!({"op": "get", "key": "/a"})
    } else if zookeeper && !model.follower() {
        json!({"op": "get", "path": "/a"})
    } else {
        refresh
    };
    let (number, got) = session.call(&op, now).expect("an op taken");
    model.new_id(number);
    assert!(
        matches!(&got[..], [Action::Failed { call, error }] if *call == number && error.code == "closed"),
        "a call after close: {got:?}"
    );
    assert_eq!(session.deadline(), None);
    model.state(&session);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
