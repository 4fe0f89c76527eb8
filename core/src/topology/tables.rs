//! Table families and reference tables: one document for a whole database.
//!
//! A database holds tables of different kinds: `orders` and `order_items` sharded by
//! customer over the European nodes, `events` by day over others, and small tables such as
//! `countries` that every query joins and that every node therefore keeps whole (Vitess'
//! reference tables, Citus' reference tables, the "global tables" of vertical sharding).
//! The document names **node groups** (subsets of its nodes) and **table families** (which
//! tables, which group, which rule), so one document and one epoch describe them all:
//!
//! ```json
//! "node_groups": {"eu": ["db-1", "db-2"], "us": ["db-3", "db-4"]},
//! "table_families": {
//!   "orders": {"tables": ["orders", "order_items"], "group": "eu",
//!              "strategy": {"type": "jump"}, "hashing": {"partition_key": {"delimiter": ":"}}},
//!   "catalog": {"tables": ["countries", "currencies"], "reference": true}
//! }
//! ```
//!
//! A **sharded** family routes its tables' keys by its own `strategy` (any strategy object
//! the document's top level takes) over its group's nodes, in the group's order, with its
//! own `hashing` (default: the document's). A **reference** family (`"reference": true`, no
//! strategy) keeps every row on every node of its group: a write goes to all of them
//! ([`Router::route_write`](crate::Router::route_write) lists the group, the read node
//! first), a read goes to one. The read node is deterministic, so every language picks the
//! same: jump consistent hash of the key's hash over the group's nodes
//! ([`Router::node`](crate::Router::node)); with the caller's zone
//! ([`Router::read_near`](crate::Router::read_near)), jump over the group's nodes in that
//! zone when there is any, else the same pick as without one. A family without `group`
//! uses every node of the document. Tables no family names route by the document's own
//! strategy; [`Router::table`](crate::Router::table) of a name no family lists is
//! `invalid_argument`, so a typo is never routed by the wrong rule.
//!
//! Refused at load (`invalid_topology`, the message starting with the field's path): a
//! table in two families, a group naming an unknown node or a node twice, an empty group,
//! a family naming an unknown group, a family without tables, a sharded family without a
//! strategy or a reference family with one, and a family strategy that names nodes outside
//! its group. Past [`MAX_NODE_GROUPS`](crate::limits::MAX_NODE_GROUPS),
//! [`MAX_TABLE_FAMILIES`](crate::limits::MAX_TABLE_FAMILIES) or
//! [`MAX_TABLES`](crate::limits::MAX_TABLES): `limit_exceeded`.
//!
//! Cost: each family compiles to a router of its own when the document loads (its
//! strategy's build cost over its group); `table(name)` is a binary search over the table
//! names. Node operations act on the document's nodes: removing a node a group names is
//! refused until the group no longer names it.

// Without the `tables` feature only `not_built_in` is called: the rest is left out.
#![cfg_attr(not(feature = "tables"), allow(dead_code, unused_imports))]

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::hashing::KeyHashing;
use crate::json::{self, Object, Put as _};
use crate::limits;
use crate::node::Node;
use crate::strategy::Strategy;

/// The `node_groups` and `table_families` sections of a document.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Tables {
    /// Named node groups, sorted by name: each a list of node ids, in the group's order.
    pub groups: Vec<(String, Vec<String>)>,
    /// The table families, sorted by name.
    pub families: Vec<Family>,
    /// The `tenants` section, which places tenants on these groups ([`super::tenants`]).
    pub tenants: Option<super::tenants::Tenants>,
}

/// One table family: its tables, where they live and how their keys route.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    /// The family's name.
    pub name: String,
    /// Its tables, sorted.
    pub tables: Vec<String>,
    /// Its node group (`None`: every node of the document).
    pub group: Option<String>,
    /// Its key hashing (`None`: the document's).
    pub hashing: Option<KeyHashing>,
    /// Its strategy over the group's nodes; `None` for a reference family.
    pub strategy: Option<Strategy>,
}

