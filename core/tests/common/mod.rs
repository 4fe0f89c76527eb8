//! Helpers shared by the property tests: topology documents built in code.
#![allow(dead_code)]

use shardroute::Router;

/// A router over nodes `ids` with the given strategy JSON and optional hashing JSON.
pub fn router(ids: &[String], strategy: &str, hashing: Option<&str>) -> Router {
    let nodes: Vec<String> = ids.iter().map(|id| format!("{{\"id\": {id:?}}}")).collect();
    let hashing = hashing.map(|h| format!("\"hashing\": {h},")).unwrap_or_default();
    let doc = format!(
        "{{\"format\": \"shardroute/1\", \"epoch\": 1, {hashing} \"nodes\": [{}], \"strategy\": {strategy}}}",
        nodes.join(", ")
    );
    Router::from_json(&doc).unwrap_or_else(|err| panic!("{err}\n{doc}"))
}

/// Node ids `n0..n{count}`.
pub fn ids(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("n{i}")).collect()
}

/// Keys `key:{i}` for `i` in a range.
pub fn keys(start: u64, count: u64) -> Vec<String> {
    (start..start + count).map(|i| format!("key:{i}")).collect()
}
