//! `shardroute.ClusterSession`: a shell over core's sans-IO Redis Cluster session
//! ([`sr::session`]). Converts arguments and actions; every decision is the core's.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyString};
use shardroute as sr;
use sr::session as ss;

use crate::errors;
use crate::json::value_to_py;
use crate::key::{str_from_py, type_name, u32_from_py, u64_from_py, Key};
use crate::router::Router;

/// The session's defaults as a dict (max_redirects, refresh_interval_ms,
/// retry_budget_ms, backoff_first_ms, backoff_max_ms, connect_timeout_ms,
/// command_timeout_ms, stall_ms, wait_timeout_ms, read_from_replicas, auto_pipeline,
/// pipeline_max_commands, pipeline_max_writes): the core's constants, which every
/// client uses unless told otherwise.
#[pyfunction]
pub fn session_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    value_to_py(py, &ss::ClusterConfig::default().to_value())
}

/// The decisions of a Redis Cluster client, without I/O (sans-IO, like h11's
/// Connection): the shell asks where to send a command (poll), sends it, and hands back
/// what happened and when (succeeded, failed, unreachable, with now_ms from its
/// monotonic clock); the answer is the next Action: send where, wait until when,
/// refresh the table, done, or fail with a code.
///
/// ClusterSession(seeds, config=None): seeds are "host:port" startup nodes (IPv6 as
/// "[::1]:7000" or "::1:7000"); config a mapping of the fields of session_defaults().
/// The first poll asks for a refresh (CLUSTER SHARDS from refresh_candidates(), given to
/// refreshed()).
///
/// Raises InvalidArgumentError for no seeds, a seed that is not host:port, an unknown
/// config field or a value out of range.
#[pyclass(module = "shardroute")]
pub struct ClusterSession {
    inner: ss::ClusterSession,
    /// The `Router` the `router` property gave last, by epoch: a router of one epoch is
    /// one document (epochs only grow), so it is wrapped once, not once per read.
    router: Option<(u64, Py<Router>)>,
    /// The endpoints' addresses as Python strings, by the core's `endpoints_version`: the
    /// steady path (`_send_now`) hands one out per command without making it again.
    addresses: Option<(u64, Vec<Py<PyString>>)>,
}

/// One command's progress (its slot, its redirects, its retries), made by
/// ClusterSession.command and passed back to the session's calls.
#[pyclass(module = "shardroute")]
pub struct Command {
    inner: ss::Command,
}

/// What to do next for a command. kind is "send" (to address = host:port, after ASKING
/// when asking, over a READONLY connection when readonly), "wait" (sleep delay_ms, until
/// until_ms on the shell's clock, then poll), "refresh" (refresh the table, then poll),
/// "done" (the reply stands: return it, or raise the command's own error) or "fail"
/// (raise: code is "too_many_redirects" or "unavailable", message says why). Fields
/// that do not apply to the kind are None.
#[pyclass(module = "shardroute", frozen)]
pub struct Action {
    #[pyo3(get)]
    kind: &'static str,
    #[pyo3(get)]
    address: Option<String>,
    #[pyo3(get)]
    host: Option<String>,
    #[pyo3(get)]
    port: Option<u16>,
    #[pyo3(get)]
    asking: Option<bool>,
    #[pyo3(get)]
    readonly: Option<bool>,
    #[pyo3(get)]
    until_ms: Option<u64>,
    #[pyo3(get)]
    delay_ms: Option<u32>,
    #[pyo3(get)]
    code: Option<&'static str>,
    #[pyo3(get)]
    message: Option<String>,
}

impl Action {
    fn from_core(action: ss::Action) -> Action {
        let ss::ActionFields { kind, address, host, port, asking, readonly, until_ms, delay_ms, code, message } =
            action.into();
        Action { kind, address, host, port, asking, readonly, until_ms, delay_ms, code, message }
    }
}

