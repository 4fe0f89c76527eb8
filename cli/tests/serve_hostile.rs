//! `shardroute serve` against hostile clients: request heads with no end, clients that
//! drip a byte a second past the connection cap (and past the process's file descriptors),
//! clients that ask for a large document and never read it. A well-behaved client keeps
//! being answered meanwhile; serve's memory (VmRSS) and open files stay bounded.
//!
//! serve follows the HTTP source of a tiny in-test server (port 0, read back), so no store
//! is needed. Each serve is killed when its test ends, also on failure. The measurements
//! are printed (`cargo test -p shardroute-cli --test serve_hostile -- --nocapture`).

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod serve_support;
use serve_support::{source, Serve};

const CLI: &str = env!("CARGO_BIN_EXE_shardroute");

/// A topology document of `nodes` nodes whose ids are `id_bytes` long.
fn document(epoch: u64, nodes: usize, id_bytes: usize) -> String {
    let ids: Vec<String> = (0..nodes).map(|i| format!(r#"{{"id":"n{i:0>width$}"}}"#, width = id_bytes - 1)).collect();
    format!(r#"{{"format":"shardroute/1","epoch":{epoch},"nodes":[{}],"strategy":{{"type":"jump"}}}}"#, ids.join(","))
}

impl Serve {
    /// Starts serve on port 0 (under `ulimit` limits such as `-n 128`) and waits for its
    /// first document.
    fn start(source: &str, flags: &[&str], limits: &[&str]) -> Serve {
        let limits: String = limits.iter().map(|limit| format!("ulimit {limit} && ")).collect();
        let mut command = Command::new("sh");
        command.args(["-c", &format!("{limits}exec \"$0\" \"$@\""), CLI]);
        let child = command
            .args(["serve", "--http", source, "--listen", "127.0.0.1:0"])
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut serve = Serve { child, address: String::new() };
        let mut line = String::new();
        BufReader::new(serve.child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.split(r#""url":"http://"#).nth(1).unwrap_or_else(|| panic!("{line:?}"));
        serve.address = url.trim_end().trim_end_matches(['"', '}']).trim_end_matches('/').to_string();
        let deadline = Instant::now() + Duration::from_secs(30);
        while get(&serve.address, Duration::from_secs(5)).map(|answer| answer.status) != Some(200) {
            assert!(Instant::now() < deadline, "serve did not serve its first document in 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        serve
    }

    /// VmRSS, in bytes.
    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    }

    /// Open file descriptors.
    fn files(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id())).unwrap().count()
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

struct Answer {
    status: u16,
    etag: Option<String>,
    body: usize,
}

/// A well-behaved GET: connect, ask, read the whole answer (None on any failure).
fn get(address: &str, timeout: Duration) -> Option<Answer> {
    let deadline = Instant::now() + timeout;
    let address = address.parse().ok()?;
    let mut stream = TcpStream::connect_timeout(&address, timeout).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    stream.write_all(b"GET / HTTP/1.1\r\nHost: serve\r\nConnection: close\r\n\r\n").ok()?;
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 65536];
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        stream.set_read_timeout(Some(left.max(Duration::from_millis(1)))).ok()?;
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
            Err(_) => return None,
        }
    }
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..end]).to_string();
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let etag = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("etag").then(|| value.trim().to_string())
    });
    Some(Answer { status, etag, body: bytes.len() - end - 4 })
}

/// Sends `start` then `filler` bytes until the server stops the connection or `most` bytes
/// are sent; (bytes sent, what the server answered).
fn send_without_end(address: &str, start: &[u8], most: usize) -> (usize, Vec<u8>) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(start).unwrap();
    let filler = vec![b'a'; 65536];
    let mut sent = start.len();
    while sent < most {
        match stream.write(&filler) {
            Ok(n) => sent += n,
            Err(err) if matches!(err.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => break,
            Err(err) => panic!("after {sent} bytes the server neither read nor closed: {err}"),
        }
    }
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    (sent, answer)
}

/// The head limit (16 KiB) and the kernel's socket buffers are far below this: a server
/// that stops reading at its limit makes the sender fail long before.
const ENDLESS: usize = 256 << 20;

