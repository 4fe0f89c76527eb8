//! The etcd session's decisions, one by one (the scenarios of
//! `conformance/vectors/session_source.json` test them end to end in every runner).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use serde_json::{json, Value};

use super::codec::b64;
use super::EtcdSession;
use crate::limits::MAX_ANSWER_BYTES;
use crate::session::exchange::{defaults, Action, Request, SourceError};

const A: &str = "http://a:2379";
const B: &str = "http://b:2379";
const C: &str = "http://c:2379";

fn session(config: Value) -> EtcdSession {
    let mut config = config;
    config["source"] = json!("etcd");
    EtcdSession::from_config(&config).expect("a config")
}

fn doc(epoch: u64) -> String {
    format!(
        r#"{{"format": "shardroute/1", "epoch": {epoch}, "nodes": [{{"id": "a"}}, {{"id": "b"}}], "strategy": {{"type": "jump"}}}}"#
    )
}

fn read_answer(revision: u64, value: Option<(&str, u64)>) -> Vec<u8> {
    let range = match value {
        Some((text, at)) => json!({"header": {"revision": revision.to_string()},
            "kvs": [{"key": b64(b"/k"), "mod_revision": at.to_string(), "value": b64(text.as_bytes())}]}),
        None => json!({"header": {"revision": revision.to_string()}}),
    };
    json!({"header": {"revision": revision.to_string()}, "succeeded": true, "responses": [{"response_range": range}]})
        .to_string()
        .into_bytes()
}

fn requests(actions: &[Action]) -> Vec<&Request> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Request(request) => Some(request),
            _ => None,
        })
        .collect()
}

fn only_request(actions: &[Action]) -> Request {
    let found = requests(actions);
    assert_eq!(found.len(), 1, "{actions:?}");
    found[0].clone()
}

fn lost(actions: &[Action]) -> Option<&SourceError> {
    actions.iter().find_map(|action| match action {
        Action::Lost { error, .. } => Some(error),
        _ => None,
    })
}

/// A follower reading `/k` from A, its watch opened: (session, watch id).
fn watching(extra: Value) -> (EtcdSession, u64) {
    let mut config = json!({"members": [A, B], "key": "/k"});
    if let Value::Object(fields) = extra {
        for (name, value) in fields {
            config[name] = value;
        }
    }
    let answer = if config.get("also").is_some() {
        read_with_companion(5, &doc(1), b"v")
    } else {
        read_answer(5, Some((&doc(1), 4)))
    };
    let mut s = session(config);
    let read = only_request(&s.start(0));
    let actions = s.response(read.id, 0, 200, &json!({}), &answer);
    let watch = only_request(&actions);
    assert!(watch.stream && watch.url.ends_with("/v3/watch"));
    assert!(s.response(watch.id, 0, 200, &json!({}), b"").is_empty());
    (s, watch.id)
}

#[test]
fn config_defaults_are_the_named_constants() {
    let s = session(json!({"members": ["http://a:2379/"]}));
    let config = s.config();
    assert_eq!(config["members"], json!([A]));
    assert_eq!(config["request_timeout_ms"], json!(defaults::REQUEST_TIMEOUT_MS));
    assert_eq!(config["idle_ms"], json!(defaults::WATCH_IDLE_MS));
    assert_eq!(config["reconnect_first_ms"], json!(crate::session::follower::defaults::RECONNECT_FIRST_MS));
    assert_eq!(config["reconnect_max_ms"], json!(crate::session::follower::defaults::RECONNECT_MAX_MS));
    let secret = session(json!({"members": ["https://a:2379"], "user": "u", "password": "secret"}));
    assert!(!secret.config().to_string().contains("secret"));
    for bad in [
        json!({"members": []}),
        json!({"members": ["http://"]}),
        json!({"members": ["http://a:1/path"]}),
        json!({"members": ["http://user@a:1"]}),
        json!({"members": ["ftp://a:1"]}),
        json!({"members": "http://a:1"}),
        json!({"members": [A], "password": "p"}),
        json!({"members": [A], "idle_ms": -1}),
        json!({"members": [A], "reconnect_first_ms": 0}),
        json!([A]),
    ] {
        let mut config = bad.clone();
        if config.is_object() {
            config["source"] = json!("etcd");
        }
        let err = EtcdSession::from_config(&config).expect_err("refused");
        assert_eq!(err.code(), "invalid_argument", "{bad}");
    }
}

#[test]
fn every_request_is_bounded_and_has_one_request_timeout() {
    let mut s = session(json!({"members": [A], "key": "/k", "request_timeout_ms": 700}));
    let read = only_request(&s.start(100));
    assert_eq!((read.limit, read.deadline), (MAX_ANSWER_BYTES, Some(800)));
    let (_, actions) = s.call(&json!({"op": "get", "key": "/x"}), 200).expect("a call");
    assert_eq!(only_request(&actions).deadline, Some(900));
    assert_eq!(s.deadline(), Some(800));
}

#[test]
fn a_quiet_watch_is_read_again_not_lost() {
    let (mut s, watch) = watching(json!({}));
    assert_eq!(s.deadline(), Some(defaults::WATCH_IDLE_MS));
    let actions = s.timer(defaults::WATCH_IDLE_MS);
    assert_eq!(actions[0], Action::Cancel { id: watch });
    assert!(lost(&actions).is_none(), "{actions:?}");
    let read = only_request(&actions);
    let actions = s.response(read.id, 10_001, 200, &json!({}), &read_answer(5, Some((&doc(1), 4))));
    assert!(only_request(&actions).stream);
    assert_eq!(s.state()["stats"]["disconnects"], json!(0));
    assert_eq!(s.state()["stats"]["watch_restarts"], json!(0));
    assert_eq!(s.follower().and_then(crate::session::follower::Follower::next_deadline), None);
}

