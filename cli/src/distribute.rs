//! `publish`, `watch` and `serve`: a topology kept in etcd (its v3 JSON gateway), in a
//! ZooKeeper node or served over HTTP, followed and published with the core's follower
//! deciding ([`shardroute::session::Follower`]: which document to install, which to
//! refuse, how long to wait after a lost source, what a compare-and-swap write must be).
//! This module only talks HTTP or ZooKeeper ([`crate::zookeeper`]), sleeps and prints.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shardroute::session::{Follower, FollowerConfig, Offered, Publish};

use crate::input::{Failure, Input, Outcome};
use crate::wire::{self, base64, unbase64, Url};
use crate::zookeeper::{self, Class, Session};

/// Exit code: someone wrote the key (or node) between `publish`'s read and its write.
const EXIT_CONFLICT: u8 = 3;
/// Exit code: the source could not be reached.
const EXIT_UNREACHABLE: u8 = 4;
/// How long a long poll asks the server to hold a request, and the longest `serve` holds one.
const WAIT_S: u64 = 30;
/// Between two requests to an HTTP source that answered at once.
const INTERVAL: Duration = Duration::from_secs(1);
const TIMEOUT: Duration = Duration::from_secs(2);
/// One call of etcd's gateway on loopback or a LAN: a member silent this long is left for
/// the next.
const ETCD_TIMEOUT: Duration = Duration::from_secs(1);

/// Where a topology comes from.
pub enum Source {
    /// A key of etcd's v3 JSON gateway, on any of its members (the next one is tried
    /// when the one in use is lost).
    Etcd { urls: Vec<Url>, key: String },
    /// A node of a ZooKeeper ensemble, on any of its members (`host:port`; the next one is
    /// tried when the one in use is lost).
    ZooKeeper { hosts: Vec<String>, path: String },
    /// A URL that answers with the document and an ETag.
    Http { url: Url },
}

/// Where a topology comes from, as the command line names it (each flag optional).
pub struct SourceFlags {
    pub etcd: Option<String>,
    pub key: Option<String>,
    pub zookeeper: Option<String>,
    pub path: Option<String>,
    pub http: Option<String>,
}

impl Source {
    /// The source the flags name (`watch`, `serve`: etcd, ZooKeeper or HTTP).
    pub fn new(flags: SourceFlags) -> Outcome<Source> {
        match flags {
            SourceFlags { http: Some(http), etcd: None, key: None, zookeeper: None, path: None } => {
                Ok(Source::Http { url: Url::parse(&http).map_err(Failure::input)? })
            }
            flags => Source::store(flags).unwrap_or_else(|| {
                Err(Failure::input(
                    "give the source: --etcd URL --key KEY, --zookeeper HOSTS --path PATH, or --http URL",
                ))
            }),
        }
    }

    /// The store the flags name (`publish`: etcd or ZooKeeper).
    pub fn target(flags: SourceFlags) -> Outcome<Source> {
        Source::store(flags).unwrap_or_else(|| {
            Err(Failure::input("give the store: --etcd URL --key KEY, or --zookeeper HOSTS --path PATH"))
        })
    }

    /// etcd or ZooKeeper, checked; `None` when the flags name neither (or more).
    fn store(flags: SourceFlags) -> Option<Outcome<Source>> {
        match flags {
            SourceFlags { etcd: Some(etcd), key: Some(key), zookeeper: None, path: None, http: None } => {
                let urls = etcd.split(',').map(|url| Url::parse(url.trim())).collect::<Result<Vec<_>, _>>();
                Some(urls.map(|urls| Source::Etcd { urls, key }).map_err(Failure::input))
            }
            SourceFlags { zookeeper: Some(hosts), path: Some(path), etcd: None, key: None, http: None } => {
                let hosts: Vec<String> = hosts.split(',').map(|host| host.trim().to_string()).collect();
                let checked = hosts
                    .iter()
                    .try_for_each(|host| zookeeper::parse_host(host).map(drop))
                    .and_then(|()| zookeeper::check_path(&path));
                Some(checked.map(|()| Source::ZooKeeper { hosts, path }).map_err(Failure::input))
            }
            _ => None,
        }
    }

