//! Token ring, as Cassandra and ScyllaDB place partitions (DeCandia et al., "Dynamo",
//! SOSP 2007, strategy 1; Lakshman & Malik, "Cassandra", LADIS 2009; `num_tokens`
//! virtual nodes since Cassandra 1.2).
//!
//! **Algorithm.** The ring is the signed 64-bit token space `[-2^63, 2^63)`, wrapping
//! from `2^63 - 1` to `-2^63` as Cassandra's Murmur3Partitioner does. Each node holds
//! tokens; a token owns the range `(previous token, token]`, so a key belongs to the
//! first token `>=` its own token, wrapping past the largest token to the smallest.
//! A key's token is its 64-bit hash under the topology's hashing, read as a two's
//! complement `i64` (`hash as i64`). Replicas continue clockwise to the next tokens of
//! nodes not yet chosen: Cassandra's SimpleStrategy.
//!
//! **The document.**
//!
//! ```json
//! {"type": "token_ring", "tokens_per_node": 8, "token_seed": 0,
//!  "tokens": {"cass-1": ["-9223372036854775808", "0"], "cass-2": ["-4611686018427387904"]}}
//! ```
//!
//! `tokens_per_node` (default 8, at most [`limits::MAX_TOKENS_PER_NODE`]) and
//! `token_seed` (a u64 as a number or a decimal string, default 0) drive the generator;
//! `tokens` (optional) maps node ids to explicit token lists, each token an integer in
//! `-2^63..2^63` written as a number or a decimal string. The canonical form spells out
//! both parameters and writes explicit tokens as decimal strings in ascending order.
//!
//! **Tokens.** A node listed under `tokens` holds exactly those (an imported cluster:
//! `nodetool ring` output); its tokens fix its share, so its weight must stay 1, and
//! duplicate tokens anywhere in `tokens` are rejected, as Cassandra refuses a token
//! collision. Every other node holds `round(tokens_per_node * weight)` tokens (at
//! least 1; Cassandra 4.0 defaults to 16 per node and ScyllaDB to 256: see the balance
//! figures below) drawn from a generator that is part of
//! the document, so every language derives the same ring: token `j` of node `id` is
//! the `j+1`-th output of SplitMix64 (Steele, Lea & Flood, "Fast Splittable
//! Pseudorandom Number Generators", OOPSLA 2014; the reference `splitmix64.c`) seeded
//! with `token_seed ^ fnv1a64(id)`, read as `i64`. A node's tokens depend only on the
//! seed, its id and its count, so adding a node never moves another node's tokens, and
//! raising `tokens_per_node` keeps every existing token (the stream only grows).
//!
//! **Tie-break.** Tokens are sorted by `(token, node id bytes)`: when two nodes hold
//! the same token (explicit duplicates are rejected; generated collisions have
//! probability about `P^2 / 2^65`), the node whose id sorts first owns the range and
//! the other an empty one. Ownership never depends on the order of the node list.
//!
//! **Guarantees.** Adding a node moves only the keys that land on its new tokens: each
//! of its `T` tokens takes the tail of the range it falls in, so it takes slices from
//! up to `T` different nodes (Cassandra's argument for vnodes: bootstrap streams from
//! many peers; with `T = 8` the tests see at least 4 donors among 5 to 50 nodes). Removing a node moves only its own keys, each to the node of the next
//! token. Balance is that of random tokens, which is modest: with `T = 8` the most
//! loaded of 10 nodes typically owns 1.6 times its fair share (2.1 times of 100
//! nodes), with `T = 256` about 1.1 times. Raise `tokens_per_node` for balance, or give
//! explicit tokens (evenly spaced ones split the ring exactly); [`TokenRing::ownership`]
//! gives each node's exact share.
//!
//! **Key hashing.** Keys need their full 64 bits to spread over the ring, so the
//! `crc32` function (32 bits) is refused for this strategy; `integers: "identity"`
//! places an integer key `k` at token `k as i64`, which is the way to address token
//! ranges directly (and a bad choice for sequential ids).
//!
//! **Cost.** Build: a bucket sort of the `P` tokens, linear on spread tokens; lookup a binary search,
//! `O(log P)`; memory 12 bytes per token. At most [`limits::MAX_TOKENS_PER_NODE`] per
//! node and [`limits::MAX_RING_POINTS`] tokens in all.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::explain::Hit;
use crate::hashing::{HashFunction, KeyHashing};
use crate::json::{self, Object, Put as _};
use crate::key::parse_decimal_u64;
use crate::limits;
use crate::node::Node;
use crate::strategy::hashed::ring::points_for;
use crate::strategy::points::sort_points;
use crate::strategy::spec::{count_param, distinct_successors, NodeFromHash, Spec};

