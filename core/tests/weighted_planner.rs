//! The load-weighted rebalance planner (`planner::plan_weighted`, `plan_rebalance` with
//! `vbucket_weights`) on random dictionaries from a small deterministic generator: the
//! load bound, minimality, the count plan when all weights are equal, the count plan's
//! safety and throttling, promotions, and determinism.

use serde_json::{json, Value};
use shardroute::planner::{load_targets, plan, plan_weighted, Plan, PlanNode, Role};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// A random case: chains of distinct nodes over the first `count` nodes, then nodes
/// (integer weights 1 to 4, some zoned) of which some stop serving or fail, and some
/// are added after the ones the chains name.
struct Case {
    chains: Vec<Vec<u32>>,
    nodes: Vec<PlanNode>,
    replicas: u32,
    limit: u32,
}

fn case(rng: &mut Rng) -> Case {
    let count = 2 + rng.below(9) as u32;
    let added = rng.below(3) as u32;
    let vbuckets = 1 + rng.below(200) as usize;
    let mut nodes: Vec<PlanNode> = (0..count + added)
        .map(|_| PlanNode {
            weight: (1 + rng.below(4)) as f64,
            zone: (rng.below(3) > 0).then(|| rng.below(3) as u32),
            serving: true,
            failed: false,
        })
        .collect();
    for node in nodes.iter_mut().take(count as usize) {
        match rng.below(8) {
            0 => node.serving = false,
            1 => (node.serving, node.failed) = (false, true),
            _ => {}
        }
    }
    if !nodes.iter().any(|n| n.serving) {
        nodes[0] = PlanNode { serving: true, failed: false, ..nodes[0].clone() };
    }
    let serving = nodes.iter().filter(|n| n.serving).count() as u32;
    let replicas = (rng.below(3) as u32).min(serving - 1).min(count - 1);
    let chains = (0..vbuckets)
        .map(|_| {
            let length = 1 + rng.below(u64::from(replicas) + 1) as usize;
            let mut chain = Vec::new();
            while chain.len() < length {
                let node = rng.below(u64::from(count)) as u32;
                if !chain.contains(&node) {
                    chain.push(node);
                }
            }
            chain
        })
        .collect();
    Case { chains, nodes, replicas, limit: 1 + rng.below(3) as u32 }
}

/// Skewed weights: mostly light, a few hot, some zero.
fn weights(rng: &mut Rng, vbuckets: usize) -> Vec<u64> {
    (0..vbuckets)
        .map(|_| match rng.below(10) {
            0 => 0,
            1 => 1_000 + rng.below(100_000),
            _ => rng.below(1_000),
        })
        .collect()
}

fn active_load(chains: &[Vec<u32>], weights: &[u64], nodes: usize) -> Vec<u64> {
    let mut load = vec![0u64; nodes];
    for (chain, &weight) in chains.iter().zip(weights) {
        load[chain[0] as usize] += weight;
    }
    load
}

/// The rules every plan keeps, weighted or not: full chains of distinct serving nodes,
/// every change of the map a listed move, steps within the limit.
fn check_safe_and_throttled(case: &Case, result: &Plan) {
    for chain in &result.chains {
        assert_eq!(chain.len() as u32, case.replicas + 1);
        let mut sorted = chain.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), chain.len(), "a node twice in {chain:?}");
        assert!(chain.iter().all(|&n| case.nodes[n as usize].serving));
    }
    for range in &result.steps {
        let mut load = vec![0u32; case.nodes.len()];
        for mv in result.moves[range.start as usize..range.end as usize].iter().filter(|m| !m.promotion && !m.lost) {
            // No copy from a failed node.
            assert!(mv.from.is_none_or(|n| !case.nodes[n as usize].failed), "a copy from a failed node: {mv:?}");
            if let Some(from) = mv.from {
                load[from as usize] += 1;
            }
            load[mv.to as usize] += 1;
        }
        assert!(load.iter().all(|&l| l <= case.limit));
    }
    let mut listed = 0usize;
    for (vbucket, (old, new)) in case.chains.iter().zip(&result.chains).enumerate() {
        for (slot, &node) in new.iter().enumerate() {
            if old.get(slot) != Some(&node) {
                listed += 1;
                let role = if slot == 0 { Role::Active } else { Role::Replica(slot as u32) };
                assert!(result.moves.iter().any(|m| m.vbucket == vbucket as u32 && m.role == role && m.to == node));
            }
        }
    }
    // A failover may move an active twice (promoted, then passed on): one change.
    let mut roles: Vec<(u32, Role)> = result.moves.iter().map(|m| (m.vbucket, m.role)).collect();
    roles.sort_unstable();
    roles.dedup();
    assert_eq!(listed, roles.len());
}

