//! Redis Cluster inputs for the `redis_replies`, `redirects` and `redis_session`
//! targets: `CLUSTER SHARDS` and `CLUSTER SLOTS` replies as the JSON values the shells
//! hand to the core, built from the fuzzer's choices (slot pairs near the edges and
//! overlapping, node ids from a small pool so duplicates occur, empty and over-long ids,
//! both map forms, any role and health), and `MOVED`/`ASK` texts.

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use serde_json::{json, Value};

/// Slots the generators favour: the edges, and a few in between.
const SLOTS: &[u64] = &[0, 1, 2, 100, 5460, 5461, 8191, 8192, 10922, 10923, 16382, 16383, 16384, 65535];

/// A slot: mostly one of [`SLOTS`], sometimes any `u64`.
pub fn slot(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0..=9u8)? {
        0 => json!(u.arbitrary::<u64>()?),
        1 => json!(u.int_in_range(0..=16383u64)?),
        2 => json!(-1),
        3 => json!(1.5),
        _ => json!(SLOTS[u.choose_index(SLOTS.len())?]),
    })
}

/// A node id: from a pool of six (so nodes repeat), empty, 1,024 or 1,025 bytes, or any
/// short text.
pub fn node_id(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=11u8)? {
        0 => String::new(),
        1 => "i".repeat(1024),
        2 => "i".repeat(1025),
        3 => {
            let text: &str = u.arbitrary()?;
            text.chars().take(48).collect()
        }
        n => format!("{:040x}", n % 6),
    })
}

/// A host: usual, IPv6, empty, `?`, or any short text.
pub fn host(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=6u8)? {
        0 => "127.0.0.1".into(),
        1 => "::1".into(),
        2 => String::new(),
        3 => "?".into(),
        4 => "h".repeat(256),
        5 => {
            let text: &str = u.arbitrary()?;
            text.chars().take(24).collect()
        }
        _ => format!("10.0.0.{}", u.int_in_range(1..=8u8)?),
    })
}

fn port(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0..=5u8)? {
        0 => json!(0),
        1 => json!(65536),
        2 => json!("7000"),
        _ => json!(7000 + u64::from(u.int_in_range(0..=8u8)?)),
    })
}

/// An object, or the flat `[name, value, ...]` array of RESP2.
fn map(u: &mut Unstructured, fields: Vec<(&str, Value)>) -> Result<Value> {
    Ok(if u.ratio(1, 3)? {
        Value::Array(fields.into_iter().flat_map(|(name, value)| [Value::from(name), value]).collect())
    } else {
        Value::Object(fields.into_iter().map(|(name, value)| (name.to_string(), value)).collect())
    })
}

/// A `CLUSTER SHARDS` reply of up to `most` shards.
pub fn shards_reply(u: &mut Unstructured, most: u8) -> Result<Value> {
    let mut shards = Vec::new();
    for _ in 0..u.int_in_range(0..=most)? {
        let pairs = u.int_in_range(0..=4u8)?;
        let slots = if u.ratio(1, 4)? {
            Value::Array((0..pairs).map(|_| Ok(json!([slot(u)?, slot(u)?]))).collect::<Result<Vec<_>>>()?)
        } else {
            let mut flat = Vec::new();
            for _ in 0..pairs {
                flat.push(slot(u)?);
                flat.push(slot(u)?);
            }
            if u.ratio(1, 16)? {
                flat.push(slot(u)?);
            }
            Value::Array(flat)
        };
        let mut nodes = Vec::new();
        for index in 0..u.int_in_range(0..=4u8)? {
            let role = match u.int_in_range(0..=7u8)? {
                0 => "slave",
                1 => "primary",
                2 | 3 => "master",
                _ if index == 0 => "master",
                _ => "replica",
            };
            let mut fields = vec![("id", Value::from(node_id(u)?)), ("role", Value::from(role))];
            if u.ratio(7, 8)? {
                fields.push(("port", port(u)?));
            } else if u.arbitrary()? {
                fields.push(("tls-port", port(u)?));
            }
            if u.ratio(3, 4)? {
                fields.push(("ip", Value::from(host(u)?)));
            }
            if u.arbitrary()? {
                fields.push(("endpoint", Value::from(host(u)?)));
            }
            if u.arbitrary()? {
                let health = if u.ratio(1, 3)? { "failed" } else { "online" };
                fields.push(("health", Value::from(health)));
            }
            nodes.push(map(u, fields)?);
        }
        shards.push(map(u, vec![("slots", slots), ("nodes", Value::Array(nodes))])?);
    }
    Ok(Value::Array(shards))
}

/// A `CLUSTER SLOTS` reply of up to `most` entries.
pub fn slots_reply(u: &mut Unstructured, most: u8) -> Result<Value> {
    let mut entries = Vec::new();
    for _ in 0..u.int_in_range(0..=most)? {
        let mut entry = vec![slot(u)?, slot(u)?];
        for _ in 0..u.int_in_range(0..=3u8)? {
            let mut node = vec![Value::from(host(u)?), port(u)?];
            if u.ratio(7, 8)? {
                node.push(Value::from(node_id(u)?));
            }
            entry.push(Value::Array(node));
        }
        entries.push(Value::Array(entry));
    }
    Ok(Value::Array(entries))
}

/// A whole, valid `CLUSTER SHARDS` reply: `masters` (1..=8) masters splitting the
/// slots evenly, each with up to two replicas, the addresses `10.0.<m>.<r>:7000`.
pub fn valid_shards(u: &mut Unstructured) -> Result<Value> {
    let masters = u64::from(u.int_in_range(1..=8u8)?);
    let mut shards = Vec::new();
    for m in 0..masters {
        let start = m * 16384 / masters;
        let end = (m + 1) * 16384 / masters - 1;
        let mut nodes = Vec::new();
        for r in 0..=u.int_in_range(0..=2u8)? {
            nodes.push(json!({"id": format!("{:038x}{m:x}{r:x}", 0), "ip": format!("10.0.{m}.{r}"), "port": 7000,
                              "role": if r == 0 { "master" } else { "replica" }, "health": "online"}));
        }
        shards.push(json!({"slots": [start, end], "nodes": nodes}));
    }
    Ok(Value::Array(shards))
}

/// A redirect text: `MOVED`/`ASK` with a slot and an address near the edges, wrapped
/// as clients hand them over, or any text.
pub fn redirect_text(u: &mut Unstructured) -> Result<String> {
    if u.ratio(1, 4)? {
        let text: &str = u.arbitrary()?;
        return Ok(text.chars().take(300).collect());
    }
    let kind = *u.choose(&["MOVED", "ASK", "-MOVED", "moved", "ASKING", ""])?;
    let slot = match slot(u)? {
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    };
    let address = match u.int_in_range(0..=7u8)? {
        0 => format!("{}:{}", host(u)?, u.int_in_range(0..=70000u32)?),
        1 => format!("[{}]:7000", host(u)?),
        2 => ":7000".into(),
        3 => "127.0.0.1".into(),
        4 => format!("{}:7000", "a".repeat(usize::from(u.int_in_range(250..=260u16)?))),
        _ => format!("10.0.{}.{}:{}", u.int_in_range(0..=3u8)?, u.int_in_range(0..=3u8)?, 7000),
    };
    let separator = *u.choose(&[" ", "  ", "\t", " \r\n"])?;
    let text = format!("{kind}{separator}{slot}{separator}{address}");
    Ok(match u.int_in_range(0..=5u8)? {
        0 => format!("Command # 1 (SET k v) of pipeline caused error: {slot} {address}"),
        1 => format!("{text} extra"),
        _ => text,
    })
}
