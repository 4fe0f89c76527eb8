//! Just enough HTTP/1.1 and base64 for `publish`, `watch` and `serve`, over `std::net`: one
//! request per connection (`Connection: close`), bodies by `Content-Length`, chunked
//! transfer or the end of the stream. No TLS: etcd's gateway and `serve` listen on
//! plain HTTP here; put a proxy in front for anything else.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

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

/// An answer's status, headers (names lowercased) and the reader positioned at its body.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    chunked: bool,
    length: Option<usize>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The whole body.
    pub fn body(mut self) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        if self.chunked {
            while let Some(chunk) = self.chunk()? {
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(format!("a body over {MAX_BODY} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
        } else if let Some(length) = self.length {
            if length > MAX_BODY {
                return Err(format!("a body of {length} bytes, over {MAX_BODY}"));
            }
            body.resize(length, 0);
            self.reader.read_exact(&mut body).map_err(|err| format!("reading the body: {err}"))?;
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

    /// The next chunk of a chunked body, or `None` at its end.
    pub fn chunk(&mut self) -> Result<Option<Vec<u8>>, String> {
        let mut line = String::new();
        self.reader.read_line(&mut line).map_err(|err| format!("reading a chunk: {err}"))?;
        if line.is_empty() {
            return Err("the stream ended".into());
        }
        let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
            .map_err(|_| format!("a bad chunk size {line:?}"))?;
        if size == 0 {
            return Ok(None);
        }
        if size > MAX_BODY {
            return Err(format!("a chunk of {size} bytes, over {MAX_BODY}"));
        }
        let mut data = vec![0; size + 2];
        self.reader.read_exact(&mut data).map_err(|err| format!("reading a chunk: {err}"))?;
        data.truncate(size);
        Ok(Some(data))
    }
}

/// Sends one request and reads the answer's head. `timeout` bounds the connection and
/// each read (None: reads wait as long as it takes, for a watch).
pub fn request(
    method: &str,
    url: &Url,
    headers: &[(&str, String)],
    body: &[u8],
    timeout: Option<Duration>,
) -> Result<Response, String> {
    let address = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|err| format!("{}: {err}", url.authority()))?
        .next()
        .ok_or_else(|| format!("{}: no address", url.authority()))?;
    let stream = TcpStream::connect_timeout(&address, timeout.unwrap_or(Duration::from_secs(10)))
        .map_err(|err| format!("{}: {err}", url.authority()))?;
    stream.set_read_timeout(timeout).map_err(|err| err.to_string())?;
    let mut head = format!("{method} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", url.path, url.authority());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut writer = stream.try_clone().map_err(|err| err.to_string())?;
    writer.write_all(head.as_bytes()).and_then(|()| writer.write_all(body)).map_err(|err| err.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).map_err(|err| format!("{}: {err}", url.authority()))?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .filter(|_| status_line.starts_with("HTTP/1."))
        .ok_or_else(|| format!("{}: not an HTTP answer: {:?}", url.authority(), status_line.trim()))?;
    let headers = read_headers(&mut reader)?;
    let find = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let chunked = find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let length = find("content-length").and_then(|v| v.parse().ok());
    Ok(Response { status, headers, reader, chunked, length })
}

/// Header lines up to the blank line, names lowercased.
pub fn read_headers(reader: &mut impl BufRead) -> Result<Vec<(String, String)>, String> {
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|err| format!("reading headers: {err}"))?;
        let line = line.trim_end();
        if line.is_empty() {
            return Ok(headers);
        }
        if headers.len() > 100 {
            return Err("more than 100 headers".into());
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
