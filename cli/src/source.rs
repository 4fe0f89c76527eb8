//! The transport of the core's source sessions ([`shardroute::session::SourceSession`]):
//! etcd, HTTP and ZooKeeper for `publish`, `watch` and `serve`. It decides nothing (the
//! session holds every timeout, retry, member order and codec): it makes each HTTP/1.1
//! request an [`Action::Request`] names, over `std::net` (TLS with rustls for `https://`),
//! opens each TCP connection an [`Action::Connect`] names and writes what
//! [`Action::Send`] gives it, hands back what came, and keeps one timer, at
//! [`SourceSession::deadline`].
//!
//! Each request runs on a thread of its own (blocking I/O) that sends what it reads to
//! the driver over a channel. Reads are bounded as [`crate::wire`] bounds them (status and
//! header lines, header count), and a body by the request's `limit` (counted as it
//! arrives; a stream is handed on piece by piece). A connection has two threads: one
//! connects (until the action's deadline), says it is open and hands every read on as it
//! came (at most [`READ_SIZE`] bytes at once; the session buffers and bounds frames), the
//! other writes the bytes of each [`Action::Send`] in order. The channel holds at most
//! [`SEEN_BOUND`] reads: a peer that sends faster than the session takes its bytes waits
//! in its socket (TCP's own flow control), never in the driver's memory. An [`Action::Cancel`] shuts
//! the request's or the connection's socket down; whatever its threads still send is
//! dropped.