impl Family {
    /// Whether this is a reference family (every row on every node of its group).
    pub fn is_reference(&self) -> bool {
        self.strategy.is_none()
    }
}

impl Tables {
    /// The nodes of `group` (every node when `None`), in the group's order.
    ///
    /// # Errors
    /// `invalid_topology` for an unknown group, or a group naming a node not in `nodes`.
    pub(crate) fn group_nodes(&self, path: &str, group: Option<&str>, nodes: &NodeIndex<'_>) -> Result<Vec<Node>> {
        let Some(name) = group else { return Ok(nodes.all.to_vec()) };
        let Some((_, ids)) = self.groups.iter().find(|(listed, _)| listed == name) else {
            let names: Vec<&str> = self.groups.iter().map(|(listed, _)| listed.as_str()).collect();
            return Err(json::at(
                path,
                format_args!("names group {name:?}, which is not in node_groups ({})", list_or_none(&names)),
            ));
        };
        ids.iter()
            .enumerate()
            .map(|(at, id)| {
                nodes.by_id.get(id.as_str()).map(|&at| nodes.all[at].clone()).ok_or_else(|| {
                    json::at(
                        &format!("node_groups.{name}[{at}]"),
                        format_args!("names node {id:?}, which is not in nodes"),
                    )
                })
            })
            .collect()
    }

    /// The rules that tie the sections to the node list (what parsing checks, and every
    /// operation after it): every group names known nodes, every family's group exists
    /// and its strategy names only the group's nodes.
    pub(crate) fn check(&self, nodes: &[Node]) -> Result<()> {
        let nodes = &NodeIndex::new(nodes);
        for (name, _) in &self.groups {
            self.group_nodes("node_groups", Some(name), nodes)?;
        }
        for family in &self.families {
            let at = json::join("table_families", &family.name);
            let group = self.group_nodes(&json::join(&at, "group"), family.group.as_deref(), nodes)?;
            if let Some(strategy) = &family.strategy {
                strategy.check(&group).map_err(|err| prefixed(&at, err))?;
            }
        }
        Ok(())
    }

