//! `publish`, `watch` and `serve`: a topology kept in etcd (its v3 JSON gateway) or served
//! over HTTP, followed and published with the core's follower deciding
//! ([`shardroute::session::Follower`]: which document to install, which to refuse, how
//! long to wait after a lost source, what a compare-and-swap write must be). This module
//! only talks HTTP, sleeps and prints.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shardroute::session::{Follower, FollowerConfig, Offered};

use crate::input::{Failure, Input, Outcome};
use crate::wire::{self, base64, unbase64, Url};

/// Exit code: someone wrote the key between `publish`'s read and its write.
const EXIT_CONFLICT: u8 = 3;
/// Exit code: the source could not be reached.
const EXIT_UNREACHABLE: u8 = 4;
/// How long a long poll asks the server to hold a request, and the longest `serve` holds one.
const WAIT_S: u64 = 30;
/// Between two requests to an HTTP source that answered at once.
const INTERVAL: Duration = Duration::from_secs(1);
const TIMEOUT: Duration = Duration::from_secs(2);

/// Where a topology comes from.
pub enum Source {
    /// A key of etcd's v3 JSON gateway, on any of its members (the next one is tried
    /// when the one in use is lost).
    Etcd { urls: Vec<Url>, key: String },
    /// A URL that answers with the document and an ETag.
    Http { url: Url },
}

impl Source {
    pub fn new(etcd: Option<String>, key: Option<String>, http: Option<String>) -> Outcome<Source> {
        match (etcd, key, http) {
            (Some(etcd), Some(key), None) => {
                let urls = etcd.split(',').map(|url| Url::parse(url.trim())).collect::<Result<Vec<_>, _>>();
                Ok(Source::Etcd { urls: urls.map_err(Failure::input)?, key })
            }
            (None, None, Some(http)) => Ok(Source::Http { url: Url::parse(&http).map_err(Failure::input)? }),
            _ => Err(Failure::input("give the source: --etcd URL --key KEY, or --http URL")),
        }
    }

    fn name(&self) -> String {
        match self {
            Source::Etcd { urls, key } => {
                let members: Vec<String> = urls.iter().map(|url| format!("{}:{}", url.host, url.port)).collect();
                format!("etcd {} key {key}", members.join(","))
            }
            Source::Http { url } => format!("http://{}:{}{}", url.host, url.port, url.path),
        }
    }
}

fn unreachable(message: impl std::fmt::Display) -> Failure {
    Failure { code: EXIT_UNREACHABLE, message: message.to_string() }
}

