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
//!   of vbuckets whose active changes node is exactly the lower bound, the sum over nodes
//!   of `max(0, actives - quota)` (removed and failed nodes have quota 0). Without a
//!   failed node that is also the number of active moves; a failover may move a vbucket
//!   twice (promoted, then copied on from the promoted node, see below).
//! * is **safe**: an active and its replicas never share a node, and replicas avoid the
//!   zones already in their chain whenever a node in another zone can take them.
//! * **fails over before it balances**: every vbucket whose active is on a **failed**
//!   node is promoted first, before any other choice, to a live replica (no data copy),
//!   so it is served at once and never by the failed node: to a serving replica with room
//!   for another active (the most room, then the lowest index); else to the first serving
//!   replica of its chain, from which a copy later takes it on to a node with room; else
//!   to the first draining replica (likewise). A vbucket with no live replica is **lost**
//!   ([`Move::lost`]): its data is gone and its new owner takes it empty. No copy is ever
//!   planned from a failed node (its replica slots are refilled from the active, with no
//!   `from`), and no chain of the plan names one. A node marked `failed` never serves,
//!   whatever its `serving` says. The vbuckets of draining and over-full nodes are then
//!   promoted where a replica's node has room, and only then are replicas re-created.
//! * is **throttled**: moves are grouped into steps in which no node takes part in more
//!   than `max_moves_per_node` data copies (as source or target). Promotions and lost
//!   vbuckets copy nothing: they all happen in the first step and count against no limit.
//! * is **deterministic**: ties are broken by vbucket number and node order, never by
//!   hashing or iteration order, so every language produces the same plan.
//!
//! **Weighted by load** ([`plan_weighted`]). Counting vbuckets balances load only when
//! vbuckets weigh alike; given a measured weight per vbucket (bytes, requests/s, keys:
//! any `u64`), the actives are balanced by weight instead. Each serving node's *target*
//! is its weighted share of the total weight `W` ([`load_targets`]: Hamilton over node
//! weights in exact integer arithmetic, in units of the weights' greatest common divisor,
//! so the targets sum to `W`). Then a serving node keeps its lightest actives (ties by
//! vbucket number) while they fit within its target; the others, and the actives of
//! nodes that no longer serve, are placed heaviest first (ties by vbucket number). The
//! actives of failed nodes first fail over as in a count plan (to a serving replica with
//! room for the whole weight, else the first serving replica, else the first draining
//! one, else lost); then every vbucket not yet placed goes by promotion to a replica's
//! node that has room for the whole weight, else by a copy to
//! the serving node with the most room (`target - load`, ties to the lowest index),
//! which may be the vbucket's own node, where it then stays. A weighted plan
//!
//! * keeps **every node's active load at most its target plus the heaviest vbucket less
//!   1** (`load <= target + max_w - 1` when some weight is above 0). Proof: a kept active
//!   fits within the target; when a vbucket of weight `w` is placed, the rooms of the
//!   serving nodes sum to the weight not yet placed, at least `w > 0`, so the most room
//!   is at least 1 and the node ends at most `target - 1 + w`. Zero-weight vbuckets add
//!   no load: those leaving a node that no longer serves go, last, to the serving node
//!   with the fewest actives.
//! * is **minimal** in the sense the count plan is: no active leaves a serving node whose
//!   load is within its target, and each serving node keeps the most of its actives that
//!   fit (its lightest). `plan_rebalance` reports as `lower_bound` the fewest active moves
//!   of *any* plan that keeps the bound above (each node's actives past the most that fit
//!   within `target + max_w - 1`); the plan may move more, when a node that gave up its
//!   heavy vbuckets is then filled with others' light ones.
//! * with **all weights equal** (and above 0), keeps the count plan's bounds: the targets
//!   are that weight times the exact Hamilton quotas of `V`, every node ends with exactly
//!   its quota of actives and the actives that move are the count lower bound. It is the
//!   count plan itself, move for move ([`quotas`] apportions in the same integers).
//! * leaves **replicas** to the count quotas: reads and writes load the active copy, so
//!   only actives are weighed; replicas are placed as in a count plan (same safety, zones,
//!   promotions, steps and `max_moves_per_node`).
//!
//! Node weights are `f64`; the targets read them exactly as integers (each mantissa
//! shifted to the largest serving weight's exponent, see [`load_targets`]), so the
//! decision has no float arithmetic. Products are `u128`.
//!
//! **Cost.** `O(V * (R + 1) * (R + log N) + N log N)` time and `O(V * (R + 1) + N)`
//! memory for `V` vbuckets, `R` replicas and `N` nodes: every choice reads a heap or an
//! ordered set of nodes by remaining room (never a scan of all nodes), and the step
//! schedule keeps loads only for the (node, step) pairs that have moves (never a row of
//! `N` loads per step). A weighted plan adds two sorts of the vbuckets, `O(V log V)`.
//! [`Plan::work`] counts the elementary steps. The operation `plan_rebalance` refuses a
//! plan above [`crate::limits::MAX_PLAN_SLOTS`] chain slots (`V * (R + 1)`) before any
//! work, which bounds its time and its report.
//!
//! **Source.** The constraints are those of Couchbase's vbucket rebalancer and Redis
//! Cluster's `redis-cli --cluster rebalance` (move the surplus of over-full masters to
//! under-full ones, no more); the apportionment is Hamilton's
//! method; placing the heaviest first on the least loaded node is Graham's LPT rule.

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
    /// The node the role moves from: the node that held it before (for an active passed
    /// on after a failover, the replica promoted in its place in the first step). A copy
    /// never names a failed node: a replica slot of a failed node is refilled from the
    /// active, with `None` here, as is a slot the chain did not have.
    pub from: Option<u32>,
    /// The node that holds it after.
    pub to: u32,
    /// True when the target already holds the data (a replica promoted to active).
    pub promotion: bool,
    /// True when the data is gone: the vbucket's active was on a failed node and no
    /// live node held a replica of it, so the target takes the role empty. Nothing is
    /// copied (least of all from the failed `from`): like a promotion, it takes effect
    /// at once, in the first step, and counts against no limit.
    pub lost: bool,
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
    /// The active quota of every node: the count quotas ([`quotas`]); a weighted plan
    /// aims its actives at [`load_targets`] instead.
    pub active_quota: Vec<u32>,
    /// Elementary steps the planner took (candidates examined, heap, tree and step
    /// operations): what the cost bound above counts, for tests that check the bound
    /// without a clock. Not part of the plan: two equal plans may differ here.
    pub work: u64,
}

