//! The HTTP source session's scenarios of `session_source.json` (written with the HTTP
//! session, `core/src/session/http.rs`): each `(name, case)` is added to the file after
//! the etcd scenarios. The answers are what an HTTP/1.1 server with ETags sends (as
//! `shardroute serve` and examples/harness.py's TopologyHttpServer answer: `200` with an
//! `ETag` and a `Content-Type`, `304` on `If-None-Match`, a held request under
//! `Prefer: wait=N`). Every step's actions are the core's; the generator refuses to write
//! the file unless each step's actions are also what the scenario states by hand below.
//! Each drift of issue 35 between the three old HTTP shells is a case: the interval minus
//! the time a request took (the CLI slept a whole interval), one request timeout (10 s in
//! Python and JS, 2 s in the CLI), `304`, the long poll, content types, an error status,
//! and a body that is not UTF-8 refused `invalid_topology`, never decoded with replacements.

use serde_json::{json, Value};
use shardroute::topology::Topology;
use shardroute::Router;

use super::session_source::{b64, failed, start, state, timer};

const URL: &str = "http://topology.example:8080/topology.json";

/// A topology document of `epoch` in its canonical form.
fn doc(epoch: u64) -> String {
    let text = json!({"format": "shardroute/1", "epoch": epoch, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}});
    Router::from_value(&text).expect("a document").to_json()
}

