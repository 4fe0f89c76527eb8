//! Failover (issue 34): every vbucket whose active was on a failed node is promoted to a
//! live replica before any balancing (room or not), a vbucket with no live replica is
//! reported lost and given a new owner without a copy, no copy ever comes from a failed
//! node, and neither the plan's chains nor the map `plan_rebalance` installs at once name
//! a failed node, so no read, replica read or write is routed to one.
//!
//! Until 2026-12-06 a failed node's vbucket was promoted only while its replica's node
//! had room for another active; the others were planned as copies *from the failed node*
//! and stayed its own in the map, so `route_read` sent their reads to a dead node
//! (`plan --fail cb-2` on docs/examples/dictionary-explicit.json promoted 1 of 4).

#[path = "common/naive_planner.rs"]
mod naive_planner;

use serde_json::{json, Value};
use shardroute::planner::{plan, plan_weighted, quotas, Plan, PlanNode, Role};
use shardroute::{ops, Router, Topology};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// A random failover: a map over the first `count` nodes (chains of distinct nodes, most
/// of full length), 1 or 2 failed nodes (sometimes both copies of some vbucket), maybe a
/// draining node and up to 2 added nodes.
struct Case {
    /// Nodes before the change; the rest are added.
    original: usize,
    chains: Vec<Vec<u32>>,
    nodes: Vec<PlanNode>,
    replicas: u32,
    limit: u32,
}

fn case(rng: &mut Rng) -> Case {
    let count = 2 + rng.below(8) as u32;
    let width = 1 + rng.below(u64::from(count.min(4))) as u32;
    let vbuckets = 1 + rng.below(200) as usize;
    let chains: Vec<Vec<u32>> = (0..vbuckets)
        .map(|_| {
            let length = if rng.below(8) == 0 { 1 + rng.below(u64::from(width)) as u32 } else { width };
            let mut chain = Vec::new();
            while (chain.len() as u32) < length {
                let node = rng.below(u64::from(count)) as u32;
                if !chain.contains(&node) {
                    chain.push(node);
                }
            }
            chain
        })
        .collect();
    let added = rng.below(3) as u32;
    let zoned = rng.below(2) == 0;
    let mut nodes: Vec<PlanNode> = (0..count + added)
        .map(|i| PlanNode {
            weight: (1 + rng.below(3)) as f64,
            zone: if zoned { Some(i % 3) } else { None },
            serving: true,
            failed: false,
        })
        .collect();
    let fail = |nodes: &mut Vec<PlanNode>, n: u32| {
        nodes[n as usize].serving = false;
        nodes[n as usize].failed = true;
    };
    // Two failures holding both copies of a vbucket, or any one or two.
    let first = &chains[rng.below(vbuckets as u64) as usize];
    if first.len() >= 2 && rng.below(3) == 0 {
        fail(&mut nodes, first[0]);
        fail(&mut nodes, first[1]);
    } else {
        fail(&mut nodes, rng.below(u64::from(count)) as u32);
        if rng.below(3) == 0 {
            fail(&mut nodes, rng.below(u64::from(count)) as u32);
        }
    }
    if rng.below(5) == 0 {
        let draining = rng.below(u64::from(count)) as usize;
        if !nodes[draining].failed {
            nodes[draining].serving = false;
        }
    }
    let serving = nodes.iter().filter(|n| n.serving).count() as u32;
    let replicas = (width - 1).min(serving.saturating_sub(1));
    Case { original: count as usize, chains, nodes, replicas, limit: 1 + rng.below(3) as u32 }
}

