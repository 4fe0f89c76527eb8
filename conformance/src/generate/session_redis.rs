//! `session_redis.json`: scenarios of the Redis Cluster command session. Each case is a
//! script of calls (a command begun, the outcomes of its attempts, refreshes) at fixed
//! times, and the session's answer to each call. The answers are the core's, but every
//! scenario below also states what it must answer, by hand, in a short form (`send
//! 127.0.0.1:7001 asking`, `wait 40`, `refresh`, `fail too_many_redirects`, ...), and the
//! generator refuses to write a file whose answers differ: the cases pin intended
//! behaviour (the Redis Cluster specification's client rules, and the drifts between
//! the old Python and Node clients), not whatever the core happened to do.

use serde_json::{json, Value};

use super::keys::utf8;
use super::vector_file::VectorFile;

/// One node of a `CLUSTER SHARDS` reply: its address and a letter for its 40-char id.
struct Node(&'static str, char);

/// One shard: its slot pairs, its master, its replicas.
type Shard<'a> = (&'a [(u32, u32)], Node, &'a [Node]);

/// A `CLUSTER SHARDS` reply (RESP3 maps, as redis-py and ioredis give them) of `layout`.
fn shards(layout: &[Shard<'_>]) -> Value {
    let node = |node: &Node, role: &str| {
        let (host, port) = node.0.rsplit_once(':').expect("host:port");
        let host = host.trim_start_matches('[').trim_end_matches(']');
        json!({"id": node.1.to_string().repeat(40), "port": port.parse::<u16>().expect("port"), "ip": host,
               "endpoint": host, "role": role, "replication-offset": 0, "health": "online"})
    };
    Value::Array(
        layout
            .iter()
            .map(|(pairs, master, replicas)| {
                let slots: Vec<u32> = pairs.iter().flat_map(|&(start, end)| [start, end]).collect();
                let mut nodes = vec![node(master, "master")];
                nodes.extend(replicas.iter().map(|replica| node(replica, "replica")));
                json!({"slots": slots, "nodes": nodes})
            })
            .collect(),
    )
}

const A: &str = "127.0.0.1:7000";
const B: &str = "127.0.0.1:7001";
const C: &str = "127.0.0.1:7002";
const A2: &str = "127.0.0.1:7003";
const B2: &str = "127.0.0.1:7004";
const C2: &str = "127.0.0.1:7005";
const D: &str = "127.0.0.1:7006";

/// Three masters with a replica each, the `redis-cli --cluster create` split.
fn three() -> Value {
    shards(&[
        (&[(0, 5460)], Node(A, 'a'), &[Node(A2, 'd')]),
        (&[(5461, 10922)], Node(B, 'b'), &[Node(B2, 'e')]),
        (&[(10923, 16383)], Node(C, 'c'), &[Node(C2, 'f')]),
    ])
}

/// `three()` after A failed over to its replica A2 (A gone from the reply).
fn three_after_failover() -> Value {
    shards(&[
        (&[(0, 5460)], Node(A2, 'd'), &[]),
        (&[(5461, 10922)], Node(B, 'b'), &[Node(B2, 'e')]),
        (&[(10923, 16383)], Node(C, 'c'), &[Node(C2, 'f')]),
    ])
}

// Keys and their slots (CLUSTER KEYSLOT of redis-server 7.0, as in redis-cluster-keyslot.txt).
/// "user:1" is in slot 10778: master B.
const USER1: &str = "user:1";
/// "{user:1}x" and "{user:1}y" share user:1's slot (a hash tag): master B.
const USER1_X: &str = "{user:1}x";
const USER1_Y: &str = "{user:1}y";
/// "user:2" is in slot 6777: master B too, another slot.
const USER2: &str = "user:2";
/// "{b}x" and "{b}y" share b's slot, 3300: master A.
const KEY_B_X: &str = "{b}x";
const KEY_B_Y: &str = "{b}y";
/// "somekey" is in slot 11058 (the specification's example): master C.
const SOMEKEY: &str = "somekey";
/// "a" is in slot 15495: master C; "b" in 3300: master A.
const KEY_A: &str = "a";
const KEY_B: &str = "b";

fn begin(key: &str, access: &str, now: u64) -> Value {
    json!({"call": "command", "keys": [utf8(key)], "access": access, "now_ms": now})
}

fn begin_many(keys: &[&str], access: &str, now: u64) -> Value {
    json!({"call": "command", "keys": keys.iter().map(|k| utf8(k)).collect::<Vec<_>>(), "access": access, "now_ms": now})
}

fn poll(now: u64) -> Value {
    json!({"call": "poll", "now_ms": now})
}

fn ok(now: u64) -> Value {
    json!({"call": "succeeded", "now_ms": now})
}

fn failed(text: &str, names: &[&str], now: u64) -> Value {
    json!({"call": "failed", "text": text, "names": names, "now_ms": now})
}

fn unreachable(why: &str, now: u64) -> Value {
    json!({"call": "unreachable", "why": why, "now_ms": now})
}

fn stalled(now: u64) -> Value {
    json!({"call": "stalled", "now_ms": now})
}

fn refreshed(reply: Value, now: u64) -> Value {
    json!({"call": "refreshed", "reply": reply, "now_ms": now})
}

fn refresh_failed(now: u64) -> Value {
    json!({"call": "refresh_failed", "now_ms": now})
}

fn deadline() -> Value {
    json!({"call": "deadline"})
}

fn on_deadline(now: u64) -> Value {
    json!({"call": "on_deadline", "now_ms": now})
}

fn refresh_sent(address: &str, now: u64) -> Value {
    json!({"call": "refresh_sent", "address": address, "now_ms": now})
}

fn next_deadline() -> Value {
    json!({"call": "next_deadline"})
}

fn batch_deadline(now: u64) -> Value {
    json!({"call": "batch_deadline", "now_ms": now})
}

fn timeout(now: u64) -> Value {
    json!({"call": "timeout", "now_ms": now})
}

fn candidates() -> Value {
    json!({"call": "candidates"})
}

fn stats() -> Value {
    json!({"call": "stats"})
}

fn plan(keys: &[&str], access: &str) -> Value {
    json!({"call": "plan", "keys": keys.iter().map(|k| utf8(k)).collect::<Vec<_>>(), "access": access})
}

/// `step` about the `index`-th command begun (0 is the first), not the last.
fn on(index: u32, step: Value) -> Value {
    let mut step = step;
    step["command"] = json!(index);
    step
}

/// An auto-pipelining call about the plain connection to `address`.
fn pipeline(call: &str, address: &str) -> Value {
    json!({"call": call, "address": address, "readonly": false})
}

fn queued(address: &str) -> Value {
    pipeline("pipeline_queued", address)
}

fn take(address: &str) -> Value {
    pipeline("pipeline_take", address)
}

fn done(address: &str) -> Value {
    pipeline("pipeline_done", address)
}

fn pending(address: &str) -> Value {
    pipeline("pipeline_pending", address)
}

fn withdrawn(address: &str, count: u32) -> Value {
    let mut step = pipeline("pipeline_withdrawn", address);
    step["count"] = json!(count);
    step
}

/// The steps of a session that starts at time 0 and installs `three()`: a command on
/// `key`, the refresh it asks for first, and its send to `owner`.
fn started(key: &str, owner: &str) -> Vec<(Value, String)> {
    vec![
        (begin(key, "write", 0), "slot".into()),
        (poll(0), "refresh".into()),
        (candidates(), format!("candidates {A}")),
        (refreshed(three(), 1), "ok".into()),
        (poll(1), format!("send {owner}")),
    ]
}

fn steps(list: &[(Value, &str)]) -> Vec<(Value, String)> {
    list.iter().map(|(call, expect)| (call.clone(), (*expect).to_string())).collect()
}

struct Scenario {
    name: &'static str,
    seeds: Vec<&'static str>,
    config: Option<Value>,
    steps: Vec<(Value, String)>,
}

fn scenario(name: &'static str, steps: Vec<(Value, String)>) -> Scenario {
    Scenario { name, seeds: vec![A], config: None, steps }
}

fn scenarios() -> Vec<Scenario> {
    let mut all = Vec::new();
    let chain = |prefix: Vec<(Value, String)>, rest: &[(Value, &str)]| {
        let mut joined = prefix;
        joined.extend(steps(rest));
        joined
    };

    all.push(scenario(
        "steady-state",
        chain(
            started(USER1, B),
            &[
                (ok(2), "done"),
                (begin(SOMEKEY, "read", 3), "slot"),
                (poll(3), &format!("send {C}")),
                (ok(4), "done"),
                (stats(), "stats commands=2 moved=0 ask=0 refreshes=1 retries=0"),
            ],
        ),
    ));

    // MOVED: the slot is updated at once and resent there before any refresh; the
    // throttled refresh comes before a later command, once the interval has passed.
    // The refresh a MOVED asked for runs in the background: once it is sent, it holds no
    // command whose slot the table knows (the command it was handed polls again and is
    // sent where the MOVED said), until the refreshed table replaces the slot.
    all.push(scenario(
        "a-running-refresh-after-moved-holds-no-command",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("MOVED 10778 {C}"), &[], 2), &format!("send {C}")),
                (ok(3), "done"),
                (begin(USER1, "write", 201), "slot"),
                (poll(201), "refresh"),
                (candidates(), &format!("candidates {A2},{B},{B2},{C},{C2},{A}")),
                (refresh_sent(A2, 201), "deadline 701"),
                (poll(201), &format!("send {C}")),
                (ok(202), "done"),
                (begin(SOMEKEY, "read", 202), "slot"),
                (poll(202), &format!("send {C}")),
                (ok(203), "done"),
                (refreshed(three(), 204), "ok"),
                (begin(USER1, "write", 205), "slot"),
                (poll(205), &format!("send {B}")),
                (stats(), "stats moved=1 refreshes=2"),
            ],
        ),
    ));

    all.push(scenario(
        "moved-updates-the-slot-then-refreshes-once",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("MOVED 10778 {C}"), &[], 2), &format!("send {C}")),
                (ok(3), "done"),
                (begin(USER1, "write", 50), "slot"),
                (poll(50), &format!("send {C}")),
                (ok(51), "done"),
                (begin(USER1, "write", 201), "slot"),
                (poll(201), "refresh"),
                (refreshed(three(), 202), "ok"),
                (poll(202), &format!("send {B}")),
                (stats(), "stats moved=1 refreshes=2 longest_redirect_chain=1"),
            ],
        ),
    ));

    all.push(scenario(
        "ask-is-one-shot-and-changes-nothing",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("ASK 10778 {C}"), &[], 2), &format!("send {C} asking")),
                (ok(3), "done"),
                (begin(USER1, "write", 500), "slot"),
                (poll(500), &format!("send {B}")),
                (stats(), "stats ask=1 moved=0 refreshes=1"),
            ],
        ),
    ));

    // A redirect that fails after ASK: the next attempt is not ASKING any more.
    all.push(scenario(
        "ask-then-moved",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("ASK 10778 {C}"), &[], 2), &format!("send {C} asking")),
                (failed(&format!("MOVED 10778 {C}"), &[], 3), &format!("send {C}")),
                (ok(4), "done"),
            ],
        ),
    ));

    // Two nodes that disagree: five redirects followed, the sixth fails the command.
    all.push(scenario(
        "redirect-loop-ends-at-max-redirects",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("MOVED 10778 {C}"), &[], 2), &format!("send {C}")),
                (failed(&format!("MOVED 10778 {B}"), &[], 3), &format!("send {B}")),
                (failed(&format!("ASK 10778 {C}"), &[], 4), &format!("send {C} asking")),
                (failed(&format!("MOVED 10778 {B}"), &[], 5), &format!("send {B}")),
                (failed(&format!("MOVED 10778 {C}"), &[], 6), &format!("send {C}")),
                (failed(&format!("MOVED 10778 {B}"), &[], 7), "fail too_many_redirects"),
                (poll(8), "fail invalid_argument"),
                (stats(), "stats moved=4 ask=1 failed=1 longest_redirect_chain=6"),
            ],
        ),
    ));

    let mut two_redirects = scenario(
        "max-redirects-from-config",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("MOVED 10778 {C}"), &[], 2), &format!("send {C}")),
                (failed(&format!("MOVED 10778 {B}"), &[], 3), "fail too_many_redirects"),
            ],
        ),
    );
    two_redirects.config = Some(json!({"max_redirects": 1}));
    all.push(two_redirects);

    // A failover: the master stops answering; the command backs off, the table is
    // refreshed at once with the failed node asked last, and the command goes to the
    // promoted replica.
    all.push(scenario(
        "failover-refreshes-and-retries-on-the-promoted-replica",
        chain(
            started(KEY_B, A),
            &[
                // A timeout has waited already: a refresh at once, no backoff on top.
                (unreachable("timeout", 1001), "refresh"),
                (candidates(), &format!("candidates {A2},{B},{B2},{C},{C2},{A}")),
                (refreshed(three_after_failover(), 1002), "ok"),
                (poll(1002), &format!("send {A2}")),
                (ok(1003), "done"),
                (stats(), "stats retries=1 refreshes=2 errors.timeout=1"),
            ],
        ),
    ));

    // A primary stops answering (SIGSTOP, a partition) and its replica is promoted: the
    // command is not left waiting for its timeout. After stall_ms (500) without a reply,
    // and then once per refresh interval (200), the session asks for a refresh with the
    // silent node last; while the table still names it, keep waiting; once the replica is
    // promoted, resend there. No error reaches the application.
    all.push(scenario(
        "a-silent-primary-is-left-for-its-promoted-replica",
        chain(
            started(KEY_B, A),
            &[
                (stalled(501), "refresh"),
                (candidates(), &format!("candidates {A2},{B},{B2},{C},{C2},{A}")),
                (refreshed(three(), 502), "ok"),
                (stalled(502), "wait 200"),
                (stalled(702), "refresh"),
                (candidates(), &format!("candidates {B},{B2},{C},{C2},{A2},{A}")),
                (refreshed(three_after_failover(), 703), "ok"),
                (stalled(703), &format!("send {A2}")),
                (ok(704), "done"),
                (stats(), "stats stalls=2 stall_resends=1 refreshes=3 retries=0 failed=0"),
            ],
        ),
    ));

    // A slow reply from the slot's owner (a long command, a busy node): one refresh per
    // refresh interval however many commands stall, and the command keeps waiting.
    let mut slow = scenario(
        "a-slow-owner-keeps-the-command-waiting",
        chain(
            started(KEY_B, A),
            &[
                // The table was read at 1: it may be read again at 1001, not 1501.
                (stalled(501), "wait 500"),
                (stalled(1001), "refresh"),
                (refreshed(three(), 1002), "ok"),
                (stalled(1002), "wait 1000"),
                (stalled(2002), "refresh"),
                (refreshed(three(), 2003), "ok"),
                (stalled(2003), "wait 1000"),
                (ok(2600), "done"),
                (stats(), "stats stalls=3 stall_resends=0 refreshes=3"),
            ],
        ),
    );
    slow.config = Some(json!({"refresh_interval_ms": 1000}));
    all.push(slow);

    // An attempt after ASK goes to the migration's target, which the table does not
    // name: it is never moved, only waited for; and a stall before any attempt is the
    // shell's mistake.
    all.push(scenario(
        "a-stalled-ask-attempt-is-not-moved",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("ASK 10778 {C}"), &[], 2), &format!("send {C} asking")),
                (stalled(502), "wait 200"),
                (ok(600), "done"),
                (begin(USER1, "write", 601), "slot"),
                (stalled(601), "fail invalid_argument"),
            ],
        ),
    ));

    // MOVED from the promoted replica, before any refresh noticed the failover.
    all.push(scenario(
        "moved-after-a-failover",
        chain(
            started(KEY_B, A),
            &[
                (failed(&format!("MOVED 3300 {A2}"), &[], 2), &format!("send {A2}")),
                (ok(3), "done"),
                (begin(KEY_B, "write", 4), "slot"),
                (poll(4), &format!("send {A2}")),
            ],
        ),
    ));

    all.push(scenario(
        "a-failed-refresh-keeps-the-slot-moved-updated",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("MOVED 10778 {D}"), &[], 2), &format!("send {D}")),
                (ok(3), "done"),
                (begin(USER1, "write", 300), "slot"),
                (poll(300), "refresh"),
                (candidates(), &format!("candidates {A2},{B},{B2},{C},{C2},{D},{A}")),
                (refresh_failed(301), "ok"),
                (poll(301), &format!("send {D}")),
                (stats(), "stats refresh_failures=1 refreshes=1"),
            ],
        ),
    ));

    all.push(scenario(
        "an-empty-or-garbage-reply-is-refused-and-the-table-kept",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("MOVED 10778 {C}"), &[], 2), &format!("send {C}")),
                (ok(3), "done"),
                (begin(USER1, "write", 300), "slot"),
                (poll(300), "refresh"),
                (refreshed(json!([]), 301), "error invalid_argument"),
                (refreshed(json!("ERR unknown command"), 301), "error invalid_argument"),
                (refreshed(json!([{"slots": [0, 100], "nodes": []}]), 301), "error invalid_argument"),
                (refreshed(shards(&[(&[(0, 16000)], Node(A, 'a'), &[])]), 301), "error invalid_argument"),
                (refresh_failed(302), "ok"),
                (poll(302), &format!("send {C}")),
                (stats(), "stats refused_replies=4 refresh_failures=1 refreshes=1"),
            ],
        ),
    ));

    // Redirects as client libraries hand them over: redis-py inside a pipeline keeps
    // only "<slot> <address>" behind its own prefix, with the class saying MOVED.
    all.push(scenario(
        "a-redirect-wrapped-by-a-pipeline-is-a-redirect",
        chain(
            started(USER1, B),
            &[
                (
                    failed(
                        &format!("Command # 1 (SET user:1 v) of pipeline caused error: 10778 {C}"),
                        &["MovedError", "AskError", "ResponseError", "RedisError", "Exception"],
                        2,
                    ),
                    &format!("send {C}"),
                ),
                (
                    failed(
                        &format!("Command # 2 (SET user:1 v) of pipeline caused error: ASK 10778 {B}"),
                        &["ResponseError", "RedisError"],
                        3,
                    ),
                    &format!("send {B} asking"),
                ),
                (failed(&format!("-ASK 10778 {A}"), &["ReplyError", "Error"], 4), &format!("send {A} asking")),
                // redis.asyncio writes the wrapped error's args tuple.
                (
                    failed(
                        &format!("Command # 1 (SET user:1 v) of pipeline caused error: ('10778 {C}',)"),
                        &["MovedError", "AskError", "ResponseError", "RedisError", "Exception"],
                        5,
                    ),
                    &format!("send {C}"),
                ),
                (ok(6), "done"),
            ],
        ),
    ));

    // Connection failures as the client libraries report them: redis-py's classes,
    // Node's socket codes, ioredis' plain texts.
    all.push(scenario(
        "transport-errors-as-libraries-report-them",
        chain(
            started(USER1, B),
            &[
                (
                    failed(
                        "Error 111 connecting to 127.0.0.1:7001. Connection refused.",
                        &["ConnectionError", "RedisError"],
                        2,
                    ),
                    "wait 20",
                ),
                (poll(22), "refresh"),
                (refreshed(three(), 23), "ok"),
                (poll(23), &format!("send {B}")),
                // A timeout has waited already: a refresh at once, and the backoff stays.
                (failed("Timeout reading from socket", &["TimeoutError", "RedisError"], 24), "refresh"),
                (refreshed(three(), 25), "ok"),
                (poll(25), &format!("send {B}")),
                (failed("connect ECONNREFUSED 127.0.0.1:7001", &["ECONNREFUSED", "Error"], 26), "wait 40"),
                (poll(66), "refresh"),
                (refreshed(three(), 67), "ok"),
                (poll(67), &format!("send {B}")),
                (failed("Command timed out", &["Error"], 68), "refresh"),
                (refreshed(three(), 69), "ok"),
                (poll(69), &format!("send {B}")),
                (failed("Connection is closed.", &["Error"], 70), "wait 80"),
                (stats(), "stats errors.reset=2 errors.timeout=2 errors.refused=1 retries=5"),
            ],
        ),
    ));

    all.push(scenario(
        "ioredis-commands-lost-with-their-connection-are-resets",
        chain(
            started(USER1, B),
            &[
                // A command sent when its connection closed (a primary killed), and one
                // queued while it reconnected (`maxRetriesPerRequest: 0`): ioredis's
                // AbortError and its subclass, retried as a reset.
                (failed("Command aborted due to connection close", &["AbortError", "RedisError", "Error"], 2), "wait 20"),
                (poll(22), "refresh"),
                (refreshed(three(), 23), "ok"),
                (poll(23), &format!("send {B}")),
                (
                    failed(
                        "Reached the max retries per request limit (which is 0). Refer to \"maxRetriesPerRequest\" option for details.",
                        &["MaxRetriesPerRequestError", "AbortError", "RedisError", "Error"],
                        24,
                    ),
                    "wait 40",
                ),
                (stats(), "stats errors.reset=2 retries=2"),
            ],
        ),
    ));

    all.push(scenario(
        "an-application-error-stands",
        chain(
            started(USER1, B),
            &[
                (
                    failed("WRONGTYPE Operation against a key holding the wrong kind of value", &["ResponseError"], 2),
                    "done",
                ),
                (begin(USER1, "write", 3), "slot"),
                (poll(3), &format!("send {B}")),
                (failed("EXECABORT Transaction discarded because of previous errors.", &["ReplyError"], 4), "done"),
            ],
        ),
    ));

    // A WAIT released because its master turned replica, and a write refused by a
    // demoted master: refresh and retry, not an error.
    all.push(scenario(
        "unblocked-during-wait-refreshes-and-retries",
        chain(
            started(KEY_B, A),
            &[
                (
                    failed(
                        "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
                        &["ResponseError"],
                        2,
                    ),
                    "wait 20",
                ),
                (poll(22), "refresh"),
                (refreshed(three_after_failover(), 23), "ok"),
                (poll(23), &format!("send {A2}")),
                (
                    failed(
                        "Command # 2 (WAIT 1 500) of pipeline caused error: ('UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)',)",
                        &["ResponseError", "RedisError", "Exception"],
                        24,
                    ),
                    "wait 40",
                ),
                (poll(64), "refresh"),
                (refreshed(three_after_failover(), 65), "ok"),
                (poll(65), &format!("send {A2}")),
                (ok(66), "done"),
                (stats(), "stats errors.unblocked=2 retries=2 refreshes=3"),
            ],
        ),
    ));

    all.push(scenario(
        "readonly-from-a-demoted-master-refreshes-and-retries",
        chain(
            started(KEY_B, A),
            &[
                (
                    failed("You can't write against a read only replica.", &["ReadOnlyError", "ResponseError"], 2),
                    "wait 20",
                ),
                (poll(22), "refresh"),
                (refreshed(three(), 23), "ok"),
                (poll(23), &format!("send {A}")),
                (failed("READONLY You can't write against a read only replica.", &[], 24), "wait 40"),
                (poll(64), "refresh"),
                (refreshed(three_after_failover(), 65), "ok"),
                (poll(65), &format!("send {A2}")),
                (stats(), "stats errors.read_only=2 retries=2 refreshes=3"),
            ],
        ),
    ));

    // TRYAGAIN (a multi-key command split by a migration): back off, doubling, no refresh.
    all.push(scenario(
        "tryagain-backs-off-doubling-without-a-refresh",
        chain(
            started(USER1, B),
            &[
                (failed("TRYAGAIN Multiple keys request during rehashing of slot", &[], 2), "wait 20"),
                (poll(22), &format!("send {B}")),
                (failed("TRYAGAIN Multiple keys request during rehashing of slot", &["TryAgainError"], 23), "wait 40"),
                (poll(63), &format!("send {B}")),
                (ok(64), "done"),
                (stats(), "stats errors.try_again=2 retries=2 refreshes=1"),
            ],
        ),
    ));

    // Every busy reply is retried (the old Node client left out MASTERDOWN), and asks
    // for a throttled refresh.
    all.push(scenario(
        "clusterdown-masterdown-loading-are-retried",
        chain(
            started(USER1, B),
            &[
                (failed("CLUSTERDOWN The cluster is down", &[], 300), "wait 20"),
                (poll(320), "refresh"),
                (refreshed(three(), 321), "ok"),
                (poll(321), &format!("send {B}")),
                (
                    failed(
                        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
                        &[],
                        322,
                    ),
                    "wait 40",
                ),
                (poll(362), &format!("send {B}")),
                (failed("LOADING Redis is loading the dataset in memory", &[], 363), "wait 80"),
                (poll(443), &format!("send {B}")),
                (failed("Loading the dataset in memory", &["BusyLoadingError", "ConnectionError"], 444), "wait 160"),
                (poll(604), "refresh"),
                (stats(), "stats errors.cluster_down=1 errors.master_down=1 errors.loading=2 retries=4"),
            ],
        ),
    ));

    let mut budget = scenario(
        "the-retry-budget-ends-in-unavailable",
        chain(
            started(USER1, B),
            &[
                (unreachable("refused", 10), "wait 20"),
                (poll(30), "refresh"),
                (refresh_failed(31), "ok"),
                (poll(31), &format!("send {B}")),
                (unreachable("reset", 32), "wait 40"),
                (poll(72), "refresh"),
                (refreshed(three(), 73), "ok"),
                (poll(73), &format!("send {B}")),
                (unreachable("timeout", 110), "fail unavailable"),
                (stats(), "stats errors.refused=1 errors.reset=1 errors.timeout=1 failed=1 retries=2"),
            ],
        ),
    );
    budget.config = Some(json!({"retry_budget_ms": 100}));
    all.push(budget);

    // Before the first table: a startup node that does not answer is retried after a
    // backoff, until the budget.
    let mut startup = scenario(
        "no-startup-node-answers",
        steps(&[
            (begin(USER1, "write", 0), "slot"),
            (poll(0), "refresh"),
            (refresh_failed(5), "ok"),
            (poll(5), "wait 20"),
            (poll(25), "refresh"),
            (refresh_failed(26), "ok"),
            (poll(26), "wait 40"),
            (poll(66), "refresh"),
            (refresh_failed(67), "ok"),
            (poll(67), "wait 38"),
            (poll(105), "fail unavailable"),
        ]),
    );
    startup.config = Some(json!({"retry_budget_ms": 100}));
    all.push(startup);

    // Replica reads: the replicas in turn, over connections that sent READONLY; writes
    // to the master.
    let mut replicas = scenario(
        "replica-reads-take-turns",
        steps(&[
            (begin(USER1, "read", 0), "slot"),
            (poll(0), "refresh"),
            (
                refreshed(
                    shards(&[
                        (&[(0, 8191)], Node(A, 'a'), &[Node(A2, 'd')]),
                        (&[(8192, 16383)], Node(B, 'b'), &[Node(B2, 'e'), Node(C2, 'f')]),
                    ]),
                    1,
                ),
                "ok",
            ),
            (poll(1), &format!("send {B2} readonly")),
            (ok(2), "done"),
            (begin(USER1, "read", 3), "slot"),
            (poll(3), &format!("send {C2} readonly")),
            (ok(4), "done"),
            (begin(USER1, "read", 5), "slot"),
            (poll(5), &format!("send {B2} readonly")),
            (ok(6), "done"),
            (begin(USER1, "write", 7), "slot"),
            (poll(7), &format!("send {B}")),
        ]),
    );
    replicas.config = Some(json!({"read_from_replicas": true}));
    all.push(replicas);

    // Addresses: IPv6 written as Redis writes it, and an empty host (a node that does
    // not know its address) meaning the host the command went to.
    all.push(Scenario {
        name: "ipv6-and-empty-host-redirects",
        seeds: vec!["[::1]:7000"],
        config: None,
        steps: steps(&[
            (begin(USER1, "write", 0), "slot"),
            (poll(0), "refresh"),
            (candidates(), "candidates [::1]:7000"),
            (
                refreshed(
                    shards(&[
                        (&[(0, 8191)], Node("[::1]:7000", 'a'), &[]),
                        (&[(8192, 16383)], Node("[::1]:7001", 'b'), &[]),
                    ]),
                    1,
                ),
                "ok",
            ),
            (poll(1), "send [::1]:7001"),
            (failed("MOVED 10778 ::1:7002", &[], 2), "send [::1]:7002"),
            (failed("ASK 10778 :7003", &[], 3), "send [::1]:7003 asking"),
            (failed("MOVED 10778 :7004", &[], 4), "send [::1]:7004"),
            (ok(5), "done"),
        ]),
    });

    all.push(Scenario {
        name: "hostnames",
        seeds: vec!["redis-0.cluster.internal:6379", "redis-1.cluster.internal:6379"],
        config: None,
        steps: steps(&[
            (begin(SOMEKEY, "write", 0), "slot"),
            (poll(0), "refresh"),
            (candidates(), "candidates redis-0.cluster.internal:6379,redis-1.cluster.internal:6379"),
            (refreshed(shards(&[(&[(0, 16383)], Node("redis-2.cluster.internal:6379", 'c'), &[])]), 1), "ok"),
            (poll(1), "send redis-2.cluster.internal:6379"),
            (failed("MOVED 11058 redis-3.cluster.internal:6380", &[], 2), "send redis-3.cluster.internal:6380"),
        ]),
    });

    // Multi-key commands share a slot or are refused; batches group by node and slot.
    all.push(scenario(
        "multi-key-commands-and-batches",
        chain(
            started(USER1, B),
            &[
                (ok(2), "done"),
                (begin_many(&["{user:1}.name", "{user:1}.mail"], "write", 3), "slot"),
                (begin_many(&[KEY_A, KEY_B], "write", 4), "error cross_slot"),
                (json!({"call": "command", "keys": [], "access": "write", "now_ms": 5}), "error invalid_argument"),
                (plan(&[KEY_A, KEY_B, USER1, SOMEKEY, "{user:1}.x"], "read"), &format!("groups {A},{B},{C}")),
            ],
        ),
    ));

    // Hostile replies (issue 34) are refused and the table kept: slot pairs that
    // overlap, more pairs than slots, a chain past 1 master + 15 replicas, node ids the
    // document format refuses (empty, over 1,024 bytes).
    let one_master = |id: &str| json!([{"slots": [0, 16383], "nodes": [{"id": id, "ip": "127.0.0.1", "port": 7000, "role": "master"}]}]);
    let mut long_chain = vec![json!({"id": "m", "ip": "127.0.0.1", "port": 7000, "role": "master"})];
    long_chain.extend(
        (1..=16).map(|n| json!({"id": format!("r{n}"), "ip": "127.0.0.1", "port": 7100 + n, "role": "replica"})),
    );
    all.push(scenario(
        "hostile-replies-are-refused-and-the-table-kept",
        chain(
            started(USER1, B),
            &[
                (ok(2), "done"),
                (refreshed(shards(&[(&[(0, 16383), (0, 0)], Node(A, 'a'), &[])]), 3), "error invalid_argument"),
                (
                    refreshed(shards(&[(&[(0, 100)], Node(A, 'a'), &[]), (&[(100, 16383)], Node(B, 'b'), &[])]), 3),
                    "error invalid_argument",
                ),
                (refreshed(json!([{"slots": vec![0; 2 * 16_385], "nodes": [{"id": "m", "ip": "127.0.0.1", "port": 7000, "role": "master"}]}]), 3), "error invalid_argument"),
                (refreshed(json!([{"slots": [0, 16383], "nodes": long_chain}]), 3), "error invalid_argument"),
                (refreshed(one_master(""), 3), "error invalid_argument"),
                (refreshed(one_master(&"n".repeat(1025)), 3), "error invalid_argument"),
                (begin(USER1, "write", 4), "slot"),
                (poll(4), &format!("send {B}")),
                (stats(), "stats refused_replies=6 refreshes=1"),
            ],
        ),
    ));

    // A node that a MOVED leaves with no slot leaves the table: MOVEDs to ever new
    // addresses do not grow it (bounded by the slots, not by the MOVEDs).
    all.push(scenario(
        "a-node-left-with-no-slot-by-moved-leaves-the-table",
        chain(
            started(USER1, B),
            &[
                (failed(&format!("MOVED 10778 {D}"), &[], 2), &format!("send {D}")),
                (failed("MOVED 10778 127.0.0.1:7007", &[], 3), "send 127.0.0.1:7007"),
                (failed("MOVED 10778 127.0.0.1:7008", &[], 4), "send 127.0.0.1:7008"),
                (ok(5), "done"),
                // The six nodes of the reply and the slot's last owner; the seed is among them.
                (candidates(), &format!("candidates {A2},{B},{B2},{C},{C2},127.0.0.1:7008,{A}")),
            ],
        ),
    ));

    // Deadlines out (issue 36): the session says when the shell must next ask about a
    // command (`deadline`, then `on_deadline`) and about its own requests
    // (`next_deadline`, then `timeout`); the shell keeps one timer and computes none.
    //
    // The attempt begins at the send: a connection's handshake to a paused node is inside
    // it, so the stall check comes stall_ms after the send whether the node went silent
    // in the handshake or after the command. B (slot 10778) fails over to B2.
    let b_failed_over = || {
        shards(&[
            (&[(0, 5460)], Node(A, 'a'), &[Node(A2, 'd')]),
            (&[(5461, 10922)], Node(B2, 'e'), &[]),
            (&[(10923, 16383)], Node(C, 'c'), &[Node(C2, 'f')]),
        ])
    };
    all.push(scenario(
        "deadline-a-stall-during-a-handshake",
        chain(
            started(USER1, B),
            &[
                (deadline(), "deadline 501"),
                (on_deadline(300), "wait 201"),
                (on_deadline(501), "refresh"),
                (deadline(), "deadline 501"),
                // B, silent, is asked last.
                (candidates(), &format!("candidates {A2},{B2},{C},{C2},{A},{B}")),
                (refresh_sent(A2, 501), "deadline 1001"),
                (next_deadline(), "deadline 1001"),
                (refreshed(b_failed_over(), 510), "ok"),
                (next_deadline(), "deadline none"),
                (on_deadline(510), &format!("send {B2}")),
                (deadline(), "deadline 1010"),
                (ok(520), "done"),
                (deadline(), "deadline none"),
                (stats(), "stats stalls=1 stall_resends=1 refreshes=2 retries=0"),
            ],
        ),
    ));

    // A refresh's CLUSTER SHARDS is a request under the same stall rule: a silent
    // candidate is given up at its deadline and the next one asked.
    all.push(Scenario {
        name: "deadline-a-refresh-sent-to-a-silent-node",
        seeds: vec![A, B],
        config: None,
        steps: steps(&[
            (begin(USER1, "write", 0), "slot"),
            (poll(0), "refresh"),
            (deadline(), "deadline none"),
            (candidates(), &format!("candidates {A},{B}")),
            (refresh_sent(A, 0), "deadline 500"),
            (next_deadline(), "deadline 500"),
            (timeout(499), "timed_out false"),
            (timeout(500), "timed_out true"),
            (next_deadline(), "deadline none"),
            (timeout(501), "timed_out false"),
            (refresh_sent(B, 500), "deadline 1000"),
            (refreshed(three(), 520), "ok"),
            (next_deadline(), "deadline none"),
            (poll(520), &format!("send {B}")),
            (deadline(), "deadline 1020"),
        ]),
    });

    // The deadline moves with what arrives: a TRYAGAIN reply turns the stall check into
    // the backoff's end; the resend gets a stall check of its own; the reply clears it.
    all.push(scenario(
        "deadline-moves-when-a-reply-arrives",
        chain(
            started(USER1, B),
            &[
                (deadline(), "deadline 501"),
                (failed("TRYAGAIN Multiple keys request during rehashing of slot", &[], 100), "wait 20"),
                (deadline(), "deadline 120"),
                (on_deadline(110), "wait 10"),
                (on_deadline(120), &format!("send {B}")),
                (deadline(), "deadline 620"),
                (ok(130), "done"),
                (deadline(), "deadline none"),
            ],
        ),
    ));

    // The command timeout ends an attempt the stall checks kept waiting on: the wait a
    // stall gives stops at it, and then the attempt is a `timeout` (refresh, back off).
    let mut timed = scenario(
        "deadline-the-command-timeout-ends-a-stalled-attempt",
        chain(
            started(USER1, B),
            &[
                (deadline(), "deadline 501"),
                (on_deadline(501), "refresh"),
                (refreshed(three(), 502), "ok"),
                (on_deadline(502), "wait 199"),
                (deadline(), "deadline 701"),
                (on_deadline(701), "refresh"),
                (stats(), "stats stalls=1 errors.timeout=1 retries=1"),
            ],
        ),
    );
    timed.config = Some(json!({"command_timeout_ms": 700}));
    all.push(timed);

    // A command sent again to the node it found silent (here after that node's command
    // timeout; the table still names it) is checked at the refresh pace, 200 ms, not
    // stall_ms: a shell held by that node (a blocking connect and handshake to a paused
    // primary) is let go in time to follow a failover within one refresh interval.
    let mut again = scenario(
        "deadline-a-resend-to-a-silent-node-is-checked-at-the-refresh-pace",
        chain(
            started(USER1, B),
            &[
                (deadline(), "deadline 501"),
                (on_deadline(501), "refresh"),
                (refreshed(three(), 502), "ok"),
                (on_deadline(502), "wait 199"),
                (on_deadline(701), "refresh"),
                (refreshed(three(), 702), "ok"),
                (on_deadline(702), &format!("send {B}")),
                (deadline(), "deadline 902"),
                (on_deadline(902), "refresh"),
                (refreshed(b_failed_over(), 910), "ok"),
                (on_deadline(910), &format!("send {B2}")),
                (deadline(), "deadline 1410"),
                (stats(), "stats stalls=2 stall_resends=1 errors.timeout=1"),
            ],
        ),
    );
    again.config = Some(json!({"command_timeout_ms": 700}));
    all.push(again);

    // A node that stalled stays last among a refresh's candidates after the refresh (a
    // paused primary is silent through many refreshes, which other commands share), until
    // it answers: then it takes its turn again. (The candidates are the ring A, A2, B,
    // B2, C, C2 rotated one more on each call: the second call would start at B.)
    all.push(scenario(
        "a-silent-node-is-asked-last-until-it-answers",
        chain(
            started(USER1, B),
            &[
                (on_deadline(501), "refresh"),
                (candidates(), &format!("candidates {A2},{B2},{C},{C2},{A},{B}")),
                (refreshed(three(), 502), "ok"),
                (candidates(), &format!("candidates {B2},{C},{C2},{A},{A2},{B}")),
                (ok(510), "done"),
                (candidates(), &format!("candidates {B2},{C},{C2},{A},{A2},{B}")),
                (candidates(), &format!("candidates {C},{C2},{A},{A2},{B},{B2}")),
            ],
        ),
    ));

    // No stall checks (stall_ms 0): the one deadline is the command timeout.
    let mut no_stall = scenario(
        "deadline-without-stall-checks-is-the-command-timeout",
        chain(
            started(USER1, B),
            &[
                (deadline(), "deadline 1001"),
                (on_deadline(1001), "refresh"),
                (stats(), "stats stalls=0 errors.timeout=1"),
            ],
        ),
    );
    no_stall.config = Some(json!({"stall_ms": 0, "command_timeout_ms": 1000}));
    all.push(no_stall);

    // A batch's pipeline is one request of the command timeout, sent at `now_ms`; with no
    // command timeout it has no deadline (the shell computes none).
    all.push(scenario(
        "deadline-of-a-batch-pipeline",
        chain(started(USER1, B), &[(batch_deadline(40), "deadline 5040"), (deadline(), "deadline 501")]),
    ));
    let mut untimed =
        scenario("deadline-of-a-batch-without-a-command-timeout", vec![(batch_deadline(40), "deadline none".into())]);
    untimed.config = Some(json!({"command_timeout_ms": 0}));
    all.push(untimed);

    // A MOVED or ASK whose text is not `<slot> <host:port>` fails the command with the
    // core's refusal of that text (`invalid_argument`), read from the word or from a
    // client library's redirect class (redis-py keeps only the rest of the line), never
    // handed back as the command's own error for each shell to read again.
    for (name, text, names) in [
        ("unreadable-redirect-slot-out-of-range", "MOVED 99999 127.0.0.1:7001", &[][..]),
        ("unreadable-redirect-no-port", "ASK 10778 127.0.0.1", &[][..]),
        ("unreadable-redirect-in-a-library-class", "10778 nowhere", &["MovedError", "AskError", "ResponseError"][..]),
    ] {
        all.push(scenario(
            name,
            chain(
                started(USER1, B),
                &[
                    (failed(text, names, 5), "fail invalid_argument"),
                    (stats(), "stats failed=1 retries=0"),
                    (deadline(), "deadline none"),
                ],
            ),
        ));
    }

    pipelined(&mut all);

    all.push(Scenario { name: "bad-seeds-and-config", seeds: vec![], config: None, steps: vec![] });
    all
}