#[test]
fn a_request_head_past_its_limits_is_cut_off_and_memory_stays_bounded() {
    let source = source(document(1, 3, 8));
    let serve = Serve::start(&source, &[], &[]);
    let before = serve.rss();
    for start in [&b"GET /"[..], b"GET / HTTP/1.1\r\nX-Long: "] {
        let (sent, answer) = send_without_end(&serve.address, start, ENDLESS);
        assert!(sent < ENDLESS / 4, "serve read {sent} bytes of one request head");
        // 431 when it arrives before the reset of the unread bytes does.
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 431"), "{answer}");
    }
    // More header fields than allowed, each short.
    let mut many = String::from("GET / HTTP/1.1\r\nHost: serve\r\n");
    for i in 0..80 {
        many.push_str(&format!("X-Header-{i}: {i}\r\n"));
    }
    many.push_str("\r\n");
    let mut stream = TcpStream::connect(&serve.address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(many.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    let after = serve.rss();
    eprintln!("serve VmRSS: {} KiB before, {} KiB after the endless heads", before >> 10, after >> 10);
    assert!(after < before + (16 << 20), "VmRSS grew from {before} to {after} bytes");
    assert_eq!(get(&serve.address, Duration::from_secs(10)).map(|answer| answer.status), Some(200));
}

/// `count` clients that send a request head a byte a second, never ending it, and connect
/// again when dropped; stopped by `stop`. Counts the times they were dropped.
fn drippers(address: String, count: usize, stop: Arc<AtomicBool>, dropped: Arc<AtomicU64>) {
    let mut streams: Vec<Option<TcpStream>> = (0..count).map(|_| None).collect();
    while !stop.load(Ordering::Relaxed) {
        for slot in streams.iter_mut() {
            if slot.is_none() {
                let address = address.parse().unwrap();
                if let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_millis(200)) {
                    let _ = stream.set_nonblocking(true);
                    if stream.write_all(b"GET / HTTP/1.1\r\nX-Drip: ").is_ok() {
                        *slot = Some(stream);
                    }
                }
                continue;
            }
            let alive = slot.as_mut().is_some_and(|stream| {
                let mut sink = [0u8; 1024];
                // An answer or an end means the server dropped this one.
                let ended = stream.read(&mut sink).is_ok();
                !ended && stream.write(b"a").is_ok()
            });
            if !alive {
                *slot = None;
                dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// A well-behaved client's GETs for `run` while 300 drippers are attached: (answers
/// attempted, 200s with the right ETag, median latency), printed with serve's VmRSS.
fn under_drippers(serve: &mut Serve, most_files: usize) -> (usize, usize, Duration) {
    let stop = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicU64::new(0));
    let dripping = {
        let (address, stop, dropped) = (serve.address.clone(), Arc::clone(&stop), Arc::clone(&dropped));
        std::thread::spawn(move || drippers(address, 300, stop, dropped))
    };
    std::thread::sleep(Duration::from_secs(4)); // all 300 connected
    let expected = get(&serve.address, Duration::from_secs(10)).and_then(|answer| answer.etag);
    let (mut attempts, mut good, mut latencies, mut files) = (0, 0, Vec::new(), 0);
    let end = Instant::now() + Duration::from_secs(16);
    while Instant::now() < end {
        let asked = Instant::now();
        let answer = get(&serve.address, Duration::from_secs(5));
        attempts += 1;
        if answer.is_some_and(|answer| answer.status == 200 && answer.etag == expected) {
            good += 1;
            latencies.push(asked.elapsed());
        }
        files = files.max(serve.files());
        std::thread::sleep(Duration::from_millis(100));
    }
    let rss = serve.rss();
    stop.store(true, Ordering::Relaxed);
    dripping.join().unwrap();
    latencies.sort();
    let median = latencies.get(latencies.len() / 2).copied().unwrap_or_default();
    eprintln!(
        "300 drippers: {good} of {attempts} GETs answered 200 with the ETag, median {median:?}; \
         drippers dropped {} times; serve VmRSS {} KiB, at most {files} files open",
        dropped.load(Ordering::Relaxed),
        rss >> 10
    );
    assert!(serve.alive(), "serve exited");
    assert!(dropped.load(Ordering::Relaxed) >= 100, "the drippers were not dropped");
    assert!(files <= most_files, "{files} files open");
    assert!(rss < 64 << 20, "VmRSS {rss}");
    (attempts, good, median)
}

#[test]
fn slow_clients_past_the_connection_cap_leave_room_for_a_good_one() {
    let source = source(document(2, 3, 8));
    let mut serve = Serve::start(&source, &["--max-connections", "64"], &[]);
    let (attempts, good, _) = under_drippers(&mut serve, 64 + 16);
    assert!(attempts >= 20 && good * 100 >= attempts * 95, "{good} of {attempts}");
}

/// Out of file descriptors (128 open files), and in 512 MiB of address space, where a
/// thread per connection ran out at the 83rd.
#[test]
fn slow_clients_past_the_open_file_limit_leave_room_for_a_good_one() {
    let source = source(document(3, 3, 8));
    let mut serve = Serve::start(&source, &[], &["-n 128", "-v 524288"]);
    let (attempts, good, _) = under_drippers(&mut serve, 128);
    assert!(attempts >= 20 && good * 100 >= attempts * 95, "{good} of {attempts}");
}

#[test]
fn clients_that_never_read_are_dropped_at_the_write_deadline_without_a_copy_each() {
    // About 8 MiB served: more than the kernel takes into one connection's buffers.
    let source = source(document(4, 8000, 1000));
    let serve = Serve::start(&source, &[], &[]);
    let full = get(&serve.address, Duration::from_secs(30)).unwrap().body;
    assert!(full > 8_000_000, "{full}");
    let (rss, files) = (serve.rss(), serve.files());
    let stalled: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut stream = TcpStream::connect(&serve.address).unwrap();
            stream.write_all(b"GET / HTTP/1.1\r\nHost: serve\r\n\r\n").unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_secs(4));
    let (rss_stalled, files_stalled) = (serve.rss(), serve.files());
    eprintln!(
        "40 clients not reading {full} bytes: serve VmRSS {} KiB (from {} KiB), files {files_stalled} (from {files})",
        rss_stalled >> 10,
        rss >> 10
    );
    assert!(files_stalled >= files + 30, "the answers were not held up: {files_stalled} files open");
    assert!(rss_stalled < rss + 2 * full as u64, "VmRSS grew from {rss} to {rss_stalled} bytes");
    // The write deadline: 10 s and 1 s per MiB; well before a minute, all are closed.
    let deadline = Instant::now() + Duration::from_secs(60);
    while serve.files() > files + 2 {
        assert!(Instant::now() < deadline, "{} files still open", serve.files());
        std::thread::sleep(Duration::from_millis(500));
    }
    for mut stream in stalled {
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut received = Vec::new();
        let _ = stream.read_to_end(&mut received);
        assert!(received.len() < full, "a stalled client got the whole answer");
    }
    assert_eq!(get(&serve.address, Duration::from_secs(30)).map(|answer| answer.status), Some(200));
}
