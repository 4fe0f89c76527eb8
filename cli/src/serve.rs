//! `serve`'s HTTP side: hyper's HTTP/1 server on a current-thread tokio runtime, serving
//! the last document the follower installed (the follower itself runs on its own thread,
//! [`crate::distribute::serve`]).
//!
//! Every connection is bounded: the request head (line and headers) in bytes, header count
//! and time; the long poll in time; the answer's write in time (a client that stops reading
//! is dropped). The document is one shared [`Bytes`] that hyper writes from (no copy per
//! client), and at most [`MAX_CONNECTIONS`] connections are open: past it, the oldest one
//! still sending its request head is dropped for the newcomer, or, when every open one is
//! past its head, new ones wait in the accept backlog.
//!
//! `/route` is the routing service ([`shardroute::service`]): `GET /route?key=...` and
//! `POST /route` with a batch are answered by the core from the served document, this
//! file only moving bytes; every other path answers the document as before. A batch's
//! body is bounded before it is read ([`MAX_SERVICE_BODY_BYTES`], from its
//! `Content-Length` or as it arrives) and in time ([`BODY_TIMEOUT`]); while it arrives the
//! connection is still among those dropped first for a newcomer.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{
    HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, ETAG, IF_NONE_MATCH, RETRY_AFTER,
};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use shardroute::limits::MAX_SERVICE_BODY_BYTES;
use shardroute::service::{self, Service};

/// Most connections open at once (the default of `serve --max-connections`). It fits the
/// usual 1,024 open files per process with room to spare; each connection holds one file
/// descriptor and about 20 KiB (its read buffer and state).
pub const MAX_CONNECTIONS: usize = 512;
/// Connections the kernel holds for `serve` before it accepts them (the listen backlog):
/// where new connections wait while [`MAX_CONNECTIONS`] are open and none can be dropped.
pub const LISTEN_BACKLOG: u32 = 1024;
/// Largest request head, the request line and every header line together, in bytes. A
/// longer one is answered `431 Request Header Fields Too Large` and the connection closed,
/// after reading at most this much (hyper's `max_buf_size` and `max_header_size`).
pub const MAX_HEAD_BYTES: usize = 16 << 10;
/// Most header fields in a request; more are answered `431` (hyper's `max_headers`).
pub const MAX_HEADERS: usize = 64;
/// The whole request head must have arrived this long after the connection was accepted
/// (one deadline, not one per read: a client dripping a byte at a time is dropped at it).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The whole body of a `POST /route` must have arrived this long after its head (one
/// deadline for the body, not one per read): a client dripping it is dropped at it.
/// The core's [`service::BODY_TIMEOUT_MS`].
pub const BODY_TIMEOUT: Duration = Duration::from_millis(service::BODY_TIMEOUT_MS);
/// The longest `Prefer: wait=N` honoured, in seconds: a long poll answers by then.
pub const MAX_WAIT_S: u64 = 30;
/// How long the answer may take to write, at the least: a client that does not read it
/// by [`WRITE_TIMEOUT`] plus one second per [`WRITE_MIN_RATE`] bytes of the document is
/// dropped (its connection closed, its share of the document released).
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// The slowest reader a large document waits for, in bytes per second (1 MiB/s: 64 MiB,
/// the largest document, has 74 s).
pub const WRITE_MIN_RATE: u64 = 1 << 20;
/// The pause after an accept that failed for want of resources (no file descriptor left,
/// no memory): the server drops the oldest connection still sending its head, waits this
/// long and accepts again; it never exits for it.
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// File descriptors kept free for the follower's own connections once the process has run
/// out: on `EMFILE` with `n` connections open, the cap becomes `n - FD_RESERVE` (at least 1),
/// so later newcomers take the place of slow clients instead of failing to be accepted.
pub const FD_RESERVE: usize = 4;

/// The document served: its JSON text (shared by every answer) and its strong ETag.
pub struct Document {
    pub body: Bytes,
    pub tag: HeaderValue,
}

/// What the follower's thread updates: the last installed document (`None` until the first).
pub type Current = watch::Sender<Option<Arc<Document>>>;

/// The open connections: how many, and those still sending their request head (the ones
/// dropped first when the table is full), oldest first.
struct Table {
    open: usize,
    reading: BTreeMap<u64, Arc<Notify>>,
    next: u64,
}

