//! The rebalance planner as first written: every choice a scan over all nodes, every
//! step a full array of node loads (`O(V * N)` time and `O(steps * N)` memory). Kept as
//! the oracle that the fast planner (`shardroute::planner`) must match move for move.
#![allow(dead_code)]

use shardroute::planner::{quotas, Move, Plan, PlanNode, Role};
use shardroute::{Error, ErrorKind, Result};

/// Plans the move from `chains` to a balanced map over `nodes` with `replicas` replicas
/// per vbucket, at most `max_moves_per_node` concurrent moves per node in a step.
///
/// # Errors
/// `invalid_argument` when no node can serve, when `replicas` needs more serving nodes
/// than there are, or when `max_moves_per_node` is 0.
pub fn plan(chains: &[Vec<u32>], nodes: &[PlanNode], replicas: u32, max_moves_per_node: u32) -> Result<Plan> {
    // A failed node never serves.
    let nodes: &[PlanNode] =
        &nodes.iter().map(|n| PlanNode { serving: n.serving && !n.failed, ..n.clone() }).collect::<Vec<_>>();
    let serving = nodes.iter().filter(|n| n.serving).count() as u32;
    if serving == 0 {
        return Err(argument("plan: no node can serve after the change"));
    }
    if replicas >= serving {
        return Err(argument(format!(
            "plan: {replicas} replicas per vbucket need at least {} serving nodes, {serving} remain",
            replicas + 1
        )));
    }
    if max_moves_per_node == 0 {
        return Err(argument("plan: max_moves_per_node must be at least 1"));
    }
    let vbuckets = chains.len();
    let node_count = nodes.len();
    let active_quota = quotas(vbuckets as u64, nodes);
    let replica_quota = quotas(vbuckets as u64 * u64::from(replicas), nodes);
    let mut moves: Vec<Move> = Vec::new();

    // --- Actives -------------------------------------------------------------------
    // Keep each serving node's actives up to its quota (lowest vbucket numbers kept);
    // everything else is displaced and must move.
    let mut active: Vec<Option<u32>> = chains.iter().map(|chain| chain.first().copied()).collect();
    let mut active_count = vec![0u32; node_count];
    for slot in active.iter_mut() {
        if let Some(node) = *slot {
            let index = node as usize;
            if index < node_count && nodes[index].serving && active_count[index] < active_quota[index] {
                active_count[index] += 1;
            } else {
                *slot = None;
            }
        }
    }
    // The node each vbucket's data is on: its active, until a failover promotes a replica.
    let mut holder: Vec<Option<u32>> = chains.iter().map(|chain| chain.first().copied()).collect();
    let failed_active = |vbucket: usize| nodes[chains[vbucket][0] as usize].failed;
    // A displaced vbucket gets its new active: a promotion when the node held a replica,
    // lost when its data was only on failed nodes.
    let assign_active = |vbucket: usize,
                         node: u32,
                         promotion: bool,
                         holder: &[Option<u32>],
                         active: &mut Vec<Option<u32>>,
                         active_count: &mut Vec<u32>,
                         moves: &mut Vec<Move>| {
        active[vbucket] = Some(node);
        active_count[node as usize] += 1;
        let from = holder[vbucket];
        moves.push(Move {
            vbucket: vbucket as u32,
            role: Role::Active,
            from,
            to: node,
            promotion,
            lost: !promotion && from.is_some_and(|n| nodes[n as usize].failed),
        });
    };
    // Failover pass: every vbucket whose active failed is promoted to a live replica, room
    // or not: the serving one with the most room (room first), else the first serving one,
    // else the first draining one. Without room, it stays displaced, served by that replica
    // until the copy pass moves it on.
    for vbucket in 0..vbuckets {
        if !failed_active(vbucket) {
            continue;
        }
        let replicas: Vec<u32> = chains[vbucket].iter().skip(1).copied().collect();
        let with_room = replicas
            .iter()
            .copied()
            .filter(|&n| nodes[n as usize].serving && active_count[n as usize] < active_quota[n as usize])
            .max_by(|&a, &b| {
                let room = |n: u32| active_quota[n as usize] - active_count[n as usize];
                room(a).cmp(&room(b)).then(b.cmp(&a))
            });
        if let Some(node) = with_room {
            assign_active(vbucket, node, true, &holder, &mut active, &mut active_count, &mut moves);
            holder[vbucket] = Some(node);
            continue;
        }
        let first_serving = replicas.iter().copied().find(|&n| nodes[n as usize].serving);
        let first_live = replicas.iter().copied().find(|&n| !nodes[n as usize].failed);
        if let Some(node) = first_serving.or(first_live) {
            moves.push(Move {
                vbucket: vbucket as u32,
                role: Role::Active,
                from: holder[vbucket],
                to: node,
                promotion: true,
                lost: false,
            });
            holder[vbucket] = Some(node);
        }
    }
    // Promotion pass. A displaced vbucket of a node that did not fail whose chain has a
    // replica on a node with room takes that replica as its active: no data is copied.
    for vbucket in 0..vbuckets {
        if active[vbucket].is_some() || failed_active(vbucket) {
            continue;
        }
        let candidate = chains[vbucket]
            .iter()
            .skip(1)
            .copied()
            .filter(|&n| (n as usize) < node_count && nodes[n as usize].serving)
            .filter(|&n| active_count[n as usize] < active_quota[n as usize])
            // The node with the most room, then the earlier replica slot.
            .max_by(|&a, &b| {
                let room = |n: u32| active_quota[n as usize] - active_count[n as usize];
                room(a).cmp(&room(b)).then(b.cmp(&a))
            });
        if let Some(node) = candidate {
            assign_active(vbucket, node, true, &holder, &mut active, &mut active_count, &mut moves);
        }
    }
    // Second pass: copies, each displaced vbucket to the node with the most room left.
    let mut room: Vec<(u32, u32)> = Vec::new();
    for vbucket in 0..vbuckets {
        if active[vbucket].is_some() {
            continue;
        }
        room.clear();
        room.extend(
            (0..node_count as u32)
                .filter(|&n| active_count[n as usize] < active_quota[n as usize])
                .map(|n| (active_quota[n as usize] - active_count[n as usize], n)),
        );
        // Quotas sum to V, so some node always has room for a displaced vbucket.
        let Some(&(_, node)) = room.iter().max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1))) else {
            return Err(argument("plan: internal quota mismatch"));
        };
        assign_active(vbucket, node, false, &holder, &mut active, &mut active_count, &mut moves);
    }

    // --- Replicas --------------------------------------------------------------------
    let mut next: Vec<Vec<u32>> = active.iter().map(|node| vec![node.unwrap_or(0)]).collect();
    let mut replica_count = vec![0u32; node_count];
    // Keep existing replicas that are still valid and within quota, slot order kept.
    for (vbucket, chain) in chains.iter().enumerate() {
        for &node in chain.iter().skip(1) {
            let index = node as usize;
            if next[vbucket].len() as u32 > replicas {
                break;
            }
            if index < node_count
                && nodes[index].serving
                && !nodes[index].failed
                && !next[vbucket].contains(&node)
                && replica_count[index] < replica_quota[index]
            {
                next[vbucket].push(node);
                replica_count[index] += 1;
            }
        }
    }
    // Fill the missing slots: most room first, preferring zones not yet in the chain,
    // then quota overflow if the constraints leave no node with room.
    for chain_slot in next.iter_mut() {
        while (chain_slot.len() as u32) <= replicas {
            let chain = &*chain_slot;
            let zones: Vec<Option<u32>> = chain.iter().map(|&n| nodes[n as usize].zone).collect();
            let pick = (0..node_count as u32).filter(|&n| nodes[n as usize].serving && !chain.contains(&n)).max_by(
                |&a, &b| {
                    let key = |n: u32| {
                        let node = &nodes[n as usize];
                        let fresh_zone = node.zone.is_none() || !zones.contains(&node.zone);
                        let has_room = replica_count[n as usize] < replica_quota[n as usize];
                        let room = i64::from(replica_quota[n as usize]) - i64::from(replica_count[n as usize]);
                        (has_room, fresh_zone, room)
                    };
                    key(a).cmp(&key(b)).then(b.cmp(&a))
                },
            );
            let Some(node) = pick else {
                return Err(argument("plan: not enough serving nodes for the replicas"));
            };
            replica_count[node as usize] += 1;
            chain_slot.push(node);
        }
    }
    // Replica moves: a slot whose node changed. A replica that was the active before is
    // not a copy (the data is there); any other new replica is a copy.
    // Written as a plain scan over (vbucket, slot) pairs, apart from the planner's own loop.
    let slots = next.iter().enumerate().flat_map(|(vbucket, chain)| (1..chain.len()).map(move |slot| (vbucket, slot)));
    for (vbucket, slot) in slots {
        let (node, previous) = (next[vbucket][slot], chains[vbucket].get(slot).copied());
        if previous != Some(node) {
            let promotion = chains[vbucket].contains(&node) && !nodes[node as usize].failed;
            // A failed node sends nothing: a copy into its slot names no source.
            let from = match previous {
                Some(n) if !promotion && nodes[n as usize].failed => None,
                other => other,
            };
            moves.push(Move {
                vbucket: vbucket as u32,
                role: Role::Replica(slot as u32),
                from,
                to: node,
                promotion,
                lost: false,
            });
        }
    }

    // --- Steps -----------------------------------------------------------------------
    // Promotions first (they restore service without copying), then active copies, then
    // replicas; within each, vbucket order. Greedy first fit: a move goes to the first
    // step where neither of its nodes has reached the limit.
    let rank = |m: &Move| (m.role != Role::Active, !(m.promotion || m.lost), m.vbucket, m.role);
    moves.sort_by_key(rank);
    let mut load: Vec<Vec<u32>> = Vec::new();
    let mut step_of: Vec<u32> = Vec::with_capacity(moves.len());
    for mv in &moves {
        // A promotion copies nothing: it is a change of the map, done at once in the
        // first step and not counted against any node's limit.
        if mv.promotion || mv.lost {
            if load.is_empty() {
                load.push(vec![0; node_count]);
            }
            step_of.push(0);
            continue;
        }
        let mut step = 0usize;
        loop {
            if step == load.len() {
                load.push(vec![0; node_count]);
            }
            let busy = |n: Option<u32>| n.is_some_and(|n| load[step][n as usize] >= max_moves_per_node);
            let source = mv.from.filter(|&n| !nodes[n as usize].failed);
            if !busy(source) && !busy(Some(mv.to)) {
                break;
            }
            step += 1;
        }
        // A failed node sends nothing, so it does not count against the limit.
        if let Some(from) = mv.from.filter(|&n| !nodes[n as usize].failed) {
            load[step][from as usize] += 1;
        }
        load[step][mv.to as usize] += 1;
        step_of.push(step as u32);
    }
    let mut order: Vec<usize> = (0..moves.len()).collect();
    order.sort_by_key(|&i| (step_of[i], i));
    let ordered: Vec<Move> = order.iter().map(|&i| moves[i].clone()).collect();
    let mut steps = Vec::new();
    let mut start = 0u32;
    for step in 0..load.len() as u32 {
        let count = step_of.iter().filter(|&&s| s == step).count() as u32;
        steps.push(start..start + count);
        start += count;
    }
    Ok(Plan { chains: next, moves: ordered, steps, active_quota, work: 0 })
}

fn argument(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidArgument, message)
}
