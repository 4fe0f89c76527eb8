//! Published values transcribed into `conformance/reference/`, read as they are.

use serde_json::Value;

fn read(name: &str) -> String {
    let path = crate::root().join("reference").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The lines of a text reference, trimmed, without blank lines and `#` comments.
pub(crate) fn reference_lines(name: &str) -> Vec<String> {
    read(name)
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(String::from)
        .collect()
}

/// A JSON reference.
pub(crate) fn reference_json(name: &str) -> Value {
    serde_json::from_str(&read(name)).unwrap_or_else(|err| panic!("{name}: {err}"))
}
