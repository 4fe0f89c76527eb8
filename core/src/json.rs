//! A strict, path-aware reader over `serde_json::Value`.
//!
//! The topology document is parsed by hand instead of with `#[derive(Deserialize)]`
//! so that every error names the exact field (`nodes[3].weight: must be a finite
//! number > 0`), unknown fields are rejected everywhere, and integers may be written
//! as decimal strings (JavaScript cannot hold a u64 in a `Number`).
//!
//! JSON text becomes a value through [`parse`], never `serde_json::from_str`: an object
//! that names a field twice is refused with the field's path (`nodes[2]: the field "id"
//! appears twice`), where a plain parse keeps the last one. Two clients with different
//! JSON parsers (first wins, last wins) would otherwise read different topologies from
//! the same bytes. Nesting deeper than [`MAX_JSON_NESTING`](crate::limits::MAX_JSON_NESTING)
//! arrays and objects is refused too (`limit_exceeded`, naming the path where it happens),
//! before serde_json's own recursion limit of 128, so hostile text cannot exhaust the stack.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::key::parse_decimal_u64;

/// The largest integer every JSON consumer (JavaScript included) reads exactly.
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Joins a field name onto a path: `join("nodes[3]", "weight") == "nodes[3].weight"`.
pub(crate) fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// An error at `path`: `"{path}: {message}"`.
pub(crate) fn at(path: &str, message: impl core::fmt::Display) -> Error {
    if path.is_empty() {
        Error::topology(message.to_string())
    } else {
        Error::topology(format!("{path}: {message}"))
    }
}

/// The JSON type name of a value, for "expected X, found Y" messages.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An object being read: remembers which fields were taken so that
/// [`finish`](Object::finish) can reject the rest as unknown.
pub(crate) struct Object<'a> {
    path: String,
    map: &'a Map<String, Value>,
    allowed: &'static [&'static str],
}

