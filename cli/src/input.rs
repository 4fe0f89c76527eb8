//! Reading what the commands take: documents and key lists from files or stdin, and the
//! errors that name them.

use std::fmt;
use std::io::Read;
use std::path::Path;

use serde_json::Value;
use shardroute::{OwnedKey, Router, Topology};

/// How a run ends when it does not succeed: exit 1 for a problem found in a valid input
/// (`validate`), exit 2 for bad usage or input. The message is one line that names the input.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// Bad usage or input (exit 2).
    pub fn input(message: impl fmt::Display) -> Failure {
        Failure { code: 2, message: message.to_string() }
    }

    /// A problem found (exit 1).
    pub fn problem(message: impl fmt::Display) -> Failure {
        Failure { code: 1, message: message.to_string() }
    }
}

pub type Outcome<T = ()> = Result<T, Failure>;

/// A file path, or `-` for standard input.
#[derive(Clone, Debug)]
pub struct Input(pub String);

impl Input {
    pub fn is_stdin(&self) -> bool {
        self.0 == "-"
    }

    /// How messages name it.
    pub fn name(&self) -> &str {
        if self.is_stdin() {
            "<stdin>"
        } else {
            &self.0
        }
    }

    pub fn read(&self) -> Outcome<Vec<u8>> {
        let mut bytes = Vec::new();
        let result = if self.is_stdin() {
            std::io::stdin().read_to_end(&mut bytes).map(|_| ())
        } else {
            std::fs::File::open(&self.0).and_then(|mut file| file.read_to_end(&mut bytes)).map(|_| ())
        };
        result.map_err(|err| Failure::input(format!("{}: cannot read: {err}", self.name())))?;
        Ok(bytes)
    }

    /// The input as a JSON value; exit 2 when it is not JSON.
    pub fn json(&self) -> Outcome<Value> {
        let bytes = self.read()?;
        serde_json::from_slice(&bytes).map_err(|err| Failure::input(format!("{}: not valid JSON: {err}", self.name())))
    }

    /// The input as a topology document, checked; exit 2 when it is not one.
    pub fn topology(&self) -> Outcome<Topology> {
        let value = self.json()?;
        Topology::from_value(&value).map_err(|err| Failure::input(format!("{}: {err}", self.name())))
    }

    /// The input as a router.
    pub fn router(&self) -> Outcome<Router> {
        let topology = self.topology()?;
        Router::new(topology).map_err(|err| Failure::input(format!("{}: {err}", self.name())))
    }
}

/// Parses one key: its bytes, or with `integers` its decimal value as a u64 key.
pub fn parse_key(text: &[u8], integers: bool, whence: &dyn Fn() -> String) -> Outcome<OwnedKey> {
    if !integers {
        return Ok(OwnedKey::Bytes(text.to_vec()));
    }
    std::str::from_utf8(text).ok().and_then(|text| text.trim().parse::<u64>().ok()).map(OwnedKey::U64).ok_or_else(
        || {
            Failure::input(format!(
                "{}: {:?} is not an unsigned 64-bit integer (--u64)",
                whence(),
                String::from_utf8_lossy(text)
            ))
        },
    )
}

/// The keys of a key file, one per line (`\r\n` or `\n`; blank lines skipped).
pub fn key_lines(input: &Input, integers: bool) -> Outcome<Vec<OwnedKey>> {
    let bytes = input.read()?;
    let mut keys = Vec::new();
    for (number, line) in bytes.split(|&byte| byte == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        keys.push(parse_key(line, integers, &|| format!("{}:{}", input.name(), number + 1))?);
    }
    Ok(keys)
}

/// A key for people: its text (escaped where it is not UTF-8), or its integer.
pub fn show_key(key: &OwnedKey) -> String {
    match key {
        OwnedKey::Bytes(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => text.to_string(),
            Err(_) => bytes.escape_ascii().to_string(),
        },
        OwnedKey::U64(value) => value.to_string(),
    }
}

/// A key as JSON: a string, or a number for integer keys (a decimal string above 2^53 - 1,
/// which JavaScript cannot hold).
pub fn key_value(key: &OwnedKey) -> Value {
    match key {
        OwnedKey::U64(value) if *value < (1 << 53) => Value::from(*value),
        other => Value::String(show_key(other)),
    }
}

/// Writes `text` to `path` (`-`: stdout), naming the path on failure.
pub fn write_output(path: &Path, text: &str) -> Outcome {
    if path.as_os_str() == "-" {
        say_raw!("{text}");
        return Ok(());
    }
    std::fs::write(path, text).map_err(|err| Failure::input(format!("{}: cannot write: {err}", path.display())))
}
