//! `shardroute serve`'s routing service (`GET /route?key=...`, `POST /route`) against a
//! real server: its answers are the core router's for thousands of keys (one by one, in
//! batches, from several clients at once), the document endpoint is as before, and hostile
//! requests (bodies too large or never finished, bytes that are no key, too many keys,
//! malformed JSON) get a JSON `4xx` with the core's code while serve goes on.
//!
//! serve follows the HTTP source of a tiny in-test server (port 0, read back) and binds
//! port 0 itself, printing its URL; each serve is killed when its test ends.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shardroute::{Key, Router};

mod serve_support;
use serve_support::{source, Serve};

const CLI: &str = env!("CARGO_BIN_EXE_shardroute");

/// Three nodes, two with addresses, on a ring.
const DOCUMENT: &str = r#"{"format":"shardroute/1","epoch":12,"nodes":[{"id":"a","address":"10.0.0.1:5432"},{"id":"b"},{"id":"c","address":"10.0.0.3:5432","weight":2}],"strategy":{"type":"ring","points_per_node":64}}"#;

impl Serve {
    /// Starts serve and waits until `/route` answers from the first document.
    fn start(flags: &[&str]) -> Serve {
        let child = Command::new(CLI)
            .args(["serve", "--http", &source(DOCUMENT.to_string()), "--listen", "127.0.0.1:0"])
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
        loop {
            let answer = serve.ask(b"GET /route?key=ready HTTP/1.1\r\nHost: serve\r\nConnection: close\r\n\r\n");
            if answer.status == 200 {
                break;
            }
            assert_eq!(answer.status, 503, "before the first document: {}", answer.text());
            assert_eq!(answer.json()["error"]["code"], "unavailable");
            assert!(Instant::now() < deadline, "serve did not serve its first document in 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        serve
    }

    /// Sends `request` whole and reads the whole answer.
    fn ask(&self, request: &[u8]) -> Answer {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        stream.write_all(request).unwrap();
        read_answer(&mut stream)
    }

    fn get(&self, target: &str, headers: &str) -> Answer {
        self.ask(format!("GET {target} HTTP/1.1\r\nHost: serve\r\n{headers}Connection: close\r\n\r\n").as_bytes())
    }

    fn post(&self, body: &[u8]) -> Answer {
        let mut request = format!(
            "POST /route HTTP/1.1\r\nHost: serve\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        self.ask(&request)
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|err| panic!("{err}: {}", self.text()))
    }

    fn text(&self) -> String {
        format!("{}\n{}", self.head, String::from_utf8_lossy(&self.body))
    }

    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim().to_string())
        })
    }
}

fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| {
        panic!("no answer head in {:?}", String::from_utf8_lossy(&bytes));
    });
    let head = String::from_utf8_lossy(&bytes[..end]).to_string();
    let status = head.split_whitespace().nth(1).and_then(|status| status.parse().ok()).unwrap();
    Answer { status, head, body: bytes[end + 4..].to_vec() }
}