/// Default tokens per unit of node weight.
pub const DEFAULT_TOKENS_PER_NODE: u32 = 8;

/// `{"type": "token_ring", "tokens_per_node": 8, "token_seed": 0, "tokens": {"id": [...]}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRingSpec {
    /// Generated tokens per unit of node weight, in `1..=`[`limits::MAX_TOKENS_PER_NODE`].
    pub tokens_per_node: u32,
    /// The generator's seed (default 0): a u64, written as a number or a decimal string.
    pub token_seed: u64,
    /// Explicit tokens: `(node index, its tokens in ascending order)`, by node index.
    pub tokens: Vec<(u32, Vec<i64>)>,
}

impl Spec for TokenRingSpec {
    const TYPE: &'static str = "token_ring";
    const FIELDS: &'static [&'static str] = &["type", "tokens_per_node", "token_seed", "tokens"];
    const WEIGHTED: bool = true;
    type Placement = TokenRing;

    fn parse(object: &Object<'_>, nodes: &[Node]) -> Result<TokenRingSpec> {
        let tokens_per_node =
            count_param(object, "tokens_per_node", DEFAULT_TOKENS_PER_NODE, limits::MAX_TOKENS_PER_NODE)?;
        let token_seed = match object.optional("token_seed") {
            Some(value) => json::u64(&object.path_of("token_seed"), value)?,
            None => 0,
        };
        let tokens = match object.optional("tokens") {
            Some(value) => parse_tokens(&object.path_of("tokens"), value, nodes)?,
            None => Vec::new(),
        };
        Ok(TokenRingSpec { tokens_per_node, token_seed, tokens })
    }

    fn check(&self, nodes: &[Node]) -> Result<()> {
        check(self, nodes)
    }

    fn follows_node_list(&self) -> bool {
        // Explicit tokens are keyed by node id; a new node gets generated ones.
        true
    }

    fn node_removed(&mut self, index: u32, _nodes: &[Node]) -> Result<()> {
        // The node's explicit tokens go with it: its ranges fall to the next tokens.
        self.tokens.retain(|(node, _)| *node != index);
        for (node, _) in &mut self.tokens {
            if *node > index {
                *node -= 1;
            }
        }
        Ok(())
    }

    fn write(&self, object: &mut Map<String, Value>, nodes: &[Node]) {
        object.put("tokens_per_node", self.tokens_per_node.into());
        object.put("token_seed", json::u64_value(self.token_seed));
        if !self.tokens.is_empty() {
            object.put("tokens", tokens_value(&self.tokens, nodes));
        }
    }

    fn compile(&self, hashing: &KeyHashing, nodes: &[Node]) -> Result<TokenRing> {
        if matches!(hashing.function, HashFunction::Crc32) {
            return Err(json::at(
                "hashing.function",
                "the token_ring strategy places keys by their full 64-bit hash; crc32 gives 32 bits, which would put every key in one 2^-32 slice of the ring (use siphash-2-4)",
            ));
        }
        TokenRing::new(self, nodes)
    }
}

impl TokenRingSpec {
    /// The explicit tokens of node `index`, if the document lists them.
    pub fn explicit_tokens(&self, index: u32) -> Option<&[i64]> {
        self.tokens
            .binary_search_by_key(&index, |(node, _)| *node)
            .ok()
            .map(|position| self.tokens[position].1.as_slice())
    }

    /// How many tokens node `index` holds.
    fn token_count(&self, index: u32, nodes: &[Node]) -> u64 {
        match self.explicit_tokens(index) {
            Some(tokens) => tokens.len() as u64,
            None => points_for(self.tokens_per_node, nodes[index as usize].weight),
        }
    }

    /// The tokens of node `index` of `nodes`: its explicit list, or its generated ones
    /// (in generator order); `None` when `index` is out of range or the node would hold
    /// more than [`limits::MAX_RING_POINTS`] tokens (a weight no document accepts).
    pub fn tokens_of(&self, index: u32, nodes: &[Node]) -> Option<Vec<i64>> {
        let node = nodes.get(index as usize)?;
        Some(match self.explicit_tokens(index) {
            Some(tokens) => tokens.to_vec(),
            None => {
                let count = self.token_count(index, nodes);
                if count > limits::MAX_RING_POINTS {
                    return None;
                }
                generated_tokens(self.token_seed, &node.id, count as u32)
            }
        })
    }
}

