//! The rebalance planner: from a vbucket dictionary and a change of nodes, the next
//! dictionary and the ordered moves that get there.
//!
//! **What it guarantees.** Given the current map (one chain `[active, replica...]` per
//! vbucket) and a change (nodes added, removed, failed or re-weighted), the plan
//!
//! * is **balanced**: every serving node holds exactly its *quota* of actives, and of
//!   replicas when the constraints below allow it. Quotas apportion the `V` actives (and
//!   `V * R` replicas) by weight with the largest-remainder method (Hamilton): each quota
//!   is `floor(V * w / W)` or one more, so every node is within one vbucket of its exact
//!   weighted share and the quotas sum to `V`. Remainder ties go to the node listed first.
//! * is **minimal** for actives: a node keeps its actives up to its quota, so the number
//!   of actives that change node is exactly the lower bound, the sum over nodes of
//!   `max(0, actives - quota)` (removed and failed nodes have quota 0).
//! * is **safe**: an active and its replicas never share a node, and replicas avoid the
//!   zones already in their chain whenever a node in another zone can take them.
//! * serves a **failed** node's vbuckets by **promotion** first: when a replica of such a
//!   vbucket sits on a node with room for another active, that replica becomes the
//!   active (no data copy), and only then are replicas re-created.
//! * is **throttled**: moves are grouped into steps in which no node takes part in more
//!   than `max_moves_per_node` data copies (as source or target). Promotions copy
//!   nothing: they all happen in the first step and count against no limit.
//! * is **deterministic**: ties are broken by vbucket number and node order, never by
//!   hashing or iteration order, so every language produces the same plan.
//!
//! **Cost.** `O(V * (R + 1) * (R + log N) + N log N)` time and `O(V * (R + 1) + N)`
//! memory for `V` vbuckets, `R` replicas and `N` nodes: every choice reads a heap or an
//! ordered set of nodes by remaining room (never a scan of all nodes), and the step
//! schedule keeps loads only for the (node, step) pairs that have moves (never a row of
//! `N` loads per step). [`Plan::work`] counts the elementary steps. The operation
//! `plan_rebalance` refuses a plan above [`crate::limits::MAX_PLAN_SLOTS`] chain slots
//! (`V * (R + 1)`) before any work, which bounds its time and its report.
//!
//! **Source.** The constraints are those of Couchbase's vbucket rebalancer and Redis
//! Cluster's `redis-cli --cluster rebalance` (move the surplus of over-full masters to
//! under-full ones, no more); the apportionment is Hamilton's method.

use alloc::collections::{BTreeMap, BTreeSet, BinaryHeap};
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Reverse;

use crate::error::{Error, Result};

/// A node as the planner sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanNode {
    /// Relative capacity, `> 0`.
    pub weight: f64,
    /// Failure domain, if any; replicas avoid the zones already in their chain.
    pub zone: Option<u32>,
    /// Whether the node can hold vbuckets after the change (removed, draining and
    /// failed nodes cannot).
    pub serving: bool,
    /// Whether the node's data is gone (failed): its vbuckets are promoted, not copied.
    pub failed: bool,
}

/// The role a vbucket copy plays on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// The copy that serves reads and writes.
    Active,
    /// A standby copy, `replica` slot `n` (1-based) of the chain.
    Replica(u32),
}

/// One change of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// The vbucket.
    pub vbucket: u32,
    /// The role that changes node.
    pub role: Role,
    /// The node that held the role before, if any.
    pub from: Option<u32>,
    /// The node that holds it after.
    pub to: u32,
    /// True when the target already holds the data (a replica promoted to active).
    pub promotion: bool,
}

/// A rebalance plan: the next map and the moves, grouped into steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The next chains, `[active, replica1, ..., replicaR]` per vbucket.
    pub chains: Vec<Vec<u32>>,
    /// Every move, in execution order (all of step 0, then step 1, ...).
    pub moves: Vec<Move>,
    /// `steps[i]` is the index range into `moves` of step `i`.
    pub steps: Vec<core::ops::Range<u32>>,
    /// The active quota of every node.
    pub active_quota: Vec<u32>,
    /// Elementary steps the planner took (candidates examined, heap, tree and step
    /// operations): what the cost bound above counts, for tests that check the bound
    /// without a clock. Not part of the plan: two equal plans may differ here.
    pub work: u64,
}