/// The weighted plan's guarantees on 600 random dictionaries with skewed weights.
#[test]
fn load_bound_minimality_safety_and_determinism() {
    let mut rng = Rng(25);
    for _ in 0..600 {
        let case = case(&mut rng);
        let weights = weights(&mut rng, case.chains.len());
        let result = plan_weighted(&case.chains, &case.nodes, case.replicas, case.limit, &weights).unwrap();
        check_safe_and_throttled(&case, &result);
        let targets = load_targets(&weights, &case.nodes).unwrap();
        assert_eq!(targets.iter().sum::<u64>(), weights.iter().sum::<u64>());
        let heaviest = weights.iter().copied().max().unwrap_or(0);
        let before = active_load(&case.chains, &weights, case.nodes.len());
        let after = active_load(&result.chains, &weights, case.nodes.len());
        for (node, plan_node) in case.nodes.iter().enumerate() {
            // The load bound: below the target plus the heaviest vbucket.
            let bound = targets[node] + heaviest.saturating_sub(1);
            assert!(after[node] <= bound, "node {node}: {} > {} + {heaviest} - 1", after[node], targets[node]);
            // Minimal: a serving node within its target keeps every active.
            if plan_node.serving && before[node] <= targets[node] {
                for (old, new) in case.chains.iter().zip(&result.chains) {
                    if old[0] == node as u32 {
                        assert_eq!(new[0], node as u32, "an active left node {node}, within its target");
                    }
                }
            }
            // Minimal: it keeps at least the most of its actives that fit (lightest first).
            if plan_node.serving {
                let mut held: Vec<u64> =
                    case.chains.iter().zip(&weights).filter(|(c, _)| c[0] == node as u32).map(|(_, &w)| w).collect();
                held.sort_unstable();
                let mut sum = 0;
                let fit = held.iter().take_while(|&&w| {
                    sum += w;
                    sum <= targets[node]
                });
                let fit = fit.count();
                let stayed = case
                    .chains
                    .iter()
                    .zip(&result.chains)
                    .filter(|(old, new)| old[0] == node as u32 && new[0] == node as u32)
                    .count();
                assert!(stayed >= fit, "node {node} kept {stayed} of its actives, {fit} fit");
            } else {
                assert_eq!(after[node], 0);
            }
        }
        // Deterministic.
        let again = plan_weighted(&case.chains, &case.nodes, case.replicas, case.limit, &weights).unwrap();
        assert_eq!(again, result);
    }
}

/// All weights equal (any value but 0): the plan keeps the count plan's bounds. The
/// weights' common divisor makes them all 1, so each target is the weight times the
/// exact Hamilton quota of `V`: every node ends with exactly that many actives, and the
/// actives that move are exactly the count lower bound. Those quotas are the count
/// planner's (both apportion in integers), and the plan is the count plan, move for move.
#[test]
fn equal_weights_keep_the_count_bounds() {
    let mut rng = Rng(7);
    for _ in 0..600 {
        let case = case(&mut rng);
        let weight = 1 + rng.below(1 << 40);
        let weights = vec![weight; case.chains.len()];
        let counted = plan(&case.chains, &case.nodes, case.replicas, case.limit).unwrap();
        let weighted = plan_weighted(&case.chains, &case.nodes, case.replicas, case.limit, &weights).unwrap();
        let targets = load_targets(&weights, &case.nodes).unwrap();
        let quotas: Vec<u32> = targets.iter().map(|&t| (t / weight) as u32).collect();
        assert!(targets.iter().all(|t| t % weight == 0));
        let unit = load_targets(&vec![1; case.chains.len()], &case.nodes).unwrap();
        assert_eq!(quotas, unit.iter().map(|&t| t as u32).collect::<Vec<u32>>());
        let mut before = vec![0u32; case.nodes.len()];
        let mut after = vec![0u32; case.nodes.len()];
        for (old, new) in case.chains.iter().zip(&weighted.chains) {
            before[old[0] as usize] += 1;
            after[new[0] as usize] += 1;
        }
        assert_eq!(after, quotas);
        let bound: u32 = before.iter().zip(&quotas).map(|(b, q)| b.saturating_sub(*q)).sum();
        let changed = case.chains.iter().zip(&weighted.chains).filter(|(old, new)| old[0] != new[0]).count();
        assert_eq!(changed as u32, bound);
        assert_eq!(quotas, counted.active_quota);
        assert_eq!(weighted.chains, counted.chains);
        assert_eq!(weighted.moves, counted.moves);
        assert_eq!(weighted.steps, counted.steps);
    }
}

