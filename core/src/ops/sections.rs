//! Edits of the document's named sections: node groups (`node_group_set`), table
//! families (`table_family_set`, `table_family_remove`) and tenants (`tenant_set`,
//! `tenant_remove`), for every strategy.
//!
//! An edit changes the section's JSON and reads the whole document again, so the next
//! topology passes every rule a loaded document passes, each refusal naming the field's
//! path as at load: a group a family or tenant still names cannot go, a tenant cannot be
//! placed under a strategy whose shards are not its nodes, a family's strategy cannot name
//! nodes outside its group. Keys that change owner move as for any other edit: the
//! migration session scans for them (these edits give no shortcut, [`Migration`]'s
//! `known_moves`), so the report says what changed in the section, not which keys moved.
//!
//! [`Migration`]: crate::migration::Migration

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::args::{argument_or_limit, Args};
use super::{args, Applied, Op, Report};
use crate::error::{Error, Result};
use crate::json::{self, Put as _};
use crate::topology::Topology;

pub(super) fn parse(name: &str, operation: &Value) -> Result<Op> {
    Ok(match name {
        "node_group_set" => {
            let args = args(operation, &["op", "group", "nodes"])?;
            let group = name_of(&args, "group")?;
            if !args.required("nodes")?.is_array() {
                return Err(Error::argument(format!("{}: expected an array of node ids", args.path("nodes"))));
            }
            Op::NodeGroupSet { group, nodes: args.ids("nodes")? }
        }
        "table_family_set" => {
            let args = args(operation, &["op", "family", "entry"])?;
            Op::TableFamilySet { family: name_of(&args, "family")?, entry: entry_of(&args)? }
        }
        "table_family_remove" => {
            Op::TableFamilyRemove { family: name_of(&args(operation, &["op", "family"])?, "family")? }
        }
        "tenant_set" => {
            let args = args(operation, &["op", "tenant", "entry"])?;
            Op::TenantSet { tenant: tenant_of(&args)?, entry: entry_of(&args)? }
        }
        _ => Op::TenantRemove { tenant: tenant_of(&args(operation, &["op", "tenant"])?)? },
    })
}

/// A group's or family's name: an id, as the document's keys are.
fn name_of(args: &Args<'_>, field: &str) -> Result<String> {
    json::id(&args.path(field), args.required(field)?).map(ToString::to_string).map_err(argument_or_limit)
}

/// A tenant's name: any non-empty string (the document's rule for its keys; the limit on
/// its length is the document's, checked when the edit is read back).
fn tenant_of(args: &Args<'_>) -> Result<String> {
    let tenant = args.str("tenant")?;
    if tenant.is_empty() {
        return Err(Error::argument(format!("{}: a tenant's name must not be empty", args.path("tenant"))));
    }
    Ok(tenant.to_string())
}

/// An entry, written as in the document (its fields are checked when it is read back).
fn entry_of(args: &Args<'_>) -> Result<Value> {
    let entry = args.required("entry")?;
    if !entry.is_object() {
        return Err(Error::argument(format!(
            "{}: expected an object, written as the entry is in the document, found {}",
            args.path("entry"),
            json::type_name(entry)
        )));
    }
    Ok(entry.clone())
}