/// Hamilton apportionment of `total` seats by weight among serving nodes, in exact
/// integer arithmetic (node weights read as integers, as [`load_targets`] reads them): each
/// quota is `floor(total * w / S)` or one more, the largest remainders first and ties to
/// the node listed first. (Until 2026-11-27 the remainders were ranked as floats, which
/// could order an exact tie otherwise: weights 1, 4, 1, 3 over 138 seats.)
pub fn quotas(total: u64, nodes: &[PlanNode]) -> Vec<u32> {
    // Seats past u32::MAX cannot happen: the planner's budget bounds `total`.
    hamilton(total, &integer_weights(nodes), nodes).into_iter().map(|seats| seats as u32).collect()
}

/// Hamilton's method in integers: `units` seats among the serving nodes by their
/// `integer` weights ([`integer_weights`]). Each gets `floor(units * w / S)`, then the
/// largest remainders `units * w mod S` (compared as `u128`, never as floats) one more,
/// ties to the node listed first.
fn hamilton(units: u64, integer: &[u64], nodes: &[PlanNode]) -> Vec<u64> {
    let mut seats = vec![0u64; nodes.len()];
    let sum: u128 = integer.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return seats;
    }
    // Largest remainder first, ties to the node listed first: sorted as one `u128` key,
    // `(sum - 1 - remainder) << 32 | node` (below 2^101), as every sort here is, so the
    // .wasm holds one sort.
    let mut remainders: Vec<u128> = Vec::new();
    let mut given: u64 = 0;
    for (index, &weight) in integer.iter().enumerate().filter(|&(index, _)| nodes[index].serving) {
        let share = u128::from(units) * u128::from(weight);
        // `share / sum <= units`, a u64.
        let floor = (share / sum) as u64;
        seats[index] = floor;
        given += floor;
        remainders.push((sum - 1 - share % sum) << 32 | index as u128);
    }
    // Fewer than one seat per serving node is missing, and only nodes with a remainder
    // above 0 get one.
    remainders.sort_unstable();
    for &key in remainders.iter().take((units - given) as usize) {
        seats[key as u32 as usize] += 1;
    }
    seats
}

