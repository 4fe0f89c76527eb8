//! A deterministic JSON writer for vector files: fields in a fixed, readable order,
//! one case per line, so that a routing change is a one-line diff.

use serde_json::Value;

/// Field order inside objects; fields not listed follow in alphabetical order.
const ORDER: &[&str] = &[
    "format",
    "name",
    "description",
    "source",
    "op",
    "topology",
    "topology_json",
    "before",
    "after",
    "dictionary",
    "epoch",
    "hashing",
    "key",
    "keys",
    "hash",
    "count",
    "buckets",
    "expect",
    "function",
    "seed",
    "hash_tag",
    "integers",
    "nodes",
    "id",
    "address",
    "weight",
    "zone",
    "strategy",
    "type",
    "shard",
    "node",
    "shards",
    "error",
    "to_json",
    "topologies",
    "cases",
];

fn rank(name: &str) -> (usize, &str) {
    (ORDER.iter().position(|&known| known == name).unwrap_or(ORDER.len()), name)
}

/// Writes `value` compactly with ordered object fields.
pub fn compact(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields.sort_by(|a, b| rank(a.0).cmp(&rank(b.0)));
            out.push('{');
            for (index, (name, field)) in fields.into_iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push_str(": ");
                compact(field, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                compact(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A whole vector file: header fields one per line, each topology on one line, each
/// case on one line.
pub fn file(header: &[(&str, Value)], topologies: &[(String, Value)], cases: &[Value]) -> String {
    let mut out = String::from("{\n");
    for (name, value) in header {
        out.push_str(&format!("  {}: ", Value::String((*name).to_string())));
        compact(value, &mut out);
        out.push_str(",\n");
    }
    out.push_str("  \"topologies\": {");
    for (index, (id, doc)) in topologies.iter().enumerate() {
        out.push_str(if index == 0 { "\n    " } else { ",\n    " });
        out.push_str(&Value::String(id.clone()).to_string());
        out.push_str(": ");
        compact(doc, &mut out);
    }
    out.push_str(if topologies.is_empty() { "},\n" } else { "\n  },\n" });
    out.push_str("  \"cases\": [");
    for (index, case) in cases.iter().enumerate() {
        out.push_str(if index == 0 { "\n    " } else { ",\n    " });
        compact(case, &mut out);
    }
    out.push_str(if cases.is_empty() { "]\n}\n" } else { "\n  ]\n}\n" });
    out
}
