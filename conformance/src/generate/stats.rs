//! `stats.json`: how evenly keys spread over a router's nodes (`Router.stats`, the CLI's
//! `stats` in every binding). The small cases are arithmetic written here by hand (keys
//! per node of `user % n`, their mean, max / mean and standard deviation / mean); the
//! larger ones are checked by a relation: each node's load is the number of keys `node`
//! routes to it, and the spread is recomputed here from those counts.

use serde_json::{json, Value};

use super::keys::{u64_key, utf8};
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};
use crate::run::to_key;

/// A `stats` case: the core's answer, checked against `expect` when given (a case
/// written by hand) and always against the relation above.
fn case(file: &mut VectorFile, name: &str, on: &str, keys: &[Value], expect: Option<Value>) {
    let router = file.router(on);
    let owned: Vec<_> = keys.iter().map(|key| to_key(key).expect("a key form").expect("a key")).collect();
    let answer = router.stats(owned.iter().map(|key| key.as_key()));
    let value = match answer {
        Ok(stats) => {
            let mut counts = vec![0u64; router.nodes().len()];
            for key in &owned {
                counts[router.node_index(key.as_key()).expect("routes") as usize] += 1;
            }
            assert_eq!(stats.loads, counts, "{name}: loads are the keys node() sends each node");
            assert_eq!(stats.total, keys.len() as u64, "{name}: total");
            let per_weight: Vec<f64> =
                counts.iter().zip(router.nodes()).map(|(&count, node)| count as f64 / node.weight).collect();
            let mean = per_weight.iter().sum::<f64>() / per_weight.len() as f64;
            if mean > 0.0 {
                let variance =
                    per_weight.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / per_weight.len() as f64;
                let max = per_weight.iter().copied().fold(0.0, f64::max);
                assert_eq!(stats.spread.mean, mean, "{name}: mean");
                assert_eq!(stats.spread.max_over_mean, max / mean, "{name}: max / mean");
                assert_eq!(stats.spread.cv, variance.sqrt() / mean, "{name}: cv");
            }
            stats.to_value(&router)
        }
        Err(err) => json!({"error": err.code()}),
    };
    if let Some(expect) = expect {
        assert_eq!(value, expect, "{name}: the core disagrees with the case written by hand");
    }
    let expect = if value.get("error").is_some() { value } else { json!({ "result": value }) };
    file.case(name, json!({"op": "stats", "topology": on, "keys": keys, "expect": expect}));
}

fn node(id: &str, load: u64, share: f64, per_weight: f64) -> Value {
    json!({"id": id, "weight": 1.0, "load": load, "share": share, "load_per_weight": per_weight})
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "stats",
        "How evenly keys spread over a router's nodes (Router.stats, the CLI's stats): keys per node, their share, the load per unit of weight, its mean, max / mean and coefficient of variation.",
        "the modulo cases written by hand (user % n per node; mean, max / mean, standard deviation / mean); every case checked by a relation: node() counts per node, the spread recomputed from them",
    );
    let identity = json!({"integers": "identity"});
    file.topology("modulo-2", doc(&["a", "b"], json!({"type": "modulo"})).with("hashing", identity.clone()));
    file.topology("modulo-3", doc(&["a", "b", "c"], json!({"type": "modulo"})).with("hashing", identity));
    file.topology("jump-5", doc(5usize, json!({"type": "jump"})));
    file.topology(
        "ring-weighted",
        doc(json!([{"id": "small", "weight": 1}, {"id": "large", "weight": 3}]), json!({"type": "ring"})),
    );

    // user % 2 over 0..10: five each; evens only: ten on a, none on b.
    let users: Vec<Value> = (0..10).map(u64_key).collect();
    let even = json!({"total": 10, "nodes": [node("a", 5, 0.5, 5.0), node("b", 5, 0.5, 5.0)],
                      "mean": 5.0, "max_over_mean": 1.0, "cv": 0.0});
    case(&mut file, "modulo-2/users-0-9", "modulo-2", &users, Some(even));
    let evens: Vec<Value> = (0..10).map(|user| u64_key(user * 2)).collect();
    // Loads 10 and 0: mean 5, max / mean 2, standard deviation 5, so cv 1.
    let lopsided = json!({"total": 10, "nodes": [node("a", 10, 1.0, 10.0), node("b", 0, 0.0, 0.0)],
                          "mean": 5.0, "max_over_mean": 2.0, "cv": 1.0});
    case(&mut file, "modulo-2/even-users", "modulo-2", &evens, Some(lopsided));
    // user % 3 over 1..=4: a gets 3, b gets 1 and 4, c gets 2. Loads 1, 2, 1: mean 4/3,
    // max / mean 1.5, variance ((1/3)^2 * 2 + (2/3)^2) / 3 = 2/9, cv sqrt(2/9) / (4/3).
    let four: Vec<Value> = (1..=4).map(u64_key).collect();
    let thirds = json!({"total": 4, "nodes": [node("a", 1, 0.25, 1.0), node("b", 2, 0.5, 2.0), node("c", 1, 0.25, 1.0)],
                        "mean": 4.0 / 3.0, "max_over_mean": 1.5, "cv": (2.0f64 / 9.0).sqrt() / (4.0 / 3.0)});
    case(&mut file, "modulo-3/users-1-4", "modulo-3", &four, Some(thirds));
    // No keys: nothing loaded, every figure 0.
    let empty = json!({"total": 0, "nodes": [node("a", 0, 0.0, 0.0), node("b", 0, 0.0, 0.0)],
                       "mean": 0.0, "max_over_mean": 0.0, "cv": 0.0});
    case(&mut file, "modulo-2/no-keys", "modulo-2", &[], Some(empty));

    // A sample of text keys over jump, and over a weighted ring (load per unit of weight).
    let texts: Vec<Value> = (0..1000).map(|i| utf8(&format!("user:{i}"))).collect();
    case(&mut file, "jump-5/1000-texts", "jump-5", &texts, None);
    case(&mut file, "ring-weighted/1000-texts", "ring-weighted", &texts, None);

    // A key the core refuses fails the whole call, naming its index.
    let bad = [utf8("fine"), json!({"utf16": [0xD800]})];
    let outcome = to_key(&bad[1]).expect("a key form").map(drop);
    assert!(outcome.is_err(), "a lone surrogate is no key");
    file.case(
        "refused/lone-surrogate",
        json!({"op": "stats", "topology": "jump-5", "keys": bad, "expect": {"error": "invalid_key"}}),
    );
    file
}