/// Hamilton apportionment of `total` seats by weight among serving nodes.
pub fn quotas(total: u64, nodes: &[PlanNode]) -> Vec<u32> {
    let weight_sum: f64 = nodes.iter().filter(|n| n.serving).map(|n| n.weight).sum();
    let mut quota = vec![0u32; nodes.len()];
    if weight_sum <= 0.0 {
        return quota;
    }
    // Exact shares as floats only to rank remainders; the seats themselves are integers.
    let mut remainders: Vec<(f64, usize)> = Vec::new();
    let mut given: u64 = 0;
    for (index, node) in nodes.iter().enumerate().filter(|(_, n)| n.serving) {
        let share = total as f64 * node.weight / weight_sum;
        let floor = libm::floor(share);
        quota[index] = floor as u32;
        given += floor as u64;
        remainders.push((share - floor, index));
    }
    // Largest remainder first; ties to the node listed first.
    remainders.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let missing = total.saturating_sub(given) as usize;
    for &(_, index) in remainders.iter().cycle().take(missing) {
        quota[index] += 1;
    }
    quota
}

/// Plans the move from `chains` to a balanced map over `nodes` with `replicas` replicas
/// per vbucket, at most `max_moves_per_node` concurrent moves per node in a step.
///
/// Every argument is checked before any work is done.
///
/// # Errors
/// `invalid_argument` when no node can serve, when `replicas` needs more serving nodes
/// than there are, when `max_moves_per_node` is 0, when a serving node's weight is not
/// in `(0, MAX_WEIGHT]` (as a document's), or when a chain is empty or names a node past
/// `nodes`.
pub fn plan(chains: &[Vec<u32>], nodes: &[PlanNode], replicas: u32, max_moves_per_node: u32) -> Result<Plan> {
    check(nodes.iter().filter(|n| n.serving).count() as u32, replicas, max_moves_per_node)?;
    // Quotas assume positive weights no larger than a document's: a negative sum gives
    // no seats at all (found by fuzz/planner), a huge weight overflows the seat count.
    if let Some((index, node)) =
        nodes.iter().enumerate().find(|(_, n)| n.serving && !(n.weight > 0.0 && n.weight <= crate::limits::MAX_WEIGHT))
    {
        return Err(Error::argument(alloc::format!(
            "plan: node {index} has weight {}; a serving node's weight must be in (0, {}]",
            node.weight,
            crate::limits::MAX_WEIGHT
        )));
    }
    if let Some(vbucket) =
        chains.iter().position(|chain| chain.is_empty() || chain.iter().any(|&n| n as usize >= nodes.len()))
    {
        return Err(Error::argument(alloc::format!(
            "plan: the chain of vbucket {vbucket} is empty or names a node past the {} given",
            nodes.len()
        )));
    }
    let mut work = Work::default();
    let active_quota = quotas(chains.len() as u64, nodes);
    let replica_quota = quotas(chains.len() as u64 * u64::from(replicas), nodes);
    let (active, mut moves) = place_actives(chains, nodes, &active_quota, &mut work);
    let next = place_replicas(chains, nodes, &active, replicas, &replica_quota, &mut work);
    // Replica moves: a slot whose node changed. A replica that was the active before is
    // not a copy (the data is there); any other new replica is a copy.
    for (vbucket, chain) in next.iter().enumerate() {
        let before = &chains[vbucket];
        for (slot, &node) in chain.iter().enumerate().skip(1) {
            let previous = before.get(slot).copied();
            if previous == Some(node) {
                continue;
            }
            let had_data = before.contains(&node) && !nodes[node as usize].failed;
            moves.push(Move {
                vbucket: vbucket as u32,
                role: Role::Replica(slot as u32),
                from: previous,
                to: node,
                promotion: had_data,
            });
        }
    }
    let (moves, steps) = schedule(moves, nodes, max_moves_per_node, &mut work);
    Ok(Plan { chains: next, moves, steps, active_quota, work: work.0 })
}

