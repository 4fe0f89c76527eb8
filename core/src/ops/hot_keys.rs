//! Hot keys that come and go: `hot_key_add` salts a key over `fanout` salted keys (or
//! changes its fanout), `hot_key_remove` stops salting it. Both work on any strategy:
//! the hot-key list is the document's, not a strategy's.
//!
//! The next epoch routes the key's new salted forms; while clients may still hold the
//! previous epoch, [`Migration::read_keys`](crate::migration::Migration::read_keys)
//! gathers both epochs' forms and [`Migration::write_key`](crate::migration::Migration::write_key)
//! writes the new epoch's.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use super::{args, Applied, Op, Report};
use crate::error::{Error, Result};
use crate::json::Put as _;
use crate::key::OwnedKey;
use crate::salting::{HotKeys, MAX_FANOUT, MAX_HOT_KEYS};
use crate::strategy::partitioned::key_table::key_to_value;
use crate::topology::Topology;

/// The hot key of an operation: a byte key of UTF-8 text (the document's `hot_keys`
/// names keys by their text).
fn hot_key(key: OwnedKey) -> Result<String> {
    match key {
        OwnedKey::Bytes(bytes) => String::from_utf8(bytes).map_err(|_| {
            Error::argument("operation.key: a hot key is text (UTF-8), as the document's hot_keys names it")
        }),
        OwnedKey::U64(_) => Err(Error::argument("operation.key: integer keys are never hot; a hot key is text")),
    }
}

pub(super) fn parse(name: &str, operation: &Value) -> Result<Op> {
    if name == "hot_key_add" {
        let args = args(operation, &["op", "key", "fanout"])?;
        let fanout = crate::json::u32_capped(&args.path("fanout"), args.required("fanout")?, 2, MAX_FANOUT)
            .map_err(super::args::argument_or_limit)?;
        Ok(Op::HotKeyAdd { key: hot_key(args.key("key")?)?, fanout })
    } else {
        let args = args(operation, &["op", "key"])?;
        Ok(Op::HotKeyRemove { key: hot_key(args.key("key")?)? })
    }
}

pub(super) fn apply(op: &Op, topology: &Topology) -> Result<Applied> {
    let mut next = topology.clone();
    let mut hot = next
        .hot_keys
        .take()
        .unwrap_or_else(|| HotKeys { separator: String::from(crate::salting::DEFAULT_SEPARATOR), keys: Vec::new() });
    let (key, to) = match op {
        Op::HotKeyAdd { key, fanout } => (key, *fanout),
        Op::HotKeyRemove { key } => (key, 1),
        _ => return Err(Error::argument(format!("{}: not a hot-key operation", op.name()))),
    };
    let at = hot.keys.binary_search_by(|(listed, _)| listed.as_slice().cmp(key.as_bytes()));
    let from = match at {
        Ok(index) => {
            let from = hot.keys[index].1;
            if to == 1 {
                hot.keys.remove(index);
            } else {
                hot.keys[index].1 = to;
            }
            from
        }
        Err(index) => {
            if to == 1 {
                return Err(Error::argument(format!("hot_key_remove: {key:?} is not a hot key")));
            }
            if hot.keys.len() >= MAX_HOT_KEYS as usize {
                return Err(Error::limit(format!("hot_key_add: {MAX_HOT_KEYS} hot keys already; the limit")));
            }
            hot.keys.insert(index, (key.as_bytes().to_vec(), to));
            1
        }
    };
    if from == to && matches!(op, Op::HotKeyAdd { .. }) {
        return Err(Error::argument(format!("hot_key_add: {key:?} already has fanout {to}")));
    }
    // The last hot key gone, the section goes too (as a document without hot keys).
    next.hot_keys = (!hot.keys.is_empty()).then_some(hot);
    let mut report = Report::new();
    report.put("key", key_to_value(crate::Key::Bytes(key.as_bytes())));
    report.put("from_fanout", from.into());
    report.put("to_fanout", to.into());
    Ok(Applied { topology: next, report })
}
