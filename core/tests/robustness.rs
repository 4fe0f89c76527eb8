//! No input panics: arbitrary documents, keys and arguments give a result or an error.

mod common;

use common::doc;
use proptest::prelude::*;
use serde_json::json;
use shardroute::{Key, KeyHashing, Router};

/// The seed of the mutation test, written as text: it cuts it at byte positions.
const VALID: &str = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b", "weight": 2}], "strategy": {"type": "ring", "points_per_node": 8}}"#;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        let _ = Router::from_json(&text);
        let _ = KeyHashing::from_json(&text);
    }

    #[test]
    fn mutated_documents_never_panic(cut in 0usize..VALID.len(), insert in ".{0,8}") {
        let mut doc = String::from(&VALID[..cut]);
        doc.push_str(&insert);
        doc.push_str(&VALID[cut..]);
        if let Ok(router) = Router::from_json(&doc) {
            let _ = router.node("k");
            let again = Router::from_json(&router.to_json()).expect("canonical form reloads");
            prop_assert_eq!(again.to_json(), router.to_json());
        }
    }

    #[test]
    fn arbitrary_keys_and_counts_never_panic(bytes in any::<Vec<u8>>(), int in any::<u64>(), count in any::<u32>(), units in any::<Vec<u16>>()) {
        for strategy in ["ring", "rendezvous", "jump", "modulo", "vbucket"] {
            let router = Router::from_json(&doc(&["a", "b"]).strategy(json!({"type": strategy})).text()).unwrap();
            for key in [Key::Bytes(&bytes), Key::U64(int)] {
                let shard = router.route(key).unwrap();
                prop_assert!(router.node(key).is_ok());
                let _ = shard;
                let result = router.replicas(key, count);
                prop_assert_eq!(result.is_ok(), (1..=router.max_replica_count()).contains(&count));
            }
        }
        let _ = shardroute::key::utf8_from_utf16(&units);
        let _ = shardroute::jump(int, count);
        let _ = shardroute::key::u64_from_js_number(f64::from_bits(int));
    }
}

#[test]
fn edge_floats_as_number_keys() {
    use shardroute::key::u64_from_js_number as from_number;
    assert_eq!(from_number(0.0).unwrap(), 0);
    assert_eq!(from_number(-0.0).unwrap(), 0);
    assert_eq!(from_number(9_007_199_254_740_991.0).unwrap(), 9_007_199_254_740_991);
    for bad in [9_007_199_254_740_992.0, -1.0, 0.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300] {
        assert_eq!(from_number(bad).unwrap_err().code(), "invalid_key", "{bad}");
    }
}