/// The refusals of [`plan`] that depend only on counts: no serving node, `replicas`
/// needing more serving nodes than `serving`, a `max_moves_per_node` of 0. Callers with
/// a map to materialize check them first, so a refused plan costs nothing.
///
/// # Errors
/// `invalid_argument`, as [`plan`].
pub fn check(serving: u32, replicas: u32, max_moves_per_node: u32) -> Result<()> {
    if serving == 0 {
        return Err(Error::argument("plan: no node can serve after the change"));
    }
    if replicas >= serving {
        return Err(Error::argument(alloc::format!(
            "plan: {replicas} replicas per vbucket need at least {} serving nodes, {serving} remain",
            replicas + 1
        )));
    }
    if max_moves_per_node == 0 {
        return Err(Error::argument("plan: max_moves_per_node must be at least 1"));
    }
    Ok(())
}

/// A count of elementary steps (candidates examined, heap and tree operations, step
/// slots probed): what the cost bound in the module docs counts, so tests can check the
/// bound without a clock.
#[derive(Default)]
struct Work(u64);

impl Work {
    fn add(&mut self, steps: u64) {
        self.0 += steps;
    }
}

/// The actives of the next map (one node per vbucket) and their moves, promotions first.
///
/// Each serving node keeps its actives up to its quota (lowest vbucket numbers kept);
/// a displaced vbucket whose chain has a replica on a node with room takes it (the node
/// with the most room, then the earlier replica slot); every other displaced vbucket,
/// in vbucket order, goes to the node with the most room left, ties to the lowest index:
/// a max-heap of `(room, node)`, so `O(log N)` per vbucket instead of a scan of all nodes.
fn place_actives(chains: &[Vec<u32>], nodes: &[PlanNode], quota: &[u32], work: &mut Work) -> (Vec<u32>, Vec<Move>) {
    const DISPLACED: u32 = u32::MAX;
    let mut count = vec![0u32; nodes.len()];
    let mut active: Vec<u32> = chains
        .iter()
        .map(|chain| {
            let node = chain[0] as usize;
            if nodes[node].serving && count[node] < quota[node] {
                count[node] += 1;
                chain[0]
            } else {
                DISPLACED
            }
        })
        .collect();
    work.add(chains.len() as u64);
    let mut moves = Vec::new();
    // Promotion: no data is copied.
    for (vbucket, chain) in chains.iter().enumerate() {
        if active[vbucket] != DISPLACED {
            continue;
        }
        work.add(chain.len() as u64);
        let room = |n: u32| quota[n as usize] - count[n as usize];
        let candidate = chain
            .iter()
            .skip(1)
            .copied()
            .filter(|&n| nodes[n as usize].serving && count[n as usize] < quota[n as usize])
            .max_by(|&a, &b| room(a).cmp(&room(b)).then(b.cmp(&a)));
        if let Some(node) = candidate {
            active[vbucket] = node;
            count[node as usize] += 1;
            moves.push(Move {
                vbucket: vbucket as u32,
                role: Role::Active,
                from: Some(chain[0]),
                to: node,
                promotion: true,
            });
        }
    }
    // Copies. Quotas sum to V, so the heap holds a node for every displaced vbucket.
    let mut heap: BinaryHeap<(u32, Reverse<u32>)> = (0..nodes.len() as u32)
        .filter(|&n| count[n as usize] < quota[n as usize])
        .map(|n| (quota[n as usize] - count[n as usize], Reverse(n)))
        .collect();
    work.add(nodes.len() as u64);
    for (vbucket, chain) in chains.iter().enumerate() {
        if active[vbucket] != DISPLACED {
            continue;
        }
        let Some((room, Reverse(node))) = heap.pop() else { break };
        work.add(2 * log2(nodes.len()));
        if room > 1 {
            heap.push((room - 1, Reverse(node)));
        }
        active[vbucket] = node;
        moves.push(Move {
            vbucket: vbucket as u32,
            role: Role::Active,
            from: Some(chain[0]),
            to: node,
            promotion: false,
        });
    }
    (active, moves)
}