/// A vbucket topology of `epoch`, as JSON text (what `dictionary(epoch)` encodes).
fn vbuckets(epoch: u64) -> String {
    json!({"format": "shardroute/1", "epoch": epoch, "nodes": [{"id": "a"}, {"id": "b"}],
           "strategy": {"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["a"], ["b"]]}})
    .to_string()
}

/// A binary dictionary (`encode_dictionary`) of `epoch`.
fn dictionary(epoch: u64) -> Vec<u8> {
    let topology = Topology::from_json(&vbuckets(epoch)).expect("a topology");
    shardroute::dictionary::encode(&topology).expect("a dictionary")
}

// -- steps --------------------------------------------------------------------------------

fn refresh(now: u64) -> Value {
    json!({"call": "call", "op": {"op": "refresh"}, "now": now})
}

/// A `200` with `body` (text), its `ETag` and `Content-Type` as a server sends them.
fn body(id: u64, now: u64, tag: &str, kind: &str, text: &str) -> Value {
    json!({"call": "response", "id": id, "now": now, "status": 200,
           "headers": {"ETag": tag, "Content-Type": kind, "Content-Length": text.len().to_string()}, "body": text})
}

/// A `200` of JSON text.
fn json_body(id: u64, now: u64, tag: &str, text: &str) -> Value {
    body(id, now, tag, "application/json", text)
}

/// A `200` with `bytes` (`body_b64`) served as `kind` (`None`: no `Content-Type`).
fn bytes_body(id: u64, now: u64, tag: &str, kind: Option<&str>, bytes: &[u8]) -> Value {
    let mut headers = json!({"etag": tag, "content-length": bytes.len().to_string()});
    if let Some(kind) = kind {
        headers["content-type"] = json!(kind);
    }
    json!({"call": "response", "id": id, "now": now, "status": 200, "headers": headers, "body_b64": b64(bytes)})
}

fn not_modified(id: u64, now: u64, tag: &str) -> Value {
    json!({"call": "response", "id": id, "now": now, "status": 304, "headers": {"ETag": tag}, "body": ""})
}

fn status(id: u64, now: u64, status: u16, text: &str) -> Value {
    json!({"call": "response", "id": id, "now": now, "status": status, "headers": {"Content-Type": "text/plain"}, "body": text})
}

fn close(now: u64) -> Value {
    json!({"call": "close", "now": now})
}

// -- the hand-stated answers ------------------------------------------------------------

/// One action in words: `get ID [tag TAG] [wait N] by DEADLINE`, `cancel ID`,
/// `offered installed|unchanged|refused X @REV [changed]`, `lost CODE [STATUS] AT`,
/// `done CALL offered installed|unchanged|refused X @REV` or `done CALL 304 @REV|-` (a
/// refresh's `{"offered", "revision"}`), `failed CALL CODE [STATUS]`.
fn action_words(action: &Value) -> String {
    if let Some(request) = action.get("request") {
        assert_eq!((request["method"].as_str(), request["url"].as_str()), (Some("GET"), Some(URL)), "{action}");
        assert_eq!(request["headers"]["accept"], "application/json, application/octet-stream", "{action}");
        assert_eq!((&request["body"], &request["stream"]), (&Value::Null, &json!(false)), "{action}");
        let mut words = format!("get {}", request["id"]);
        if let Some(tag) = request["headers"]["if-none-match"].as_str() {
            words += &format!(" tag {tag}");
        }
        if let Some(prefer) = request["headers"]["prefer"].as_str() {
            words += &format!(" {}", prefer.replace('=', " "));
        }
        return format!("{words} by {}", request["deadline"]);
    }
    if let Some(cancel) = action.get("cancel") {
        return format!("cancel {}", cancel["id"]);
    }
    if let Some(offered) = action.get("offered") {
        return offered_words(offered);
    }
    let status = |error: &Value| error["status"].as_u64().map(|status| format!(" {status}")).unwrap_or_default();
    if let Some(lost) = action.get("lost") {
        let error = &lost["error"];
        return format!("lost {}{} {}", error["code"].as_str().unwrap_or("?"), status(error), lost["retry_at"]);
    }
    if let Some(done) = action.get("done") {
        // A refresh's result, as etcd's: `{"offered": <result> | null, "revision": "N" | null}`.
        let result = &done["result"];
        let revision = result["revision"].as_str().unwrap_or("-");
        let offered = &result["offered"];
        let what = if offered.is_null() {
            format!("304 @{revision}")
        } else {
            offered_words(&json!({"result": offered, "revision": revision}))
        };
        return format!("done {} {what}", done["call"]);
    }
    if let Some(failed) = action.get("failed") {
        let error = &failed["error"];
        return format!("failed {} {}{}", failed["call"], error["code"].as_str().unwrap_or("?"), status(error));
    }
    format!("? {action}")
}

fn offered_words(offered: &Value) -> String {
    let result = &offered["result"];
    let what = if let Some(installed) = result.get("installed") {
        format!("installed {}", installed["epoch"].as_str().unwrap_or("?"))
    } else if let Some(refused) = result.get("refused") {
        format!("refused {}", refused["code"].as_str().unwrap_or("?"))
    } else {
        "unchanged".to_string()
    };
    let changed = if offered["changed"] == json!(true) { " changed" } else { "" };
    format!("offered {what} @{}{changed}", offered["revision"].as_str().unwrap_or("?"))
}

/// A step's result in words: `[call N: ]ACTIONS | deadline D` (`-` for none; actions
/// joined by `; `), `error CODE`, or for `state`: `state EPOCH REVISION TAG requests=N
/// not_modified=N disconnects=N`.
fn words(result: &Value) -> String {
    if let Some(stats) = result.get("stats") {
        let text = |value: &Value| value.as_str().unwrap_or("-").to_string();
        return format!(
            "state {} {} {} requests={} not_modified={} disconnects={}",
            text(&result["epoch"]),
            text(&result["revision"]),
            text(&result["etag"]),
            stats["requests"],
            stats["not_modified"],
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

/// A scenario: its name, its config's fields beside `source` and `url`, and its steps with
/// the answer each must get.
type Scenario = (&'static str, Value, Vec<(Value, &'static str)>);

fn scenarios() -> Vec<Scenario> {
    let (d1, d2, d3) = (doc(1), doc(2), doc(3));
    let mut not_utf8 = doc(2).into_bytes();
    let at = not_utf8.iter().position(|&b| b == b'a').expect("a node id");
    not_utf8[at] = 0xff; // "\xff": a node id that is not UTF-8
    vec![
        (
            "http/the-first-get-asks-plainly-then-a-change-asks-again-at-once-with-a-long-poll",
            json!({}),
            vec![
                (start(0), "get 1 by 5000 | deadline 5000"),
                (
                    json_body(1, 10, "\"e1\"", &d1),
                    "offered installed 1 @1 changed; get 2 tag \"e1\" wait 30 by 35010 | deadline 35010",
                ),
                (state(), "state 1 1 \"e1\" requests=1 not_modified=0 disconnects=0"),
            ],
        ),
        (
            // The CLI slept a whole interval after each answer: the next poll is one
            // interval after the last was sent, the time the answer took included.
            "http/a-304-asks-again-one-interval-after-the-last-request-was-sent",
            json!({"wait_s": 0}),
            vec![
                (start(0), "get 1 by 5000 | deadline 5000"),
                (
                    json_body(1, 10, "\"e1\"", &d1),
                    "offered installed 1 @1 changed; get 2 tag \"e1\" by 5010 | deadline 5010",
                ),
                (not_modified(2, 400, "\"e1\""), " | deadline 1010"),
                (timer(1_009), " | deadline 1010"),
                (timer(1_010), "get 3 tag \"e1\" by 6010 | deadline 6010"),
                (not_modified(3, 2_500, "\"e1\""), "get 4 tag \"e1\" by 7500 | deadline 7500"),
                (state(), "state 1 1 \"e1\" requests=3 not_modified=2 disconnects=0"),
            ],
        ),
        (
            // One request timeout in every language (10 s in Python and JS, 2 s in the
            // CLI before): the core's, a long poll's plus its wait.
            "http/a-request-past-the-request-timeout-is-cancelled-and-the-source-lost",
            json!({}),
            vec![
                (start(0), "get 1 by 5000 | deadline 5000"),
                (timer(4_999), " | deadline 5000"),
                (timer(5_000), "cancel 1; lost unreachable 5100 | deadline 5100"),
                (json_body(1, 5_001, "\"e1\"", &d1), " | deadline 5100"),
                (timer(5_100), "get 2 by 10100 | deadline 10100"),
                (
                    json_body(2, 5_110, "\"e1\"", &d1),
                    "offered installed 1 @1 changed; get 3 tag \"e1\" wait 30 by 40110 | deadline 40110",
                ),
                (timer(40_110), "cancel 3; lost unreachable 40210 | deadline 40210"),
                (state(), "state 1 1 \"e1\" requests=1 not_modified=0 disconnects=2"),
            ],
        ),
        (
            "http/a-long-poll-the-server-held-asks-again-at-once-one-answered-at-once-waits",
            json!({"interval_ms": 30_000, "wait_s": 10, "request_timeout_ms": 2_000}),
            vec![
                (start(0), "get 1 by 2000 | deadline 2000"),
                (
                    json_body(1, 5, "\"e1\"", &d1),
                    "offered installed 1 @1 changed; get 2 tag \"e1\" wait 10 by 12005 | deadline 12005",
                ),
                // Held for the wait: asked again at once.
                (not_modified(2, 10_005, "\"e1\""), "get 3 tag \"e1\" wait 10 by 22005 | deadline 22005"),
                // Held until the document changed: asked again at once.
                (
                    json_body(3, 13_000, "\"e2\"", &d2),
                    "offered installed 2 @2 changed; get 4 tag \"e2\" wait 10 by 25000 | deadline 25000",
                ),
                // Answered at once (a server without long polls): the interval.
                (not_modified(4, 13_010, "\"e2\""), " | deadline 43000"),
                (timer(43_000), "get 5 tag \"e2\" wait 10 by 55000 | deadline 55000"),
            ],
        ),
        (
            // A server that ignores If-None-Match sends the same body at once: no busy loop.
            "http/the-same-body-again-waits-the-interval",
            json!({}),
            vec![
                (start(0), "get 1 by 5000 | deadline 5000"),
                (
                    json_body(1, 10, "\"e1\"", &d1),
                    "offered installed 1 @1 changed; get 2 tag \"e1\" wait 30 by 35010 | deadline 35010",
                ),
                (json_body(2, 20, "\"e1\"", &d1), "offered unchanged @2 | deadline 1010"),
            ],
        ),
        (
            "http/application-octet-stream-is-a-dictionary-any-other-type-plain-bytes",
            json!({"wait_s": 0}),
            vec![
                (start(0), "get 1 by 5000 | deadline 5000"),
                (
                    bytes_body(1, 10, "\"d2\"", Some("application/octet-stream"), &dictionary(2)),
                    "offered installed 2 @1 changed; get 2 tag \"d2\" by 5010 | deadline 5010",
                ),
                // JSON served as a dictionary is not one.
                (
                    body(2, 20, "\"e3\"", "Application/Octet-Stream; charset=binary", &d3),
                    "offered refused invalid_topology @2 | deadline 1010",
                ),
                (timer(1_010), "get 3 tag \"e3\" by 6010 | deadline 6010"),
                // No type: a dictionary by its magic, JSON otherwise.
                (
                    bytes_body(3, 1_020, "\"d3\"", None, &dictionary(3)),
                    "offered installed 3 @3 changed; get 4 tag \"d3\" by 6020 | deadline 6020",
                ),
                (
                    bytes_body(4, 1_030, "\"d3j\"", Some("text/plain"), vbuckets(3).as_bytes()),
                    "offered unchanged @4 | deadline 2020",
                ),
                (state(), "state 3 4 \"d3j\" requests=4 not_modified=0 disconnects=0"),
            ],
        ),
        (
            "http/an-error-status-is-the-source-lost-with-its-status-and-the-backoff",
            json!({}),
            vec![
                (start(0), "get 1 by 5000 | deadline 5000"),
                (
                    json_body(1, 10, "\"e1\"", &d1),
                    "offered installed 1 @1 changed; get 2 tag \"e1\" wait 30 by 35010 | deadline 35010",
                ),
                (status(2, 20, 503, "Service Unavailable"), "lost http 503 120 | deadline 120"),
                (timer(120), "get 3 tag \"e1\" wait 30 by 35120 | deadline 35120"),
                (status(3, 130, 500, "Internal Server Error"), "lost http 500 330 | deadline 330"),
                (timer(330), "get 4 tag \"e1\" wait 30 by 35330 | deadline 35330"),
                // A redirect is not followed.
                (status(4, 340, 302, ""), "lost http 302 740 | deadline 740"),
                (timer(740), "get 5 tag \"e1\" wait 30 by 35740 | deadline 35740"),
                (not_modified(5, 750, "\"e1\""), " | deadline 1740"),
                (timer(1_740), "get 6 tag \"e1\" wait 30 by 36740 | deadline 36740"),
                // An answer reset the backoff: the next loss waits the first step again.
                (status(6, 1_750, 503, ""), "lost http 503 1850 | deadline 1850"),
                (state(), "state 1 1 \"e1\" requests=6 not_modified=1 disconnects=4"),
            ],
        ),
        (
            // Refused by the core, counted, the router kept; never decoded with U+FFFD
            // (which would have installed a node id the server never sent).
            "http/a-body-that-is-not-utf8-is-refused-invalid-topology-not-replaced",
            json!({"wait_s": 0}),
            vec![
                (start(0), "get 1 by 5000 | deadline 5000"),
                (
                    json_body(1, 10, "\"e1\"", &d1),
                    "offered installed 1 @1 changed; get 2 tag \"e1\" by 5010 | deadline 5010",
                ),
                (
                    bytes_body(2, 20, "\"bad\"", Some("application/json"), &not_utf8),
                    "offered refused invalid_topology @2 | deadline 1010",
                ),
                (state(), "state 1 1 \"bad\" requests=2 not_modified=0 disconnects=0"),
                (timer(1_010), "get 3 tag \"bad\" by 6010 | deadline 6010"),
                (
                    json_body(3, 1_020, "\"e2\"", &d2),
                    "offered installed 2 @3 changed; get 4 tag \"e2\" by 6020 | deadline 6020",
                ),
            ],
        ),
        (
            "http/a-request-the-shell-could-not-complete-is-the-source-lost",
            json!({"reconnect_first_ms": 50, "reconnect_max_ms": 120}),
            vec![
                (start(0), "get 1 by 5000 | deadline 5000"),
                (failed(1, 3, "unreachable", "connection refused"), "lost unreachable 53 | deadline 53"),
                (timer(53), "get 2 by 5053 | deadline 5053"),
                (
                    failed(2, 60, "limit_exceeded", "more than 67108864 bytes; the limit is 67108864"),
                    "lost limit_exceeded 160 | deadline 160",
                ),
                (timer(160), "get 3 by 5160 | deadline 5160"),
                (failed(3, 170, "unreachable", "connection reset"), "lost unreachable 290 | deadline 290"),
                (state(), "state - - - requests=0 not_modified=0 disconnects=3"),
            ],
        ),
        (
            "http/a-refresh-asks-now-beside-the-poll-and-ends-with-what-became-of-the-body",
            json!({}),
            vec![
                (refresh(0), "call 1: get 2 by 5000 | deadline 5000"),
                (
                    json_body(2, 10, "\"e1\"", &d1),
                    "offered installed 1 @1 changed; done 1 offered installed 1 @1 | deadline -",
                ),
                (start(10), "get 3 tag \"e1\" wait 30 by 35010 | deadline 35010"),
                (refresh(20), "call 4: get 5 tag \"e1\" by 5020 | deadline 5020"),
                (not_modified(5, 30, "\"e1\""), "done 4 304 @1 | deadline 35010"),
                (refresh(40), "call 6: get 7 tag \"e1\" by 5040 | deadline 5040"),
                (status(7, 50, 503, ""), "failed 6 http 503 | deadline 35010"),
                (refresh(60), "call 8: get 9 tag \"e1\" by 5060 | deadline 5060"),
                (timer(5_060), "cancel 9; failed 8 unreachable | deadline 35010"),
                (state(), "state 1 1 \"e1\" requests=3 not_modified=1 disconnects=0"),
            ],
        ),
        (
            "http/close-cancels-everything-and-asks-no-more",
            json!({}),
            vec![
                (start(0), "get 1 by 5000 | deadline 5000"),
                (
                    json_body(1, 10, "\"e1\"", &d1),
                    "offered installed 1 @1 changed; get 2 tag \"e1\" wait 30 by 35010 | deadline 35010",
                ),
                (refresh(20), "call 3: get 4 tag \"e1\" by 5020 | deadline 5020"),
                (close(30), "cancel 2; cancel 4; failed 3 closed | deadline -"),
                (not_modified(2, 40, "\"e1\""), " | deadline -"),
                (timer(100_000), " | deadline -"),
                (start(100_001), " | deadline -"),
                (refresh(100_002), "call 5: failed 5 closed | deadline -"),
                (state(), "state 1 1 \"e1\" requests=1 not_modified=0 disconnects=0"),
            ],
        ),
    ]
}

/// The HTTP scenarios: `(name, case)` with the case's `expect` filled in.
pub(crate) fn http_cases() -> Vec<(String, Value)> {
    let mut cases = Vec::new();
    for (name, extra, steps) in scenarios() {
        let mut config = json!({"source": "http", "url": URL});
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
        ("no-url", json!({"source": "http"})),
        ("not-http", json!({"source": "http", "url": "ftp://topology.example/topology.json"})),
        ("no-host", json!({"source": "http", "url": "http:///topology.json"})),
        ("unknown-field", json!({"source": "http", "url": URL, "interval": 5})),
        ("zero-request-timeout", json!({"source": "http", "url": URL, "request_timeout_ms": 0})),
        ("fractional-wait", json!({"source": "http", "url": URL, "wait_s": 1.5})),
        ("negative-interval", json!({"source": "http", "url": URL, "interval_ms": -1})),
        ("zero-first-backoff", json!({"source": "http", "url": URL, "reconnect_first_ms": 0})),
    ] {
        let mut case = json!({"op": "session_source", "config": config, "steps": []});
        let expect = crate::session::session_source(&case).expect("runs");
        assert_eq!(expect, json!({"error": {"code": "invalid_argument"}}), "config {what}");
        case["expect"] = expect;
        cases.push((format!("http/bad-config/{what}"), case));
    }
    cases
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_http_scenario_answers_as_stated_by_hand() {
        assert_eq!(super::http_cases().len(), 11 + 8);
    }
}
