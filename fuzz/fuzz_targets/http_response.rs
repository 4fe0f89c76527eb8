//! The CLI's HTTP/1 response reader (`cli/src/wire.rs`, behind `publish`, `watch` and
//! the follower of `serve`): a status line, headers and a body by `Content-Length`,
//! chunked transfer or the end of the stream, from what a hostile server sends.
//!
//! Half the inputs are any bytes; the other half a valid answer built from the input's
//! choices (any status and reason, up to 100 headers, a body sent chunked with any split,
//! hex case, leading zeros, extensions and line ends, by `Content-Length`, or to the end).
//!
//! Properties: nothing panics; an answer read has at most `MAX_HEADERS` headers, each
//! from a line under `MAX_LINE` bytes, names lowercased, a status line under `MAX_LINE`
//! bytes that starts `HTTP/1.`, and a body of at most `MAX_BODY` bytes that is exactly the
//! bytes framed by its `Content-Length` or the rest of the stream; a valid answer is read
//! whole, every header and the body as sent (chunked decoding round-trips); and a reader
//! that gets one byte per `read` gives the same answer, or the same error, as one that
//! gets everything at once.
//!
//! The reader is the CLI's own file, compiled into this target with `#[path]`: it needs
//! only `std`, so the fuzz crate does not depend on the CLI (and its tokio, hyper, clap).
#![no_main]

use std::io::Read;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../cli/src/wire.rs"]
mod wire;

use wire::{MAX_BODY, MAX_HEADERS, MAX_LINE};

/// A stream that hands out one byte per `read`, as a server dripping its answer does.
struct OneByte<'a>(&'a [u8]);