/// The active load target of every node for a plan weighted by `vbucket_weights`: the
/// sum `W` of the weights apportioned among serving nodes by node weight (Hamilton, as
/// [`quotas`]), in exact integer arithmetic.
///
/// The weights are first divided by their greatest common divisor `g` and the targets
/// multiplied back by it, so the targets depend on the ratios of the weights only
/// (measuring in bytes or kilobytes gives the same plan), and all-equal weights give that
/// weight times the exact Hamilton quotas of `V` (the count quotas of [`quotas`]). Node
/// weights are read as integers: each serving weight's 53-bit mantissa, shifted to the
/// exponent of the largest serving weight (exact when every weight is a whole multiple of
/// the largest one's last mantissa bit, as integer weights are; finer bits are dropped).
/// Each target is then `g * floor(W' * w / S)` or one `g` more, where `W' = W / g` and
/// `S` sums the integer node weights: the largest remainders `W' * w mod S` (compared as
/// `u128`, never as floats) get the extra `g`, ties to the node listed first. The targets
/// sum to `W`, each within `g` of the exact share; non-serving nodes get 0.
///
/// # Errors
/// `invalid_argument` when the weights sum past `u64::MAX`, or a serving node's weight is
/// not in `(0, MAX_WEIGHT]`.
///
/// # Example
/// ```
/// use shardroute::planner::{load_targets, PlanNode};
///
/// let node = |weight| PlanNode { weight, zone: None, serving: true, failed: false };
/// // 300 of load over weights 1 and 2; the weights' divisor 100 is kept whole.
/// assert_eq!(load_targets(&[100, 200, 0], &[node(1.0), node(2.0)]).unwrap(), vec![100, 200]);
/// ```
pub fn load_targets(vbucket_weights: &[u64], nodes: &[PlanNode]) -> Result<Vec<u64>> {
    check_node_weights(nodes)?;
    let mut total: u64 = 0;
    let mut divisor: u64 = 0;
    for (vbucket, &weight) in vbucket_weights.iter().enumerate() {
        total = total.checked_add(weight).ok_or_else(|| {
            Error::argument(alloc::format!("plan: the vbucket weights sum past {} at vbucket {vbucket}", u64::MAX))
        })?;
        divisor = gcd(divisor, weight);
    }
    if total == 0 {
        return Ok(vec![0u64; nodes.len()]);
    }
    let units = total / divisor;
    let mut target = hamilton(units, &integer_weights(nodes), nodes);
    for seat in &mut target {
        *seat *= divisor;
    }
    Ok(target)
}

/// The greatest common divisor (`gcd(0, b) = b`).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Serving node weights as integers in proportion to them: each `f64`'s mantissa shifted
/// to the exponent of the largest serving weight (so the largest is at least `2^52` and
/// every one below `2^53`); 0 for a node that does not serve.
fn integer_weights(nodes: &[PlanNode]) -> Vec<u64> {
    // (mantissa, exponent) with weight = mantissa * 2^exponent.
    let parts = |weight: f64| -> (u64, i32) {
        let bits = weight.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1u64 << 52) - 1);
        if exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), exponent - 1075)
        }
    };
    let top = nodes.iter().filter(|n| n.serving).map(|n| parts(n.weight).1).max().unwrap_or(0);
    nodes
        .iter()
        .map(|node| {
            if !node.serving {
                return 0;
            }
            let (mantissa, exponent) = parts(node.weight);
            let shift = (top - exponent) as u32;
            if shift >= 64 {
                0
            } else {
                mantissa >> shift
            }
        })
        .collect()
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
    plan_with(chains, nodes, replicas, max_moves_per_node, None)
}