/// The failover guarantees of one plan of `case`.
fn check_failover(case: &Case, result: &Plan, label: &str) {
    let failed = |n: u32| case.nodes[n as usize].failed;
    // No chain of the plan names a failed node (nor any that does not serve).
    for chain in &result.chains {
        assert!(chain.iter().all(|&n| case.nodes[n as usize].serving), "{label}: chain {chain:?}");
    }
    // No copy from a failed node; only a lost vbucket names one outside a promotion.
    for mv in &result.moves {
        if !mv.promotion {
            assert!(mv.lost || mv.from.is_none_or(|n| !failed(n)), "{label}: a copy from a failed node: {mv:?}");
        }
    }
    let step_of = |index: usize| result.steps.iter().position(|r| (r.start as usize..r.end as usize).contains(&index));
    for (vbucket, chain) in case.chains.iter().enumerate() {
        let actives: Vec<(usize, _)> = result
            .moves
            .iter()
            .enumerate()
            .filter(|(_, m)| m.vbucket == vbucket as u32 && m.role == Role::Active)
            .collect();
        if !failed(chain[0]) {
            assert!(actives.iter().all(|(_, m)| !m.lost), "{label}: vbucket {vbucket} lost, its active lives");
            continue;
        }
        let live: Vec<u32> = chain[1..].iter().copied().filter(|&n| !failed(n)).collect();
        let (index, first) = actives.first().copied().unwrap_or_else(|| panic!("{label}: vbucket {vbucket} kept"));
        assert_eq!(step_of(index), Some(0), "{label}: vbucket {vbucket}'s failover is not in the first step");
        assert_eq!(first.from, Some(chain[0]), "{label}: {first:?}");
        if live.is_empty() {
            // Lost: one move, to its new owner, copying nothing.
            assert!(first.lost && !first.promotion, "{label}: vbucket {vbucket} of {chain:?}: {first:?}");
            assert_eq!(actives.len(), 1, "{label}: {actives:?}");
            assert_eq!(result.chains[vbucket][0], first.to);
        } else {
            // Promoted to a live replica; a serving one when there is one.
            assert!(first.promotion && live.contains(&first.to), "{label}: vbucket {vbucket} of {chain:?}: {first:?}");
            if live.iter().any(|&n| case.nodes[n as usize].serving) {
                assert!(case.nodes[first.to as usize].serving, "{label}: promoted to a draining node: {first:?}");
            }
            // At most one copy after it, from the promoted node.
            assert!(actives.len() <= 2, "{label}: {actives:?}");
            if let Some((_, next)) = actives.get(1) {
                assert!(!next.promotion && !next.lost && next.from == Some(first.to), "{label}: {next:?}");
            }
        }
    }
}

/// The vbuckets whose active changes: exactly the count lower bound (count plans).
fn check_minimal(case: &Case, result: &Plan, label: &str) {
    let quota = quotas(case.chains.len() as u64, &case.nodes);
    let mut before = vec![0u32; case.nodes.len()];
    for chain in &case.chains {
        before[chain[0] as usize] += 1;
    }
    let bound: u32 = before.iter().zip(&quota).map(|(b, q)| b.saturating_sub(*q)).sum();
    let changed = case.chains.iter().zip(&result.chains).filter(|(a, b)| a[0] != b[0]).count() as u32;
    assert_eq!(changed, bound, "{label}");
}

/// 2,000 random maps with 1 or 2 failed nodes, with and without added and draining
/// nodes, zones, 0 to 3 replicas: counted and weighted plans keep the failover
/// guarantees, and the counted plan is the naive oracle's, move for move.
#[test]
fn failover_promotes_first_and_never_copies_from_a_failed_node() {
    let mut rng = Rng(34);
    let mut promoted_over_quota = 0;
    let mut lost = 0;
    for seed in 0..2_000 {
        let case = case(&mut rng);
        let label = format!("case {seed}");
        let counted = plan(&case.chains, &case.nodes, case.replicas, case.limit);
        let naive = naive_planner::plan(&case.chains, &case.nodes, case.replicas, case.limit);
        let Ok(counted) = counted else {
            assert_eq!(counted.unwrap_err().code(), naive.unwrap_err().code(), "{label}");
            continue;
        };
        check_failover(&case, &counted, &label);
        check_minimal(&case, &counted, &label);
        let naive = naive.unwrap();
        assert_eq!(
            (&counted.chains, &counted.moves, &counted.steps),
            (&naive.chains, &naive.moves, &naive.steps),
            "{label}"
        );
        promoted_over_quota += counted
            .moves
            .iter()
            .filter(|m| {
                m.role == Role::Active
                    && !m.promotion
                    && m.from.is_some_and(|n| case.chains[m.vbucket as usize][1..].contains(&n))
            })
            .filter(|m| case.nodes[case.chains[m.vbucket as usize][0] as usize].failed)
            .count();
        lost += counted.moves.iter().filter(|m| m.lost).count();
        let weights: Vec<u64> = (0..case.chains.len()).map(|_| rng.below(1_000)).collect();
        let weighted = plan_weighted(&case.chains, &case.nodes, case.replicas, case.limit, &weights).unwrap();
        check_failover(&case, &weighted, &format!("{label} weighted"));
    }
    // The sweep reaches both hard cases: a promotion passed on by a copy, and lost data.
    assert!(promoted_over_quota > 100, "{promoted_over_quota} promotions passed on");
    assert!(lost > 100, "{lost} lost vbuckets");
}