impl<'a> Object<'a> {
    /// Reads `value` as an object whose fields must all be in `allowed`.
    pub(crate) fn new(path: &str, value: &'a Value, allowed: &'static [&'static str]) -> Result<Object<'a>> {
        match value {
            Value::Object(map) => {
                // Unknown fields are reported before anything else so a typo in a field
                // name is never misreported as a missing required field.
                let mut unknown: Vec<&str> =
                    map.keys().map(String::as_str).filter(|name| !allowed.contains(name)).collect();
                unknown.sort_unstable();
                if let Some(name) = unknown.first() {
                    return Err(at(
                        &join(path, name),
                        format_args!("unknown field; expected one of: {}{}", allowed.join(", "), hint(name, allowed)),
                    ));
                }
                Ok(Object { path: path.to_string(), map, allowed })
            }
            other => Err(at(path, format_args!("expected an object, found {}", type_name(other)))),
        }
    }

    /// The path of field `name` of this object.
    pub(crate) fn path_of(&self, name: &str) -> String {
        join(&self.path, name)
    }

    /// The field `name` if present and not `null`.
    pub(crate) fn optional(&self, name: &str) -> Option<&'a Value> {
        debug_assert!(self.allowed.contains(&name), "field {name} not declared");
        self.map.get(name).filter(|value| !value.is_null())
    }

    /// The field `name` as one of the named `options` (a string), `default` when absent:
    /// `"unknown {what} "x"; expected "a", "b" or "c"` otherwise.
    pub(crate) fn choice<T: Copy>(
        &self,
        name: &str,
        what: &str,
        default: T,
        options: &[(&'static str, T)],
    ) -> Result<T> {
        // The reading and the refusal are not generic: one copy of them serves every `T`.
        Ok(self.choice_index(name, what, options.len(), &|i| options[i].0)?.map_or(default, |i| options[i].1))
    }

    /// [`choice`](Object::choice) by position: the index of the option the field names
    /// (`None` when absent), the `count` options' spellings given by `spelling`.
    fn choice_index(
        &self,
        name: &str,
        what: &str,
        count: usize,
        spelling: &dyn Fn(usize) -> &'static str,
    ) -> Result<Option<usize>> {
        let Some(value) = self.optional(name) else { return Ok(None) };
        let path = self.path_of(name);
        let text = str(&path, value)?;
        match (0..count).find(|&i| spelling(i) == text) {
            Some(i) => Ok(Some(i)),
            None => {
                let quoted: Vec<String> = (0..count).map(|i| format!("{:?}", spelling(i))).collect();
                let expected = match quoted.split_last() {
                    Some((last, [])) => last.clone(),
                    Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                    None => String::new(),
                };
                Err(at(&path, format_args!("unknown {what} {text:?}; expected {expected}")))
            }
        }
    }

    /// The field `name`, which must be present and not `null`.
    pub(crate) fn required(&self, name: &str) -> Result<&'a Value> {
        self.optional(name).ok_or_else(|| at(&self.path_of(name), "missing required field"))
    }
}

/// `"; did you mean `x`?"` when one of `candidates` is within a few edits of `name`
/// (a typo, a transposition), else nothing: appended to "unknown name" messages, whose
/// prefix stays the same either way.
pub(crate) fn hint(name: &str, candidates: &[&str]) -> String {
    match nearest(name, candidates) {
        Some(candidate) => format!("; did you mean `{candidate}`?"),
        None => String::new(),
    }
}

/// The candidate nearest to `name` by edit distance (the first of equals), if it is close:
/// at most a third of the name's length in edits (rustc's rule for its suggestions), so
/// `wieght` finds `weight` but `points` does not find `points_per_node`.
pub(crate) fn nearest<'c>(name: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let limit = name.chars().count().max(3) / 3;
    candidates
        .iter()
        .map(|&candidate| (edit_distance(name, candidate), candidate))
        .filter(|&(distance, _)| distance <= limit)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// Edit distance with adjacent transpositions counted as one edit (optimal string
/// alignment), over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the table: two back (for transpositions), one back, this one.
    let mut before: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = alloc::vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (previous[j] + 1).min(row[j - 1] + 1).min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = core::mem::replace(&mut previous, row);
    }
    previous[b.len()]
}

pub(crate) fn str<'v>(path: &str, value: &'v Value) -> Result<&'v str> {
    value.as_str().ok_or_else(|| at(path, format_args!("expected a string, found {}", type_name(value))))
}

/// An id (of a node, a group): a non-empty string of at most
/// [`MAX_NODE_ID_BYTES`](crate::limits::MAX_NODE_ID_BYTES) bytes.
pub(crate) fn id<'v>(path: &str, value: &'v Value) -> Result<&'v str> {
    let id = str(path, value)?;
    if id.is_empty() {
        return Err(at(path, "must not be empty"));
    }
    let limit = crate::limits::MAX_NODE_ID_BYTES;
    if id.len() as u64 > u64::from(limit) {
        return Err(Error::limit(format!("{path}: {} bytes; the limit is {limit}", id.len())));
    }
    Ok(id)
}

pub(crate) fn bool(path: &str, value: &Value) -> Result<bool> {
    value.as_bool().ok_or_else(|| at(path, format_args!("expected a boolean, found {}", type_name(value))))
}

pub(crate) fn array<'v>(path: &str, value: &'v Value) -> Result<&'v Vec<Value>> {
    value.as_array().ok_or_else(|| at(path, format_args!("expected an array, found {}", type_name(value))))
}

/// A u64 written as a JSON integer or as a decimal string.
pub(crate) fn u64(path: &str, value: &Value) -> Result<u64> {
    let parsed = match value {
        Value::Number(number) => number.as_u64(),
        Value::String(text) => parse_decimal_u64(text),
        _ => None,
    };
    parsed.ok_or_else(|| {
        at(
            path,
            format_args!(
                "expected an integer in 0..=18446744073709551615 (number or decimal string), found {}",
                describe(value)
            ),
        )
    })
}