    /// Reads `node_groups` and `table_families` (either may be absent; `None` when both
    /// are).
    pub(crate) fn parse(groups: Option<&Value>, families: Option<&Value>, nodes: &[Node]) -> Result<Option<Tables>> {
        if groups.is_none() && families.is_none() {
            return Ok(None);
        }
        let mut tables = Tables::default();
        let index = &NodeIndex::new(nodes);
        if let Some(value) = groups {
            let map = object("node_groups", value, "each group name to an array of node ids")?;
            if map.len() > limits::MAX_NODE_GROUPS as usize {
                return Err(Error::limit(format!(
                    "node_groups: {} groups; the limit is {}",
                    map.len(),
                    limits::MAX_NODE_GROUPS
                )));
            }
            for (name, ids) in map {
                let at = json::join("node_groups", name);
                json::id(&at, &Value::String(name.clone()))?;
                let ids = json::array(&at, ids)?;
                if ids.is_empty() {
                    return Err(json::at(&at, "empty; a group names at least one node"));
                }
                if ids.len() > nodes.len() {
                    return Err(json::at(
                        &at,
                        format_args!(
                            "{} entries, more than the {} nodes; a group names each node once",
                            ids.len(),
                            nodes.len()
                        ),
                    ));
                }
                let mut listed: Vec<String> = Vec::with_capacity(ids.len());
                // One map type for every lookup here (node ids, a group's entries, tables):
                // one copy of its code in a build.
                let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
                for (i, id) in ids.iter().enumerate() {
                    let path = format!("{at}[{i}]");
                    let id = json::id(&path, id)?;
                    if !index.by_id.contains_key(id) {
                        return Err(json::at(&path, format_args!("names node {id:?}, which is not in nodes")));
                    }
                    if seen.insert(id, i).is_some() {
                        return Err(json::at(&path, format_args!("names node {id:?} twice")));
                    }
                    listed.push(id.to_string());
                }
                tables.groups.push((name.clone(), listed));
            }
        }
        if let Some(value) = families {
            let map = object("table_families", value, "each family name to its tables, group and strategy")?;
            if map.len() > limits::MAX_TABLE_FAMILIES as usize {
                return Err(Error::limit(format!(
                    "table_families: {} families; the limit is {}",
                    map.len(),
                    limits::MAX_TABLE_FAMILIES
                )));
            }
            let mut total = 0usize;
            // Every table listed so far, with its family: one lookup per table.
            let mut owners: BTreeMap<&str, usize> = BTreeMap::new();
            for (name, spec) in map {
                let at = json::join("table_families", name);
                json::id(&at, &Value::String(name.clone()))?;
                let object = Object::new(&at, spec, &["tables", "group", "strategy", "hashing", "reference"])?;
                let list_path = object.path_of("tables");
                let list = json::array(&list_path, object.required("tables")?)?;
                total += list.len();
                if total > limits::MAX_TABLES as usize {
                    return Err(Error::limit(format!(
                        "{list_path}: more than {} tables in table_families; the limit is {}",
                        limits::MAX_TABLES,
                        limits::MAX_TABLES
                    )));
                }
                if list.is_empty() {
                    return Err(json::at(&list_path, "empty; a family lists at least one table"));
                }
                let mut names: Vec<String> = Vec::with_capacity(list.len());
                for (i, table) in list.iter().enumerate() {
                    let path = format!("{list_path}[{i}]");
                    let table = json::id(&path, table)?;
                    match owners.insert(table, tables.families.len()) {
                        Some(other) if other == tables.families.len() => {
                            return Err(json::at(&path, format_args!("table {table:?} is listed twice")));
                        }
                        Some(other) => {
                            return Err(json::at(
                                &path,
                                format_args!(
                                    "table {table:?} is already in family {:?}; a table belongs to one family",
                                    tables.families[other].name
                                ),
                            ));
                        }
                        None => names.push(table.to_string()),
                    }
                }
                names.sort_unstable();
                let group = match object.optional("group") {
                    Some(value) => Some(json::id(&object.path_of("group"), value)?.to_string()),
                    None => None,
                };
                let members = tables.group_nodes(&object.path_of("group"), group.as_deref(), index)?;
                let hashing = match object.optional("hashing") {
                    Some(value) => Some(KeyHashing::from_value(&object.path_of("hashing"), value)?),
                    None => None,
                };
                let reference = match object.optional("reference") {
                    Some(value) => json::bool(&object.path_of("reference"), value)?,
                    None => false,
                };
                let strategy_path = object.path_of("strategy");
                let strategy = match (reference, object.optional("strategy")) {
                    (true, Some(_)) => {
                        return Err(json::at(
                            &strategy_path,
                            "a reference family keeps every row on every node of its group and takes no strategy",
                        ))
                    }
                    (true, None) => None,
                    (false, None) => {
                        return Err(json::at(
                            &strategy_path,
                            "missing required field (a family routes by a strategy, or is \"reference\": true)",
                        ))
                    }
                    (false, Some(value)) => {
                        Some(family_strategy(&strategy_path, value, &members, nodes, group.as_deref())?)
                    }
                };
                tables.families.push(Family { name: name.clone(), tables: names, group, hashing, strategy });
            }
        }
        // serde_json's map iterates in key order: both lists are sorted by name already.
        Ok(Some(tables))
    }