impl Read for OneByte<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (buf.first_mut(), self.0.split_first()) {
            (Some(slot), Some((&byte, rest))) => {
                *slot = byte;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

type Head = (u16, Vec<(String, String)>);

/// What the reader made of a stream: the head, and the body if the head was read.
#[derive(Debug, PartialEq)]
struct Outcome {
    head: std::result::Result<Head, String>,
    body: Option<std::result::Result<Vec<u8>, String>>,
    chunked: bool,
    length: Option<String>,
}

fn read(stream: impl Read) -> Outcome {
    match wire::read_response(stream) {
        Err(err) => Outcome { head: Err(err), body: None, chunked: false, length: None },
        Ok(response) => {
            let head = (response.status, response.headers.clone());
            let chunked = response.header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
            let length = response.header("content-length").map(str::to_string);
            Outcome { head: Ok(head), body: Some(response.body()), chunked, length }
        }
    }
}

/// The lines of the head in `bytes` (status line, headers, blank line), each with its
/// line end: where the body starts. `None` if the stream ends first.
fn head_lines(bytes: &[u8]) -> Option<(Vec<&[u8]>, usize)> {
    let mut lines = Vec::new();
    let mut at = 0;
    loop {
        let end = at + bytes[at..].iter().position(|&b| b == b'\n')? + 1;
        let line = &bytes[at..end];
        lines.push(line);
        at = end;
        if lines.len() > 1 && (line == b"\n" || line == b"\r\n") {
            return Some((lines, at));
        }
    }
}

/// The properties every answer read has, checked against the bytes sent.
fn check(bytes: &[u8], outcome: &Outcome) {
    let Ok((_, headers)) = &outcome.head else { return };
    assert!(headers.len() <= MAX_HEADERS, "{} headers", headers.len());
    for (name, value) in headers {
        // Each character of a header comes from at least one byte of its line (a bad
        // byte becomes U+FFFD), which also held the colon and the line end.
        assert!(name.chars().count() + value.chars().count() + 2 <= MAX_LINE, "a header line over the limit");
        assert_eq!(name, &name.to_ascii_lowercase());
        assert_eq!(value.trim(), value);
        assert!(!name.contains(':'));
    }
    let (lines, body_start) = head_lines(bytes).expect("a head read has its blank line");
    assert!(lines.iter().all(|line| line.len() <= MAX_LINE), "a head line over {MAX_LINE} bytes was read");
    assert!(lines[0].starts_with(b"HTTP/1."));
    assert!(headers.len() <= lines.len() - 2);
    let rest = &bytes[body_start..];
    match &outcome.body {
        Some(Ok(body)) => {
            assert!(body.len() <= MAX_BODY);
            if !outcome.chunked {
                match outcome.length.as_deref().and_then(|v| v.parse::<u64>().ok()) {
                    Some(length) => assert_eq!(body[..], rest[..length as usize], "the body is not what was framed"),
                    None => assert_eq!(body[..], rest[..], "the body is not the rest of the stream"),
                }
            }
        }
        Some(Err(_)) => {}
        None => unreachable!("a head read is followed by its body"),
    }
}

/// A token: a header name from the pool, or a made-up `x-` one.
fn header_name(u: &mut Unstructured) -> Result<String> {
    const NAMES: &[&str] = &["Content-Type", "Server", "X-Etcd-Index", "ETag", "Date", "Connection", "X-Raft-Term"];
    Ok(if u.ratio(3, 4)? {
        u.choose(NAMES)?.to_string()
    } else {
        let len = u.int_in_range(1..=12)?;
        let mut name = String::from("X-");
        for _ in 0..len {
            name.push(
                *u.choose(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!#$%&'*+^`|~")? as char
            );
        }
        name
    })
}

/// A header value: printable bytes and inner spaces, no line end, trimmed.
fn text(u: &mut Unstructured, max: usize) -> Result<String> {
    let len = u.int_in_range(0..=max)?;
    let mut value = String::new();
    for _ in 0..len {
        value.push(u.int_in_range(0x20u8..=0x7e)? as char);
    }
    Ok(value.trim().to_string())
}

fn line_end(u: &mut Unstructured) -> Result<&'static str> {
    Ok(if u.ratio(7, 8)? { "\r\n" } else { "\n" })
}

/// A valid answer built from the input's choices: the bytes, and what must be read.
fn valid(u: &mut Unstructured) -> Result<(Vec<u8>, Head, Vec<u8>)> {
    let status = u.int_in_range(100..=999u16)?;
    let mut out = format!("HTTP/1.{} {status:03} {}{}", u.int_in_range(0..=1u8)?, text(u, 20)?, line_end(u)?);
    let framing = u.int_in_range(0..=2u8)?; // 0: chunked, 1: Content-Length, 2: to the end
    let count = u.int_in_range(0..=MAX_HEADERS)?;
    let mut headers = Vec::new();
    let mut framed = false;
    for i in 0..count {
        let (name, value) = if !framed && framing < 2 && (u.ratio(1, 3)? || i + 1 == count) {
            framed = true;
            (String::from(if framing == 0 { "Transfer-Encoding" } else { "Content-Length" }), String::new())
        } else {
            (header_name(u)?, text(u, 40)?)
        };
        headers.push((name, value));
    }
    if !framed && framing < 2 {
        let name = if framing == 0 { "Transfer-Encoding" } else { "Content-Length" };
        headers.push((name.to_string(), String::new()));
    }
    let body: Vec<u8> = {
        let len = u.int_in_range(0..=u.len())?;
        u.bytes(len)?.to_vec()
    };
    for (name, value) in &mut headers {
        match name.as_str() {
            "Transfer-Encoding" => *value = u.choose(&["chunked", "Chunked", "CHUNKED"])?.to_string(),
            "Content-Length" => *value = body.len().to_string(),
            _ => {}
        }
        let before = if u.ratio(1, 4)? { " \t" } else { "" };
        let space = if u.ratio(3, 4)? { " " } else { "" };
        out.push_str(&format!("{name}:{space}{value}{before}{}", line_end(u)?));
    }
    out.push_str(line_end(u)?);
    let mut bytes = out.into_bytes();
    if framing == 0 {
        let mut left = &body[..];
        while !left.is_empty() {
            let size = u.int_in_range(1..=left.len())?;
            let zeros = u.int_in_range(0..=(16 - format!("{size:x}").len()))?;
            let digits = if u.ratio(1, 2)? { format!("{size:x}") } else { format!("{size:X}") };
            let extension = if u.ratio(1, 8)? { ";name=value" } else { "" };
            bytes.extend(format!("{}{digits}{extension}{}", "0".repeat(zeros), line_end(u)?).as_bytes());
            bytes.extend_from_slice(&left[..size]);
            bytes.extend(line_end(u)?.as_bytes());
            left = &left[size..];
        }
        bytes.extend(format!("0{}", line_end(u)?).as_bytes());
        if u.ratio(1, 2)? {
            bytes.extend(line_end(u)?.as_bytes());
        }
    } else {
        bytes.extend_from_slice(&body);
    }
    let headers = headers.into_iter().map(|(name, value)| (name.to_ascii_lowercase(), value)).collect();
    Ok((bytes, (status, headers), body))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let (bytes, expected) = if mode & 1 == 0 {
        (rest.to_vec(), None)
    } else {
        match valid(&mut Unstructured::new(rest)) {
            Ok((bytes, head, body)) => (bytes, Some((head, body))),
            Err(_) => return,
        }
    };
    let whole = read(&bytes[..]);
    check(&bytes, &whole);
    let dripped = read(OneByte(&bytes));
    assert_eq!(whole, dripped, "one byte per read gave another answer");
    if let Some((head, body)) = expected {
        assert_eq!(whole.head, Ok(head), "a valid head was not read as sent");
        assert_eq!(whole.body, Some(Ok(body)), "a valid body was not read as sent");
    }
});