#[test]
fn a_concurrent_request_that_moved_on_does_not_skip_a_member() {
    let mut s = session(json!({"members": [A, B, C]}));
    let (_, first) = s.call(&json!({"op": "get", "key": "/x"}), 0).expect("a call");
    let (_, second) = s.call(&json!({"op": "get", "key": "/y"}), 0).expect("a call");
    let (first, second) = (only_request(&first), only_request(&second));
    let unavailable = br#"{"error":"etcdserver: server stopped","message":"etcdserver: server stopped","code":14}"#;
    let next = only_request(&s.response(first.id, 1, 503, &json!({}), unavailable));
    assert!(next.url.starts_with(B));
    let next = only_request(&s.response(second.id, 1, 503, &json!({}), unavailable));
    assert!(next.url.starts_with(B), "{next:?}");
    assert_eq!(s.state()["member"], json!(B));
}

#[test]
fn a_watch_line_is_bounded_while_it_is_buffered() {
    let (mut s, watch) = watching(json!({}));
    s.limit = 64;
    // Lines that end are fine, however many arrive in one chunk.
    let line = "{\"result\":{\"header\":{\"revision\":\"5\"}}}\n";
    assert!(line.len() < 64);
    assert!(s.chunk(watch, 1, line.repeat(100).as_bytes()).is_empty());
    // A line that never ends is refused as soon as it passes the limit, not after.
    assert!(s.chunk(watch, 2, &[b' '; 40]).is_empty());
    let pending = s.follow.as_ref().and_then(|f| f.watch.as_ref()).map(|w| w.pending.len());
    assert_eq!(pending, Some(40));
    let actions = s.chunk(watch, 3, &[b' '; 40]);
    assert_eq!(lost(&actions).map(|e| e.code), Some("limit_exceeded"));
    assert!(actions.contains(&Action::Cancel { id: watch }));
    assert!(s.follow.as_ref().is_some_and(|f| f.watch.is_none()));
    // An answer past the limit is refused too.
    let (_, actions) = s.call(&json!({"op": "get", "key": "/x"}), 4).expect("a call");
    let get = only_request(&actions);
    assert_eq!(get.limit, 64);
    let actions = s.response(get.id, 5, 200, &json!({}), &[b'x'; 65]);
    assert!(matches!(&actions[..], [Action::Failed { error, .. }] if error.code == "limit_exceeded"));
}

#[test]
fn with_companions_events_during_a_read_make_one_more_read() {
    let (mut s, watch) = watching(json!({"also": ["/c"]}));
    let events = b"{\"result\":{\"header\":{\"revision\":\"6\"},\"events\":[{\"kv\":{\"key\":\"L2s=\",\"mod_revision\":\"6\"}}]}}\n";
    let read = only_request(&s.chunk(watch, 1, events));
    assert!(s.chunk(watch, 2, events).is_empty());
    assert!(s.chunk(watch, 3, events).is_empty());
    let actions = s.response(read.id, 4, 200, &json!({}), &read_with_companion(6, &doc(2), b"v"));
    assert_eq!(requests(&actions).len(), 1);
    let again = only_request(&actions);
    let actions = s.response(again.id, 5, 200, &json!({}), &read_with_companion(7, &doc(2), b"v"));
    assert!(requests(&actions).is_empty(), "the watch is still open: {actions:?}");
    assert_eq!(s.state()["stats"]["reads"], json!(3));
}

#[test]
fn extreme_times_and_revisions_do_not_overflow() {
    let mut s = session(json!({"members": [A], "key": "/k", "idle_ms": 1u64 << 53}));
    let read = only_request(&s.start(u64::MAX - 1));
    assert_eq!(read.deadline, Some(u64::MAX));
    let answer = read_answer(u64::MAX, Some((&doc(1), u64::MAX)));
    let watch = only_request(&s.response(read.id, u64::MAX, 200, &json!({}), &answer));
    assert!(watch.body.as_deref().is_some_and(|body| body.contains(&u64::MAX.to_string())));
    assert!(s.response(watch.id, u64::MAX, 200, &json!({}), b"").is_empty());
    let actions = s.failed(watch.id, u64::MAX, "closed", "gone");
    assert!(matches!(lost(&actions), Some(error) if error.code == "unreachable"));
    assert_eq!(s.deadline(), Some(u64::MAX));
}

#[test]
fn publish_replace_is_refused_without_an_epoch_to_beat() {
    let mut s = session(json!({"members": [A]}));
    let (call, actions) =
        s.call(&json!({"op": "publish", "key": "/k", "document": doc(2), "replace": true}), 0).expect("a call");
    let read = only_request(&actions);
    // Stored at revision 1: no history to read, no epoch field.
    let actions = s.response(read.id, 1, 200, &json!({}), &read_answer(1, Some(("not json", 1))));
    assert!(
        matches!(&actions[..], [Action::Failed { call: c, error }] if *c == call && error.code == "invalid_argument"),
        "{actions:?}"
    );
}

#[test]
fn a_publish_refused_without_replace_says_how_to_repair() {
    let mut s = session(json!({"members": [A]}));
    let (_, actions) = s.call(&json!({"op": "publish", "key": "/k", "document": doc(2)}), 0).expect("a call");
    let read = only_request(&actions);
    let actions = s.response(read.id, 1, 200, &json!({}), &read_answer(3, Some(("{}", 3))));
    let [Action::Failed { error, .. }] = &actions[..] else { panic!("{actions:?}") };
    assert_eq!(error.code, "invalid_topology");
    assert!(error.message.contains("not overwritten") && error.message.contains("replace"), "{}", error.message);
}