    /// The canonical sections: `(node_groups, table_families)`.
    pub(crate) fn to_values(&self, nodes: &[Node]) -> (Value, Value) {
        let index = &NodeIndex::new(nodes);
        let mut groups = Map::new();
        for (name, ids) in &self.groups {
            groups.insert(name.clone(), Value::Array(ids.iter().cloned().map(Value::String).collect()));
        }
        let mut families = Map::new();
        for family in &self.families {
            let mut spec = Map::new();
            spec.put("tables", Value::Array(family.tables.iter().cloned().map(Value::String).collect()));
            if let Some(group) = &family.group {
                spec.put("group", Value::String(group.clone()));
            }
            if let Some(hashing) = &family.hashing {
                spec.put("hashing", hashing.to_value());
            }
            match &family.strategy {
                Some(strategy) => {
                    // Checked at load and after every operation: the group exists.
                    let members = self.group_nodes("", family.group.as_deref(), index).unwrap_or_default();
                    spec.put("strategy", strategy.to_value(&members));
                }
                None => spec.put("reference", Value::Bool(true)),
            }
            families.insert(family.name.clone(), Value::Object(spec));
        }
        (Value::Object(groups), Value::Object(families))
    }
}

/// The document's nodes, and the same by id (one lookup per group entry).
pub(crate) struct NodeIndex<'n> {
    all: &'n [Node],
    by_id: BTreeMap<&'n str, usize>,
}

impl<'n> NodeIndex<'n> {
    pub(crate) fn new(nodes: &'n [Node]) -> NodeIndex<'n> {
        NodeIndex { all: nodes, by_id: nodes.iter().enumerate().map(|(at, node)| (node.id.as_str(), at)).collect() }
    }
}

/// A family's strategy, read over its group's nodes. A strategy that names a node outside
/// the group (but in the document) is refused with both lists named.
fn family_strategy(
    path: &str,
    value: &Value,
    members: &[Node],
    nodes: &[Node],
    group: Option<&str>,
) -> Result<Strategy> {
    match Strategy::from_value(path, value, members) {
        Ok(strategy) => Ok(strategy),
        Err(err) if err.kind() == ErrorKind::InvalidTopology && Strategy::from_value(path, value, nodes).is_ok() => {
            let ids: Vec<&str> = members.iter().map(|node| node.id.as_str()).collect();
            Err(json::at(
                path,
                format_args!(
                    "names nodes outside its group {:?} (whose nodes are {}): {}",
                    group.unwrap_or(""),
                    ids.join(", "),
                    err.message()
                ),
            ))
        }
        Err(err) => Err(err),
    }
}

fn object<'v>(path: &str, value: &'v Value, what: &str) -> Result<&'v Map<String, Value>> {
    value.as_object().ok_or_else(|| {
        json::at(path, format_args!("expected an object mapping {what}, found {}", json::type_name(value)))
    })
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        String::from("there are none")
    } else {
        format!("it has {}", names.join(", "))
    }
}

fn prefixed(path: &str, err: Error) -> Error {
    Error::new(err.kind(), format!("{path}.{}", err.message()))
}

/// The reader of a build without the `tables` feature: a document with either section is
/// refused, not routed by its top-level rule.
#[cfg(not(feature = "tables"))]
pub(crate) fn not_built_in(groups: Option<&Value>, families: Option<&Value>) -> Result<Option<Tables>> {
    match (groups, families) {
        (None, None) => Ok(None),
        (Some(_), _) => Err(Error::topology("node_groups: table families are not built in (the `tables` feature)")),
        (None, Some(_)) => {
            Err(Error::topology("table_families: table families are not built in (the `tables` feature)"))
        }
    }
}

/// The family router of `table`, or `invalid_argument` naming what there is.
pub(crate) fn find<'r, T>(tables: &'r [(String, usize)], families: &'r [T], name: &str) -> Result<&'r T> {
    match tables.binary_search_by(|(listed, _)| listed.as_str().cmp(name)) {
        Ok(at) => Ok(&families[tables[at].1]),
        Err(_) => Err(Error::argument(if tables.is_empty() {
            format!("table {name:?}: this topology names no table families")
        } else {
            let names: Vec<&str> = tables.iter().take(16).map(|(listed, _)| listed.as_str()).collect();
            let more = if tables.len() > 16 { ", ..." } else { "" };
            format!("table {name:?}: no table family lists it; the tables are {}{more}", names.join(", "))
        })),
    }
}

