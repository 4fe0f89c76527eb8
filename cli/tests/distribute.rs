//! `publish`, `watch` and `serve` against a real etcd (Debian's etcd-server, one member on
//! 127.0.0.1, started here in a temp dir and killed by PID when the test ends, also on
//! failure), and `serve` answered over plain TCP as any HTTP client would.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const CLI: &str = env!("CARGO_BIN_EXE_shardroute");

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
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
}

fn etcd() -> Etcd {
    let dir = tempfile::tempdir().unwrap();
    let (client, peer) = (free_port(), free_port());
    let url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let child = Command::new("etcd")
        .args(["--name", "cli", "--data-dir"])
        .arg(dir.path().join("data"))
        .args(["--listen-client-urls", &url, "--advertise-client-urls", &url])
        .args(["--listen-peer-urls", &peer_url, "--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("cli={peer_url}"), "--log-level", "error", "--logger", "zap"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("needs etcd (apt-get install -y etcd-server; scripts/setup.sh installs it)");
    let process = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !get(&format!("{url}/health"), &[]).is_some_and(|(status, _, body)| status == 200 && body.contains("true")) {
        assert!(Instant::now() < deadline, "etcd did not answer");
        std::thread::sleep(Duration::from_millis(100));
    }
    Etcd { url, _process: process, _dir: dir }
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
    format!(r#"{{"format": "shardroute/1", "epoch": {epoch}, "nodes": [{}], "strategy": {{"type": "jump"}}}}"#, nodes.join(","))
}

fn publish(etcd: &str, key: &str, text: &str) -> Output {
    let mut child = Command::new(CLI)
        .args(["publish", "-", "--etcd", etcd, "--key", key])
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
        (r#"{"format": "shardroute/1", "epoch": 2, "nodes": [{"id": "a"}], "strategy": {"type": "nope"}}"#, "invalid_topology"),
        (r#"{"format": "shardroute/1", "epoch": 2, "nodes": [], "strategy": {"type": "jump"}}"#, "no_nodes"),
    ] {
        let refused = publish(&etcd.url, "/t/a", bad);
        assert_eq!(refused.status.code(), Some(2));
        assert!(text(&refused.stderr).contains(code), "{}", text(&refused.stderr));
    }
    let second = publish(&etcd.url, "/t/a", &document(2, 4));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert!(text(&second.stdout).contains(r#""epoch":2"#));
}

#[test]
fn publish_to_nothing_exits_4() {
    let out = publish(&format!("http://127.0.0.1:{}", free_port()), "/t", &document(1, 2));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
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
    let members = format!("http://127.0.0.1:{},{}", free_port(), etcd.url);
    let serve = Command::new(CLI)
        .args(["serve", "--etcd", &members, "--key", "/t/b", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut serve = Killed(serve);
    let listening = BufReader::new(serve.0.stdout.take().unwrap()).lines().next().unwrap().unwrap();
    let url = listening.split(r#""url":""#).nth(1).unwrap().trim_end_matches(['"', '}']).to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    let (status, headers, body) = loop {
        let answer = get(&url, &[]).unwrap();
        if answer.0 == 200 || Instant::now() > deadline {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(50)); // 503 until the first document is read
    };
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
    assert!(text(&out.stderr).contains("--etcd URL --key KEY, or --http URL"));
}