/// As [`plan`], with the actives balanced by load instead of by count: `vbucket_weights`
/// holds the measured size or load of each vbucket (one per chain), and each serving
/// node's actives aim at its [`load_targets`] entry instead of its count quota.
/// Replicas keep the count quotas. See the module docs for what the plan guarantees.
///
/// # Errors
/// As [`plan`]; also `invalid_argument` when `vbucket_weights` does not hold one weight
/// per chain or when the weights sum past `u64::MAX`.
///
/// # Example
/// ```
/// use shardroute::planner::{plan_weighted, PlanNode};
///
/// let node = PlanNode { weight: 1.0, zone: None, serving: true, failed: false };
/// // Node 0 holds the two heavy vbuckets, node 1 the two light ones.
/// let chains = vec![vec![0], vec![0], vec![1], vec![1]];
/// let plan = plan_weighted(&chains, &[node.clone(), node], 0, 2, &[90, 80, 10, 20]).unwrap();
/// // Targets are 100 each: node 0 keeps its lighter vbucket (80), the other moves.
/// assert_eq!(plan.chains, vec![vec![1], vec![0], vec![1], vec![1]]);
/// ```
pub fn plan_weighted(
    chains: &[Vec<u32>],
    nodes: &[PlanNode],
    replicas: u32,
    max_moves_per_node: u32,
    vbucket_weights: &[u64],
) -> Result<Plan> {
    plan_with(chains, nodes, replicas, max_moves_per_node, Some(vbucket_weights))
}

/// Refuses a serving node whose weight is not in `(0, MAX_WEIGHT]`.
fn check_node_weights(nodes: &[PlanNode]) -> Result<()> {
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
    Ok(())
}

