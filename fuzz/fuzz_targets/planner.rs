//! The rebalance planner on any map and any change of nodes (`shardroute::planner`).
//!
//! The input builds up to 48 nodes (weights, zones, serving, failed) and up to 1,024
//! chains of any length naming any node, then plans with any replica count and
//! throttle. Weights are mostly valid (in `(0, 1e6]`), sometimes any `f64`: `plan` is a
//! public function and must refuse, not panic.
//!
//! Properties, for every plan of valid weights (the guarantees of the planner's docs):
//! one chain per vbucket of `replicas + 1` distinct serving nodes; every serving node
//! holds exactly its active quota; the actives that change node are exactly the lower
//! bound `sum(max(0, actives - quota))`; the steps partition the moves in order, and in
//! no step does a node take part in more than `max_moves_per_node` copies.
//!
//! Failover (issue 34), for both plans: no copy from a failed node; no failed node in
//! any chain of the plan; every vbucket whose active was on a failed node fails over in
//! the first step, by promotion to a live replica of its chain when it has one, and is
//! otherwise `lost` (one move, to its new owner, copying nothing).
//!
//! Then the same map and change planned by load (`plan_weighted`), with a weight per
//! vbucket (mostly small, some 0, some near `u64::MAX`, sometimes all equal): the same
//! structure, steps and throttle; no serving node's active load above its target plus
//! the heaviest vbucket less 1; and with all weights equal and above 0, the count plan
//! itself, chain for chain.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use shardroute::planner::{self, Plan, PlanNode, Role};

fn weight(u: &mut Unstructured) -> Result<f64> {
    Ok(match u.int_in_range(0..=9u8)? {
        0 => u.arbitrary()?,
        1 => f64::from(u.int_in_range(1..=1_000_000u32)?) / 1000.0,
        2..=4 => f64::from(u.int_in_range(1..=4u32)?) / 2.0,
        _ => 1.0,
    })
}

/// A vbucket's measured weight: mostly small, sometimes 0, sometimes near `u64::MAX`
/// (the sum's overflow is refused, never wrapped).
fn vbucket_weight(u: &mut Unstructured) -> Result<u64> {
    Ok(match u.int_in_range(0..=15u8)? {
        0 => 0,
        1 => u.arbitrary()?,
        2 => u64::MAX - u64::from(u.int_in_range(0..=3u8)?),
        3 => u.int_in_range(0..=1_000_000u64)?,
        _ => u.int_in_range(1..=100u64)?,
    })
}

/// What every plan guarantees, counted or weighted: one chain per vbucket of
/// `replicas + 1` distinct serving nodes, and steps that partition the moves in order
/// with no node in more than `throttle` copies in a step.
fn check_structure(plan: &Plan, vbuckets: usize, nodes: &[PlanNode], replicas: u32, throttle: u32) {
    assert_eq!(plan.chains.len(), vbuckets);
    for chain in &plan.chains {
        assert_eq!(chain.len(), replicas as usize + 1, "a chain of the wrong length");
        for (slot, &node) in chain.iter().enumerate() {
            assert!(nodes[node as usize].serving, "a chain names a node that cannot serve");
            assert!(!chain[..slot].contains(&node), "two copies of a vbucket on one node");
        }
    }
    let mut next = 0u32;
    for step in &plan.steps {
        assert_eq!(step.start, next, "steps do not partition the moves");
        next = step.end;
        let mut load = vec![0u32; nodes.len()];
        for mv in &plan.moves[step.start as usize..step.end as usize] {
            if mv.promotion || mv.lost {
                continue;
            }
            for node in mv.from.filter(|&n| !nodes[n as usize].failed).into_iter().chain([mv.to]) {
                load[node as usize] += 1;
                assert!(load[node as usize] <= throttle, "a node takes part in more copies than the throttle");
            }
        }
    }
    assert_eq!(next as usize, plan.moves.len(), "steps do not cover the moves");
}

/// The failover guarantees: no copy from a failed node, no failed node in a chain, and
/// every vbucket of a failed node promoted to a live replica first (in step 0) when its
/// chain has one, else lost.
fn check_failover(plan: &Plan, chains: &[Vec<u32>], nodes: &[PlanNode]) {
    let failed = |n: u32| nodes[n as usize].failed;
    for chain in &plan.chains {
        assert!(chain.iter().all(|&n| !failed(n)), "a failed node in a chain of the plan");
    }
    for mv in &plan.moves {
        if !mv.promotion && !mv.lost {
            assert!(mv.from.is_none_or(|n| !failed(n)), "a copy from a failed node: {mv:?}");
        }
        if mv.lost {
            assert!(mv.role == Role::Active && mv.from.is_some_and(failed), "lost without a failed active: {mv:?}");
        }
    }
    let first_step = plan.steps.first().map_or(0, |range| range.end as usize);
    let mut first_active: Vec<Option<usize>> = vec![None; chains.len()];
    for (index, mv) in plan.moves.iter().enumerate() {
        if mv.role == Role::Active && first_active[mv.vbucket as usize].is_none() {
            first_active[mv.vbucket as usize] = Some(index);
        }
    }
    for (vbucket, chain) in chains.iter().enumerate() {
        if !failed(chain[0]) {
            continue;
        }
        let index = first_active[vbucket].expect("a vbucket of a failed node did not move");
        assert!(index < first_step, "a failover after the first step");
        let mv = &plan.moves[index];
        if chain[1..].iter().any(|&n| !failed(n)) {
            assert!(mv.promotion && chain[1..].contains(&mv.to) && !failed(mv.to), "not promoted: {mv:?} of {chain:?}");
        } else {
            assert!(mv.lost && plan.chains[vbucket][0] == mv.to, "not lost: {mv:?} of {chain:?}");
        }
    }
}