/// A u32 in `min..=max`.
pub(crate) fn u32_in(path: &str, value: &Value, min: u32, max: u32) -> Result<u32> {
    match value.as_u64() {
        Some(n) if n >= u64::from(min) && n <= u64::from(max) => Ok(n as u32),
        _ => Err(at(path, format_args!("expected an integer in {min}..={max}, found {}", describe(value)))),
    }
}

/// An integer in `min..=max`, where a value past `max` is `limit_exceeded` (a documented
/// limit) and anything else out of range `invalid_topology`: `"{path}: {n} exceeds the
/// limit of {max}"`, else as [`u32_in`].
pub(crate) fn u32_capped(path: &str, value: &Value, min: u32, max: u32) -> Result<u32> {
    match value.as_u64() {
        Some(n) if n > u64::from(max) => Err(Error::limit(format!("{path}: {n} exceeds the limit of {max}"))),
        _ => u32_in(path, value, min, max),
    }
}

/// A short rendering of a value for error messages (numbers and short strings verbatim).
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Number(number) => format!("{number}"),
        Value::String(text) if text.chars().count() <= 40 => format!("{text:?}"),
        other => type_name(other).to_string(),
    }
}

/// A u64 as JSON: a number when every JSON reader holds it exactly, else a decimal string.
pub(crate) fn u64_value(value: u64) -> Value {
    if value <= MAX_SAFE_INTEGER {
        Value::from(value)
    } else {
        Value::String(value.to_string())
    }
}

/// `map.put("name", value)`: `map.insert("name".into(), value)` with the name's `String`
/// made, and the value it replaces dropped, in one function rather than at every field
/// every writer sets (~80 places in a WebAssembly build's document writers).
pub(crate) trait Put {
    /// Sets the field `name` to `value`.
    fn put(&mut self, name: &str, value: Value);
}

impl Put for Map<String, Value> {
    #[inline(never)]
    fn put(&mut self, name: &str, value: Value) {
        self.insert(String::from(name), value);
    }
}

/// Parses JSON text into a value, refusing an object that names a field twice and
/// nesting past [`MAX_JSON_NESTING`](crate::limits::MAX_JSON_NESTING) levels. Errors are of `kind`, the message prefixed by `what`
/// ("the document", "the operation"): `"{what} is not valid JSON: ..."`, or for a
/// duplicate `"{path}: the field \"name\" appears twice ..."`.
///
/// # Errors
/// `kind` (`invalid_topology` for documents, `invalid_argument` for operations);
/// `limit_exceeded` for nesting too deep.
pub(crate) fn parse(text: &str, what: &str, kind: ErrorKind) -> Result<Value> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let parsed = Strict { path: &Path::Root, strict: true }
        .deserialize(&mut reader)
        .and_then(|value| reader.end().map(|()| value));
    parsed.map_err(|err| match err.classify() {
        // The reader's own refusals (a duplicate field, nesting) name their path first.
        serde_json::error::Category::Data if err.to_string().contains(NESTING_MARK) => {
            Error::new(ErrorKind::LimitExceeded, format!("{err}"))
        }
        serde_json::error::Category::Data => Error::new(kind, format!("{err}")),
        _ => Error::new(kind, format!("{what} is not valid JSON: {err}")),
    })
}

/// JSON text as `serde_json::from_str::<Value>` reads it, to the same value or the same
/// error: the last of a repeated field wins, and nesting is limited by serde_json's own
/// recursion limit only. [`parse`]'s reader without its two refusals, so that a build has
/// one JSON reader (the WebAssembly module's size).
pub(crate) fn parse_lenient(text: &str) -> core::result::Result<Value, serde_json::Error> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let value = Strict { path: &Path::Root, strict: false }.deserialize(&mut reader)?;
    reader.end()?;
    Ok(value)
}