    fn name(&self) -> String {
        match self {
            Source::Etcd { urls, key } => {
                let members: Vec<String> = urls.iter().map(|url| format!("{}:{}", url.host, url.port)).collect();
                format!("etcd {} key {key}", members.join(","))
            }
            Source::ZooKeeper { hosts, path } => format!("zookeeper {} path {path}", hosts.join(",")),
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
        Some(ETCD_TIMEOUT),
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
    // ZooKeeper: the largest zxid seen, told to each member (one behind it refuses us).
    let mut zxid_seen = 0;
    loop {
        let result = match source {
            Source::Etcd { urls, key } => follow_etcd(&urls[member % urls.len()], key, follower, start, each),
            Source::ZooKeeper { hosts, path } => {
                follow_zookeeper(&hosts[member % hosts.len()], path, &mut zxid_seen, follower, start, each)
            }
            Source::Http { url } => follow_http(url, follower, start, each),
        };
        match result {
            Ok(Stop) => return,
            Err(why) if why == IDLE => {}
            Err(why) => {
                member += 1; // etcd, ZooKeeper: the next member
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
const IDLE_TIME: Duration = Duration::from_secs(1);

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

/// Offers a value read from a store as plain bytes: the core tells a binary dictionary by
/// its magic and refuses text that is not UTF-8.
fn offer_value(
    follower: &mut Follower,
    value: &[u8],
    revision: u64,
    start: Instant,
    each: &mut dyn FnMut(Event<'_>) -> bool,
) -> Result<(), Stop> {
    let outcome = follower.offer_bytes(value, revision, now_ms(start));
    offered(follower, outcome, each)
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
        if let Err(stop) = offer_value(follower, &value, mod_revision, start, each) {
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
    let create =
        json!({"create_request": {"key": base64(key.as_bytes()), "start_revision": (revision + 1).to_string()}});
    let mut stream = wire::request(
        "POST",
        &url.with_path("/v3/watch"),
        &[("Content-Type", "application/json".into())],
        create.to_string().as_bytes(),
        Some(ETCD_TIMEOUT),
    )?;
    if stream.status != 200 {
        return Err(format!("etcd watch: HTTP {}", stream.status));
    }
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let chunk = match stream.chunk(IDLE_TIME) {
            Ok(chunk) => chunk.ok_or("etcd closed the watch")?,
            Err(why)
                if why.contains("timed out")
                    || why.contains("WouldBlock")
                    || why.contains("temporarily unavailable") =>
            {
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

// -- ZooKeeper ------------------------------------------------------------------------------

/// A node's data as a stored document: `None` when null or empty (a node made empty, a
/// parent) as when there is no node; with its `mzxid`, the follower's revision.
fn zookeeper_document(node: zookeeper::Node) -> Option<(Vec<u8>, u64)> {
    let revision = u64::try_from(node.stat.mzxid).unwrap_or(0);
    node.data.filter(|data| !data.is_empty()).map(|data| (data, revision))
}

/// Follows `path` in a new session on `member`, telling it the largest zxid seen (and
/// keeping the largest this session saw).
fn follow_zookeeper(
    member: &str,
    path: &str,
    zxid_seen: &mut i64,
    follower: &mut Follower,
    start: Instant,
    each: &mut dyn FnMut(Event<'_>) -> bool,
) -> Result<Stop, String> {
    let mut session = Session::open(member, *zxid_seen).map_err(|err| err.to_string())?;
    let result = follow_zookeeper_session(&mut session, path, follower, start, each);
    *zxid_seen = (*zxid_seen).max(session.zxid());
    match result {
        Ok(stop) => {
            session.close();
            Ok(stop)
        }
        Err(err) => Err(err.to_string()),
    }
}

/// Reads the node with a watch (on its data when it exists, on its creation when not),
/// offers what it holds, and reads again at each change of it. Quiet, the session is
/// pinged every [`IDLE_TIME`] (or a third of its timeout when shorter); a member that
/// answers nothing for the session timeout is lost.
fn follow_zookeeper_session(
    session: &mut Session,
    path: &str,
    follower: &mut Follower,
    start: Instant,
    each: &mut dyn FnMut(Event<'_>) -> bool,
) -> Result<Stop, zookeeper::Error> {
    let ping_every = IDLE_TIME.min(session.timeout() / 3);
    loop {
        match session.get_data(path, true)? {
            Some(node) => {
                follower.connected();
                if let Some((document, revision)) = zookeeper_document(node) {
                    if let Err(stop) = offer_value(follower, &document, revision, start, each) {
                        return Ok(stop);
                    }
                }
            }
            None => {
                if session.exists(path, true)?.is_some() {
                    continue; // created between the two reads: read it
                }
                follower.connected();
            }
        }
        // Every change is answered by reading the node again, never by the event alone.
        while !session.notification(ping_every)?.changes(path) {}
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
                    follower.offer_bytes(&body, bodies, now_ms(start))
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

/// `shardroute publish`: checks `document` with the core's follower over what the store
/// holds (valid, epoch = stored + 1), then writes it with a compare-and-swap on what was
/// read: etcd's `mod_revision`; ZooKeeper's node version, or a create when there is no node.
pub fn publish(document: &Input, target: &Source) -> Outcome {
    let text =
        String::from_utf8(document.read()?).map_err(|_| Failure::input(format!("{}: not UTF-8", document.name())))?;
    match target {
        Source::Etcd { urls, key } => publish_etcd(document, &text, &urls[0], key),
        Source::ZooKeeper { hosts, path } => publish_zookeeper(document, &text, hosts, path),
        Source::Http { .. } => Err(Failure::input("publish writes to etcd or ZooKeeper, not over HTTP")),
    }
}

/// The write of `text` over what `name` holds (its value and revision), as the follower
/// checks it.
fn checked_write(document: &Input, text: &str, name: &str, stored: Option<(Vec<u8>, u64)>) -> Outcome<Publish> {
    let mut follower = Follower::new(FollowerConfig::default());
    if let Some((stored, revision)) = stored {
        if let Offered::Refused(error) = follower.offer_bytes(&stored, revision, 0) {
            return Err(Failure::input(format!(
                "{name}: the stored document is refused ({}: {}); not overwritten",
                error.code(),
                error.message()
            )));
        }
    }
    follower
        .publish(text)
        .map_err(|err| Failure::input(format!("{}: {}: {}", document.name(), err.code(), err.message())))
}

fn conflict(name: &str, epoch: u64) -> Failure {
    Failure { code: EXIT_CONFLICT, message: format!("{name} changed since it was read: epoch {epoch} not written") }
}

fn publish_etcd(document: &Input, text: &str, url: &Url, key: &str) -> Outcome {
    let (stored, mod_revision, _) = etcd_get(url, key).map_err(unreachable)?;
    let write = checked_write(document, text, key, stored.map(|stored| (stored, mod_revision)))?;
    let txn = json!({
        "compare": [{"key": base64(key.as_bytes()), "target": "MOD", "result": "EQUAL",
                     "mod_revision": write.expected_revision.unwrap_or(0).to_string()}],
        "success": [{"request_put": {"key": base64(key.as_bytes()), "value": base64(write.document.as_bytes())}}],
    });
    let answer = etcd_call(url, "/v3/kv/txn", &txn).map_err(unreachable)?;
    if answer["succeeded"].as_bool() != Some(true) {
        return Err(conflict(key, write.epoch));
    }
    say!("{}", json!({"key": key, "epoch": write.epoch, "revision": revision_of(&answer["header"]["revision"])}));
    Ok(())
}

/// The largest request a ZooKeeper server takes unless configured otherwise
/// (`jute.maxbuffer`, 0xfffff bytes); it drops the connection of a larger one.
const ZOOKEEPER_MAX_BUFFER: usize = 0xfffff;

fn publish_zookeeper(document: &Input, text: &str, hosts: &[String], path: &str) -> Outcome {
    let failure = |err: zookeeper::Error| match err.class() {
        Class::Lost => unreachable(err),
        _ => Failure::input(format!("{path}: {err}")),
    };
    let mut session = Session::open_any(hosts, 0).map_err(unreachable)?;
    let stored = session.get_data(path, false).map_err(failure)?;
    let version = stored.as_ref().map(|node| node.stat.version);
    let write = checked_write(document, text, path, stored.and_then(zookeeper_document))?;
    let bytes = write.document.as_bytes();
    let written = match version {
        Some(version) => session.set_data(path, bytes, version).map(|stat| stat.mzxid).map_err(|err| {
            match err.class() {
                Class::Conflict | Class::Absent => conflict(path, write.epoch), // changed, or deleted
                _ => failure(err),
            }
        }),
        None => session.create(path, bytes).map_err(|err| match err.class() {
            Class::Conflict => conflict(path, write.epoch), // created meanwhile
            Class::Absent => Failure::input(format!("{path}: its parent node does not exist (create it first)")),
            _ => failure(err),
        }),
    };
    let revision = written.map_err(|mut failure| {
        if failure.code == EXIT_UNREACHABLE && bytes.len() > ZOOKEEPER_MAX_BUFFER {
            failure.message += &format!(
                " (the document is {} bytes; ZooKeeper takes at most jute.maxbuffer, 1 MiB unless configured)",
                bytes.len()
            );
        }
        failure
    })?;
    session.close();
    say!("{}", json!({"path": path, "epoch": write.epoch, "revision": revision}));
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

/// `shardroute serve`: follows `source` and serves its last good document over HTTP
/// (`GET`, any path): a strong ETag per epoch, `304` on `If-None-Match`, and long polls
/// (`Prefer: wait=N`, up to 30 s) held until the document changes. The follower runs on its
/// own thread; the HTTP side is [`crate::serve`] (hyper on one tokio thread), with at most
/// `max_connections` connections open at once.
pub fn serve(source: Source, listen: &str, max_connections: usize) -> Outcome {
    if max_connections == 0 {
        return Err(Failure::input("--max-connections must be at least 1"));
    }
    let runtime = crate::serve::runtime().map_err(|err| Failure::input(format!("serve: {err}")))?;
    // The listener is made inside the runtime (tokio registers it with the runtime's reactor).
    let listener = runtime.block_on(async { crate::serve::bind(listen) }).map_err(Failure::input)?;
    let address = listener.local_addr().map_err(|err| Failure::input(err.to_string()))?;
    let (current, served) = tokio::sync::watch::channel(None);
    std::thread::Builder::new()
        .name("follower".into())
        .spawn(move || follow_for_serve(&source, &current))
        .map_err(|err| Failure::input(format!("serve: cannot start the follower: {err}")))?;
    say!("{}", json!({"event": "listening", "url": format!("http://{address}/")}));
    runtime.block_on(crate::serve::run(listener, served, max_connections));
    Ok(())
}

/// The follower behind `serve`: each installed document replaces the one served.
fn follow_for_serve(source: &Source, current: &crate::serve::Current) {
    let mut follower = Follower::new(FollowerConfig::default());
    follow(source, &mut follower, &mut |event| {
        match event {
            Event::Installed(follower) => {
                let router = follower.router().expect("installed");
                let tag = format!("\"epoch-{}\"", router.epoch());
                match tag.parse() {
                    Ok(tag) => {
                        let body = bytes::Bytes::from(router.to_json());
                        current.send_replace(Some(Arc::new(crate::serve::Document { body, tag })));
                        eprintln!("shardroute: serving epoch {}", router.epoch());
                    }
                    Err(_) => eprintln!("shardroute: epoch {}: not an ETag", router.epoch()),
                }
            }
            Event::Refused(error) => eprintln!("shardroute: refused ({}): {}", error.code(), error.message()),
            Event::Lost { why, retry } => {
                eprintln!("shardroute: {} lost: {why}; again in {} ms", source.name(), retry.as_millis())
            }
        }
        true
    });
}
