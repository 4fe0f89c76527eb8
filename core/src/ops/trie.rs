//! The trie's own operations: `trie_split` (a leaf becomes two, the new half for a new
//! node) and `trie_remove` (a node's leaf merges back into its sibling). What each moves
//! is exact: only the keys under the changed prefixes.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::{args, Applied, Edit, Op, Report};
use crate::error::{Error, ErrorKind, Result};
use crate::json::{self, Put as _};
use crate::limits::MAX_TRIE_DEPTH;
use crate::node;
use crate::strategy::partitioned::trie::{parse_prefix, Prefix, TrieLeaf, TrieSpec};
use crate::strategy::Variant;
use crate::topology::Topology;

pub(super) fn parse(name: &str, operation: &Value) -> Result<Op> {
    if name == "trie_split" {
        let args = args(operation, &["op", "leaf", "node"])?;
        let path = args.path("leaf");
        let leaf = parse_prefix(args.str("leaf")?).map_err(|err| err.at(&path, ErrorKind::InvalidArgument))?;
        Ok(Op::TrieSplit { leaf, node: args.node("node")? })
    } else {
        Ok(Op::TrieRemove { node: args(operation, &["op", "node"])?.str("node")?.to_string() })
    }
}

impl Edit for TrieSpec {
    fn edit(&self, op: &Op, topology: &Topology) -> Result<Applied> {
        let (leaves, nodes, report) = match op {
            Op::TrieSplit { leaf, node } => {
                let (leaves, report) = split(self, *leaf, &node.id, topology)?;
                let mut nodes = topology.nodes.clone();
                nodes.push(node.clone());
                (leaves, nodes, report)
            }
            Op::TrieRemove { node } => remove(self, node, topology)?,
            _ => return Err(super::refused(op, topology)),
        };
        let strategy = TrieSpec { leaves }.into_strategy()?;
        Ok(Applied { topology: Topology { nodes, strategy, ..topology.clone() }, report })
    }
}

fn leaf_value(prefix: Prefix, node: &str) -> Value {
    let mut entry = Map::new();
    entry.put("prefix", Value::String(prefix.to_string()));
    entry.put("node", Value::String(node.into()));
    Value::Object(entry)
}

fn move_value(prefix: Prefix, from: &str, to: &str) -> Value {
    let mut entry = Map::new();
    entry.put("prefix", Value::String(prefix.to_string()));
    entry.put("from", Value::String(from.into()));
    entry.put("to", Value::String(to.into()));
    Value::Object(entry)
}

/// Leaf `p` becomes `p0`, kept by its node, and `p1`, owned by the new node (appended to
/// the list). Report: `added` (the new id), `split` (the prefix) and `moves`:
/// `[{"prefix": "101", "from": "b", "to": "n7"}]`, the keys whose hash starts with
/// `prefix` (and only they) move.
fn split(spec: &TrieSpec, prefix: Prefix, new_id: &str, topology: &Topology) -> Result<(Vec<TrieLeaf>, Report)> {
    let Some(index) = spec.leaf_index(prefix) else {
        let inner = spec.leaves.iter().any(|leaf| prefix.covers(leaf.prefix));
        return Err(Error::argument(if inner {
            format!("trie_split: \"{prefix}\" is an inner node of the trie, not a leaf")
        } else {
            format!("trie_split: \"{prefix}\" is not a leaf of the trie")
        }));
    };
    let (Some(low), Some(high)) = (prefix.child(false), prefix.child(true)) else {
        return Err(Error::limit(format!(
            "trie_split: leaf \"{prefix}\" is already {MAX_TRIE_DEPTH} bits deep, the trie depth limit"
        )));
    };
    let owner = spec.leaves[index].node;
    let new = topology.nodes.len() as u32;
    let mut leaves = spec.leaves.clone();
    leaves[index] = TrieLeaf { prefix: low, node: owner };
    leaves.insert(index + 1, TrieLeaf { prefix: high, node: new });
    let mut report = Report::new();
    report.put("added", Value::String(new_id.into()));
    report.put("split", Value::String(prefix.to_string()));
    report.put("moves", Value::Array(vec![move_value(high, &topology.nodes[owner as usize].id, new_id)]));
    Ok((leaves, report))
}

