//! `publish`, `watch` and `serve`: a topology kept in etcd (its v3 JSON gateway), in a
//! ZooKeeper node or served over HTTP, followed and published with the core's follower
//! deciding ([`shardroute::session::Follower`]: which document to install, which to
//! refuse, how long to wait after a lost source, what a compare-and-swap write must be).
//! etcd is the core's source session end to end (requests, codec, member rotation,
//! deadlines, auth, `publish` and its repair), carried by [`crate::source`], and so is an
//! HTTP source (the core's HTTP session: its polls, ETags, deadlines and backoff). This
//! module only talks ZooKeeper ([`crate::zookeeper`]), sleeps and prints.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shardroute::session::source::{Action, SourceError};
use shardroute::session::{Follower, FollowerConfig, Offered, Publish};

use crate::input::{Failure, Input, Outcome};
use crate::source::Driver;
use crate::wire::Url;
use crate::zookeeper::{self, Class, Session};

/// Exit code: someone wrote the key (or node) between `publish`'s read and its write.
const EXIT_CONFLICT: u8 = 3;
/// Exit code: the source could not be reached.
const EXIT_UNREACHABLE: u8 = 4;

/// Where a topology comes from.
pub enum Source {
    /// A key of etcd's v3 JSON gateway, on any of its members (`http://` or `https://`
    /// URLs, as the core's etcd session takes them).
    Etcd { members: Vec<String>, key: String, options: EtcdOptions },
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
    pub etcd_options: EtcdFlags,
}

/// etcd's TLS files and user (`--etcd-ca`, `--etcd-cert`, `--etcd-key`, `--etcd-user`,
/// `--etcd-password`).
#[derive(Default)]
pub struct EtcdFlags {
    pub tls: crate::tls::Files,
    pub user: Option<String>,
    pub password: Option<String>,
    pub request_timeout_ms: Option<u64>,
    pub idle_ms: Option<u64>,
}

/// etcd's TLS config (made once), and the session's fields the flags give.
pub struct EtcdOptions {
    tls: Arc<rustls::ClientConfig>,
    fields: serde_json::Map<String, Value>,
}

impl EtcdOptions {
    /// The core's etcd session config for `members` (following `key`, if given).
    fn config(&self, members: &[String], key: Option<&str>) -> Value {
        let mut config = self.fields.clone();
        config.insert("source".into(), json!("etcd"));
        config.insert("members".into(), json!(members));
        if let Some(key) = key {
            config.insert("key".into(), json!(key));
        }
        Value::Object(config)
    }
}