/// `text` percent-encoded, every byte but unreserved ones escaped.
fn encoded(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// What the service answers for `key`, from the core router.
fn expected(router: &Router, key: Key<'_>) -> Value {
    let node = router.node(key).unwrap();
    let mut answer = json!({"shard": router.route(key).unwrap(), "node": node});
    if let Some(address) = &router.nodes().iter().find(|each| each.id == node).unwrap().address {
        answer["address"] = address.clone().into();
    }
    answer
}

#[test]
fn the_service_answers_as_the_core_router_does_under_load() {
    let serve = Serve::start(&[]);
    let router = Router::from_json(DOCUMENT).unwrap();
    // Four clients at once, 750 keys each, one request per key.
    std::thread::scope(|scope| {
        for client in 0..4 {
            let (serve, router) = (&serve, &router);
            scope.spawn(move || {
                for i in 0..750 {
                    let key = format!("tenant-{client}/user:{i} é&=+?");
                    let answer = serve.get(&format!("/route?key={}", encoded(key.as_bytes())), "");
                    assert_eq!(answer.status, 200, "{}", answer.text());
                    let mut want = expected(router, Key::from(key.as_str()));
                    want["epoch"] = 12.into();
                    assert_eq!(answer.json(), want, "{key}");
                }
            });
        }
        // Meanwhile, batches of the most keys allowed.
        for batch in 0..3 {
            let keys: Vec<String> =
                (0..shardroute::limits::MAX_SERVICE_KEYS).map(|i| format!("order:{batch}:{i}")).collect();
            let answer = serve.post(json!({"keys": keys}).to_string().as_bytes());
            assert_eq!(answer.status, 200, "{}", answer.text());
            let answer = answer.json();
            assert_eq!(answer["epoch"], 12);
            let answers = answer["answers"].as_array().unwrap();
            assert_eq!(answers.len(), keys.len());
            for (key, got) in keys.iter().zip(answers) {
                assert_eq!(*got, expected(&router, Key::from(key.as_str())), "{key}");
            }
        }
    });
    // Integer keys, hex keys.
    for i in 0..300u64 {
        let id = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let answer = serve.get(&format!("/route?key={id}&form=u64"), "").json();
        assert_eq!(answer["shard"], expected(&router, Key::U64(id))["shard"]);
        let bytes = [0xFF, i as u8, 0x00];
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let answer = serve.get(&format!("/route?key={hex}&form=hex"), "").json();
        assert_eq!(answer["shard"], expected(&router, Key::Bytes(&bytes))["shard"]);
    }
    let mixed = serve.post(br#"{"keys": [7, "7"]}"#).json();
    assert_eq!(mixed["answers"], json!([expected(&router, Key::U64(7)), expected(&router, Key::from("7"))]));
}

#[test]
fn the_document_endpoint_is_as_before_and_route_answers_carry_their_etag() {
    let serve = Serve::start(&[]);
    let router = Router::from_json(DOCUMENT).unwrap();
    let document = serve.get("/", "");
    assert_eq!((document.status, document.header("etag").as_deref()), (200, Some("\"epoch-12\"")));
    assert_eq!(Router::from_json(std::str::from_utf8(&document.body).unwrap()).unwrap().to_json(), router.to_json());
    assert_eq!(serve.get("/anything", "If-None-Match: \"epoch-12\"\r\n").status, 304);

    let answer = serve.get("/route?key=user%3A1", "");
    let tag = answer.header("etag").unwrap();
    assert_eq!(Some(tag.as_str()), Some(shardroute::service::Service::new(router.clone()).etag()));
    assert_eq!(answer.header("content-type").as_deref(), Some("application/json"));
    let again = serve.get("/route?key=user%3A1", &format!("If-None-Match: {tag}\r\n"));
    assert_eq!((again.status, again.body.len(), again.header("etag")), (304, 0, Some(tag.clone())));
    let other = serve.get("/route?key=user%3A1", "If-None-Match: \"epoch-12\"\r\n");
    assert_eq!(other.status, 200);
}

#[test]
fn hostile_requests_get_a_json_4xx_with_the_cores_code_and_serve_goes_on() {
    let mut serve = Serve::start(&[]);
    let too_many = json!({"keys": vec!["k"; shardroute::limits::MAX_SERVICE_KEYS as usize + 1]}).to_string();
    let deep = format!("{{\"keys\": {}{}}}", "[".repeat(100), "]".repeat(100));
    let bodies: Vec<(&[u8], u16, &str)> = vec![
        (br#"{"keys": ["\ud800"]}"#, 400, "invalid_key"),
        (b"{\"keys\": [\"\xC3\x28\"]}", 400, "invalid_key"),
        (br#"{"keys": [-1]}"#, 400, "invalid_key"),
        (br#"{"keys": ["zz"], "form": "hex"}"#, 400, "invalid_key"),
        (br#"{"keys": ["#, 400, "invalid_argument"),
        (b"\x00\x01\x02", 400, "invalid_argument"),
        (br#"{"keys": [], "extra": 1}"#, 400, "invalid_argument"),
        (too_many.as_bytes(), 413, "limit_exceeded"),
        (deep.as_bytes(), 413, "limit_exceeded"),
    ];
    for (body, status, code) in bodies {
        let answer = serve.post(body);
        assert_eq!((answer.status, answer.json()["error"]["code"].as_str()), (status, Some(code)), "{}", answer.text());
        assert_eq!(answer.header("content-type").as_deref(), Some("application/json"));
    }
    for (target, status, code) in [
        ("/route?key=%FF%FE", 400, "invalid_key"),
        ("/route?key=1&form=u64&form=hex", 400, "invalid_argument"),
        ("/route?key=%G1", 400, "invalid_argument"),
        ("/route?nokey=1", 400, "invalid_argument"),
    ] {
        let answer = serve.get(target, "");
        assert_eq!((answer.status, answer.json()["error"]["code"].as_str()), (status, Some(code)), "{target}");
    }
    let put = serve.ask(b"PUT /route HTTP/1.1\r\nHost: serve\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
    assert_eq!((put.status, put.header("allow").as_deref()), (405, Some("GET, POST")));
    assert_eq!(put.json()["error"]["code"], "invalid_argument");

    // A Content-Length past the limit: refused from the head, the body never sent.
    let huge = serve.ask(b"POST /route HTTP/1.1\r\nHost: serve\r\nContent-Length: 1073741824\r\n\r\n");
    assert_eq!((huge.status, huge.json()["error"]["code"].as_str()), (413, Some("limit_exceeded")));
    // A chunked body that never ends: refused once past the limit; serve reads no more.
    let mut stream = TcpStream::connect(&serve.address).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(b"POST /route HTTP/1.1\r\nHost: serve\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap();
    let chunk = [b"10000\r\n".to_vec(), vec![b' '; 0x10000], b"\r\n".to_vec()].concat();
    let mut sent = 0usize;
    while sent < 256 << 20 {
        match stream.write(&chunk) {
            Ok(n) => sent += n,
            Err(err) if matches!(err.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => break,
            Err(err) => panic!("after {sent} bytes serve neither read nor closed: {err}"),
        }
    }
    eprintln!("an endless chunked body: serve stopped reading after {} KiB", sent >> 10);
    assert!(sent < 64 << 20, "serve read {sent} bytes of one body");
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    // 413 when it arrives before the reset of the unread bytes does.
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 413"), "{answer}");

    assert!(serve.alive(), "serve exited");
    assert_eq!(serve.get("/route?key=still", "").status, 200);
}

#[test]
fn a_body_that_never_ends_is_dropped_first_for_a_newcomer_and_at_its_deadline() {
    // Room for three connections. serve drops the oldest connection still sending its
    // request (its head or, here, its body) as soon as the table is full, so with three
    // clients stuck in their bodies a newcomer is answered at once, not after the body
    // deadline (10 s): it is given half of that. Were a connection counted as answering
    // while its body came, the newcomer would be the one dropped, or wait for a deadline.
    let serve = Serve::start(&["--max-connections", "3"]);
    let stuck: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut stream = TcpStream::connect(&serve.address).unwrap();
            stream
                .write_all(b"POST /route HTTP/1.1\r\nHost: serve\r\nContent-Length: 1000\r\n\r\n{\"keys\": [")
                .unwrap();
            // Its head read before the next client comes.
            std::thread::sleep(Duration::from_millis(300));
            stream
        })
        .collect();
    let mut newcomer = TcpStream::connect(&serve.address).unwrap();
    newcomer.set_read_timeout(Some(serve::BODY_TIMEOUT / 2)).unwrap();
    newcomer.write_all(b"GET /route?key=newcomer HTTP/1.1\r\nHost: serve\r\nConnection: close\r\n\r\n").unwrap();
    let answer = read_answer(&mut newcomer);
    assert_eq!(answer.status, 200, "{}", answer.text());
    // Each stuck client was closed with no answer.
    for mut stream in stuck {
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut answer = Vec::new();
        match stream.read_to_end(&mut answer) {
            Ok(_) => assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer)),
            Err(err) => assert_eq!(err.kind(), ErrorKind::ConnectionReset, "still open after 30 s: {err}"),
        }
    }
}

/// serve's body deadline (cli/src/serve.rs's `BODY_TIMEOUT`).
mod serve {
    pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
}
