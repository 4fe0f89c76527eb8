//! Hot-key salting: spread one very hot key over several shards.
//!
//! A key that receives far more traffic than any shard can serve is written under one
//! of `fanout` *salted* keys, `key + separator + i` for `i < fanout`, and read by
//! gathering all of them. The topology names the hot keys:
//!
//! ```json
//! "hot_keys": {"separator": "#", "keys": {"celebrity:1": 8, "trending": 4}}
//! ```
//!
//! The caller chooses `i` for each write (at random, round robin, per client): the
//! core holds no randomness and no state, so every language salts alike.
//! [`Router::salted_key`](crate::Router::salted_key) gives the write key,
//! [`Router::salted_keys`](crate::Router::salted_keys) every read key with its shard. A
//! key that is not hot has one salted form, itself. Hot keys are byte keys (UTF-8 text
//! in the document); integer keys are never hot.
//!
//! **Coming and going.** The operations `hot_key_add` and `hot_key_remove`
//! ([`crate::ops`]) edit the list, each to the next epoch; while clients may hold either
//! epoch, [`Migration::read_keys`](crate::migration::Migration::read_keys) gathers both
//! epochs' salted forms and [`Migration::write_key`](crate::migration::Migration::write_key)
//! writes the new one's. A key listed with fanout 1 is not salted: its one form is itself.
//!
//! **Cost.** One lookup in a sorted table per call; reads of a hot key touch `fanout`
//! keys, so pick the smallest fanout that relieves the shard.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::json::{self, Object, Put as _};

/// The separator between a hot key and its salt when the document names none.
pub const DEFAULT_SEPARATOR: &str = "#";
/// Most hot keys in one topology.
pub const MAX_HOT_KEYS: u32 = 100_000;
/// Largest fanout of one hot key.
pub const MAX_FANOUT: u32 = 1024;

/// The `hot_keys` section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HotKeys {
    /// Appended between the key and the salt number; `"#"` by default.
    pub separator: String,
    /// `(key bytes, fanout)` sorted by key, for binary search.
    pub keys: Vec<(Vec<u8>, u32)>,
}

impl HotKeys {
    pub(crate) fn from_value(path: &str, value: &Value) -> Result<HotKeys> {
        let object = Object::new(path, value, &["separator", "keys"])?;
        let separator = match object.optional("separator") {
            Some(value) => String::from(json::str(&object.path_of("separator"), value)?),
            None => String::from(DEFAULT_SEPARATOR),
        };
        let keys_path = object.path_of("keys");
        let map = object
            .required("keys")?
            .as_object()
            .ok_or_else(|| json::at(&keys_path, "expected an object mapping each hot key to its fanout"))?;
        if map.len() > MAX_HOT_KEYS as usize {
            return Err(Error::limit(format!("{keys_path}: {} hot keys; the limit is {MAX_HOT_KEYS}", map.len())));
        }
        let mut keys = Vec::with_capacity(map.len());
        for (key, fanout) in map {
            let field = json::join(&keys_path, key);
            match fanout.as_u64() {
                Some(n) if n > u64::from(MAX_FANOUT) => {
                    return Err(Error::limit(format!("{field}: fanout {n} exceeds the limit of {MAX_FANOUT}")))
                }
                _ => {}
            }
            keys.push((key.as_bytes().to_vec(), json::u32_in(&field, fanout, 1, MAX_FANOUT)?));
        }
        keys.sort();
        Ok(HotKeys { separator, keys })
    }

    pub(crate) fn to_value(&self) -> Value {
        let mut keys = Map::new();
        for (key, fanout) in &self.keys {
            keys.insert(String::from_utf8_lossy(key).into_owned(), Value::from(*fanout));
        }
        let mut map = Map::new();
        map.put("separator", Value::String(self.separator.clone()));
        map.put("keys", Value::Object(keys));
        Value::Object(map)
    }

    /// The fanout of a byte key: `Some(n)` when it is hot.
    pub fn fanout(&self, key: &[u8]) -> Option<u32> {
        self.keys.binary_search_by(|(hot, _)| hot.as_slice().cmp(key)).ok().map(|index| self.keys[index].1)
    }

    /// `key + separator + salt`.
    pub fn salt(&self, key: &[u8], salt: u32) -> Vec<u8> {
        let mut out = Vec::with_capacity(key.len() + self.separator.len() + 4);
        out.extend_from_slice(key);
        out.extend_from_slice(self.separator.as_bytes());
        out.extend_from_slice(format!("{salt}").as_bytes());
        out
    }
}