impl Source {
    /// The source the flags name (`watch`, `serve`: etcd, ZooKeeper or HTTP).
    pub fn new(flags: SourceFlags) -> Outcome<Source> {
        match flags {
            SourceFlags { http: Some(http), etcd: None, key: None, zookeeper: None, path: None, .. } => {
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
            SourceFlags { etcd: Some(etcd), key: Some(key), zookeeper: None, path: None, http: None, etcd_options } => {
                let members: Vec<String> = etcd.split(',').map(|url| url.trim().to_string()).collect();
                let EtcdFlags { tls, user, password, request_timeout_ms, idle_ms } = etcd_options;
                let fields = [
                    ("user", user.map(Value::from)),
                    ("password", password.map(Value::from)),
                    ("request_timeout_ms", request_timeout_ms.map(Value::from)),
                    ("idle_ms", idle_ms.map(Value::from)),
                ];
                let fields = fields.into_iter().filter_map(|(name, value)| Some((name.to_string(), value?))).collect();
                let options = crate::tls::config(&tls).map(|tls| EtcdOptions { tls, fields });
                // The core checks the members, the key and the user now, not at the first read.
                let checked = options.and_then(|options| {
                    shardroute::session::SourceSession::from_config(&options.config(&members, Some(&key)))
                        .map(|_| options)
                        .map_err(|err| format!("{}: {}", err.code(), err.message()))
                });
                Some(checked.map(|options| Source::Etcd { members, key, options }).map_err(Failure::input))
            }
            SourceFlags { zookeeper: Some(hosts), path: Some(path), etcd: None, key: None, http: None, .. } => {
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
            Source::Etcd { members, key, .. } => format!("etcd {} key {key}", members.join(",")),
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
pub fn follow(source: &Source, each: &mut dyn FnMut(Event<'_>) -> bool) {
    match source {
        Source::Etcd { members, key, options } => {
            follow_session(&options.config(members, Some(key)), &options.tls, each)
        }
        Source::Http { url } => follow_http(url, each),
        Source::ZooKeeper { .. } => follow_connections(source, each),
    }
}

/// Follows with the core's source session (etcd), carried by [`Driver`]: each document
/// the session offered, and each loss, handed to `each`.
fn follow_session(config: &Value, tls: &Arc<rustls::ClientConfig>, each: &mut dyn FnMut(Event<'_>) -> bool) {
    let mut driver = match Driver::new(config, tls.clone()) {
        Ok(driver) => driver,
        Err(err) => {
            // Checked when the source was made ([`Source::new`]): not reached.
            each(Event::Lost { why: format!("{}: {}", err.code(), err.message()), retry: Duration::ZERO });
            return;
        }
    };
    driver.follow(&mut |session, action, now| match action {
        Action::Offered { offered: Offered::Installed { .. }, .. } => {
            session.follower().is_none_or(|follower| each(Event::Installed(follower)))
        }
        Action::Offered { offered: Offered::Refused(error), .. } => each(Event::Refused(error)),
        Action::Lost { error, retry_at } => {
            let retry = Duration::from_millis(retry_at.saturating_sub(now));
            each(Event::Lost { why: source_error(&error), retry })
        }
        _ => true,
    });
}

/// A source session's error as a line says it.
fn source_error(error: &SourceError) -> String {
    match error.status {
        Some(status) => format!("{} (HTTP {status}): {}", error.code, error.message),
        None => format!("{}: {}", error.code, error.message),
    }
}

/// Follows ZooKeeper: each read offered to the core's follower, the next member after one
/// is lost, as long as the follower says.
fn follow_connections(source: &Source, each: &mut dyn FnMut(Event<'_>) -> bool) {
    let mut follower = Follower::new(FollowerConfig::default());
    let follower = &mut follower;
    let start = Instant::now();
    let mut member = 0;
    // ZooKeeper: the largest zxid seen, told to each member (one behind it refuses us).
    let mut zxid_seen = 0;
    loop {
        let result = match source {
            Source::Etcd { .. } | Source::Http { .. } => return follow(source, each),
            Source::ZooKeeper { hosts, path } => {
                follow_zookeeper(&hosts[member % hosts.len()], path, &mut zxid_seen, follower, start, each)
            }
        };
        match result {
            Ok(Stop) => return,
            Err(why) => {
                member += 1; // ZooKeeper: the next member
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

/// How often a quiet ZooKeeper session is pinged (or a third of its timeout when shorter).
// decisions: ok (ZooKeeper's ping: not a core session yet, issue 35)
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

/// Follows an HTTP source with the core's HTTP session (`{"source": "http", "url"}`: its
/// requests, `If-None-Match` and long polls, deadlines, poll schedule and backoff),
/// carried by [`Driver`] as etcd's session is.
fn follow_http(url: &Url, each: &mut dyn FnMut(Event<'_>) -> bool) {
    let config = json!({"source": "http", "url": format!("http://{}{}", url.host_port(), url.path)});
    match crate::tls::config(&crate::tls::Files::default()) {
        Ok(tls) => follow_session(&config, &tls, each),
        Err(why) => {
            each(Event::Lost { why, retry: Duration::ZERO });
        }
    }
}

// -- the commands ---------------------------------------------------------------------------

/// `shardroute publish`: checks `document` with the core's follower over what the store
/// holds (valid, epoch = stored + 1), then writes it with a compare-and-swap on what was
/// read: etcd's `mod_revision`; ZooKeeper's node version, or a create when there is no node.
/// With `replace` (etcd), a stored document that followers refuse is replaced by one
/// whose epoch is above every one they may hold.
pub fn publish(document: &Input, target: &Source, replace: bool) -> Outcome {
    let text =
        String::from_utf8(document.read()?).map_err(|_| Failure::input(format!("{}: not UTF-8", document.name())))?;
    match target {
        Source::Etcd { members, key, options } => publish_etcd(&text, members, key, options, replace),
        Source::ZooKeeper { .. } if replace => Err(Failure::input("--replace: etcd only (not ZooKeeper yet)")),
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

/// etcd: the core session's `publish` call (the read, the follower's check, the
/// compare-and-swap, the read-back of an outcome the transport left unknown; with
/// `replace`, the repair).
fn publish_etcd(text: &str, members: &[String], key: &str, options: &EtcdOptions, replace: bool) -> Outcome {
    let refused = |err: shardroute::Error| Failure::input(format!("{}: {}", err.code(), err.message()));
    let mut driver = Driver::new(&options.config(members, None), options.tls.clone()).map_err(refused)?;
    let op = json!({"op": "publish", "key": key, "document": text, "replace": replace});
    let written = driver.call(&op).map_err(refused)?.map_err(|error| {
        let message = format!("{key}: {}", source_error(&error));
        match error.code {
            "conflict" => Failure { code: EXIT_CONFLICT, message },
            "unreachable" | "http" | "malformed" | "closed" | "idle" => unreachable(message),
            _ => Failure::input(message), // the follower's refusal, a refused user or password
        }
    })?;
    // The session writes its u64s as decimal strings; this line prints them as numbers.
    let number =
        |value: &Value| value.as_str().and_then(|text| text.parse::<u64>().ok()).map_or(Value::Null, Value::from);
    say!("{}", json!({"key": key, "epoch": number(&written["epoch"]), "revision": number(&written["revision"])}));
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
    let mut seen = 0u64;
    follow(source, &mut |event| match event {
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
    follow(source, &mut |event| {
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
