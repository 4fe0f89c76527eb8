//! `rendezvous.json`: rendezvous (highest random weight) hashing. Unweighted, weighted
//! (libm `ln`), seeded.

use serde_json::json;

use super::cases::routed;
use super::vector_file::VectorFile;
use crate::documents::{doc, Document};

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "rendezvous",
        "Rendezvous (highest random weight) hashing: unweighted, weighted (libm ln), seeded.",
        "generator",
    );
    routed(&mut file, "rendezvous-6", doc(&["h0", "h1", "h2", "h3", "h4", "h5"], json!({"type": "rendezvous"})));
    let weighted = json!([{"id": "w-a", "weight": 1}, {"id": "w-b", "weight": 3}, {"id": "w-c", "weight": 0.25}, {"id": "w-d", "weight": 10}, {"id": "w-e", "weight": 1e-3}]);
    routed(&mut file, "rendezvous-weighted-5", doc(weighted, json!({"type": "rendezvous"})).epoch(2));
    let seeded = doc(&["s-a", "s-b", "s-c"], json!({"type": "rendezvous"})).epoch(3);
    routed(&mut file, "rendezvous-seeded-3", seeded.hashing(json!({"seed": "5eed5eed5eed5eed5eed5eed5eed5eed"})));
    file
}