#[pymethods]
impl Action {
    /// The ShardrouteError of a "fail" action (TooManyRedirectsError, UnavailableError),
    /// to raise or to chain; None for other kinds.
    fn error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let code = self.code?;
        let kind = sr::ErrorKind::ALL.into_iter().find(|kind| kind.code() == code)?;
        let message = self.message.clone().unwrap_or_default();
        Some(errors::to_py(sr::Error::new(kind, message)).into_value(py).into_any())
    }

    fn __repr__(&self) -> String {
        match self.kind {
            "send" => format!(
                "Action(send {}{}{})",
                self.address.as_deref().unwrap_or(""),
                if self.asking == Some(true) { " asking" } else { "" },
                if self.readonly == Some(true) { " readonly" } else { "" }
            ),
            "wait" => format!("Action(wait {} ms)", self.delay_ms.unwrap_or(0)),
            "fail" => format!("Action(fail {})", self.code.unwrap_or("")),
            kind => format!("Action({kind})"),
        }
    }
}

#[pymethods]
impl Command {
    /// The command's hash slot.
    #[getter]
    fn slot(&self) -> u32 {
        self.inner.slot()
    }

    /// Redirects (MOVED, ASK) followed so far.
    #[getter]
    fn redirects(&self) -> u32 {
        self.inner.redirects()
    }

    /// Whether an attempt the session sent is in flight and its reply still wanted (from
    /// a "send" until its outcome, or until on_deadline() gave it up): after on_deadline(),
    /// a shell whose attempt is no longer in flight abandons it.
    #[getter]
    fn in_flight(&self) -> bool {
        self.inner.in_flight()
    }
}

/// What `_send_now` answers for a command sent at once: `(address, readonly, deadline,
/// reply_deadline)`.
type SentNow = (Py<PyString>, bool, Option<u64>, Option<u64>);

fn access(value: &Bound<'_, PyAny>) -> PyResult<ss::Access> {
    // Borrowed when it is text (every command passes one); else the argument's error.
    if let Some(name) = value.cast::<PyString>().ok().and_then(|text| text.to_str().ok()) {
        return ss::Access::from_name(name).map_err(errors::to_py);
    }
    ss::Access::from_name(&str_from_py(value, "access")?).map_err(errors::to_py)
}

/// `now_ms`: an `int` in `0..2**64` (`invalid_argument` otherwise: a time, not a key).
fn now(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(int) = value.cast_exact::<PyInt>() {
        if let Ok(ms) = int.extract::<u64>() {
            return Ok(ms);
        }
    }
    u64_from_py(value, "now_ms").map_err(|err| {
        let message = err.value(value.py()).getattr("message").and_then(|m| m.extract::<String>()).unwrap_or_default();
        errors::new(sr::ErrorKind::InvalidArgument, message)
    })
}

/// A JSON value from Python data ([`crate::json::data_value`]: the JavaScript packages'
/// rules and words), refusing what JSON cannot hold with `invalid_argument`.
fn json_value(value: &Bound<'_, PyAny>, what: &str) -> PyResult<serde_json::Value> {
    crate::json::data_value(value, what, sr::ErrorKind::InvalidArgument)
}

/// A connection of auto-pipelining: its address (a `str`) and whether it is `READONLY` (a
/// `bool`), `invalid_argument` otherwise.
fn connection(address: &Bound<'_, PyAny>, readonly: &Bound<'_, PyAny>) -> PyResult<(String, bool)> {
    let address = str_from_py(address, "address")?;
    let readonly = readonly.cast::<PyBool>().map(|flag| flag.is_true()).map_err(|_| {
        errors::new(sr::ErrorKind::InvalidArgument, format!("readonly must be a bool, not {}", type_name(readonly)))
    })?;
    Ok((address, readonly))
}

fn keys_of<'py>(keys: &Bound<'py, PyAny>) -> PyResult<Vec<Key<'py>>> {
    if Key::is_text_or_bytes(keys) {
        return Err(errors::new(
            sr::ErrorKind::InvalidArgument,
            "keys: expected a list of keys, not a single key (wrap it: [key])",
        ));
    }
    let iterator = keys.try_iter().map_err(|_| {
        errors::new(sr::ErrorKind::InvalidArgument, format!("keys: expected a list of keys, not {}", type_name(keys)))
    })?;
    iterator.map(|key| Key::from_py_owned(key?)).collect()
}

