//! `hashing.json`: key hashing. SipHash-2-4 reference outputs, the CRC-32 check value,
//! Redis hash tags, integer keys, UTF-16 keys and key rejection.

use serde_json::{json, Value};
use shardroute::{Key, KeyHashing};

use super::cases::expect_error;
use super::keys::{hex, u64_key, utf8};
use super::reference::reference_lines;
use super::vector_file::VectorFile;

/// A `hash_key` case; `hashing: None` leaves the spec out (the default spec).
fn hash_case(file: &mut VectorFile, what: &str, hashing: Option<&Value>, key: Value, hash: u64) {
    let mut case = json!({"op": "hash_key", "key": key, "expect": {"hash": hash.to_string()}});
    if let Some(spec) = hashing {
        case["hashing"] = spec.clone();
    }
    file.case(what, case);
}

/// A `hash_key` case that must fail with `code`.
fn hash_refused(
    file: &mut VectorFile,
    what: &str,
    hashing: Option<Value>,
    key: Value,
    code: &str,
    outcome: Result<(), shardroute::Error>,
) {
    let mut case = json!({"op": "hash_key", "key": key});
    if let Some(spec) = hashing {
        case["hashing"] = spec;
    }
    expect_error(file, what, case, code, outcome);
}

pub(crate) fn file() -> VectorFile {
    let mut file = VectorFile::new(
        "hashing",
        "Key hashing: SipHash-2-4 reference outputs, the CRC-32 check value, Redis hash tags, integer keys, UTF-16 keys and key rejection.",
        "siphash-ref cases: vectors_sip64 of the SipHash reference implementation (reference/siphash24.txt); crc32-ref cases: the CRC-32/IEEE check value and the zlib value of the pangram; all other expected hashes: generator",
    );
    let explicit = json!({"function": "siphash-2-4", "seed": "000102030405060708090a0b0c0d0e0f"});
    for (length, line) in reference_lines("siphash24.txt").iter().enumerate() {
        let bytes: Vec<u8> = (0..length as u8).collect();
        let output: Vec<u8> = (0..8).map(|i| u8::from_str_radix(&line[2 * i..2 * i + 2], 16).expect("hex")).collect();
        let expected = u64::from_le_bytes(output.try_into().expect("8 bytes"));
        hash_case(&mut file, &format!("siphash-ref/default-seed/len-{length:02}"), None, hex(&bytes), expected);
        if length % 8 == 7 {
            let what = format!("siphash-ref/explicit-seed/len-{length:02}");
            hash_case(&mut file, &what, Some(&explicit), hex(&bytes), expected);
        }
    }
    let crc = json!({"function": "crc32"});
    for (label, text, value) in [
        ("check-123456789", "123456789", 0xCBF4_3926u64),
        ("pangram", "The quick brown fox jumps over the lazy dog", 0x414F_A339),
        ("empty", "", 0),
    ] {
        hash_case(&mut file, &format!("crc32-ref/{label}"), Some(&crc), utf8(text), value);
    }
    // Hash tags: every edge of the Redis rule, under both functions.
    let tag_keys = [
        ("whole-key", "user1000"),
        ("tag", "{user1000}.following"),
        ("tag-same", "{user1000}.followers"),
        ("tag-only-inner", "user1000"),
        ("empty-tag", "foo{}{bar}"),
        ("nested-open", "foo{{bar}}zap"),
        ("first-tag-wins", "foo{bar}{zap}"),
        ("unclosed", "foo{bar"),
        ("close-before-open", "}foo{bar}"),
        ("only-braces", "{}"),
        ("tag-at-end", "baz{x}"),
    ];
    for (function, spec) in
        [("siphash", json!({"hash_tag": "redis"})), ("crc32", json!({"function": "crc32", "hash_tag": "redis"}))]
    {
        let hashing = KeyHashing::from_json(&spec.to_string()).expect("spec");
        for (label, text) in tag_keys {
            hash_case(
                &mut file,
                &format!("tag/{function}/{label}"),
                Some(&spec),
                utf8(text),
                hashing.hash(Key::from(text)),
            );
        }
    }
    let default = KeyHashing::default();
    let identity = json!({"integers": "identity"});
    for value in [0u64, 42, 1 << 53, u64::MAX] {
        let hash = default.hash(Key::U64(value));
        hash_case(&mut file, &format!("u64/le-bytes/{value}"), None, u64_key(value), hash);
        hash_case(&mut file, &format!("u64/le-bytes-as-bytes/{value}"), None, hex(&value.to_le_bytes()), hash);
        hash_case(&mut file, &format!("u64/identity/{value}"), Some(&identity), u64_key(value), value);
    }
    let seeded = json!({"seed": "f0e0d0c0b0a090807060504030201000"});
    let seeded_hashing = KeyHashing::from_json(&seeded.to_string()).expect("seed");
    for text in ["user:1", ""] {
        hash_case(
            &mut file,
            &format!("seeded/{text}"),
            Some(&seeded),
            utf8(text),
            seeded_hashing.hash(Key::from(text)),
        );
    }
    let emoji = default.hash(Key::from("😀"));
    hash_case(&mut file, "utf16/valid-pair", None, json!({"utf16": [0xD83D, 0xDE00]}), emoji);
    hash_case(&mut file, "utf16/valid-pair-as-utf8", None, utf8("😀"), emoji);
    hash_case(&mut file, "utf16/ascii", None, json!({"utf16": [104, 105]}), default.hash(Key::from("hi")));
    for (label, units) in [
        ("lone-high", vec![0xD800u16]),
        ("lone-low", vec![0xDC00]),
        ("high-then-ascii", vec![0xD83D, 0x61]),
        ("reversed-pair", vec![0xDE00, 0xD83D]),
        ("trailing-high", vec![0x61, 0xDBFF]),
    ] {
        let outcome = shardroute::key::utf8_from_utf16(&units).map(drop);
        let what = format!("reject/utf16-{label}");
        hash_refused(&mut file, &what, None, json!({"utf16": units}), "invalid_key", outcome);
    }
    for (label, text) in
        [("2p64", "18446744073709551616"), ("negative", "-1"), ("huge", "340282366920938463463374607431768211456")]
    {
        let outcome = shardroute::key::parse_u64(text).map(drop);
        hash_refused(&mut file, &format!("reject/u64-{label}"), None, json!({"u64": text}), "invalid_key", outcome);
    }
    for (label, spec) in [
        ("unknown-function", json!({"function": "md5"})),
        ("seed-short", json!({"seed": "0001"})),
        ("seed-not-hex", json!({"seed": "zz0102030405060708090a0b0c0d0e0f"})),
        ("seed-with-crc32", json!({"function": "crc32", "seed": "000102030405060708090a0b0c0d0e0f"})),
        ("unknown-field", json!({"hashtag": "redis"})),
        ("unknown-tag-rule", json!({"hash_tag": "memcached"})),
        ("unknown-integer-rule", json!({"integers": "be_bytes"})),
        ("not-an-object", json!("siphash-2-4")),
    ] {
        let outcome = KeyHashing::from_json(&spec.to_string()).map(drop);
        hash_refused(&mut file, &format!("reject/spec-{label}"), Some(spec), utf8("k"), "invalid_topology", outcome);
    }
    file
}
