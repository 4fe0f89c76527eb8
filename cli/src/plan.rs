//! `plan`: a change of nodes applied through the core's operations — `plan_rebalance` for a
//! vbucket dictionary, `add_node`/`remove_node` for strategies whose placement follows the
//! node list — and what it moves.

use std::path::Path;

use serde_json::{json, Value};
use shardroute::{ops, Router, Topology};

use crate::input::{write_output, Failure, Input, Outcome};
use crate::lookup::one_stdin;
use crate::measure::{moved, pairs};
use crate::sample::{percent, table, thousands, Keys};

/// The requested change, as given on the command line.
pub struct Change {
    pub add: Vec<String>,
    pub remove: Vec<String>,
    pub fail: Vec<String>,
    pub reweight: Vec<String>,
    /// `--vbucket-weights FILE`: a dictionary planned by load.
    pub vbucket_weights: Option<Input>,
}

/// What a plan reports beside the new document.
struct Planned {
    topology: Topology,
    /// `"vbuckets"` (active vbuckets) or `"keys"` (sampled keys).
    unit: &'static str,
    moves: Vec<Value>,
    /// `(id, before, after)` per node of either topology.
    nodes: Vec<(String, u64, u64)>,
    /// A plan by load: `(id, load before, load after, target)` per node, as the report
    /// states them (numbers, or decimal strings past 2^53).
    loads: Option<Vec<(String, Value, Value, Value)>>,
    moved: u64,
    total: u64,
    summary: String,
}

pub fn plan(input: &Input, change: &Change, sample: u64, out: Option<&Path>, json: bool) -> Outcome {
    // Load alone is a change: the same nodes, rebalanced by what each vbucket weighs.
    if change.add.is_empty()
        && change.remove.is_empty()
        && change.fail.is_empty()
        && change.reweight.is_empty()
        && change.vbucket_weights.is_none()
    {
        return Err(Failure::input(
            "plan: nothing to change; give --add, --remove, --fail, --reweight or --vbucket-weights",
        ));
    }
    one_stdin(&[Some(input), change.vbucket_weights.as_ref()])?;
    let topology = input.topology()?;
    let adds = change.add.iter().map(|spec| node_entry(spec)).collect::<Outcome<Vec<_>>>()?;
    let weights = change.reweight.iter().map(|spec| reweight(spec)).collect::<Outcome<Vec<_>>>()?;
    let refused = |err: shardroute::Error| Failure::input(format!("{}: {err}", input.name()));
    let vbucket_weights = match &change.vbucket_weights {
        Some(_) if topology.strategy.type_name() != "vbucket" => {
            return Err(Failure::input(format!(
                "--vbucket-weights: only a vbucket dictionary is planned by load; {} is {}",
                input.name(),
                topology.strategy.type_name()
            )))
        }
        Some(file) => Some(file.json()?),
        None => None,
    };
    let planned = if topology.strategy.type_name() == "vbucket" {
        rebalance(&topology, change, &adds, &weights, vbucket_weights).map_err(refused)?
    } else {
        let next = node_list(&topology, change, &adds, &weights).map_err(refused)?;
        measured(&topology, next, sample).map_err(|failure| match failure.code {
            2 => Failure::input(format!("{}: {}", input.name(), failure.message)),
            _ => failure,
        })?
    };
    let document = serde_json::to_string_pretty(&planned.topology.to_value()).unwrap_or_default() + "\n";
    if let Some(path) = out {
        write_output(path, &document)?;
    }
    if json {
        let nodes: Vec<_> = planned
            .nodes
            .iter()
            .map(|(id, before, after)| json!({"id": id, "before": before, "after": after}))
            .collect();
        let mut line = json!({"topology": planned.topology.to_value(), "unit": planned.unit, "moved": planned.moved,
            "total": planned.total, "moves": planned.moves, "nodes": nodes});
        if let Some(loads) = &planned.loads {
            line["load"] = loads
                .iter()
                .map(
                    |(id, before, after, target)| json!({"id": id, "before": before, "after": after, "target": target}),
                )
                .collect();
        }
        say!("{line}");
        return Ok(());
    }
    say_raw!("{}", planned.summary);
    let rows: Vec<Vec<String>> = planned
        .nodes
        .iter()
        .map(|(id, before, after)| vec![id.clone(), thousands(*before), thousands(*after)])
        .collect();
    say!();
    say_raw!("{}", table(&["node", &format!("{} before", planned.unit), "after"], &rows));
    if let Some(loads) = &planned.loads {
        let number = |value: &Value| match value {
            Value::Number(number) => number.as_u64().map_or_else(|| number.to_string(), thousands),
            Value::String(text) => text.clone(),
            Value::Null => String::from("-"),
            other => other.to_string(),
        };
        let rows: Vec<Vec<String>> = loads
            .iter()
            .map(|(id, before, after, target)| vec![id.clone(), number(before), number(after), number(target)])
            .collect();
        say!();
        say_raw!("{}", table(&["node", "load before", "after", "target"], &rows));
    }
    match out {
        Some(path) => say!("\nnew topology (epoch {}) written to {}", planned.topology.epoch, path.display()),
        None => say_raw!("\nnew topology:\n{document}"),
    }
    Ok(())
}

