//! Range operations (split, median split, merge, move, pre-split) on `key_range` and
//! `hash_range`: each moves exactly the keys it names, reports exactly those moves, and
//! gives a valid canonical topology one epoch later.

use std::fmt::Debug;

mod common;

use common::{doc, hex, key_range_doc, range_doc, Doc};
use proptest::prelude::*;
use serde_json::{json, Value};
use shardroute::strategy::partitioned::hash_range::uniform_boundaries;
use shardroute::{ops, Key, Router, Topology};

/// A hash-range table over integer keys that are their own hash.
fn hash_range_doc(boundaries: &[u64], owners: &[usize], nodes: usize) -> Doc {
    range_doc("hash_range", boundaries.iter().map(|&b| json!(b)), owners, nodes)
        .hashing(json!({"integers": "identity"}))
}

/// A position written in a report: a key object as its bytes in key order.
fn key_position(value: &Value) -> Vec<u8> {
    if let Some(text) = value["utf8"].as_str() {
        text.as_bytes().to_vec()
    } else if let Some(digits) = value["hex"].as_str() {
        (0..digits.len()).step_by(2).map(|i| u8::from_str_radix(&digits[i..i + 2], 16).unwrap()).collect()
    } else {
        value["u64"].as_str().unwrap().parse::<u64>().unwrap().to_be_bytes().to_vec()
    }
}

/// A position written in a report: a u64 as a number or a decimal string.
fn hash_position(value: &Value) -> u64 {
    value.as_u64().unwrap_or_else(|| value.as_str().unwrap().parse().unwrap())
}

/// Applies `operation`, checks the epoch and the canonical round trip, returns the new
/// router and the report.
fn apply(before: &Router, operation: Value) -> Result<(Router, Value), shardroute::Error> {
    let result = ops::apply(before.topology(), &operation)?;
    let topology = Topology::from_value(&result["topology"]).expect("the result is a valid document");
    assert_eq!(topology.epoch, before.epoch() + 1);
    assert_eq!(Topology::from_value(&topology.to_value()).unwrap(), topology);
    Ok((Router::new(topology).expect("the result compiles"), result))
}

/// The report's `moved` pieces are ordered and disjoint, and a probe's owner changed
/// exactly when it lies in a piece, from that piece's `from` to its `to`.
fn check_moved<P: Ord + Debug>(
    before: &Router,
    after: &Router,
    moved: &Value,
    probes: &[(P, Key<'_>)],
    position: impl Fn(&Value) -> P,
) -> Result<(), TestCaseError> {
    let pieces: Vec<(P, Option<P>, &str, &str)> = moved
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let end = if m["end"].is_null() { None } else { Some(position(&m["end"])) };
            (position(&m["start"]), end, m["from"].as_str().unwrap(), m["to"].as_str().unwrap())
        })
        .collect();
    for pair in pieces.windows(2) {
        prop_assert!(pair[0].1.as_ref().is_some_and(|end| end <= &pair[1].0), "pieces overlap: {moved}");
    }
    for (at, key) in probes {
        let piece = pieces.iter().find(|(start, end, _, _)| start <= at && end.as_ref().is_none_or(|end| at < end));
        let (from, to) = (before.node(*key).unwrap(), after.node(*key).unwrap());
        match piece {
            Some(piece) => prop_assert_eq!((piece.2, piece.3), (from, to), "{:?} in {}", at, moved),
            None => prop_assert_eq!(from, to, "{:?} moved unreported: {}", at, moved),
        }
    }
    Ok(())
}

fn small_key() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    proptest::collection::vec(0u8..4, 0..5)
}

/// A key-range table over a small alphabet, so keys often equal or extend boundaries.
fn key_table(min_boundaries: usize) -> impl proptest::strategy::Strategy<Value = (Vec<Vec<u8>>, Vec<usize>, usize)> {
    (1usize..5, proptest::collection::btree_set(proptest::collection::vec(0u8..4, 1..4), min_boundaries..8))
        .prop_flat_map(|(nodes, boundaries)| {
            let boundaries: Vec<Vec<u8>> = boundaries.into_iter().collect();
            let count = boundaries.len() + 1;
            (Just(boundaries), proptest::collection::vec(0..nodes, count), Just(nodes))
        })
}