/// A small deterministic generator for the garbage test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

#[test]
fn garbage_in_any_order_never_panics_and_stays_bounded() {
    let pieces: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"\n".to_vec(),
        b"{".to_vec(),
        b"null\n".to_vec(),
        b"[1,2]\n".to_vec(),
        b"\xff\xfe\n".to_vec(),
        b"{\"result\":{\"canceled\":true,\"compact_revision\":\"99999999999999999999\"}}\n".to_vec(),
        b"{\"result\":{\"canceled\":true,\"compact_revision\":\"3\"}}\n".to_vec(),
        b"{\"result\":{\"canceled\":true,\"cancel_reason\":\"invalid auth token\"}}\n".to_vec(),
        b"{\"result\":{\"events\":[{}]}}\n".to_vec(),
        b"{\"error\":{\"grpc_code\":14}}\n".to_vec(),
        b"{\"error\":\"x\",\"code\":16}".to_vec(),
        b"{\"header\":{\"revision\":\"-1\"},\"kvs\":[{\"value\":7}]}".to_vec(),
        b"{\"header\":{\"revision\":\"3\"},\"succeeded\":true,\"responses\":[{\"response_range\":{\"kvs\":[{\"mod_revision\":\"2\",\"value\":\"e30=\"}]}}]}".to_vec(),
        b"{\"header\":{\"revision\":\"3\"},\"token\":\"t\"}".to_vec(),
        b"{\"header\":{\"revision\":\"3\"},\"succeeded\":true,\"responses\":[{\"response_range\":{\"kvs\":[{\"mod_revision\":\"2\",\"value\":\"e30=\"}]}},{\"response_range\":{\"kvs\":[{\"mod_revision\":\"3\",\"value\":\"/w==\"}]}}]}".to_vec(),
        b"{\"header\":{\"revision\":\"3\"},\"deleted\":\"x\"}".to_vec(),
        read_answer(9, Some((&doc(3), 8))),
        read_answer(2, None),
    ];
    let statuses = [200u16, 200, 200, 503, 401, 400, 404, 500, 0, 999];
    let codes = ["unreachable", "closed", "limit_exceeded", "whatever"];
    let ops = [
        json!({"op": "get", "key": "/k"}),
        json!({"op": "get_many", "keys": ["/k", "/j"]}),
        json!({"op": "publish", "key": "/k", "document": doc(4), "replace": true, "also": {"/j": "v"}}),
        json!({"op": "publish", "key": "/k", "document": doc(1)}),
        json!({"op": "txn", "compare": [{"key": "/k", "target": "mod", "mod_revision": 3}], "puts": {"/k": "v"}}),
        json!({"op": "delete_prefix", "prefix": "\u{ff}"}),
        json!({"op": "refresh"}),
        json!({"op": 7}),
    ];
    for seed in 0..40u64 {
        let mut rng = Lcg(seed);
        let mut config =
            json!({"members": [A, B, C], "key": "/k", "also": ["/j"], "idle_ms": 50, "request_timeout_ms": 30});
        if seed % 2 == 0 {
            config["user"] = json!("u");
            config["password"] = json!("p");
        }
        let mut s = session(config);
        s.limit = 300;
        let mut now = 0u64;
        let mut ids: Vec<u64> = Vec::new();
        let remember = |actions: &[Action], ids: &mut Vec<u64>| {
            for action in actions {
                if let Action::Request(request) = action {
                    assert!(request.deadline.is_some());
                    ids.push(request.id);
                }
            }
        };
        let actions = s.start(now);
        remember(&actions, &mut ids);
        for _ in 0..300 {
            now += rng.next() % 40;
            let id = if ids.is_empty() { rng.next() % 5 } else { ids[(rng.next() as usize) % ids.len()] };
            let actions = match rng.next() % 7 {
                0 => s.timer(now),
                1 => {
                    let body = &pieces[(rng.next() as usize) % pieces.len()];
                    s.response(id, now, statuses[(rng.next() as usize) % statuses.len()], &json!({}), body)
                }
                2 | 3 => {
                    let data = &pieces[(rng.next() as usize) % pieces.len()];
                    s.chunk(id, now, data)
                }
                4 => s.failed(id, now, codes[(rng.next() as usize) % codes.len()], "x"),
                5 => s.call(&ops[(rng.next() as usize) % ops.len()], now).map(|(_, a)| a).unwrap_or_default(),
                _ => s.timer(s.deadline().unwrap_or(now).max(now)),
            };
            remember(&actions, &mut ids);
            if let Some(watch) = s.follow.as_ref().and_then(|f| f.watch.as_ref()) {
                assert!(watch.pending.len() as u64 <= s.limit);
            }
            assert!(s.exchanges.len() <= 16, "exchanges grow: {}", s.exchanges.len());
            let _ = s.state();
        }
        let closing = s.close(now);
        assert!(closing.iter().all(|a| matches!(a, Action::Cancel { .. } | Action::Failed { .. })));
        assert_eq!(s.deadline(), None);
        assert!(s.timer(now + 1_000_000).is_empty());
    }
}

