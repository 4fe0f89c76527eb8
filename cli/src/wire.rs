//! Just enough of an HTTP/1.1 client and base64 for `publish` and `watch` (and the follower
//! behind `serve`), over `std::net`: one request per connection (`Connection: close`),
//! bodies by `Content-Length`, chunked transfer or the end of the stream. No TLS: etcd's
//! gateway and `serve` listen on plain HTTP here; put a proxy in front for anything else.
//!
//! Everything read is bounded before it is buffered: each status, header and chunk-size
//! line ([`MAX_LINE`]), the number of headers ([`MAX_HEADERS`]), the body and each chunk
//! ([`MAX_BODY`], buffered as it arrives, never allocated from what the server announces),
//! and the time: one deadline for the whole request (a server dripping a byte at a time
//! does not extend it).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// `http://host:port/path` taken apart.
#[derive(Clone, Debug)]
pub struct Url {
    pub host: String,
    pub port: u16,
    pub path: String,
}

impl Url {
    pub fn parse(url: &str) -> Result<Url, String> {
        let rest = url.strip_prefix("http://").ok_or_else(|| format!("{url}: expected an http:// URL"))?;
        let (authority, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
                (host, port.parse::<u16>().map_err(|_| format!("{url}: bad port {port:?}"))?)
            }
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(format!("{url}: no host"));
        }
        Ok(Url { host: host.trim_matches(['[', ']']).to_string(), port, path })
    }

    /// This URL with another path.
    pub fn with_path(&self, path: &str) -> Url {
        Url { path: path.to_string(), ..self.clone() }
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// The largest body read: the core's largest document (64 MiB) and some room. A server
/// that announces or sends more is refused, never allocated for.
pub const MAX_BODY: usize = (64 << 20) + (1 << 20);

/// Longest status line, header line or chunk-size line read, in bytes (with its line end).
pub const MAX_LINE: usize = 8 << 10;
/// Most header lines in an answer.
pub const MAX_HEADERS: usize = 100;

/// A connection read under a deadline: each read waits at most until it, so the whole
/// request (head and body, or one chunk of a stream) takes at most the time given.
pub struct Timed {
    stream: TcpStream,
    deadline: Option<Instant>,
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(deadline) = self.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out (the request's deadline)"));
            }
            self.stream.set_read_timeout(Some(left))?;
        }
        self.stream.read(buf).map_err(|err| match err.kind() {
            // What a read timeout looks like on Unix.
            std::io::ErrorKind::WouldBlock => std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"),
            _ => err,
        })
    }
}

/// One line, its end (`\n` or `\r\n`) removed; an error past `MAX_LINE` bytes, before
/// buffering more, or at the end of the stream.
fn read_line(reader: &mut impl BufRead, what: &str) -> Result<String, String> {
    let mut line = Vec::new();
    loop {
        let available = reader.fill_buf().map_err(|err| format!("reading {what}: {err}"))?;
        if available.is_empty() {
            return Err(format!("reading {what}: the stream ended"));
        }
        let (taken, done) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (end + 1, true),
            None => (available.len(), false),
        };
        if line.len() + taken > MAX_LINE {
            return Err(format!("{what}: a line longer than {MAX_LINE} bytes"));
        }
        line.extend_from_slice(&available[..taken]);
        reader.consume(taken);
        if done {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(String::from_utf8_lossy(&line).into_owned());
        }
    }
}