#[pymethods]
impl ClusterSession {
    #[new]
    #[pyo3(signature = (seeds, config = None))]
    fn new(seeds: &Bound<'_, PyAny>, config: Option<&Bound<'_, PyAny>>) -> PyResult<ClusterSession> {
        if Key::is_text_or_bytes(seeds) {
            return Err(errors::new(
                sr::ErrorKind::InvalidArgument,
                "seeds: expected a list of \"host:port\", not one str",
            ));
        }
        let seeds: Vec<String> = seeds
            .try_iter()
            .map_err(|_| {
                errors::new(sr::ErrorKind::InvalidArgument, format!("seeds: expected a list, not {}", type_name(seeds)))
            })?
            .map(|seed| str_from_py(&seed?, "seed"))
            .collect::<PyResult<_>>()?;
        let config = match config {
            None => ss::ClusterConfig::default(),
            Some(config) if config.is_none() => ss::ClusterConfig::default(),
            Some(config) => ss::ClusterConfig::from_value(&json_value(config, "config")?).map_err(errors::to_py)?,
        };
        let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
        let inner = ss::ClusterSession::new(&seeds, config).map_err(errors::to_py)?;
        Ok(ClusterSession { inner, router: None, addresses: None })
    }

    /// Begins a command on keys (a list: one key, or the keys of a multi-key command)
    /// with access "read" or "write", at now_ms.
    ///
    /// Raises CrossSlotError when the keys are in different slots, InvalidArgumentError
    /// for no keys or a bad access, InvalidKeyError for a value that is not a key.
    #[pyo3(signature = (keys, access, now_ms))]
    fn command(
        &mut self,
        keys: &Bound<'_, PyAny>,
        access: &Bound<'_, PyAny>,
        now_ms: &Bound<'_, PyAny>,
    ) -> PyResult<Command> {
        let access = self::access(access)?;
        let now = now(now_ms)?;
        let keys = keys_of(keys)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(Key::as_core).collect();
        let inner = self.inner.command(&keys, access, now).map_err(errors::to_py)?;
        Ok(Command { inner })
    }

    /// The steady path of shardroute.redis, not public API: command() + poll() in one
    /// call (the core's `send_now_timed`). `(address, readonly, deadline, reply_deadline)`
    /// of a command sent at once, or None (take command() and poll()): `deadline` is the
    /// attempt's stall check (what deadline(command) gives after poll), `reply_deadline`
    /// its command timeout (`sent_reply_deadline`). A reply by then ends the command, with
    /// no call after it; anything else goes on with `_command_sent`.
    #[pyo3(signature = (keys, access, now_ms))]
    fn _send_now(
        &mut self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        access: &Bound<'_, PyAny>,
        now_ms: &Bound<'_, PyAny>,
    ) -> PyResult<Option<SentNow>> {
        let access = self::access(access)?;
        let now = now(now_ms)?;
        let keys = keys_of(keys)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(Key::as_core).collect();
        let Some((node, readonly, deadline)) = self.inner.send_now_timed(&keys, access, now).map_err(errors::to_py)?
        else {
            return Ok(None);
        };
        let version = self.inner.endpoints_version();
        if self.addresses.as_ref().is_none_or(|(held, _)| *held != version) {
            let addresses =
                self.inner.endpoints().iter().map(|endpoint| PyString::new(py, &endpoint.address()).unbind());
            self.addresses = Some((version, addresses.collect()));
        }
        let address = self.addresses.as_ref().and_then(|(_, addresses)| addresses.get(node as usize));
        let address = address.ok_or_else(|| errors::new(sr::ErrorKind::Unavailable, "send_now: no such endpoint"))?;
        Ok(Some((address.clone_ref(py), readonly, deadline, self.inner.sent_reply_deadline(now))))
    }

    /// The Command of an attempt `_send_now` sent to `address` at `sent_ms`, as poll()
    /// at `sent_ms` would have left it: for failed(), unreachable() or on_deadline().
    #[pyo3(signature = (keys, access, address, sent_ms))]
    fn _command_sent(
        &mut self,
        keys: &Bound<'_, PyAny>,
        access: &Bound<'_, PyAny>,
        address: &Bound<'_, PyAny>,
        sent_ms: &Bound<'_, PyAny>,
    ) -> PyResult<Command> {
        let access = self::access(access)?;
        let sent = now(sent_ms)?;
        let address = str_from_py(address, "address")?;
        let keys = keys_of(keys)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(Key::as_core).collect();
        let inner = self.inner.command_sent_at(&keys, access, &address, sent).map_err(errors::to_py)?;
        Ok(Command { inner })
    }