/// Auto-pipelining (issue 37): the counts of one connection's queue (which commands go
/// in one write, and when), and commands of one pipeline each decided as if written
/// alone: a redirect in the middle, a stall of the whole pipeline, a connection lost
/// with part of the replies read. A step's `command` names which command (0: the first
/// begun); the shell's queue is implied by the order of the `send`s.
/// `scenario` with `pipeline_max_writes` 2 (the default is 1): a lone first command on an
/// idle connection and the burst behind it both in flight.
fn two_writes(scenario: Scenario) -> Scenario {
    Scenario { config: Some(json!({"pipeline_max_writes": 2})), ..scenario }
}

fn pipelined(all: &mut Vec<Scenario>) {
    let chain = |prefix: Vec<(Value, String)>, rest: &[(Value, &str)]| {
        let mut joined = prefix;
        joined.extend(steps(rest));
        joined
    };
    let send_b = format!("send {B}");

    // Three commands in one turn: the first finds the connection idle and is written at
    // once, alone; the second schedules the flush, which writes the two behind it in one
    // write (with pipeline_max_writes 2 the burst does not wait for the first reply); one
    // issued while both writes are out waits for the first to end, then goes.
    all.push(two_writes(scenario(
        "auto-pipeline-one-write-per-turn",
        chain(
            started(USER1, B),
            &[
                (queued(B), "queued write"),
                (begin(USER1_X, "write", 1), "slot"),
                (poll(1), &send_b),
                (queued(B), "queued flush"),
                (begin(USER2, "read", 1), "slot"),
                (poll(1), &send_b),
                (queued(B), "queued wait"),
                (take(B), "write 2"),
                (take(B), "write 0"),
                (pending(B), "pending 0 2"),
                (begin(USER1_Y, "write", 2), "slot"),
                (poll(2), &send_b),
                (queued(B), "queued wait"),
                (on(0, ok(3)), "done"),
                (done(B), "write 1"),
                (pending(B), "pending 0 2"),
                (on(1, ok(3)), "done"),
                (on(2, ok(3)), "done"),
                (done(B), "write 0"),
                (pending(B), "pending 0 1"),
                (ok(4), "done"),
                (done(B), "write 0"),
                (pending(B), "pending 0 0"),
                (stats(), "stats commands=4 moved=0 retries=0 failed=0"),
            ],
        ),
    )));

    // One command at a time: each finds the connection idle and is written at once (no
    // flush, no take). With pipeline_max_writes 1 (the default) the burst behind a lone
    // first command waits for its reply (no flush is scheduled), then goes in one write.
    let mut idle = scenario(
        "auto-pipeline-idle-write-and-the-burst-behind-it",
        chain(
            started(USER1, B),
            &[
                (queued(B), "queued write"),
                (pending(B), "pending 0 1"),
                (ok(2), "done"),
                (done(B), "write 0"),
                (pending(B), "pending 0 0"),
                (begin(USER1_X, "write", 3), "slot"),
                (poll(3), &send_b),
                (queued(B), "queued write"),
                (begin(USER2, "write", 3), "slot"),
                (poll(3), &send_b),
                (queued(B), "queued wait"),
                (begin(USER1_Y, "write", 3), "slot"),
                (poll(3), &send_b),
                (queued(B), "queued wait"),
                (take(B), "write 0"),
                (pending(B), "pending 2 1"),
                (on(1, ok(4)), "done"),
                (done(B), "write 2"),
                (on(2, ok(5)), "done"),
                (on(3, ok(5)), "done"),
                (done(B), "write 0"),
                (pending(B), "pending 0 0"),
                (stats(), "stats commands=4 moved=0 retries=0 failed=0"),
            ],
        ),
    );
    idle.config = Some(json!({"pipeline_max_writes": 1}));
    all.push(idle);

    // pipeline_max_commands splits a long queue; pipeline_max_writes holds the rest.
    let mut split = scenario(
        "auto-pipeline-max-commands-and-writes",
        steps(&[
            (queued(B), "queued write"),
            (queued(B), "queued flush"),
            (queued(B), "queued wait"),
            (queued(B), "queued wait"),
            (queued(B), "queued wait"),
            (queued(B), "queued wait"),
            (take(B), "write 2"),
            (take(B), "write 2"),
            (take(B), "write 0"),
            (pending(B), "pending 1 3"),
            (queued(B), "queued wait"),
            (done(B), "write 2"),
            (done(B), "write 0"),
            (done(B), "write 0"),
            (pending(B), "pending 0 1"),
            (done(B), "write 0"),
            (pending(B), "pending 0 0"),
        ]),
    );
    split.config = Some(json!({"pipeline_max_commands": 2, "pipeline_max_writes": 3}));
    all.push(split);

    // Queued commands that leave unwritten are not written; plain and READONLY
    // connections to one node are two queues; a call about an idle connection changes
    // nothing.
    all.push(two_writes(scenario(
        "auto-pipeline-withdrawn-and-readonly",
        steps(&[
            (queued(B), "queued write"),
            (queued(B), "queued flush"),
            (queued(B), "queued wait"),
            (json!({"call": "pipeline_queued", "address": B, "readonly": true}), "queued write"),
            (withdrawn(B, 1), "ok"),
            (take(B), "write 1"),
            (json!({"call": "pipeline_take", "address": B, "readonly": true}), "write 0"),
            (queued(B), "queued wait"),
            (withdrawn(B, 5), "ok"),
            (done(B), "write 0"),
            (pending(B), "pending 0 1"),
            (done(B), "write 0"),
            (pending(B), "pending 0 0"),
            (json!({"call": "pipeline_pending", "address": B, "readonly": true}), "pending 0 1"),
            (done(C), "write 0"),
            (take(C), "write 0"),
            (withdrawn(C, 1), "ok"),
            (pending(C), "pending 0 0"),
        ]),
    )));

    // Off: every command is its own write, and none waits for another.
    let mut off = scenario(
        "auto-pipeline-off-writes-each-command-alone",
        steps(&[
            (queued(B), "queued flush"),
            (queued(B), "queued flush"),
            (take(B), "write 1"),
            (take(B), "write 1"),
            (take(B), "write 0"),
            (queued(B), "queued flush"),
            (done(B), "write 0"),
            (pending(B), "pending 1 1"),
        ]),
    );
    off.config = Some(json!({"auto_pipeline": false}));
    all.push(off);

    // A MOVED in the middle of a pipeline: the commands before and after it succeed; the
    // moved one is resent to the new owner's connection (idle: written at once), and a
    // second command of the same slot schedules a flush there; ASK sends only that
    // command, which joins that flush.
    all.push(two_writes(scenario(
        "auto-pipeline-moved-in-the-middle",
        chain(
            started(USER1, B),
            &[
                (queued(B), "queued write"),
                (begin(USER1_X, "write", 1), "slot"),
                (poll(1), &send_b),
                (queued(B), "queued flush"),
                (begin(USER2, "write", 1), "slot"),
                (poll(1), &send_b),
                (queued(B), "queued wait"),
                (begin(USER1_Y, "write", 1), "slot"),
                (poll(1), &send_b),
                (queued(B), "queued wait"),
                (take(B), "write 3"),
                (on(0, failed(&format!("MOVED 10778 {C}"), &[], 3)), &format!("send {C}")),
                (queued(C), "queued write"),
                (done(B), "write 0"),
                (on(1, failed(&format!("MOVED 10778 {C}"), &[], 3)), &format!("send {C}")),
                (queued(C), "queued flush"),
                (on(2, ok(3)), "done"),
                (on(3, failed(&format!("ASK 10778 {C}"), &[], 3)), &format!("send {C} asking")),
                (json!({"call": "pipeline_queued", "address": C, "readonly": false}), "queued wait"),
                (done(B), "write 0"),
                (take(C), "write 2"),
                (on(0, ok(4)), "done"),
                (on(1, ok(4)), "done"),
                (on(3, ok(4)), "done"),
                (done(C), "write 0"),
                (done(C), "write 0"),
                (pending(C), "pending 0 0"),
                (begin(USER1, "write", 5), "slot"),
                (poll(5), &format!("send {C}")),
                (stats(), "stats moved=2 ask=1 retries=0 failed=0 longest_redirect_chain=1"),
            ],
        ),
    )));

    // The whole pipeline stalls (the primary A paused): every command, the written ones
    // and the one queued behind them, is checked at its own deadline; the first check
    // refreshes, the others share that refresh and keep waiting; once A2 is promoted,
    // each is sent there (the queued one leaves A's queue), and A's writes are abandoned.
    all.push(two_writes(scenario(
        "auto-pipeline-stall-of-the-whole-pipeline",
        chain(
            started(KEY_B, A),
            &[
                (queued(A), "queued write"),
                (begin(KEY_B_X, "write", 1), "slot"),
                (poll(1), &format!("send {A}")),
                (queued(A), "queued flush"),
                (take(A), "write 1"),
                (begin(KEY_B_Y, "write", 2), "slot"),
                (poll(2), &format!("send {A}")),
                (queued(A), "queued wait"),
                (on(0, deadline()), "deadline 501"),
                (on(1, deadline()), "deadline 501"),
                (on(2, deadline()), "deadline 502"),
                (on(0, on_deadline(501)), "refresh"),
                (candidates(), &format!("candidates {A2},{B},{B2},{C},{C2},{A}")),
                (refreshed(three(), 502), "ok"),
                (on(0, on_deadline(502)), "wait 200"),
                (on(1, on_deadline(502)), "wait 200"),
                (on(2, on_deadline(502)), "wait 200"),
                (on(0, deadline()), "deadline 702"),
                (on(0, on_deadline(702)), "refresh"),
                (refreshed(three_after_failover(), 703), "ok"),
                (on(0, on_deadline(703)), &format!("send {A2}")),
                (queued(A2), "queued write"),
                (on(1, on_deadline(703)), &format!("send {A2}")),
                (queued(A2), "queued flush"),
                (on(2, on_deadline(703)), &format!("send {A2}")),
                (withdrawn(A, 1), "ok"),
                (queued(A2), "queued wait"),
                (done(A), "write 0"),
                (done(A), "write 0"),
                (pending(A), "pending 0 0"),
                (take(A2), "write 2"),
                (on(0, ok(704)), "done"),
                (on(1, ok(704)), "done"),
                (on(2, ok(704)), "done"),
                (done(A2), "write 0"),
                (done(A2), "write 0"),
                (stats(), "stats stalls=6 stall_resends=3 refreshes=3 retries=0 failed=0"),
            ],
        ),
    )));

    // The first command is written alone (an idle connection), the two behind it in a
    // second write; the connection drops after the first write's reply: that command
    // succeeded; the two others (whose replies were lost: they may have run) are
    // unreachable, back off and, after the refresh they ask for, go again: the first on
    // the idle connection at once, the other in a flush behind it.
    all.push(two_writes(scenario(
        "auto-pipeline-connection-lost-with-part-of-the-replies-read",
        chain(
            started(USER1, B),
            &[
                (queued(B), "queued write"),
                (begin(USER1_X, "write", 1), "slot"),
                (poll(1), &send_b),
                (queued(B), "queued flush"),
                (begin(USER2, "write", 1), "slot"),
                (poll(1), &send_b),
                (queued(B), "queued wait"),
                (take(B), "write 2"),
                (on(0, ok(3)), "done"),
                (done(B), "write 0"),
                (on(1, unreachable("reset", 4)), "wait 20"),
                (on(2, unreachable("reset", 4)), "wait 20"),
                (done(B), "write 0"),
                (on(1, on_deadline(24)), "refresh"),
                (candidates(), &format!("candidates {A2},{B2},{C},{C2},{A},{B}")),
                (refreshed(three(), 25), "ok"),
                (on(1, poll(25)), &send_b),
                (queued(B), "queued write"),
                (on(2, on_deadline(25)), &send_b),
                (queued(B), "queued flush"),
                (take(B), "write 1"),
                (on(1, ok(26)), "done"),
                (on(2, ok(26)), "done"),
                (done(B), "write 0"),
                (done(B), "write 0"),
                (pending(B), "pending 0 0"),
                (stats(), "stats retries=2 errors.reset=2 refreshes=2 failed=0"),
            ],
        ),
    )));
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "session_redis",
        "Scenarios of the Redis Cluster command session (sans-IO): commands, the outcomes of their attempts (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, MASTERDOWN, LOADING, READONLY, UNBLOCKED, wrapped redirects, refused/reset/timed-out connections) and refreshes at fixed times, and the session's next action for each: send where (ASKING, READONLY), wait until when, refresh, done, or fail with which code; and the deadlines it hands out (when to ask about a command, about a refresh request) and what it answers when one comes.",
        "generator; each scenario's answers are also stated by hand in conformance/src/generate/session_redis.rs and checked before writing; the rules: the Redis Cluster specification (Redirection and resharding, ASK, failover), Redis 7 error replies, redis-py 8 exception classes",
    );
    for scenario in scenarios() {
        let mut case = json!({"op": "redis_session", "seeds": scenario.seeds});
        if let Some(config) = &scenario.config {
            case["config"] = config.clone();
        }
        case["steps"] = Value::Array(scenario.steps.iter().map(|(call, _)| call.clone()).collect());
        let expect = crate::session::redis_session(&case).unwrap_or_else(|err| panic!("{}: {err}", scenario.name));
        if scenario.steps.is_empty() {
            assert_eq!(expect, json!({"error": "invalid_argument"}), "{}: no seeds must be refused", scenario.name);
        }
        let results = expect.get("results").and_then(Value::as_array).cloned().unwrap_or_default();
        for ((call, wanted), got) in scenario.steps.iter().zip(&results) {
            check(scenario.name, call, wanted, got);
        }
        case["expect"] = expect;
        file.case(scenario.name, case);
    }
    // A config the session refuses.
    for (what, config) in [
        ("unknown-field", json!({"max_redirect": 3})),
        ("negative", json!({"retry_budget_ms": -1})),
        ("zero-backoff", json!({"backoff_first_ms": 0})),
        ("backoff-max-below-first", json!({"backoff_first_ms": 100, "backoff_max_ms": 50})),
        ("not-an-object", json!([1])),
        ("pipeline-max-commands-zero", json!({"pipeline_max_commands": 0})),
        ("pipeline-max-commands-over-the-limit", json!({"pipeline_max_commands": 65537})),
        ("pipeline-max-writes-zero", json!({"pipeline_max_writes": 0})),
        ("pipeline-max-writes-over-the-limit", json!({"pipeline_max_writes": 1025})),
        ("auto-pipeline-not-a-boolean", json!({"auto_pipeline": 1})),
    ] {
        let case = json!({"op": "redis_session", "seeds": [A], "config": config, "steps": []});
        let expect = crate::session::redis_session(&case).expect("runs");
        assert_eq!(expect, json!({"error": "invalid_argument"}), "config {what}");
        let mut case = case;
        case["expect"] = expect;
        file.case(&format!("bad-config/{what}"), case);
    }
    for (what, seed) in [("no-port", "127.0.0.1"), ("no-host", ":7000"), ("port-zero", "h:0"), ("space", "a b:1")] {
        let case = json!({"op": "redis_session", "seeds": [seed], "steps": []});
        let expect = crate::session::redis_session(&case).expect("runs");
        assert_eq!(expect, json!({"error": "invalid_argument"}), "seed {what}");
        let mut case = case;
        case["expect"] = expect;
        file.case(&format!("bad-seed/{what}"), case);
    }
    file
}