/// `ID` or `ID:WEIGHT` as a node entry. The weight is what follows the last `:` when it is
/// a number, so ids such as `10.0.0.1:6379` stay whole.
fn node_entry(spec: &str) -> Outcome<Value> {
    match spec.rsplit_once(':').map(|(id, weight)| (id, weight.parse::<f64>())) {
        Some((_, Ok(weight))) if !weight.is_finite() => Err(not_finite("--add", spec)),
        Some((id, Ok(weight))) if !id.is_empty() => Ok(json!({"id": id, "weight": weight})),
        _ if spec.is_empty() => Err(Failure::input("--add: a node id must not be empty")),
        _ => Ok(json!({"id": spec})),
    }
}

/// `ID:WEIGHT`.
fn reweight(spec: &str) -> Outcome<(String, f64)> {
    match spec.rsplit_once(':').map(|(id, weight)| (id, weight.parse::<f64>())) {
        Some((_, Ok(weight))) if !weight.is_finite() => Err(not_finite("--reweight", spec)),
        Some((id, Ok(weight))) if !id.is_empty() => Ok((id.to_string(), weight)),
        _ => Err(Failure::input(format!("--reweight {spec:?}: expected ID:WEIGHT"))),
    }
}

/// A weight such as `NaN` or `inf`: JSON has no such number (it would be written `null`).
fn not_finite(flag: &str, spec: &str) -> Failure {
    let weight = spec.rsplit_once(':').map_or(spec, |(_, weight)| weight);
    Failure::input(format!("{flag} {spec:?}: invalid_argument: the weight {weight} is not a finite number"))
}

/// Applies one operation given as JSON.
fn apply(topology: &Topology, operation: Value) -> shardroute::Result<(Topology, Value)> {
    let mut result = ops::apply(topology, &operation)?;
    let next = Topology::from_value(&result["topology"])?;
    if let Value::Object(report) = &mut result {
        report.remove("topology");
    }
    Ok((next, result))
}