/// The weighted plan of the same map and change, and its guarantees (`valid`: every
/// node weight in `(0, 1e6]`; `counted`: the count plan, made when valid).
fn weighted(
    u: &mut Unstructured,
    chains: &[Vec<u32>],
    nodes: &[PlanNode],
    replicas: u32,
    throttle: u32,
    valid: bool,
    counted: Option<&Plan>,
) -> Result<()> {
    let equal = u.ratio(1, 4)?;
    let weights = if equal {
        vec![u.int_in_range(1..=1_000u64)?; chains.len()]
    } else {
        (0..chains.len()).map(|_| vbucket_weight(u)).collect::<Result<Vec<u64>>>()?
    };
    if std::env::var_os("FUZZ_DEBUG").is_some() {
        eprintln!("vbucket weights {weights:?}");
    }
    let Ok(plan) = planner::plan_weighted(chains, nodes, replicas, throttle, &weights) else { return Ok(()) };
    if !valid {
        return Ok(());
    }
    let counted = counted.expect("the count plan refused what the weighted one planned");
    check_structure(&plan, chains.len(), nodes, replicas, throttle);
    check_failover(&plan, chains, nodes);
    let targets = planner::load_targets(&weights, nodes).expect("a weighted plan was made, so its targets can be");
    let heaviest = weights.iter().copied().max().unwrap_or(0);
    if heaviest > 0 {
        let mut load = vec![0u128; nodes.len()];
        for (chain, &weight) in plan.chains.iter().zip(&weights) {
            load[chain[0] as usize] += u128::from(weight);
        }
        for (node, (&load, &target)) in load.iter().zip(&targets).enumerate() {
            if nodes[node].serving {
                assert!(
                    load <= u128::from(target) + u128::from(heaviest) - 1,
                    "node {node}: load {load} past its target {target} + the heaviest vbucket {heaviest} - 1"
                );
            }
        }
    }
    if equal {
        assert_eq!(plan.chains, counted.chains, "equal weights planned otherwise than by count");
    }
    Ok(())
}

fn run(u: &mut Unstructured) -> Result<()> {
    let node_count = u.int_in_range(1..=48usize)?;
    let nodes = (0..node_count)
        .map(|_| {
            let zone = if u.arbitrary()? { Some(u.int_in_range(0..=3u32)?) } else { None };
            let failed = u.ratio(1, 8)?;
            Ok(PlanNode { weight: weight(u)?, zone, serving: !failed && u.ratio(7, 8)?, failed })
        })
        .collect::<Result<Vec<_>>>()?;
    let vbuckets = u.int_in_range(1..=1024usize)?;
    let width = u.int_in_range(1..=4usize)?;
    let chains = (0..vbuckets)
        .map(|_| {
            let length = if u.ratio(1, 16)? { u.int_in_range(0..=5usize)? } else { width };
            (0..length).map(|_| u.int_in_range(0..=node_count as u32)).collect::<Result<Vec<u32>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    let replicas = u.int_in_range(0..=4u32)?;
    let throttle = u.int_in_range(0..=8u32)?;
    if std::env::var_os("FUZZ_DEBUG").is_some() {
        eprintln!("nodes {nodes:?}\nchains {chains:?}\nreplicas {replicas} throttle {throttle}");
    }
    let counted = planner::plan(&chains, &nodes, replicas, throttle);
    // Any f64 weight must be refused or planned, never panic; the guarantees are for
    // valid ones.
    let valid = nodes.iter().all(|n| n.weight.is_finite() && n.weight > 0.0 && n.weight <= 1e6);
    let counted = counted.ok().filter(|_| valid);
    if let Some(plan) = &counted {
        check_structure(plan, vbuckets, &nodes, replicas, throttle);
        check_failover(plan, &chains, &nodes);
        let mut actives = vec![0u32; node_count];
        for chain in &plan.chains {
            actives[chain[0] as usize] += 1;
        }
        assert_eq!(actives, plan.active_quota, "actives are not the quotas");
        let mut before = vec![0u32; node_count];
        for chain in &chains {
            before[chain[0] as usize] += 1;
        }
        let lower_bound: u32 = before.iter().zip(&plan.active_quota).map(|(&b, &q)| b.saturating_sub(q)).sum();
        let moved = chains.iter().zip(&plan.chains).filter(|(old, new)| old[0] != new[0]).count();
        assert_eq!(moved as u32, lower_bound, "more actives moved than needed");
    }
    weighted(u, &chains, &nodes, replicas, throttle, valid, counted.as_ref())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