/// Explicit tokens as the document writes them: node id → its tokens as decimal strings.
pub(crate) fn tokens_value(tokens: &[(u32, Vec<i64>)], nodes: &[Node]) -> Value {
    let lists = tokens
        .iter()
        .map(|(node, tokens)| {
            let list = tokens.iter().map(|token| Value::String(format!("{token}"))).collect();
            (nodes[*node as usize].id.clone(), Value::Array(list))
        })
        .collect();
    Value::Object(lists)
}

pub(crate) fn parse_tokens(path: &str, value: &Value, nodes: &[Node]) -> Result<Vec<(u32, Vec<i64>)>> {
    let Value::Object(map) = value else {
        return Err(json::at(
            path,
            format_args!("expected an object (node id -> tokens), found {}", json::type_name(value)),
        ));
    };
    let mut lists: Vec<(u32, Vec<i64>)> = Vec::with_capacity(map.len());
    // Every explicit token with where it came from, to find duplicates across nodes.
    let mut all: Vec<(i64, u32, usize)> = Vec::new();
    for (id, list) in map {
        let list_path = format!("{path}[{id:?}]");
        let index = nodes
            .iter()
            .position(|node| node.id == *id)
            .ok_or_else(|| json::at(&list_path, format_args!("names node {id:?}, which is not in nodes")))?
            as u32;
        let node = &nodes[index as usize];
        if node.weight != 1.0 {
            return Err(json::at(
                &format!("nodes[{index}].weight"),
                "a node with explicit tokens owns what its tokens give it; leave its weight at 1",
            ));
        }
        let entries = json::array(&list_path, list)?;
        if entries.is_empty() {
            return Err(json::at(&list_path, "a node needs at least one token"));
        }
        if entries.len() > limits::MAX_TOKENS_PER_NODE as usize {
            return Err(Error::limit(format!(
                "{list_path}: {} tokens; the limit is {}",
                entries.len(),
                limits::MAX_TOKENS_PER_NODE
            )));
        }
        let mut tokens = Vec::with_capacity(entries.len());
        for (position, entry) in entries.iter().enumerate() {
            let token = token_value(&format!("{list_path}[{position}]"), entry)?;
            all.push((token, index, position));
            tokens.push(token);
        }
        tokens.sort_unstable();
        lists.push((index, tokens));
    }
    all.sort_unstable();
    for pair in all.windows(2) {
        if pair[0].0 == pair[1].0 {
            let (token, first, first_position) = pair[0];
            let (_, second, second_position) = pair[1];
            return Err(json::at(
                &format!("{path}[{:?}][{second_position}]", nodes[second as usize].id),
                format_args!(
                    "token {token} is also {path}[{:?}][{first_position}]; every token must be unique",
                    nodes[first as usize].id
                ),
            ));
        }
    }
    lists.sort_unstable_by_key(|(index, _)| *index);
    Ok(lists)
}

/// A token: an integer in `-2^63..2^63`, as a JSON integer or a decimal string.
fn token_value(path: &str, value: &Value) -> Result<i64> {
    let parsed = match value {
        Value::Number(number) => number.as_i64(),
        Value::String(text) => parse_decimal_i64(text),
        _ => None,
    };
    parsed.ok_or_else(|| {
        json::at(
            path,
            format_args!(
                "expected a token in -9223372036854775808..=9223372036854775807 (number or decimal string), found {}",
                json::describe(value)
            ),
        )
    })
}

/// An optional `-` and decimal digits, in `i64` range.
fn parse_decimal_i64(text: &str) -> Option<i64> {
    match text.strip_prefix('-') {
        Some(digits) => {
            let magnitude = parse_decimal_u64(digits)?;
            if magnitude <= 1 << 63 {
                Some((magnitude as i64).wrapping_neg())
            } else {
                None
            }
        }
        None => i64::try_from(parse_decimal_u64(text)?).ok(),
    }
}

/// FNV-1a, 64 bits (Fowler, Noll & Vo): how a node id perturbs the token seed.
///
/// # Example
/// ```
/// use shardroute::strategy::partitioned::token_ring::fnv1a64;
/// // The FNV reference values.
/// assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
/// assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
/// assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
/// ```
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// The `count` generated tokens of node `id`: SplitMix64 seeded with
/// `token_seed ^ fnv1a64(id)`, each output read as `i64`, in generator order.
///
/// A prefix of a longer list: `generated_tokens(s, id, 8)` starts with
/// `generated_tokens(s, id, 4)`.
///
/// # Example
/// ```
/// use shardroute::strategy::partitioned::token_ring::{fnv1a64, generated_tokens};
/// // Cancel the id's perturbation to get SplitMix64 seeded with 1234567, whose
/// // reference outputs (Rosetta Code, "Pseudo-random numbers/Splitmix64") start
/// // 6457827717110365317, 3203168211198807973, 9817491932198370423.
/// let tokens = generated_tokens(1234567 ^ fnv1a64(b"n1"), "n1", 3);
/// assert_eq!(tokens, [6457827717110365317, 3203168211198807973, 9817491932198370423u64 as i64]);
/// ```
pub fn generated_tokens(token_seed: u64, id: &str, count: u32) -> Vec<i64> {
    let mut state = token_seed ^ fnv1a64(id.as_bytes());
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as i64
        })
        .collect()
}

