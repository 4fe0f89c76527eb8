//! Reading what the commands take: documents and key lists from files or stdin, and the
//! errors that name them.

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;
use shardroute::limits::MAX_DOCUMENT_BYTES;
use shardroute::{ErrorKind, OwnedKey, Router, Topology};

/// Longest line of a key file (`--keys`, or keys on stdin), in bytes without its line end:
/// 65,535, the longest partition key Cassandra takes (Memcached and Couchbase keys stop at
/// 250 bytes). A longer line is refused (`limit_exceeded`) after reading at most this much
/// of it; key files are read line by line, never whole.
pub const MAX_KEY_LINE_BYTES: usize = 65_535;

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

    /// The input opened, with its size when it is a regular file.
    fn open(&self) -> Outcome<(Box<dyn Read>, Option<u64>)> {
        let cannot = |err: std::io::Error| Failure::input(format!("{}: cannot read: {err}", self.name()));
        if self.is_stdin() {
            return Ok((Box::new(std::io::stdin().lock()), None));
        }
        let file = std::fs::File::open(&self.0).map_err(cannot)?;
        let size = file.metadata().ok().filter(|metadata| metadata.is_file()).map(|metadata| metadata.len());
        Ok((Box::new(file), size))
    }

    /// The whole input, a document (or JSON input) of at most the core's document limit
    /// (64 MiB): reading stops one byte past it, and the input is refused with the core's
    /// words (`limit_exceeded`, exit 2).
    pub fn read(&self) -> Outcome<Vec<u8>> {
        let (reader, size) = self.open()?;
        let too_big = |size: String| {
            let error = shardroute::Error::new(
                ErrorKind::LimitExceeded,
                format!("the document is {size} bytes; the limit is {MAX_DOCUMENT_BYTES}"),
            );
            Failure::input(format!("{}: {error}", self.name()))
        };
        if let Some(size) = size.filter(|&size| size > MAX_DOCUMENT_BYTES) {
            return Err(too_big(size.to_string()));
        }
        let mut bytes = Vec::with_capacity(size.unwrap_or(0) as usize + 1);
        reader
            .take(MAX_DOCUMENT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|err| Failure::input(format!("{}: cannot read: {err}", self.name())))?;
        if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
            return Err(too_big(format!("more than {MAX_DOCUMENT_BYTES}")));
        }
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

/// A key as the document's declared key type reads it (`"hashing": {"keys": "u64"}`):
/// the core's rule, so the decimal text of an integer becomes that integer and any other
/// text is refused with the core's code and words, as in every binding. Without a
/// declaration (or with `--u64`, whose keys are integers already) the key is unchanged.
pub fn declared_key(router: &Router, key: OwnedKey, whence: &dyn Fn() -> String) -> Outcome<OwnedKey> {
    match router.hashing().typed(key.as_key()) {
        Ok(shardroute::Key::U64(value)) => Ok(OwnedKey::U64(value)),
        Ok(_) => Ok(key),
        Err(err) => Err(Failure::input(format!("{}: {err}", whence()))),
    }
}

/// Whether a document declares its keys unsigned 64-bit integers (`"keys": "u64"`): then
/// sampled keys are integers, as `--u64` makes them.
pub fn declares_u64(router: &Router) -> bool {
    router.hashing().keys == shardroute::hashing::KeyType::U64
}

/// The keys of a key file, one per line (`\r\n` or `\n`; blank lines skipped), read as
/// they are asked for: memory holds one line, of at most [`MAX_KEY_LINE_BYTES`].
pub struct KeyLines {
    reader: BufReader<Box<dyn Read>>,
    name: String,
    integers: bool,
    size: Option<u64>,
    consumed: u64,
    number: u64,
    line: Vec<u8>,
}

impl KeyLines {
    pub fn open(input: &Input, integers: bool) -> Outcome<KeyLines> {
        let (reader, size) = input.open()?;
        let reader = BufReader::with_capacity(64 << 10, reader);
        Ok(KeyLines {
            reader,
            name: input.name().to_string(),
            integers,
            size,
            consumed: 0,
            number: 0,
            line: Vec::new(),
        })
    }

    /// The file's size in bytes, when it is a regular file.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// Whether every byte read from the input has been taken (the next key waits for a read).
    pub fn drained(&self) -> bool {
        self.reader.buffer().is_empty()
    }

    /// Bytes read so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The line number of the last key read (from 1).
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The next key, or `None` at the end.
    pub fn next_key(&mut self) -> Outcome<Option<OwnedKey>> {
        loop {
            if !self.next_line()? {
                return Ok(None);
            }
            let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
            if line.is_empty() {
                continue;
            }
            let number = self.number;
            return parse_key(line, self.integers, &|| format!("{}:{number}", self.name)).map(Some);
        }
    }

    /// Reads the next line into `self.line` (its `\n` removed); false at the end.
    fn next_line(&mut self) -> Outcome<bool> {
        self.line.clear();
        self.number += 1;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(Failure::input(format!("{}: cannot read: {err}", self.name))),
            };
            if available.is_empty() {
                self.check_length(0)?;
                return Ok(!self.line.is_empty());
            }
            let (taken, ended) = match available.iter().position(|&byte| byte == b'\n') {
                Some(end) => (end + 1, true),
                None => (available.len(), false),
            };
            let content = if ended { taken - 1 } else { taken };
            // Refused before buffering past the limit (and one byte, a `\r` that may end it).
            if self.line.len() + content > MAX_KEY_LINE_BYTES + 1 {
                return self.check_length(content).map(|()| false);
            }
            self.line.extend_from_slice(&available[..content]);
            self.reader.consume(taken);
            self.consumed += taken as u64;
            if ended {
                self.check_length(0)?;
                return Ok(true);
            }
        }
    }

    /// Refuses the line read so far, and `more` bytes of it not kept, when it is too long.
    fn check_length(&self, more: usize) -> Outcome {
        let length = self.line.strip_suffix(b"\r").unwrap_or(&self.line).len() + more;
        if length <= MAX_KEY_LINE_BYTES && more == 0 {
            return Ok(());
        }
        let error = shardroute::Error::new(
            ErrorKind::LimitExceeded,
            format!("a key line longer than {MAX_KEY_LINE_BYTES} bytes"),
        );
        Err(Failure::input(format!("{}:{}: {error}", self.name, self.number)))
    }
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
