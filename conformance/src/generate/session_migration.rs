//! `session_migration.json`: scenarios of the migration session: a messages table grown
//! from 5 to 10 shards (`id % n ?: n`) moved lazily, a vbucket dictionary in motion
//! copied in the background from a stored cursor, the same table shrunk from 10 to 5
//! under a TTL (expiration: nothing copied, reads of the old owner until a deadline) and
//! the retirement of the shards a move empties, the copy job's pace (`resume_at`) and the
//! lazy moves of many keys grouped by their steps (`lazy_groups`); and the consistency check (`misplaced`:
//! the keys found on a node or shard that it does not own). Each answer is the core's;
//! the generator refuses to write the file unless every answer is also what the scenario
//! states by hand below.

use serde_json::{json, Value};

use super::keys::u64_key;
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

fn step(call: &str, fields: Value) -> Value {
    let mut step = fields;
    step["call"] = json!(call);
    step
}

/// Panics unless `got` is `wanted`, a JSON literal written by hand.
fn check(scenario: &str, call: &Value, wanted: &Value, got: &Value) {
    assert_eq!(got, wanted, "{scenario}: {call} answered {got}, the scenario says {wanted}");
}

/// A scenario: its name, the case's migration fields, its steps with their answers.
type Scenario<'a> = (&'a str, Value, Vec<(Value, Value)>);

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "session_migration",
        "Scenarios of the migration session: the mode a service's routing takes from the topology, the previous one and the one it routed under (plain, background, lazy, catch-up), the read plan (old owner, then new, until moved; in expiration mode until a deadline, time an input), the next deadline, the nodes a query over every key reads (each once when safe), the write plan under the fence epoch, the lazy move of a key, the background copy's resumable cursor over moving units, what a fence refusal means, the retire actions for the nodes a move empties, the copy job's next start after a step (resume_at: the duty in thousandths of the wall time, the shortest pause) and the lazy moves of many keys grouped by their steps (lazy_groups); for a messages table's 5 -> 10 shards (lazy), its 10 -> 5 shrink under a TTL (expiration, lazy) and vbucket dictionaries in motion (background). Also the consistency check (op misplaced): which keys found on a node or shard it does not own under an epoch.",
        "generator; the answers are also written by hand in conformance/src/generate/session_migration.rs and checked before writing; the 5 -> 10 layout is the messages table's `id % n ?: n`",
    );
    let shards = |n: u32, epoch: u64| {
        let nodes: Vec<Value> = (1..=n).map(|i| json!({"id": format!("shard_{i}")})).collect();
        doc(Value::Array(nodes), json!({"type": "modulo", "one_based": true}))
            .hashing(json!({"integers": "identity"}))
            .epoch(epoch)
    };
    file.topology("five", shards(5, 4));
    file.topology("ten", shards(10, 5));
    file.topology("ten-next", shards(10, 6));
    let nodes: Vec<Value> = ["a", "b", "c"].iter().map(|id| json!({"id": id})).collect();
    let moving = doc(
        Value::Array(nodes),
        json!({"type": "vbucket", "vbuckets": 8,
               "map": [["a"], ["a"], ["b"], ["b"], ["c"], ["c"], ["a"], ["b"]],
               "forward_map": [["a"], ["c"], ["b"], ["a"], ["c"], ["b"], ["c"], ["b"]]}),
    )
    .epoch(9);
    file.topology("moving", moving);
    // 10 -> 5: shards 6 to 10 are emptied (user k goes from shard k to shard k - 5).
    file.topology("five-next", shards(5, 6));
    // A dictionary in motion that empties node c (vbuckets 2 and 3 leave it).
    let nodes: Vec<Value> = ["a", "b", "c"].iter().map(|id| json!({"id": id})).collect();
    let emptying = doc(
        Value::Array(nodes),
        json!({"type": "vbucket", "vbuckets": 4,
               "map": [["a"], ["b"], ["c"], ["c"]],
               "forward_map": [["a"], ["b"], ["a"], ["b"]]}),
    )
    .epoch(11);
    file.topology("emptying", emptying);
    // One settled dictionary, then the same map with keys in other vbuckets: another hash
    // seed (every key), or an override (one key). No vbucket changes owner, so a copy job
    // of whole vbuckets would move nothing while keys change node.
    let settled = |epoch: u64, edit: &dyn Fn(&mut Value)| {
        let nodes: Vec<Value> = ["a", "b", "c"].iter().map(|id| json!({"id": id})).collect();
        let mut document =
            doc(Value::Array(nodes), json!({"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["c"], ["a"]]}))
                .epoch(epoch);
        edit(&mut document);
        document
    };
    file.topology("settled", settled(12, &|_| {}));
    file.topology(
        "settled-reseeded",
        settled(13, &|d| d["hashing"] = json!({"seed": "0f0e0d0c0b0a09080706050403020100"})),
    );
    file.topology(
        "settled-overridden",
        settled(13, &|d| d["strategy"]["overrides"] = json!([{"key": {"utf8": "user:1"}, "vbucket": 1}])),
    );

    let user = |id: u64| u64_key(id);
    let users = |ids: &[u64]| Value::Array(ids.iter().map(|&id| user(id)).collect());
    let scenarios: Vec<Scenario<'_>> = vec![
        (
            "lazy-5-to-10",
            json!({"before": "five", "after": "ten", "mode": "lazy"}),
            vec![
                (step("fence_epoch", json!({})), json!({"epoch": "5"})),
                // User 7: shard 2 of 5, shard 7 of 10.
                // Old owner first (the order's reason is in core/src/migration.rs, read_targets).
                (step("read_plan", json!({"key": user(7), "moved": false})), json!({"nodes": ["shard_2", "shard_7"]})),
                (step("read_plan", json!({"key": user(7), "moved": true})), json!({"nodes": ["shard_7"]})),
                (step("write_plan", json!({"key": user(7)})), json!({"node": "shard_7", "fence_epoch": "5"})),
                (
                    step("lazy_steps", json!({"key": user(7)})),
                    json!({"steps": {"read_from": "shard_2", "write_to": "shard_7", "retire_from": "shard_2", "fence_epoch": "5"}}),
                ),
                // User 12 stays on shard 2; user 10 goes from shard 5 (0 -> n) to shard 10.
                (step("read_plan", json!({"key": user(12), "moved": false})), json!({"nodes": ["shard_2"]})),
                (step("lazy_steps", json!({"key": user(12)})), json!({"steps": null})),
                (
                    step("lazy_steps", json!({"key": user(10)})),
                    json!({"steps": {"read_from": "shard_5", "write_to": "shard_10", "retire_from": "shard_5", "fence_epoch": "5"}}),
                ),
                // A lazy migration copies no units; modulo shards are not fixed units anyway.
                (step("copy_batch", json!({"cursor": 0, "max": 10})), json!({"error": "invalid_argument"})),
                // A shard fenced at epoch 6: the topology moved on past this migration.
                (step("fenced", json!({"min_epoch": "6"})), json!({"refresh": {}})),
                (step("fenced", json!({"min_epoch": "5"})), json!({"error": "invalid_argument"})),
                (step("read_plan", json!({"key": {"u64": "-1"}, "moved": false})), json!({"error": "invalid_key"})),
            ],
        ),
        (
            "background-vbucket-copy-resumes-from-its-cursor",
            json!({"dictionary": "moving", "mode": "background"}),
            vec![
                // The dictionary in motion is the published document: its own epoch fences.
                (step("fence_epoch", json!({})), json!({"epoch": "9"})),
                (step("write_plan", json!({"key": user(1)})), json!({"node": "c", "fence_epoch": "9"})),
                // Moving vbuckets: 1 a->c, 3 b->a, 5 c->b, 6 a->c.
                (
                    step("copy_batch", json!({"cursor": 0, "max": 3})),
                    json!({"units": [[1, "a", "c"], [3, "b", "a"], [5, "c", "b"]], "next": 3}),
                ),
                // A copy job that crashed after storing cursor 3 resumes there.
                (step("copy_batch", json!({"cursor": 3, "max": 3})), json!({"units": [[6, "a", "c"]], "next": null})),
                (step("copy_batch", json!({"cursor": 4, "max": 3})), json!({"units": [], "next": null})),
                (step("copy_batch", json!({"cursor": 5, "max": 3})), json!({"error": "invalid_argument"})),
                (step("copy_batch", json!({"cursor": 0, "max": 0})), json!({"error": "invalid_argument"})),
                // No read moves a key in a background copy: no lazy steps, whatever the key.
                (step("lazy_steps", json!({"key": user(1)})), json!({"steps": null})),
                (step("fenced", json!({"min_epoch": "10"})), json!({"refresh": {}})),
                (step("fenced", json!({"min_epoch": "9"})), json!({"error": "invalid_argument"})),
            ],
        ),
        (
            "routing-plain-nothing-moves",
            json!({"topology": "five"}),
            vec![
                (step("mode", json!({})), json!({"mode": "plain"})),
                (step("fence_epoch", json!({})), json!({"epoch": "4"})),
                (step("read_plan", json!({"key": user(7), "moved": false})), json!({"nodes": ["shard_2"]})),
                (step("write_plan", json!({"key": user(7)})), json!({"node": "shard_2", "fence_epoch": "4"})),
                (step("lazy_steps", json!({"key": user(7)})), json!({"steps": null})),
                (step("copy_batch", json!({"cursor": 0, "max": 10})), json!({"error": "invalid_argument"})),
                (
                    step("scan_nodes", json!({})),
                    json!({"nodes": ["shard_1", "shard_2", "shard_3", "shard_4", "shard_5"]}),
                ),
                (step("fenced", json!({"min_epoch": "5"})), json!({"refresh": {}})),
                // Nothing moves: no deadline, nothing to retire.
                (step("next_deadline", json!({"now_ms": "0"})), json!({"deadline_ms": null})),
                (step("actions", json!({"now_ms": "0", "moved": true})), json!({"actions": []})),
            ],
        ),
        (
            "routing-lazy-with-previous-5-to-10",
            json!({"topology": "ten", "previous": "five"}),
            vec![
                (step("mode", json!({})), json!({"mode": "lazy"})),
                (step("fence_epoch", json!({})), json!({"epoch": "5"})),
                (step("read_plan", json!({"key": user(7), "moved": false})), json!({"nodes": ["shard_2", "shard_7"]})),
                (step("read_plan", json!({"key": user(7), "moved": true})), json!({"nodes": ["shard_7"]})),
                (step("write_plan", json!({"key": user(7)})), json!({"node": "shard_7", "fence_epoch": "5"})),
                (
                    step("lazy_steps", json!({"key": user(7)})),
                    json!({"steps": {"read_from": "shard_2", "write_to": "shard_7", "retire_from": "shard_2", "fence_epoch": "5"}}),
                ),
                (step("copy_batch", json!({"cursor": 0, "max": 10})), json!({"error": "invalid_argument"})),
                // 5 -> 10 moves keys from shard k to shard k + 5 only: every node read once.
                (
                    step("scan_nodes", json!({})),
                    json!({"nodes": ["shard_1", "shard_2", "shard_3", "shard_4", "shard_5",
                                     "shard_6", "shard_7", "shard_8", "shard_9", "shard_10"]}),
                ),
            ],
        ),
        (
            "routing-background-dictionary-in-motion",
            json!({"topology": "moving"}),
            vec![
                (step("mode", json!({})), json!({"mode": "background"})),
                (step("fence_epoch", json!({})), json!({"epoch": "9"})),
                // User 1: vbucket 1, a -> c.
                (step("read_plan", json!({"key": user(1), "moved": false})), json!({"nodes": ["a", "c"]})),
                (step("read_plan", json!({"key": user(1), "moved": true})), json!({"nodes": ["c"]})),
                (step("write_plan", json!({"key": user(1)})), json!({"node": "c", "fence_epoch": "9"})),
                (step("lazy_steps", json!({"key": user(1)})), json!({"steps": null})),
                (
                    step("copy_batch", json!({"cursor": 0, "max": 10})),
                    json!({"units": [[1, "a", "c"], [3, "b", "a"], [5, "c", "b"], [6, "a", "c"]], "next": null}),
                ),
                // Moves a -> c -> b -> a: a cycle, so each node is read twice.
                (step("scan_nodes", json!({})), json!({"nodes": ["a", "b", "c", "a", "b", "c"]})),
            ],
        ),
        (
            "routing-catch-up-before-previous-arrives",
            json!({"topology": "ten", "held": "five"}),
            vec![
                (step("mode", json!({})), json!({"mode": "catch-up"})),
                (step("fence_epoch", json!({})), json!({"epoch": "5"})),
                (step("read_plan", json!({"key": user(7), "moved": false})), json!({"nodes": ["shard_2", "shard_7"]})),
                (step("write_plan", json!({"key": user(7)})), json!({"node": "shard_7", "fence_epoch": "5"})),
                // The moves are for whoever holds previous.
                (step("lazy_steps", json!({"key": user(7)})), json!({"steps": null})),
                (step("copy_batch", json!({"cursor": 0, "max": 10})), json!({"error": "invalid_argument"})),
                // So are the retirements.
                (step("actions", json!({"now_ms": "0", "moved": true})), json!({"actions": []})),
            ],
        ),
        (
            "routing-stale-previous-and-same-held-are-plain",
            json!({"topology": "ten-next", "previous": "five", "held": "ten"}),
            vec![
                (step("mode", json!({})), json!({"mode": "plain"})),
                (step("read_plan", json!({"key": user(7), "moved": false})), json!({"nodes": ["shard_7"]})),
                (step("write_plan", json!({"key": user(7)})), json!({"node": "shard_7", "fence_epoch": "6"})),
                (step("lazy_steps", json!({"key": user(7)})), json!({"steps": null})),
            ],
        ),
        (
            "migration-scan-nodes-5-to-10-reads-each-node-once",
            json!({"before": "five", "after": "ten", "mode": "lazy"}),
            vec![(
                step("scan_nodes", json!({})),
                json!({"nodes": ["shard_1", "shard_2", "shard_3", "shard_4", "shard_5",
                                 "shard_6", "shard_7", "shard_8", "shard_9", "shard_10"]}),
            )],
        ),
        (
            "expiration-10-to-5-reads-old-until-the-deadline-then-retires",
            json!({"before": "ten", "after": "five-next", "mode": "expiration", "until_ms": "60000"}),
            vec![
                (step("mode", json!({})), json!({"mode": "expiration"})),
                (step("fence_epoch", json!({})), json!({"epoch": "6"})),
                // User 7: shard 7 of 10, shard 2 of 5. Writes go to the new owner from the start.
                (step("write_plan", json!({"key": user(7)})), json!({"node": "shard_2", "fence_epoch": "6"})),
                // Before the deadline: the old owner, then the new one (holding the newer writes).
                (
                    step("read_plan_at", json!({"key": user(7), "moved": false, "now_ms": "59999"})),
                    json!({"nodes": ["shard_7", "shard_2"]}),
                ),
                // Without the time, the read plan looks at both (safe at any time).
                (step("read_plan", json!({"key": user(7), "moved": false})), json!({"nodes": ["shard_7", "shard_2"]})),
                // From the deadline on the old copies have expired: the new owner alone.
                (
                    step("read_plan_at", json!({"key": user(7), "moved": false, "now_ms": "60000"})),
                    json!({"nodes": ["shard_2"]}),
                ),
                // User 12 stays on shard 2.
                (
                    step("read_plan_at", json!({"key": user(12), "moved": false, "now_ms": "0"})),
                    json!({"nodes": ["shard_2"]}),
                ),
                (step("next_deadline", json!({"now_ms": "0"})), json!({"deadline_ms": "60000"})),
                (step("next_deadline", json!({"now_ms": "59999"})), json!({"deadline_ms": "60000"})),
                (step("next_deadline", json!({"now_ms": "60000"})), json!({"deadline_ms": null})),
                // Nothing is ever copied or moved by a read.
                (step("lazy_steps", json!({"key": user(7)})), json!({"steps": null})),
                (step("copy_batch", json!({"cursor": 0, "max": 10})), json!({"error": "invalid_argument"})),
                // The deadline decides the retirement, not moved.
                (step("actions", json!({"now_ms": "59999", "moved": true})), json!({"actions": []})),
                (
                    step("actions", json!({"now_ms": "60000", "moved": false})),
                    json!({"actions": [{"kind": "retire", "node": "shard_6"}, {"kind": "retire", "node": "shard_7"},
                                       {"kind": "retire", "node": "shard_8"}, {"kind": "retire", "node": "shard_9"},
                                       {"kind": "retire", "node": "shard_10"}]}),
                ),
                (
                    step("read_plan_at", json!({"key": {"u64": "-1"}, "moved": false, "now_ms": "0"})),
                    json!({"error": "invalid_key"}),
                ),
            ],
        ),
        (
            "expiration-growing-empties-no-shard",
            json!({"before": "five", "after": "ten", "mode": "expiration", "until_ms": "0"}),
            vec![
                (
                    step("read_plan_at", json!({"key": user(7), "moved": false, "now_ms": "0"})),
                    json!({"nodes": ["shard_7"]}),
                ),
                (step("next_deadline", json!({"now_ms": "0"})), json!({"deadline_ms": null})),
                (step("actions", json!({"now_ms": "0", "moved": true})), json!({"actions": []})),
            ],
        ),
        (
            "lazy-10-to-5-retires-once-every-key-moved",
            json!({"before": "ten", "after": "five-next", "mode": "lazy"}),
            vec![
                // Time changes nothing in a lazy move: moved decides.
                (
                    step("read_plan_at", json!({"key": user(7), "moved": false, "now_ms": "18446744073709551615"})),
                    json!({"nodes": ["shard_7", "shard_2"]}),
                ),
                (step("next_deadline", json!({"now_ms": "0"})), json!({"deadline_ms": null})),
                (step("actions", json!({"now_ms": "18446744073709551615", "moved": false})), json!({"actions": []})),
                (
                    step("actions", json!({"now_ms": "0", "moved": true})),
                    json!({"actions": [{"kind": "retire", "node": "shard_6"}, {"kind": "retire", "node": "shard_7"},
                                       {"kind": "retire", "node": "shard_8"}, {"kind": "retire", "node": "shard_9"},
                                       {"kind": "retire", "node": "shard_10"}]}),
                ),
            ],
        ),
        (
            "background-retires-the-emptied-node-once-the-copy-is-done",
            json!({"dictionary": "emptying", "mode": "background"}),
            vec![
                (
                    step("copy_batch", json!({"cursor": 0, "max": 10})),
                    json!({"units": [[2, "c", "a"], [3, "c", "b"]], "next": null}),
                ),
                (step("actions", json!({"now_ms": "0", "moved": false})), json!({"actions": []})),
                // c is still listed in the dictionary, but owns no vbucket of the forward map.
                (
                    step("actions", json!({"now_ms": "0", "moved": true})),
                    json!({"actions": [{"kind": "retire", "node": "c"}]}),
                ),
            ],
        ),
        (
            "routing-background-dictionary-retires-the-emptied-node",
            json!({"topology": "emptying"}),
            vec![
                (step("mode", json!({})), json!({"mode": "background"})),
                (
                    step("actions", json!({"now_ms": "0", "moved": true})),
                    json!({"actions": [{"kind": "retire", "node": "c"}]}),
                ),
            ],
        ),
        (
            // A sweep (or a service's pending moves) moves users with the same lazy steps
            // in one statement per step. 5 -> 10: user k from shard k % 5 ?: 5 to k % 10 ?: 10.
            "lazy-groups-5-to-10",
            json!({"before": "five", "after": "ten", "mode": "lazy"}),
            vec![
                // 7 and 17: 2 -> 7; 10 and 20: 5 -> 10; 8: 3 -> 8; 12, 2, 5 and 15 stay.
                // Groups in the order of their first user, not by node.
                (
                    step("lazy_groups", json!({"keys": users(&[7, 12, 10, 2, 17, 8, 5, 20, 15])})),
                    json!({"groups": [
                        {"steps": {"read_from": "shard_2", "write_to": "shard_7", "retire_from": "shard_2", "fence_epoch": "5"},
                         "indices": [0, 4]},
                        {"steps": {"read_from": "shard_5", "write_to": "shard_10", "retire_from": "shard_5", "fence_epoch": "5"},
                         "indices": [2, 7]},
                        {"steps": {"read_from": "shard_3", "write_to": "shard_8", "retire_from": "shard_3", "fence_epoch": "5"},
                         "indices": [5]},
                    ]}),
                ),
                (step("lazy_groups", json!({"keys": users(&[12, 2, 5])})), json!({"groups": []})),
                (step("lazy_groups", json!({"keys": []})), json!({"groups": []})),
                (step("lazy_groups", json!({"keys": [user(7), {"u64": "-1"}]})), json!({"error": "invalid_key"})),
                // The sweep's pace is the copy job's: 10 ms of work at 5%, 190 ms of rest.
                (step("resume_at", json!({"started_ms": "1000", "finished_ms": "1010"})), json!({"resume_ms": "1200"})),
            ],
        ),
        (
            "background-copy-job-paces-itself",
            json!({"dictionary": "moving", "mode": "background"}),
            vec![
                // No read moves a key in a background copy: no lazy groups either.
                (step("lazy_groups", json!({"keys": users(&[1, 3, 5])})), json!({"groups": []})),
                // The next start: finished + max(min_pause, ceil(took * (1000 - duty) / duty)).
                // The defaults: duty 50 per mille (5%), no shortest pause: 10 ms, then 190 ms.
                (step("resume_at", json!({"started_ms": "1000", "finished_ms": "1010"})), json!({"resume_ms": "1200"})),
                (
                    step(
                        "resume_at",
                        json!({"started_ms": "1000", "finished_ms": "1010", "duty_per_mille": 50, "min_pause_ms": "20"}),
                    ),
                    json!({"resume_ms": "1200"}),
                ),
                // 1 ms at the default 5% rests 19 ms: the shortest pause, 20 ms, wins.
                (
                    step("resume_at", json!({"started_ms": "1000", "finished_ms": "1001", "min_pause_ms": "20"})),
                    json!({"resume_ms": "1021"}),
                ),
                // 25%: 10 ms, then 30 ms.
                (
                    step("resume_at", json!({"started_ms": "0", "finished_ms": "10", "duty_per_mille": 250})),
                    json!({"resume_ms": "40"}),
                ),
                // Duty 1000 rests only the shortest pause.
                (
                    step("resume_at", json!({"started_ms": "1000", "finished_ms": "1500", "duty_per_mille": 1000})),
                    json!({"resume_ms": "1500"}),
                ),
                (
                    step(
                        "resume_at",
                        json!({"started_ms": "1000", "finished_ms": "1500", "duty_per_mille": 1000, "min_pause_ms": "20"}),
                    ),
                    json!({"resume_ms": "1520"}),
                ),
                // Rounded up, never over the duty: 1 ms at 3 per mille, 997 / 3 = 332.3 -> 333 ms.
                (
                    step("resume_at", json!({"started_ms": "0", "finished_ms": "1", "duty_per_mille": 3})),
                    json!({"resume_ms": "334"}),
                ),
                // An empty step: no rest.
                (step("resume_at", json!({"started_ms": "5000", "finished_ms": "5000"})), json!({"resume_ms": "5000"})),
                // Saturating at 2^64 - 1: a rest past it, a pause past it.
                (
                    step(
                        "resume_at",
                        json!({"started_ms": "0", "finished_ms": "18446744073709551615", "duty_per_mille": 1}),
                    ),
                    json!({"resume_ms": "18446744073709551615"}),
                ),
                (
                    step(
                        "resume_at",
                        json!({"started_ms": "1", "finished_ms": "1", "min_pause_ms": "18446744073709551615"}),
                    ),
                    json!({"resume_ms": "18446744073709551615"}),
                ),
                // A step that ends before it starts; a duty of 0 (never works) or over 1000.
                (
                    step("resume_at", json!({"started_ms": "1010", "finished_ms": "1000"})),
                    json!({"error": "invalid_argument"}),
                ),
                (
                    step("resume_at", json!({"started_ms": "1000", "finished_ms": "1010", "duty_per_mille": 0})),
                    json!({"error": "invalid_argument"}),
                ),
                (
                    step("resume_at", json!({"started_ms": "1000", "finished_ms": "1010", "duty_per_mille": 1001})),
                    json!({"error": "invalid_argument"}),
                ),
            ],
        ),
        ("expiration-needs-its-deadline", json!({"before": "ten", "after": "five-next", "mode": "expiration"}), vec![]),
        (
            "only-expiration-has-a-deadline",
            json!({"before": "ten", "after": "five-next", "mode": "lazy", "until_ms": "60000"}),
            vec![],
        ),
        ("background-on-modulo-is-refused", json!({"before": "five", "after": "ten", "mode": "background"}), vec![]),
        ("a-migration-goes-forward", json!({"before": "ten", "after": "five", "mode": "lazy"}), vec![]),
        ("an-unknown-mode", json!({"before": "five", "after": "ten", "mode": "eager"}), vec![]),
        ("a-settled-dictionary-has-nothing-to-move", json!({"dictionary": "ten", "mode": "background"}), vec![]),
        (
            "background-is-refused-when-the-hash-moves-keys-between-vbuckets",
            json!({"before": "settled", "after": "settled-reseeded", "mode": "background"}),
            vec![],
        ),
        (
            "background-is-refused-when-an-override-moves-a-key-between-vbuckets",
            json!({"before": "settled", "after": "settled-overridden", "mode": "background"}),
            vec![],
        ),
        (
            "lazy-moves-keys-between-vbuckets",
            json!({"before": "settled", "after": "settled-overridden", "mode": "lazy"}),
            vec![(
                json!({"call": "lazy_steps", "key": {"utf8": "user:1"}}),
                json!({"steps": {"fence_epoch": "13", "read_from": "a", "write_to": "b", "retire_from": "a"}}),
            )],
        ),
    ];
    let refused = [
        ("background-on-modulo-is-refused", "invalid_argument"),
        ("a-migration-goes-forward", "stale_epoch"),
        ("an-unknown-mode", "invalid_argument"),
        ("a-settled-dictionary-has-nothing-to-move", "invalid_argument"),
        ("background-is-refused-when-the-hash-moves-keys-between-vbuckets", "invalid_argument"),
        ("background-is-refused-when-an-override-moves-a-key-between-vbuckets", "invalid_argument"),
        ("expiration-needs-its-deadline", "invalid_argument"),
        ("only-expiration-has-a-deadline", "invalid_argument"),
    ];
    for (name, fields, steps) in scenarios {
        let mut case = fields;
        case["op"] = json!("migration_session");
        case["steps"] = Value::Array(steps.iter().map(|(call, _)| call.clone()).collect());
        let expect =
            crate::session::migration_session(&file.to_value(), &case).unwrap_or_else(|err| panic!("{name}: {err}"));
        if let Some((_, code)) = refused.iter().find(|(refused, _)| *refused == name) {
            assert_eq!(expect, json!({"error": code}), "{name}");
        } else {
            let results = expect["results"].as_array().cloned().unwrap_or_default();
            assert_eq!(results.len(), steps.len(), "{name}: {expect}");
            for ((call, wanted), got) in steps.iter().zip(&results) {
                check(name, call, wanted, got);
            }
        }
        case["expect"] = expect;
        file.case(name, case);
    }

    // The consistency check: keys found on a node (or shard), which it does not own.
    let checks: Vec<(&str, Value, Value)> = vec![
        (
            // After 5 -> 10, shard_2 still holding users 7 and 17 (copies left behind).
            "misplaced-by-node-after-5-to-10",
            json!({"topology": "ten", "node": "shard_2", "keys": users(&[2, 7, 12, 17, 22])}),
            json!({"misplaced": [1, 3], "count": 2, "checked": 5}),
        ),
        (
            // After 10 -> 5, user 7 belongs on shard_2 again.
            "misplaced-none-after-10-to-5",
            json!({"topology": "five-next", "node": "shard_2", "keys": users(&[2, 7, 12])}),
            json!({"misplaced": [], "count": 0, "checked": 3}),
        ),
        (
            // Shard 1 of modulo 10 (one-based: shards 1 to 10; user k on shard k % 10 ?: 10).
            "misplaced-by-shard",
            json!({"topology": "ten", "shard": 1, "keys": users(&[1, 11, 2, 21])}),
            json!({"misplaced": [2], "count": 1, "checked": 4}),
        ),
        (
            "misplaced-of-no-keys",
            json!({"topology": "ten", "node": "shard_1", "keys": []}),
            json!({"misplaced": [], "count": 0, "checked": 0}),
        ),
        (
            // A node the topology does not list (a typo, or a node retired from it).
            "misplaced-unknown-node-is-refused",
            json!({"topology": "five-next", "node": "shard_7", "keys": users(&[1])}),
            json!({"error": "invalid_argument"}),
        ),
        (
            // One-based shards are 1 to 10: there is no shard 0.
            "misplaced-shard-out-of-range-is-refused",
            json!({"topology": "ten", "shard": 0, "keys": users(&[1])}),
            json!({"error": "invalid_argument"}),
        ),
        (
            "misplaced-bad-key",
            json!({"topology": "ten", "node": "shard_1", "keys": [user(1), {"u64": "-1"}]}),
            json!({"error": "invalid_key"}),
        ),
    ];
    for (name, fields, wanted) in checks {
        let mut case = fields;
        case["op"] = json!("misplaced");
        let expect = crate::session::misplaced(&file.to_value(), &case).unwrap_or_else(|err| panic!("{name}: {err}"));
        check(name, &case, &wanted, &expect);
        case["expect"] = expect;
        file.case(name, case);
    }
    file
}
