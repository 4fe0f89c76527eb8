//! JSON documents (a topology, a hashing spec, an operation) passed as text or as
//! parsed Python data, JSON data (a session's `CLUSTER SHARDS` reply, a config) passed
//! as Python data, and JSON results returned as Python data.
//!
//! A `str` document is the JSON text itself. Python data (a `Mapping` document, a reply)
//! becomes a JSON value by [`data_value`], under the rules and in the words of the
//! JavaScript packages' `documentToJson` (`bindings-js/shared.mjs`), so that the same
//! value crossing into any binding is read the same or refused with the same code and
//! message (the shared table: `conformance/hostile/crossing.json`):
//!
//! - `dict` is an object (`str` keys; an `int` key is its decimal text, as `json.dumps`
//!   writes it), `list` and `tuple` are arrays, `None` is `null`;
//! - a `float` is the number JavaScript's `JSON.stringify` writes for it: an integral
//!   value below 1e21 is an integer (`16383.0` is `16383`, `-0.0` is `0`), as it is in
//!   JavaScript, where the two are one value; NaN and the infinities are refused
//!   (`nodes[0].weight: NaN is not a JSON number`);
//! - an `int` in the 64-bit range is an integer, a larger one its decimal string, as a
//!   JavaScript `bigint` is (exact, never rounded to a float);
//! - a `str` with a lone surrogate is refused (`a string with a lone surrogate is not
//!   text`), never replaced;
//! - nesting past [`MAX_JSON_NESTING`](sr::limits::MAX_JSON_NESTING) arrays and objects is
//!   `limit_exceeded` in the core JSON reader's words, as is data whose JSON text would
//!   pass [`MAX_DOCUMENT_BYTES`](sr::limits::MAX_DOCUMENT_BYTES) (counted as JavaScript
//!   counts it, in UTF-16 units), found as soon as it is met: a 10,000-deep list is not
//!   walked, nor a list too long to fit;
//! - anything else (a `set`, `bytes`, an object, a cycle) is refused with its path.
//!
//! Refusals other than the two limits are of the caller's kind: `invalid_topology` for a
//! document, `invalid_argument` for an operation, a reply or a config. A result (`apply`'s)
//! is its JSON text read back with `json.loads`.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use serde_json::{Map, Number, Value};
use shardroute as sr;

use crate::errors;
use crate::key::{text_of, type_name};

static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The JSON text of a document argument; `what` names it in errors ("topology").
///
/// # Errors
/// `invalid_topology` for a value that is neither `str` nor a `Mapping` of JSON data
/// ([`data_value`]), and for a `str` with lone surrogates (it has no UTF-8 encoding:
/// [`text_of`], in the JavaScript packages' words); `limit_exceeded` as [`data_value`].
pub fn document_text(value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    json_text(value, what, sr::ErrorKind::InvalidTopology)
}

/// As [`document_text`], with `kind` as the error code of a malformed value.
pub fn json_text(value: &Bound<'_, PyAny>, what: &str, kind: sr::ErrorKind) -> PyResult<String> {
    let py = value.py();
    if let Ok(text) = value.cast::<PyString>() {
        return text_of(text, what, kind);
    }
    if !value.is_instance_of::<PyMapping>() {
        return Err(errors::new(
            kind,
            format!("{what} must be JSON text (str) or a mapping, not {}", type_name(value)),
        ));
    }
    // A mapping that is not a dict is copied into one, as `json.dumps` would need.
    let dict = if value.is_instance_of::<PyDict>() {
        value.clone()
    } else {
        py.get_type::<PyDict>()
            .call1((value,))
            .map_err(|err| errors::convert(py, err, kind, &format!("{what} cannot be read as a mapping")))?
    };
    let data = data_value(&dict, what, kind)?;
    serde_json::to_string(&data).map_err(|err| errors::new(kind, format!("{what}: {err}")))
}

/// The limit on a value's JSON text, in bytes (`limits::MAX_DOCUMENT_BYTES`, 64 MiB).
const MAX_TEXT: usize = sr::limits::MAX_DOCUMENT_BYTES as usize;

/// The deepest nesting of arrays and objects (`limits::MAX_JSON_NESTING`).
const MAX_NESTING: usize = sr::limits::MAX_JSON_NESTING as usize;

/// What a refusal of another type says is JSON data.
const ONLY_DATA: &str = "(only dicts, lists, tuples, strings, finite floats, ints, booleans and None are)";

/// The end of the nesting refusal, as the core's JSON reader ends it.
const NESTING: &str = "(limits::MAX_JSON_NESTING)";

