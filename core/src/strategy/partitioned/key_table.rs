//! Key tables: sorted `(key, value)` lists matched against a key's routing bytes, what
//! directory entries (key → node) and vbucket overrides (key → vbucket) both are.
//!
//! A table matches a key's *routing bytes*, the bytes its hash would see: the whole key,
//! or under `"hash_tag": "redis"` its `{tag}`, so keys that share a hash tag share an
//! entry. Byte keys and integer keys are distinct kinds. The canonical order puts byte
//! keys (bytewise) before integer keys (numerically); lookups are binary searches over
//! keys stored back to back.

use alloc::format;
use alloc::vec::Vec;
use core::cmp::Ordering;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::hashing::{HashTag, KeyHashing};
use crate::json::{self, Object};
use crate::key::{Key, OwnedKey};
use crate::limits::MAX_KEY_TABLE_ENTRIES as MAX_ENTRIES;

/// The canonical order of keys in a table: byte keys (bytewise) before integer keys
/// (numerically).
pub(crate) fn key_order(a: Key<'_>, b: Key<'_>) -> Ordering {
    match (a, b) {
        (Key::Bytes(a), Key::Bytes(b)) => a.cmp(b),
        (Key::U64(a), Key::U64(b)) => a.cmp(&b),
        (Key::Bytes(_), Key::U64(_)) => Ordering::Less,
        (Key::U64(_), Key::Bytes(_)) => Ordering::Greater,
    }
}

/// The part of a key a table matches: the bytes the hash would see (the Redis tag
/// under `"hash_tag": "redis"`, the partition key under a `partition_key` rule), or the
/// integer itself.
#[inline]
pub(crate) fn routing_key<'k>(hashing: &KeyHashing, key: Key<'k>) -> Key<'k> {
    hashing.routed(key)
}