/// At most the first `max` bytes of `text`, cut at a character boundary (an error
/// message quotes what the server sent, which may be any UTF-8).
fn prefix(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// An answer's status, headers (names lowercased) and the reader positioned at its body:
/// read from a connection ([`request`]) or from any `Read` ([`read_response`]).
pub struct Response<R = Timed> {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    reader: BufReader<R>,
    chunked: bool,
    length: Option<u64>,
}

impl<R: Read> Response<R> {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The whole body, within the request's deadline.
    pub fn body(mut self) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        if self.chunked {
            while let Some(chunk) = self.next_chunk()? {
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(format!("a body over {MAX_BODY} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
        } else if let Some(length) = self.length {
            if length > MAX_BODY as u64 {
                return Err(format!("a body of {length} bytes, over {MAX_BODY}"));
            }
            // Read as it arrives: an announced length is not allocated ahead.
            (&mut self.reader).take(length).read_to_end(&mut body).map_err(|err| format!("reading the body: {err}"))?;
            if (body.len() as u64) < length {
                return Err(format!("reading the body: the stream ended after {} of {length} bytes", body.len()));
            }
        } else {
            (&mut self.reader)
                .take(MAX_BODY as u64 + 1)
                .read_to_end(&mut body)
                .map_err(|err| format!("reading the body: {err}"))?;
            if body.len() > MAX_BODY {
                return Err(format!("a body over {MAX_BODY} bytes"));
            }
        }
        Ok(body)
    }

    /// The next chunk, or `None` at the stream's end (under the deadline set, on a connection).
    fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, String> {
        let line = read_line(&mut self.reader, "a chunk size")?;
        let digits = line.split(';').next().unwrap_or("").trim();
        // More than 16 hex digits cannot be a size; the check below refuses big ones.
        let size = (digits.len() <= 16)
            .then(|| u64::from_str_radix(digits, 16).ok())
            .flatten()
            .ok_or_else(|| format!("a bad chunk size {:?}", prefix(&line, 40)))?;
        if size == 0 {
            return Ok(None);
        }
        if size > MAX_BODY as u64 {
            return Err(format!("a chunk of {size} bytes, over {MAX_BODY}"));
        }
        let mut data = Vec::new();
        (&mut self.reader).take(size).read_to_end(&mut data).map_err(|err| format!("reading a chunk: {err}"))?;
        if (data.len() as u64) < size {
            return Err("reading a chunk: the stream ended".into());
        }
        if !read_line(&mut self.reader, "a chunk's end")?.is_empty() {
            return Err("a chunk longer than its size".into());
        }
        Ok(Some(data))
    }
}

impl Response<Timed> {
    /// The next chunk of a chunked stream, or `None` at its end; it must arrive whole
    /// within `timeout` of this call (a watch: quiet that long is idle).
    pub fn chunk(&mut self, timeout: Duration) -> Result<Option<Vec<u8>>, String> {
        self.reader.get_mut().deadline = Some(Instant::now() + timeout);
        self.next_chunk()
    }
}

/// Sends one request and reads the answer's head. `timeout` bounds the whole request:
/// connecting, sending, the head and [`Response::body`] (None: as long as it takes).
pub fn request(
    method: &str,
    url: &Url,
    headers: &[(&str, String)],
    body: &[u8],
    timeout: Option<Duration>,
) -> Result<Response, String> {
    let deadline = timeout.map(|timeout| Instant::now() + timeout);
    let address = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|err| format!("{}: {err}", url.authority()))?
        .next()
        .ok_or_else(|| format!("{}: no address", url.authority()))?;
    let stream = TcpStream::connect_timeout(&address, timeout.unwrap_or(Duration::from_secs(10)))
        .map_err(|err| format!("{}: {err}", url.authority()))?;
    let left =
        deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)));
    stream.set_write_timeout(left).map_err(|err| err.to_string())?;
    let mut head = format!("{method} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", url.path, url.authority());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut writer = stream.try_clone().map_err(|err| err.to_string())?;
    writer.write_all(head.as_bytes()).and_then(|()| writer.write_all(body)).map_err(|err| err.to_string())?;
    read_response(Timed { stream, deadline }).map_err(|err| format!("{}: {err}", url.authority()))
}

/// Reads an answer's head (status line and headers) from `stream`; the body is read by
/// [`Response::body`] (or [`Response::chunk`], on a connection). The parse of [`request`], on any
/// `Read` (the fuzz target `http_response` feeds it bytes).
pub fn read_response<R: Read>(stream: R) -> Result<Response<R>, String> {
    let mut reader = BufReader::with_capacity(64 << 10, stream);
    let status_line = read_line(&mut reader, "the status line")?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .filter(|_| status_line.starts_with("HTTP/1."))
        .ok_or_else(|| format!("not an HTTP answer: {:?}", prefix(&status_line, 80)))?;
    let headers = read_headers(&mut reader)?;
    let find = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let chunked = find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let length = find("content-length").and_then(|v| v.parse().ok());
    Ok(Response { status, headers, reader, chunked, length })
}