fn rebalance(
    topology: &Topology,
    change: &Change,
    adds: &[Value],
    weights: &[(String, f64)],
    vbucket_weights: Option<Value>,
) -> shardroute::Result<Planned> {
    let weights: serde_json::Map<String, Value> = weights.iter().map(|(id, w)| (id.clone(), json!(w))).collect();
    let mut operation = json!({"op": "plan_rebalance", "add": adds, "remove": change.remove, "fail": change.fail,
        "weights": weights});
    if let Some(vbucket_weights) = vbucket_weights {
        operation["vbucket_weights"] = vbucket_weights;
    }
    let (next, report) = apply(topology, operation)?;
    // A plan by load reports each node's load and target (serving nodes have a target).
    let loads = report["load"].as_object().map(|load| {
        next.nodes
            .iter()
            .filter_map(|node| {
                let entry = load.get(&node.id)?;
                let target = report["target"].get(&node.id).cloned().unwrap_or(Value::Null);
                Some((node.id.clone(), entry["before"].clone(), entry["after"].clone(), target))
            })
            .collect()
    });
    // Where the actives end once every move is done (a plan that moves nothing has no
    // rebalance to complete: the actives stay where they are).
    let nothing_moves = report["moves"].as_array().is_none_or(Vec::is_empty);
    let done = if nothing_moves { next.clone() } else { apply(&next, json!({"op": "complete_moves"}))?.0 };
    let before = actives(&Router::new(topology.clone())?)?;
    let after = actives(&Router::new(done)?)?;
    let mut nodes: Vec<(String, u64, u64)> = Vec::new();
    for node in next.nodes.iter() {
        let count = |counts: &[(String, u64)]| counts.iter().find(|(id, _)| *id == node.id).map_or(0, |(_, n)| *n);
        nodes.push((node.id.clone(), count(&before), count(&after)));
    }
    let moves = report["moves"].as_array().cloned().unwrap_or_default();
    let moved_actives = report["moved_actives"].as_u64().unwrap_or(0);
    let rows: Vec<Vec<String>> = moves
        .iter()
        .map(|mv| {
            let text = |field: &str| match &mv[field] {
                Value::String(text) => text.clone(),
                Value::Null => String::from("-"),
                other => other.to_string(),
            };
            vec![text("vbucket"), text("role"), text("from"), text("to"), text("kind")]
        })
        .collect();
    let total = u64::from(Router::new(topology.clone())?.shard_range().len() as u32);
    let heading = format!(
        "plan_rebalance: vbucket dictionary{}, epoch {} -> {}\n",
        if loads.is_some() { " by load" } else { "" },
        topology.epoch,
        next.epoch
    );
    let summary = if nothing_moves {
        format!("{heading}nothing to move: every one of the {total} active vbuckets stays where it is\n")
    } else {
        format!(
            "{heading}{} moves in {} steps; {} of {} active vbuckets move (the lower bound is {})\n\n{}",
            moves.len(),
            report["steps"].as_array().map_or(0, Vec::len),
            moved_actives,
            total,
            report["lower_bound"],
            table(&["vbucket", "role", "from", "to", "kind"], &rows)
        )
    };
    Ok(Planned { topology: next, unit: "vbuckets", moves, nodes, loads, moved: moved_actives, total, summary })
}

/// `(node id, active vbuckets)` in node order.
fn actives(router: &Router) -> shardroute::Result<Vec<(String, u64)>> {
    let mut counts: Vec<(String, u64)> = router.nodes().iter().map(|node| (node.id.clone(), 0)).collect();
    for shard in router.shard_range() {
        let owner = router.shard_owner(shard)?;
        if let Some(entry) = counts.iter_mut().find(|(id, _)| id == owner) {
            entry.1 += 1;
        }
    }
    Ok(counts)
}

/// The change as node-list operations: removals (lost or drained alike: the keys leave
/// the node), additions, then weights; one epoch step for the whole change.
fn node_list(
    topology: &Topology,
    change: &Change,
    adds: &[Value],
    weights: &[(String, f64)],
) -> shardroute::Result<Topology> {
    let mut next = topology.clone();
    for id in change.remove.iter().chain(&change.fail) {
        next = apply(&next, json!({"op": "remove_node", "id": id}))?.0;
    }
    for node in adds {
        next = apply(&next, json!({"op": "add_node", "node": node}))?.0;
    }
    if !weights.is_empty() {
        let mut value = next.to_value();
        for (id, weight) in weights {
            let nodes = value["nodes"].as_array_mut().into_iter().flatten();
            match nodes.into_iter().find(|node| node["id"] == json!(id)) {
                Some(node) => node["weight"] = json!(weight),
                None => {
                    let message = format!("--reweight: no node {id:?}");
                    return Err(shardroute::Error::new(shardroute::ErrorKind::InvalidArgument, message));
                }
            }
        }
        // The checksum, if any, is of the old content; the parser checks the new weights.
        if let Value::Object(map) = &mut value {
            map.remove("checksum");
        }
        let checksummed = next.checksummed;
        next = Topology::from_value(&value)?;
        next.checksummed = checksummed;
    }
    next.epoch = ops::next_epoch(topology)?;
    Ok(next)
}