struct Shared {
    table: Mutex<Table>,
    /// The routing service of the document served, made once per document.
    routes: Routes,
    /// Told when a connection closes.
    freed: Notify,
    current: watch::Receiver<Option<Arc<Document>>>,
    /// `--max-connections`, lowered when the process runs out of file descriptors.
    cap: std::sync::atomic::AtomicUsize,
}

impl Shared {
    fn cap(&self) -> usize {
        self.cap.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Drops the oldest connection still sending its head; false when there is none.
    fn evict_oldest(&self) -> bool {
        match self.table().reading.pop_first() {
            Some((_, evicted)) => {
                evicted.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Where a connection is: its deadline moves from the head's (or a body's, still among the
/// connections dropped first) to the long poll's to the write's.
#[derive(Clone, Copy)]
enum Phase {
    Head,
    Body(Instant),
    Answering(Instant),
}

/// Binds `listen` (every address it names is tried in turn) with [`LISTEN_BACKLOG`].
pub fn bind(listen: &str) -> Result<std::net::TcpListener, String> {
    use std::net::ToSocketAddrs;
    let addresses: Vec<SocketAddr> = listen.to_socket_addrs().map_err(|err| format!("{listen}: {err}"))?.collect();
    let mut last = format!("{listen}: no address");
    for address in addresses {
        let socket = if address.is_ipv4() { TcpSocket::new_v4() } else { TcpSocket::new_v6() };
        let bound = socket.and_then(|socket| {
            socket.set_reuseaddr(true)?;
            socket.bind(address)?;
            socket.listen(LISTEN_BACKLOG)
        });
        match bound.and_then(|listener| listener.into_std()) {
            Ok(listener) => return Ok(listener),
            Err(err) => last = format!("{listen}: {err}"),
        }
    }
    Err(last)
}

/// A runtime for [`bind`] and [`run`]: one thread, I/O and timers.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build()
}

/// Serves `current` on `listener` until the process ends; at most `cap` connections at once.
pub async fn run(listener: std::net::TcpListener, current: watch::Receiver<Option<Arc<Document>>>, cap: usize) {
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("shardroute: listen: {err}");
            return;
        }
    };
    let shared = Arc::new(Shared {
        table: Mutex::new(Table { open: 0, reading: BTreeMap::new(), next: 0 }),
        routes: Arc::new(tokio::sync::Mutex::new(None)),
        freed: Notify::new(),
        current,
        cap: cap.max(1).into(),
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_header_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .keep_alive(false)
        .half_close(true)
        .title_case_headers(true)
        .writev(true);
    let builder = Arc::new(builder);
    let mut failures = 0u64;
    loop {
        // Room for one more: under the cap, or the oldest connection still sending its
        // head dropped to make it (at most one is dropped ahead of a newcomer).
        loop {
            let freed = shared.freed.notified();
            if shared.table().open < shared.cap() {
                break;
            }
            shared.evict_oldest();
            freed.await;
        }
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(err) => {
                // Out of file descriptors or memory: free what a slow client holds, pause.
                failures += 1;
                if failures.is_power_of_two() {
                    eprintln!("shardroute: accept: {err} ({failures} so far); the server goes on");
                }
                match err.raw_os_error() {
                    // EMFILE, ENFILE: no file descriptor left at this many connections.
                    Some(24 | 23) => {
                        let open = shared.table().open;
                        let cap = open.saturating_sub(FD_RESERVE).max(1);
                        if cap < shared.cap() {
                            shared.cap.store(cap, std::sync::atomic::Ordering::Relaxed);
                            eprintln!(
                                "shardroute: out of file descriptors at {open} connections; at most {cap} from now on"
                            );
                        }
                        shared.evict_oldest();
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                    }
                    // ENOMEM, ENOBUFS: memory.
                    Some(12 | 105) => {
                        shared.evict_oldest();
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                    }
                    _ => {}
                }
                continue;
            }
        };
        let evicted = Arc::new(Notify::new());
        let id = {
            let mut table = shared.table();
            table.open += 1;
            table.next += 1;
            let id = table.next;
            table.reading.insert(id, Arc::clone(&evicted));
            id
        };
        let guard = Open { shared: Arc::clone(&shared), id };
        tokio::spawn(connection(stream, guard, evicted, Arc::clone(&builder)));
    }
}

/// One open connection in the table; closing it (dropping this) frees its place.
struct Open {
    shared: Arc<Shared>,
    id: u64,
}

impl Open {
    /// The head is in: no longer among the connections dropped first.
    fn answering(&self) {
        self.shared.table().reading.remove(&self.id);
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        {
            let mut table = self.shared.table();
            table.open -= 1;
            table.reading.remove(&self.id);
        }
        self.shared.freed.notify_one();
    }
}

async fn connection(
    stream: TcpStream,
    open: Open,
    evicted: Arc<Notify>,
    builder: Arc<hyper::server::conn::http1::Builder>,
) {
    let _ = stream.set_nodelay(true);
    let (phase, mut phases) = watch::channel(Phase::Head);
    let current = open.shared.current.clone();
    let routes = Arc::clone(&open.shared.routes);
    let service = hyper::service::service_fn(move |request| {
        let (current, routes, phase) = (current.clone(), Arc::clone(&routes), phase.clone());
        async move {
            if service::handles(request.uri().path_and_query().map_or("/", |target| target.as_str())) {
                route(request, current, routes, phase).await
            } else {
                answer(request, current, phase).await
            }
        }
    });
    let served = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(served);
    let mut deadline = Instant::now() + HEAD_TIMEOUT;
    let mut reading = true;
    let mut phases_open = true;
    loop {
        tokio::select! {
            _ = &mut served => break,
            _ = tokio::time::sleep_until(deadline) => break,
            _ = evicted.notified(), if reading => break,
            changed = phases.changed(), if phases_open => match changed {
                Ok(()) => match *phases.borrow_and_update() {
                    Phase::Answering(until) => {
                        if reading {
                            reading = false;
                            open.answering();
                        }
                        deadline = until;
                    }
                    Phase::Body(until) => deadline = until,
                    Phase::Head => {}
                },
                Err(_) => phases_open = false,
            },
        }
    }
    // Dropping `served` closes the socket; dropping `open` frees the place.
}

/// The body of every answer: the shared document, or nothing.
type Body = Full<Bytes>;

fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_LENGTH, HeaderValue::from_static("0"));
    response
}

/// One request: `GET` (any path) answers the document, `304` for its tag, or waits for a
/// change up to `Prefer: wait=N` seconds; anything else `405`; `503` before the first document.
async fn answer(
    request: Request<hyper::body::Incoming>,
    mut current: watch::Receiver<Option<Arc<Document>>>,
    phase: watch::Sender<Phase>,
) -> Result<Response<Body>, Infallible> {
    if request.method() != Method::GET {
        let _ = phase.send(Phase::Answering(Instant::now() + WRITE_TIMEOUT));
        let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
        response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET"));
        return Ok(response);
    }
    let headers = request.headers();
    let held = headers.get(IF_NONE_MATCH).cloned();
    let wait = headers
        .get("prefer")
        .and_then(|prefer| prefer.to_str().ok())
        .and_then(|prefer| {
            prefer.split(',').find_map(|part| part.trim().strip_prefix("wait=").and_then(|n| n.parse::<u64>().ok()))
        })
        .map_or(0, |n| n.min(MAX_WAIT_S));
    let until = Instant::now() + Duration::from_secs(wait);
    // The long poll's own deadline, and a second for the answer to be made.
    let _ = phase.send(Phase::Answering(until + Duration::from_secs(1)));
    loop {
        let unchanged = {
            let document = current.borrow_and_update();
            held.is_some() && document.as_ref().map(|document| &document.tag) == held.as_ref()
        };
        if !unchanged || !matches!(tokio::time::timeout_at(until, current.changed()).await, Ok(Ok(()))) {
            break;
        }
    }
    let document = current.borrow().clone();
    let response = match document {
        None => {
            let mut response = empty(StatusCode::SERVICE_UNAVAILABLE);
            response.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("1"));
            response
        }
        Some(document) if Some(&document.tag) == held.as_ref() => {
            let mut response = empty(StatusCode::NOT_MODIFIED);
            response.headers_mut().insert(ETAG, document.tag.clone());
            response
        }
        Some(document) => {
            let length = document.body.len();
            let mut response = Response::new(Full::new(document.body.clone()));
            let headers = response.headers_mut();
            headers.insert(ETAG, document.tag.clone());
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
            let _ = phase.send(Phase::Answering(Instant::now() + write_budget(length)));
            return Ok(response);
        }
    };
    let _ = phase.send(Phase::Answering(Instant::now() + WRITE_TIMEOUT));
    Ok(response)
}