/// Header lines up to the blank line, names lowercased: at most [`MAX_HEADERS`] of them,
/// each at most [`MAX_LINE`] bytes.
pub fn read_headers(reader: &mut impl BufRead) -> Result<Vec<(String, String)>, String> {
    let mut headers = Vec::new();
    loop {
        let line = read_line(reader, "a header")?;
        if line.is_empty() {
            return Ok(headers);
        }
        if headers.len() >= MAX_HEADERS {
            return Err(format!("more than {MAX_HEADERS} headers"));
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (how etcd's gateway writes keys and values).
pub fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64, padding optional; `None` for anything else.
pub fn unbase64(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u32> = text
        .trim_end_matches('=')
        .bytes()
        .map(|c| ALPHABET.iter().position(|&a| a == c).map(|p| p as u32))
        .collect::<Option<_>>()?;
    if digits.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        let n = group.iter().enumerate().fold(0u32, |n, (i, &d)| n | (d << (18 - 6 * i)));
        for i in 0..group.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_as_rfc_4648_says() {
        for (plain, coded) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")] {
            assert_eq!(base64(plain.as_bytes()), coded);
            assert_eq!(unbase64(coded).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(unbase64("Zm9v!"), None);
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(unbase64(&base64(&all)), Some(all));
    }

    #[test]
    fn an_announced_body_past_the_limit_is_refused_unread() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = Url::parse(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut head = [0u8; 1024];
            let _ = stream.read(&mut head);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n");
        });
        let response = request("GET", &url, &[], b"", Some(Duration::from_secs(5))).unwrap();
        let refused = response.body().unwrap_err();
        assert!(refused.contains("over"), "{refused}");
    }

    /// A server that reads the request head, then runs `answer` on the connection; the
    /// URL, and what `answer` returned (once the client is done with it).
    fn fake_server<T: Send + 'static>(
        answer: impl FnOnce(&mut std::net::TcpStream) -> T + Send + 'static,
    ) -> (Url, std::thread::JoinHandle<T>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = Url::parse(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut head = [0u8; 1024];
            let _ = stream.read(&mut head);
            answer(&mut stream)
        });
        (url, server)
    }

    /// Writes `start`, then `a`s until the client stops reading (or 1 GiB); the bytes written.
    fn endless(stream: &mut std::net::TcpStream, start: &[u8]) -> usize {
        let _ = stream.set_write_timeout(Some(Duration::from_secs(20)));
        let _ = stream.write_all(start);
        let filler = vec![b'a'; 1 << 16];
        let mut sent = 0;
        while sent < 1 << 30 {
            match stream.write(&filler) {
                Ok(n) => sent += n,
                Err(_) => break,
            }
        }
        sent
    }

    #[test]
    fn a_status_or_header_line_past_the_limit_is_refused_unbuffered() {
        for start in [&b"HTTP/1.1 200 "[..], b"HTTP/1.1 200 OK\r\nX-Long: "] {
            let (url, server) = fake_server(move |stream| endless(stream, start));
            let refused = request("GET", &url, &[], b"", Some(Duration::from_secs(30))).err().unwrap();
            assert!(refused.contains(&format!("a line longer than {MAX_LINE} bytes")), "{refused}");
            // The client stopped reading: the server could not send its gigabyte.
            assert!(server.join().unwrap() < 1 << 30);
        }
    }

    #[test]
    fn more_headers_than_the_limit_are_refused() {
        let (url, _server) = fake_server(|stream| {
            let mut head = String::from("HTTP/1.1 200 OK\r\n");
            for i in 0..=MAX_HEADERS {
                head.push_str(&format!("X-{i}: {i}\r\n"));
            }
            let _ = stream.write_all(head.as_bytes());
        });
        let refused = request("GET", &url, &[], b"", Some(Duration::from_secs(10))).err().unwrap();
        assert!(refused.contains(&format!("more than {MAX_HEADERS} headers")), "{refused}");
    }

    #[test]
    fn a_huge_chunk_size_is_refused_without_allocating() {
        let cases = [("ffffffffffff", "over"), ("fffffffffffffffffffffff", "bad chunk size"), ("4000000", "ended")];
        for (size, words) in cases {
            let (url, _server) = fake_server(move |stream| {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
                let _ = stream.write_all(format!("{size}\r\nabc").as_bytes());
                std::thread::sleep(Duration::from_millis(200));
            });
            let response = request("GET", &url, &[], b"", Some(Duration::from_secs(10))).unwrap();
            let refused = response.body().unwrap_err();
            // 0x4000000 (64 MiB) is under the limit: announced, never sent, not allocated ahead.
            assert!(refused.contains(words), "{size}: {refused}");
        }
    }

    #[test]
    fn a_server_dripping_its_head_is_given_up_at_the_request_deadline() {
        // A byte every 50 ms keeps any per-read timeout from firing; 2,000 of them take 100 s.
        let (url, server) = fake_server(|stream| {
            let mut sent = 0;
            for byte in b"HTTP/1.1 200 OK\r\nX-Drip: ".iter().chain(&[b'a'; 2000]) {
                if stream.write_all(&[*byte]).is_err() {
                    break;
                }
                sent += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            sent
        });
        let refused = request("GET", &url, &[], b"", Some(Duration::from_secs(1))).err().unwrap();
        assert!(refused.contains("timed out"), "{refused}");
        // Given up after about 20 bytes (one second), not after the server's 2,000.
        assert!(server.join().unwrap() < 200);
    }

    #[test]
    fn a_dripped_body_is_given_up_at_the_request_deadline() {
        let (url, _server) = fake_server(|stream| {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
            for _ in 0..2000 {
                if stream.write_all(b"a").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let response = request("GET", &url, &[], b"", Some(Duration::from_secs(1))).unwrap();
        let refused = response.body().unwrap_err();
        assert!(refused.contains("timed out"), "{refused}");
    }

    #[test]
    fn a_line_quoted_in_an_error_is_cut_at_a_character_boundary() {
        // The fuzz target `http_response` hits this on the old code in its first second: the
        // quote was cut at byte 80 (status line) or 40 (chunk size), inside a multi-byte
        // character, and the slice panicked.
        let status = format!("HTTP/1.1 OK {}\u{e9}\r\n\r\n", "x".repeat(67));
        assert!(!status.is_char_boundary(80));
        let refused = read_response(status.as_bytes()).err().unwrap();
        assert!(refused.starts_with("not an HTTP answer"), "{refused}");
        let chunked = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{}\u{e9}\r\n", "z".repeat(39));
        let refused = read_response(chunked.as_bytes()).unwrap().body().unwrap_err();
        assert!(refused.starts_with("a bad chunk size"), "{refused}");
    }

    #[test]
    fn a_response_is_read_from_any_reader() {
        let text =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A:  b \r\n\r\n3;x=y\r\nabc\r\n1\r\nd\r\n0\r\n\r\n";
        let response = read_response(&text[..]).unwrap();
        assert_eq!((response.status, response.header("x-a")), (200, Some("b")));
        assert_eq!(response.body().unwrap(), b"abcd");
    }

    #[test]
    fn urls() {
        let url = Url::parse("http://127.0.0.1:2379").unwrap();
        assert_eq!((url.host.as_str(), url.port, url.path.as_str()), ("127.0.0.1", 2379, "/"));
        let url = Url::parse("http://[::1]:8080/topology.json").unwrap();
        assert_eq!((url.host.as_str(), url.port, url.path.as_str()), ("::1", 8080, "/topology.json"));
        assert!(Url::parse("https://x").is_err());
        assert!(Url::parse("http://:80").is_err());
    }
}
