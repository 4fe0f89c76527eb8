//! A vector file being assembled: its header, its topologies by id and its cases, and
//! the checks every file gets (unique case names, documents that load).

use serde_json::{json, Value};
use shardroute::{Router, Topology};

use crate::write;

/// A file being assembled.
pub(crate) struct VectorFile {
    name: &'static str,
    description: &'static str,
    source: &'static str,
    topologies: Vec<(String, Value)>,
    cases: Vec<Value>,
}

impl VectorFile {
    pub(crate) fn new(name: &'static str, description: &'static str, source: &'static str) -> VectorFile {
        VectorFile { name, description, source, topologies: Vec::new(), cases: Vec::new() }
    }

    /// Adds topology `id` and returns its router (the document must load).
    pub(crate) fn topology(&mut self, id: &str, doc: Value) -> Router {
        let router = Router::from_value(&doc).unwrap_or_else(|err| panic!("topology {id}: {err}"));
        self.topologies.push((id.to_string(), doc));
        router
    }

    /// The document of topology `id`, added before.
    pub(crate) fn document(&self, id: &str) -> &Value {
        self.topologies
            .iter()
            .find(|(name, _)| name == id)
            .map(|(_, doc)| doc)
            .unwrap_or_else(|| panic!("no topology {id}"))
    }

    /// The ids of the topologies added so far, in order.
    pub(crate) fn topology_ids(&self) -> Vec<String> {
        self.topologies.iter().map(|(id, _)| id.clone()).collect()
    }

    /// The router of topology `id`, added before.
    pub(crate) fn router(&self, id: &str) -> Router {
        Router::from_value(self.document(id)).expect("an added topology loads")
    }

    /// The parsed document of topology `id`, added before.
    pub(crate) fn parsed(&self, id: &str) -> Topology {
        Topology::from_value(self.document(id)).expect("an added topology loads")
    }

    /// The file as the runners read it so far: `{"topologies": {id: document}}`.
    pub(crate) fn to_value(&self) -> Value {
        let topologies: serde_json::Map<String, Value> = self.topologies.iter().cloned().collect();
        json!({ "topologies": topologies })
    }

    /// Adds a case named `<file>/<what>`.
    pub(crate) fn case(&mut self, what: &str, mut case: Value) {
        let name = format!("{}/{}", self.name, what);
        assert!(!self.cases.iter().any(|c| c["name"] == name.as_str()), "duplicate case name {name}");
        case["name"] = Value::String(name);
        self.cases.push(case);
    }

    /// The file's name and text.
    pub(crate) fn render(&self) -> (String, String) {
        let header = [
            ("format", json!("shardroute-vectors/1")),
            ("name", json!(self.name)),
            ("description", json!(self.description)),
            ("source", json!(self.source)),
        ];
        (format!("{}.json", self.name), write::file(&header, &self.topologies, &self.cases))
    }
}