fn plan_with(
    chains: &[Vec<u32>],
    nodes: &[PlanNode],
    replicas: u32,
    max_moves_per_node: u32,
    vbucket_weights: Option<&[u64]>,
) -> Result<Plan> {
    // A failed node never serves, whatever `serving` says.
    let normalized: Vec<PlanNode>;
    let nodes = if nodes.iter().any(|n| n.failed && n.serving) {
        normalized = nodes.iter().map(|n| PlanNode { serving: n.serving && !n.failed, ..n.clone() }).collect();
        &normalized[..]
    } else {
        nodes
    };
    check(nodes.iter().filter(|n| n.serving).count() as u32, replicas, max_moves_per_node)?;
    check_node_weights(nodes)?;
    if let Some(vbucket) =
        chains.iter().position(|chain| chain.is_empty() || chain.iter().any(|&n| n as usize >= nodes.len()))
    {
        return Err(Error::argument(alloc::format!(
            "plan: the chain of vbucket {vbucket} is empty or names a node past the {} given",
            nodes.len()
        )));
    }
    let targets = match vbucket_weights {
        Some(weights) if weights.len() != chains.len() => {
            return Err(Error::argument(alloc::format!(
                "plan: {} vbucket weights for {} vbuckets; expected one per vbucket",
                weights.len(),
                chains.len()
            )))
        }
        Some(weights) => Some(load_targets(weights, nodes)?),
        None => None,
    };
    let mut work = Work::default();
    let active_quota = quotas(chains.len() as u64, nodes);
    let replica_quota = quotas(chains.len() as u64 * u64::from(replicas), nodes);
    let (active, mut moves) = match (vbucket_weights, &targets) {
        (Some(weights), Some(targets)) => place_weighted_actives(chains, nodes, weights, targets, &mut work),
        _ => place_actives(chains, nodes, &active_quota, &mut work),
    };
    let next = place_replicas(chains, nodes, &active, replicas, &replica_quota, &mut work);
    // Replica moves: a slot whose node changed. A replica that was the active before is
    // not a copy (the data is there); any other new replica is a copy, from the slot's
    // node before, or from the active when that node failed (it sends nothing, so the
    // move names no `from`).
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
                from: if had_data { previous } else { previous.filter(|&n| !nodes[n as usize].failed) },
                to: node,
                promotion: had_data,
                lost: false,
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
/// Each serving node keeps its actives up to its quota (lowest vbucket numbers kept).
/// Then every vbucket whose active failed fails over ([`failover`]): to a serving replica
/// with room, which counts it, or else to a replica that passes it on by a copy, or it is
/// lost. A displaced vbucket of a draining or over-full node whose chain has a replica on
/// a node with room takes it (the node with the most room, then the lowest index). Every
/// other displaced vbucket, in vbucket order, goes to the node with the most room left,
/// ties to the lowest index: a max-heap of `(room, node)`, so `O(log N)` per vbucket
/// instead of a scan of all nodes. Its move names the node that holds its data then (the
/// replica promoted in a failover), never a failed node except as the `from` of a lost
/// vbucket.
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
    // Where each vbucket's data is served from until its copy: its active, or the
    // replica promoted in its place.
    let mut holder: Vec<u32> = chains.iter().map(|chain| chain[0]).collect();
    let mut moves = Vec::new();
    // Failover first: every vbucket of a failed node is promoted, room or not.
    for (vbucket, chain) in chains.iter().enumerate() {
        if !nodes[chain[0] as usize].failed {
            continue;
        }
        work.add(chain.len() as u64);
        let has_room = |n: u32| count[n as usize] < quota[n as usize];
        let room = |n: u32| i64::from(quota[n as usize]) - i64::from(count[n as usize]);
        let Some((node, counted)) = failover(chain, nodes, has_room, room) else { continue };
        holder[vbucket] = node;
        if counted {
            active[vbucket] = node;
            count[node as usize] += 1;
        }
        moves.push(Move {
            vbucket: vbucket as u32,
            role: Role::Active,
            from: Some(chain[0]),
            to: node,
            promotion: true,
            lost: false,
        });
    }
    // Promotion of the other displaced vbuckets, into room only: no data is copied.
    for (vbucket, chain) in chains.iter().enumerate() {
        if active[vbucket] != DISPLACED || nodes[chain[0] as usize].failed {
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
                lost: false,
            });
        }
    }
    // Copies. Quotas sum to V, so the heap holds a node for every displaced vbucket.
    let mut heap: BinaryHeap<(u32, Reverse<u32>)> = (0..nodes.len() as u32)
        .filter(|&n| count[n as usize] < quota[n as usize])
        .map(|n| (quota[n as usize] - count[n as usize], Reverse(n)))
        .collect();
    work.add(nodes.len() as u64);
    for vbucket in 0..chains.len() {
        if active[vbucket] != DISPLACED {
            continue;
        }
        let Some((room, Reverse(node))) = heap.pop() else { break };
        work.add(2 * log2(nodes.len()));
        if room > 1 {
            heap.push((room - 1, Reverse(node)));
        }
        active[vbucket] = node;
        let from = holder[vbucket];
        moves.push(Move {
            vbucket: vbucket as u32,
            role: Role::Active,
            from: Some(from),
            to: node,
            promotion: false,
            lost: nodes[from as usize].failed,
        });
    }
    (active, moves)
}

/// The replica a vbucket whose active failed is promoted to, and whether it counts as
/// placed there (`true`) or must be passed on by a copy (`false`); `None` when no live
/// node holds a replica (the vbucket is lost).
///
/// In order: the serving replica with room (`has_room`) that has the most `room`, ties to
/// the lowest index; else the first serving replica of the chain; else its first live
/// (draining) replica. A failed replica holds nothing and is never chosen.
fn failover<R: Ord>(
    chain: &[u32],
    nodes: &[PlanNode],
    has_room: impl Fn(u32) -> bool,
    room: impl Fn(u32) -> R,
) -> Option<(u32, bool)> {
    let replicas = || chain.iter().skip(1).copied();
    let serving = |n: u32| nodes[n as usize].serving;
    replicas()
        .filter(|&n| serving(n) && has_room(n))
        .max_by(|&a, &b| room(a).cmp(&room(b)).then(b.cmp(&a)))
        .map(|n| (n, true))
        .or_else(|| replicas().find(|&n| serving(n)).map(|n| (n, false)))
        .or_else(|| replicas().find(|&n| !nodes[n as usize].failed).map(|n| (n, false)))
}