/// Python data as a JSON value, read by the rules of the module doc (those of
/// `documentToJson` in `bindings-js/shared.mjs`, in its words); `what` names the value in
/// messages ("reply"), and `kind` is the code of a refusal that is not a limit.
///
/// # Errors
/// `kind`, naming the path of the value refused by the core's path syntax
/// (`nodes[0].weight: NaN is not a JSON number`); `limit_exceeded` for nesting deeper
/// than [`MAX_JSON_NESTING`](sr::limits::MAX_JSON_NESTING) arrays and objects
/// (`[0][0]...: nested in 64 arrays and objects; the limit is 64
/// (limits::MAX_JSON_NESTING)`) or JSON text longer than
/// [`MAX_DOCUMENT_BYTES`](sr::limits::MAX_DOCUMENT_BYTES). A Python exception met while
/// reading (an integer too long for `int.__repr__`) is the cause of the error it becomes; a
/// `BaseException` that is not an `Exception` propagates unchanged.
pub fn data_value(value: &Bound<'_, PyAny>, what: &str, kind: sr::ErrorKind) -> PyResult<Value> {
    Walker { what, kind, size: 0, ancestors: Vec::new() }.write(value, &Path::Root)
}

/// Where a value sits in the data being read, built on the stack as the walk descends and
/// rendered only for an error: `nodes[2].weight`.
enum Path<'p> {
    Root,
    Field(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

impl Path<'_> {
    fn render(&self) -> String {
        match self {
            Path::Root => String::new(),
            Path::Field(parent, name) => match parent.render() {
                parent if parent.is_empty() => (*name).to_owned(),
                parent => format!("{parent}.{name}"),
            },
            Path::Index(parent, index) => format!("{}[{index}]", parent.render()),
        }
    }
}

/// The state of one [`data_value`]: documentToJson's `size` and `ancestors`.
struct Walker<'w> {
    what: &'w str,
    kind: sr::ErrorKind,
    /// Length of the JSON text of what was read so far, in UTF-16 units, as
    /// documentToJson counts it (never more than its UTF-8 bytes).
    size: usize,
    /// The dicts, lists and tuples holding the value being read (a cycle, the nesting).
    ancestors: Vec<*mut pyo3::ffi::PyObject>,
}

