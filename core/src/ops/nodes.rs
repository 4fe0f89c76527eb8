//! Changes of the node list that every strategy derived from it follows: `add_node`,
//! `remove_node`, and `disruption` (any topology to any other, measured).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;

use serde_json::Value;

use super::{args, Applied, Op, Report};
use crate::disruption;
use crate::error::{Error, Result};
use crate::json::{self, Put as _};
use crate::node;
use crate::strategy::hashed::maglev::MaglevSpec;
use crate::strategy::partitioned::token_ring::TokenRingSpec;
use crate::topology::Topology;

pub(super) fn parse(name: &str, operation: &Value) -> Result<Op> {
    match name {
        "add_node" => {
            let args = args(operation, &["op", "node"])?;
            Ok(Op::AddNode { node: args.node("node")? })
        }
        "remove_node" => {
            let args = args(operation, &["op", "id"])?;
            match args.required("id")? {
                Value::String(id) => Ok(Op::RemoveNode { id: id.clone() }),
                _ => Err(Error::argument("operation.id: expected a string")),
            }
        }
        _ => {
            let args = args(operation, &["op", "to"])?;
            let to = args.required("to")?;
            if !to.is_object() {
                return Err(Error::argument(format!(
                    "operation.to: expected a topology document (an object), found {}",
                    json::type_name(to)
                )));
            }
            let to = Topology::from_value(to)
                .map_err(|err| Error::new(err.kind(), format!("operation.to: {}", err.message())))?;
            Ok(Op::Disruption { to: Box::new(to) })
        }
    }
}

pub(super) fn apply(op: &Op, topology: &Topology) -> Result<Applied> {
    let mut next = topology.clone();
    let mut report = Report::new();
    match op {
        Op::AddNode { node } => {
            follows_node_list(op, topology)?;
            next.nodes.push(node.clone());
            report.put("added", Value::String(node.id.clone()));
        }
        Op::RemoveNode { id } => {
            follows_node_list(op, topology)?;
            let index = node::index_of(&topology.nodes, id)
                .ok_or_else(|| Error::argument(format!("remove_node: no node {id:?}")))?;
            next.nodes.remove(index as usize);
            // The list's own rules first: removing the last node is `no_nodes`, whatever
            // the strategy would say.
            node::check_list(&next.nodes)?;
            next.strategy.node_removed(index, &topology.nodes)?;
            // The indexes share the node list: each follows it as the strategy does.
            for each in &mut next.indexes {
                each.strategy
                    .node_removed(index, &topology.nodes)
                    .map_err(|err| Error::new(err.kind(), format!("indexes.{}.{}", each.name, err.message())))?;
            }
            report.put("removed", Value::String(String::from(id.as_str())));
        }
        Op::Disruption { to } => {
            let next = Topology { epoch: topology.epoch, ..(**to).clone() };
            report.put("disruption", disruption::between(topology, &next)?.to_value());
            return Ok(Applied { topology: next, report });
        }
        _ => unreachable!("nodes::apply takes node operations only"),
    }
    // Maglev tables and token rings measure what moves exactly and cheaply.
    if topology.strategy.spec::<MaglevSpec>().is_some() || topology.strategy.spec::<TokenRingSpec>().is_some() {
        next.check()?;
        report.put("disruption", disruption::between(topology, &next)?.to_value());
    }
    Ok(Applied { topology: next, report })
}

fn follows_node_list(op: &Op, topology: &Topology) -> Result<()> {
    if topology.strategy.follows_node_list() {
        Ok(())
    } else {
        Err(Error::argument(format!(
            "{}: the {} strategy's placement is a table; use its own operations",
            op.name(),
            topology.strategy.type_name()
        )))
    }
}