/// A node marked failed never serves, even when the caller also says it serves.
#[test]
fn a_failed_node_never_serves() {
    let node = |serving, failed| PlanNode { weight: 1.0, zone: None, serving, failed };
    let chains: Vec<Vec<u32>> = (0..12).map(|v| vec![v % 3, (v + 1) % 3]).collect();
    let nodes = [node(true, false), node(true, true), node(true, false)];
    let result = plan(&chains, &nodes, 1, 2).unwrap();
    assert!(result.chains.iter().flatten().all(|&n| n != 1));
    assert_eq!(result.active_quota, vec![6, 0, 6]);
    // One serving node left cannot hold a replica: refused as for `serving: false`.
    let nodes = [node(true, false), node(true, true), node(false, true)];
    assert_eq!(plan(&chains, &nodes, 1, 2).unwrap_err().code(), "invalid_argument");
}

// --- Through `plan_rebalance` and the router -----------------------------------------

fn apply(topology: &Topology, operation: &Value) -> (Topology, Value) {
    let result = ops::apply(topology, operation).unwrap_or_else(|err| panic!("{operation}: {err}"));
    (Topology::from_value(&result["topology"]).unwrap(), result)
}

/// Checks the dictionary `plan_rebalance` left: no failed id in `map` or `forward_map`,
/// no route to one, every copy from a live node, and each failed node's vbucket with a
/// live replica served by one. Returns the active promotions and lost vbuckets.
fn check_applied(before: &Value, result: &Value, failed: &[&str], keys: usize) -> (usize, usize) {
    let strategy = &result["topology"]["strategy"];
    let is_failed = |id: &Value| failed.iter().any(|f| id == *f);
    for field in ["map", "forward_map"] {
        for (vbucket, chain) in strategy[field].as_array().into_iter().flatten().enumerate() {
            assert!(!chain.as_array().unwrap().iter().any(is_failed), "{field}[{vbucket}] = {chain}");
        }
    }
    let moves = result["moves"].as_array().unwrap();
    for mv in moves {
        assert!(mv["kind"] != "copy" || !is_failed(&mv["from"]), "a copy from a failed node: {mv}");
    }
    let map = strategy["map"].as_array().unwrap();
    let (mut promoted, mut lost) = (0, 0);
    for (vbucket, chain) in before["strategy"]["map"].as_array().unwrap().iter().enumerate() {
        let chain = chain.as_array().unwrap();
        if !is_failed(&chain[0]) {
            continue;
        }
        let first = moves.iter().find(|m| m["vbucket"] == vbucket && m["role"] == "active").unwrap();
        if chain[1..].iter().any(|n| !is_failed(n)) {
            assert_eq!(first["kind"], "promotion", "vbucket {vbucket}: {first}");
            assert!(chain[1..].contains(&first["to"]));
            promoted += 1;
        } else {
            assert_eq!(first["kind"], "lost", "vbucket {vbucket}: {first}");
            lost += 1;
        }
        // Served at once by the node the failover chose.
        assert_eq!(map[vbucket][0], first["to"], "vbucket {vbucket}");
    }
    let router = Router::new(Topology::from_value(&result["topology"]).unwrap()).unwrap();
    for i in 0..keys {
        let key = format!("key:{i}");
        let key = key.as_str();
        let read = router.route_read(key).unwrap();
        assert!(!failed.contains(&read), "{key} read from {read}");
        for turn in 0..4 {
            let replica = router.read_replica(key, turn).unwrap();
            assert!(!failed.contains(&replica), "{key} replica read from {replica}");
        }
        for node in router.route_write(key).unwrap() {
            assert!(!failed.contains(&node), "{key} written to {node}");
        }
    }
    (promoted, lost)
}