/// The rules of a token ring against its nodes: what parsing and every edit end with,
/// and what [`TokenRing::new`] checks again for specs and nodes built by hand.
fn check(spec: &TokenRingSpec, nodes: &[Node]) -> Result<()> {
    if nodes.is_empty() {
        return Err(Error::new(ErrorKind::NoNodes, "nodes: a token ring needs at least one node"));
    }
    if let Some(index) = nodes.iter().position(|node| !(node.weight > 0.0 && node.weight <= limits::MAX_WEIGHT)) {
        return Err(json::at(&format!("nodes[{index}].weight"), "must be a finite number > 0 and <= 1e6"));
    }
    if spec.tokens_per_node == 0 {
        return Err(json::at("strategy.tokens_per_node", "must be at least 1"));
    }
    if spec.tokens_per_node > limits::MAX_TOKENS_PER_NODE {
        return Err(Error::limit(format!("strategy.tokens_per_node: the limit is {}", limits::MAX_TOKENS_PER_NODE)));
    }
    for (index, tokens) in &spec.tokens {
        if *index as usize >= nodes.len() || tokens.is_empty() {
            return Err(json::at(
                "strategy.tokens",
                format_args!("node index {index}: out of range or without tokens"),
            ));
        }
        if tokens.len() > limits::MAX_TOKENS_PER_NODE as usize {
            return Err(Error::limit(format!(
                "strategy.tokens: the limit is {} per node",
                limits::MAX_TOKENS_PER_NODE
            )));
        }
    }
    let total: u64 = (0..nodes.len() as u32).map(|index| spec.token_count(index, nodes)).sum();
    if total > limits::MAX_RING_POINTS {
        return Err(Error::limit(format!(
            "strategy: the ring would hold more than {} tokens",
            limits::MAX_RING_POINTS
        )));
    }
    Ok(())
}

/// A built token ring: sorted tokens and, in parallel, the node index holding each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRing {
    tokens: Vec<i64>,
    owners: Vec<u32>,
    node_count: u32,
}

