//! Placement names: where a key's data lives, spelled out.
//!
//! A topology may carry name templates, rendered per shard, so that one call answers
//! "which node, at which address, in which database and table":
//!
//! ```json
//! "placement": {"database": "db_{shard}", "table": "comments_{shard:02}"}
//! ```
//!
//! Placeholders: `{shard}` (the shard number), `{shard:0N}` (zero-padded to `N`
//! digits, `N` in 1..=20), `{node}` (the owning node's id), and `{{` / `}}` for literal
//! braces. Any other placeholder is rejected when the document loads, so a typo never
//! reaches a query. [`Router::locate`](crate::Router::locate) renders them.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::json::{self, Put as _};

/// One piece of a parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Shard { width: u8 },
    Node,
}

/// A parsed name template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    source: String,
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses a template, naming `path` in errors.
    pub(crate) fn parse(path: &str, source: &str) -> Result<Template> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut rest = source;
        while let Some(index) = rest.find(['{', '}']) {
            text.push_str(&rest[..index]);
            let tail = &rest[index..];
            if let Some(after) = tail.strip_prefix("{{") {
                text.push('{');
                rest = after;
            } else if let Some(after) = tail.strip_prefix("}}") {
                text.push('}');
                rest = after;
            } else if tail.starts_with('}') {
                return Err(json::at(path, "unmatched '}' (write '}}' for a literal brace)"));
            } else {
                let close =
                    tail.find('}').ok_or_else(|| json::at(path, "unclosed '{' (write '{{' for a literal brace)"))?;
                let name = &tail[1..close];
                let piece = match name {
                    "shard" => Piece::Shard { width: 0 },
                    "node" => Piece::Node,
                    _ => match name.strip_prefix("shard:0").and_then(|w| w.parse::<u8>().ok()) {
                        Some(width) if (1..=20).contains(&width) => Piece::Shard { width },
                        _ => {
                            return Err(json::at(
                                path,
                                format_args!(
                                    "unknown placeholder {{{name}}}; expected {{shard}}, {{shard:0N}} or {{node}}"
                                ),
                            ))
                        }
                    },
                };
                if !text.is_empty() {
                    pieces.push(Piece::Text(core::mem::take(&mut text)));
                }
                pieces.push(piece);
                rest = &tail[close + 1..];
            }
        }
        text.push_str(rest);
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template { source: source.to_string(), pieces })
    }

    /// Renders the template for a shard and its node id.
    pub fn render(&self, shard: u32, node: &str) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Shard { width } => out.push_str(&format!("{shard:0width$}", width = usize::from(*width))),
                Piece::Node => out.push_str(node),
            }
        }
        out
    }

    /// The template as written in the document.
    pub fn source(&self) -> &str {
        &self.source
    }
}

/// The `placement` section: named templates, in name order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PlacementNames {
    /// `(name, template)` pairs sorted by name.
    pub templates: Vec<(String, Template)>,
}

impl PlacementNames {
    pub(crate) fn from_value(path: &str, value: &Value) -> Result<PlacementNames> {
        let map = value.as_object().ok_or_else(|| {
            json::at(path, format_args!("expected an object of name templates, found {}", json::type_name(value)))
        })?;
        let mut templates = Vec::with_capacity(map.len());
        for (name, template) in map {
            let field = json::join(path, name);
            if name.is_empty() {
                return Err(json::at(path, "template names must not be empty"));
            }
            templates.push((name.clone(), Template::parse(&field, json::str(&field, template)?)?));
        }
        templates.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(PlacementNames { templates })
    }

    pub(crate) fn to_value(&self) -> Value {
        let mut map = Map::new();
        for (name, template) in &self.templates {
            map.insert(name.clone(), Value::String(template.source.clone()));
        }
        Value::Object(map)
    }
}

/// Where a key lives: shard, node, the node's address and zone, and the rendered names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location<'r> {
    /// The shard number.
    pub shard: u32,
    /// The owning node's id.
    pub node: &'r str,
    /// The node's address, if the document gives one.
    pub address: Option<&'r str>,
    /// The node's zone, if the document gives one.
    pub zone: Option<&'r str>,
    /// Each `placement` template rendered for this shard, sorted by name.
    pub names: Vec<(&'r str, String)>,
}

impl Location<'_> {
    /// As JSON: `{"shard", "node", "address", "zone", "names": {...}}`, absent values `null`.
    pub fn to_value(&self) -> Value {
        let mut names = Map::new();
        for (name, value) in &self.names {
            names.insert((*name).to_string(), Value::String(value.clone()));
        }
        let mut map = Map::new();
        map.put("shard", self.shard.into());
        map.put("node", self.node.into());
        map.put("address", self.address.map_or(Value::Null, Value::from));
        map.put("zone", self.zone.map_or(Value::Null, Value::from));
        map.put("names", Value::Object(names));
        Value::Object(map)
    }
}