/// Where a value sits in the text being parsed, for the duplicate-field message; built
/// on the stack as the reader descends, rendered only for an error.
enum Path<'p> {
    Root,
    Field(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

/// The end of the nesting refusal's message, which tells [`parse`] its kind.
const NESTING_MARK: &str = "(limits::MAX_JSON_NESTING)";

impl Path<'_> {
    /// How many arrays and objects hold the value at this path.
    fn depth(&self) -> u32 {
        match self {
            Path::Root => 0,
            Path::Field(parent, _) | Path::Index(parent, _) => parent.depth() + 1,
        }
    }

    /// The path as a message starts it: `nodes[2].id`, or `the top level`.
    fn named(&self) -> String {
        match self.render() {
            path if path.is_empty() => String::from("the top level"),
            path => path,
        }
    }

    fn render(&self) -> String {
        match self {
            Path::Root => String::new(),
            Path::Field(parent, name) => join(&parent.render(), name),
            Path::Index(parent, index) => format!("{}[{index}]", parent.render()),
        }
    }
}

/// The seed and visitor of [`parse`]: a `serde_json::Value`, checking object keys and
/// nesting (unless not `strict`: [`parse_lenient`]).
struct Strict<'p> {
    path: &'p Path<'p>,
    strict: bool,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> core::result::Result<Value, D::Error> {
        if self.strict && self.path.depth() >= crate::limits::MAX_JSON_NESTING {
            return Err(de::Error::custom(format_args!(
                "{}: nested in {} arrays and objects; the limit is {} {NESTING_MARK}",
                self.path.named(),
                self.path.depth(),
                crate::limits::MAX_JSON_NESTING
            )));
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> core::result::Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> core::result::Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> core::result::Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> core::result::Result<Value, E> {
        // JSON text has no NaN or infinity, so every parsed float is finite.
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> core::result::Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> core::result::Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> core::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> core::result::Result<Value, A::Error> {
        let mut array = Vec::with_capacity(items.size_hint().unwrap_or(0).min(4096));
        while let Some(item) =
            items.next_element_seed(Strict { path: &Path::Index(self.path, array.len()), strict: self.strict })?
        {
            array.push(item);
        }
        Ok(Value::Array(array))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut fields: A) -> core::result::Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(name) = fields.next_key::<String>()? {
            if self.strict && object.contains_key(&name) {
                return Err(de::Error::custom(format_args!(
                    "{}: the field {name:?} appears twice; a document names each field once",
                    self.path.named()
                )));
            }
            let value = fields.next_value_seed(Strict { path: &Path::Field(self.path, &name), strict: self.strict })?;
            object.insert(name, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_reads_as_serde_json_reads() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        for text in [
            r#"{"a": 1, "b": [true, null, -2, 1.5e300, "x\u00e9"], "a": {"c": 18446744073709551615}}"#,
            " [1, 2.0, -0.0, 1e-400, 123456789012345678901234567890] ",
            r#"{"a": 1,}"#,
            "[1] x",
            "",
            r#"{"a" 1}"#,
            "1.5e999",
            &deep(127),
            &deep(128),
            &deep(200),
        ] {
            let ours = parse_lenient(text).map_err(|err| err.to_string());
            let theirs = serde_json::from_str::<Value>(text).map_err(|err| err.to_string());
            assert_eq!(ours, theirs, "{text}");
        }
    }

    #[test]
    fn edit_distance_counts_typos_and_transpositions() {
        assert_eq!(edit_distance("weight", "weight"), 0);
        assert_eq!(edit_distance("wieght", "weight"), 1);
        assert_eq!(edit_distance("point_per_node", "points_per_node"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn hints_only_close_names() {
        let fields = ["type", "points_per_node"];
        assert_eq!(nearest("point_per_node", &fields), Some("points_per_node"));
        assert_eq!(nearest("points", &fields), None);
        assert_eq!(nearest("tpye", &fields), Some("type"));
        assert_eq!(hint("xyz", &fields), "");
        assert_eq!(hint("rign", &["ring", "jump"]), "; did you mean `ring`?");
    }
}
