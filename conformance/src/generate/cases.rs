//! The shapes of case every vector file is made of. Each helper records one or more
//! cases after checking that the core gives what the case expects: an expectation
//! stated by hand or copied from a published source is asserted before it is written,
//! and an error case is written only when the core fails with exactly that code.

use serde_json::{json, Value};
use shardroute::{ops, Error, Router, Topology};

use super::keys::{owned_key, standard_keys};
use super::vector_file::VectorFile;

/// What a case expects from a call that may fail: `value` of its result, or
/// `{"error": code}`.
pub(crate) fn result_or_error<T>(result: Result<T, Error>, value: impl FnOnce(T) -> Value) -> Value {
    result.map_or_else(|err| json!({ "error": err.code() }), value)
}

/// A `route` case `<id>/route/<label>` recording what the core answers for `key`: shard
/// and node, or the error.
pub(crate) fn route_case(file: &mut VectorFile, id: &str, router: &Router, label: &str, key: &Value) -> Option<u32> {
    let owned = owned_key(key);
    let answer = router.route(owned.as_key()).and_then(|shard| Ok((shard, router.node(owned.as_key())?)));
    let shard = answer.as_ref().ok().map(|(shard, _)| *shard);
    let expect = result_or_error(answer, |(shard, node)| json!({"shard": shard, "node": node}));
    file.case(&format!("{id}/route/{label}"), json!({"op": "route", "topology": id, "key": key, "expect": expect}));
    shard
}

/// A `replicas` case `<id>/replicas-<count>/<label>` recording what the core answers.
pub(crate) fn replicas_case(file: &mut VectorFile, id: &str, router: &Router, label: &str, key: &Value, count: u32) {
    let expect = result_or_error(router.replicas(owned_key(key).as_key(), count), |nodes| json!({ "nodes": nodes }));
    file.case(
        &format!("{id}/replicas-{count}/{label}"),
        json!({"op": "replicas", "topology": id, "key": key, "count": count, "expect": expect}),
    );
}

/// What loading a router's document gives: its epoch and canonical text.
pub(crate) fn loaded(router: &Router) -> Value {
    json!({"epoch": router.epoch().to_string(), "to_json": router.to_json()})
}

/// A `load` case `<id>/load`.
pub(crate) fn load_case(file: &mut VectorFile, id: &str, router: &Router) {
    file.case(&format!("{id}/load"), json!({"op": "load", "topology": id, "expect": loaded(router)}));
}

/// `route` and `replicas` cases for every standard key, one `route_many` over all, and
/// `load`.
pub(crate) fn routing_cases(file: &mut VectorFile, id: &str, router: &Router) {
    let keys = standard_keys();
    let count = router.nodes().len().min(3) as u32;
    let mut shards = Vec::new();
    for (label, key) in &keys {
        shards.push(route_case(file, id, router, label, key).expect("every standard key routes"));
        replicas_case(file, id, router, label, key, count);
    }
    let all: Vec<&Value> = keys.iter().map(|(_, key)| key).collect();
    file.case(
        &format!("{id}/route_many"),
        json!({"op": "route_many", "topology": id, "keys": all, "expect": {"shards": shards}}),
    );
    load_case(file, id, router);
}

/// Adds topology `id` and its routing cases.
pub(crate) fn routed(file: &mut VectorFile, id: &str, document: Value) -> Router {
    let router = file.topology(id, document);
    routing_cases(file, id, &router);
    router
}

/// A `route` case `<id>/<what>` whose shard and node are stated by the caller (by hand,
/// or from a published source); the core is checked to agree.
pub(crate) fn stated_route(
    file: &mut VectorFile,
    id: &str,
    router: &Router,
    what: &str,
    key: Value,
    (shard, node): (u32, &str),
) {
    let owned = owned_key(&key);
    assert_eq!(router.route(owned.as_key()).expect("route"), shard, "{id}/{what}: core disagrees with the shard");
    assert_eq!(router.node(owned.as_key()).expect("node"), node, "{id}/{what}: core disagrees with the node");
    file.case(
        &format!("{id}/{what}"),
        json!({"op": "route", "topology": id, "key": key, "expect": {"shard": shard, "node": node}}),
    );
}

/// A `replicas` case `<id>/<what>` whose nodes are stated by the caller; the core is
/// checked to agree.
pub(crate) fn stated_replicas(
    file: &mut VectorFile,
    id: &str,
    router: &Router,
    what: &str,
    key: Value,
    nodes: &[&str],
) {
    let count = nodes.len() as u32;
    let answer = router.replicas(owned_key(&key).as_key(), count).expect("replicas");
    assert_eq!(answer, nodes, "{id}/{what}: core disagrees with the nodes");
    file.case(
        &format!("{id}/{what}"),
        json!({"op": "replicas", "topology": id, "key": key, "count": count, "expect": {"nodes": nodes}}),
    );
}

/// An error case: checks the core gives `code` before recording it.
pub(crate) fn expect_error(file: &mut VectorFile, what: &str, mut case: Value, code: &str, outcome: Result<(), Error>) {
    match outcome {
        Err(err) if err.code() == code => {}
        Err(err) => panic!("{what}: expected {code}, core says {err}"),
        Ok(()) => panic!("{what}: expected {code}, core accepted it"),
    }
    case["expect"] = json!({ "error": code });
    file.case(what, case);
}

