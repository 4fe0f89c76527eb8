//! A document's numbers are read exactly as written, so the canonical form is a fixed
//! point. Found by `fuzz/route`: serde_json's default float parser can be one unit in
//! the last place off for long decimal texts, so a weight given as a number value and
//! written as `3.4093193418025452e-304` (the shortest text of that `f64`) was read back
//! as another number, and the canonical text changed on reload. Python's `json` and
//! JavaScript's `JSON.parse` read these texts exactly; the core now does too (serde_json's
//! `float_roundtrip`).

use serde_json::json;
use shardroute::{Router, Topology};

fn document(weight: f64) -> serde_json::Value {
    json!({"format": "shardroute/1", "epoch": 2, "nodes": [{"id": "a"}, {"id": "b", "weight": weight}],
           "strategy": {"type": "maglev", "table_size": 1009}})
}

#[test]
fn weights_read_exactly_as_written() {
    // Each is the shortest text of its f64, which is what the canonical form writes.
    for text in ["3.4093193418025452e-304", "0.30000000000000004", "1.0000000000000002", "999999.9999999999"] {
        let weight: f64 = text.parse().unwrap();
        let canonical = Topology::from_value(&document(weight)).unwrap().to_json();
        assert!(canonical.contains(&format!("\"weight\":{text}")), "{text} written as {canonical}");
        let again = Topology::from_json(&canonical).unwrap().to_json();
        assert_eq!(again, canonical, "the canonical form is not a fixed point");
    }
}

#[test]
fn a_checksummed_document_reloads() {
    let weight: f64 = "3.4093193418025452e-304".parse().unwrap();
    let topology = Topology { checksummed: true, ..Topology::from_value(&document(weight)).unwrap() };
    let text = topology.to_json();
    let router = Router::from_json(&text).expect("the core's own checksummed output loads");
    assert_eq!(router.to_json(), text);
}