/// Rejects table keys that could never match under `hashing`: a byte key that is not
/// its own routing part (it has a Redis hash tag while tags are on).
pub(crate) fn check_table_keys(path: &str, hashing: &KeyHashing, entries: &[(OwnedKey, u32)]) -> Result<()> {
    for (key, _) in entries {
        let key = key.as_key();
        if let (Key::Bytes(bytes), Key::Bytes(routed)) = (key, routing_key(hashing, key)) {
            if routed.len() != bytes.len() {
                return Err(json::at(
                    path,
                    format_args!(
                        "the entry for {} can never match: {} keys route by their {} ({}); list that instead",
                        key_to_value(key),
                        if hashing.hash_tag == HashTag::Redis {
                            "under hash_tag \"redis\""
                        } else {
                            "under the partition_key rule"
                        },
                        if hashing.hash_tag == HashTag::Redis { "tag" } else { "partition key" },
                        key_to_value(Key::Bytes(routed)),
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Reads a key object `{"utf8": text}`, `{"hex": "00ff"}` or `{"u64": n}` (`n` a
/// number or a decimal string): the one reader the document uses for keys everywhere.
pub(crate) fn key_from_value(path: &str, value: &Value) -> Result<OwnedKey> {
    crate::strategy::partitioned::key_range::parse_key(path, value)
}

/// Writes a key object in canonical form: `{"u64": "decimal"}` (a string, so
/// JavaScript reads every u64 exactly), `utf8` for UTF-8 text without control
/// characters, else lowercase `hex` (the writer `key_range` boundaries use too).
pub(crate) fn key_to_value(key: Key<'_>) -> Value {
    crate::strategy::partitioned::key_range::key_value(&OwnedKey::from(key))
}

/// Reads an array of `{"key": ..., fields[1]: ...}` objects into a table sorted in
/// canonical key order, rejecting duplicates (naming both entries) and more than
/// [`MAX_KEY_TABLE_ENTRIES`](crate::limits::MAX_KEY_TABLE_ENTRIES) entries.
pub(crate) fn parse_key_table(
    path: &str,
    value: &Value,
    fields: &'static [&'static str; 2],
    mut read: impl FnMut(&str, &Value) -> Result<u32>,
) -> Result<Vec<(OwnedKey, u32)>> {
    let value_field = fields[1];
    let rows = json::array(path, value)?;
    if rows.len() > MAX_ENTRIES as usize {
        return Err(Error::limit(format!("{path}: {} entries; the limit is {MAX_ENTRIES}", rows.len())));
    }
    let mut entries: Vec<(OwnedKey, u32, usize)> = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        let row_path = format!("{path}[{index}]");
        let object = Object::new(&row_path, row, fields)?;
        let key = key_from_value(&object.path_of("key"), object.required("key")?)?;
        let target = read(&object.path_of(value_field), object.required(value_field)?)?;
        entries.push((key, target, index));
    }
    entries.sort_by(|a, b| key_order(a.0.as_key(), b.0.as_key()).then(a.2.cmp(&b.2)));
    for pair in entries.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(json::at(
                &format!("{path}[{}].key", pair[1].2),
                format_args!("duplicate key {} (also {path}[{}])", key_to_value(pair[0].0.as_key()), pair[0].2),
            ));
        }
    }
    Ok(entries.into_iter().map(|(key, target, _)| (key, target)).collect())
}

/// A sorted key → `u32` table searched without allocating: byte keys stored back to
/// back, integer keys in their own array.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyTable {
    /// Byte key `i` is `bytes[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    bytes: Vec<u8>,
    byte_values: Vec<u32>,
    ints: Vec<u64>,
    int_values: Vec<u32>,
}

impl KeyTable {
    /// Builds the table from entries sorted in canonical key order.
    pub(crate) fn build(entries: &[(OwnedKey, u32)]) -> KeyTable {
        let mut table = KeyTable { starts: Vec::from([0]), ..KeyTable::default() };
        for (key, value) in entries {
            match key {
                OwnedKey::Bytes(bytes) => {
                    table.bytes.extend_from_slice(bytes);
                    // The document is at most 64 MiB, so byte offsets fit in a u32.
                    table.starts.push(table.bytes.len() as u32);
                    table.byte_values.push(*value);
                }
                OwnedKey::U64(int) => {
                    table.ints.push(*int);
                    table.int_values.push(*value);
                }
            }
        }
        table
    }

    /// Whether the table has no entries.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.byte_values.is_empty() && self.ints.is_empty()
    }

    /// The value of `key`, if listed.
    #[inline]
    pub(crate) fn get(&self, key: Key<'_>) -> Option<u32> {
        match key {
            Key::U64(int) => self.ints.binary_search(&int).ok().map(|index| self.int_values[index]),
            Key::Bytes(wanted) => {
                let (mut low, mut high) = (0usize, self.byte_values.len());
                while low < high {
                    let middle = low + (high - low) / 2;
                    let start = self.starts[middle] as usize;
                    let end = self.starts[middle + 1] as usize;
                    match self.bytes[start..end].cmp(wanted) {
                        Ordering::Less => low = middle + 1,
                        Ordering::Greater => high = middle,
                        Ordering::Equal => return Some(self.byte_values[middle]),
                    }
                }
                None
            }
        }
    }
}

/// Inserts or replaces `key` in a sorted table; returns the previous value.
pub(crate) fn table_set(entries: &mut Vec<(OwnedKey, u32)>, key: OwnedKey, value: u32) -> Result<Option<u32>> {
    match entries.binary_search_by(|(other, _)| key_order(other.as_key(), key.as_key())) {
        Ok(index) => Ok(Some(core::mem::replace(&mut entries[index].1, value))),
        Err(index) => {
            if entries.len() >= MAX_ENTRIES as usize {
                return Err(Error::limit(format!("the table already holds {MAX_ENTRIES} entries, its limit")));
            }
            entries.insert(index, (key, value));
            Ok(None)
        }
    }
}

/// Removes `key` from a sorted table; returns its value.
pub(crate) fn table_remove(entries: &mut Vec<(OwnedKey, u32)>, key: Key<'_>) -> Option<u32> {
    let index = entries.binary_search_by(|(other, _)| key_order(other.as_key(), key)).ok()?;
    Some(entries.remove(index).1)
}