/// The actives of a plan weighted by load, and their moves, promotions first.
///
/// Each serving node keeps its lightest actives (ties by vbucket number) while their
/// weights fit within its target. The displaced vbuckets, heaviest first (ties by vbucket
/// number), are then placed: those of failed nodes fail over first ([`failover`], "room"
/// being room for the whole weight; a replica without it serves the vbucket until its
/// copy), then all not yet placed in two passes: a promotion to a replica's node that still
/// has room for the whole weight (the most room, then the lowest index), and otherwise a
/// copy to the serving node with the most room left, ties to the lowest index (a max-heap
/// of `(room, node)`; room may fall below 0). A vbucket whose own node (or the replica
/// promoted in a failover) has the most room stays there and does not move. Vbuckets of
/// weight 0 add no load: those that must leave a node that no longer serves go, after all
/// the others, to the serving node with the fewest actives, ties to the lowest index.
/// Room is `target - load` as an `i128`.
fn place_weighted_actives(
    chains: &[Vec<u32>],
    nodes: &[PlanNode],
    weights: &[u64],
    target: &[u64],
    work: &mut Work,
) -> (Vec<u32>, Vec<Move>) {
    const DISPLACED: u32 = u32::MAX;
    let mut load = vec![0u64; nodes.len()];
    let mut count = vec![0u32; nodes.len()];
    let mut active = vec![DISPLACED; chains.len()];
    // By node, then lightest, then vbucket: `node << 96 | weight << 32 | vbucket`.
    let mut held: Vec<u128> = (0..chains.len() as u32)
        .filter(|&v| nodes[chains[v as usize][0] as usize].serving)
        .map(|v| u128::from(chains[v as usize][0]) << 96 | u128::from(weights[v as usize]) << 32 | u128::from(v))
        .collect();
    held.sort_unstable();
    work.add(chains.len() as u64 * log2(chains.len()));
    for &key in &held {
        let v = key as u32;
        let (node, weight) = (chains[v as usize][0] as usize, weights[v as usize]);
        // Both are sums of distinct vbuckets' weights, so within the checked total.
        if load[node] + weight <= target[node] {
            load[node] += weight;
            count[node] += 1;
            active[v as usize] = node as u32;
        }
    }
    // Heaviest first, then by vbucket: `!weight << 32 | vbucket`.
    let mut order: Vec<u128> = (0..chains.len() as u32)
        .filter(|&v| active[v as usize] == DISPLACED)
        .map(|v| u128::from(!weights[v as usize]) << 32 | u128::from(v))
        .collect();
    order.sort_unstable();
    let displaced: Vec<u32> = order.into_iter().map(|key| key as u32).collect();
    work.add(displaced.len() as u64 * log2(displaced.len()));
    let room = |load: &[u64], n: usize| i128::from(target[n]) - i128::from(load[n]);
    let mut moves = Vec::new();
    // Where each vbucket's data is served from until its copy: its active, or the
    // replica promoted in its place.
    let mut holder: Vec<u32> = chains.iter().map(|chain| chain[0]).collect();
    // Failover first: every vbucket of a failed node is promoted, room or not.
    for &v in &displaced {
        let (chain, weight) = (&chains[v as usize], weights[v as usize]);
        if !nodes[chain[0] as usize].failed {
            continue;
        }
        work.add(chain.len() as u64);
        let has_room = |n: u32| room(&load, n as usize) >= i128::from(weight);
        let Some((node, counted)) = failover(chain, nodes, has_room, |n| room(&load, n as usize)) else { continue };
        holder[v as usize] = node;
        if counted {
            load[node as usize] += weight;
            count[node as usize] += 1;
            active[v as usize] = node;
        }
        moves.push(Move {
            vbucket: v,
            role: Role::Active,
            from: Some(chain[0]),
            to: node,
            promotion: true,
            lost: false,
        });
    }
    let place = |v: u32, node: u32, promotion: bool, moves: &mut Vec<Move>, active: &mut [u32]| {
        active[v as usize] = node;
        let from = holder[v as usize];
        if from != node {
            let lost = nodes[from as usize].failed;
            moves.push(Move { vbucket: v, role: Role::Active, from: Some(from), to: node, promotion, lost });
        }
    };
    // Promotion of the other displaced vbuckets: no data is copied.
    for &v in &displaced {
        let (chain, weight) = (&chains[v as usize], i128::from(weights[v as usize]));
        if active[v as usize] != DISPLACED || nodes[chain[0] as usize].failed {
            continue;
        }
        work.add(chain.len() as u64);
        let candidate = chain
            .iter()
            .skip(1)
            .copied()
            .filter(|&n| nodes[n as usize].serving && room(&load, n as usize) >= weight)
            .max_by(|&a, &b| room(&load, a as usize).cmp(&room(&load, b as usize)).then(b.cmp(&a)));
        if let Some(node) = candidate {
            load[node as usize] += weights[v as usize];
            count[node as usize] += 1;
            place(v, node, true, &mut moves, &mut active);
        }
    }
    // Copies of weighed vbuckets: the room of all serving nodes sums to the weight not
    // yet placed, so the node with the most room has at least 1. A max-heap of one `u128`
    // key, `(room + 2^64) << 32 | !node`: the most room, then the lowest index.
    let key = |load: &[u64], n: u32| ((room(load, n as usize) + (1i128 << 64)) as u128) << 32 | u128::from(!n);
    let mut heap: BinaryHeap<u128> =
        (0..nodes.len() as u32).filter(|&n| nodes[n as usize].serving).map(|n| key(&load, n)).collect();
    work.add(nodes.len() as u64);
    for &v in &displaced {
        if active[v as usize] != DISPLACED || weights[v as usize] == 0 {
            continue;
        }
        let Some(top) = heap.pop() else { break };
        let node = !(top as u32);
        work.add(2 * log2(nodes.len()));
        load[node as usize] += weights[v as usize];
        count[node as usize] += 1;
        heap.push(key(&load, node));
        place(v, node, false, &mut moves, &mut active);
    }
    // Vbuckets of weight 0 left on nodes that no longer serve: to the fewest actives, then
    // the lowest index (the count plan's heap type, `(room, Reverse(node))`, with
    // `u32::MAX - count` as the room).
    let mut fewest: BinaryHeap<(u32, Reverse<u32>)> = (0..nodes.len() as u32)
        .filter(|&n| nodes[n as usize].serving)
        .map(|n| (u32::MAX - count[n as usize], Reverse(n)))
        .collect();
    work.add(nodes.len() as u64);
    for &v in &displaced {
        if active[v as usize] != DISPLACED {
            continue;
        }
        let Some((room, Reverse(node))) = fewest.pop() else { break };
        work.add(2 * log2(nodes.len()));
        fewest.push((room - 1, Reverse(node)));
        place(v, node, false, &mut moves, &mut active);
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
/// Promotions and lost vbuckets first (they restore service without copying), then
/// active copies, then replicas; within each, vbucket order. Greedy first fit: a move goes
/// to the first step where neither of its nodes has reached the limit (a failed source
/// sends nothing and does not count); a promotion or a lost vbucket copies nothing, so it
/// goes to step 0 and counts against no limit. Loads are kept only for the (node, step)
/// pairs that have some, in a sorted map, and each node remembers the first step where it
/// still has room, so memory is `O(moves)` however many steps there are, and a move
/// probes only steps where one of its two nodes is full.
fn schedule(
    mut moves: Vec<Move>,
    nodes: &[PlanNode],
    limit: u32,
    work: &mut Work,
) -> (Vec<Move>, Vec<core::ops::Range<u32>>) {
    moves.sort_by_key(|m| (m.role != Role::Active, !(m.promotion || m.lost), m.vbucket, m.role));
    work.add(moves.len() as u64 * log2(moves.len()));
    let mut load: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut first_free = vec![0u32; nodes.len()];
    let mut step_of: Vec<u32> = Vec::with_capacity(moves.len());
    let probe_cost = log2(moves.len()) + 1;
    for mv in &moves {
        if mv.promotion || mv.lost {
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