/// Removes a node and its leaf `p`. When `p`'s sibling is a leaf, the two merge into
/// `parent(p)`, owned by the sibling's node; otherwise the whole subtree of `parent(p)`
/// collapses into one leaf owned by the survivor (the sibling subtree's shallowest leaf,
/// the first in trie order on a tie) and the subtree's other nodes are removed too.
/// Report: `removed_nodes` (every node that goes, in trie order), `leaf` (`{"prefix",
/// "node"}`, the merged leaf) and `moves` (one `{"prefix", "from", "to"}` per leaf whose
/// keys change node). `no_nodes` when the node owns the root leaf.
fn remove(spec: &TrieSpec, id: &str, topology: &Topology) -> Result<(Vec<TrieLeaf>, Vec<node::Node>, Report)> {
    let node =
        node::index_of(&topology.nodes, id).ok_or_else(|| Error::argument(format!("trie_remove: no node {id:?}")))?;
    let Some(leaf) = spec.leaves.iter().position(|leaf| leaf.node == node) else {
        return Err(Error::argument(format!("trie_remove: node {id:?} owns no leaf")));
    };
    let prefix = spec.leaves[leaf].prefix;
    let (Some(parent), Some(sibling)) = (prefix.parent(), prefix.sibling()) else {
        return Err(Error::new(
            ErrorKind::NoNodes,
            format!("trie_remove: node {id:?} owns the root leaf, the whole key space; a topology needs a node"),
        ));
    };
    // The parent's subtree is a contiguous run of leaves in trie order.
    let first = spec.leaves.partition_point(|candidate| candidate.prefix.start() < parent.start());
    let end = first + spec.leaves[first..].iter().take_while(|candidate| parent.covers(candidate.prefix)).count();
    let survivor = spec.leaves[first..end]
        .iter()
        .filter(|candidate| sibling.covers(candidate.prefix))
        .min_by_key(|candidate| (candidate.prefix.depth(), candidate.prefix.start()))
        .copied()
        .ok_or_else(|| json::at("strategy.leaves", "the trie does not cover the hash space"))?;
    let name = |index: u32| topology.nodes[index as usize].id.as_str();
    let mut gone = vec![false; topology.nodes.len()];
    let mut removed: Vec<Value> = Vec::new();
    let mut moves = Vec::new();
    for leaf in spec.leaves[first..end].iter().filter(|candidate| candidate.node != survivor.node) {
        gone[leaf.node as usize] = true;
        removed.push(Value::String(String::from(name(leaf.node))));
        moves.push(move_value(leaf.prefix, name(leaf.node), name(survivor.node)));
    }
    // Node indices close up over the removed nodes.
    let mut renumber = vec![0u32; topology.nodes.len()];
    let mut kept = Vec::with_capacity(topology.nodes.len());
    for (index, node) in topology.nodes.iter().enumerate() {
        renumber[index] = kept.len() as u32;
        if !gone[index] {
            kept.push(node.clone());
        }
    }
    let mut leaves: Vec<TrieLeaf> = Vec::with_capacity(spec.leaves.len() + 1 - (end - first));
    leaves.extend_from_slice(&spec.leaves[..first]);
    leaves.push(TrieLeaf { prefix: parent, node: survivor.node });
    leaves.extend_from_slice(&spec.leaves[end..]);
    for leaf in &mut leaves {
        leaf.node = renumber[leaf.node as usize];
    }
    let mut report = Report::new();
    report.put("removed_nodes", Value::Array(removed));
    report.put("leaf", leaf_value(parent, name(survivor.node)));
    report.put("moves", Value::Array(moves));
    Ok((leaves, kept, report))
}