/// Serving nodes by remaining replica room, most first, then by index: the order in
/// which [`place_replicas`] prefers them (`room` may fall below 0 when the constraints
/// force a node past its quota).
type ByRoom = BTreeSet<(Reverse<i64>, u32)>;

/// The next chains: each active, then its replicas.
///
/// Existing replicas stay when still valid and within quota (slot order kept). Each
/// missing slot, in vbucket order, goes to the serving node not yet in the chain that
/// ranks highest by (has room, in a zone the chain does not hold yet, most room, lowest
/// index). The nodes are kept ordered by room three ways (all, per zone, and the best of
/// each zone) so a choice reads at most one entry per node or zone already in the chain
/// (at most 16) instead of scanning every node: `O(R log N)` per vbucket.
fn place_replicas(
    chains: &[Vec<u32>],
    nodes: &[PlanNode],
    active: &[u32],
    replicas: u32,
    quota: &[u32],
    work: &mut Work,
) -> Vec<Vec<u32>> {
    let width = replicas as usize + 1;
    let mut count = vec![0u32; nodes.len()];
    let mut next: Vec<Vec<u32>> = Vec::with_capacity(chains.len());
    for (chain, &head) in chains.iter().zip(active) {
        let mut row = Vec::with_capacity(width);
        row.push(head);
        for &node in chain.iter().skip(1) {
            let index = node as usize;
            if row.len() == width {
                break;
            }
            if nodes[index].serving && !nodes[index].failed && !row.contains(&node) && count[index] < quota[index] {
                row.push(node);
                count[index] += 1;
            }
        }
        work.add(chain.len() as u64 * width as u64);
        next.push(row);
    }
    // Zones renumbered densely, so per-zone orders fit in a vector.
    let mut zone_ids: Vec<u32> = nodes.iter().filter_map(|n| n.zone).collect();
    zone_ids.sort_unstable();
    zone_ids.dedup();
    let zone_of: Vec<Option<usize>> =
        nodes.iter().map(|n| n.zone.map(|z| zone_ids.binary_search(&z).unwrap_or(0))).collect();
    let room = |n: usize, count: &[u32]| i64::from(quota[n]) - i64::from(count[n]);
    let mut all = ByRoom::new();
    let mut unzoned = ByRoom::new();
    let mut zones: Vec<ByRoom> = (0..zone_ids.len()).map(|_| ByRoom::new()).collect();
    for n in (0..nodes.len()).filter(|&n| nodes[n].serving) {
        let entry = (Reverse(room(n, &count)), n as u32);
        all.insert(entry);
        match zone_of[n] {
            Some(zone) => zones[zone].insert(entry),
            None => unzoned.insert(entry),
        };
    }
    let mut zone_tops: ByRoom = zones.iter().filter_map(|zone| zone.first().copied()).collect();
    work.add(4 * nodes.len() as u64 * log2(nodes.len()));
    let mut chain_zones: Vec<usize> = Vec::with_capacity(width);
    for row in next.iter_mut() {
        while row.len() < width {
            chain_zones.clear();
            chain_zones.extend(row.iter().filter_map(|&n| zone_of[n as usize]));
            // The best candidate of all, the best in a zone the chain lacks, the best
            // unzoned one: each skips at most the chain's own nodes or zones.
            let best = first_outside(&all, |n| row.contains(&n));
            let zoned = first_outside(&zone_tops, |n| zone_of[n as usize].is_some_and(|z| chain_zones.contains(&z)));
            let free = first_outside(&unzoned, |n| row.contains(&n));
            work.add(3 * (width as u64 + log2(nodes.len())));
            let fresh = match (zoned, free) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let has_room = |entry: &(Reverse<i64>, u32)| entry.0 .0 > 0;
            // Room first, then a fresh zone, then the most room: see the doc above.
            let pick = match (fresh, best) {
                (Some(fresh), _) if has_room(&fresh) => fresh,
                (_, Some(best)) if has_room(&best) => best,
                (Some(fresh), _) => fresh,
                (None, Some(best)) => best,
                // `replicas < serving` leaves a serving node outside every chain.
                (None, None) => break,
            };
            let node = pick.1 as usize;
            let old = pick;
            count[node] += 1;
            let new = (Reverse(room(node, &count)), pick.1);
            all.remove(&old);
            all.insert(new);
            match zone_of[node] {
                Some(zone) => {
                    if let Some(top) = zones[zone].first().copied() {
                        zone_tops.remove(&top);
                    }
                    zones[zone].remove(&old);
                    zones[zone].insert(new);
                    if let Some(top) = zones[zone].first().copied() {
                        zone_tops.insert(top);
                    }
                }
                None => {
                    unzoned.remove(&old);
                    unzoned.insert(new);
                }
            }
            work.add(8 * log2(nodes.len()));
            row.push(pick.1);
        }
    }
    next
}

