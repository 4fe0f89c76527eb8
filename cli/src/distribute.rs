//! `publish`, `watch` and `serve`: a topology kept in etcd (its v3 JSON gateway), in a
//! ZooKeeper node or served over HTTP, followed and published with the core's follower
//! deciding ([`shardroute::session::Follower`]: which document to install, which to
//! refuse, how long to wait after a lost source, what a compare-and-swap write must be).
//! Each is the core's source session end to end (etcd's and ZooKeeper's requests, codec,
//! member rotation, deadlines, auth, `publish` and its repair; HTTP's polls, ETags,
//! deadlines and backoff), carried by [`crate::source`]. This module only makes the
//! session's config from the flags and prints.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use shardroute::session::source::{Action, SourceError};
use shardroute::session::{Follower, Offered};

use crate::input::{Failure, Input, Outcome};
use crate::source::Driver;
use crate::wire::Url;

/// Exit code: someone wrote the key (or node) between `publish`'s read and its write.
const EXIT_CONFLICT: u8 = 3;
/// Exit code: the source could not be reached.
const EXIT_UNREACHABLE: u8 = 4;

/// Where a topology comes from.
pub enum Source {
    /// A key of etcd's v3 JSON gateway, on any of its members (`http://` or `https://`
    /// URLs, as the core's etcd session takes them).
    Etcd { members: Vec<String>, key: String, options: SessionOptions },
    /// A node of a ZooKeeper ensemble, on any of its members (`host:port`, as the core's
    /// ZooKeeper session takes them).
    ZooKeeper { members: Vec<String>, path: String, options: SessionOptions },
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
    pub zookeeper_options: ZooKeeperFlags,
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

/// ZooKeeper's digest user and session timeout (`--zookeeper-user`,
/// `--zookeeper-password`, `--zookeeper-session-ms`).
#[derive(Default)]
pub struct ZooKeeperFlags {
    pub user: Option<String>,
    pub password: Option<String>,
    pub session_timeout_ms: Option<u64>,
}

/// The TLS config (made once; etcd's `https://` members), and the session's fields the
/// flags give (the source, its members, and the rest as the core names them).
pub struct SessionOptions {
    tls: Arc<rustls::ClientConfig>,
    fields: serde_json::Map<String, Value>,
}

impl SessionOptions {
    /// `source` with `members`, the flags' `fields` (those given), and TLS from `tls`;
    /// checked by the core now, not at the first read (`with` names what it follows).
    fn new(
        source: &str,
        members: &[String],
        fields: Vec<(&str, Option<Value>)>,
        tls: &crate::tls::Files,
        with: (&str, &str),
    ) -> Result<SessionOptions, String> {
        let mut fields: serde_json::Map<String, Value> =
            fields.into_iter().filter_map(|(name, value)| Some((name.to_string(), value?))).collect();
        fields.insert("source".into(), json!(source));
        fields.insert("members".into(), json!(members));
        let options = SessionOptions { tls: crate::tls::config(tls)?, fields };
        shardroute::session::SourceSession::from_config(&options.config(Some(with)))
            .map(|_| options)
            .map_err(|err| format!("{}: {}", err.code(), err.message()))
    }

