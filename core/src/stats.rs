//! How evenly a load spreads over a router's nodes: what the CLI's `stats` prints, in every
//! binding.
//!
//! [`Router::stats`] routes keys (a sample or a listing) and counts them per node;
//! [`Stats::of`] takes a load per node as measured (requests per second, bytes: what the
//! operation `suggest` adds up by owner from its per-shard measurements). The spread is of
//! the load per unit of weight, which an even placement makes equal on every node: its
//! mean over the nodes, the largest over the mean, and the coefficient of variation (the
//! population standard deviation over the mean).
//!
//! The loads are integers and the spread is computed in a fixed order with IEEE
//! arithmetic and `libm`'s square root, so every language reports the same bits.

use alloc::vec;
use alloc::vec::Vec;

use serde_json::{json, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;
use crate::router::Router;

/// The spread of a load over nodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The mean load per unit of weight.
    pub mean: f64,
    /// The largest load per unit of weight over the mean (0 when nothing is loaded).
    pub max_over_mean: f64,
    /// The population standard deviation over the mean (0 when nothing is loaded).
    pub cv: f64,
}

impl Spread {
    /// The spread of `values` (one per node).
    pub fn of(values: &[f64]) -> Spread {
        let count = values.len().max(1) as f64;
        let mean = values.iter().sum::<f64>() / count;
        if mean == 0.0 {
            return Spread { mean, max_over_mean: 0.0, cv: 0.0 };
        }
        let max = values.iter().copied().fold(0.0, f64::max);
        let variance = values.iter().map(|&value| (value - mean) * (value - mean)).sum::<f64>() / count;
        Spread { mean, max_over_mean: max / mean, cv: libm::sqrt(variance) / mean }
    }
}

/// The load of each node of a router and how evenly it spreads.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// The load of each node, in the router's node order.
    pub loads: Vec<u64>,
    /// Their sum.
    pub total: u64,
    /// The spread of the load per unit of weight.
    pub spread: Spread,
}

impl Stats {
    /// The stats of the per-node `loads` of `router` (one per node, in its order).
    ///
    /// # Errors
    /// `invalid_argument` when there is not one load per node; `limit_exceeded` when they
    /// sum past 2^64 - 1.
    pub fn of(router: &Router, loads: Vec<u64>) -> Result<Stats> {
        let nodes = router.nodes();
        if loads.len() != nodes.len() {
            return Err(Error::argument(alloc::format!("{} loads for {} nodes", loads.len(), nodes.len())));
        }
        let total = loads.iter().try_fold(0u64, |sum, &load| sum.checked_add(load)).ok_or_else(too_much)?;
        let per_weight: Vec<f64> = loads.iter().zip(nodes).map(|(&load, node)| load as f64 / node.weight).collect();
        Ok(Stats { spread: Spread::of(&per_weight), loads, total })
    }

    /// As JSON, the same in every binding: `{"total", "nodes": [{"id", "weight", "load",
    /// "share", "load_per_weight"}], "mean", "max_over_mean", "cv"}`, loads as numbers
    /// (decimal strings past 2^53 - 1).
    pub fn to_value(&self, router: &Router) -> Value {
        let nodes: Vec<Value> = self
            .loads
            .iter()
            .zip(router.nodes())
            .map(|(&load, node)| {
                let share = if self.total == 0 { 0.0 } else { load as f64 / self.total as f64 };
                json!({"id": node.id, "weight": node.weight, "load": crate::json::u64_value(load), "share": share,
                       "load_per_weight": load as f64 / node.weight})
            })
            .collect();
        json!({"total": crate::json::u64_value(self.total), "nodes": nodes, "mean": self.spread.mean,
               "max_over_mean": self.spread.max_over_mean, "cv": self.spread.cv})
    }
}

fn too_much() -> Error {
    Error::new(ErrorKind::LimitExceeded, "stats: the loads sum past 2^64 - 1")
}

impl Router {
    /// The number of `keys` each node owns and how evenly they spread: what the CLI's
    /// `stats` prints of a sample or a listing of keys.
    ///
    /// # Errors
    /// As [`Router::node_index`] for a key (naming its index); `limit_exceeded` past 2^64 - 1
    /// keys.
    ///
    /// # Example
    /// ```
    /// use shardroute::Router;
    /// let router = Router::from_json(r#"{"format": "shardroute/1", "epoch": 1,
    ///     "hashing": {"integers": "identity"}, "nodes": [{"id": "a"}, {"id": "b"}],
    ///     "strategy": {"type": "modulo"}}"#)?;
    /// let stats = router.stats((0u64..10).map(|user| user * 2))?;
    /// assert_eq!((stats.loads.as_slice(), stats.total), (&[10u64, 0][..], 10));
    /// // Per unit of weight: 10 and 0, mean 5, max/mean 2, standard deviation 5.
    /// assert_eq!((stats.spread.mean, stats.spread.max_over_mean, stats.spread.cv), (5.0, 2.0, 1.0));
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn stats<'k, I>(&self, keys: I) -> Result<Stats>
    where
        I: IntoIterator,
        I::Item: Into<Key<'k>>,
    {
        let mut per_node = vec![0u64; self.nodes().len()];
        for (index, key) in keys.into_iter().enumerate() {
            let node = self.node_index(key).map_err(|err| crate::argument::at_index(index, err))?;
            let slot = &mut per_node[node as usize];
            *slot = slot.checked_add(1).ok_or_else(too_much)?;
        }
        Stats::of(self, per_node)
    }
}
