//! `route`, `explain` and `validate`: one document, one key at a time.

use std::io::{BufWriter, Write};

use serde_json::{json, Value};
use shardroute::explain::Hit;
use shardroute::{OwnedKey, Router, Topology};

use crate::input::{declared_key, key_value, parse_key, show_key, Failure, Input, KeyLines, Outcome};
use crate::progress::Progress;

/// Refuses two inputs read from stdin.
pub fn one_stdin(inputs: &[Option<&Input>]) -> Outcome {
    if inputs.iter().flatten().filter(|input| input.is_stdin()).count() > 1 {
        return Err(Failure::input("only one input can be `-` (stdin)"));
    }
    Ok(())
}

pub fn route(
    topology: &Input,
    args: Vec<String>,
    keys: Option<Input>,
    integers: bool,
    replicas: Option<u32>,
    json: bool,
) -> Outcome {
    if !args.is_empty() && keys.is_some() {
        return Err(Failure::input("give keys as arguments or with --keys, not both"));
    }
    // Without keys on the command line, they come from --keys or stdin.
    let keys = keys.or_else(|| args.is_empty().then(|| Input(String::from("-"))));
    one_stdin(&[Some(topology), keys.as_ref()])?;
    let router = topology.router()?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    // One line out per key, as the keys are read (a key file is never held whole).
    let emit = |out: &mut BufWriter<_>, key: &OwnedKey| -> Outcome<bool> {
        let line = route_line(&router, key, replicas, json)
            .map_err(|err| Failure::input(format!("key {:?}: {err}", show_key(key))))?;
        // A closed pipe (`| head`) ends the run quietly.
        Ok(writeln!(out, "{line}").is_ok())
    };
    match &keys {
        Some(input) => {
            let mut lines = KeyLines::open(input, integers)?;
            let mut progress = Progress::optional(lines.size(), "bytes");
            let mut index = 0;
            while let Some(key) = lines.next_key()? {
                let key = declared_key(&router, key, &|| format!("{}:{}", input.name(), lines.number()))?;
                progress.at_of(index, lines.consumed());
                if !emit(&mut out, &key)? {
                    return Ok(());
                }
                // Before waiting for more input (a pipe), what is routed goes out.
                if lines.drained() && out.flush().is_err() {
                    return Ok(());
                }
                index += 1;
            }
        }
        None => {
            // Keys given as arguments are all checked before the first is routed.
            let keys = args
                .iter()
                .enumerate()
                .map(|(index, arg)| {
                    let whence = || format!("key {}", index + 1);
                    declared_key(&router, parse_key(arg.as_bytes(), integers, &whence)?, &whence)
                })
                .collect::<Outcome<Vec<_>>>()?;
            for key in &keys {
                if !emit(&mut out, key)? {
                    return Ok(());
                }
            }
        }
    }
    let _ = out.flush();
    Ok(())
}

