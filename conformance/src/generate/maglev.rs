//! `maglev.json`: Maglev lookup tables. Envoy's published tables (transcribed into
//! `reference/maglev-envoy.txt`) routed with integer keys as their own hash, so key `i`
//! reads entry `i % M`; routing cases for the default table, weights, CRC32 with hash
//! tags and a single node; rejected table sizes; and `apply`
//! cases of `add_node`, `remove_node` and `disruption` with their disruption reports.

use serde_json::{json, Value};

use super::cases::{applied, apply_refused, load_case, refused_documents, routed, stated_route, On};
use super::keys::u64_key;
use super::reference::reference_lines;
use super::vector_file::VectorFile;
use crate::documents::{doc, identity, Document};

/// One line of `reference/maglev-envoy.txt`: test name, table size, `(host, weight)`s
/// and the expected host index of every entry.
struct EnvoyTable {
    test: String,
    size: u32,
    hosts: Vec<(String, f64)>,
    assignments: Vec<u32>,
}

fn envoy_tables() -> Vec<EnvoyTable> {
    reference_lines("maglev-envoy.txt")
        .iter()
        .map(|line| {
            let (left, right) = line.split_once('|').expect("`|` separates hosts from assignments");
            let mut words = left.split_whitespace();
            let test = words.next().expect("test name").to_string();
            let size = words.next().expect("table size").parse().expect("table size");
            let hosts = words
                .map(|word| {
                    let (name, weight) = word.rsplit_once('=').expect("name=weight");
                    (name.to_string(), weight.parse().expect("weight"))
                })
                .collect();
            let assignments = right.split_whitespace().map(|word| word.parse().expect("index")).collect();
            EnvoyTable { test, size, hosts, assignments }
        })
        .collect()
}

const FIVE: [&str; 5] = ["m0", "m1", "m2", "m3", "m4"];

fn envoy_doc(table: &EnvoyTable) -> Value {
    let nodes: Vec<Value> = table
        .hosts
        .iter()
        // Envoy's weights are integers: write them as such.
        .map(
            |(name, weight)| {
                if *weight == 1.0 {
                    json!({"id": name})
                } else {
                    json!({"id": name, "weight": *weight as u64})
                }
            },
        )
        .collect();
    doc(Value::Array(nodes), json!({"type": "maglev", "table_size": table.size})).hashing(identity())
}

fn weighted_doc() -> Value {
    let weighted = json!([{"id": "half", "weight": 0.5}, {"id": "base"}, {"id": "double", "weight": 2}, {"id": "x1.5", "weight": 1.5, "zone": "z2", "address": "10.1.0.4:11211"}]);
    doc(weighted, json!({"type": "maglev", "table_size": 1009})).epoch(2)
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "maglev",
        "Maglev hashing: Envoy's published lookup tables (unweighted by address and by host name, weighted), the default 65537-entry table, weights, CRC32 with Redis hash tags, one node, rejected table sizes, and node operations with their disruption reports.",
        "envoy cases: expected_assignments of Envoy's maglev_lb_test.cc tests Basic, BasicWithHostName and Weighted (reference/maglev-envoy.txt), transcribed; all other cases: generator",
    );
    for table in envoy_tables() {
        let id = format!("envoy-{}", table.test.to_lowercase());
        let router = file.topology(&id, envoy_doc(&table));
        // As Envoy's tests do: hashes 0 .. 3M, entry `hash % M`.
        for key in 0..3 * table.size {
            let host = table.assignments[(key % table.size) as usize];
            let node = &table.hosts[host as usize].0;
            stated_route(&mut file, &id, &router, &format!("envoy/{key}"), u64_key(u64::from(key)), (host, node));
        }
        load_case(&mut file, &id, &router);
    }
    routed(&mut file, "maglev-5", doc(&FIVE, json!({"type": "maglev"})));
    routed(&mut file, "maglev-weighted-4", weighted_doc());
    let tagged = doc(&["t0", "t1", "t2"], json!({"type": "maglev", "table_size": 13})).epoch(3);
    routed(&mut file, "maglev-crc32-tag-3", tagged.hashing(json!({"function": "crc32", "hash_tag": "redis"})));
    routed(&mut file, "maglev-single", doc(&["only"], json!({"type": "maglev", "table_size": 2})).epoch(4));
    rejected(&mut file);
    call_cases(&mut file);
    file
}