    /// What to do now for command: usually send; refresh when there is no table yet or
    /// a refresh is due; wait while a backoff runs.
    fn poll(&mut self, mut command: PyRefMut<'_, Command>, now_ms: &Bound<'_, PyAny>) -> PyResult<Action> {
        Ok(Action::from_core(self.inner.poll(&mut command.inner, now(now_ms)?)))
    }

    /// The attempt answered: "done".
    fn succeeded(&mut self, mut command: PyRefMut<'_, Command>, now_ms: &Bound<'_, PyAny>) -> PyResult<Action> {
        Ok(Action::from_core(self.inner.succeeded(&mut command.inner, now(now_ms)?)))
    }

    /// The attempt has had no reply for config["stall_ms"] (or since the "wait" this
    /// last returned) and is still waiting: "refresh" (then call again), "send" (the slot
    /// has a new owner: abandon the silent attempt and send there) or "wait" (keep
    /// waiting for the reply until until_ms, then call again).
    fn stalled(&mut self, mut command: PyRefMut<'_, Command>, now_ms: &Bound<'_, PyAny>) -> PyResult<Action> {
        Ok(Action::from_core(self.inner.stalled(&mut command.inner, now(now_ms)?)))
    }

    /// When to ask about command next (an int on the now_ms clock), if nothing about it
    /// happens first: the end of its backoff, or for an attempt in flight (from the
    /// "send": its connection, handshake and reply are one attempt) the next stall check
    /// or its command timeout; None when finished or nothing is pending. With
    /// next_deadline(), the shell's one timer: call on_deadline() when it fires.
    fn deadline(&self, command: PyRef<'_, Command>) -> Option<u64> {
        self.inner.deadline(&command.inner)
    }

    /// The command timeout of command's attempt in flight (from its "send"), or None: a
    /// reply already arriving is read until then (a dripping node is cut off here).
    fn reply_deadline(&self, command: PyRef<'_, Command>) -> Option<u64> {
        self.inner.reply_deadline(&command.inner)
    }

    /// command's deadline() came: "wait" (not yet, or keep waiting for the reply until
    /// until_ms), "refresh" (a stall: refresh, then call again), "send" (the slot has a
    /// new owner, or the backoff ended: abandon any attempt in flight and send), or the
    /// next action after the attempt's command timeout (abandon it: a "timeout").
    fn on_deadline(&mut self, mut command: PyRefMut<'_, Command>, now_ms: &Bound<'_, PyAny>) -> PyResult<Action> {
        Ok(Action::from_core(self.inner.on_deadline(&mut command.inner, now(now_ms)?)))
    }

    /// The shell asks address (a refresh candidate) for CLUSTER SHARDS at now_ms:
    /// connecting, the handshake and the reply are one request; returns its deadline
    /// (None: no deadline), which next_deadline() gives until refreshed(),
    /// refresh_failed(), the next refresh_sent() or timeout().
    ///
    /// Raises InvalidArgumentError for an address that is not host:port.
    fn refresh_sent(&mut self, address: &Bound<'_, PyAny>, now_ms: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let address = str_from_py(address, "address")?;
        self.inner.refresh_sent(&address, now(now_ms)?).map_err(errors::to_py)
    }

    /// The command timeout of the refresh request in flight, or None: a CLUSTER SHARDS
    /// reply already arriving is read until then.
    fn refresh_reply_deadline(&self) -> Option<u64> {
        self.inner.refresh_reply_deadline()
    }

    /// The deadline of one node's pipeline of a batch (plan()) sent at now_ms: one
    /// request of the command timeout; None when there is none. An entry with no reply
    /// by then fails as a timeout and takes a command's path from that error.
    fn batch_deadline(&self, now_ms: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        Ok(self.inner.batch_deadline(now(now_ms)?))
    }