/// How long an answer of `length` bytes may take to write.
fn write_budget(length: usize) -> Duration {
    WRITE_TIMEOUT + Duration::from_secs(length as u64 / WRITE_MIN_RATE)
}

/// The routing service of the last document asked about (the document it was made from,
/// and the service), `None` before the first `/route` request.
type Routes = Arc<tokio::sync::Mutex<Option<(Arc<Document>, Arc<Service>)>>>;

/// The service of `document`: the cached one when it was made from this document, else
/// one made now (the document parsed off the I/O thread), kept for the next requests.
async fn service_of(document: Arc<Document>, routes: &Routes) -> Result<Arc<Service>, shardroute::Error> {
    let mut cached = routes.lock().await;
    if let Some((made_from, service)) = cached.as_ref() {
        if Arc::ptr_eq(made_from, &document) {
            return Ok(Arc::clone(service));
        }
    }
    let text = document.body.clone();
    let made = tokio::task::spawn_blocking(move || {
        let text = std::str::from_utf8(&text).map_err(|err| {
            shardroute::Error::new(shardroute::ErrorKind::InvalidTopology, format!("the served document: {err}"))
        })?;
        shardroute::Router::from_json(text).map(|router| Arc::new(Service::new(router)))
    })
    .await
    .map_err(|err| shardroute::Error::new(shardroute::ErrorKind::Unavailable, format!("routing service: {err}")))??;
    *cached = Some((document, Arc::clone(&made)));
    Ok(made)
}