use std::collections::{BTreeMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use serde_json::{Map, Value};
use shardroute::session::source::{Action, Request, SourceError, SourceSession};

use crate::wire::{self, BodyError, Url};

/// The most bytes of a stream or a connection handed to the session at once (one read).
const READ_SIZE: usize = 64 << 10;

/// The most things seen (reads, answers) waiting for the driver at once: with
/// [`READ_SIZE`], at most 1 MiB of a peer's bytes are held before the session has them.
/// A reading thread that finds the channel full waits, and stops reading its socket.
const SEEN_BOUND: usize = 16;

/// What a request's thread saw.
enum Seen {
    /// A whole answer (`last`), or a stream's head.
    Answer { id: u64, status: u16, headers: Value, body: Vec<u8>, last: bool },
    /// The next bytes of a stream.
    Chunk { id: u64, data: Vec<u8> },
    /// A connection is open.
    Opened { id: u64 },
    /// The request's or the connection's end: `unreachable`, `closed` or `limit_exceeded`.
    Failed { id: u64, code: &'static str, message: String },
}

/// A request or a connection in flight: its socket once connected, shut down to cancel it.
#[derive(Default)]
struct Slot {
    stream: Option<TcpStream>,
    cancelled: bool,
}

/// What the driver holds of a request or a connection in flight.
struct Open {
    slot: Arc<Mutex<Slot>>,
    /// A connection's writing thread, fed in order (dropped: the thread ends).
    writes: Option<mpsc::Sender<Vec<u8>>>,
}

/// One source session and its requests and connections in flight.
pub struct Driver {
    session: SourceSession,
    start: Instant,
    tls: Arc<rustls::ClientConfig>,
    sender: mpsc::SyncSender<Seen>,
    seen: mpsc::Receiver<Seen>,
    /// What the driver itself saw (a thread it could not start): taken before the
    /// channel, never sent on it (the driver would wait on its own full channel).
    own: VecDeque<Seen>,
    open: BTreeMap<u64, Open>,
}

impl Driver {
    /// The session `config` describes (the core checks it), `https://` with `tls`.
    pub fn new(config: &Value, tls: Arc<rustls::ClientConfig>) -> Result<Driver, shardroute::Error> {
        let session = SourceSession::from_config(config)?;
        let (sender, seen) = mpsc::sync_channel(SEEN_BOUND);
        Ok(Driver { session, start: Instant::now(), tls, sender, seen, own: VecDeque::new(), open: BTreeMap::new() })
    }

    /// The session's clock: milliseconds since the driver was made.
    pub fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Starts following (the session's `start`) and runs until `each` returns false
    /// (given the session, each action for the application, and the time).
    pub fn follow(&mut self, each: &mut dyn FnMut(&SourceSession, Action, u64) -> bool) {
        let actions = self.session.start(self.now());
        self.run(actions, each);
    }

    /// Makes one call (`op`) and runs until it ends: its result, or its error.
    pub fn call(&mut self, op: &Value) -> Result<Result<Value, SourceError>, shardroute::Error> {
        let (call, actions) = self.session.call(op, self.now())?;
        let mut outcome = None;
        self.run(actions, &mut |_, action, _| {
            match action {
                Action::Done { call: done, result } if done == call => outcome = Some(Ok(result)),
                Action::Failed { call: failed, error } if failed == call => outcome = Some(Err(error)),
                _ => {}
            }
            outcome.is_none()
        });
        Ok(outcome.unwrap_or_else(|| Err(SourceError::new("unreachable", "the call ended without an answer"))))
    }

    /// Performs `actions` and those that follow, until `each` returns false (or nothing
    /// is left to wait for); then closes the session.
    fn run(&mut self, mut actions: Vec<Action>, each: &mut dyn FnMut(&SourceSession, Action, u64) -> bool) {
        loop {
            for action in actions {
                match action {
                    Action::Request(request) => self.send(request),
                    Action::Connect { id, host, port, deadline } => self.connect(id, host, port, deadline),
                    Action::Send { id, data } => self.write(id, data),
                    Action::Cancel { id } => self.cancel(id),
                    other => {
                        if !each(&self.session, other, self.now()) {
                            return self.close();
                        }
                    }
                }
            }
            actions = match self.wait() {
                Some(actions) => actions,
                None => return self.close(),
            };
        }
    }

    /// The next thing that happens: what a request saw, or the deadline passing (`None`:
    /// no deadline and no request in flight, nothing will).
    fn wait(&mut self) -> Option<Vec<Action>> {
        let seen = match (self.own.pop_front(), self.session.deadline()) {
            (Some(seen), _) => seen,
            (None, Some(at)) if at <= self.now() => return Some(self.session.timer(self.now())),
            (None, Some(at)) => match self.seen.recv_timeout(Duration::from_millis(at - self.now())) {
                Ok(seen) => seen,
                Err(_) => return Some(Vec::new()), // the deadline, checked again above
            },
            (None, None) if self.open.is_empty() => return None,
            (None, None) => self.seen.recv().ok()?,
        };
        let now = self.now();
        let id = match &seen {
            Seen::Answer { id, .. } | Seen::Chunk { id, .. } | Seen::Opened { id } | Seen::Failed { id, .. } => *id,
        };
        if !self.open.contains_key(&id) {
            return Some(Vec::new()); // cancelled
        }
        Some(match seen {
            Seen::Answer { id, status, headers, body, last } => {
                if last {
                    self.open.remove(&id);
                }
                self.session.response(id, now, status, &headers, &body)
            }
            Seen::Chunk { id, data } => self.session.chunk(id, now, &data),
            Seen::Opened { id } => self.session.opened(id, now),
            Seen::Failed { id, code, message } => {
                self.open.remove(&id);
                self.session.failed(id, now, code, &message)
            }
        })
    }

    fn send(&mut self, request: Request) {
        let slot = Arc::new(Mutex::new(Slot::default()));
        self.open.insert(request.id, Open { slot: slot.clone(), writes: None });
        let (id, sender, tls) = (request.id, self.sender.clone(), self.tls.clone());
        let connect_by = request.deadline.map(|at| self.start + Duration::from_millis(at));
        let spawned = std::thread::Builder::new().name(format!("request {id}")).spawn(move || {
            if let Err((code, message)) = exchange(&request, connect_by, &tls, &slot, &sender) {
                let _ = sender.send(Seen::Failed { id, code, message });
            }
        });
        if let Err(err) = spawned {
            self.own.push_back(Seen::Failed { id, code: "unreachable", message: format!("no thread: {err}") });
        }
    }

    /// Opens a TCP connection to `host:port` on a thread of its own, which then reads
    /// from it; its writes go to a second thread, in order.
    fn connect(&mut self, id: u64, host: String, port: u16, deadline: u64) {
        let slot = Arc::new(Mutex::new(Slot::default()));
        let (writes, to_write) = mpsc::channel();
        self.open.insert(id, Open { slot: slot.clone(), writes: Some(writes) });
        let sender = self.sender.clone();
        let connect_by = self.start + Duration::from_millis(deadline);
        let spawned = std::thread::Builder::new().name(format!("connection {id}")).spawn(move || {
            if let Err((code, message)) = connection(id, (&host, port), connect_by, &slot, &sender, to_write) {
                let _ = sender.send(Seen::Failed { id, code, message });
            }
        });
        if let Err(err) = spawned {
            self.own.push_back(Seen::Failed { id, code: "unreachable", message: format!("no thread: {err}") });
        }
    }

    /// Hands `data` to connection `id`'s writing thread (an unknown id: cancelled, dropped).
    fn write(&mut self, id: u64, data: Vec<u8>) {
        if let Some(writes) = self.open.get(&id).and_then(|open| open.writes.as_ref()) {
            let _ = writes.send(data);
        }
    }

    fn cancel(&mut self, id: u64) {
        if let Some(open) = self.open.remove(&id) {
            let mut slot = open.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            slot.cancelled = true;
            if let Some(stream) = slot.stream.take() {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }

    /// Closes the session and every request and connection still open. What the session
    /// sends as it closes (ZooKeeper's `closeSession`) is written before its connection is
    /// shut down, by the connection's writing thread, best effort: nothing waits for it.
    fn close(&mut self) {
        for action in self.session.close(self.now()) {
            match action {
                Action::Send { id, data } => self.write(id, data),
                Action::Cancel { id } => match self.open.get_mut(&id).and_then(|open| open.writes.take()) {
                    Some(writes) => {
                        drop(writes); // its thread writes what it holds, then shuts the socket down
                        if let Some(open) = self.open.remove(&id) {
                            open.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).cancelled = true;
                        }
                    }
                    None => self.cancel(id),
                },
                _ => {}
            }
        }
        let open: Vec<u64> = self.open.keys().copied().collect();
        open.into_iter().for_each(|id| self.cancel(id));
    }
}

/// A connection, plain or TLS.
trait Connection: Read + Write + Send {}
impl<T: Read + Write + Send> Connection for T {}

type Failure = (&'static str, String);

fn unreachable(message: impl std::fmt::Display) -> Failure {
    ("unreachable", message.to_string())
}

/// Makes `request` and sends what it sees to the driver; its end as an error.
fn exchange(
    request: &Request,
    connect_by: Option<Instant>,
    tls: &Arc<rustls::ClientConfig>,
    slot: &Mutex<Slot>,
    sender: &mpsc::SyncSender<Seen>,
) -> Result<(), Failure> {
    let id = request.id;
    let (url, secure) = Url::parse_secure(&request.url).map_err(unreachable)?;
    let tcp = connect((&url.host, url.port), connect_by)?;
    {
        let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if slot.cancelled {
            return Ok(());
        }
        slot.stream = Some(tcp.try_clone().map_err(unreachable)?);
    }
    let mut connection: Box<dyn Connection> = if secure {
        let name = ServerName::try_from(url.host.clone()).map_err(|err| unreachable(format!("{}: {err}", url.host)))?;
        let tls = rustls::ClientConnection::new(tls.clone(), name).map_err(unreachable)?;
        Box::new(rustls::StreamOwned::new(tls, tcp))
    } else {
        Box::new(tcp)
    };
    let headers: Vec<(&str, String)> = request.headers.iter().map(|(name, value)| (*name, value.clone())).collect();
    let body = request.body.as_deref().unwrap_or("").as_bytes();
    let head = wire::request_head(request.method, &url, &headers, body.len());
    let sent = connection.write_all(head.as_bytes()).and_then(|()| connection.write_all(body));
    sent.and_then(|()| connection.flush()).map_err(|err| unreachable(format!("{}: {err}", url.host_port())))?;
    let response = wire::read_response(connection).map_err(|err| unreachable(format!("{}: {err}", url.host_port())))?;
    let status = response.status;
    let headers: Map<String, Value> =
        response.headers.iter().map(|(name, value)| (name.clone(), Value::String(value.clone()))).collect();
    let headers = Value::Object(headers);
    if request.stream && status == 200 {
        let _ = sender.send(Seen::Answer { id, status, headers, body: Vec::new(), last: false });
        let mut body = response.into_body();
        let mut buffer = vec![0; READ_SIZE];
        loop {
            match body.read(&mut buffer) {
                Ok(0) => return Err(("closed", "the server ended the stream".into())),
                Ok(read) => {
                    if sender.send(Seen::Chunk { id, data: buffer[..read].to_vec() }).is_err() {
                        return Ok(()); // the driver is gone
                    }
                }
                Err(err) if err.kind() == ErrorKind::UnexpectedEof => return Err(("closed", err.to_string())),
                Err(err) => return Err(unreachable(err)),
            }
        }
    }
    let body = response.body_within(request.limit).map_err(|err| match err {
        BodyError::Over(message) => ("limit_exceeded", message),
        BodyError::Read(message) => unreachable(message),
    })?;
    let _ = sender.send(Seen::Answer { id, status, headers, body, last: true });
    Ok(())
}

/// Opens connection `id` to `to` (until `connect_by`), says so, writes what comes from
/// `to_write` on a thread of its own, and hands every read on; its end as an error.
fn connection(
    id: u64,
    to: (&str, u16),
    connect_by: Instant,
    slot: &Mutex<Slot>,
    sender: &mpsc::SyncSender<Seen>,
    to_write: mpsc::Receiver<Vec<u8>>,
) -> Result<(), Failure> {
    let name = host_port(to);
    let mut tcp = connect(to, Some(connect_by))?;
    let mut writer = tcp.try_clone().map_err(unreachable)?;
    {
        let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if slot.cancelled {
            return Ok(());
        }
        slot.stream = Some(tcp.try_clone().map_err(unreachable)?);
    }
    let writes = sender.clone();
    let written = name.clone();
    std::thread::Builder::new()
        .name(format!("connection {id} writes"))
        .spawn(move || {
            for data in to_write {
                if let Err(err) = writer.write_all(&data).and_then(|()| writer.flush()) {
                    let _ = writes.send(Seen::Failed { id, code: "unreachable", message: format!("{written}: {err}") });
                    return;
                }
            }
            // The driver let go of it (closed): what it sent last is written, now the end.
            let _ = writer.shutdown(Shutdown::Both);
        })
        .map_err(|err| unreachable(format!("no thread: {err}")))?;
    if sender.send(Seen::Opened { id }).is_err() {
        return Ok(()); // the driver is gone
    }
    let mut buffer = vec![0; READ_SIZE];
    loop {
        match tcp.read(&mut buffer) {
            Ok(0) => return Err(("closed", format!("{name}: the server closed the connection"))),
            Ok(read) => {
                if sender.send(Seen::Chunk { id, data: buffer[..read].to_vec() }).is_err() {
                    return Ok(());
                }
            }
            Err(err) if err.kind() == ErrorKind::Interrupted => {}
            Err(err) => return Err(unreachable(format!("{name}: {err}"))),
        }
    }
}

/// `host:port` as a message names it (`[v6]:port`).
fn host_port((host, port): (&str, u16)) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A connection to `to`: each of its addresses in turn, until `connect_by`.
fn connect(to: (&str, u16), connect_by: Option<Instant>) -> Result<TcpStream, Failure> {
    let name = host_port(to);
    let addresses = to.to_socket_addrs().map_err(|err| unreachable(format!("{name}: {err}")))?;
    let mut last = format!("{name}: no address");
    for address in addresses {
        let connected = match connect_by {
            Some(by) => {
                let left = by.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(unreachable(format!("{name}: the deadline passed")));
                }
                TcpStream::connect_timeout(&address, left)
            }
            None => TcpStream::connect(address),
        };
        match connected {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(err) => last = format!("{name}: {err}"),
        }
    }
    Err(unreachable(last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server for one connection: reads the request head, then runs `answer` on it.
    fn fake_server<T: Send + 'static>(
        answer: impl FnOnce(&mut TcpStream) -> T + Send + 'static,
    ) -> (String, std::thread::JoinHandle<T>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            answer(&mut stream)
        });
        (url, server)
    }

    fn request(url: &str, limit: u64, stream: bool) -> Request {
        let url = format!("{url}/v3/watch");
        Request { id: 1, method: "POST", url, headers: Vec::new(), body: None, deadline: None, limit, stream }
    }

    fn tls() -> Arc<rustls::ClientConfig> {
        crate::tls::config(&crate::tls::Files::default()).unwrap()
    }

    #[test]
    fn an_answer_over_the_request_limit_is_refused_as_it_arrives() {
        // Announced: refused before a byte of the body is read.
        let (url, _server) = fake_server(|stream| {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\nabc");
        });
        let (sender, _seen) = mpsc::sync_channel(SEEN_BOUND);
        let refused = exchange(&request(&url, 1000, false), None, &tls(), &Mutex::default(), &sender).unwrap_err();
        assert_eq!(refused.0, "limit_exceeded", "{refused:?}");
        // Unannounced and endless: read up to the limit only (the server cannot send its GiB).
        let (url, server) = fake_server(|stream| {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\n\r\n");
            let filler = vec![b'a'; 1 << 16];
            let mut sent = 0usize;
            while sent < 1 << 30 {
                match stream.write(&filler) {
                    Ok(n) => sent += n,
                    Err(_) => break,
                }
            }
            sent
        });
        let refused = exchange(&request(&url, 100_000, false), None, &tls(), &Mutex::default(), &sender);
        assert_eq!(refused.unwrap_err().0, "limit_exceeded");
        drop(sender);
        assert!(server.join().unwrap() < 1 << 30);
    }

    #[test]
    fn a_stream_is_handed_on_piece_by_piece_and_its_end_is_closed() {
        let (go_on, wait) = mpsc::channel::<()>();
        let (url, _server) = fake_server(move |stream| {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nline1\n\r\n");
            let _ = wait.recv(); // until the client has handed the first line on
            let _ = stream.write_all(b"6\r\nline2\n\r\n0\r\n\r\n");
        });
        let (sender, seen) = mpsc::sync_channel(SEEN_BOUND);
        let exchanged =
            std::thread::spawn(move || exchange(&request(&url, 1000, true), None, &tls(), &Mutex::default(), &sender));
        match seen.recv().unwrap() {
            Seen::Answer { status: 200, body, last: false, .. } => assert!(body.is_empty()),
            _ => panic!("expected the stream's head"),
        }
        let Seen::Chunk { data, .. } = seen.recv().unwrap() else { panic!("expected a chunk") };
        assert_eq!(data, b"line1\n");
        go_on.send(()).unwrap();
        let Seen::Chunk { data, .. } = seen.recv().unwrap() else { panic!("expected a chunk") };
        assert_eq!(data, b"line2\n");
        assert_eq!(exchanged.join().unwrap().unwrap_err().0, "closed");
    }

    #[test]
    fn a_connection_says_it_is_open_writes_in_order_and_hands_back_every_read() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // The peer echoes what it reads until it has 6 bytes, then closes.
        let peer = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            let mut buffer = [0u8; 16];
            while got.len() < 6 {
                let read = stream.read(&mut buffer).unwrap();
                got.extend_from_slice(&buffer[..read]);
                stream.write_all(&buffer[..read]).unwrap();
            }
            got
        });
        let (sender, seen) = mpsc::sync_channel(SEEN_BOUND);
        let (writes, to_write) = mpsc::channel();
        // Written before the connection is open: kept, in order, until it is.
        writes.send(b"abc".to_vec()).unwrap();
        writes.send(b"def".to_vec()).unwrap();
        let by = Instant::now() + Duration::from_secs(30);
        let slot = Arc::new(Mutex::new(Slot::default()));
        let connected = std::thread::spawn(move || connection(7, ("127.0.0.1", port), by, &slot, &sender, to_write));
        assert!(matches!(seen.recv().unwrap(), Seen::Opened { id: 7 }));
        let mut echoed = Vec::new();
        while echoed.len() < 6 {
            match seen.recv().unwrap() {
                Seen::Chunk { id: 7, data } => echoed.extend(data),
                _ => panic!("expected the echo"),
            }
        }
        assert_eq!(echoed, b"abcdef");
        assert_eq!(peer.join().unwrap(), b"abcdef");
        // The peer closed: the end, `closed` (the driver hands it to the session).
        assert_eq!(connected.join().unwrap().unwrap_err().0, "closed");
        drop(writes);
    }

    #[test]
    fn a_peer_faster_than_the_session_waits_in_its_socket_not_in_memory() {
        // A member that sends 256 MiB as fast as it can while nobody takes what the
        // connection's thread reads: the thread holds at most SEEN_BOUND reads (1 MiB) and
        // stops reading, so the peer stalls on TCP's window (a few MiB of socket buffers
        // on loopback). An unbounded channel took all 256 MiB into memory.
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let sent = Arc::new(AtomicUsize::new(0));
        let counted = sent.clone();
        let peer = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let filler = vec![b'z'; 1 << 16];
            while counted.load(Ordering::Relaxed) < 256 << 20 {
                match stream.write(&filler) {
                    Ok(n) => counted.fetch_add(n, Ordering::Relaxed),
                    Err(_) => break,
                };
            }
        });
        let (sender, seen) = mpsc::sync_channel(SEEN_BOUND);
        let (writes, to_write) = mpsc::channel::<Vec<u8>>();
        let by = Instant::now() + Duration::from_secs(30);
        let slot = Arc::new(Mutex::new(Slot::default()));
        let connected = std::thread::spawn(move || connection(9, ("127.0.0.1", port), by, &slot, &sender, to_write));
        // Until the peer makes no progress for 300 ms (or 20 s pass).
        let mut last = usize::MAX;
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(300));
            let now = sent.load(Ordering::Relaxed);
            if now == last {
                break;
            }
            last = now;
        }
        let held = sent.load(Ordering::Relaxed);
        assert!(held < 64 << 20, "the peer got {held} bytes out while the session took none");
        assert!(seen.try_iter().count() <= SEEN_BOUND + 1);
        drop(seen); // the driver is gone: the thread's next send fails and it ends
        drop(writes);
        assert!(connected.join().unwrap().is_ok());
        peer.join().unwrap();
    }

    #[test]
    fn a_silent_zookeeper_member_is_given_up_at_the_sessions_deadline() {
        // A member that takes the connection and never answers (a stopped server): the
        // call fails at its deadline and the connection is closed.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let member = listener.local_addr().unwrap().to_string();
        let peer = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buffer = [0u8; 64];
            let mut read = 0;
            while let Ok(more @ 1..) = stream.read(&mut buffer) {
                read += more;
            }
            read // until the driver closed it
        });
        let config = serde_json::json!({"source": "zookeeper", "members": [member], "request_timeout_ms": 200});
        let mut driver = Driver::new(&config, tls()).unwrap();
        let failed = driver.call(&serde_json::json!({"op": "get", "path": "/t"})).unwrap().unwrap_err();
        assert_eq!(failed.code, "unreachable", "{failed:?}");
        assert!(peer.join().unwrap() > 0, "the connect request was sent");
        assert!(driver.open.is_empty());
    }

    #[test]
    fn a_request_past_the_sessions_deadline_is_cancelled_and_its_connection_closed() {
        // A member that takes the request and drips its answer, a byte every 50 ms (no
        // per-read timeout would fire; 2,000 bytes take 100 s): the session's deadline
        // passes, the driver cancels (closes the connection) and the call fails.
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
        let config = serde_json::json!({"source": "etcd", "members": [url], "request_timeout_ms": 200});
        let mut driver = Driver::new(&config, tls()).unwrap();
        let failed = driver.call(&serde_json::json!({"op": "get", "key": "k"})).unwrap().unwrap_err();
        assert_eq!(failed.code, "unreachable", "{failed:?}");
        // Given up at the deadline (200 ms, about 4 bytes), not after the server's 2,000.
        assert!(server.join().unwrap() < 200);
        assert!(driver.open.is_empty());
    }
}
