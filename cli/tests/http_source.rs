//! `shardroute watch --http` over the core's HTTP source session: the deadline of a request
//! and the loss it reports are the core's (`request_timeout_ms`, 5 s), not the CLI's own
//! (it waited 2 s + the 30 s of a long poll on every request, the first one included).
//! The server is a listener on 127.0.0.1 port 0 in this process that never answers.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CLI: &str = env!("CARGO_BIN_EXE_shardroute");

#[test]
fn a_server_that_never_answers_is_lost_at_the_core_request_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/topology.json", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        // Accepts and holds every connection, answering nothing, until the process ends.
        let held: Vec<_> = listener.incoming().map_while(Result::ok).collect();
        drop(held);
    });
    let mut child =
        Command::new(CLI).args(["watch", "--http", &url]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    let mut line = String::new();
    let read = BufReader::new(child.stderr.take().unwrap()).read_line(&mut line);
    let took = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    read.unwrap();
    assert!(line.contains(&format!("lost: unreachable: GET {url}: no whole answer within 5 s")), "{line:?}");
    // The old CLI gave up on its first request after 32 s.
    assert!(took < Duration::from_secs(20), "{took:?}");
}
