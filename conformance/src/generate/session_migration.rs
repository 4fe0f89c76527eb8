//! `session_migration.json`: scenarios of the migration session, seed 002's two ways of
//! moving data: the seed's messages table grown from 5 to 10 shards (`id % n ?: n`)
//! moved lazily, and a vbucket dictionary in motion copied in the background from a
//! stored cursor. Each step's answer is the core's; the generator refuses to write the
//! file unless every answer is also what the scenario states by hand below.

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
        "Scenarios of the migration session (seed 002): the mode a service's routing takes from the topology, the previous one and the one it routed under (plain, background, lazy, catch-up), the read plan (old owner, then new, until moved), the nodes a query over every key reads (each once when safe), the write plan under the fence epoch, the lazy move of a key, the background copy's resumable cursor over moving units, and what a fence refusal means; for the seed's 5 -> 10 messages shards (lazy) and a vbucket dictionary in motion (background).",
        "generator; the answers are also written by hand in conformance/src/generate/session_migration.rs and checked before writing; the 5 -> 10 layout is seed 002's `id % n ?: n`",
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

    let user = |id: u64| u64_key(id);
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
        ("background-on-modulo-is-refused", json!({"before": "five", "after": "ten", "mode": "background"}), vec![]),
        ("a-migration-goes-forward", json!({"before": "ten", "after": "five", "mode": "lazy"}), vec![]),
        ("an-unknown-mode", json!({"before": "five", "after": "ten", "mode": "eager"}), vec![]),
        ("a-settled-dictionary-has-nothing-to-move", json!({"dictionary": "ten", "mode": "background"}), vec![]),
    ];
    let refused = [
        ("background-on-modulo-is-refused", "invalid_argument"),
        ("a-migration-goes-forward", "stale_epoch"),
        ("an-unknown-mode", "invalid_argument"),
        ("a-settled-dictionary-has-nothing-to-move", "invalid_argument"),
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
    file
}
