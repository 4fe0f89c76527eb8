//! Just enough of an HTTP/1.1 client for `publish` and `watch` (and the follower behind
//! `serve`), over `std::net`: one request per connection (`Connection: close`), bodies by
//! `Content-Length`, chunked transfer or the end of the stream. TLS (etcd's `https://`
//! members) is `source.rs`'s, around these readers; an HTTP source is plain HTTP.
//!
//! Everything read is bounded before it is buffered: each status, header and chunk-size
//! line ([`MAX_LINE`]), the number of headers ([`MAX_HEADERS`]), and the body (the limit
//! given, buffered as it arrives, never allocated from what the server announces; a
//! stream handed on as it arrives). Time is the source session's: one deadline for the
//! whole request, at which the transport closes the connection.

use std::io::{BufRead, BufReader, Read};

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

/// An answer's status, headers (names lowercased) and the reader positioned at its body,
/// from any `Read` ([`read_response`]).
pub struct Response<R> {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    reader: BufReader<R>,
    chunked: bool,
    length: Option<u64>,
}

impl<R: Read> Response<R> {
    #[allow(dead_code)] // the fuzz target `http_response` reads answers with it
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The whole body, at most [`MAX_BODY`] bytes ([`Response::body_within`]).
    #[allow(dead_code)] // the fuzz target `http_response` reads answers with it
    pub fn body(self) -> Result<Vec<u8>, String> {
        self.body_within(MAX_BODY as u64).map_err(|err| err.to_string())
    }

    /// The whole body, refused when over `limit` bytes: announced, before a byte of it is
    /// read; sent, once `limit + 1` bytes have arrived (never allocated ahead).
    pub fn body_within(self, limit: u64) -> Result<Vec<u8>, BodyError> {
        if let Some(length) = self.announced_length().filter(|&length| length > limit) {
            return Err(BodyError::Over(format!("a body of {length} bytes, over {limit}")));
        }
        let mut body = Vec::new();
        let read = self.into_body().take(limit.saturating_add(1)).read_to_end(&mut body);
        read.map_err(|err| BodyError::Read(format!("reading the body: {err}")))?;
        if body.len() as u64 > limit {
            return Err(BodyError::Over(format!("a body over {limit} bytes")));
        }
        Ok(body)
    }
}

/// Why a body was not read whole.
#[derive(Debug)]
pub enum BodyError {
    /// Over the limit (the rest is not read).
    Over(String),
    /// Cut short, a bad chunk, or the connection's error.
    Read(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Over(message) | BodyError::Read(message) => f.write_str(message),
        }
    }
}

/// Reads an answer's head (status line and headers) from `stream`; the body is read by
/// [`Response::body_within`] (or, a stream, [`Response::into_body`]). On any `Read`: a
/// connection, or the bytes the fuzz target `http_response` feeds it.
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

impl Url {
    /// An `http://` or `https://` URL (`https://` without a port: 443), and whether it is
    /// `https://`.
    pub fn parse_secure(url: &str) -> Result<(Url, bool), String> {
        let Some(rest) = url.strip_prefix("https://") else {
            return Url::parse(url).map(|url| (url, false));
        };
        let mut parsed = Url::parse(&format!("http://{rest}")).map_err(|_| format!("{url}: not a URL"))?;
        let authority = rest.split('/').next().unwrap_or("");
        if parsed.port == 80 && !authority.ends_with(":80") {
            parsed.port = 443;
        }
        Ok((parsed, true))
    }

    /// `host:port` (an IPv6 host in brackets), as a `Host` header says it.
    pub fn host_port(&self) -> String {
        self.authority()
    }
}

/// The head of a request to `url` (`Connection: close`, the body's `Content-Length`).
pub fn request_head(method: &str, url: &Url, headers: &[(&str, String)], body_length: usize) -> String {
    let mut head = format!("{method} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", url.path, url.authority());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {body_length}\r\n\r\n"));
    head
}

impl<R: Read> Response<R> {
    /// The body's length as the server announced it (`None`: chunked, or up to the end).
    pub fn announced_length(&self) -> Option<u64> {
        self.length.filter(|_| !self.chunked)
    }

    /// The body as a reader of its bytes as they arrive, chunks decoded: nothing is
    /// buffered beyond the reader's own buffer (each chunk-size line at most
    /// [`MAX_LINE`]), so the caller bounds what it keeps (`take(limit)`, or a stream
    /// handed on piece by piece). A body that ends before its announced length or its
    /// last chunk is an `UnexpectedEof` error; a bad chunk size `InvalidData`.
    pub fn into_body(self) -> Body<R> {
        let framing = match (self.chunked, self.length) {
            (true, _) => Framing::Chunked { left: 0, after_chunk: false, ended: false },
            (false, Some(length)) => Framing::Length(length),
            (false, None) => Framing::ToEnd,
        };
        Body { reader: self.reader, framing }
    }
}