fn hash_table(min_boundaries: usize) -> impl proptest::strategy::Strategy<Value = (Vec<u64>, Vec<usize>, usize)> {
    // Boundaries in a small space so that random probes land in every range.
    (1usize..5, proptest::collection::btree_set(1u64..1000, min_boundaries..8)).prop_flat_map(|(nodes, cuts)| {
        let boundaries: Vec<u64> = cuts.into_iter().collect();
        let count = boundaries.len() + 1;
        (Just(boundaries), proptest::collection::vec(0..nodes, count), Just(nodes))
    })
}

fn key_range_of(boundaries: &[Vec<u8>], key: &[u8]) -> usize {
    boundaries.iter().filter(|b| b.as_slice() <= key).count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn key_split_moves_only_the_upper_half_to_its_node((boundaries, owners, nodes) in key_table(0), at in small_key(), node in 0usize..5, name_shard in any::<bool>(), probes in proptest::collection::vec(small_key(), 0..40)) {
        let before = key_range_doc(&boundaries, &owners, nodes).router();
        let shard = key_range_of(&boundaries, &at);
        let node = node % nodes;
        let mut operation = json!({"op": "range_split", "at": {"hex": hex(&at)}, "node": format!("n{node}")});
        if name_shard {
            operation["shard"] = json!(shard);
        }
        let start_of_range = if shard == 0 { Vec::new() } else { boundaries[shard - 1].clone() };
        if at == start_of_range {
            prop_assert_eq!(apply(&before, operation).unwrap_err().code(), "invalid_argument");
            return Ok(());
        }
        let (after, report) = apply(&before, operation).unwrap();
        prop_assert_eq!(&report["shard"], &json!(shard));
        prop_assert_eq!(key_position(&report["boundary"]), at.clone());
        let mut all: Vec<Vec<u8>> = probes;
        all.extend(boundaries.iter().cloned());
        all.push(at.clone());
        for key in &all {
            let old = key_range_of(&boundaries, key);
            let upper = old == shard && key >= &at;
            let expected_shard = if old < shard || (old == shard && !upper) { old } else { old + 1 };
            prop_assert_eq!(after.route(key.as_slice()).unwrap() as usize, expected_shard);
            let expected_node = if upper { format!("n{node}") } else { format!("n{}", owners[old]) };
            prop_assert_eq!(after.node(key.as_slice()).unwrap(), expected_node);
        }
        let probes: Vec<(Vec<u8>, Key)> = all.iter().map(|k| (k.clone(), Key::Bytes(k))).collect();
        check_moved(&before, &after, &report["moved"], &probes, key_position)?;
    }

    #[test]
    fn hash_split_moves_only_the_upper_half_to_its_node((boundaries, owners, nodes) in hash_table(0), at in 0u64..1100, node in 0usize..5, probes in proptest::collection::vec(0u64..1100, 0..40)) {
        let before = hash_range_doc(&boundaries, &owners, nodes).router();
        let shard = boundaries.iter().filter(|&&b| b <= at).count();
        let node = node % nodes;
        let operation = json!({"op": "range_split", "shard": shard, "at": at, "node": format!("n{node}")});
        if at == 0 || boundaries.contains(&at) {
            prop_assert_eq!(apply(&before, operation).unwrap_err().code(), "invalid_argument");
            return Ok(());
        }
        let (after, report) = apply(&before, operation).unwrap();
        let mut all = probes;
        all.extend(boundaries.iter().flat_map(|&b| [b - 1, b]));
        all.extend([at - 1, at, at + 1, 0, u64::MAX]);
        for &key in &all {
            let old = before.route(key).unwrap() as usize;
            let upper = old == shard && key >= at;
            let expected_node = if upper { format!("n{node}") } else { format!("n{}", owners[old]) };
            prop_assert_eq!(after.node(key).unwrap(), expected_node);
            prop_assert_eq!(after.route(key).unwrap() as usize, if old < shard || (old == shard && !upper) { old } else { old + 1 });
        }
        let probes: Vec<(u64, Key)> = all.iter().map(|&k| (k, Key::U64(k))).collect();
        check_moved(&before, &after, &report["moved"], &probes, hash_position)?;
    }

    #[test]
    fn merge_moves_only_the_second_range((boundaries, owners, nodes) in key_table(1), pick in any::<usize>(), probes in proptest::collection::vec(small_key(), 0..40)) {
        let before = key_range_doc(&boundaries, &owners, nodes).router();
        let shard = pick % boundaries.len();
        let (after, report) = apply(&before, json!({"op": "range_merge", "shard": shard})).unwrap();
        prop_assert_eq!(key_position(&report["removed_boundary"]), boundaries[shard].clone());
        let mut all = probes;
        all.extend(boundaries.iter().cloned());
        for key in &all {
            let old = key_range_of(&boundaries, key);
            let expected_shard = if old <= shard { old } else { old - 1 };
            prop_assert_eq!(after.route(key.as_slice()).unwrap() as usize, expected_shard);
            let expected_owner = if old == shard + 1 { owners[shard] } else { owners[old] };
            prop_assert_eq!(after.node(key.as_slice()).unwrap(), format!("n{expected_owner}"));
        }
        let probes: Vec<(Vec<u8>, Key)> = all.iter().map(|k| (k.clone(), Key::Bytes(k))).collect();
        check_moved(&before, &after, &report["moved"], &probes, key_position)?;
        // The last range has no right neighbour.
        let last = boundaries.len();
        prop_assert_eq!(apply(&before, json!({"op": "range_merge", "shard": last})).unwrap_err().code(), "invalid_argument");
    }

    #[test]
    fn move_moves_exactly_one_range((boundaries, owners, nodes) in hash_table(0), pick in any::<usize>(), node in 0usize..5, probes in proptest::collection::vec(0u64..1100, 1..40)) {
        let before = hash_range_doc(&boundaries, &owners, nodes).router();
        let shard = pick % (boundaries.len() + 1);
        let (after, report) = apply(&before, json!({"op": "range_move", "shard": shard, "node": format!("n{}", node % nodes)})).unwrap();
        for &key in &probes {
            let old = before.route(key).unwrap() as usize;
            prop_assert_eq!(after.route(key).unwrap() as usize, old);
            let expected = if old == shard { node % nodes } else { owners[old] };
            prop_assert_eq!(after.node(key).unwrap(), format!("n{expected}"));
        }
        let probes: Vec<(u64, Key)> = probes.iter().map(|&k| (k, Key::U64(k))).collect();
        check_moved(&before, &after, &report["moved"], &probes, hash_position)?;
    }

    #[test]
    fn median_split_halves_the_sample((boundaries, owners, nodes) in key_table(0), pick in any::<usize>(), sample in proptest::collection::vec(small_key(), 0..30)) {
        let before = key_range_doc(&boundaries, &owners, nodes).router();
        let shard = pick % (boundaries.len() + 1);
        let sample_json: Vec<Value> = sample.iter().map(|k| json!({"hex": hex(k)})).collect();
        let result = apply(&before, json!({"op": "range_split_median", "shard": shard, "sample": sample_json, "node": {"id": "fresh"}}));
        let mut inside: Vec<&Vec<u8>> = sample.iter().filter(|k| key_range_of(&boundaries, k) == shard).collect();
        inside.sort();
        inside.dedup();
        if inside.len() < 2 {
            prop_assert_eq!(result.unwrap_err().code(), "invalid_argument");
            return Ok(());
        }
        let (after, report) = result.unwrap();
        prop_assert_eq!(&report["added"], &json!(["fresh"]));
        let m = inside.len();
        let below = inside.iter().filter(|k| after.route(k.as_slice()).unwrap() as usize == shard).count();
        let above = inside.iter().filter(|k| after.route(k.as_slice()).unwrap() as usize == shard + 1).count();
        prop_assert_eq!((below, above), (m / 2, m - m / 2));
        for key in &inside[m / 2..] {
            prop_assert_eq!(after.node(key.as_slice()).unwrap(), "fresh");
        }
        let mut all = sample.clone();
        all.extend(boundaries.iter().cloned());
        let probes: Vec<(Vec<u8>, Key)> = all.iter().map(|k| (k.clone(), Key::Bytes(k))).collect();
        check_moved(&before, &after, &report["moved"], &probes, key_position)?;
    }

    #[test]
    fn presplit_gives_equal_counts((boundaries, owners, nodes) in key_table(0), sample in proptest::collection::vec(small_key(), 0..60), ranges in 1u32..8, rotate in 0usize..4) {
        let before = key_range_doc(&boundaries, &owners, nodes).router();
        let sample_json: Vec<Value> = sample.iter().map(|k| json!({"hex": hex(k)})).collect();
        let assign: Vec<String> = (0..nodes).map(|i| format!("n{}", (i + rotate) % nodes)).collect();
        let result = apply(&before, json!({"op": "range_presplit", "ranges": ranges, "sample": sample_json, "nodes": assign}));
        let mut distinct = sample.clone();
        distinct.sort();
        distinct.dedup();
        let m = distinct.len();
        if ranges > 1 && m < ranges as usize {
            prop_assert_eq!(result.unwrap_err().code(), "invalid_argument");
            return Ok(());
        }
        let (after, report) = result.unwrap();
        prop_assert_eq!(after.shard_range(), 0..ranges);
        let mut counts = vec![0usize; ranges as usize];
        for key in &distinct {
            counts[after.route(key.as_slice()).unwrap() as usize] += 1;
        }
        let (low, high) = (m / ranges as usize, m.div_ceil(ranges as usize));
        prop_assert!(counts.iter().all(|&c| c == low || c == high), "{counts:?} for {m} keys");
        let written: Vec<Vec<u8>> = report["boundaries"].as_array().unwrap().iter().map(key_position).collect();
        prop_assert_eq!(written.len() as u32, ranges - 1);
        for shard in 0..ranges {
            let owner = &assign[shard as usize % assign.len()];
            // The shard's first key (its boundary, or the empty key) is owned round-robin.
            let first = if shard == 0 { Vec::new() } else { written[shard as usize - 1].clone() };
            prop_assert_eq!(after.node(first.as_slice()).unwrap(), owner.as_str());
        }
        let mut all = sample.clone();
        all.extend(boundaries.iter().cloned());
        let probes: Vec<(Vec<u8>, Key)> = all.iter().map(|k| (k.clone(), Key::Bytes(k))).collect();
        check_moved(&before, &after, &report["moved"], &probes, key_position)?;
    }

    #[test]
    fn operations_never_panic(op in prop_oneof![Just("range_split"), Just("range_split_median"), Just("range_merge"), Just("range_move"), Just("range_presplit"), Just("range_other")],
                              fields in proptest::collection::vec((prop_oneof![Just("at"), Just("shard"), Just("node"), Just("sample"), Just("ranges"), Just("nodes"), Just("x")], 0usize..12), 0..5),
                              hashed in any::<bool>()) {
        let values = [json!(0), json!(1), json!(-1), json!("n0"), json!("zz"), json!({"id": "new"}), json!({"id": 3}),
            json!([{"utf8": "a"}, {"hex": "00"}, {"u64": "5"}]), json!({"utf8": "m"}), json!("18446744073709551616"), json!(null), json!(3000000)];
        let mut operation = json!({"op": op});
        for (name, value) in fields {
            operation[name] = values[value].clone();
        }
        let before = if hashed {
            hash_range_doc(&[100, 200], &[0, 1, 0], 2).router()
        } else {
            key_range_doc(&[b"m".to_vec()], &[0, 1], 2).router()
        };
        if let Ok((after, _)) = apply(&before, operation) {
            let _ = after.node("k");
        }
    }
}