    /// The core's session config (following `key` or `path`, if given: `(name, value)`).
    fn config(&self, follow: Option<(&str, &str)>) -> Value {
        let mut config = self.fields.clone();
        if let Some((name, value)) = follow {
            config.insert(name.into(), json!(value));
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
            SourceFlags {
                etcd: Some(etcd),
                key: Some(key),
                zookeeper: None,
                path: None,
                http: None,
                etcd_options,
                ..
            } => {
                let members: Vec<String> = etcd.split(',').map(|url| url.trim().to_string()).collect();
                let EtcdFlags { tls, user, password, request_timeout_ms, idle_ms } = etcd_options;
                let fields = vec![
                    ("user", user.map(Value::from)),
                    ("password", password.map(Value::from)),
                    ("request_timeout_ms", request_timeout_ms.map(Value::from)),
                    ("idle_ms", idle_ms.map(Value::from)),
                ];
                let options = SessionOptions::new("etcd", &members, fields, &tls, ("key", &key));
                Some(options.map(|options| Source::Etcd { members, key, options }).map_err(Failure::input))
            }
            SourceFlags {
                zookeeper: Some(hosts),
                path: Some(path),
                etcd: None,
                key: None,
                http: None,
                zookeeper_options,
                ..
            } => {
                let members: Vec<String> = hosts.split(',').map(|host| host.trim().to_string()).collect();
                let ZooKeeperFlags { user, password, session_timeout_ms } = zookeeper_options;
                let fields = vec![
                    ("user", user.map(Value::from)),
                    ("password", password.map(Value::from)),
                    ("session_timeout_ms", session_timeout_ms.map(Value::from)),
                ];
                let no_tls = crate::tls::Files::default();
                let options = SessionOptions::new("zookeeper", &members, fields, &no_tls, ("path", &path));
                Some(options.map(|options| Source::ZooKeeper { members, path, options }).map_err(Failure::input))
            }
            _ => None,
        }
    }

    fn name(&self) -> String {
        match self {
            Source::Etcd { members, key, .. } => format!("etcd {} key {key}", members.join(",")),
            Source::ZooKeeper { members, path, .. } => format!("zookeeper {} path {path}", members.join(",")),
            Source::Http { url } => format!("http://{}:{}{}", url.host, url.port, url.path),
        }
    }
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
        Source::Etcd { key, options, .. } => follow_session(&options.config(Some(("key", key))), &options.tls, each),
        Source::ZooKeeper { path, options, .. } => {
            follow_session(&options.config(Some(("path", path))), &options.tls, each)
        }
        Source::Http { url } => follow_http(url, each),
    }
}

/// Follows with the core's source session (etcd, ZooKeeper, HTTP), carried by [`Driver`]: each document
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

/// `shardroute publish`: the core session's `publish` call (the read, the check by a
/// fresh follower: valid, epoch = stored + 1; the compare-and-swap write on what was read:
/// etcd's `mod_revision`, ZooKeeper's node version or a create; the read-back of an
/// outcome the transport left unknown). With `replace`, a stored document that followers
/// refuse is replaced by one whose epoch is above every one they may hold.
pub fn publish(document: &Input, target: &Source, replace: bool) -> Outcome {
    let text =
        String::from_utf8(document.read()?).map_err(|_| Failure::input(format!("{}: not UTF-8", document.name())))?;
    let (options, op, name) = match target {
        Source::Etcd { key, options, .. } => {
            (options, json!({"op": "publish", "key": key, "document": text, "replace": replace}), ("key", key))
        }
        Source::ZooKeeper { path, options, .. } => {
            (options, json!({"op": "publish", "path": path, "document": text, "replace": replace}), ("path", path))
        }
        Source::Http { .. } => return Err(Failure::input("publish writes to etcd or ZooKeeper, not over HTTP")),
    };
    let refused = |err: shardroute::Error| Failure::input(format!("{}: {}", err.code(), err.message()));
    let mut driver = Driver::new(&options.config(None), options.tls.clone()).map_err(refused)?;
    let written = driver.call(&op).map_err(refused)?.map_err(|error| {
        let message = format!("{}: {}", name.1, source_error(&error));
        match error.code {
            "conflict" => Failure { code: EXIT_CONFLICT, message },
            "unreachable" | "http" | "malformed" | "closed" | "idle" => Failure { code: EXIT_UNREACHABLE, message },
            _ => Failure::input(message), // the follower's refusal, a refused user or password
        }
    })?;
    // The session writes its u64s as decimal strings; this line prints them as numbers.
    let number =
        |value: &Value| value.as_str().and_then(|text| text.parse::<u64>().ok()).map_or(Value::Null, Value::from);
    let mut line = json!({"epoch": number(&written["epoch"]), "revision": number(&written["revision"])});
    line[name.0] = json!(name.1);
    say!("{line}");
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