/// A `/route` request: its body read within [`MAX_SERVICE_BODY_BYTES`] and
/// [`BODY_TIMEOUT`], answered by the core's [`Service`].
async fn route(
    request: Request<hyper::body::Incoming>,
    current: watch::Receiver<Option<Arc<Document>>>,
    routes: Routes,
    phase: watch::Sender<Phase>,
) -> Result<Response<Body>, Infallible> {
    let (parts, body) = request.into_parts();
    let target = parts.uri.path_and_query().map_or("/", |target| target.as_str());
    let held: Vec<&str> = parts.headers.get_all(IF_NONE_MATCH).iter().filter_map(|value| value.to_str().ok()).collect();
    let held = (!held.is_empty()).then(|| held.join(", "));
    let mut bytes = Bytes::new();
    let answer = if parts.method == Method::POST {
        let length = parts.headers.get(CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
        match length {
            Some(length) if length > MAX_SERVICE_BODY_BYTES => Some(service::body_too_large(length)),
            _ => {
                let _ = phase.send(Phase::Body(Instant::now() + BODY_TIMEOUT));
                match Limited::new(body, MAX_SERVICE_BODY_BYTES as usize).collect().await {
                    Ok(collected) => {
                        bytes = collected.to_bytes();
                        None
                    }
                    // Past the limit, or the client gone: nothing more is read.
                    Err(_) => Some(service::body_too_large(MAX_SERVICE_BODY_BYTES + 1)),
                }
            }
        }
    } else {
        None
    };
    let _ = phase.send(Phase::Answering(Instant::now() + WRITE_TIMEOUT));
    let answer = match answer {
        Some(refused) => refused,
        None => {
            let document = current.borrow().clone();
            match document {
                None => service::unavailable(),
                Some(document) => match service_of(document, &routes).await {
                    Ok(service) => service.answer(&service::Request {
                        method: parts.method.as_str(),
                        target,
                        if_none_match: held.as_deref(),
                        body: &bytes,
                    }),
                    Err(err) => {
                        eprintln!("shardroute: routing service: {err}");
                        service::unavailable()
                    }
                },
            }
        }
    };
    let length = answer.body.len();
    let mut response = Response::new(Full::new(Bytes::from(answer.body)));
    *response.status_mut() = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    for (name, value) in &answer.headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(*name, value);
        }
    }
    headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
    let _ = phase.send(Phase::Answering(Instant::now() + write_budget(length)));
    Ok(response)
}