    /// Auto-pipelining: one command joined the shell's queue of the connection to address
    /// (the "send" action's address; readonly: a READONLY connection). The answer:
    /// 2: the connection was idle (nothing queued, no write in flight): write this command
    /// now, alone, as one write (no flush); it is one write in flight, ended by
    /// pipeline_done() as any other. 1: schedule one flush of that connection at the end
    /// of this event-loop turn (loop.call_soon), which calls pipeline_take(). 0: it waits:
    /// a flush is already scheduled, or config["pipeline_max_writes"] writes are in flight
    /// and the queue waits for pipeline_done(). With config["auto_pipeline"] off, always 1
    /// (each command its own write; a shell may skip the queue).
    fn pipeline_queued(&mut self, address: &Bound<'_, PyAny>, readonly: &Bound<'_, PyAny>) -> PyResult<u32> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.inner.pipeline_queued(&address, readonly) as u32)
    }

    /// Auto-pipelining, at the flush: how many queued commands (from the front) go in the
    /// next write; 0: none now. Each answer above 0 is one write in flight until its
    /// pipeline_done(): call again until 0.
    fn pipeline_take(&mut self, address: &Bound<'_, PyAny>, readonly: &Bound<'_, PyAny>) -> PyResult<u32> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.inner.pipeline_take(&address, readonly))
    }

    /// Auto-pipelining: one write on that connection ended (its replies all read, or its
    /// connection failed or was closed): how many queued commands (from the front) to
    /// write now, as one write; 0: none.
    fn pipeline_done(&mut self, address: &Bound<'_, PyAny>, readonly: &Bound<'_, PyAny>) -> PyResult<u32> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.inner.pipeline_done(&address, readonly))
    }

    /// Auto-pipelining: count queued commands left that connection's queue unwritten
    /// (abandoned, timed out, or sent elsewhere).
    fn pipeline_withdrawn(
        &mut self,
        address: &Bound<'_, PyAny>,
        readonly: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (address, readonly) = connection(address, readonly)?;
        let count = u32_from_py(count, "count")?;
        self.inner.pipeline_withdrawn(&address, readonly, count);
        Ok(())
    }

    /// Auto-pipelining's counts for that connection: (commands queued and not yet
    /// written, writes in flight); (0, 0) for a connection with no work.
    fn pipeline_pending(&self, address: &Bound<'_, PyAny>, readonly: &Bound<'_, PyAny>) -> PyResult<(u32, u32)> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.inner.pipeline_pending(&address, readonly))
    }

    /// When the session's own request in flight (a refresh's CLUSTER SHARDS) must be
    /// given up: call timeout() then; None when there is none.
    fn next_deadline(&self) -> Option<u64> {
        self.inner.next_deadline()
    }

    /// next_deadline() came: True when the refresh request in flight was given up (close
    /// it and ask the next candidate), False when none was due at now_ms.
    fn timeout(&mut self, now_ms: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.timeout(now(now_ms)?))
    }

    /// The "host:port" of node id in the current table, or None (an unknown id, no
    /// table yet).
    fn address_of(&self, node: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        Ok(self.inner.address_of(&str_from_py(node, "node")?))
    }

    /// The attempt failed with text (the error's str) whose class names or error codes
    /// are names (most derived first, e.g. [c.__name__ for c in type(err).__mro__]): the
    /// next action, by the core's one table (MOVED, ASK, TRYAGAIN, CLUSTERDOWN,
    /// MASTERDOWN, LOADING, READONLY, UNBLOCKED, connection errors; anything else is the
    /// command's own error: "done").
    fn failed(
        &mut self,
        mut command: PyRefMut<'_, Command>,
        text: &Bound<'_, PyAny>,
        names: &Bound<'_, PyAny>,
        now_ms: &Bound<'_, PyAny>,
    ) -> PyResult<Action> {
        let text = str_from_py(text, "text")?;
        if names.is_instance_of::<PyString>() {
            return Err(errors::new(sr::ErrorKind::InvalidArgument, "names: expected a list of str, not one str"));
        }
        let names: Vec<String> = names
            .try_iter()
            .map_err(|_| {
                errors::new(
                    sr::ErrorKind::InvalidArgument,
                    format!("names: expected a list of str, not {}", type_name(names)),
                )
            })?
            .map(|name| str_from_py(&name?, "name"))
            .collect::<PyResult<_>>()?;
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        Ok(Action::from_core(self.inner.failed(&mut command.inner, &text, &names, now(now_ms)?)))
    }

    /// The attempt could not reach its node: why is "refused", "reset" or "timeout".
    fn unreachable(
        &mut self,
        mut command: PyRefMut<'_, Command>,
        why: &Bound<'_, PyAny>,
        now_ms: &Bound<'_, PyAny>,
    ) -> PyResult<Action> {
        let name = str_from_py(why, "why")?;
        let why = ss::Transport::from_name(&name).ok_or_else(|| {
            errors::new(
                sr::ErrorKind::InvalidArgument,
                format!("why: expected \"refused\", \"reset\" or \"timeout\", got {name:?}"),
            )
        })?;
        Ok(Action::from_core(self.inner.unreachable(&mut command.inner, why, now(now_ms)?)))
    }

    /// Where a refresh asks for CLUSTER SHARDS, in order ("host:port" each): ask each
    /// until refreshed() accepts a reply; refresh_failed() when none does.
    fn refresh_candidates(&mut self) -> Vec<String> {
        self.inner.refresh_candidates().iter().map(ss::Endpoint::address).collect()
    }

    /// A CLUSTER SHARDS reply (decoded: str, not bytes; RESP3 dicts or RESP2 lists)
    /// installs its table (the next epoch).
    ///
    /// Raises InvalidArgumentError for a reply that does not make a whole table (empty,
    /// malformed, slots uncovered): the table in use is kept; ask the next candidate.
    fn refreshed(&mut self, reply: &Bound<'_, PyAny>, now_ms: &Bound<'_, PyAny>) -> PyResult<()> {
        let now = now(now_ms)?;
        let reply = json_value(reply, "reply")?;
        self.inner.refreshed(&reply, now).map_err(errors::to_py)
    }

    /// No candidate gave a usable reply: the table is kept (with the slots MOVED
    /// updated), and the next refresh waits for the refresh interval.
    fn refresh_failed(&mut self, now_ms: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.refresh_failed(now(now_ms)?);
        Ok(())
    }

    /// Whether a refresh is due at now_ms (for a shell that refreshes between commands).
    fn wants_refresh(&self, now_ms: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.wants_refresh(now(now_ms)?))
    }

    /// Keys grouped for a batch (a pipeline, or one MGET per slot): a list of
    /// PlanGroup(address, readonly, slots=[(slot, [key indices])]) per target node, in
    /// node order, slots increasing, indices in input order. A PlanGroup is a named
    /// tuple: it unpacks as the (address, readonly, slots) it replaces.
    ///
    /// Raises InvalidArgumentError before the first table, InvalidKeyError for a value
    /// that is not a key.
    fn plan<'py>(&mut self, keys: &Bound<'py, PyAny>, access: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let py = keys.py();
        let access = self::access(access)?;
        let keys = keys_of(keys)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(Key::as_core).collect();
        let groups = self.inner.plan(&keys, access).map_err(errors::to_py)?;
        let class = crate::records::PLAN_GROUP.class(py)?;
        let items = groups
            .iter()
            .map(|group| class.call1((group.target.endpoint.address(), group.target.readonly, group.slots.clone())))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The counters: commands, moved, ask, refreshes, refresh_failures,
    /// refused_replies, retries, failed, longest_redirect_chain, stalls, stall_resends,
    /// and errors (a dict:
    /// outcome name, such as "try_again" or "timeout", to count).
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &self.inner.stats().to_value())
    }

    /// Zeroes the counters.
    fn reset_stats(&mut self) {
        self.inner.reset_stats();
    }

    /// The settings in force (every field of session_defaults()).
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &self.inner.config().to_value())
    }

    /// The current router (a redis_cluster topology), or None before the first table.
    #[getter]
    fn router(&mut self, py: Python<'_>) -> PyResult<Option<Py<Router>>> {
        Router::cached(py, &mut self.router, self.inner.router())
    }
}

/// The host and port of a "host:port" address as core reads it: the port after the last
/// ":", an IPv6 host bracketed ("[::1]:7000") or not ("::1:7000", as Redis writes it),
/// brackets removed; Endpoint("", port) for ":port" (a redirect from a node that does not
/// know its own address). The one parser every shell uses. An Endpoint is a named tuple:
/// it unpacks as the (host, port) it replaces.
///
/// Raises InvalidArgumentError for no port, a port outside 1..=65535, or a host with
/// white space, a control character or unbalanced brackets.
#[pyfunction]
pub fn parse_address<'py>(address: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let endpoint = ss::Endpoint::parse(&str_from_py(address, "address")?).map_err(errors::to_py)?;
    crate::records::ENDPOINT.class(address.py())?.call1((endpoint.host(), endpoint.port()))
}