fn route_line(router: &Router, key: &OwnedKey, replicas: Option<u32>, json: bool) -> shardroute::Result<String> {
    let shard = router.route(key.as_key())?;
    let node = router.node(key.as_key())?;
    let replicas = match replicas {
        Some(count) => Some(router.replicas(key.as_key(), count)?),
        None => None,
    };
    Ok(if json {
        // Written by hand to keep the fields in reading order (serde_json sorts its maps).
        let mut line = format!(r#"{{"key":{},"shard":{shard},"node":{}"#, key_value(key), json!(node));
        if let Some(replicas) = replicas {
            line.push_str(&format!(r#","replicas":{}"#, json!(replicas)));
        }
        line.push('}');
        line
    } else {
        let mut line = format!("{}\t{shard}\t{node}", show_key(key));
        if let Some(replicas) = replicas {
            line.push('\t');
            line.push_str(&replicas.join(","));
        }
        line
    })
}

pub fn explain(topology: &Input, key: &str, integers: bool, replicas: Option<u32>, json: bool) -> Outcome {
    let router = topology.router()?;
    let whence = || String::from("KEY");
    let key = declared_key(&router, parse_key(key.as_bytes(), integers, &whence)?, &whence)?;
    let failed = |err: shardroute::Error| Failure::input(format!("key {:?}: {err}", show_key(&key)));
    let explanation = router.explain(key.as_key()).map_err(failed)?;
    let count = replicas.unwrap_or_else(|| router.max_replica_count().min(3));
    let replicas = router.replicas(key.as_key(), count).map_err(failed)?;
    let node = &router.nodes()[explanation.node_index as usize];
    if json {
        let hashed = explanation.hashed.as_ref().map(|hashed| {
            json!({"function": hashed.function, "input": show_key(&OwnedKey::Bytes(hashed.input.clone())),
                "input_hex": hex(&hashed.input), "tagged": hashed.tagged, "value": format!("{:#018x}", hashed.value)})
        });
        let line = json!({"key": key_value(&key), "strategy": explanation.strategy, "hashed": hashed,
            "hit": hit_text(&explanation.hit), "shard": explanation.shard, "node": node.id,
            "address": node.address, "replicas": replicas, "why": explanation.why()});
        say!("{line}");
        return Ok(());
    }
    let mut rows: Vec<(&str, String)> = vec![("key", format!("{:?}", show_key(&key)))];
    if let Some(hashed) = &explanation.hashed {
        let what = if hashed.tagged { " (the hash tag)" } else { "" };
        let input = show_key(&OwnedKey::Bytes(hashed.input.clone()));
        rows.push(("hashed", format!("{input:?}{what}, {} bytes: {}", hashed.input.len(), hex(&hashed.input))));
        rows.push(("hash", format!("{}: {:#018x} ({})", hashed.function, hashed.value, hashed.value)));
    } else {
        rows.push(("hashed", String::from("nothing: the strategy reads the key itself")));
    }
    rows.push(("strategy", explanation.strategy.to_string()));
    rows.push(("hit", hit_text(&explanation.hit)));
    rows.push(("shard", explanation.shard.to_string()));
    let address = node.address.as_deref().map_or(String::new(), |address| format!(" ({address})"));
    rows.push(("owner", format!("{}{address}", explanation.node)));
    rows.push(("replicas", replicas.join(", ")));
    rows.push(("why", explanation.why()));
    for (name, value) in rows {
        say!("{name:<9} {value}");
    }
    Ok(())
}

/// What the strategy hit, in a few words.
fn hit_text(hit: &Hit) -> String {
    let bytes = |bytes: &Option<Vec<u8>>, open: &str| match bytes {
        Some(bytes) => format!("{:?}", show_key(&OwnedKey::Bytes(bytes.clone()))),
        None => String::from(open),
    };
    match hit {
        Hit::Modulo { nodes, one_based: false } => format!("remainder mod {nodes}"),
        Hit::Modulo { nodes, one_based: true } => format!("remainder mod {nodes}, 1-based"),
        Hit::Jump { buckets } => format!("jump hash over {buckets} nodes"),
        Hit::Point { point } => format!("ring point {point:#x}"),
        Hit::TableEntry { entry, size } => format!("table entry {entry} of {size}"),
        Hit::Token { token } => format!("token {token}"),
        Hit::Vbucket { vbucket, vbuckets, overridden } => {
            format!("vbucket {vbucket} of {vbuckets}{}", if *overridden { " (the key's override)" } else { "" })
        }
        Hit::Slot { slot } => format!("slot {slot}"),
        Hit::Bucket { bucket, buckets } => format!("bucket {bucket} of {buckets}"),
        Hit::KeyRange { range, start, end } => {
            format!("range {range} [{}, {})", bytes(start, "start"), bytes(end, "end"))
        }
        Hit::HashRange { range, start, end } => {
            let end = end.map_or(String::from("2^64"), |end| format!("{end:#x}"));
            format!("range {range} [{start:#x}, {end})")
        }
        Hit::Leaf { prefix } => format!("leaf {prefix:?}"),
        Hit::Partition { partition, partitions, group: Some(group) } => {
            format!("partition {partition} of {partitions}, group {group:?}")
        }
        Hit::Partition { partition, partitions, group: None } => format!("partition {partition} of {partitions}"),
        Hit::Listed => String::from("the key's directory entry"),
        _ => String::from("the shard"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

pub fn validate(topology: &Input) -> Outcome {
    let value: Value = topology.json()?;
    let checked = Topology::from_value(&value).and_then(Router::new);
    match checked {
        Ok(router) => {
            let checksum = if router.topology().checksummed { ", checksum verified" } else { "" };
            say!(
                "ok: {}: {}, {} nodes, epoch {}{checksum}",
                topology.name(),
                router.strategy().type_name(),
                router.nodes().len(),
                router.epoch()
            );
            Ok(())
        }
        Err(err) => Err(Failure::problem(format!("{}: {err}", topology.name()))),
    }
}