/// Applies a section edit: the next topology (epoch set by the caller) and the report.
pub(super) fn apply(op: &Op, topology: &Topology) -> Result<Applied> {
    let Value::Object(mut document) = topology.to_value() else {
        return Err(Error::topology("the document is not an object"));
    };
    // Read back without the old checksum; the next topology keeps the document's choice.
    document.remove("checksum");
    let mut report = Report::new();
    match op {
        Op::NodeGroupSet { group, nodes } => {
            let groups = section(&mut document, "node_groups");
            let to: Vec<Value> = nodes.iter().cloned().map(Value::String).collect();
            let from = if to.is_empty() {
                groups.remove(group).ok_or_else(|| {
                    Error::argument(format!("node_group_set: no group {group:?} to remove (nodes: [] removes a group)"))
                })?
            } else {
                groups.insert(group.clone(), Value::Array(to.clone())).unwrap_or(Value::Null)
            };
            report.put("group", Value::String(group.clone()));
            report.put("created", Value::Bool(from.is_null()));
            report.put("removed", Value::Bool(to.is_empty()));
            report.put("from", from);
            report.put("to", if to.is_empty() { Value::Null } else { Value::Array(to) });
        }
        Op::TableFamilySet { family, entry } => {
            let families = section(&mut document, "table_families");
            let from = families.insert(family.clone(), entry.clone());
            let (before, after) = (tables_of(from.as_ref()), tables_of(Some(entry)));
            report.put("family", Value::String(family.clone()));
            report.put("created", Value::Bool(from.is_none()));
            report.put("tables_added", strings(after.iter().filter(|table| !before.contains(table))));
            report.put("tables_removed", strings(before.iter().filter(|table| !after.contains(table))));
        }
        Op::TableFamilyRemove { family } => {
            let families = section(&mut document, "table_families");
            let from = families
                .remove(family)
                .ok_or_else(|| Error::argument(format!("table_family_remove: no family {family:?}")))?;
            report.put("family", Value::String(family.clone()));
            // These tables now route by the document's own strategy.
            report.put("tables", strings(tables_of(Some(&from)).iter()));
        }
        Op::TenantSet { tenant, entry } => {
            let entries = tenant_entries(&mut document);
            let from = entries.insert(tenant.clone(), entry.clone());
            report.put("tenant", Value::String(tenant.clone()));
            report.put("created", Value::Bool(from.is_none()));
            report.put("from", from.unwrap_or(Value::Null));
        }
        Op::TenantRemove { tenant } => {
            let entries = tenant_entries(&mut document);
            let from = entries
                .remove(tenant)
                .ok_or_else(|| Error::argument(format!("tenant_remove: no tenant {tenant:?}")))?;
            report.put("tenant", Value::String(tenant.clone()));
            report.put("from", from);
        }
        _ => return Err(super::refused(op, topology)),
    }
    drop_empty(&mut document);
    // What the operation wrote, as the document reader names it: its errors there are
    // about the operation's own field, so they name that field (`operation.entry...`).
    let written = match op {
        Op::NodeGroupSet { group, .. } => (json::join("node_groups", group), "operation.nodes"),
        Op::TableFamilySet { family, .. } => (json::join("table_families", family), "operation.entry"),
        Op::TenantSet { tenant, .. } => (json::join("tenants.entries", tenant), "operation.entry"),
        _ => (String::new(), ""),
    };
    let mut next = Topology::from_value(&Value::Object(document)).map_err(|err| of_operation(err, &written))?;
    next.checksummed = topology.checksummed;
    if let Op::TenantSet { tenant, .. } = op {
        // The entry as the document now writes it (canonical field order).
        report.put("to", next.to_value()["tenants"]["entries"][tenant.as_str()].clone());
    }
    Ok(Applied { topology: next, report })
}

/// An error of the document reader at `written.0` (what the operation wrote), or inside
/// it, named at the operation's field `written.1` instead, with its code and the rest of
/// its message; any other error as it is.
fn of_operation(err: Error, written: &(String, &str)) -> Error {
    let (section, field) = written;
    let rest = match err.message().strip_prefix(section.as_str()) {
        Some(rest) if !section.is_empty() && rest.starts_with(['.', ':', '[']) => rest,
        _ => return err,
    };
    Error::new(err.kind(), format!("{field}{rest}"))
}

/// The object of a top-level section, made empty when the document has none.
fn section<'d>(document: &'d mut Map<String, Value>, name: &str) -> &'d mut Map<String, Value> {
    let value = document.entry(name.to_string()).or_insert_with(|| Value::Object(Map::new()));
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    value.as_object_mut().expect("made an object above")
}

/// `tenants.entries`, made empty when the document has none.
fn tenant_entries(document: &mut Map<String, Value>) -> &mut Map<String, Value> {
    section(section(document, "tenants"), "entries")
}

/// Leaves out the sections an edit emptied: groups and families when both are empty,
/// tenants when no entry and no rule of its own is left.
fn drop_empty(document: &mut Map<String, Value>) {
    let empty = |document: &Map<String, Value>, name: &str| {
        document.get(name).and_then(Value::as_object).is_none_or(Map::is_empty)
    };
    if empty(document, "node_groups") && empty(document, "table_families") {
        document.remove("node_groups");
        document.remove("table_families");
    }
    let tenants = document.get("tenants").and_then(Value::as_object);
    if tenants.is_some_and(|tenants| {
        tenants.len() == 1 && tenants.get("entries").and_then(Value::as_object).is_some_and(Map::is_empty)
    }) {
        document.remove("tenants");
    }
}