/// An answer's body, read as it arrives ([`Response::into_body`]).
pub struct Body<R> {
    reader: BufReader<R>,
    framing: Framing,
}

enum Framing {
    /// Bytes left of the current chunk; whether its line end is still to be read; the
    /// last chunk seen.
    Chunked {
        left: u64,
        after_chunk: bool,
        ended: bool,
    },
    Length(u64),
    ToEnd,
}

impl<R: Read> Read for Body<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let invalid = |message: String| std::io::Error::new(std::io::ErrorKind::InvalidData, message);
        let left = match &mut self.framing {
            Framing::ToEnd => return self.reader.read(buf),
            Framing::Length(left) => left,
            Framing::Chunked { ended: true, .. } => return Ok(0),
            Framing::Chunked { left, after_chunk, ended } => {
                if *left == 0 {
                    if *after_chunk && !read_line(&mut self.reader, "a chunk's end").map_err(invalid)?.is_empty() {
                        return Err(invalid("a chunk longer than its size".into()));
                    }
                    *after_chunk = false;
                    if self.reader.fill_buf()?.is_empty() {
                        // Between two chunks: the server ended the stream.
                        let ended = "the stream ended before its last chunk";
                        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, ended));
                    }
                    let line = read_line(&mut self.reader, "a chunk size").map_err(invalid)?;
                    let digits = line.split(';').next().unwrap_or("").trim();
                    *left = (digits.len() <= 16)
                        .then(|| u64::from_str_radix(digits, 16).ok())
                        .flatten()
                        .ok_or_else(|| invalid(format!("a bad chunk size {:?}", prefix(&line, 40))))?;
                    if *left == 0 {
                        *ended = true; // trailers, if any, are not read
                        return Ok(0);
                    }
                    *after_chunk = true;
                }
                left
            }
        };
        if *left == 0 || buf.is_empty() {
            return Ok(0);
        }
        let most = buf.len().min(usize::try_from(*left).unwrap_or(usize::MAX));
        let read = self.reader.read(&mut buf[..most])?;
        if read == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the stream ended inside the body"));
        }
        *left -= read as u64;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::io::Write;
    use std::net::TcpStream;
    use std::time::Duration;

    /// A GET of `url` over a connection: the answer's head.
    fn get(url: &Url) -> Result<Response<TcpStream>, String> {
        let mut stream = TcpStream::connect((url.host.as_str(), url.port)).map_err(|err| err.to_string())?;
        stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(|err| err.to_string())?;
        stream.write_all(request_head("GET", url, &[], 0).as_bytes()).map_err(|err| err.to_string())?;
        read_response(stream)
    }

    #[test]
    fn an_announced_body_past_the_limit_is_refused_unread() {
        let (url, _server) = fake_server(|stream| {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n");
        });
        let refused = get(&url).unwrap().body().unwrap_err();
        assert!(refused.contains("over"), "{refused}");
        let refused = read_response(&b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n"[..]).unwrap().body_within(10);
        assert!(matches!(refused, Err(BodyError::Over(_))), "{refused:?}");
        let sent = read_response(&b"HTTP/1.1 200 OK\r\n\r\n01234567890"[..]).unwrap().body_within(10);
        assert!(matches!(sent, Err(BodyError::Over(_))), "{sent:?}");
        let within = read_response(&b"HTTP/1.1 200 OK\r\n\r\n0123456789"[..]).unwrap().body_within(10);
        assert_eq!(within.unwrap(), b"0123456789");
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
            let refused = get(&url).err().unwrap();
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
        let refused = get(&url).err().unwrap();
        assert!(refused.contains(&format!("more than {MAX_HEADERS} headers")), "{refused}");
    }

    #[test]
    fn a_huge_chunk_size_is_refused_without_allocating() {
        let cases = [("ffffffffffff", "ended"), ("fffffffffffffffffffffff", "bad chunk size"), ("4000000", "ended")];
        for (size, words) in cases {
            let (url, _server) = fake_server(move |stream| {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
                let _ = stream.write_all(format!("{size}\r\nabc").as_bytes());
                std::thread::sleep(Duration::from_millis(200));
            });
            let refused = get(&url).unwrap().body().unwrap_err();
            // Announced (0xffffffffffff over the limit, 0x4000000 under it), never sent: not
            // allocated ahead.
            assert!(refused.contains(words), "{size}: {refused}");
        }
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
        assert!(refused.contains("a bad chunk size"), "{refused}");
    }

    #[test]
    fn a_response_is_read_from_any_reader() {
        let text =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A:  b \r\n\r\n3;x=y\r\nabc\r\n1\r\nd\r\n0\r\n\r\n";
        let response = read_response(&text[..]).unwrap();
        assert_eq!((response.status, response.header("x-a")), (200, Some("b")));
        assert_eq!(response.body().unwrap(), b"abcd");
    }

    /// A reader that gives one byte per `read`.
    struct Drip<'a>(&'a [u8]);

    impl Read for Drip<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some((first, rest)) = self.0.split_first() else { return Ok(0) };
            match buf.first_mut() {
                Some(byte) => *byte = *first,
                None => return Ok(0),
            }
            self.0 = rest;
            Ok(1)
        }
    }

    #[test]
    fn a_body_read_as_it_arrives_is_the_body_sent() {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        let chunked = format!("{head}3;x=y\r\nabc\r\n01\r\nd\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n");
        let sized = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcdMORE";
        let to_end = "HTTP/1.1 200 OK\r\n\r\nabcd";
        for (answer, body) in [(chunked.as_str(), &b"abcd0123456789"[..]), (sized, b"abcd"), (to_end, b"abcd")] {
            let mut read = Vec::new();
            read_response(answer.as_bytes()).unwrap().into_body().read_to_end(&mut read).unwrap();
            assert_eq!(read, body);
            let mut dripped = Vec::new();
            read_response(Drip(answer.as_bytes())).unwrap().into_body().read_to_end(&mut dripped).unwrap();
            assert_eq!(dripped, body);
        }
        // Bounded by what the caller takes, whatever the server announces.
        let huge = format!("{head}ffffffffff\r\nabc");
        let mut taken = Vec::new();
        read_response(huge.as_bytes()).unwrap().into_body().take(2).read_to_end(&mut taken).unwrap();
        assert_eq!(taken, b"ab");
        let announced = read_response("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n".as_bytes()).unwrap();
        assert_eq!(announced.announced_length(), Some(99_999_999_999));
        // Cut short, a bad size, a chunk longer than its size: errors, never a short body.
        for (answer, kind) in [
            (format!("{head}5\r\nabc"), std::io::ErrorKind::UnexpectedEof),
            (format!("{head}3\r\nabc\r\n"), std::io::ErrorKind::UnexpectedEof),
            ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc".to_string(), std::io::ErrorKind::UnexpectedEof),
            (format!("{head}zz\r\nabc\r\n0\r\n\r\n"), std::io::ErrorKind::InvalidData),
            (format!("{head}2\r\nabc\r\n0\r\n\r\n"), std::io::ErrorKind::InvalidData),
            (format!("{head}{}\r\n", "1".repeat(MAX_LINE)), std::io::ErrorKind::InvalidData),
        ] {
            let mut read = Vec::new();
            let refused = read_response(answer.as_bytes()).unwrap().into_body().read_to_end(&mut read).unwrap_err();
            assert_eq!(refused.kind(), kind, "{answer:?}: {refused}");
        }
    }

    #[test]
    fn https_urls() {
        let (url, secure) = Url::parse_secure("https://etcd.example:2379").unwrap();
        assert_eq!((url.host.as_str(), url.port, url.path.as_str(), secure), ("etcd.example", 2379, "/", true));
        let (url, _) = Url::parse_secure("https://etcd.example/v3").unwrap();
        assert_eq!((url.port, url.path.as_str()), (443, "/v3"));
        let (url, secure) = Url::parse_secure("https://[::1]:2379/v3/kv/range").unwrap();
        assert_eq!((url.host.as_str(), url.port, url.path.as_str(), secure), ("::1", 2379, "/v3/kv/range", true));
        assert_eq!(url.host_port(), "[::1]:2379");
        assert_eq!(Url::parse_secure("https://h:80").unwrap().0.port, 80);
        assert!(!Url::parse_secure("http://h:1").unwrap().1);
        assert!(Url::parse_secure("ftp://h").is_err());
        assert!(Url::parse_secure("https://:1").is_err());
        let head = request_head("POST", &url, &[("content-type", "application/json".into())], 2);
        assert_eq!(
            head,
            "POST /v3/kv/range HTTP/1.1\r\nHost: [::1]:2379\r\nConnection: close\r\ncontent-type: \
             application/json\r\nContent-Length: 2\r\n\r\n"
        );
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