fn alphabet() -> Router {
    doc(&["a", "b", "c"])
        .strategy(json!({"type": "key_range", "boundaries": [{"utf8": "g"}, {"utf8": "p"}], "ranges": ["a", "b", "c"]}))
        .epoch(7)
        .router()
}

#[test]
fn a_split_reports_what_moved_in_key_ranges() {
    let (after, report) =
        apply(&alphabet(), json!({"op": "range_split", "at": {"utf8": "k"}, "node": {"id": "d", "zone": "z9"}}))
            .unwrap();
    assert_eq!(report["shard"], 1);
    assert_eq!(report["boundary"], json!({"utf8": "k"}));
    assert_eq!(report["added"], json!(["d"]));
    assert_eq!(report["moved"], json!([{"start": {"utf8": "k"}, "end": {"utf8": "p"}, "from": "b", "to": "d"}]));
    assert_eq!(after.nodes().last().unwrap().zone.as_deref(), Some("z9"));
    let strategy: Value = serde_json::from_str::<Value>(&after.to_json()).unwrap()["strategy"].clone();
    assert_eq!(strategy["ranges"], json!(["a", "b", "d", "c"]));
    // A pure split (no node) moves nothing.
    let (_, report) = apply(&alphabet(), json!({"op": "range_split", "at": {"utf8": "b"}})).unwrap();
    assert_eq!(report["moved"], json!([]));
    assert_eq!(report["added"], json!([]));
    // Merging the first two ranges moves [g, p) to a; the report's end of space is null.
    let (_, report) = apply(&alphabet(), json!({"op": "range_merge", "shard": 1, "node": "a"})).unwrap();
    assert_eq!(report["removed_boundary"], json!({"utf8": "p"}));
    assert_eq!(
        report["moved"],
        json!([{"start": {"utf8": "g"}, "end": {"utf8": "p"}, "from": "b", "to": "a"},
               {"start": {"utf8": "p"}, "end": null, "from": "c", "to": "a"}])
    );
    // Adjacent pieces with the same move are joined: the new boundary "k" cuts [g, p),
    // whose halves both go from b to c, into two pieces reported as one.
    let (_, report) = apply(
        &alphabet(),
        json!({"op": "range_presplit", "ranges": 2, "sample": [{"utf8": "a"}, {"utf8": "k"}], "nodes": ["c"]}),
    )
    .unwrap();
    assert_eq!(report["boundaries"], json!([{"utf8": "k"}]));
    assert_eq!(
        report["moved"],
        json!([{"start": {"utf8": ""}, "end": {"utf8": "g"}, "from": "a", "to": "c"},
               {"start": {"utf8": "g"}, "end": {"utf8": "p"}, "from": "b", "to": "c"}])
    );
}