/// The table names an entry lists (none when it lists none: reading it back refuses it).
fn tables_of(entry: Option<&Value>) -> Vec<String> {
    entry
        .and_then(|entry| entry.get("tables"))
        .and_then(Value::as_array)
        .map(|tables| tables.iter().filter_map(Value::as_str).map(ToString::to_string).collect())
        .unwrap_or_default()
}

fn strings<'s>(names: impl Iterator<Item = &'s String>) -> Value {
    Value::Array(names.cloned().map(Value::String).collect())
}

#[cfg(all(test, feature = "tables"))]
mod tests {
    use serde_json::json;

    use crate::ops::apply;
    use crate::Topology;

    fn shop(checksummed: bool) -> Topology {
        let mut document = json!({
            "format": "shardroute/1", "epoch": 7,
            "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}], "strategy": {"type": "jump"},
            "hashing": {"partition_key": {"rule": "prefix", "separator": ":"}},
            "node_groups": {"eu": ["a", "b"]},
            "table_families": {"catalog": {"tables": ["countries"], "group": "eu", "reference": true}},
            "tenants": {"entries": {"acme": {"group": "eu"}}}
        });
        let mut topology = Topology::from_value(&document).unwrap();
        if checksummed {
            document["checksum"] = json!(topology.checksum());
            topology = Topology::from_value(&document).unwrap();
            assert!(topology.checksummed);
        }
        topology
    }

    #[test]
    fn a_checksummed_document_stays_checksummed_with_the_new_sum() {
        let result = apply(&shop(true), &json!({"op": "node_group_set", "group": "eu", "nodes": ["c", "a"]})).unwrap();
        let next = Topology::from_value(&result["topology"]).unwrap();
        assert!(next.checksummed);
        assert_eq!(next.epoch, 8);
        assert_eq!(result["topology"]["checksum"], json!(next.checksum()));
        assert_eq!(result["topology"]["node_groups"]["eu"], json!(["c", "a"]));
    }

    #[test]
    fn removing_a_group_in_use_names_who_uses_it() {
        let err = apply(&shop(false), &json!({"op": "node_group_set", "group": "eu", "nodes": []})).unwrap_err();
        assert_eq!(err.code(), "invalid_topology");
        assert!(err.message().contains("\"eu\""), "{}", err.message());
        let err =
            apply(&shop(false), &json!({"op": "tenant_set", "tenant": "acme", "entry": {"group": "us"}})).unwrap_err();
        assert!(err.message().starts_with("operation.entry.group"), "{}", err.message());
    }

    #[test]
    fn an_entrys_own_errors_name_the_operations_field() {
        let topology = shop(false);
        for (operation, path) in [
            (
                json!({"op": "tenant_set", "tenant": "acme", "entry": {"group": "eu", "rack": 1}}),
                "operation.entry.rack",
            ),
            (
                json!({"op": "table_family_set", "family": "catalog", "entry": {"tables": ["c"], "strategy": {"type": "jump", "x": 1}}}),
                "operation.entry.strategy",
            ),
            (json!({"op": "node_group_set", "group": "eu", "nodes": ["a", "z"]}), "operation.nodes[1]"),
        ] {
            let err = apply(&topology, &operation).unwrap_err();
            assert!(err.message().starts_with(path), "{path}: {}", err.message());
        }
        // An error elsewhere in the document keeps its own path: removing the group the
        // tenant and the family name is about them, not about the operation's field.
        let err = apply(&topology, &json!({"op": "node_group_set", "group": "eu", "nodes": []})).unwrap_err();
        assert!(!err.message().starts_with("operation"), "{}", err.message());
    }

    #[test]
    fn the_input_is_left_as_it_was() {
        let topology = shop(false);
        let before = topology.to_json();
        apply(&topology, &json!({"op": "tenant_remove", "tenant": "acme"})).unwrap();
        apply(&topology, &json!({"op": "table_family_remove", "family": "catalog"})).unwrap();
        assert_eq!(topology.to_json(), before);
    }
}
