//! `diff` and `stats`: what keys do between two topologies, and how evenly one spreads them.

use std::path::Path;

use serde_json::json;
use shardroute::stats::Stats;
use shardroute::Router;

use crate::input::{declares_u64, write_output, Input, Outcome};
use crate::lookup::one_stdin;
use crate::sample::{percent, table, thousands, Keys};

pub fn diff(old: &Input, new: &Input, keys: Option<&Input>, sample: u64, integers: bool, json: bool) -> Outcome {
    one_stdin(&[Some(old), Some(new), keys])?;
    let (old, new) = (old.router()?, new.router()?);
    // Sampled keys are integers when either document declares its keys so (listed keys
    // are read by the core's rule as they are routed).
    let integers = integers || (keys.is_none() && (declares_u64(&old) || declares_u64(&new)));
    let keys = Keys::choose(keys, sample, integers)?;
    let flows = keys.flows(&old, &new)?;
    let moved = moved(&old, &new, &flows);
    let total = keys.len();
    if json {
        let pairs: Vec<_> = pairs(&old, &new, &flows)
            .map(|(from, to, count)| json!({"from": from, "to": to, "keys": count, "moved": from != to}))
            .collect();
        say!("{}", json!({"keys": total, "moved": moved, "moved_fraction": fraction(moved, total), "flows": pairs}));
        return Ok(());
    }
    say!("moved {} ({} of {})", percent(moved, total), thousands(moved), keys.describe());
    say!();
    say_raw!("{}", matrix(&old, &new, &flows));
    Ok(())
}

/// Keys whose node id differs (ids, not indices: a removed node shifts the others).
pub fn moved(old: &Router, new: &Router, flows: &[Vec<u64>]) -> u64 {
    pairs(old, new, flows).filter(|(from, to, _)| from != to).map(|(_, _, count)| count).sum()
}

/// `(from id, to id, keys)` for every pair with keys, in node order.
pub fn pairs<'a>(
    old: &'a Router,
    new: &'a Router,
    flows: &'a [Vec<u64>],
) -> impl Iterator<Item = (&'a str, &'a str, u64)> + 'a {
    flows.iter().enumerate().flat_map(move |(from, row)| {
        row.iter()
            .enumerate()
            .filter(|(_, &count)| count > 0)
            .map(move |(to, &count)| (old.nodes()[from].id.as_str(), new.nodes()[to].id.as_str(), count))
    })
}

/// The flow matrix: a row per old node, a column per new node.
fn matrix(old: &Router, new: &Router, flows: &[Vec<u64>]) -> String {
    let mut header = vec!["from \\ to"];
    header.extend(new.nodes().iter().map(|node| node.id.as_str()));
    let rows: Vec<Vec<String>> = old
        .nodes()
        .iter()
        .zip(flows)
        .map(|(node, row)| std::iter::once(node.id.clone()).chain(row.iter().map(|&count| thousands(count))).collect())
        .collect();
    table(&header, &rows)
}

fn fraction(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

pub fn stats(
    topology: &Input,
    keys: Option<&Input>,
    sample: u64,
    integers: bool,
    svg: Option<&Path>,
    json: bool,
) -> Outcome {
    one_stdin(&[Some(topology), keys])?;
    let router = topology.router()?;
    let integers = integers || (keys.is_none() && declares_u64(&router));
    let keys = Keys::choose(keys, sample, integers)?;
    let counts = keys.loads(&router)?;
    let total = keys.len();
    let nodes = router.nodes();
    // Keys per unit of weight: what an even spread makes equal. Strategies that ignore
    // weights refuse documents with weights other than 1, so for them it is keys per node.
    let loads: Vec<f64> = nodes.iter().zip(&counts).map(|(node, &count)| count as f64 / node.weight).collect();
    // The spread as every binding's `stats` computes it.
    let spread =
        Stats::of(&router, counts.clone()).map_err(|err| crate::input::Failure::input(err.to_string()))?.spread;
    if let Some(path) = svg {
        let bars: Vec<(&str, u64)> = nodes.iter().map(|node| node.id.as_str()).zip(counts.iter().copied()).collect();
        let title = format!("{}: {} over {} nodes", router.strategy().type_name(), keys.describe(), nodes.len());
        // The line each bar would reach under a perfectly even spread is the mean of the
        // per-weight load times its weight; one line is drawn at the plain mean.
        let mean = total as f64 / nodes.len() as f64;
        write_output(path, &crate::svg::bar_chart(&title, &bars, mean))?;
    }
    if json {
        let per_node: Vec<_> = nodes
            .iter()
            .zip(&counts)
            .zip(&loads)
            .map(|((node, &count), &load)| {
                json!({"id": node.id, "weight": node.weight, "keys": count, "share": fraction(count, total),
                    "keys_per_weight": load})
            })
            .collect();
        let line = json!({"strategy": router.strategy().type_name(), "keys": total, "nodes": per_node,
            "mean": spread.mean, "max_over_mean": spread.max_over_mean, "cv": spread.cv});
        say!("{line}");
        return Ok(());
    }
    say!("{}: {} over {} nodes", router.strategy().type_name(), keys.describe(), nodes.len());
    say!();
    let rows: Vec<Vec<String>> = nodes
        .iter()
        .zip(&counts)
        .zip(&loads)
        .map(|((node, &count), &load)| {
            let per_weight = thousands(load.round() as u64);
            vec![node.id.clone(), node.weight.to_string(), thousands(count), percent(count, total), per_weight]
        })
        .collect();
    say_raw!("{}", table(&["node", "weight", "keys", "share", "keys/weight"], &rows));
    say!();
    say!(
        "keys per unit of weight: mean {:.1}, max/mean {:.4}, coefficient of variation {:.4}",
        spread.mean,
        spread.max_over_mean,
        spread.cv
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use shardroute::stats::Spread;

    #[test]
    fn spread_of_even_and_uneven_loads() {
        let even = Spread::of(&[10.0, 10.0, 10.0]);
        assert_eq!((even.mean, even.max_over_mean, even.cv), (10.0, 1.0, 0.0));
        let uneven = Spread::of(&[0.0, 20.0]);
        assert_eq!((uneven.mean, uneven.max_over_mean, uneven.cv), (10.0, 2.0, 1.0));
        assert_eq!(Spread::of(&[0.0, 0.0]).cv, 0.0);
    }
}