/// Targets are the exact Hamilton apportionment: each within the weights' divisor of the
/// exact share, summing to the total, scaled with the weights.
#[test]
fn targets_apportion_exactly() {
    let node = |weight: f64| PlanNode { weight, zone: None, serving: true, failed: false };
    let nodes = [node(1.0), node(2.0), node(3.0)];
    // 600 by 1:2:3.
    assert_eq!(load_targets(&[100, 200, 300], &nodes).unwrap(), vec![100, 200, 300]);
    // 7 by 1:2:3 is 1.17, 2.33, 3.5: floors 1, 2, 3, the largest remainder (3.5) gets one.
    assert_eq!(load_targets(&[3, 4], &nodes).unwrap(), vec![1, 2, 4]);
    // One vbucket: its weight is the unit, and it cannot be shared.
    assert_eq!(load_targets(&[600], &nodes).unwrap(), vec![0, 0, 600]);
    // The same in units of 1,000: the divisor is kept whole.
    assert_eq!(load_targets(&[3_000, 4_000], &nodes).unwrap(), vec![1_000, 2_000, 4_000]);
    // Ties of remainders go to the node listed first; nodes that do not serve get 0.
    let mut two = vec![node(1.0), node(1.0), node(1.0)];
    two[1].serving = false;
    assert_eq!(load_targets(&[1, 2], &two).unwrap(), vec![2, 0, 1]);
    // Weights near u64::MAX stay exact (u128 products).
    let big = load_targets(&[u64::MAX - 1, 1], &nodes).unwrap();
    assert_eq!(big.iter().map(|&t| u128::from(t)).sum::<u128>(), u128::from(u64::MAX));
    assert_eq!(big[0], u64::MAX / 6 + 1);
    // Nothing measured: all targets 0.
    assert_eq!(load_targets(&[0, 0], &nodes).unwrap(), vec![0, 0, 0]);
    // Random: within one divisor of the exact share.
    let mut rng = Rng(3);
    for _ in 0..500 {
        let nodes: Vec<PlanNode> = (0..1 + rng.below(12)).map(|_| node((1 + rng.below(1000)) as f64)).collect();
        let weights: Vec<u64> = (0..1 + rng.below(50)).map(|_| rng.below(1 << 50)).collect();
        let targets = load_targets(&weights, &nodes).unwrap();
        let total: u128 = weights.iter().map(|&w| u128::from(w)).sum();
        let sum: u128 = nodes.iter().map(|n| n.weight as u128).sum();
        assert_eq!(targets.iter().map(|&t| u128::from(t)).sum::<u128>(), total);
        let divisor = weights.iter().fold(0u128, |a, &w| gcd(a, u128::from(w))).max(1);
        for (target, node) in targets.iter().zip(&nodes) {
            // |target - total * w / sum| < divisor
            let exact = total * node.weight as u128;
            let scaled = u128::from(*target) * sum;
            assert!(scaled.abs_diff(exact) < divisor * sum, "target {target}");
            assert_eq!(u128::from(*target) % divisor, 0);
        }
    }
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The skewed case a count plan cannot fix: node 0 holds the hot vbuckets. The count
/// plan sees four vbuckets on each node and moves nothing; the weighted plan moves the
/// surplus off node 0 and leaves every node within its target plus the heaviest.
#[test]
fn a_hot_node_cools_where_counting_sees_balance() {
    let node = PlanNode { weight: 1.0, zone: None, serving: true, failed: false };
    let nodes = vec![node.clone(), node.clone(), node];
    let chains: Vec<Vec<u32>> = (0..12).map(|v| vec![v % 3, (v + 1) % 3]).collect();
    let weights: Vec<u64> = (0..12).map(|v| if v % 3 == 0 { 500 } else { 100 }).collect();
    assert!(plan(&chains, &nodes, 1, 2).unwrap().moves.is_empty());
    let result = plan_weighted(&chains, &nodes, 1, 2, &weights).unwrap();
    let targets = load_targets(&weights, &nodes).unwrap();
    // 2,800 in units of 100: 9.33 each, the remainder tie to the node listed first.
    assert_eq!(targets, vec![1_000, 900, 900]);
    assert_eq!(active_load(&chains, &weights, 3), vec![2_000, 400, 400]);
    // Node 0 keeps two 500s; vbucket 6 is promoted to its replica on node 1 (room 500),
    // vbucket 9's replica (node 1) is then full, so it is copied to node 2.
    let moved: Vec<(u32, u32, bool)> =
        result.moves.iter().filter(|m| m.role == Role::Active).map(|m| (m.vbucket, m.to, m.promotion)).collect();
    assert_eq!(moved, vec![(6, 1, true), (9, 2, false)]);
    assert_eq!(active_load(&result.chains, &weights, 3), vec![1_000, 900, 900]);
}

/// A failed node's vbuckets are all promoted to their replicas first (until 2026-12-06
/// only while the replica's node had room for the vbucket's whole weight, and the rest
/// were planned as copies from the failed node); those the replica's node has no room
/// for are then passed on by a copy from it, heaviest first, or stay when it has the
/// most room.
#[test]
fn failing_a_node_promotes_within_targets() {
    let node = PlanNode { weight: 1.0, zone: None, serving: true, failed: false };
    let mut nodes = vec![node.clone(), node.clone(), node];
    nodes[2] = PlanNode { serving: false, failed: true, ..nodes[2].clone() };
    // Node 2 was active for vbuckets 2, 5, 8; their replicas are on node 0.
    let chains: Vec<Vec<u32>> = (0..9).map(|v| vec![v % 3, (v + 1) % 3]).collect();
    let weights = vec![10, 10, 40, 10, 10, 30, 10, 10, 20];
    let result = plan_weighted(&chains, &nodes, 1, 2, &weights).unwrap();
    let targets = load_targets(&weights, &nodes).unwrap();
    // 150 in units of 10: 7.5 each, the tie to the node listed first.
    assert_eq!(targets, vec![80, 70, 0]);
    // Node 0 holds 30; the heaviest first: 40 fits (70), 30 does not, 20 does not, but
    // all three are promoted to node 0, which serves them at once.
    let promoted: Vec<u32> =
        result.moves.iter().filter(|m| m.promotion && m.role == Role::Active).map(|m| m.vbucket).collect();
    assert_eq!(promoted, vec![2, 5, 8]);
    let copied: Vec<(u32, Option<u32>, u32)> = result
        .moves
        .iter()
        .filter(|m| !m.promotion && m.role == Role::Active)
        .map(|m| (m.vbucket, m.from, m.to))
        .collect();
    // Rooms 10 and 40: 30 goes from node 0 to node 1 (room 10), then 20 to the tie's
    // first node, 0, where it already is: no copy.
    assert_eq!(copied, vec![(5, Some(0), 1)]);
    assert_eq!(active_load(&result.chains, &weights, 3), vec![90, 60, 0]);
}

/// Vbuckets of weight 0 that must leave a removed node go to the nodes with the fewest
/// actives, not all to the one with the most room.
#[test]
fn unweighed_vbuckets_spread_by_count() {
    let node = PlanNode { weight: 1.0, zone: None, serving: true, failed: false };
    let mut nodes = vec![node.clone(), node.clone(), node];
    nodes[2].serving = false;
    let chains: Vec<Vec<u32>> = (0..9).map(|v| vec![v % 3]).collect();
    let result = plan_weighted(&chains, &nodes, 0, 4, &[0; 9]).unwrap();
    let mut count = [0u32; 3];
    for chain in &result.chains {
        count[chain[0] as usize] += 1;
    }
    assert_eq!(count, [5, 4, 0]);
    assert_eq!(result.moves.len(), 3);
}

#[test]
fn rejects_weights_that_do_not_fit() {
    let node = PlanNode { weight: 1.0, zone: None, serving: true, failed: false };
    let nodes = vec![node.clone(), node];
    let chains = vec![vec![0], vec![1]];
    let err = plan_weighted(&chains, &nodes, 0, 2, &[1]).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    let err = plan_weighted(&chains, &nodes, 0, 2, &[u64::MAX, 1]).unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert!(err.to_string().contains("sum past"), "{err}");
}

fn dictionary(vbuckets: u32, nodes: usize) -> Value {
    let entries: Vec<Value> = (0..nodes).map(|i| json!({"id": format!("n{i}")})).collect();
    json!({"format": "shardroute/1", "epoch": 1, "nodes": entries, "strategy": {"type": "vbucket", "vbuckets": vbuckets, "replicas": 1}})
}

fn apply(document: &Value, operation: Value) -> Result<Value, shardroute::Error> {
    let topology = shardroute::Topology::from_value(document)?;
    shardroute::ops::apply(&topology, &operation)
}

/// `plan_rebalance` without `vbucket_weights` reports as before; with them it reports
/// `target` and `load` instead of `quota`, and refuses bad weights with their path.
#[test]
fn plan_rebalance_reads_vbucket_weights() {
    let document = dictionary(8, 2);
    let counted = apply(&document, json!({"op": "plan_rebalance", "add": [{"id": "n2"}]})).unwrap();
    assert!(counted.get("quota").is_some() && counted.get("target").is_none());
    let weights: Vec<Value> = (0..8).map(|v| if v == 0 { json!("1000") } else { json!(v) }).collect();
    let weighted =
        apply(&document, json!({"op": "plan_rebalance", "add": [{"id": "n2"}], "vbucket_weights": weights})).unwrap();
    assert!(weighted.get("quota").is_none());
    let target: u64 = ["n0", "n1", "n2"].iter().map(|id| weighted["target"][id].as_u64().unwrap()).sum();
    assert_eq!(target, 1000 + 1 + 2 + 3 + 4 + 5 + 6 + 7);
    assert_eq!(weighted["load"]["n2"]["before"], 0);
    assert!(weighted["moved_actives"].as_u64().unwrap() >= weighted["lower_bound"].as_u64().unwrap());
    // Equal weights: the count plan, and its lower bound.
    let equal = apply(&document, json!({"op": "plan_rebalance", "add": [{"id": "n2"}], "vbucket_weights": vec![5; 8]}))
        .unwrap();
    assert_eq!(equal["topology"], counted["topology"]);
    assert_eq!(equal["moves"], counted["moves"]);
    assert_eq!(equal["lower_bound"], counted["lower_bound"]);
    assert_eq!(equal["moved_actives"], counted["moved_actives"]);
    for (weights, path, code) in [
        (json!([1, 2, 3]), "operation.vbucket_weights:", "invalid_argument"),
        (json!([1, 2, 3, -4, 5, 6, 7, 8]), "operation.vbucket_weights[3]", "invalid_argument"),
        (json!([1, 2, 3, 4.5, 5, 6, 7, 8]), "operation.vbucket_weights[3]", "invalid_argument"),
        (json!([1, 2, 3, "x", 5, 6, 7, 8]), "operation.vbucket_weights[3]", "invalid_argument"),
        (json!(["18446744073709551615", 0, 0, 1, 0, 0, 0, 0]), "operation.vbucket_weights[3]", "invalid_argument"),
        (json!({"0": 1}), "operation.vbucket_weights", "invalid_argument"),
    ] {
        let err = apply(&document, json!({"op": "plan_rebalance", "vbucket_weights": weights})).unwrap_err();
        assert_eq!(err.code(), code, "{err}");
        assert!(err.to_string().contains(path), "{err}");
    }
}

/// Removing most nodes with weights: the work stays within the count plan's bound plus
/// the sorts of the weighted passes, `V log V`.
#[test]
fn removing_most_nodes_weighted_costs_near_linear_work() {
    let (vbuckets, count, replicas) = (65_536usize, 65_536u32, 1u32);
    let chains: Vec<Vec<u32>> = (0..vbuckets as u32).map(|v| vec![v % count, (v + 1) % count]).collect();
    let nodes: Vec<PlanNode> =
        (0..count).map(|i| PlanNode { weight: 1.0, zone: Some(i % 3), serving: i >= 60_000, failed: false }).collect();
    let mut rng = Rng(1);
    let weights = weights(&mut rng, vbuckets);
    let result = plan_weighted(&chains, &nodes, replicas, 2, &weights).unwrap();
    let (v, r, n) = (vbuckets as u64, u64::from(replicas), u64::from(count));
    let log = |x: u64| 64 - x.leading_zeros() as u64;
    let bound = 64 * (v * (r + 1) * (r + 1 + log(n)) + n * log(n) + v * log(v));
    assert!(result.work <= bound, "work {} above {bound}", result.work);
    assert!(result.chains.iter().flatten().all(|&node| node >= 60_000));
}