#[test]
fn the_token_header_and_the_first_authentication() {
    let mut s = session(json!({"members": [A], "key": "/k", "user": "root", "password": "pw"}));
    let auth = only_request(&s.start(0));
    assert!(auth.url.ends_with("/v3/auth/authenticate"));
    assert!(!auth.headers.iter().any(|(name, _)| *name == "authorization"));
    assert_eq!(
        auth.body.as_deref().map(|b| serde_json::from_str::<Value>(b).ok()),
        Some(Some(json!({"name": "root", "password": "pw"})))
    );
    let read = only_request(&s.response(auth.id, 1, 200, &json!({}), br#"{"header":{"revision":"1"},"token":"T.1"}"#));
    assert!(read.headers.contains(&("authorization", "T.1".to_string())));
}

#[test]
fn debug_shows_neither_the_password_nor_the_token() {
    use crate::session::source::SourceSession;
    let secret = "pw-SECRET-1";
    let token = "TOKEN-SECRET-2";
    let config = json!({"source": "etcd", "members": [A], "key": "/k", "user": "root", "password": secret});
    let mut s = SourceSession::from_config(&config).expect("a config");
    let leaks = |s: &SourceSession| {
        let text = format!("{s:?} {s:#?}");
        text.contains(secret) || text.contains(token)
    };
    assert!(!leaks(&s), "before start");
    // Authentication in flight: the pending exchange's body holds the password.
    let auth = only_request(&s.start(0));
    assert!(auth.body.as_deref().is_some_and(|b| b.contains(secret)));
    assert!(format!("{s:?}").contains("/v3/auth/authenticate"), "the exchange is in the Debug output");
    assert!(!leaks(&s), "authenticating");
    // Authenticated: the session keeps the token.
    let body = format!(r#"{{"header":{{"revision":"1"}},"token":"{token}"}}"#);
    let read = only_request(&s.response(auth.id, 1, 200, &json!({}), body.as_bytes()));
    assert!(read.headers.contains(&("authorization", token.to_string())));
    assert!(format!("{s:?}").contains("token: Some"), "the token is in the Debug output, masked");
    assert!(!leaks(&s), "authenticated");
}

// -- refresh: a read now, shared with the follow policy's one read in flight --------------

fn done(actions: &[Action]) -> Option<(u64, &Value)> {
    actions.iter().find_map(|action| match action {
        Action::Done { call, result } => Some((*call, result)),
        _ => None,
    })
}

fn offered_count(actions: &[Action]) -> usize {
    actions.iter().filter(|action| matches!(action, Action::Offered { .. })).count()
}

/// A read answer of `/k` and its companion `/c` (raw bytes).
fn read_with_companion(revision: u64, document: &str, companion: &[u8]) -> Vec<u8> {
    let kv = |key: &[u8], value: &[u8], at: u64| json!({"response_range": {"kvs": [{"key": b64(key), "mod_revision": at.to_string(), "value": b64(value)}]}});
    json!({"header": {"revision": revision.to_string()}, "succeeded": true,
           "responses": [kv(b"/k", document.as_bytes(), 4), kv(b"/c", companion, revision)]})
    .to_string()
    .into_bytes()
}

#[test]
fn config_reads_back_through_from_config_in_both_kinds() {
    use crate::session::source::SourceSession;
    for config in [
        json!({"source": "etcd", "members": [A]}),
        json!({"source": "etcd", "members": [A, B], "key": "/k", "also": ["/c"], "idle_ms": 0}),
        json!({"source": "http", "url": "http://h/t.json"}),
        json!({"source": "http", "url": "https://h/t.json", "wait_s": 0, "reconnect_first_ms": 7}),
    ] {
        let given = SourceSession::from_config(&config).expect("a config").config();
        let again = SourceSession::from_config(&given).unwrap_or_else(|err| panic!("{given}: {err:?}"));
        assert_eq!(again.config(), given, "{config}");
    }
    // Every optional field written as null reads back as left out.
    let given = SourceSession::from_config(&json!({"source": "etcd", "members": [A]})).unwrap().config();
    assert_eq!((&given["key"], &given["user"]), (&Value::Null, &Value::Null));
    let nulls = json!({"source": "etcd", "members": [A], "key": null, "also": null, "user": null, "password": null});
    assert_eq!(SourceSession::from_config(&nulls).unwrap().config(), given);
    // A password shows as "***", and "***" is never taken as a password: what config()
    // gives is refused until the caller puts the password back.
    let secret = json!({"source": "etcd", "members": [A], "user": "u", "password": "pw"});
    let given = SourceSession::from_config(&secret).unwrap().config();
    assert_eq!((&given["user"], &given["password"]), (&json!("u"), &json!("***")), "{given}");
    let err = SourceSession::from_config(&given).expect_err("the mask is no password");
    assert_eq!(err.code(), "invalid_argument");
    assert!(err.message().contains("config.password"), "{}", err.message());
    let mut completed = given.clone();
    completed["password"] = json!("pw");
    assert_eq!(SourceSession::from_config(&completed).unwrap().config(), given);
}

#[test]
fn every_op_refuses_a_field_it_does_not_have() {
    let mut s = session(json!({"members": [A], "key": "/k"}));
    for op in [
        json!({"op": "refresh", "extra": 1}),
        json!({"op": "get", "key": "/k", "extra": 1}),
        json!({"op": "get_many", "keys": ["/k"], "extra": 1}),
        json!({"op": "put", "key": "/k", "value": "v", "extra": 1}),
        json!({"op": "delete_prefix", "prefix": "/p/", "extra": 1}),
        json!({"op": "txn", "deletes": ["/k"], "extra": 1}),
        json!({"op": "txn", "compare": [{"key": "/k", "target": "mod", "mod_revision": "1", "op": "x"}]}),
        json!({"op": "publish", "key": "/k", "document": "{}", "replaces": true}),
    ] {
        let err = s.call(&op, 0).expect_err("refused");
        assert_eq!(err.code(), "invalid_argument", "{op}");
        assert!(err.message().contains("unknown field"), "{op}: {}", err.message());
    }
    assert_eq!(s.next_id, 0, "no number spent");
    // The allowed fields still go through.
    for op in [
        json!({"op": "refresh"}),
        json!({"op": "get", "key": "/k"}),
        json!({"op": "txn", "compare": [{"key": "/k", "target": "value", "value": "x"}], "puts": {}, "deletes": []}),
        json!({"op": "publish", "key": "/k", "document": "{}", "also": null, "replace": false}),
    ] {
        s.call(&op, 0).unwrap_or_else(|err| panic!("{op}: {err:?}"));
    }
}

#[test]
fn refresh_needs_a_key_to_follow() {
    let mut s = session(json!({"members": [A]}));
    let err = s.call(&json!({"op": "refresh"}), 0).expect_err("refused");
    assert_eq!(err.code(), "invalid_argument");
    assert_eq!(s.next_id, 0, "no number spent");
}

#[test]
fn a_refused_document_is_said_once_not_at_every_idle_read() {
    // The key holds a document the follower refuses; the watch stays quiet: each idle
    // read finds the same revision. The application heard of the refusal once.
    let (mut s, watch) = watching(json!({}));
    let actions = s.chunk(watch, 1, &events_line(&[(6, Some("{}"))]));
    assert_eq!(offered(&actions)[0]["result"]["refused"]["code"], json!("invalid_topology"));
    let mut idle_reads = 0;
    for _ in 0..3 {
        let at = s.deadline().expect("the watch's idle deadline");
        let actions = s.timer(at);
        let read = only_request(&actions);
        let actions = s.response(read.id, at, 200, &json!({}), &read_answer(9, Some(("{}", 6))));
        assert_eq!(offered_count(&actions), 0, "{actions:?}");
        let watch = only_request(&actions);
        assert!(watch.stream, "the watch opens again");
        assert!(s.response(watch.id, at, 200, &json!({}), b"").is_empty());
        idle_reads += 1;
    }
    assert_eq!(idle_reads, 3);
    assert_eq!(s.state()["stats"]["refused"], json!({"invalid_topology": 1}));
    // A new revision is offered (refused again: a new document, said).
    let at = s.deadline().expect("the watch's idle deadline");
    let read = only_request(&s.timer(at));
    let actions = s.response(read.id, at, 200, &json!({}), &read_answer(10, Some(("[]", 10))));
    assert_eq!(offered_count(&actions), 1, "{actions:?}");
}

#[test]
fn refresh_reads_now_offers_as_a_follow_read_and_ends_with_the_offer() {
    let (mut s, watch) = watching(json!({}));
    let (call, actions) = s.call(&json!({"op": "refresh"}), 10).expect("a call");
    let read = only_request(&actions);
    assert!(read.url.ends_with("/v3/kv/txn") && !read.stream);
    assert_eq!(read.body.as_deref(), Some(super::codec::range_txn(&["/k".to_string()]).as_str()));
    let actions = s.response(read.id, 11, 200, &json!({}), &read_answer(8, Some((&doc(2), 7))));
    let expected_offer = json!({"installed": {"epoch": "2"}});
    assert_eq!(actions[0].to_value(), json!({"offered": {"result": expected_offer, "changed": true, "revision": "7"}}));
    assert_eq!(done(&actions), Some((call, &json!({"offered": expected_offer, "revision": "8"}))));
    assert_eq!(actions.len(), 2, "the watch stays: {actions:?}");
    assert!(s.follow.as_ref().is_some_and(|f| f.watch.as_ref().is_some_and(|w| w.id == watch)));
    assert_eq!(s.state()["epoch"], json!("2"));
    assert_eq!(s.state()["stats"]["reads"], json!(2));
    // The key absent: no offer, `null`.
    let (call, actions) = s.call(&json!({"op": "refresh"}), 12).expect("a call");
    let read = only_request(&actions);
    let actions = s.response(read.id, 13, 200, &json!({}), &read_answer(9, None));
    assert_eq!(actions, vec![Action::Done { call, result: json!({"offered": null, "revision": "9"}) }]);
    // A refused document: the refusal with its message, as the Offered action writes it.
    let (call, actions) = s.call(&json!({"op": "refresh"}), 14).expect("a call");
    let read = only_request(&actions);
    let actions = s.response(read.id, 15, 200, &json!({}), &read_answer(10, Some(("{}", 10))));
    let (_, result) = done(&actions).expect("done");
    assert_eq!(result["offered"], actions[0].to_value()["offered"]["result"]);
    assert_eq!(result["offered"]["refused"]["code"], json!("invalid_topology"));
    assert!(result["offered"]["refused"]["message"].is_string());
    assert_eq!(s.deadline(), s.follow.as_ref().and_then(|f| f.watch.as_ref()).and_then(|w| w.idle_at));
    let _ = call;
}

#[test]
fn a_refresh_during_a_follow_read_gets_the_next_read_never_two_at_once() {
    let (mut s, watch) = watching(json!({"also": ["/c"]}));
    let events = b"{\"result\":{\"header\":{\"revision\":\"6\"},\"events\":[{\"kv\":{\"key\":\"L2s=\",\"mod_revision\":\"6\"}}]}}\n";
    let follow_read = only_request(&s.chunk(watch, 1, events));
    // Two refreshes while the policy's read is in flight: nothing sent yet (that read
    // started before them, and reads are offered in the order they were sent).
    let (first, actions) = s.call(&json!({"op": "refresh"}), 2).expect("a call");
    assert!(actions.is_empty(), "{actions:?}");
    let (second, actions) = s.call(&json!({"op": "refresh"}), 3).expect("a call");
    assert!(actions.is_empty(), "{actions:?}");
    let actions = s.response(follow_read.id, 4, 200, &json!({}), &read_with_companion(6, &doc(2), b"v"));
    assert!(done(&actions).is_none());
    let next = only_request(&actions);
    assert!(next.url.ends_with("/v3/kv/txn"));
    // Events during the refreshes' read: the policy reads once more after it.
    assert!(s.chunk(watch, 5, events).is_empty());
    let actions = s.response(next.id, 6, 200, &json!({}), &read_with_companion(7, &doc(3), b"w"));
    assert_eq!(offered_count(&actions), 1);
    let answered: Vec<u64> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Done { call, .. } => Some(*call),
            _ => None,
        })
        .collect();
    assert_eq!(answered, vec![first, second]);
    let again = only_request(&actions);
    // A refresh during that policy read waits too; the policy read's failure is a loss,
    // and the refresh's own read goes out at once (during the backoff).
    let (third, actions) = s.call(&json!({"op": "refresh"}), 7).expect("a call");
    assert!(actions.is_empty());
    let actions = s.failed(again.id, 8, "unreachable", "reset");
    let retry = only_request(&actions);
    assert!(retry.url.starts_with(B), "the next member: {retry:?}");
    let actions = s.failed(retry.id, 9, "unreachable", "reset");
    assert!(lost(&actions).is_some() && done(&actions).is_none());
    let refresh_read = only_request(&actions);
    let actions = s.response(refresh_read.id, 10, 200, &json!({}), &read_with_companion(7, &doc(3), b"w"));
    assert_eq!(done(&actions).map(|(call, _)| call), Some(third));
}

#[test]
fn a_failed_refresh_is_not_a_lost_source() {
    let (mut s, watch) = watching(json!({}));
    let (call, actions) = s.call(&json!({"op": "refresh"}), 1).expect("a call");
    let read = only_request(&actions);
    let unavailable = br#"{"error":"etcdserver: server stopped","message":"etcdserver: server stopped","code":14}"#;
    let next = only_request(&s.response(read.id, 2, 503, &json!({}), unavailable));
    assert!(next.url.starts_with(B), "the same member rotation: {next:?}");
    let actions = s.failed(next.id, 3, "unreachable", "connection refused");
    let [Action::Failed { call: c, error }] = &actions[..] else { panic!("{actions:?}") };
    assert_eq!((*c, error.code), (call, "unreachable"));
    assert_eq!(s.state()["stats"]["disconnects"], json!(0));
    assert_eq!(s.follower().and_then(crate::session::follower::Follower::next_deadline), None);
    assert!(s.follow.as_ref().is_some_and(|f| f.watch.as_ref().is_some_and(|w| w.id == watch) && f.retry_at.is_none()));
    assert_eq!(s.deadline(), Some(defaults::WATCH_IDLE_MS));
    // A malformed answer likewise.
    let (call, actions) = s.call(&json!({"op": "refresh"}), 4).expect("a call");
    let read = only_request(&actions);
    let actions = s.response(read.id, 5, 200, &json!({}), b"<html>");
    assert!(matches!(&actions[..], [Action::Failed { call: c, error }] if *c == call && error.code == "malformed"));
    assert_eq!(s.state()["stats"]["disconnects"], json!(0));
}

#[test]
fn a_refresh_read_the_policy_relies_on_is_a_loss_when_it_fails() {
    let (mut s, _) = watching(json!({"members": [A]}));
    let (call, actions) = s.call(&json!({"op": "refresh"}), defaults::WATCH_IDLE_MS - 1).expect("a call");
    let read = only_request(&actions);
    // The watch goes quiet while the refresh's read is in flight: the policy waits for
    // that read instead of sending another.
    let actions = s.timer(defaults::WATCH_IDLE_MS);
    assert!(requests(&actions).is_empty(), "{actions:?}");
    let actions = s.failed(read.id, defaults::WATCH_IDLE_MS + 1, "unreachable", "reset");
    assert!(actions.iter().any(|a| matches!(a, Action::Failed { call: c, .. } if *c == call)));
    assert!(lost(&actions).is_some(), "no watch and no read is a loss: {actions:?}");
}

#[test]
fn a_refresh_that_succeeds_during_the_backoff_reconnects() {
    let (mut s, watch) = watching(json!({"reconnect_first_ms": 1000}));
    let actions = s.failed(watch, 100, "closed", "end");
    assert!(lost(&actions).is_some());
    assert_eq!(s.deadline(), Some(1100));
    let (call, actions) = s.call(&json!({"op": "refresh"}), 200).expect("a call");
    let read = only_request(&actions);
    // Lost again while the refresh's read is in flight? Not possible without a watch;
    // the read goes on and, answered, reconnects and watches again.
    let actions = s.response(read.id, 210, 200, &json!({}), &read_answer(5, Some((&doc(1), 4))));
    assert_eq!(done(&actions).map(|(c, _)| c), Some(call));
    let watch = only_request(&actions);
    assert!(watch.stream);
    assert_eq!(s.follower().and_then(crate::session::follower::Follower::next_deadline), None);
    assert_eq!(s.deadline(), watch.deadline, "no backoff left");
    assert!(s.timer(1100).is_empty());
}

#[test]
fn a_loss_while_a_refresh_reads_lets_the_read_end_for_the_refresh() {
    let (mut s, watch) = watching(json!({}));
    let (call, actions) = s.call(&json!({"op": "refresh"}), 1).expect("a call");
    let read = only_request(&actions);
    let actions = s.chunk(watch, 2, b"<html>\n");
    assert!(lost(&actions).is_some());
    assert!(!actions.contains(&Action::Cancel { id: read.id }), "{actions:?}");
    let actions = s.response(read.id, 3, 200, &json!({}), &read_answer(5, Some((&doc(1), 4))));
    assert_eq!(done(&actions).map(|(c, _)| c), Some(call));
    assert!(only_request(&actions).stream, "reconnected: a new watch");
    assert_eq!(s.state()["stats"]["disconnects"], json!(1));
}

#[test]
fn a_refresh_before_start_reads_and_offers_but_does_not_follow() {
    let mut s = session(json!({"members": [A], "key": "/k"}));
    let (call, actions) = s.call(&json!({"op": "refresh"}), 0).expect("a call");
    let read = only_request(&actions);
    let actions = s.response(read.id, 1, 200, &json!({}), &read_answer(5, Some((&doc(1), 4))));
    assert_eq!(offered_count(&actions), 1);
    assert_eq!(done(&actions).map(|(c, _)| c), Some(call));
    assert!(requests(&actions).is_empty(), "no watch before start: {actions:?}");
    assert_eq!(s.deadline(), None);
    let read = only_request(&s.start(2));
    assert!(read.url.ends_with("/v3/kv/txn"));
    s.close(3);
    let (call, actions) = s.call(&json!({"op": "refresh"}), 4).expect("a call");
    assert!(matches!(&actions[..], [Action::Failed { call: c, error }] if *c == call && error.code == "closed"));
}

// -- a companion that is not UTF-8: malformed, never replaced ---------------------------

#[test]
fn a_companion_that_is_not_utf8_is_a_malformed_read_not_replaced() {
    let mut s = session(json!({"members": [A], "key": "/k", "also": ["/c"], "reconnect_first_ms": 100}));
    let read = only_request(&s.start(0));
    let actions = s.response(read.id, 1, 200, &json!({}), &read_with_companion(5, &doc(1), b"v\xff1"));
    assert_eq!(offered_count(&actions), 0, "{actions:?}");
    let error = lost(&actions).expect("lost");
    assert_eq!(error.code, "malformed");
    assert!(error.message.contains("/c") && error.message.contains("not UTF-8"), "{}", error.message);
    assert_eq!(s.deadline(), Some(101));
    assert_eq!(s.state()["epoch"], Value::Null);
    assert_eq!(s.state()["companions"], json!({"/c": null}));
    assert!(!s.state().to_string().contains('\u{fffd}'));
    // The backoff's read finds it fixed.
    let read = only_request(&s.timer(101));
    let actions = s.response(read.id, 102, 200, &json!({}), &read_with_companion(6, &doc(1), b"v1"));
    assert_eq!(offered_count(&actions), 1);
    assert_eq!(s.state()["companions"], json!({"/c": "v1"}));
    // A refresh that reads it: failed malformed, not a loss; the companion kept.
    let watch = only_request(&actions);
    assert!(s.response(watch.id, 103, 200, &json!({}), b"").is_empty());
    let (call, actions) = s.call(&json!({"op": "refresh"}), 104).expect("a call");
    let read = only_request(&actions);
    let actions = s.response(read.id, 105, 200, &json!({}), &read_with_companion(7, &doc(1), b"\xc3"));
    assert!(matches!(&actions[..], [Action::Failed { call: c, error }] if *c == call && error.code == "malformed"));
    assert_eq!(s.state()["companions"], json!({"/c": "v1"}));
    assert_eq!(s.state()["stats"]["disconnects"], json!(1));
}

/// A watch line of events on `/k`: `(revision, Some(value))` a PUT, `(revision, None)` a DELETE.
fn events_line(events: &[(u64, Option<&str>)]) -> Vec<u8> {
    let events: Vec<Value> = events
        .iter()
        .map(|(at, value)| match value {
            Some(text) => {
                json!({"kv": {"key": b64(b"/k"), "mod_revision": at.to_string(), "value": b64(text.as_bytes())}})
            }
            None => json!({"type": "DELETE", "kv": {"key": b64(b"/k"), "mod_revision": at.to_string()}}),
        })
        .collect();
    let last = events.len() as u64 + 100;
    format!("{}\n", json!({"result": {"header": {"revision": last.to_string()}, "events": events}})).into_bytes()
}

fn offered(actions: &[Action]) -> Vec<Value> {
    actions
        .iter()
        .filter(|action| matches!(action, Action::Offered { .. }))
        .map(|action| action.to_value()["offered"].clone())
        .collect()
}

#[test]
fn without_companions_an_event_is_offered_directly_no_read() {
    let (mut s, watch) = watching(json!({}));
    let actions = s.chunk(watch, 1, &events_line(&[(6, Some(&doc(2))), (7, Some(&doc(3)))]));
    assert!(requests(&actions).is_empty(), "no read: {actions:?}");
    // One line, one offer: the newest event (a shell reads the session's router after the
    // line, and it must be the one this offer installed; two offers would both read epoch 3).
    let seen = offered(&actions);
    assert_eq!(seen.len(), 1, "{actions:?}");
    assert_eq!(seen[0]["result"], json!({"installed": {"epoch": "3"}}));
    assert_eq!(seen[0]["revision"], json!("7"));
    assert_eq!(seen[0]["changed"], json!(true));
    assert_eq!(s.state()["epoch"], json!("3"));
    assert_eq!(s.state()["stats"]["reads"], json!(1));
    // At or below a revision offered already (the read's 5, the events' 7): skipped.
    assert!(s.chunk(watch, 2, &events_line(&[(5, Some(&doc(9))), (7, Some(&doc(9)))])).is_empty());
    // An event for another key in the range is not the document.
    let other = json!({"result": {"events": [{"kv": {"key": b64(b"/k\0"), "mod_revision": "8", "value": b64(b"x")}}]}});
    assert!(s.chunk(watch, 3, format!("{other}\n").as_bytes()).is_empty());
    // The same document again is offered, unchanged.
    let again = offered(&s.chunk(watch, 4, &events_line(&[(9, Some(&doc(3)))])));
    assert_eq!(again[0]["result"], json!({"unchanged": {}}));
    assert_eq!(again[0]["changed"], json!(false));
    // An event that is not etcd's loses the source.
    let actions = s.chunk(watch, 5, b"{\"result\":{\"events\":[{\"kv\":{}}]}}\n");
    assert_eq!(lost(&actions).map(|e| e.code), Some("malformed"));
}

#[test]
fn without_companions_a_delete_event_is_an_absent_key_and_a_read_behind_it_is_not_offered() {
    let (mut s, watch) = watching(json!({}));
    let (call, actions) = s.call(&json!({"op": "refresh"}), 1).expect("a call");
    let read = only_request(&actions);
    let actions = s.chunk(watch, 2, &events_line(&[(6, None)]));
    assert!(actions.is_empty(), "a DELETE offers nothing, as a read of an absent key: {actions:?}");
    // The refresh's read answers from before the DELETE: not offered; the refresh says
    // what a read of the key now would (absent).
    let actions = s.response(read.id, 3, 200, &json!({}), &read_answer(5, Some((&doc(1), 4))));
    assert_eq!(offered_count(&actions), 0, "{actions:?}");
    assert_eq!(done(&actions), Some((call, &json!({"offered": null, "revision": "5"}))));
    assert_eq!(s.state()["epoch"], json!("1"));
}

#[test]
fn without_companions_an_event_during_a_read_wins_over_the_reads_older_answer() {
    let (mut s, watch) = watching(json!({}));
    let (call, actions) = s.call(&json!({"op": "refresh"}), 1).expect("a call");
    let read = only_request(&actions);
    let actions = s.chunk(watch, 2, &events_line(&[(7, Some(&doc(3)))]));
    assert_eq!(offered(&actions)[0]["result"], json!({"installed": {"epoch": "3"}}));
    assert!(requests(&actions).is_empty());
    // The read (at 6, epoch 2) is older than the event offered: not offered again (it
    // would be a stale_epoch refusal), and the refresh is answered as unchanged.
    let actions = s.response(read.id, 3, 200, &json!({}), &read_answer(6, Some((&doc(2), 6))));
    assert_eq!(offered_count(&actions), 0, "{actions:?}");
    assert_eq!(done(&actions), Some((call, &json!({"offered": {"unchanged": {}}, "revision": "6"}))));
    assert_eq!(s.state()["epoch"], json!("3"));
    assert_eq!(s.state()["stats"]["refused"], json!({}));
    // A read during which an event at its own revision was offered is not offered
    // either (the same value); one above it is.
    let (_, actions) = s.call(&json!({"op": "refresh"}), 4).expect("a call");
    let read = only_request(&actions);
    assert!(offered(&s.chunk(watch, 5, &events_line(&[(8, Some(&doc(4)))]))).len() == 1);
    assert_eq!(offered_count(&s.response(read.id, 5, 200, &json!({}), &read_answer(8, Some((&doc(4), 8))))), 0);
    let (_, actions) = s.call(&json!({"op": "refresh"}), 6).expect("a call");
    let read = only_request(&actions);
    assert!(offered(&s.chunk(watch, 7, &events_line(&[(9, Some(&doc(5)))]))).len() == 1);
    assert_eq!(offered_count(&s.response(read.id, 7, 200, &json!({}), &read_answer(10, Some((&doc(5), 9))))), 1);
}

#[test]
fn without_companions_a_refused_event_is_what_a_read_behind_it_answers() {
    let (mut s, watch) = watching(json!({}));
    let (call, actions) = s.call(&json!({"op": "refresh"}), 1).expect("a call");
    let read = only_request(&actions);
    let actions = s.chunk(watch, 2, &events_line(&[(7, Some("{}"))]));
    let refusal = offered(&actions)[0]["result"].clone();
    assert_eq!(refusal["refused"]["code"], json!("invalid_topology"));
    let actions = s.response(read.id, 3, 200, &json!({}), &read_answer(6, Some((&doc(2), 6))));
    assert_eq!(done(&actions), Some((call, &json!({"offered": refusal, "revision": "6"}))));
}

#[test]
fn with_companions_an_event_is_still_a_read() {
    let (mut s, watch) = watching(json!({"also": ["/c"]}));
    let actions = s.chunk(watch, 1, &events_line(&[(6, Some(&doc(2)))]));
    assert_eq!(offered_count(&actions), 0);
    assert!(only_request(&actions).url.ends_with("/v3/kv/txn"));
}

#[test]
fn without_companions_a_refresh_after_an_event_reads_the_store_and_offers_it_again() {
    let (mut s, watch) = watching(json!({}));
    let refused = s.chunk(watch, 1, &events_line(&[(6, Some(&doc(1)))]));
    assert_eq!(offered(&refused)[0]["result"], json!({"unchanged": {}}));
    let stale = s.chunk(watch, 2, &events_line(&[(7, Some("{}"))]));
    assert_eq!(offered(&stale)[0]["result"]["refused"]["code"], json!("invalid_topology"));
    // Sent after the event: the store as it is, offered (and refused) again, counted.
    let (call, actions) = s.call(&json!({"op": "refresh"}), 3).expect("a call");
    let read = only_request(&actions);
    let actions = s.response(read.id, 4, 200, &json!({}), &read_answer(7, Some(("{}", 7))));
    assert_eq!(offered_count(&actions), 1, "{actions:?}");
    assert_eq!(
        done(&actions).map(|(c, r)| (c, r["offered"]["refused"]["code"].clone())),
        Some((call, json!("invalid_topology")))
    );
    assert_eq!(s.state()["stats"]["refused"], json!({"invalid_topology": 2}));
}