#[cfg(all(test, not(feature = "tables")))]
mod without_the_feature {
    #[test]
    fn a_document_with_either_section_is_refused_as_not_built_in() {
        let base = r#"{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}], "strategy": {"type": "modulo"}"#;
        for (extra, field) in [
            (r#", "node_groups": {"g": ["a"]}}"#, "node_groups"),
            (r#", "table_families": {"f": {"tables": ["t"], "reference": true}}}"#, "table_families"),
        ] {
            let err = crate::Router::from_json(&alloc::format!("{base}{extra}")).unwrap_err();
            assert_eq!(err.code(), "invalid_topology");
            assert_eq!(
                err.message(),
                alloc::format!("{field}: table families are not built in (the `tables` feature)")
            );
        }
        assert!(crate::Router::from_json(&alloc::format!("{base}}}")).is_ok());
    }
}

#[cfg(all(test, feature = "tables"))]
mod tests {
    use alloc::string::{String, ToString};

    use serde_json::{json, Value};

    use crate::{Router, Topology};

    fn shop() -> Value {
        json!({"format": "shardroute/1", "epoch": 3,
            "nodes": [{"id": "a", "zone": "z1"}, {"id": "b", "zone": "z1"}, {"id": "c", "zone": "z2"}, {"id": "d"}],
            "strategy": {"type": "jump"},
            "node_groups": {"g": ["c", "a"]},
            "table_families": {
                "orders": {"tables": ["orders", "items"], "group": "g",
                           "strategy": {"type": "key_range", "boundaries": [{"utf8": "m"}], "ranges": ["a", "c"]}},
                "ref": {"tables": ["countries"], "reference": true}}})
    }

    fn refused(change: impl FnOnce(&mut Value)) -> (String, String) {
        let mut document = shop();
        change(&mut document);
        let err = Router::from_value(&document).unwrap_err();
        (err.code().to_string(), err.message().to_string())
    }

    #[test]
    fn a_document_without_tables_is_unchanged() {
        let mut plain = shop();
        let object = plain.as_object_mut().unwrap();
        object.remove("node_groups");
        object.remove("table_families");
        let with = Router::from_value(&shop()).unwrap();
        let without = Router::from_value(&plain).unwrap();
        assert!(!without.to_json().contains("table_families"));
        for key in ["a", "users:1", "zz", ""] {
            assert_eq!(with.node(key).unwrap(), without.node(key).unwrap());
        }
        assert_eq!(without.table("orders").unwrap_err().code(), "invalid_argument");
    }

    #[test]
    fn families_route_by_their_own_rule_over_their_group() {
        let router = Router::from_value(&shop()).unwrap();
        let orders = router.table("items").unwrap();
        assert_eq!(orders.nodes().iter().map(|n| n.id.as_str()).collect::<alloc::vec::Vec<_>>(), ["c", "a"]);
        assert_eq!(orders.node("apple").unwrap(), "a");
        assert_eq!(orders.node("pear").unwrap(), "c");
        assert_eq!(orders.route_write("pear").unwrap(), ["c"]);
        assert_eq!(orders.read_near("pear", Some("z1")).unwrap(), "c");
        assert!(!orders.is_reference());
        assert_eq!(router.table_names().collect::<alloc::vec::Vec<_>>(), ["countries", "items", "orders"]);
        let err = router.table("users").unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        assert!(err.message().contains("no table family lists it"), "{}", err.message());
        // The canonical form round-trips.
        let again = Router::from_json(&router.to_json()).unwrap();
        assert_eq!(again.topology(), router.topology());
        assert_eq!(Topology::from_json(&router.to_json()).unwrap().tables, router.topology().tables);
    }

    #[test]
    fn reference_tables_read_one_node_and_write_all() {
        let router = Router::from_value(&shop()).unwrap();
        let countries = router.table("countries").unwrap();
        assert!(countries.is_reference());
        for key in ["FR", "DE", "JP", "US", "BR", "IN"] {
            let read = countries.node(key).unwrap();
            let hash = router.hash(key);
            assert_eq!(read, ["a", "b", "c", "d"][crate::jump(hash, 4).unwrap() as usize]);
            assert_eq!(countries.route_read(key).unwrap(), read);
            let write = countries.route_write(key).unwrap();
            assert_eq!(write[0], read);
            assert_eq!(write.len(), 4);
            let near = countries.read_near(key, Some("z1")).unwrap();
            assert_eq!(near, ["a", "b"][crate::jump(hash, 2).unwrap() as usize]);
            assert_eq!(countries.read_near(key, Some("z2")).unwrap(), "c");
            assert_eq!(countries.read_near(key, Some("nowhere")).unwrap(), read);
            assert_eq!(countries.read_near(key, None).unwrap(), read);
        }
    }

    #[test]
    fn refusals_name_the_field() {
        type Case = (fn(&mut Value), &'static str, &'static str);
        let cases: [Case; 9] = [
            (
                |d| d["table_families"]["ref"]["tables"] = json!(["countries", "orders"]),
                "invalid_topology",
                "table_families.ref.tables[1]: table \"orders\" is already in family \"orders\"",
            ),
            (
                |d| d["node_groups"]["g"] = json!(["c", "x"]),
                "invalid_topology",
                "node_groups.g[1]: names node \"x\", which is not in nodes",
            ),
            (|d| d["node_groups"]["g"] = json!([]), "invalid_topology", "node_groups.g: empty"),
            (
                |d| d["node_groups"]["g"] = json!(["a", "a"]),
                "invalid_topology",
                "node_groups.g[1]: names node \"a\" twice",
            ),
            (
                |d| d["table_families"]["orders"]["group"] = json!("h"),
                "invalid_topology",
                "table_families.orders.group: names group \"h\", which is not in node_groups (it has g)",
            ),
            (
                |d| d["table_families"]["orders"]["strategy"]["ranges"] = json!(["a", "b"]),
                "invalid_topology",
                "table_families.orders.strategy: names nodes outside its group \"g\" (whose nodes are c, a)",
            ),
            (
                |d| d["table_families"]["ref"]["strategy"] = json!({"type": "jump"}),
                "invalid_topology",
                "table_families.ref.strategy: a reference family",
            ),
            (
                |d| d["table_families"]["orders"].as_object_mut().unwrap().remove("strategy").map(drop).unwrap_or(()),
                "invalid_topology",
                "table_families.orders.strategy: missing required field",
            ),
            (
                |d| {
                    let many: serde_json::Map<String, Value> =
                        (0..=crate::limits::MAX_NODE_GROUPS).map(|i| (alloc::format!("g{i}"), json!(["a"]))).collect();
                    d["node_groups"] = Value::Object(many);
                },
                "limit_exceeded",
                "node_groups: 1025 groups; the limit is 1024",
            ),
        ];
        for (change, code, message) in cases {
            let (got_code, got) = refused(change);
            assert_eq!(got_code, code, "{got}");
            assert!(got.starts_with(message), "{got:?} does not start with {message:?}");
        }
    }

    #[test]
    fn the_dictionary_and_imports_refuse_tables_rather_than_drop_them() {
        // A vbucket document with families: version 1 of the dictionary has no field for
        // them, and a reader would route every table by the document's rule.
        let mut document = shop();
        document["strategy"] = json!({"type": "vbucket", "vbuckets": 4, "map": [["a"], ["b"], ["c"], ["d"]]});
        let topology = Topology::from_value(&document).unwrap();
        let err = crate::dictionary::encode(&topology).unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        assert!(err.message().contains("table_families"), "{}", err.message());
        // An import replaces the node list the groups name.
        let topology = Topology::from_value(&shop()).unwrap();
        let import = json!({"op": "import_cassandra_ring", "tokens": {"a": ["0"]}});
        let err = crate::ops::apply(&topology, &import).unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        assert!(err.message().contains("node_groups"), "{}", err.message());
    }
}
