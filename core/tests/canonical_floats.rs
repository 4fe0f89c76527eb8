//! A document's numbers are read exactly as written, so the canonical form is a fixed
//! point and a checksummed document reloads. Found by `fuzz/route`: serde_json's default
//! float parser can be one unit in the last place off for long decimal texts, so a
//! weight written as `3.4093193418025452e-304` (the shortest text of its `f64`) came back
//! as a different number, the canonical text changed on every reload and a checksummed
//! document refused its own output. Python's `json` and JavaScript's `JSON.parse` read
//! these texts exactly; the core now does too (serde_json's `float_roundtrip`).

use shardroute::{Router, Topology};

fn document(weight: &str, checksum: bool) -> String {
    let mut text = format!(
        r#"{{"format": "shardroute/1", "epoch": 2, "nodes": [{{"id": "a"}}, {{"id": "b", "weight": {weight}}}], "strategy": {{"type": "maglev", "table_size": 1009}}}}"#
    );
    if checksum {
        let canonical = Topology::from_json(&text).unwrap();
        let topology = Topology { checksummed: true, ..canonical };
        text = topology.to_json();
    }
    text
}

#[test]
fn weights_read_exactly_as_written() {
    // Each is the shortest text of its f64 (what the canonical form writes).
    for weight in ["3.4093193418025452e-304", "0.30000000000000004", "1.0000000000000002", "999999.9999999999"] {
        let canonical = Topology::from_json(&document(weight, false)).unwrap().to_json();
        assert!(canonical.contains(&format!("\"weight\":{weight}")), "{weight} became {canonical}");
        let again = Topology::from_json(&canonical).unwrap().to_json();
        assert_eq!(again, canonical, "the canonical form is not a fixed point");
    }
}

#[test]
fn a_checksummed_document_reloads() {
    let text = document("3.4093193418025452e-304", true);
    let router = Router::from_json(&text).expect("the core's own checksummed output loads");
    assert_eq!(router.to_json(), text);
}