impl TokenRing {
    /// Builds the ring of `nodes` under `spec` (already validated against `nodes`).
    ///
    /// # Errors
    /// None for a spec parsed against the same `nodes`. For a spec or nodes built by
    /// hand: `no_nodes` for an empty list; `invalid_topology` for a weight outside
    /// `(0, 1e6]`, a `tokens_per_node` of 0, explicit tokens naming a node index out of
    /// range or an empty list; `limit_exceeded` past [`limits::MAX_TOKENS_PER_NODE`]
    /// or [`limits::MAX_RING_POINTS`].
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::token_ring::{TokenRing, TokenRingSpec};
    /// use shardroute::Node;
    /// let node = |id: &str| Node { id: id.into(), address: None, weight: 1.0, zone: None, state: Default::default() };
    /// let nodes = [node("a"), node("b")];
    /// // "a" owns (0, 100], "b" owns (100, 0] (wrapping).
    /// let spec = TokenRingSpec { tokens_per_node: 8, token_seed: 0, tokens: vec![(0, vec![100]), (1, vec![0])] };
    /// let ring = TokenRing::new(&spec, &nodes)?;
    /// assert_eq!(ring.node_of(100), 0);
    /// assert_eq!(ring.node_of(101), 1);
    /// assert_eq!(ring.node_of(u64::MAX), 1); // -1 as a token
    /// assert_eq!(ring.node_of(0), 1);
    /// assert_eq!(ring.node_of(1), 0);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn new(spec: &TokenRingSpec, nodes: &[Node]) -> Result<TokenRing> {
        check(spec, nodes)?;
        // Tokens as u64 with the sign bit flipped, which keeps their order, for the
        // linear bucket sort; ties by node id bytes.
        const SIGN: u64 = 1 << 63;
        let mut entries: Vec<(u64, u32)> = Vec::new();
        for index in 0..nodes.len() as u32 {
            let tokens = spec.tokens_of(index, nodes).unwrap_or_default();
            entries.extend(tokens.into_iter().map(|token| (token as u64 ^ SIGN, index)));
        }
        let sorted = sort_points(entries, |a, b| nodes[a as usize].id.as_bytes().cmp(nodes[b as usize].id.as_bytes()));
        Ok(TokenRing {
            tokens: sorted.positions.iter().map(|&position| (position ^ SIGN) as i64).collect(),
            owners: sorted.owners,
            node_count: nodes.len() as u32,
        })
    }

    /// The index of the token owning `token`: the first `>= token`, wrapping to 0.
    #[inline]
    fn position_of(&self, token: i64) -> usize {
        let index = self.tokens.partition_point(|&t| t < token);
        if index == self.tokens.len() {
            0
        } else {
            index
        }
    }

    /// The token owning `token`: the first `>= token`, wrapping.
    pub(crate) fn token_at(&self, token: i64) -> i64 {
        self.tokens[self.position_of(token)]
    }

    /// The node index owning a key hash (the key's token is `hash as i64`).
    #[inline]
    pub fn node_of(&self, hash: u64) -> u32 {
        self.owners[self.position_of(hash as i64)]
    }

    /// The first `count` distinct nodes clockwise from the token of `hash`, into `out`
    /// (cleared first). `count` above the node count gives every node.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::token_ring::{TokenRing, TokenRingSpec};
    /// use shardroute::Node;
    /// let node = |id: &str| Node { id: id.into(), address: None, weight: 1.0, zone: None, state: Default::default() };
    /// let spec = TokenRingSpec { tokens_per_node: 8, token_seed: 0, tokens: vec![(0, vec![10, 30]), (1, vec![20]), (2, vec![40])] };
    /// let ring = TokenRing::new(&spec, &[node("a"), node("b"), node("c")])?;
    /// let mut out = Vec::new();
    /// ring.replicas_of(15, 3, &mut out); // tokens 20 (b), 30 (a), 40 (c)
    /// assert_eq!(out, [1, 0, 2]);
    /// ring.replicas_of(35, 2, &mut out); // 40 (c), then wrap to 10 (a)
    /// assert_eq!(out, [2, 0]);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        distinct_successors(&self.owners, self.position_of(hash as i64), count.min(self.node_count) as usize, out);
    }

    /// The ring's tokens in ascending order (ties in node id order).
    pub fn tokens(&self) -> &[i64] {
        &self.tokens
    }

    /// The node index holding each token of [`tokens`](TokenRing::tokens).
    pub fn owners(&self) -> &[u32] {
        &self.owners
    }

    /// How much of the ring each node owns, by node index, in tokens (the shares sum
    /// to `2^64`): the exact fraction of uniformly hashed keys it receives.
    ///
    /// # Example
    /// ```
    /// use shardroute::strategy::partitioned::token_ring::{TokenRing, TokenRingSpec};
    /// use shardroute::Node;
    /// let node = |id: &str| Node { id: id.into(), address: None, weight: 1.0, zone: None, state: Default::default() };
    /// let spec = TokenRingSpec { tokens_per_node: 8, token_seed: 0, tokens: vec![(0, vec![i64::MIN]), (1, vec![0])] };
    /// let ring = TokenRing::new(&spec, &[node("a"), node("b")])?;
    /// assert_eq!(ring.ownership(), [1u128 << 63, 1u128 << 63]);
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn ownership(&self) -> Vec<u128> {
        let mut shares = alloc::vec![0u128; self.node_count as usize];
        for (index, &owner) in self.owners.iter().enumerate() {
            shares[owner as usize] += self.range_length(index);
        }
        shares
    }

    /// The length of the range token `index` owns, `(previous token, token]`: the
    /// first token's range wraps from the last token (all `2^64` positions when every
    /// token is equal); a token equal to the one before it owns nothing.
    pub(crate) fn range_length(&self, index: usize) -> u128 {
        let token = self.tokens[index] as u64;
        if index == 0 {
            let last = self.tokens[self.tokens.len() - 1] as u64;
            match token.wrapping_sub(last) {
                0 => 1 << 64,
                length => u128::from(length),
            }
        } else {
            u128::from(token.wrapping_sub(self.tokens[index - 1] as u64))
        }
    }
}

impl NodeFromHash for TokenRing {
    #[inline]
    fn node_of(&self, hash: u64) -> u32 {
        TokenRing::node_of(self, hash)
    }

    fn replicas_of(&self, hash: u64, count: u32, out: &mut Vec<u32>) {
        TokenRing::replicas_of(self, hash, count, out);
    }

    fn node_count(&self) -> u32 {
        self.node_count
    }

    fn hit(&self, hash: u64) -> Hit {
        Hit::Token { token: self.token_at(hash as i64) }
    }
}