fn now_ms(start: Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

// -- etcd -------------------------------------------------------------------------------

/// One call of etcd's JSON gateway.
fn etcd_call(url: &Url, path: &str, body: &Value) -> Result<Value, String> {
    let response = wire::request(
        "POST",
        &url.with_path(path),
        &[("Content-Type", "application/json".into())],
        body.to_string().as_bytes(),
        Some(TIMEOUT),
    )?;
    let status = response.status;
    let bytes = response.body()?;
    if status != 200 {
        return Err(format!("etcd {path}: HTTP {status}: {}", String::from_utf8_lossy(&bytes[..bytes.len().min(300)])));
    }
    serde_json::from_slice(&bytes).map_err(|err| format!("etcd {path}: {err}"))
}

/// The key's value and `mod_revision` (`None`, 0 when absent), and the store's revision.
fn etcd_get(url: &Url, key: &str) -> Result<(Option<Vec<u8>>, u64, u64), String> {
    let answer = etcd_call(url, "/v3/kv/range", &json!({"key": base64(key.as_bytes())}))?;
    let revision = revision_of(&answer["header"]["revision"]);
    let Some(kv) = answer["kvs"].as_array().and_then(|kvs| kvs.first()) else {
        return Ok((None, 0, revision));
    };
    let value = unbase64(kv["value"].as_str().unwrap_or("")).ok_or("etcd: a value that is not base64")?;
    Ok((Some(value), revision_of(&kv["mod_revision"]), revision))
}

/// etcd writes its int64s as decimal strings.
fn revision_of(value: &Value) -> u64 {
    value.as_str().and_then(|text| text.parse().ok()).or_else(|| value.as_u64()).unwrap_or(0)
}

// -- following ----------------------------------------------------------------------------

/// What happened while following.
pub enum Event<'a> {
    /// The follower installed a document.
    Installed(&'a Follower),
    /// The follower refused one (it keeps its router).
    Refused(shardroute::Error),
    /// The source was lost; the next try is in `retry`.
    Lost { why: String, retry: Duration },
}

/// Follows `source` until `each` returns false: every value read is offered to the core's
/// follower; a lost source waits as long as the follower says.
pub fn follow(source: &Source, follower: &mut Follower, each: &mut dyn FnMut(Event<'_>) -> bool) {
    let start = Instant::now();
    let mut member = 0;
    loop {
        let result = match source {
            Source::Etcd { urls, key } => follow_etcd(&urls[member % urls.len()], key, follower, start, each),
            Source::Http { url } => follow_http(url, follower, start, each),
        };
        match result {
            Ok(Stop) => return,
            Err(why) if why == IDLE => {}
            Err(why) => {
                member += 1; // etcd: the next member
                let now = now_ms(start);
                let retry = Duration::from_millis(follower.disconnected(now).saturating_sub(now));
                if !each(Event::Lost { why, retry }) {
                    return;
                }
                std::thread::sleep(retry);
            }
        }
    }
}

/// `each` asked to stop.
struct Stop;

/// Nothing came on an etcd watch for `IDLE_TIME`: quiet, or a member that stopped answering
/// without closing its connections (paused). Read again (a failed read is a lost member)
/// and watch anew.
const IDLE: &str = "idle";
const IDLE_TIME: Duration = Duration::from_secs(2);

fn offered(follower: &mut Follower, offered: Offered, each: &mut dyn FnMut(Event<'_>) -> bool) -> Result<(), Stop> {
    let go_on = match offered {
        Offered::Installed { .. } => each(Event::Installed(follower)),
        Offered::Unchanged => true,
        Offered::Refused(error) => each(Event::Refused(error)),
    };
    if go_on {
        Ok(())
    } else {
        Err(Stop)
    }
}

/// Reads the key and offers it; the store revision read at.
fn etcd_offer(
    url: &Url,
    key: &str,
    follower: &mut Follower,
    start: Instant,
    each: &mut dyn FnMut(Event<'_>) -> bool,
) -> Result<Result<u64, Stop>, String> {
    let (value, mod_revision, revision) = etcd_get(url, key)?;
    follower.connected();
    if let Some(value) = value {
        let outcome = match std::str::from_utf8(&value) {
            Ok(text) => follower.offer(text, mod_revision, now_ms(start)),
            Err(_) => follower.offer_dictionary(&value, mod_revision, now_ms(start)),
        };
        if let Err(stop) = offered(follower, outcome, each) {
            return Ok(Err(stop));
        }
    }
    Ok(Ok(revision))
}

fn follow_etcd(
    url: &Url,
    key: &str,
    follower: &mut Follower,
    start: Instant,
    each: &mut dyn FnMut(Event<'_>) -> bool,
) -> Result<Stop, String> {
    let mut revision = match etcd_offer(url, key, follower, start, each)? {
        Ok(revision) => revision,
        Err(stop) => return Ok(stop),
    };
    // A watch from the revision after the read: nothing written since is missed. Every
    // batch of events is answered by reading the key again, never by the event's value.
    let create = json!({"create_request": {"key": base64(key.as_bytes()), "start_revision": (revision + 1).to_string()}});
    let mut stream = wire::request(
        "POST",
        &url.with_path("/v3/watch"),
        &[("Content-Type", "application/json".into())],
        create.to_string().as_bytes(),
        Some(IDLE_TIME),
    )?;
    if stream.status != 200 {
        return Err(format!("etcd watch: HTTP {}", stream.status));
    }
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let chunk = match stream.chunk() {
            Ok(chunk) => chunk.ok_or("etcd closed the watch")?,
            Err(why) if why.contains("timed out") || why.contains("WouldBlock") || why.contains("temporarily unavailable") => {
                return Err(IDLE.into())
            }
            Err(why) => return Err(why),
        };
        pending.extend_from_slice(&chunk);
        if pending.len() > wire::MAX_BODY {
            return Err("etcd watch: a message over the largest body".into());
        }
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let message: Value = serde_json::from_slice(&line).map_err(|err| format!("etcd watch: {err}"))?;
            let result = &message["result"];
            if result["canceled"].as_bool() == Some(true) {
                return Err(format!("etcd cancelled the watch: {}", result["cancel_reason"]));
            }
            if result["events"].as_array().is_some_and(|events| !events.is_empty()) {
                revision = match etcd_offer(url, key, follower, start, each)? {
                    Ok(read) => revision.max(read),
                    Err(stop) => return Ok(stop),
                };
            }
        }
    }
}

fn follow_http(
    url: &Url,
    follower: &mut Follower,
    start: Instant,
    each: &mut dyn FnMut(Event<'_>) -> bool,
) -> Result<Stop, String> {
    let mut etag: Option<String> = None;
    let mut bodies = follower.revision().unwrap_or(0);
    loop {
        let mut headers = vec![("Accept", "application/json, application/octet-stream".to_string())];
        if let Some(tag) = &etag {
            headers.push(("If-None-Match", tag.clone()));
            headers.push(("Prefer", format!("wait={WAIT_S}")));
        }
        let asked = Instant::now();
        let response = wire::request("GET", url, &headers, b"", Some(TIMEOUT + Duration::from_secs(WAIT_S)))?;
        follower.connected();
        let held = asked.elapsed() >= Duration::from_secs(WAIT_S / 2);
        match response.status {
            304 => {}
            200 => {
                etag = response.header("etag").map(str::to_string);
                let binary = response.header("content-type").is_some_and(|t| t.starts_with("application/octet-stream"));
                let body = response.body()?;
                bodies += 1;
                let outcome = if binary {
                    follower.offer_dictionary(&body, bodies, now_ms(start))
                } else {
                    match std::str::from_utf8(&body) {
                        Ok(text) => follower.offer(text, bodies, now_ms(start)),
                        Err(_) => return Err("the body is not UTF-8 (not offered)".into()),
                    }
                };
                let changed = matches!(outcome, Offered::Installed { .. });
                if let Err(stop) = offered(follower, outcome, each) {
                    return Ok(stop);
                }
                if changed {
                    continue;
                }
            }
            status => return Err(format!("GET {}: HTTP {status}", url.path)),
        }
        if !held {
            std::thread::sleep(INTERVAL);
        }
    }
}

// -- the commands ---------------------------------------------------------------------------

/// `shardroute publish`: checks `document` with the core's follower over what etcd holds
/// (valid, epoch = stored + 1), then writes it with a compare-and-swap on the revision read.
pub fn publish(document: &Input, etcd: &str, key: &str) -> Outcome {
    let url = Url::parse(etcd.split(',').next().unwrap_or(etcd).trim()).map_err(Failure::input)?;
    let text = String::from_utf8(document.read()?).map_err(|_| Failure::input(format!("{}: not UTF-8", document.name())))?;
    let (stored, mod_revision, _) = etcd_get(&url, key).map_err(unreachable)?;
    let mut follower = Follower::new(FollowerConfig::default());
    if let Some(stored) = stored {
        let stored = String::from_utf8(stored).map_err(|_| Failure::input(format!("{key}: the stored value is not UTF-8")))?;
        if let Offered::Refused(error) = follower.offer(&stored, mod_revision, 0) {
            return Err(Failure::input(format!(
                "{key}: the stored document is refused ({}: {}); not overwritten",
                error.code(),
                error.message()
            )));
        }
    }
    let write = follower
        .publish(&text)
        .map_err(|err| Failure::input(format!("{}: {}: {}", document.name(), err.code(), err.message())))?;
    let txn = json!({
        "compare": [{"key": base64(key.as_bytes()), "target": "MOD", "result": "EQUAL",
                     "mod_revision": write.expected_revision.unwrap_or(0).to_string()}],
        "success": [{"request_put": {"key": base64(key.as_bytes()), "value": base64(write.document.as_bytes())}}],
    });
    let answer = etcd_call(&url, "/v3/kv/txn", &txn).map_err(unreachable)?;
    if answer["succeeded"].as_bool() != Some(true) {
        return Err(Failure {
            code: EXIT_CONFLICT,
            message: format!("{key} changed since it was read: epoch {} not written", write.epoch),
        });
    }
    say!("{}", json!({"key": key, "epoch": write.epoch, "revision": revision_of(&answer["header"]["revision"])}));
    Ok(())
}

/// One line describing an installed router.
fn installed_line(follower: &Follower) -> Value {
    let router = follower.router().expect("installed");
    json!({"event": "installed", "epoch": router.epoch(), "revision": follower.revision(),
           "nodes": router.nodes().len(), "strategy": router.strategy().type_name()})
}

/// `shardroute watch`: prints each epoch as it arrives (one JSON line each); refusals and
/// lost sources go to stderr. With `count`, exits after that many.
pub fn watch(source: &Source, count: Option<u64>) -> Outcome {
    let mut follower = Follower::new(FollowerConfig::default());
    let mut seen = 0u64;
    follow(source, &mut follower, &mut |event| match event {
        Event::Installed(follower) => {
            say!("{}", installed_line(follower));
            seen += 1;
            count.is_none_or(|count| seen < count)
        }
        Event::Refused(error) => {
            eprintln!("shardroute: refused ({}): {}; keeping the router held", error.code(), error.message());
            true
        }
        Event::Lost { why, retry } => {
            eprintln!("shardroute: {} lost: {why}; again in {} ms", source.name(), retry.as_millis());
            true
        }
    });
    Ok(())
}

/// What `serve` serves: the last installed document, its tag, and who waits for a change.
struct Served {
    current: Mutex<Option<(String, String)>>,
    changed: Condvar,
}

/// `shardroute serve`: follows `source` and serves its last good document over HTTP
/// (`GET`, any path): a strong ETag per epoch, `304` on `If-None-Match`, and long polls
/// (`Prefer: wait=N`, up to 30 s) held until the document changes.
pub fn serve(source: Source, listen: &str) -> Outcome {
    let listener = TcpListener::bind(listen).map_err(|err| Failure::input(format!("{listen}: {err}")))?;
    let address = listener.local_addr().map_err(|err| Failure::input(err.to_string()))?;
    let served = Arc::new(Served { current: Mutex::new(None), changed: Condvar::new() });
    let following = Arc::clone(&served);
    std::thread::spawn(move || {
        let mut follower = Follower::new(FollowerConfig::default());
        follow(&source, &mut follower, &mut |event| {
            match event {
                Event::Installed(follower) => {
                    let router = follower.router().expect("installed");
                    let tag = format!("\"epoch-{}\"", router.epoch());
                    *following.current.lock().unwrap_or_else(|e| e.into_inner()) = Some((router.to_json(), tag));
                    following.changed.notify_all();
                    eprintln!("shardroute: serving epoch {}", router.epoch());
                }
                Event::Refused(error) => eprintln!("shardroute: refused ({}): {}", error.code(), error.message()),
                Event::Lost { why, retry } => {
                    eprintln!("shardroute: {} lost: {why}; again in {} ms", source.name(), retry.as_millis())
                }
            }
            true
        });
    });
    say!("{}", json!({"event": "listening", "url": format!("http://{address}/")}));
    for stream in listener.incoming().flatten() {
        let served = Arc::clone(&served);
        std::thread::spawn(move || {
            let _ = answer(stream, &served);
        });
    }
    Ok(())
}

fn answer(stream: TcpStream, served: &Served) -> std::io::Result<()> {
    stream.set_read_timeout(Some(TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let headers = wire::read_headers(&mut reader).unwrap_or_default();
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let mut out = stream;
    if !request_line.starts_with("GET ") {
        return out.write_all(b"HTTP/1.1 405 Method Not Allowed\r\nAllow: GET\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
    let held = header("if-none-match");
    let wait = header("prefer")
        .and_then(|p| p.split(',').find_map(|part| part.trim().strip_prefix("wait=").and_then(|n| n.parse::<u64>().ok())))
        .map_or(0, |n| n.min(WAIT_S));
    let deadline = Instant::now() + Duration::from_secs(wait);
    let mut current = served.current.lock().unwrap_or_else(|e| e.into_inner());
    while held.is_some() && current.as_ref().map(|(_, tag)| tag) == held.as_ref() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        current = served.changed.wait_timeout(current, left).unwrap_or_else(|e| e.into_inner()).0;
    }
    let reply = match current.as_ref() {
        None => "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
        Some((_, tag)) if Some(tag) == held.as_ref() => {
            format!("HTTP/1.1 304 Not Modified\r\nETag: {tag}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        Some((document, tag)) => format!(
            "HTTP/1.1 200 OK\r\nETag: {tag}\r\nContent-Type: application/json\r\nCache-Control: no-cache\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{document}",
            document.len()
        ),
    };
    drop(current);
    out.write_all(reply.as_bytes())
}