/// Panics unless `got` (one step's result) is what `wanted` says, in the short form.
fn check(scenario: &str, call: &Value, wanted: &str, got: &Value) {
    let fail = || panic!("{scenario}: {call} answered {got}, the scenario says {wanted:?}");
    let mut words = wanted.split(' ');
    let head = words.next().unwrap_or("");
    let rest: Vec<&str> = words.collect();
    let ok = match head {
        "send" => {
            let send = &got["send"];
            send["address"] == rest[0]
                && send["asking"] == rest.contains(&"asking")
                && send["readonly"] == rest.contains(&"readonly")
        }
        "wait" => got["wait"]["delay_ms"].as_u64().map(|ms| ms.to_string()).as_deref() == Some(rest[0]),
        "refresh" => got == &json!({"refresh": {}}),
        "done" => got == &json!({"done": {}}),
        "fail" => got == &json!({"fail": {"code": rest[0]}}),
        "ok" => got == &json!({"ok": true}),
        "error" => got == &json!({"error": rest[0]}),
        "slot" => got["slot"].is_u64(),
        "deadline" => got == &json!({"deadline_ms": (rest[0] != "none").then_some(rest[0])}),
        "timed_out" => got == &json!({"timed_out": rest[0] == "true"}),
        "queued" => {
            let code = match rest[0] {
                "wait" => 0,
                "flush" => 1,
                "write" => 2,
                other => panic!("{scenario}: queued {other}?"),
            };
            got == &json!({"queued": code})
        }
        "write" => got == &json!({"write": rest[0].parse::<u32>().expect("a count")}),
        "pending" => {
            let number = |text: &str| text.parse::<u32>().expect("a count");
            got == &json!({"queued": number(rest[0]), "writes": number(rest[1])})
        }
        "candidates" => {
            let addresses: Vec<&str> =
                got["addresses"].as_array().map_or(vec![], |a| a.iter().filter_map(Value::as_str).collect());
            addresses.join(",") == rest[0]
        }
        "groups" => {
            let addresses: Vec<&str> =
                got["groups"].as_array().map_or(vec![], |g| g.iter().filter_map(|g| g["address"].as_str()).collect());
            addresses.join(",") == rest[0]
        }
        "stats" => rest.iter().all(|pair| {
            let (name, value) = pair.split_once('=').expect("name=value");
            let found = match name.split_once('.') {
                Some((outer, inner)) => &got[outer][inner],
                None => &got[name],
            };
            found.as_u64().map(|n| n.to_string()).as_deref() == Some(value)
        }),
        _ => panic!("{scenario}: unknown expectation {wanted:?}"),
    };
    if !ok {
        fail();
    }
}

#[cfg(test)]
mod tests {
    /// Every scenario's answers are the ones it states (the generator panics otherwise).
    #[test]
    fn scenarios_answer_as_stated() {
        super::file();
    }
}
