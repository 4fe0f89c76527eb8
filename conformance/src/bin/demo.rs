//! The Rust side of `make demo`: routes the demo keys with the demo topology and prints
//! one JSON array, the same shape every binding's `examples/demo` prints.

use serde_json::json;
use shardroute::Router;

fn main() {
    let dir = shardroute_conformance::root().join("demo");
    let topology = std::fs::read_to_string(dir.join("topology.json")).expect("demo/topology.json");
    let keys: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("keys.json")).expect("demo/keys.json")).expect("keys");
    let router = match Router::from_json(&topology) {
        Ok(router) => router,
        Err(err) => {
            eprintln!("demo topology rejected: {err}");
            std::process::exit(1);
        }
    };
    let rows: Vec<_> = keys
        .iter()
        .map(|key| {
            let key = key.as_str();
            json!({
                "key": key,
                "shard": router.route(key).expect("route"),
                "node": router.node(key).expect("node"),
                "replicas": router.replicas(key, 2).expect("replicas"),
            })
        })
        .collect();
    println!("{}", serde_json::Value::Array(rows));
}