/// `route`, `replicas` (count 1) and, when `before` is given, `route_many` (`before`,
/// then `key`) cases for a key that must fail with `invalid_key`; `name` names the case
/// of each op.
pub(crate) fn refused_key(
    file: &mut VectorFile,
    id: &str,
    key: &Value,
    before: Option<Value>,
    outcome: Result<(), Error>,
    name: impl Fn(&str) -> String,
) {
    let mut cases = vec![
        ("route", json!({"op": "route", "topology": id, "key": key})),
        ("replicas", json!({"op": "replicas", "topology": id, "key": key, "count": 1})),
    ];
    if let Some(before) = before {
        cases.push(("route_many", json!({"op": "route_many", "topology": id, "keys": [before, key]})));
    }
    for (op, case) in cases {
        expect_error(file, &name(op), case, "invalid_key", outcome.clone());
    }
}

/// The document an `apply` case works on.
#[derive(Clone, Copy)]
pub(crate) enum On<'a> {
    /// A topology of the file, by id.
    Topology(&'a str),
    /// Raw JSON text.
    Text(&'a str),
}

/// The parsed document and the case fields that name it.
fn apply_input(file: &VectorFile, on: On, operation: Value) -> (Topology, Value) {
    match on {
        On::Topology(id) => (file.parsed(id), json!({"op": "apply", "topology": id, "operation": operation})),
        On::Text(text) => (
            Topology::from_json(text).expect("the document loads"),
            json!({"op": "apply", "topology_json": text, "operation": operation}),
        ),
    }
}

/// An `apply` case recording the core's result, which it returns.
pub(crate) fn applied(file: &mut VectorFile, name: &str, on: On, operation: Value) -> Value {
    let (topology, mut case) = apply_input(file, on, operation);
    let result = ops::apply(&topology, &case["operation"]).unwrap_or_else(|err| panic!("{name}: {err}"));
    case["expect"] = json!({ "result": result });
    file.case(name, case);
    result
}

/// An `apply` case whose result is stated by hand: the next document is `expected` (the
/// input document edited by hand, its epoch one more; compared in canonical form, as the
/// core writes every document) and the report holds `report`'s fields. Returns the result.
pub(crate) fn edited(
    file: &mut VectorFile,
    name: &str,
    id: &str,
    operation: Value,
    expected: Value,
    report: Value,
) -> Value {
    let result = applied(file, name, On::Topology(id), operation);
    let mut expected = expected;
    expected["epoch"] = json!(file.parsed(id).epoch + 1);
    let canonical =
        Topology::from_value(&expected).unwrap_or_else(|err| panic!("{name}: the expected document: {err}"));
    assert_eq!(result["topology"], canonical.to_value(), "{name}: the next document");
    for (field, value) in report.as_object().expect("a report object") {
        assert_eq!(&result[field], value, "{name}: report field {field}");
    }
    let fields = result.as_object().expect("a result object").len();
    assert_eq!(fields, report.as_object().map_or(0, |report| report.len()) + 1, "{name}: every report field stated");
    result
}

/// An `apply` case that must fail with `code`.
pub(crate) fn apply_refused(file: &mut VectorFile, name: &str, on: On, operation: Value, code: &str) {
    let (topology, case) = apply_input(file, on, operation);
    let outcome = ops::apply(&topology, &case["operation"]).map(drop);
    expect_error(file, name, case, code, outcome);
}

/// A `load` case of text the core must refuse with `code`.
pub(crate) fn refused_text(file: &mut VectorFile, name: &str, text: &str, code: &str) {
    let outcome = Router::from_json(text).map(drop);
    expect_error(file, name, json!({"op": "load", "topology_json": text}), code, outcome);
}

/// `load` cases `<prefix><label>` of documents the core must refuse with their code.
pub(crate) fn refused_documents<'a>(
    file: &mut VectorFile,
    prefix: &str,
    documents: impl IntoIterator<Item = (&'a str, Value, &'a str)>,
) {
    for (label, document, code) in documents {
        refused_text(file, &format!("{prefix}{label}"), &document.to_string(), code);
    }
}

/// Documents the core must refuse, most of them edits of one valid document.
pub(crate) struct Refusals {
    base: Value,
    texts: Vec<(String, String, &'static str)>,
}

impl Refusals {
    pub(crate) fn of(base: Value) -> Refusals {
        Refusals { base, texts: Vec::new() }
    }

    /// The base document changed by `change`.
    pub(crate) fn edit(&mut self, label: &str, code: &'static str, change: impl FnOnce(&mut Value)) {
        let mut document = self.base.clone();
        change(&mut document);
        self.texts.push((label.to_string(), document.to_string(), code));
    }

    /// The base document with another strategy.
    pub(crate) fn strategy(&mut self, label: &str, code: &'static str, strategy: Value) {
        self.edit(label, code, |d| d["strategy"] = strategy);
    }

    /// Text that is not an edit of the base (possibly not JSON at all).
    pub(crate) fn text(&mut self, label: &str, text: String, code: &'static str) {
        self.texts.push((label.to_string(), text, code));
    }

    /// The `load` cases `<prefix><label>`, in the order they were added.
    pub(crate) fn write(self, file: &mut VectorFile, prefix: &str) {
        for (label, text, code) in self.texts {
            refused_text(file, &format!("{prefix}{label}"), &text, code);
        }
    }
}
