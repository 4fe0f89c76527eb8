//! `publish`, `watch` and `serve` against a real etcd (Debian's etcd-server, one member on
//! 127.0.0.1) and a real ZooKeeper (Debian's zookeeper, one standalone server on
//! 127.0.0.1), each started here in a temp dir and killed by PID when the test ends, also
//! on failure; `serve` answered over plain TCP as any HTTP client would. The tests that
//! start a server are named `etcd_*` and `zookeeper_*` (`make check` skips them). Their
//! ports come from `ports` (reserved outside the ephemeral range, a fresh start while one is
//! taken); `serve` binds port 0 itself and says its URL.

mod ports;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const CLI: &str = env!("CARGO_BIN_EXE_shardroute");

/// `127.0.0.1:port` of a reserved port nothing listens on (held while `Reserved` lives).
fn dead_member(reserved: &ports::Reserved, index: usize) -> String {
    format!("127.0.0.1:{}", reserved.ports[index])
}

/// The end of a server's log file (for an error: `ports::start_on_ports` reads it).
fn log_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let tail = text.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
    match text.lines().find(|line| ports::address_in_use(line)) {
        Some(taken) if !ports::address_in_use(&tail) => format!("{taken}\n...\n{tail}"),
        _ => tail,
    }
}

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Etcd {
    url: String,
    _process: Killed,
    _dir: tempfile::TempDir,
    _ports: ports::Reserved,
}

