//! Keys in their vector form (`{"utf8": ..}`, `{"hex": ..}`, `{"u64": ..}`), and the
//! standard key set every routing topology is checked with.

use serde_json::{json, Value};

pub(crate) fn utf8(text: &str) -> Value {
    json!({ "utf8": text })
}

/// Lowercase hex digits of `bytes`.
pub(crate) fn hex_digits(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn hex(bytes: &[u8]) -> Value {
    json!({ "hex": hex_digits(bytes) })
}

pub(crate) fn u64_key(value: u64) -> Value {
    json!({ "u64": value.to_string() })
}

/// The key set every routing topology is checked with: text (ASCII, hash tags,
/// Cyrillic, emoji, long, empty), raw bytes, UTF-16 with a valid surrogate pair, and
/// integers at the edges of 32, 53 and 64 bits.
pub(crate) fn standard_keys() -> Vec<(String, Value)> {
    let mut keys: Vec<(String, Value)> = Vec::new();
    for i in 0..16 {
        keys.push((format!("utf8-user-{i}"), utf8(&format!("user:{i}"))));
    }
    for (label, text) in [
        ("utf8-empty", ""),
        ("utf8-a", "a"),
        ("utf8-tag-following", "{user1000}.following"),
        ("utf8-tag-followers", "{user1000}.followers"),
        ("utf8-tag-empty", "foo{}{bar}"),
        ("utf8-cyrillic", "ключ"),
        ("utf8-emoji", "🔑"),
        ("utf8-spaces", "key with spaces"),
    ] {
        keys.push((label.to_string(), utf8(text)));
    }
    keys.push(("utf8-long-300".into(), utf8(&"x".repeat(300))));
    // Multi-byte text around 64 UTF-8 bytes, where a binding's short-string buffer ends:
    // a truncation at a character boundary must never pass for the whole key.
    for (label, unit, count) in [
        ("cyrillic-31", "ю", 31),
        ("cyrillic-32", "ю", 32),
        ("cjk-21", "日", 21),
        ("emoji-15", "🔑", 15),
        ("emoji-16", "🔑", 16),
    ] {
        keys.push((format!("utf8-multibyte-{label}"), utf8(&unit.repeat(count))));
    }
    for (label, bytes) in [
        ("hex-empty", &[][..]),
        ("hex-00", &[0][..]),
        ("hex-ff00ff", &[0xff, 0, 0xff][..]),
        ("hex-deadbeef", &[0xde, 0xad, 0xbe, 0xef][..]),
    ] {
        keys.push((label.to_string(), hex(bytes)));
    }
    keys.push(("utf16-emoji-pair".into(), json!({"utf16": [0xD83D, 0xDE00]})));
    for (label, value) in [
        ("u64-0", 0),
        ("u64-1", 1),
        ("u64-42", 42),
        ("u64-2p32", 1 << 32),
        ("u64-2p53-1", (1 << 53) - 1),
        ("u64-2p53", 1 << 53),
        ("u64-2p53+1", (1 << 53) + 1),
        ("u64-max", u64::MAX),
    ] {
        keys.push((label.to_string(), u64_key(value)));
    }
    keys
}

/// A vector key as the core takes it; the generator writes only keys that convert.
pub(crate) fn owned_key(value: &Value) -> crate::run::OwnedKey {
    match crate::run::to_key(value) {
        Ok(Ok(key)) => key,
        _ => panic!("key {value} must convert"),
    }
}