/// Sampled movement between `topology` and `next`.
fn measured(topology: &Topology, next: Topology, sample: u64) -> Outcome<Planned> {
    let refused = |err: shardroute::Error| Failure::input(err);
    let (old, new) = (Router::new(topology.clone()).map_err(refused)?, Router::new(next.clone()).map_err(refused)?);
    let keys = Keys::choose(None, sample, false)?;
    let flows = keys.flows(&old, &new)?;
    let moved = moved(&old, &new, &flows);
    let total = keys.len();
    let moves: Vec<Value> = pairs(&old, &new, &flows)
        .filter(|(from, to, _)| from != to)
        .map(|(from, to, count)| json!({"from": from, "to": to, "keys": count}))
        .collect();
    let mut nodes: Vec<(String, u64, u64)> = Vec::new();
    for (from, to, count) in pairs(&old, &new, &flows) {
        for (id, before, after) in [(from, count, 0), (to, 0, count)] {
            match nodes.iter_mut().find(|(known, _, _)| known == id) {
                Some(entry) => (entry.1, entry.2) = (entry.1 + before, entry.2 + after),
                None => nodes.push((id.to_string(), before, after)),
            }
        }
    }
    let order = |id: &str| {
        let position = |router: &Router| router.nodes().iter().position(|node| node.id == id);
        position(&old).unwrap_or_else(|| old.nodes().len() + position(&new).unwrap_or(0))
    };
    nodes.sort_by_key(|(id, _, _)| order(id));
    let rows: Vec<Vec<String>> = moves
        .iter()
        .map(|mv| {
            let count = mv["keys"].as_u64().unwrap_or(0);
            vec![
                mv["from"].as_str().unwrap_or("").into(),
                mv["to"].as_str().unwrap_or("").into(),
                thousands(count),
                percent(count, total),
            ]
        })
        .collect();
    let summary = format!(
        "{}: epoch {} -> {}; moved {} of {}\n\n{}",
        topology.strategy.type_name(),
        topology.epoch,
        next.epoch,
        percent(moved, total),
        keys.describe(),
        table(&["from", "to", "keys", "share"], &rows)
    );
    Ok(Planned { topology: next, unit: "keys", moves, nodes, loads: None, moved, total, summary })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_specs() {
        assert_eq!(node_entry("d").unwrap(), json!({"id": "d"}));
        assert_eq!(node_entry("d:2").unwrap(), json!({"id": "d", "weight": 2.0}));
        assert_eq!(node_entry("10.0.0.1:6379:1.5").unwrap(), json!({"id": "10.0.0.1:6379", "weight": 1.5}));
        assert_eq!(node_entry("host:port").unwrap(), json!({"id": "host:port"}));
        assert!(node_entry("").is_err());
        assert_eq!(reweight("a:3").unwrap(), ("a".to_string(), 3.0));
        assert!(reweight("a").is_err());
        for spec in ["c:NaN", "c:nan", "c:inf", "c:-inf", "c:infinity"] {
            assert!(node_entry(spec).unwrap_err().message.contains("not a finite number"), "{spec}");
            assert!(reweight(spec).unwrap_err().message.contains("not a finite number"), "{spec}");
        }
    }
}