/// One etcd member on two reserved ports (fresh ones, and a fresh data dir, while one is taken).
fn etcd() -> Etcd {
    let ((url, process, dir), reserved) = ports::start_on_ports(2, |ports| {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("http://127.0.0.1:{}", ports[0]);
        let peer_url = format!("http://127.0.0.1:{}", ports[1]);
        let log_path = dir.path().join("etcd.log");
        let log = std::fs::File::create(&log_path).unwrap();
        let child = Command::new("etcd")
            .args(["--name", "cli", "--data-dir"])
            .arg(dir.path().join("data"))
            .args(["--listen-client-urls", &url, "--advertise-client-urls", &url])
            .args(["--listen-peer-urls", &peer_url, "--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &format!("cli={peer_url}"), "--log-level", "error", "--logger", "zap"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("needs etcd (apt-get install -y etcd-server; scripts/setup.sh installs it)");
        let mut process = Killed(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !get(&format!("{url}/health"), &[])
            .is_some_and(|(status, _, body)| status == 200 && body.contains("true"))
        {
            if process.0.try_wait().unwrap().is_some() {
                return Err(format!("etcd exited:\n{}", log_of(&log_path)));
            }
            if Instant::now() > deadline {
                return Err(format!("etcd did not answer:\n{}", log_of(&log_path)));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok((url, process, dir))
    });
    Etcd { url, _process: process, _dir: dir, _ports: reserved }
}

/// An answer: status, headers (names lowercased), body.
type Answer = (u16, Vec<(String, String)>, String);

/// A GET over a plain TCP connection (None when nothing answers).
fn get(url: &str, headers: &[(&str, &str)]) -> Option<Answer> {
    let rest = url.strip_prefix("http://")?;
    let (authority, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
    let mut stream = TcpStream::connect(authority).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(40))).ok()?;
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let mut lines = head.lines();
    let status = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some((status, headers, body.to_string()))
}

fn document(epoch: u64, nodes: usize) -> String {
    let nodes: Vec<String> = (0..nodes).map(|i| format!(r#"{{"id": "n{i}"}}"#)).collect();
    format!(
        r#"{{"format": "shardroute/1", "epoch": {epoch}, "nodes": [{}], "strategy": {{"type": "jump"}}}}"#,
        nodes.join(",")
    )
}

fn publish(etcd: &str, key: &str, text: &str) -> Output {
    publish_to(&["--etcd", etcd, "--key", key], text)
}

fn publish_to(store: &[&str], text: &str) -> Output {
    let mut child = Command::new(CLI)
        .args(["publish", "-"])
        .args(store)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `shardroute serve` of `source` on a port it binds itself (port 0) and prints: the process
/// (killed on drop) and its URL.
fn serve(source: &[&str]) -> (Killed, String) {
    let serve = Command::new(CLI)
        .arg("serve")
        .args(source)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut serve = Killed(serve);
    let listening = BufReader::new(serve.0.stdout.take().unwrap()).lines().next().unwrap().unwrap();
    let url = listening.split(r#""url":""#).nth(1).unwrap().trim_end_matches(['"', '}']).to_string();
    (serve, url)
}

/// The first `200` of `url` (`503` until `serve` has read its first document), or the last
/// answer after 10 s.
fn first_document(url: &str) -> (u16, Vec<(String, String)>, String) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = get(url, &[]).unwrap();
        if answer.0 == 200 || Instant::now() > deadline {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn etcd_publish_writes_only_what_a_follower_would_install() {
    let etcd = etcd();
    let first = publish(&etcd.url, "/t/a", &document(1, 3));
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert!(text(&first.stdout).contains(r#""epoch":1"#), "{}", text(&first.stdout));
    for epoch in [1, 3, 0] {
        let refused = publish(&etcd.url, "/t/a", &document(epoch, 3));
        assert_eq!(refused.status.code(), Some(2));
        assert!(text(&refused.stderr).contains("stale_epoch"), "{}", text(&refused.stderr));
    }
    for (bad, code) in [
        (
            r#"{"format": "shardroute/1", "epoch": 2, "nodes": [{"id": "a"}], "strategy": {"type": "nope"}}"#,
            "invalid_topology",
        ),
        (r#"{"format": "shardroute/1", "epoch": 2, "nodes": [], "strategy": {"type": "jump"}}"#, "no_nodes"),
    ] {
        let refused = publish(&etcd.url, "/t/a", bad);
        assert_eq!(refused.status.code(), Some(2));
        assert!(text(&refused.stderr).contains(code), "{}", text(&refused.stderr));
    }
    // A member going away first in the list (503, gRPC code 14): left for the next one,
    // by publish and by watch.
    let members = format!("{},{}", unavailable_member(), etcd.url);
    let second = publish(&members, "/t/a", &document(2, 4));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert!(text(&second.stdout).contains(r#""epoch":2"#));
    let held = Command::new(CLI).args(["watch", "--etcd", &members, "--key", "/t/a", "--count", "1"]).output().unwrap();
    assert_eq!(epoch_of(text(&held.stdout).trim()), 2, "{}", text(&held.stderr));
}

/// Reads one request, head and body (by its Content-Length), so that closing the
/// connection after the answer does not reset it.
fn read_request(stream: &mut TcpStream) {
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    while let Ok(read @ 1..) = stream.read(&mut buffer) {
        request.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|line| line.strip_prefix("content-length:"));
            if body.len() >= length.and_then(|length| length.trim().parse().ok()).unwrap_or(0) {
                return;
            }
        }
    }
}

/// An etcd member shutting down, as its gateway answers every request: 503 with gRPC
/// code 14 (UNAVAILABLE). Its URL; it answers until the test process ends.
fn unavailable_member() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().map_while(Result::ok) {
            read_request(&mut stream);
            let body = r#"{"error":"etcdserver: server stopped","code":14,"message":"etcdserver: server stopped"}"#;
            let answer = format!(
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

/// Standard base64 (how etcd's gateway takes keys and values).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            out.push(if i <= chunk.len() { ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

/// Stores `value` at `key` behind the CLI's back (as a careless writer would), with
/// etcd's gateway over a plain TCP connection.
fn etcd_put(etcd: &str, key: &str, value: &str) {
    let authority = etcd.strip_prefix("http://").unwrap();
    let body = format!(r#"{{"key": "{}", "value": "{}"}}"#, base64(key.as_bytes()), base64(value.as_bytes()));
    let mut stream = TcpStream::connect(authority).unwrap();
    let request = format!(
        "POST /v3/kv/put HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

fn publish_replace(etcd: &str, key: &str, text: &str) -> Output {
    publish_to(&["--etcd", etcd, "--key", key, "--replace"], text)
}

#[test]
fn etcd_publish_replace_repairs_a_stored_document_that_followers_refuse() {
    let etcd = etcd();
    for epoch in [1, 2] {
        assert_eq!(publish(&etcd.url, "/t/r", &document(epoch, 3)).status.code(), Some(0));
    }
    // Not a document at all: followers refuse it (and keep epoch 2, the last they could install).
    etcd_put(&etcd.url, "/t/r", "{not json");
    let watch = Command::new(CLI)
        .args(["watch", "--etcd", &etcd.url, "--key", "/t/r", "--count", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut watch = Killed(watch);
    let mut refusals = BufReader::new(watch.0.stderr.take().unwrap()).lines();
    let refusal = refusals.next().unwrap().unwrap();
    assert!(refusal.contains("refused (invalid_topology)"), "{refusal}");

    // Without --replace: refused as before the repair existed (exit 2), and nothing written.
    let refused = publish(&etcd.url, "/t/r", &document(3, 4));
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("not overwritten; publish with replace"), "{}", text(&refused.stderr));
    // With it, the epoch must be above the one followers may hold (2, read from the key's history).
    let low = publish_replace(&etcd.url, "/t/r", &document(2, 4));
    assert_eq!(low.status.code(), Some(2), "{}", text(&low.stderr));
    assert!(text(&low.stderr).contains("stale_epoch"), "{}", text(&low.stderr));
    let repaired = publish_replace(&etcd.url, "/t/r", &document(3, 4));
    assert_eq!(repaired.status.code(), Some(0), "{}", text(&repaired.stderr));
    let written: serde_json::Value = serde_json::from_slice(&repaired.stdout).unwrap();
    assert_eq!((written["key"].as_str(), written["epoch"].as_u64()), (Some("/t/r"), Some(3)), "{written}");
    assert!(written["revision"].as_u64().is_some(), "{written}");

    // The follower that refused the bad document installs the repair.
    let line = BufReader::new(watch.0.stdout.take().unwrap()).lines().next().unwrap().unwrap();
    assert_eq!(epoch_of(&line), 3, "{line}");
    assert!(line.contains(r#""nodes":4"#), "{line}");
    assert!(watch.0.wait().unwrap().success());
    // And publishing goes on as usual from there.
    assert_eq!(publish(&etcd.url, "/t/r", &document(4, 4)).status.code(), Some(0));

    // A refused document that says its epoch (7, no nodes): the repair goes above it too.
    etcd_put(&etcd.url, "/t/r", r#"{"format": "shardroute/1", "epoch": 7, "nodes": [], "strategy": {"type": "jump"}}"#);
    let low = publish_replace(&etcd.url, "/t/r", &document(5, 2));
    assert_eq!(low.status.code(), Some(2), "{}", text(&low.stderr));
    assert!(text(&low.stderr).contains("above 7"), "{}", text(&low.stderr));
    let repaired = publish_replace(&etcd.url, "/t/r", &document(8, 2));
    assert_eq!(repaired.status.code(), Some(0), "{}", text(&repaired.stderr));

    // A key whose every value was refused: what followers hold cannot be told, no repair.
    etcd_put(&etcd.url, "/t/garbage", "{not json");
    let unknown = publish_replace(&etcd.url, "/t/garbage", &document(1, 2));
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown.stderr));
    assert!(text(&unknown.stderr).contains("invalid_argument"), "{}", text(&unknown.stderr));
}

/// A real etcd serving https only, client certificates required, authentication on
/// (`scripts/etcd_secure.py`, stopped by its PID when dropped): its JSON info.
struct SecureEtcd(serde_json::Value);

const SECURE_ETCD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/etcd_secure.py");

impl SecureEtcd {
    fn start(token_ttl_s: u64) -> SecureEtcd {
        let out = Command::new("python3")
            .args([SECURE_ETCD, "start", "--json", "--auth-token-ttl", &token_ttl_s.to_string()])
            .output()
            .expect("needs python3");
        assert!(out.status.success(), "etcd_secure.py start: {}", text(&out.stderr));
        SecureEtcd(serde_json::from_slice(&out.stdout).unwrap())
    }

    fn info(&self, name: &str) -> String {
        self.0[name].as_str().unwrap_or_else(|| panic!("no {name} in {}", self.0)).to_string()
    }

    /// `--etcd URL --key KEY` and the TLS files (the password is for the caller to give).
    fn flags(&self, key: &str) -> Vec<String> {
        let flags = [("--etcd", self.info("url")), ("--key", key.into()), ("--etcd-ca", self.info("ca_file"))];
        let files = [("--etcd-cert", self.info("cert_file")), ("--etcd-key", self.info("key_file"))];
        let user = [("--etcd-user", self.info("user"))];
        flags.into_iter().chain(files).chain(user).flat_map(|(flag, value)| [flag.to_string(), value]).collect()
    }
}

impl Drop for SecureEtcd {
    fn drop(&mut self) {
        let _ = Command::new("python3").args([SECURE_ETCD, "stop", &self.0["pid"].to_string()]).output();
    }
}

/// `shardroute` with `command`, `flags` and `more`.
fn args(command: &[&str], flags: &[String], more: &[&str]) -> Vec<String> {
    let strings = |args: &[&str]| args.iter().map(|arg| arg.to_string()).collect::<Vec<_>>();
    [strings(command), flags.to_vec(), strings(more)].concat()
}

/// The CLI with `args`, its password in `SHARDROUTE_ETCD_PASSWORD` (out of `ps`), stdout
/// piped.
fn spawn_secure(args: &[String], password: &str) -> Child {
    let mut command = Command::new(CLI);
    command.args(args).env("SHARDROUTE_ETCD_PASSWORD", password);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// [`spawn_secure`] with `stdin` as its input, to its end.
fn secure(args: &[String], password: &str, stdin: &str) -> Output {
    let mut child = spawn_secure(args, password);
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn etcd_over_tls_with_client_certificates_and_authentication() {
    let etcd = SecureEtcd::start(2); // tokens expire after 2 s unused
    let password = etcd.info("password");
    let flags = etcd.flags("/t/s");
    let first = secure(&args(&["publish", "-"], &flags, &[]), &password, &document(1, 3));
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert!(text(&first.stdout).contains(r#""epoch":1"#), "{}", text(&first.stdout));

    // watch: the epoch held, then the next one, published after the watch's token expired:
    // the idle read at 4 s (the token unused for over 2 s) authenticates again. (An event is
    // offered as it comes, with no read after it, since the watch has no companions.)
    let mut watch =
        Killed(spawn_secure(&args(&["watch"], &flags, &["--count", "2", "--etcd-idle-ms", "4000"]), &password));
    let mut lines = BufReader::new(watch.0.stdout.take().unwrap()).lines();
    assert_eq!(epoch_of(&lines.next().unwrap().unwrap()), 1);
    std::thread::sleep(Duration::from_secs(5));
    // The password as a flag works too (the environment is the one to use: `ps` shows flags).
    let second = secure(&args(&["publish", "-"], &flags, &["--etcd-password", &password]), "", &document(2, 4));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(epoch_of(&lines.next().unwrap().unwrap()), 2);
    assert!(watch.0.wait().unwrap().success());
    let log = std::fs::read_to_string(etcd.info("log_file")).unwrap();
    assert!(log.contains("invalid auth token"), "the watch's token expired and was renewed:\n{log}");

    // serve follows it the same way.
    let mut serve = Killed(spawn_secure(&args(&["serve"], &flags, &["--listen", "127.0.0.1:0"]), &password));
    let listening = BufReader::new(serve.0.stdout.take().unwrap()).lines().next().unwrap().unwrap();
    let url = listening.split(r#""url":""#).nth(1).unwrap().trim_end_matches(['"', '}']).to_string();
    let (status, _, body) = first_document(&url);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""epoch":2"#), "{body}");

    // Refused: a wrong password (exit 2), a server not signed by a CA given (exit 4), no
    // client certificate (exit 4); nothing written.
    let wrong = secure(&args(&["publish", "-"], &flags, &[]), "wrong", &document(3, 4));
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong.stderr));
    assert!(text(&wrong.stderr).contains("unauthenticated"), "{}", text(&wrong.stderr));
    let without = |dropped: &[&str]| -> Vec<String> {
        let kept = flags.chunks(2).filter(|pair| !dropped.contains(&pair[0].as_str())).flatten().cloned();
        args(&["publish", "-"], &kept.collect::<Vec<_>>(), &[])
    };
    let no_ca = secure(&without(&["--etcd-ca"]), &password, &document(3, 4));
    assert_eq!(no_ca.status.code(), Some(4), "{}", text(&no_ca.stderr));
    assert!(text(&no_ca.stderr).contains("certificate"), "{}", text(&no_ca.stderr));
    let no_client = secure(&without(&["--etcd-cert", "--etcd-key"]), &password, &document(3, 4));
    assert_eq!(no_client.status.code(), Some(4), "{}", text(&no_client.stderr));
    let held = secure(&args(&["watch"], &flags, &["--count", "1"]), &password, "");
    assert_eq!(epoch_of(text(&held.stdout).trim()), 2, "{}", text(&held.stderr));
}

#[test]
fn publish_to_nothing_exits_4() {
    let dead = ports::reserve(3); // nothing listens on them
    let out = publish(&format!("http://{}", dead_member(&dead, 0)), "/t", &document(1, 2));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let members = format!("{},{}", dead_member(&dead, 1), dead_member(&dead, 2));
    let out = publish_to(&["--zookeeper", &members, "--path", "/t"], &document(1, 2));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    // A password left in the environment is for `--etcd-user` (`--zookeeper-user`) only: no
    // other command refuses it.
    let etcd = format!("http://{}", dead_member(&dead, 0));
    for store in [["--zookeeper", &members, "--path", "/t"], ["--etcd", &etcd, "--key", "/t"]] {
        let args = args(&["publish", "-"], &[], &store);
        let out = secure(&args, "from the environment", &document(1, 2));
        assert_eq!(out.status.code(), Some(4), "{args:?}: {}", text(&out.stderr));
        let out = publish_with(&store, Some("from the environment"), &document(1, 2));
        assert_eq!(out.status.code(), Some(4), "{store:?}: {}", text(&out.stderr));
    }
}

#[test]
fn etcd_watch_prints_each_epoch_and_serve_serves_it_with_etags_and_long_polls() {
    let etcd = etcd();
    assert_eq!(publish(&etcd.url, "/t/b", &document(1, 3)).status.code(), Some(0));

    // watch (etcd): the epoch held, then each new one.
    let watch = Command::new(CLI)
        .args(["watch", "--etcd", &etcd.url, "--key", "/t/b", "--count", "2"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut watch = Killed(watch);
    let mut lines = BufReader::new(watch.0.stdout.take().unwrap()).lines();
    assert!(lines.next().unwrap().unwrap().contains(r#""epoch":1"#));
    assert_eq!(publish(&etcd.url, "/t/b", &document(2, 4)).status.code(), Some(0));
    let line = lines.next().unwrap().unwrap();
    assert!(line.contains(r#""epoch":2"#) && line.contains(r#""nodes":4"#), "{line}");
    assert!(watch.0.wait().unwrap().success(), "watch --count 2 exits after two epochs");

    // serve: the document with an ETag, 304 for that tag, and a long poll held until
    // the next epoch is published.
    // Two members given, the first of them dead: serve goes on to the live one.
    let dead = ports::reserve(1); // nothing listens on it
    let members = format!("http://{},{}", dead_member(&dead, 0), etcd.url);
    let (_serve, url) = serve(&["--etcd", &members, "--key", "/t/b"]);
    let (status, headers, body) = first_document(&url);
    assert_eq!(status, 200);
    assert!(body.contains(r#""epoch":2"#), "{body}");
    let tag = headers.iter().find(|(n, _)| n == "etag").unwrap().1.clone();
    assert_eq!(get(&url, &[("If-None-Match", &tag)]).unwrap().0, 304);

    let publisher = {
        let etcd = etcd.url.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            publish(&etcd, "/t/b", &document(3, 5))
        })
    };
    let asked = Instant::now();
    let (status, headers, body) = get(&url, &[("If-None-Match", &tag), ("Prefer", "wait=20")]).unwrap();
    assert_eq!(status, 200);
    assert!(body.contains(r#""epoch":3"#), "{body}");
    assert!(asked.elapsed() < Duration::from_secs(5), "held until the change, not the wait");
    assert_ne!(headers.iter().find(|(n, _)| n == "etag").unwrap().1, tag);
    assert_eq!(publisher.join().unwrap().status.code(), Some(0));

    // watch (HTTP), from serve.
    let out = Command::new(CLI).args(["watch", "--http", &url, "--count", "1"]).output().unwrap();
    assert!(text(&out.stdout).contains(r#""epoch":3"#), "{}", text(&out.stdout));
}

#[test]
fn a_source_is_required() {
    let out = Command::new(CLI).args(["watch"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--etcd URL --key KEY, --zookeeper HOSTS --path PATH, or --http URL"));
    let out = Command::new(CLI).args(["publish", "-", "--zookeeper", "127.0.0.1:2181"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--etcd URL --key KEY, or --zookeeper HOSTS --path PATH"));
    for (flag, value) in [("--etcd", "http://127.0.0.1:2379"), ("--http", "http://127.0.0.1:1/")] {
        let out = Command::new(CLI)
            .args(["watch", "--zookeeper", "127.0.0.1:2181", "--path", "/t", flag, value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains("cannot be used with"), "{}", text(&out.stderr));
    }
    // The etcd flags reach the core's session, which checks them before anything is asked.
    let etcd = ["watch", "--etcd", "http://127.0.0.1:2379", "--key", "/t"];
    for (flags, words) in [
        (&["--etcd-timeout-ms", "0"][..], "config.request_timeout_ms"),
        (&["--etcd-idle-ms", "9007199254740993"], "config.idle_ms"),
        (&["--etcd-user", "u"], "--etcd-password"),
        (&["--etcd-cert", "/nonexistent.pem", "--etcd-key", "/nonexistent.pem"], "/nonexistent.pem"),
    ] {
        let out = Command::new(CLI).args(etcd).args(flags).env_remove("SHARDROUTE_ETCD_PASSWORD").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(words), "{flags:?}: {}", text(&out.stderr));
    }
    let out = Command::new(CLI).args(["watch", "--etcd", "ftp://127.0.0.1:2379", "--key", "/t"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    for (hosts, path) in [("127.0.0.1:2181", "t"), ("127.0.0.1:2181", "/t/"), ("127.0.0.1:x", "/t")] {
        let out = Command::new(CLI).args(["watch", "--zookeeper", hosts, "--path", path]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{hosts} {path}");
    }
    // The ZooKeeper flags reach the core's session too, or are refused without --zookeeper.
    let zookeeper = ["watch", "--zookeeper", "127.0.0.1:2181", "--path", "/t"];
    for (flags, words) in [
        (&["--zookeeper-session-ms", "0"][..], "config.session_timeout_ms"),
        (&["--zookeeper-user", "u"], "--zookeeper-password"),
    ] {
        let out =
            Command::new(CLI).args(zookeeper).args(flags).env_remove("SHARDROUTE_ZOOKEEPER_PASSWORD").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(words), "{flags:?}: {}", text(&out.stderr));
    }
    // One store's flags with another source: refused, not ignored.
    for mixed in [
        &["--etcd", "http://127.0.0.1:2379", "--key", "/t", "--zookeeper-session-ms", "1000"][..],
        &["--zookeeper", "127.0.0.1:2181", "--path", "/t", "--etcd-timeout-ms", "1000"],
        &["--http", "http://127.0.0.1:1/", "--zookeeper-session-ms", "1000"],
        &["--http", "http://127.0.0.1:1/", "--etcd-idle-ms", "1000"],
    ] {
        let out = Command::new(CLI).arg("watch").args(mixed).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{mixed:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("cannot be used with"), "{mixed:?}: {}", text(&out.stderr));
    }
}

// -- ZooKeeper ------------------------------------------------------------------------------

/// A standalone ZooKeeper server on a reserved loopback port, its data in a temp dir.
struct ZooKeeper {
    /// `127.0.0.1:port`, as `--zookeeper` takes it.
    hosts: String,
    port: u16,
    process: Option<Killed>,
    dir: tempfile::TempDir,
    _port: ports::Reserved,
}

impl ZooKeeper {
    /// On a reserved port (a fresh one, and a fresh data dir, while it is taken).
    fn new() -> ZooKeeper {
        let ((dir, process), reserved) = ports::start_on_ports(1, |ports| {
            let dir = tempfile::tempdir().unwrap();
            let process = start_zookeeper(dir.path(), ports[0])?;
            Ok((dir, process))
        });
        let port = reserved.ports[0];
        ZooKeeper { hosts: format!("127.0.0.1:{port}"), port, process: Some(process), dir, _port: reserved }
    }

    /// Kills the server and starts it again on the same port and data.
    fn restart(&mut self) {
        drop(self.process.take());
        self.process = Some(start_zookeeper(self.dir.path(), self.port).unwrap_or_else(|message| panic!("{message}")));
    }

    fn signal(&self, signal: &str) {
        let pid = self.process.as_ref().unwrap().0.id().to_string();
        assert!(Command::new("kill").args([signal, &pid]).status().unwrap().success());
    }

    fn publish(&self, path: &str, text: &str) -> Output {
        publish_to(&["--zookeeper", &self.hosts, "--path", path], text)
    }
}

/// Starts the server of Debian's zookeeper package and waits until it answers `ruok` and
/// serves (`ruok` answers before the server takes sessions; `srvr` says when it does); an
/// error with its log when it exits first or does not serve in 20 s.
fn start_zookeeper(dir: &Path, port: u16) -> Result<Killed, String> {
    let config = dir.join("zoo.cfg");
    let log_path = dir.join("zookeeper.log");
    let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path).unwrap();
    std::fs::write(
        &config,
        format!(
            "tickTime=200\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\n\
             admin.enableServer=false\n4lw.commands.whitelist=ruok,srvr\n",
            dir.join("data").display()
        ),
    )
    .unwrap();
    let child = Command::new("java")
        .args(["-Xmx128m", "-cp", "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar"])
        .args(["-Dzookeeper.root.logger=WARN,CONSOLE", "org.apache.zookeeper.server.quorum.QuorumPeerMain"])
        .arg(&config)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("needs ZooKeeper (apt-get install -y zookeeper: java and /usr/share/java/zookeeper.jar)");
    let mut process = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(20);
    let serving = || {
        four_letter_word(port, "ruok").as_deref() == Some("imok")
            && four_letter_word(port, "srvr").is_some_and(|answer| answer.contains("Mode: "))
    };
    while !serving() {
        if process.0.try_wait().unwrap().is_some() {
            // Debian's ZooKeeper logs nothing: a port held by someone else is told by a bind.
            let held = if TcpListener::bind(("127.0.0.1", port)).is_err() {
                format!("127.0.0.1:{port}: address already in use (held by another process)\n")
            } else {
                String::new()
            };
            return Err(format!(
                "ZooKeeper exited (is /usr/share/java/zookeeper.jar there?):\n{held}{}",
                log_of(&log_path)
            ));
        }
        if Instant::now() > deadline {
            return Err(format!("ZooKeeper did not serve in 20 s:\n{}", log_of(&log_path)));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(process)
}

/// The answer to one of ZooKeeper's four-letter words.
fn four_letter_word(port: u16, word: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    stream.write_all(word.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}

/// The epoch of a `watch` line.
fn epoch_of(line: &str) -> u64 {
    let value: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|err| panic!("{line:?}: {err}"));
    value["epoch"].as_u64().unwrap_or_else(|| panic!("no epoch in {line}"))
}

/// `watch` on a ZooKeeper node: its stdout lines and stderr lines, each as they come.
fn watch_zookeeper(hosts: &str, path: &str, count: u64) -> (Killed, mpsc::Receiver<String>, mpsc::Receiver<String>) {
    spawn_lines(&["watch", "--zookeeper", hosts, "--path", path, "--count", &count.to_string()], &[])
}

const LINE_WAIT: Duration = Duration::from_secs(20);

#[test]
fn zookeeper_publish_writes_only_what_a_follower_would_install() {
    let zk = ZooKeeper::new();
    let first = zk.publish("/a", &document(1, 3));
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let written: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!((written["path"].as_str(), written["epoch"].as_u64()), (Some("/a"), Some(1)), "{written}");
    let revision = written["revision"].as_u64().unwrap();
    assert!(revision > 0);

    for epoch in [1, 3, 0] {
        let refused = zk.publish("/a", &document(epoch, 3));
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
        assert!(text(&refused.stderr).contains("stale_epoch"), "{}", text(&refused.stderr));
    }
    let refused =
        zk.publish("/a", r#"{"format": "shardroute/1", "epoch": 2, "nodes": [], "strategy": {"type": "jump"}}"#);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused.stderr).contains("no_nodes"), "{}", text(&refused.stderr));

    // Nothing refused was written: the node holds epoch 1 at the revision of its creation.
    let held =
        Command::new(CLI).args(["watch", "--zookeeper", &zk.hosts, "--path", "/a", "--count", "1"]).output().unwrap();
    let line = text(&held.stdout);
    assert_eq!(epoch_of(line.trim()), 1);
    assert!(line.contains(&format!(r#""revision":{revision}"#)), "{line}");

    // Members in turn: the first is dead, the second takes the write.
    let dead = ports::reserve(1); // nothing listens on it
    let members = format!("{},{}", dead_member(&dead, 0), zk.hosts);
    let second = publish_to(&["--zookeeper", &members, "--path", "/a"], &document(2, 4));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert!(text(&second.stdout).contains(r#""epoch":2"#), "{}", text(&second.stdout));

    // A node whose parents do not exist: they are created (empty), then the node.
    let deep = zk.publish("/no/parent", &document(1, 3));
    assert_eq!(deep.status.code(), Some(0), "{}", text(&deep.stderr));
    let held = Command::new(CLI)
        .args(["watch", "--zookeeper", &zk.hosts, "--path", "/no/parent", "--count", "1"])
        .output()
        .unwrap();
    assert_eq!(epoch_of(text(&held.stdout).trim()), 1, "{}", text(&held.stderr));
}

#[test]
fn zookeeper_watch_prints_each_epoch_as_it_is_published() {
    let zk = ZooKeeper::new();
    // The node does not exist yet: watch waits for its creation, then for each change.
    let (mut watch, lines, _errors) = watch_zookeeper(&zk.hosts, "/w", 3);
    let publisher = {
        let hosts = zk.hosts.clone();
        let (published, each) = mpsc::channel::<u64>();
        let (next, wanted) = mpsc::channel::<u64>();
        std::thread::spawn(move || {
            for epoch in wanted {
                let out = publish_to(&["--zookeeper", &hosts, "--path", "/w"], &document(epoch, epoch as usize + 1));
                assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
                published.send(epoch).unwrap();
            }
        });
        (next, each)
    };
    std::thread::sleep(Duration::from_millis(300));
    for epoch in 1..=3 {
        publisher.0.send(epoch).unwrap();
        assert_eq!(publisher.1.recv_timeout(LINE_WAIT), Ok(epoch));
        let line = lines.recv_timeout(LINE_WAIT).expect("watch printed the epoch");
        assert_eq!(epoch_of(&line), epoch, "{line}");
        assert!(line.contains(&format!(r#""nodes":{}"#, epoch + 1)), "{line}");
    }
    assert!(watch.0.wait().unwrap().success(), "watch --count 3 exits after three epochs");
}

#[test]
fn zookeeper_watch_keeps_its_session_when_quiet_and_goes_on_after_a_silent_or_restarted_server() {
    let mut zk = ZooKeeper::new();
    assert_eq!(zk.publish("/s", &document(1, 2)).status.code(), Some(0));
    let (mut watch, lines, errors) = watch_zookeeper(&zk.hosts, "/s", 4);
    assert_eq!(epoch_of(&lines.recv_timeout(LINE_WAIT).unwrap()), 1);

    // Quiet for longer than the session timeout (the core's 10 s asked, 4 s granted by a
    // server ticking every 200 ms): pings keep the session.
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(zk.publish("/s", &document(2, 2)).status.code(), Some(0));
    assert_eq!(epoch_of(&lines.recv_timeout(LINE_WAIT).unwrap()), 2);
    assert!(errors.try_recv().is_err(), "no session lost while quiet");

    // A server that stops answering (paused) is given up after two thirds of the session timeout.
    zk.signal("-STOP");
    let lost = errors.recv_timeout(LINE_WAIT);
    zk.signal("-CONT");
    let lost = lost.expect("watch says the member is lost");
    assert!(lost.contains("lost") && lost.contains("nothing heard"), "{lost}");
    assert_eq!(zk.publish("/s", &document(3, 2)).status.code(), Some(0));
    assert_eq!(epoch_of(&lines.recv_timeout(LINE_WAIT).unwrap()), 3);

    // A server restarted (a new session, with the zxid seen) is followed again.
    zk.restart();
    assert_eq!(zk.publish("/s", &document(4, 2)).status.code(), Some(0));
    assert_eq!(epoch_of(&lines.recv_timeout(LINE_WAIT).unwrap()), 4);
    assert!(watch.0.wait().unwrap().success());
}

#[test]
fn zookeeper_serve_answers_with_the_document_and_its_etag() {
    let zk = ZooKeeper::new();
    assert_eq!(zk.publish("/v", &document(1, 3)).status.code(), Some(0));
    // Two members given, the first of them dead: serve goes on to the live one.
    let dead = ports::reserve(1); // nothing listens on it
    let members = format!("{},{}", dead_member(&dead, 0), zk.hosts);
    let (_serve, url) = serve(&["--zookeeper", &members, "--path", "/v"]);
    let (status, headers, body) = first_document(&url);
    assert_eq!(status, 200);
    assert!(body.contains(r#""epoch":1"#), "{body}");
    let tag = headers.iter().find(|(n, _)| n == "etag").unwrap().1.clone();
    assert_eq!(tag, "\"epoch-1\"");
    assert_eq!(get(&url, &[("If-None-Match", &tag)]).unwrap().0, 304);

    let publisher = {
        let hosts = zk.hosts.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            publish_to(&["--zookeeper", &hosts, "--path", "/v"], &document(2, 5))
        })
    };
    let asked = Instant::now();
    let (status, headers, body) = get(&url, &[("If-None-Match", &tag), ("Prefer", "wait=20")]).unwrap();
    assert_eq!(status, 200);
    assert!(body.contains(r#""epoch":2"#), "{body}");
    assert!(asked.elapsed() < Duration::from_secs(5), "held until the change, not the wait");
    assert_eq!(headers.iter().find(|(n, _)| n == "etag").unwrap().1, "\"epoch-2\"");
    assert_eq!(publisher.join().unwrap().status.code(), Some(0));
}

/// A ZooKeeper member for one publish, speaking the protocol from hand-written bytes: it
/// holds the node at `stored` (version 5) or not at all, and refuses the write as if
/// someone wrote (`BADVERSION`) or created (`NODEEXISTS`) it since the read.
fn changing_member(stored: Option<String>) -> (String, std::thread::JoinHandle<Vec<i32>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let member = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let connect = read_frame(&mut stream).unwrap();
        assert_eq!(connect.len(), 45, "a ConnectRequest is 45 bytes");
        // ConnectResponse: protocol 0, timeout 4000, session 1, a 16-byte password, not read-only.
        let session = [jute_int(0), jute_int(4000), jute_long(1), jute_int(16), vec![0; 16], vec![0]];
        write_frame(&mut stream, &session.concat());
        let mut ops = Vec::new();
        while let Some(request) = read_frame(&mut stream) {
            let op = i32::from_be_bytes(request[4..8].try_into().unwrap());
            ops.push(op);
            // ReplyHeader: the request's xid, a zxid, the error.
            let header = |err: i32| [request[..4].to_vec(), jute_long(7), jute_int(err)].concat();
            let reply = match (op, &stored) {
                // getData: the data, then the stat (czxid, mzxid, ctime, mtime, version 5,
                // cversion, aversion, ephemeralOwner, dataLength, numChildren, pzxid).
                (4, Some(stored)) => [
                    header(0),
                    jute_int(stored.len() as i32),
                    stored.as_bytes().to_vec(),
                    [jute_long(6), jute_long(7), jute_long(0), jute_long(0)].concat(),
                    [jute_int(5), jute_int(0), jute_int(0), jute_long(0)].concat(),
                    [jute_int(stored.len() as i32), jute_int(0), jute_long(6)].concat(),
                ]
                .concat(),
                (4, None) => header(-101), // NONODE
                (5, _) => header(-103),    // setData: BADVERSION
                (1, _) => header(-110),    // create: NODEEXISTS
                (-11, _) => header(0),     // closeSession
                _ => header(-6),           // UNIMPLEMENTED
            };
            write_frame(&mut stream, &reply);
        }
        ops
    });
    (address, member)
}

fn jute_int(value: i32) -> Vec<u8> {
    value.to_be_bytes().to_vec()
}

fn jute_long(value: i64) -> Vec<u8> {
    value.to_be_bytes().to_vec()
}

fn read_frame(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut length = [0; 4];
    stream.read_exact(&mut length).ok()?;
    let mut body = vec![0; u32::from_be_bytes(length) as usize];
    stream.read_exact(&mut body).ok()?;
    Some(body)
}

fn write_frame(stream: &mut TcpStream, body: &[u8]) {
    stream.write_all(&[&(body.len() as u32).to_be_bytes()[..], body].concat()).unwrap();
}

#[test]
fn publish_loses_to_a_write_between_its_read_and_its_write() {
    for (stored, write) in [(Some(document(1, 3)), 5), (None, 1)] {
        let (address, member) = changing_member(stored);
        let out = publish_to(&["--zookeeper", &address, "--path", "/c"], &document(2, 3));
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(stderr.contains("conflict") && stderr.contains("changed since it was read"), "{stderr}");
        assert!(stderr.contains("epoch 2 not written"), "{stderr}");
        let ops = member.join().unwrap();
        assert_eq!(ops[..2], [4, write], "getData, then setData (stored) or create (none)");
    }
}

fn jute_buffer(bytes: &[u8]) -> Vec<u8> {
    [jute_int(bytes.len() as i32), bytes.to_vec()].concat()
}

/// Stores `value` at `path` (a node that exists) behind the CLI's back, as a careless
/// writer would: one session by hand (a `ConnectRequest`, then `setData` with version -1,
/// which checks nothing).
fn zookeeper_set(hosts: &str, path: &str, value: &[u8]) {
    let mut stream = TcpStream::connect(hosts).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // ConnectRequest: protocol 0, lastZxidSeen 0, timeout 4000, session 0, a 16-byte password, not read-only.
    let connect = [jute_int(0), jute_long(0), jute_int(4000), jute_long(0), jute_int(16), vec![0; 16], vec![0]];
    write_frame(&mut stream, &connect.concat());
    read_frame(&mut stream).expect("a ConnectResponse");
    // RequestHeader {xid 1, setData}, path, data, version -1.
    let set = [jute_int(1), jute_int(5), jute_buffer(path.as_bytes()), jute_buffer(value), jute_int(-1)];
    write_frame(&mut stream, &set.concat());
    let reply = read_frame(&mut stream).expect("a reply");
    assert_eq!(reply[12..16], [0; 4], "setData answered an error");
}

#[test]
fn zookeeper_publish_replace_repairs_a_stored_document_that_followers_refuse() {
    let zk = ZooKeeper::new();
    assert_eq!(zk.publish("/r", &document(1, 3)).status.code(), Some(0));
    // A refused document that says its epoch (7, no nodes).
    let bad = r#"{"format": "shardroute/1", "epoch": 7, "nodes": [], "strategy": {"type": "jump"}}"#;
    zookeeper_set(&zk.hosts, "/r", bad.as_bytes());
    let (mut watch, lines, errors) = watch_zookeeper(&zk.hosts, "/r", 1);
    let refusal = errors.recv_timeout(LINE_WAIT).expect("watch says it refused the stored document");
    assert!(refusal.contains("refused (no_nodes)"), "{refusal}");

    // Without --replace: refused, nothing written.
    let refused = zk.publish("/r", &document(8, 4));
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("not overwritten"), "{}", text(&refused.stderr));
    // With it: the epoch must be above the stored one's.
    let replace = |text: &str| publish_to(&["--zookeeper", &zk.hosts, "--path", "/r", "--replace"], text);
    let low = replace(&document(5, 4));
    assert_eq!(low.status.code(), Some(2), "{}", text(&low.stderr));
    assert!(text(&low.stderr).contains("above 7"), "{}", text(&low.stderr));
    let repaired = replace(&document(8, 4));
    assert_eq!(repaired.status.code(), Some(0), "{}", text(&repaired.stderr));
    let written: serde_json::Value = serde_json::from_slice(&repaired.stdout).unwrap();
    assert_eq!((written["path"].as_str(), written["epoch"].as_u64()), (Some("/r"), Some(8)), "{written}");
    // The follower that refused the bad document installs the repair.
    let line = lines.recv_timeout(LINE_WAIT).expect("watch installs the repair");
    assert_eq!(epoch_of(&line), 8, "{line}");
    assert!(watch.0.wait().unwrap().success());
    assert_eq!(zk.publish("/r", &document(9, 4)).status.code(), Some(0), "publishing goes on from there");

    // Not a document at all: what followers hold cannot be told (ZooKeeper keeps no
    // history), no repair.
    zookeeper_set(&zk.hosts, "/r", b"{not json");
    let unknown = replace(&document(10, 2));
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown.stderr));
    assert!(text(&unknown.stderr).contains("invalid_argument"), "{}", text(&unknown.stderr));
}

/// The CLI with `args` and the environment `env`, its stdout and stderr lines as they come.
fn spawn_lines(args: &[&str], env: &[(&str, &str)]) -> (Killed, mpsc::Receiver<String>, mpsc::Receiver<String>) {
    let mut command = Command::new(CLI);
    command.args(args).env_remove("SHARDROUTE_ZOOKEEPER_PASSWORD");
    command.envs(env.iter().copied());
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let lines = |stream: Box<dyn Read + Send>| {
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        receive
    };
    let out = lines(Box::new(child.stdout.take().unwrap()));
    let err = lines(Box::new(child.stderr.take().unwrap()));
    (Killed(child), out, err)
}

/// `publish -` of `text` with `args`, the password (if any) in the environment.
fn publish_with(args: &[&str], password: Option<&str>, text: &str) -> Output {
    let mut command = Command::new(CLI);
    command.args(["publish", "-"]).args(args).env_remove("SHARDROUTE_ZOOKEEPER_PASSWORD");
    if let Some(password) = password {
        command.env("SHARDROUTE_ZOOKEEPER_PASSWORD", password);
    }
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn zookeeper_digest_authentication() {
    let zk = ZooKeeper::new();
    let store = ["--zookeeper", &zk.hosts, "--path", "/auth/doc"];
    let user = [&store[..], &["--zookeeper-user", "app"]].concat();
    // The node (and its parent) created with the user's ACL.
    let first = publish_with(&user, Some("s3cret"), &document(1, 3));
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert!(text(&first.stdout).contains(r#""epoch":1"#), "{}", text(&first.stdout));
    // The password as a flag works too.
    let flag = [&user[..], &["--zookeeper-password", "s3cret"]].concat();
    let second = publish_with(&flag, None, &document(2, 3));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));

    // Followed with the user's credentials.
    let watch = [&["watch"][..], &user, &["--count", "1"]].concat();
    let (mut held, lines, errors) = spawn_lines(&watch, &[("SHARDROUTE_ZOOKEEPER_PASSWORD", "s3cret")]);
    let line = lines.recv_timeout(LINE_WAIT).unwrap_or_else(|_| panic!("{:?}", errors.try_iter().collect::<Vec<_>>()));
    assert_eq!(epoch_of(&line), 2, "{line}");
    assert!(held.0.wait().unwrap().success());

    // Without credentials, or with a wrong password: the node refuses them (NOAUTH), which
    // is `unauthenticated`, and nothing is written.
    let anonymous = [&["watch"][..], &store, &["--count", "1"]].concat();
    for (args, password) in [(&anonymous, None), (&watch, Some("wrong"))] {
        let env: Vec<(&str, &str)> = password.map(|p| ("SHARDROUTE_ZOOKEEPER_PASSWORD", p)).into_iter().collect();
        let (_refused, lines, errors) = spawn_lines(args, &env);
        let error = errors.recv_timeout(LINE_WAIT).expect("watch says why it cannot read");
        assert!(error.contains("unauthenticated"), "{error}");
        assert!(lines.try_recv().is_err(), "nothing read");
    }
    for (args, password) in [(&store[..], None), (&user[..], Some("wrong"))] {
        let refused = publish_with(args, password, &document(3, 3));
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {}", text(&refused.stderr));
        assert!(text(&refused.stderr).contains("unauthenticated"), "{}", text(&refused.stderr));
    }
    let (_held, lines, _) = spawn_lines(&watch, &[("SHARDROUTE_ZOOKEEPER_PASSWORD", "s3cret")]);
    assert_eq!(epoch_of(&lines.recv_timeout(LINE_WAIT).unwrap()), 2);
}

#[test]
fn zookeeper_a_stopped_member_is_left_for_the_next() {
    let (stopped, zk) = (ZooKeeper::new(), ZooKeeper::new());
    assert_eq!(zk.publish("/m", &document(1, 2)).status.code(), Some(0));
    // A stopped server: its kernel still takes connections; nothing answers on them.
    stopped.signal("-STOP");
    let members = format!("{},{}", stopped.hosts, zk.hosts);
    let held = Command::new(CLI).args(["watch", "--zookeeper", &members, "--path", "/m", "--count", "1"]).output();
    let held = held.unwrap();
    assert_eq!(epoch_of(text(&held.stdout).trim()), 1, "{}", text(&held.stderr));
    let published = publish_to(&["--zookeeper", &members, "--path", "/m"], &document(2, 2));
    assert_eq!(published.status.code(), Some(0), "{}", text(&published.stderr));
    assert!(text(&published.stdout).contains(r#""epoch":2"#), "{}", text(&published.stdout));
}