impl Walker<'_> {
    /// A refusal of `kind` at `path` (the value's name at the top level).
    fn fail(&self, path: &Path<'_>, problem: impl std::fmt::Display) -> PyErr {
        match path.render() {
            at if at.is_empty() => errors::new(self.kind, format!("{}: {problem}", self.what)),
            at => errors::new(self.kind, format!("{at}: {problem}")),
        }
    }

    /// A Python exception met at `path`, as a refusal of `kind` with it as the cause.
    fn failed(&self, py: Python<'_>, path: &Path<'_>, original: PyErr) -> PyErr {
        if !original.is_instance_of::<PyException>(py) {
            return original;
        }
        let err = self.fail(path, original.value(py));
        err.set_cause(py, Some(original));
        err
    }

    fn too_long(&self) -> PyErr {
        errors::new(
            sr::ErrorKind::LimitExceeded,
            format!("{} is more than {MAX_TEXT} bytes of JSON; the limit is {MAX_TEXT}", self.what),
        )
    }

    /// Counts `units` more of JSON text: `limit_exceeded` past [`MAX_TEXT`].
    fn push(&mut self, units: usize) -> PyResult<()> {
        self.size = self.size.saturating_add(units);
        if self.size > MAX_TEXT {
            return Err(self.too_long());
        }
        Ok(())
    }

    fn write(&mut self, item: &Bound<'_, PyAny>, path: &Path<'_>) -> PyResult<Value> {
        if let Ok(text) = item.cast::<PyString>() {
            let Ok(text) = text.to_str() else {
                return Err(self.fail(path, "a string with a lone surrogate is not text"));
            };
            self.push(json_units(text))?;
            return Ok(Value::String(text.to_owned()));
        }
        // bool before int: True is an int to Python, not to JSON.
        if let Ok(flag) = item.cast::<PyBool>() {
            let flag = flag.is_true();
            self.push(if flag { 4 } else { 5 })?;
            return Ok(Value::Bool(flag));
        }
        if item.is_instance_of::<PyInt>() {
            return self.integer(item, path);
        }
        if let Ok(float) = item.cast::<PyFloat>() {
            let number = float.value();
            if !number.is_finite() {
                let written = if number.is_nan() {
                    "NaN"
                } else if number > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                };
                return Err(self.fail(path, format_args!("{written} is not a JSON number")));
            }
            let number = js_number(number);
            self.push(number.to_string().len())?;
            return Ok(Value::Number(number));
        }
        if item.is_none() {
            self.push(4)?;
            return Ok(Value::Null);
        }
        let dict = item.cast::<PyDict>().ok();
        if dict.is_none() && !item.is_instance_of::<PyList>() && !item.is_instance_of::<PyTuple>() {
            return Err(self.fail(path, format_args!("a {} is not JSON data {ONLY_DATA}", type_name(item))));
        }
        if self.ancestors.contains(&item.as_ptr()) {
            return Err(self.fail(path, "the object contains itself (a cycle)"));
        }
        if self.ancestors.len() >= MAX_NESTING {
            // The core JSON reader's words for the same text (limit_exceeded, the same path).
            return Err(errors::new(
                sr::ErrorKind::LimitExceeded,
                format!(
                    "{}: nested in {MAX_NESTING} arrays and objects; the limit is {MAX_NESTING} {NESTING}",
                    path.render()
                ),
            ));
        }
        self.ancestors.push(item.as_ptr());
        let value = match dict {
            Some(dict) => self.object(dict, path),
            None => self.array(item, path),
        };
        self.ancestors.pop();
        value
    }

    /// An `int`: an integer in the 64-bit range, else its decimal string (a bigint's rule).
    fn integer(&mut self, item: &Bound<'_, PyAny>, path: &Path<'_>) -> PyResult<Value> {
        let number = match (item.extract::<u64>(), item.extract::<i64>()) {
            (Ok(n), _) => Number::from(n),
            (_, Ok(n)) => Number::from(n),
            _ => {
                // `int.__repr__`, not the value's own (a subclass may override it).
                let py = item.py();
                let digits = py
                    .get_type::<PyInt>()
                    .getattr("__repr__")
                    .and_then(|repr| repr.call1((item,)))
                    .and_then(|digits| digits.extract::<String>())
                    .map_err(|err| self.failed(py, path, err))?;
                self.push(digits.len() + 2)?;
                return Ok(Value::String(digits));
            }
        };
        self.push(number.to_string().len())?;
        Ok(Value::Number(number))
    }

    fn array(&mut self, item: &Bound<'_, PyAny>, path: &Path<'_>) -> PyResult<Value> {
        // A list's items are read from a snapshot (a tuple): nothing here runs Python code
        // that could change the list, and if something did, the walk would not notice.
        let items = match item.cast::<PyTuple>() {
            Ok(tuple) => tuple.clone(),
            Err(_) => item.cast::<PyList>().map_err(PyErr::from)?.to_tuple(),
        };
        // Every element takes a character and a comma: a longer array cannot fit.
        if items.len() > MAX_TEXT / 2 {
            return Err(self.too_long());
        }
        self.push(1)?;
        let mut array = Vec::with_capacity(items.len().min(4096));
        for (index, element) in items.iter().enumerate() {
            if index > 0 {
                self.push(1)?;
            }
            array.push(self.write(&element, &Path::Index(path, index))?);
        }
        self.push(1)?;
        Ok(Value::Array(array))
    }

    fn object(&mut self, dict: &Bound<'_, PyDict>, path: &Path<'_>) -> PyResult<Value> {
        let py = dict.py();
        // A snapshot of the items, as for a list.
        let items = dict.items();
        self.push(1)?;
        let mut object = Map::new();
        for (index, pair) in items.iter().enumerate() {
            let (key, member): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                pair.extract().map_err(|err| self.failed(py, path, err))?;
            let name = if let Ok(name) = key.cast::<PyString>() {
                match name.to_str() {
                    Ok(name) => name.to_owned(),
                    Err(_) => return Err(self.fail(path, "a field name with a lone surrogate is not text")),
                }
            } else if key.is_instance_of::<PyInt>() && !key.is_instance_of::<PyBool>() {
                // `json.dumps` writes an int key as its decimal text.
                match self.integer(&key, path)? {
                    Value::Number(number) => number.to_string(),
                    Value::String(digits) => digits,
                    _ => unreachable!("integer() returns a number or its digits"),
                }
            } else {
                return Err(self.fail(
                    path,
                    format_args!("a field name must be a str, not {} (JSON names are text)", type_name(&key)),
                ));
            };
            if index > 0 {
                self.push(1)?;
            }
            self.push(json_units(&name) + 1)?;
            let value = self.write(&member, &Path::Field(path, &name))?;
            if object.contains_key(&name) {
                return Err(
                    self.fail(path, format_args!("the field {name:?} appears twice; a document names each field once"))
                );
            }
            object.insert(name, value);
        }
        self.push(1)?;
        Ok(Value::Object(object))
    }
}

/// The number JavaScript's `JSON.stringify` writes for `number` (finite), as serde_json
/// reads it back: an integral value below 1e21 is written in digits, an integer when it
/// fits a u64 or an i64 (`-0` is `0`); anything else is the float itself.
fn js_number(number: f64) -> Number {
    if number.fract() == 0.0 && number.abs() < 1e21 {
        if (0.0..18_446_744_073_709_551_616.0).contains(&number) {
            return Number::from(number as u64);
        }
        if (-9_223_372_036_854_775_808.0..0.0).contains(&number) {
            return Number::from(number as i64);
        }
    }
    Number::from_f64(number).unwrap_or_else(|| Number::from(0u64))
}

/// The length of `JSON.stringify(text)` in UTF-16 units: quotes, escapes, surrogate pairs.
fn json_units(text: &str) -> usize {
    2 + text
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
            c if u32::from(c) < 0x20 => 6,
            c => c.len_utf16(),
        })
        .sum::<usize>()
}

/// A JSON value from core as Python data (`dict`, `list`, `str`, `int`, `float`, `bool`,
/// `None`), through `json.loads` of its text: objects keep their field order and
/// integers stay exact.
pub fn value_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    let loads = LOADS.import(py, "json", "loads")?;
    loads.call1((value.to_string(),))
}
