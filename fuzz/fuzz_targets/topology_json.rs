//! Any bytes as a topology document, a key hashing spec and an operation text.
//!
//! Properties: nothing panics; a document that loads has a canonical form that loads
//! and writes the same text again, to an equal topology; a valid vbucket dictionary survives its
//! binary form unchanged; a router builds or is refused with a documented code.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shardroute::{dictionary, ops, KeyHashing, Strategy, Topology};

fuzz_target!(|data: &[u8]| {
    // The bindings refuse text that is not UTF-8 before the core sees it.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = KeyHashing::from_json(text);
    let _ = ops::operation_from_json(text);
    let Ok(topology) = Topology::from_json(text) else { return };
    let canonical = topology.to_json();
    let again = Topology::from_json(&canonical).expect("the canonical form of a valid document loads");
    assert_eq!(again.to_json(), canonical, "the canonical form is not a fixed point");
    // The canonical form spells out defaults (a Redis Cluster's even slot split), so
    // typed values are equal from the first reload on.
    assert_eq!(Topology::from_json(&again.to_json()).expect("loads again"), again);
    if matches!(topology.strategy, Strategy::Vbucket(_)) {
        let bytes = dictionary::encode(&topology).expect("every valid dictionary encodes");
        assert_eq!(dictionary::decode(&bytes).expect("its encoding decodes"), topology);
    }
    shardroute_fuzz::router(topology);
});