#[test]
fn hash_presplit_without_a_sample_is_uniform() {
    let before = hash_range_doc(&[5], &[0, 1], 3).router();
    let (after, report) = apply(&before, json!({"op": "range_presplit", "ranges": 6})).unwrap();
    let boundaries: Vec<u64> = report["boundaries"].as_array().unwrap().iter().map(hash_position).collect();
    assert_eq!(boundaries, uniform_boundaries(6));
    let owners: Vec<&str> =
        (0..6u64).map(|i| after.node(uniform_boundaries(6).get(i as usize).copied().unwrap_or(0)).unwrap()).collect();
    assert_eq!(owners, ["n1", "n2", "n0", "n1", "n2", "n0"]); // shard i+1 starts at boundary i
                                                              // With a sample, quantiles of the sample's hashes (identity: the integers themselves).
    let sample: Vec<Value> = (0..9u64).map(|i| json!({"u64": (i * 100).to_string()})).collect();
    let (_, report) = apply(&before, json!({"op": "range_presplit", "ranges": 3, "sample": sample})).unwrap();
    assert_eq!(report["boundaries"], json!([300, 600]));
}

#[test]
fn rejected_operations() {
    let keys = alphabet();
    let hashes = hash_range_doc(&[100, 200], &[0, 1, 0], 2).router();
    let cases: &[(&Router, Value, &str, &str)] = &[
        (
            &keys,
            json!({"op": "range_split", "at": {"utf8": "g"}}),
            "invalid_argument",
            "operation.at: {\"utf8\":\"g\"} is not strictly inside range 1",
        ),
        (
            &keys,
            json!({"op": "range_split", "at": {"utf8": "z"}, "shard": 0}),
            "invalid_argument",
            "operation.at: {\"utf8\":\"z\"} is not strictly inside range 0 [{\"utf8\":\"\"}, {\"utf8\":\"g\"})",
        ),
        (&keys, json!({"op": "range_split", "at": {"utf8": ""}}), "invalid_argument", "operation.at:"),
        (
            &keys,
            json!({"op": "range_split", "at": {"utf8": "b"}, "shard": 3}),
            "invalid_argument",
            "operation.shard: expected an integer in 0..=2",
        ),
        (&keys, json!({"op": "range_split", "at": "b"}), "invalid_argument", "operation.at: expected an object"),
        (&keys, json!({"op": "range_split"}), "invalid_argument", "operation.at: missing required field"),
        (
            &keys,
            json!({"op": "range_split", "at": {"utf8": "b"}, "node": "zz"}),
            "invalid_argument",
            "operation.node: no node \"zz\"",
        ),
        (
            &keys,
            json!({"op": "range_split", "at": {"utf8": "b"}, "node": {"id": "a"}}),
            "invalid_argument",
            "operation.node: node \"a\" already exists",
        ),
        (
            &keys,
            json!({"op": "range_split", "at": {"utf8": "b"}, "node": {"id": "d", "weight": 2}}),
            "invalid_topology",
            "nodes[3].weight",
        ),
        (
            &keys,
            json!({"op": "range_split", "at": {"hex": "62".repeat(4097)}}),
            "limit_exceeded",
            "strategy.boundaries[0]: 4097 bytes",
        ),
        (
            &keys,
            json!({"op": "range_split", "at": {"utf8": "b"}, "extra": 1}),
            "invalid_argument",
            "operation.extra: unknown field",
        ),
        (
            &keys,
            json!({"op": "range_split_median", "shard": 0, "sample": [{"utf8": "a"}, {"utf8": "a"}, {"utf8": "x"}]}),
            "invalid_argument",
            "range_split_median: the sample has 1 distinct key(s) in range 0",
        ),
        (
            &keys,
            json!({"op": "range_split_median", "shard": 0}),
            "invalid_argument",
            "operation.sample: missing required field",
        ),
        (
            &keys,
            json!({"op": "range_split_median", "shard": 0, "sample": [{"utf16": [97]}]}),
            "invalid_argument",
            "operation.sample[0].utf16: unknown field",
        ),
        (
            &keys,
            json!({"op": "range_merge", "shard": 2}),
            "invalid_argument",
            "range_merge: range 2 [{\"utf8\":\"p\"}, end) is the last range",
        ),
        (&keys, json!({"op": "range_move", "shard": 0}), "invalid_argument", "operation.node: missing required field"),
        (
            &keys,
            json!({"op": "range_presplit", "ranges": 3}),
            "invalid_argument",
            "range_presplit: a key_range table needs a sample",
        ),
        (
            &keys,
            json!({"op": "range_presplit", "ranges": 0, "sample": []}),
            "invalid_argument",
            "operation.ranges: expected an integer in 1..=1048576",
        ),
        (
            &keys,
            json!({"op": "range_presplit", "ranges": 1_048_577, "sample": []}),
            "limit_exceeded",
            "operation.ranges: 1048577 ranges",
        ),
        (
            &keys,
            json!({"op": "range_presplit", "ranges": 3, "sample": [{"utf8": "a"}, {"utf8": "b"}, {"utf8": "a"}]}),
            "invalid_argument",
            "range_presplit: 3 ranges need at least 3 distinct sample keys; the sample has 2",
        ),
        (
            &keys,
            json!({"op": "range_presplit", "ranges": 2, "sample": [{"utf8": "a"}, {"utf8": "b"}], "nodes": []}),
            "invalid_argument",
            "operation.nodes: needs at least one node",
        ),
        (
            &keys,
            json!({"op": "range_presplit", "ranges": 2, "sample": [{"utf8": "a"}, {"utf8": "b"}], "nodes": ["a", "a"]}),
            "invalid_argument",
            "operation.nodes[1]: node \"a\" is listed twice",
        ),
        (
            &keys,
            json!({"op": "range_presplit", "ranges": 2, "sample": vec![Value::Null; (1 << 20) + 1]}),
            "limit_exceeded",
            "operation.sample: 1048577 sample keys",
        ),
        (
            &hashes,
            json!({"op": "range_split", "at": 0}),
            "invalid_argument",
            "operation.at: 0 is not strictly inside range 0",
        ),
        (
            &hashes,
            json!({"op": "range_split", "at": {"utf8": "b"}}),
            "invalid_argument",
            "operation.at: expected an integer",
        ),
        (
            &hashes,
            json!({"op": "range_split", "at": "100"}),
            "invalid_argument",
            "operation.at: 100 is not strictly inside range 1",
        ),
    ];
    for (router, operation, code, message) in cases {
        let err = apply(router, operation.clone()).map(drop).unwrap_err();
        assert_eq!(err.code(), *code, "{operation}: {err}");
        assert!(err.message().starts_with(message), "{operation}: {err}");
    }
    let ring = doc(&["a"]).strategy(json!({"type": "ring"})).router();
    let err = apply(&ring, json!({"op": "range_merge", "shard": 0})).map(drop).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert_eq!(err.message(), "range_merge: applies to key_range and hash_range topologies, not ring");
}

#[test]
fn nodes_are_added_freely_and_removed_once_they_own_nothing() {
    let (grown, report) = apply(&alphabet(), json!({"op": "add_node", "node": {"id": "d"}})).unwrap();
    assert_eq!(report["added"], "d");
    for key in ["a", "h", "q"] {
        assert_eq!(grown.node(key).unwrap(), alphabet().node(key).unwrap());
    }
    let err = apply(&grown, json!({"op": "remove_node", "id": "b"})).map(drop).unwrap_err();
    assert_eq!(err.code(), "invalid_topology");
    assert!(err.message().starts_with("strategy.ranges[1]: names node \"b\""), "{err}");
    let (moved, _) = apply(&grown, json!({"op": "range_move", "shard": 1, "node": "d"})).unwrap();
    let (shrunk, _) = apply(&moved, json!({"op": "remove_node", "id": "b"})).unwrap();
    assert_eq!(shrunk.node("h").unwrap(), "d");
    assert_eq!(shrunk.epoch(), 10);
}
