//! The vbucket dictionary's binary form: any bytes decode or are refused, and valid
//! dictionaries round-trip.
//!
//! The encoding ends with an XXH64 checksum, so almost no random input gets past it:
//! the input is decoded as given, and again with its correct checksum appended, which
//! sends the bytes through the parser behind the check. Then a seed dictionary, edited
//! as a JSON value (`shardroute_fuzz::mutate`), must satisfy
//! `decode(encode(x)) == x` whenever it is valid.
//!
//! Properties: nothing panics; whatever decodes re-encodes and decodes to the same
//! topology; a changed byte of a valid encoding is refused (the checksum).
#![no_main]

use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use shardroute::{dictionary, hash, Strategy, Topology};

fn round_trip(topology: &Topology) {
    let bytes = dictionary::encode(topology).expect("a valid dictionary encodes");
    let back = dictionary::decode(&bytes).expect("an encoding decodes");
    assert_eq!(&back, topology, "decode(encode(x)) != x");
    assert_eq!(back.to_json(), topology.to_json());
    assert_eq!(dictionary::encode(&back).expect("re-encodes"), bytes, "the encoding is not deterministic");
}

fuzz_target!(|data: &[u8]| {
    let _ = dictionary::decode(data);
    let mut sealed = data.to_vec();
    sealed.extend_from_slice(&hash::xxh64(data, 0).to_le_bytes());
    if let Ok(topology) = dictionary::decode(&sealed) {
        round_trip(&topology);
        if let Some(last) = sealed.len().checked_sub(9) {
            sealed[last / 2] ^= 0x01;
            assert!(dictionary::decode(&sealed).is_err(), "a changed byte was accepted");
        }
    }
    let mut u = Unstructured::new(data);
    let seeds = shardroute_fuzz::seeds();
    let dictionaries: Vec<_> =
        seeds.topologies.iter().filter(|(_, topology)| matches!(topology.strategy, Strategy::Vbucket(_))).collect();
    let Ok(index) = u.choose_index(dictionaries.len()) else { return };
    let mut value = dictionaries[index].0.clone();
    if shardroute_fuzz::mutate(&mut value, &mut u).is_err() {
        return;
    }
    match Topology::from_value(&value) {
        Ok(topology) if matches!(topology.strategy, Strategy::Vbucket(_)) => round_trip(&topology),
        Ok(other) => assert_eq!(dictionary::encode(&other).unwrap_err().code(), "invalid_argument"),
        Err(_) => {}
    }
});
