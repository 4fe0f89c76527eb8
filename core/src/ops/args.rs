//! Reading an operation object: the one place where an operation's JSON is looked at.
//! Its fields are the caller's arguments, so a malformed one is `invalid_argument`
//! (never `invalid_topology`, which speaks of documents); a size past a documented limit
//! stays `limit_exceeded`.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::json::{self, Object};
use crate::key::OwnedKey;
use crate::node::Node;
use crate::strategy::partitioned::key_table;

/// An error of the document reader about an operation's own field, as the caller's
/// argument: `invalid_argument` with the same message.
pub(crate) fn argument(err: Error) -> Error {
    Error::argument(String::from(err.message()))
}

/// As [`argument`], except that a limit stays `limit_exceeded`.
pub(crate) fn argument_or_limit(err: Error) -> Error {
    match err.kind() {
        ErrorKind::LimitExceeded => err,
        _ => argument(err),
    }
}

/// An operation object whose fields are checked against the ones its `op` allows.
pub(crate) struct Args<'a> {
    object: Object<'a>,
}

impl<'a> Args<'a> {
    /// Reads `operation` with its allowed fields (`op` included); an unknown field is
    /// `invalid_argument`.
    pub(crate) fn new(operation: &'a Value, fields: &'static [&'static str]) -> Result<Args<'a>> {
        Object::new("operation", operation, fields).map(|object| Args { object }).map_err(argument)
    }

    /// The path of a field: `operation.<name>`.
    pub(crate) fn path(&self, name: &str) -> String {
        self.object.path_of(name)
    }

    /// A field if present and not null.
    pub(crate) fn optional(&self, name: &str) -> Option<&'a Value> {
        self.object.optional(name)
    }

    /// A field that must be present.
    pub(crate) fn required(&self, name: &str) -> Result<&'a Value> {
        self.object.required(name).map_err(argument)
    }

    /// A string field.
    pub(crate) fn str(&self, name: &str) -> Result<&'a str> {
        let value = self.required(name)?;
        value.as_str().ok_or_else(|| {
            Error::argument(format!("{}: expected a string, found {}", self.path(name), json::type_name(value)))
        })
    }

    /// An integer field in `min..=max`.
    pub(crate) fn u32_in(&self, name: &str, min: u32, max: u32) -> Result<u32> {
        json::u32_in(&self.path(name), self.required(name)?, min, max).map_err(argument)
    }

    /// An optional integer field in `min..=max`.
    pub(crate) fn optional_u32_in(&self, name: &str, min: u32, max: u32) -> Result<Option<u32>> {
        self.optional(name).map(|value| json::u32_in(&self.path(name), value, min, max).map_err(argument)).transpose()
    }

    /// A u64 field (number or decimal string).
    pub(crate) fn u64(&self, name: &str) -> Result<u64> {
        json::u64(&self.path(name), self.required(name)?).map_err(argument)
    }

    /// A field that names one of `options` (`what` names the kind in the error), or
    /// `default` when absent.
    pub(crate) fn choice<T: Copy>(
        &self,
        name: &str,
        what: &str,
        default: T,
        options: &[(&'static str, T)],
    ) -> Result<T> {
        self.object.choice(name, what, default, options).map_err(argument)
    }

    /// A boolean field with a default.
    pub(crate) fn bool_or(&self, name: &str, default: bool) -> Result<bool> {
        match self.optional(name) {
            Some(value) => json::bool(&self.path(name), value).map_err(argument),
            None => Ok(default),
        }
    }

    /// A key object field (`{"utf8": ...}`, `{"hex": ...}`, `{"u64": ...}`).
    pub(crate) fn key(&self, name: &str) -> Result<OwnedKey> {
        key_table::key_from_value(&self.path(name), self.required(name)?).map_err(argument)
    }

    /// An array of key objects, at most `limit` of them (`limit_exceeded` past it).
    pub(crate) fn keys(&self, name: &str, limit: u32) -> Result<Option<Vec<OwnedKey>>> {
        let Some(value) = self.optional(name) else { return Ok(None) };
        let path = self.path(name);
        let entries = json::array(&path, value).map_err(argument)?;
        if entries.len() > limit as usize {
            return Err(Error::limit(format!("{path}: {} sample keys; the limit is {limit}", entries.len())));
        }
        entries
            .iter()
            .enumerate()
            .map(|(index, entry)| key_table::key_from_value(&format!("{path}[{index}]"), entry).map_err(argument))
            .collect::<Result<Vec<OwnedKey>>>()
            .map(Some)
    }

    /// A node entry field, read as `nodes[i]` would be (its errors keep their document
    /// codes: a bad entry is a bad document in the making).
    pub(crate) fn node(&self, name: &str) -> Result<Node> {
        Node::from_value(&self.path(name), self.required(name)?)
    }

    /// An array of node ids.
    pub(crate) fn ids(&self, name: &str) -> Result<Vec<String>> {
        let Some(value) = self.optional(name) else { return Ok(Vec::new()) };
        let path = self.path(name);
        let items =
            value.as_array().ok_or_else(|| Error::argument(format!("{path}: expected an array of node ids")))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str()
                    .map(String::from)
                    .ok_or_else(|| Error::argument(format!("{path}[{i}]: expected a node id")))
            })
            .collect()
    }
}