/// The first entry of `order` whose node `skip` does not exclude.
fn first_outside(order: &ByRoom, skip: impl Fn(u32) -> bool) -> Option<(Reverse<i64>, u32)> {
    order.iter().find(|entry| !skip(entry.1)).copied()
}

/// Groups the moves into steps and returns them in execution order with each step's
/// range.
///
/// Promotions first (they restore service without copying), then active copies, then
/// replicas; within each, vbucket order. Greedy first fit: a move goes to the first step
/// where neither of its nodes has reached the limit (a failed source sends nothing and
/// does not count); a promotion copies nothing, so it goes to step 0 and counts against
/// no limit. Loads are kept only for the (node, step) pairs that have some, in a sorted
/// map, and each node remembers the first step where it still has room, so memory is
/// `O(moves)` however many steps there are, and a move probes only steps where one of
/// its two nodes is full.
fn schedule(
    mut moves: Vec<Move>,
    nodes: &[PlanNode],
    limit: u32,
    work: &mut Work,
) -> (Vec<Move>, Vec<core::ops::Range<u32>>) {
    moves.sort_by_key(|m| (m.role != Role::Active, !m.promotion, m.vbucket, m.role));
    work.add(moves.len() as u64 * log2(moves.len()));
    let mut load: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut first_free = vec![0u32; nodes.len()];
    let mut step_of: Vec<u32> = Vec::with_capacity(moves.len());
    let probe_cost = log2(moves.len()) + 1;
    for mv in &moves {
        if mv.promotion {
            step_of.push(0);
            continue;
        }
        let source = mv.from.filter(|&n| !nodes[n as usize].failed);
        let full = |load: &BTreeMap<(u32, u32), u32>, node: u32, step: u32| {
            load.get(&(node, step)).is_some_and(|&l| l >= limit)
        };
        let mut step = source.map_or(0, |s| first_free[s as usize]).max(first_free[mv.to as usize]);
        while source.is_some_and(|s| full(&load, s, step)) || full(&load, mv.to, step) {
            work.add(2 * probe_cost);
            step += 1;
        }
        for node in source.into_iter().chain(core::iter::once(mv.to)) {
            *load.entry((node, step)).or_default() += 1;
            // The node's first step with room moves past steps that are now full.
            let free = &mut first_free[node as usize];
            while full(&load, node, *free) {
                work.add(probe_cost);
                *free += 1;
            }
        }
        work.add(4 * probe_cost);
        step_of.push(step);
    }
    let step_count = step_of.iter().max().map_or(0, |&last| last as usize + 1);
    // Counting sort by step, stable: moves of a step keep their order.
    let mut starts = vec![0u32; step_count + 1];
    for &step in &step_of {
        starts[step as usize + 1] += 1;
    }
    for step in 0..step_count {
        starts[step + 1] += starts[step];
    }
    let steps = starts.windows(2).map(|pair| pair[0]..pair[1]).collect();
    let mut slots: Vec<Option<Move>> = (0..moves.len()).map(|_| None).collect();
    for (mv, &step) in moves.into_iter().zip(&step_of) {
        let at = &mut starts[step as usize];
        slots[*at as usize] = Some(mv);
        *at += 1;
    }
    work.add(2 * slots.len() as u64 + step_count as u64);
    (slots.into_iter().flatten().collect(), steps)
}

/// `ceil(log2(n))`, at least 1: the depth of a heap or tree of `n` entries.
fn log2(n: usize) -> u64 {
    u64::from(usize::BITS - n.saturating_sub(1).leading_zeros()).max(1)
}
