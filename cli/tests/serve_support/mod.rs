//! What the `serve` tests share: a tiny HTTP source (port 0, read back) and a `serve`
//! process killed when its handle drops (also when a test fails).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Child;
use std::time::Duration;

/// A source serving `text` with an ETag (`304` for it) to anyone, one request at a time;
/// its URL. The thread ends with the test process.
pub fn source(text: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/topology.json", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
            let answer = if head.contains("if-none-match: \"source-1\"") {
                "HTTP/1.1 304 Not Modified\r\nETag: \"source-1\"\r\nConnection: close\r\n\r\n".to_string()
            } else {
                format!(
                    "HTTP/1.1 200 OK\r\nETag: \"source-1\"\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                )
            };
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

/// `shardroute serve` following `source`; killed when dropped.
pub struct Serve {
    pub child: Child,
    /// `127.0.0.1:PORT`
    pub address: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