fn example() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/examples/dictionary-explicit.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The example: `plan --fail cb-2` (alone and with `--add cb-5`) promotes all 4
/// of cb-2's active vbucket (1 before), plans no copy from cb-2 (3 before, and 4 with
/// the added node) and leaves no read routed to it (before: vbuckets 5, 9 and 13).
#[test]
fn the_example_dictionary_fails_over_every_vbucket_of_cb_2() {
    let before = example();
    let topology = Topology::from_value(&before).unwrap();
    for operation in [
        json!({"op": "plan_rebalance", "fail": ["cb-2"]}),
        json!({"op": "plan_rebalance", "fail": ["cb-2"], "add": [{"id": "cb-5", "zone": "eu-west-1b"}]}),
    ] {
        let (during, result) = apply(&topology, &operation);
        assert_eq!(check_applied(&before, &result, &["cb-2"], 4_000), (4, 0), "{operation}");
        assert_eq!(result["moved_actives"], result["lower_bound"], "{operation}");
        // Completing the moves leaves a map without cb-2, and drops it.
        let (after, done) = apply(&during, &json!({"op": "complete_moves"}));
        assert_eq!(done["removed_nodes"], json!(["cb-2"]), "{operation}");
        assert!(after.nodes.iter().all(|n| n.id != "cb-2"));
    }
}

/// A dictionary with an explicit map by id, from a random case (`replicas` 0 included).
fn document(case: &Case, original: usize) -> Value {
    let id = |n: u32| format!("n{n}");
    let nodes: Vec<Value> = (0..original as u32)
        .map(|n| {
            let node = &case.nodes[n as usize];
            let mut entry = json!({"id": id(n), "weight": node.weight});
            if let Some(zone) = node.zone {
                entry["zone"] = json!(format!("z{zone}"));
            }
            entry
        })
        .collect();
    let map: Vec<Vec<String>> = case.chains.iter().map(|chain| chain.iter().map(|&n| id(n)).collect()).collect();
    json!({"format": "shardroute/1", "epoch": 7, "nodes": nodes,
        "strategy": {"type": "vbucket", "vbuckets": case.chains.len(), "map": map}})
}

/// 300 random dictionaries through `plan_rebalance` (by count and by load) with 1 or 2
/// failed nodes, added and drained nodes: the installed map and the forward map name no
/// failed node, and no read, replica read or write goes to one.
#[test]
fn plan_rebalance_never_routes_to_a_failed_node() {
    let mut rng = Rng(341);
    let (mut promoted, mut lost) = (0, 0);
    for seed in 0..300 {
        let case = case(&mut rng);
        let original = case.original;
        let before = document(&case, original);
        let Ok(topology) = Topology::from_value(&before) else { panic!("case {seed}: {before}") };
        let ids = |keep: &dyn Fn(&PlanNode) -> bool| -> Vec<String> {
            (0..original).filter(|&n| keep(&case.nodes[n])).map(|n| format!("n{n}")).collect()
        };
        let failed = ids(&|n| n.failed);
        let drained = ids(&|n| !n.failed && !n.serving);
        let added: Vec<Value> = (original..case.nodes.len()).map(|n| json!({"id": format!("n{n}")})).collect();
        let mut operation = json!({"op": "plan_rebalance", "fail": failed, "remove": drained, "add": added,
            "replicas": case.replicas});
        if seed % 2 == 1 {
            let weights: Vec<u64> = (0..case.chains.len()).map(|_| rng.below(100)).collect();
            operation["vbucket_weights"] = json!(weights);
        }
        let Ok(result) = ops::apply(&topology, &operation) else { continue };
        let failed: Vec<&str> = failed.iter().map(String::as_str).collect();
        let (p, l) = check_applied(&before, &result, &failed, 200);
        promoted += p;
        lost += l;
        // And after the moves, the failed nodes are gone: a failover always leaves a
        // forward map, even when every move took effect at once.
        let during = Topology::from_value(&result["topology"]).unwrap();
        assert!(result["topology"]["strategy"].get("forward_map").is_some(), "case {seed}");
        let (after, _) = apply(&during, &json!({"op": "complete_moves"}));
        assert!(after.nodes.iter().all(|n| !failed.contains(&n.id.as_str())), "case {seed}");
    }
    assert!(promoted > 1_000 && lost > 100, "{promoted} promoted, {lost} lost");
}