fn rejected(file: &mut VectorFile) {
    let base = |size: Value| doc(&["a", "b", "c"], json!({"type": "maglev", "table_size": size}));
    let mut bad: Vec<(&str, Value, &str)> = vec![
        ("not-prime", base(json!(65_536)), "invalid_topology"),
        ("not-prime-odd", base(json!(65_535)), "invalid_topology"),
        ("zero", base(json!(0)), "invalid_topology"),
        ("one", base(json!(1)), "invalid_topology"),
        ("smaller-than-node-count", base(json!(2)), "invalid_topology"),
        ("negative", base(json!(-7)), "invalid_topology"),
        ("fraction", base(json!(13.5)), "invalid_topology"),
        ("string", base(json!("65537")), "invalid_topology"),
        ("over-limit", base(json!(1_048_583)), "limit_exceeded"),
        ("over-u32", base(json!(4_294_967_311u64)), "limit_exceeded"),
        ("unknown-field", doc(&["a"], json!({"type": "maglev", "points_per_node": 3})), "invalid_topology"),
    ];
    let mut weighted = base(json!(13));
    weighted["nodes"][1]["weight"] = json!(0);
    bad.push(("weight-zero", weighted, "invalid_topology"));
    refused_documents(file, "load/reject-", bad);
}

/// `apply` cases: `add_node` and `remove_node` report the exact table disruption;
/// `disruption` compares with another document (same table size: entry by entry;
/// another size or strategy: sampled keys).
fn call_cases(file: &mut VectorFile) {
    let bigger = doc(&FIVE, json!({"type": "maglev", "table_size": 131_071})).epoch(7);
    let swapped = doc(&["m0", "m1", "m2", "m3", "m5"], json!({"type": "maglev"}));
    let jump = doc(&FIVE, json!({"type": "jump"}));
    for (label, id, operation) in [
        ("add-node", "maglev-5", json!({"op": "add_node", "node": {"id": "m5", "zone": "z9"}})),
        ("remove-node", "maglev-5", json!({"op": "remove_node", "id": "m2"})),
        ("add-weighted-node", "maglev-weighted-4", json!({"op": "add_node", "node": {"id": "triple", "weight": 3}})),
        ("remove-weighted-node", "maglev-weighted-4", json!({"op": "remove_node", "id": "double"})),
        ("disruption-replace-node", "maglev-5", json!({"op": "disruption", "to": swapped})),
        ("disruption-bigger-table", "maglev-5", json!({"op": "disruption", "to": bigger})),
        ("disruption-to-jump", "maglev-5", json!({"op": "disruption", "to": jump})),
    ] {
        applied(file, &format!("apply/{label}"), On::Topology(id), operation);
    }
    let tight = doc(&["a", "b", "c"], json!({"type": "maglev", "table_size": 3})).to_string();
    let not_prime = doc(&["a"], json!({"type": "maglev", "table_size": 9}));
    let five = On::Topology("maglev-5");
    for (label, on, operation, code) in [
        ("add-node-table-full", On::Text(&tight), json!({"op": "add_node", "node": {"id": "d"}}), "invalid_topology"),
        ("disruption-no-to", five, json!({"op": "disruption"}), "invalid_argument"),
        ("disruption-to-text", five, json!({"op": "disruption", "to": "{}"}), "invalid_argument"),
        (
            "disruption-to-invalid",
            five,
            json!({"op": "disruption", "to": {"format": "shardroute/1"}}),
            "invalid_topology",
        ),
        ("disruption-to-not-prime", five, json!({"op": "disruption", "to": not_prime}), "invalid_topology"),
    ] {
        apply_refused(file, &format!("apply/reject-{label}"), on, operation, code);
    }
}
