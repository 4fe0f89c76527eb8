//! `ClusterSession` and `Command`: the core's sans-IO Redis Cluster session ([`ss`]) as
//! JavaScript classes, the same shape as the Node addon's. Conversion only, every decision
//! is the core's; what the two JavaScript packages share of it (the refusals the core does
//! not word yet, the flat action) is `bindings-js/session.rs`, included as
//! [`crate::js_session`]. Actions are the package's `Action` (`bindings-js/shared.mjs`,
//! made by `makeAction` in `js/support.mjs`).
//!
//! Both classes keep their core state in a `RefCell`, borrowed mutably only while the core
//! runs, after every argument was read: reading an argument may run JavaScript (a getter,
//! a proxy trap), which may call the session again.

use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;

use js_sys::{Array, Object};
use shardroute as sr;
use sr::session as ss;
use wasm_bindgen::prelude::*;

use crate::errors::Result;
use crate::js_session::{self as shared, FlatAction};
use crate::key::{self, milliseconds, Key};
use crate::numbers;
use crate::router::Router;
use crate::topology::{self, record};

/// The session's defaults (the core's constants, `ClusterConfig::default`) as an object of
/// the core's field names: `max_redirects`, `refresh_interval_ms`, `retry_budget_ms`,
/// `backoff_first_ms`, `backoff_max_ms`, `connect_timeout_ms`, `command_timeout_ms`,
/// `stall_ms`, `wait_timeout_ms`, `read_from_replicas`, `auto_pipeline`,
/// `pipeline_max_commands`, `pipeline_max_writes`.
#[wasm_bindgen(js_name = sessionDefaults)]
pub fn session_defaults() -> Result<JsValue> {
    Ok(topology::value_to_js(&ss::ClusterConfig::default().to_value(), "sessionDefaults")?)
}

/// Reads a node address, `host:port` (IPv6 as `[::1]:7000` or `::1:7000`) as Redis writes
/// it and users give startup nodes, by the core's one parser: `{host, port}`, the host
/// without an IPv6 host's brackets (empty for `:port`).
///
/// Throws `invalid_argument` for a value that is not a string, no port, a port outside
/// `1..=65535`, or a host with white space, a control character or unbalanced brackets.
#[wasm_bindgen(js_name = parseAddress)]
pub fn parse_address(address: &JsValue) -> Result<Object> {
    let endpoint = ss::Endpoint::parse(&key::text_argument(address, "address")?)?;
    Ok(record(&Array::of2(
        &Array::of2(&"host".into(), &endpoint.host().into()),
        &Array::of2(&"port".into(), &endpoint.port().into()),
    ))?)
}

/// A Redis Cluster client's decisions, without I/O: the shell asks where to send a
/// command (`poll`), sends it, and hands back what happened and when (`succeeded`,
/// `failed`, `unreachable`, with `nowMs` from its monotonic clock); the answer is the next
/// `Action`.
#[wasm_bindgen]
pub struct ClusterSession {
    // Read only by `with`, which a build without the `operations` feature leaves out.
    #[cfg_attr(not(feature = "operations"), allow(dead_code))]
    inner: RefCell<ss::ClusterSession>,
}

/// One command's progress (its slot, redirects and retries), made by
/// `ClusterSession.command` and passed back to the session's calls.
#[wasm_bindgen]
pub struct Command {
    inner: RefCell<ss::Command>,
}

#[wasm_bindgen]
impl Command {
    /// The command's hash slot.
    #[wasm_bindgen(getter)]
    pub fn slot(&self) -> Result<u32> {
        Ok(self.inner.try_borrow().map_err(|_| shared::busy())?.slot())
    }

    /// Redirects (`MOVED`, `ASK`) followed so far.
    #[wasm_bindgen(getter)]
    pub fn redirects(&self) -> Result<u32> {
        Ok(self.inner.try_borrow().map_err(|_| shared::busy())?.redirects())
    }

    /// Whether an attempt the session sent is in flight and its reply still wanted: after
    /// `onDeadline`, a shell whose attempt is no longer in flight abandons it.
    #[wasm_bindgen(getter, js_name = inFlight)]
    pub fn in_flight(&self) -> Result<bool> {
        Ok(self.inner.try_borrow().map_err(|_| shared::busy())?.in_flight())
    }
}

#[wasm_bindgen]
impl ClusterSession {
    /// A session with no table yet over `seeds` (an array of `host:port`), with `config`
    /// (the fields of `sessionDefaults()` to change; `undefined` or `null`: the defaults).
    ///
    /// Throws `invalid_argument` for seeds that are not an array of `host:port` strings,
    /// none, or a bad config.
    #[wasm_bindgen(constructor)]
    pub fn new(seeds: &JsValue, config: &JsValue) -> Result<ClusterSession> {
        // The order of the addon, whose index.js serializes `config` before the call.
        let config =
            if config.is_undefined() || config.is_null() { None } else { Some(topology::data_json(config, "config")?) };
        let seeds = key::strings_from_js(seeds, "seeds")?;
        let config = shared::config(config.as_deref())?;
        let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
        Ok(ClusterSession { inner: RefCell::new(crate::operations::session(&seeds, config)?) })
    }

    /// Begins a command on `keys` (an array: one key, or the keys of a multi-key command)
    /// with `access` `"read"` or `"write"`, at `nowMs`.
    ///
    /// Throws `invalid_key` for a bad key (naming its index), `invalid_argument` for no
    /// keys, a bad access or time, `cross_slot` for keys in different slots.
    pub fn command(&self, keys: &JsValue, access: &JsValue, now_ms: &JsValue) -> Result<Command> {
        let keys = key::keys_from_js(keys)?;
        let access = access_argument(access)?;
        let now = milliseconds(now_ms)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(Key::as_key).collect();
        let command = self.with(|session| session.command(&keys, access, now))??;
        Ok(Command { inner: RefCell::new(command) })
    }

    /// What to do now for `command`: usually send; refresh when there is no table yet or a
    /// refresh is due; wait while a backoff runs.
    pub fn poll(&self, command: &JsValue, now_ms: &JsValue) -> Result<Action> {
        self.step(command, || milliseconds(now_ms), |session, command, now| session.poll(command, now))
    }

    /// The attempt answered: `done`.
    pub fn succeeded(&self, command: &JsValue, now_ms: &JsValue) -> Result<Action> {
        self.step(command, || milliseconds(now_ms), |session, command, now| session.succeeded(command, now))
    }

    /// The attempt failed with `text` whose class names or error codes are `names` (most
    /// derived first): the next action, by the core's one table.
    pub fn failed(&self, command: &JsValue, text: &JsValue, names: &JsValue, now_ms: &JsValue) -> Result<Action> {
        self.step(
            command,
            || {
                let text = key::text_argument(text, "text")?;
                let names = key::strings_from_js(names, "names")?;
                Ok((text, names, milliseconds(now_ms)?))
            },
            |session, command, (text, names, now)| {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                session.failed(command, &text, &names, now)
            },
        )
    }

    /// The attempt has had no reply for `stall_ms` (or since the `wait` this last
    /// returned) and is still waiting: `refresh`, `send` (the slot's new owner) or `wait`.
    pub fn stalled(&self, command: &JsValue, now_ms: &JsValue) -> Result<Action> {
        self.step(command, || milliseconds(now_ms), |session, command, now| session.stalled(command, now))
    }

    /// When to ask about `command` next, a `bigint` on the `nowMs` clock, or `null`: the
    /// end of its backoff, or the next stall check or command timeout of its attempt in
    /// flight.
    pub fn deadline(&self, command: &JsValue) -> Result<JsValue> {
        let found = self.about(command, || Ok(()), |session, command, ()| session.deadline(command))?;
        Ok(time_or_null(found))
    }

    /// The command timeout of `command`'s attempt in flight (a `bigint`), or `null`: a
    /// reply already arriving is read until then.
    #[wasm_bindgen(js_name = replyDeadline)]
    pub fn reply_deadline(&self, command: &JsValue) -> Result<JsValue> {
        let found = self.about(command, || Ok(()), |session, command, ()| session.reply_deadline(command))?;
        Ok(time_or_null(found))
    }

    /// `command`'s deadline came: `wait`, `refresh`, `send`, or the next action after the
    /// attempt's command timeout.
    #[wasm_bindgen(js_name = onDeadline)]
    pub fn on_deadline(&self, command: &JsValue, now_ms: &JsValue) -> Result<Action> {
        self.step(command, || milliseconds(now_ms), |session, command, now| session.on_deadline(command, now))
    }

    /// A refresh asks `address` for `CLUSTER SHARDS` at `nowMs`: its deadline (a `bigint`),
    /// or `null`.
    ///
    /// Throws `invalid_argument` for a bad address or time.
    #[wasm_bindgen(js_name = refreshSent)]
    pub fn refresh_sent(&self, address: &JsValue, now_ms: &JsValue) -> Result<JsValue> {
        let address = key::text_argument(address, "address")?;
        let now = milliseconds(now_ms)?;
        Ok(time_or_null(self.with(|session| session.refresh_sent(&address, now))??))
    }

    /// The command timeout of the refresh request in flight (a `bigint`), or `null`.
    #[wasm_bindgen(js_name = refreshReplyDeadline)]
    pub fn refresh_reply_deadline(&self) -> Result<JsValue> {
        Ok(time_or_null(self.with(|session| session.refresh_reply_deadline())?))
    }

    /// The deadline of one node's pipeline of a batch (`plan`) sent at `nowMs` (a
    /// `bigint`), or `null`: one request of the command timeout.
    #[wasm_bindgen(js_name = batchDeadline)]
    pub fn batch_deadline(&self, now_ms: &JsValue) -> Result<JsValue> {
        let now = milliseconds(now_ms)?;
        Ok(time_or_null(self.with(|session| session.batch_deadline(now))?))
    }

    /// Auto-pipelining: one command joined the queue of the connection to `address`
    /// (`readonly`: a `READONLY` one): `0` it waits, `1` schedule a flush at the end of
    /// the turn, `2` the connection was idle: write this command now, alone (one write in
    /// flight, ended by `pipelineDone`) (`ClusterSession::pipeline_queued`).
    #[wasm_bindgen(js_name = pipelineQueued)]
    pub fn pipeline_queued(&self, address: &JsValue, readonly: &JsValue) -> Result<u32> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.with(|session| session.pipeline_queued(&address, readonly) as u32)?)
    }

    /// Auto-pipelining, at the flush: how many queued commands the next write takes.
    #[wasm_bindgen(js_name = pipelineTake)]
    pub fn pipeline_take(&self, address: &JsValue, readonly: &JsValue) -> Result<u32> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.with(|session| session.pipeline_take(&address, readonly))?)
    }

    /// Auto-pipelining: one write ended; how many queued commands to write now.
    #[wasm_bindgen(js_name = pipelineDone)]
    pub fn pipeline_done(&self, address: &JsValue, readonly: &JsValue) -> Result<u32> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.with(|session| session.pipeline_done(&address, readonly))?)
    }

    /// Auto-pipelining: `count` queued commands left the queue unwritten.
    #[wasm_bindgen(js_name = pipelineWithdrawn)]
    pub fn pipeline_withdrawn(&self, address: &JsValue, readonly: &JsValue, count: &JsValue) -> Result<()> {
        let (address, readonly) = connection(address, readonly)?;
        let count = crate::u32_from_js(count, "count")?;
        Ok(self.with(|session| session.pipeline_withdrawn(&address, readonly, count))?)
    }

    /// Auto-pipelining's counts for a connection: `[queued, writes]`.
    #[wasm_bindgen(js_name = pipelinePending)]
    pub fn pipeline_pending(&self, address: &JsValue, readonly: &JsValue) -> Result<Array> {
        let (address, readonly) = connection(address, readonly)?;
        let (queued, writes) = self.with(|session| session.pipeline_pending(&address, readonly))?;
        Ok(Array::of2(&queued.into(), &writes.into()))
    }

    /// When the session's own request in flight must be given up (a `bigint`), or `null`.
    #[wasm_bindgen(js_name = nextDeadline)]
    pub fn next_deadline(&self) -> Result<JsValue> {
        Ok(time_or_null(self.with(|session| session.next_deadline())?))
    }

    /// The session's deadline came: whether the refresh request in flight was given up.
    pub fn timeout(&self, now_ms: &JsValue) -> Result<bool> {
        let now = milliseconds(now_ms)?;
        Ok(self.with(|session| session.timeout(now))?)
    }

    /// The `host:port` of node `node` in the current table, or `null`.
    #[wasm_bindgen(js_name = addressOf)]
    pub fn address_of(&self, node: &JsValue) -> Result<JsValue> {
        let node = key::text_argument(node, "node")?;
        Ok(self.with(|session| session.address_of(&node))?.map_or(JsValue::NULL, JsValue::from))
    }

    /// The attempt could not reach its node: `why` is `"refused"`, `"reset"` or `"timeout"`.
    pub fn unreachable(&self, command: &JsValue, why: &JsValue, now_ms: &JsValue) -> Result<Action> {
        self.step(
            command,
            || Ok((shared::transport(&key::text_argument(why, "why")?)?, milliseconds(now_ms)?)),
            |session, command, (why, now)| session.unreachable(command, why, now),
        )
    }

    /// Where a refresh asks for `CLUSTER SHARDS`, in order, as `host:port`: ask each until
    /// `refreshed` accepts a reply; `refreshFailed` when none does.
    #[wasm_bindgen(js_name = refreshCandidates)]
    pub fn refresh_candidates(&self) -> Result<Vec<String>> {
        Ok(self.with(|session| session.refresh_candidates().iter().map(ss::Endpoint::address).collect())?)
    }

    /// A `CLUSTER SHARDS` reply (JavaScript data: RESP3 maps as objects, or RESP2 flat
    /// arrays) installs its table at `nowMs`.
    ///
    /// Throws `invalid_argument` for a bad time, data JSON cannot hold, or a reply that does
    /// not make a whole table (the table in use is kept).
    pub fn refreshed(&self, reply: &JsValue, now_ms: &JsValue) -> Result<()> {
        // The order of the addon, whose index.js serializes `reply` before the call.
        let reply = topology::data_json(reply, "reply")?;
        let now = milliseconds(now_ms)?;
        let reply = shared::json(&reply, "reply")?;
        Ok(self.with(|session| session.refreshed(&reply, now))??)
    }

    /// No candidate gave a usable reply: the table is kept, and the next refresh waits for
    /// the refresh interval.
    #[wasm_bindgen(js_name = refreshFailed)]
    pub fn refresh_failed(&self, now_ms: &JsValue) -> Result<()> {
        let now = milliseconds(now_ms)?;
        Ok(self.with(|session| session.refresh_failed(now))?)
    }

    /// Whether a refresh is due at `nowMs`.
    #[wasm_bindgen(js_name = wantsRefresh)]
    pub fn wants_refresh(&self, now_ms: &JsValue) -> Result<bool> {
        let now = milliseconds(now_ms)?;
        Ok(self.with(|session| session.wants_refresh(now))?)
    }

    /// Keys grouped for a batch: `{address, readonly, slots}` per target node, in node
    /// order, `slots` as `[slot, key indices]` pairs, slots increasing.
    ///
    /// Throws `invalid_argument` before the first table, and as `command` for the keys.
    pub fn plan(&self, keys: &JsValue, access: &JsValue) -> Result<Array> {
        let keys = key::keys_from_js(keys)?;
        let access = access_argument(access)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(Key::as_key).collect();
        let groups = self.with(|session| session.plan(&keys, access))??;
        let plan = Array::new();
        for group in groups {
            let slots: Array =
                group.slots.iter().map(|(slot, indices)| Array::of2(&(*slot).into(), &numbers(indices))).collect();
            let group: Object = record(&Array::of3(
                &Array::of2(&"address".into(), &group.target.endpoint.address().into()),
                &Array::of2(&"readonly".into(), &group.target.readonly.into()),
                &Array::of2(&"slots".into(), &slots),
            ))?;
            plan.push(&group);
        }
        Ok(plan)
    }

    /// The counters, the core's names in `camelCase`: every `u64` a bigint (`errors` too:
    /// outcome name to count), `longestRedirectChain` a number.
    #[wasm_bindgen(getter)]
    pub fn stats(&self) -> Result<Object> {
        let stats = self.with(|session| session.stats().clone())?;
        let entry = |name: &str, value: JsValue| Array::of2(&name.into(), &value);
        let entries: Array = [
            ("commands", stats.commands),
            ("moved", stats.moved),
            ("ask", stats.ask),
            ("refreshes", stats.refreshes),
            ("refreshFailures", stats.refresh_failures),
            ("refusedReplies", stats.refused_replies),
            ("retries", stats.retries),
            ("failed", stats.failed),
            ("stalls", stats.stalls),
            ("stallResends", stats.stall_resends),
        ]
        .iter()
        .map(|&(name, count)| entry(name, count.into()))
        .collect();
        entries.push(&entry("longestRedirectChain", stats.longest_redirect_chain.into()));
        let errors: Array = stats.errors.iter().map(|&(name, count)| entry(name, count.into())).collect();
        entries.push(&entry("errors", record(&errors)?.into()));
        Ok(record(&entries)?)
    }

    /// Zeroes the counters.
    #[wasm_bindgen(js_name = resetStats)]
    pub fn reset_stats(&self) -> Result<()> {
        Ok(self.with(ss::ClusterSession::reset_stats)?)
    }

    /// The settings in force: every field of `sessionDefaults()`.
    #[wasm_bindgen(getter)]
    pub fn config(&self) -> Result<JsValue> {
        let config = self.with(|session| session.config().to_value())?;
        Ok(topology::value_to_js(&config, "config")?)
    }

    /// The current router (a `redis_cluster` topology; a new object each time), or `null`
    /// before the first table.
    #[wasm_bindgen(getter)]
    pub fn router(&self) -> Result<JsValue> {
        Ok(match self.with(|session| session.router().cloned())? {
            Some(router) => Router::wrap(router).into(),
            None => JsValue::NULL,
        })
    }
}

impl ClusterSession {
    /// `call` on the core session, borrowed for one call after its arguments were read.
    #[cfg(feature = "operations")]
    fn with<R>(&self, call: impl FnOnce(&mut ss::ClusterSession) -> R) -> sr::Result<R> {
        Ok(call(&mut *self.inner.try_borrow_mut().map_err(|_| shared::busy())?))
    }

    /// Without the `operations` feature no session is made (the constructor refuses), and
    /// `call` is never made: so none of the session's code is in the build (a refresh
    /// imports with the topology operations, a MOVED is one).
    #[cfg(not(feature = "operations"))]
    fn with<R>(&self, _: impl FnOnce(&mut ss::ClusterSession) -> R) -> sr::Result<R> {
        Err(crate::operations::not_built_in("ClusterSession"))
    }

    /// A call about `command` (a `Command` of this package, checked first, as the addon
    /// checks it): its other arguments read by `read`, then `call` on the session and the
    /// command, its action as the package's `Action`.
    fn step<A>(
        &self,
        command: &JsValue,
        read: impl FnOnce() -> sr::Result<A>,
        call: impl FnOnce(&mut ss::ClusterSession, &mut ss::Command, A) -> ss::Action,
    ) -> Result<Action> {
        let action = self.about(command, read, call)?;
        let flat = FlatAction::from(action);
        Ok(make_action(
            flat.kind,
            flat.address,
            flat.host,
            flat.port,
            flat.asking,
            flat.readonly,
            flat.until_ms,
            flat.delay_ms,
            flat.code,
            flat.message,
        ))
    }
}

impl ClusterSession {
    /// `call` on the session and `command` (a `Command` of this package, checked first),
    /// its other arguments read by `read`.
    fn about<A, R>(
        &self,
        command: &JsValue,
        read: impl FnOnce() -> sr::Result<A>,
        call: impl FnOnce(&mut ss::ClusterSession, &mut ss::Command, A) -> R,
    ) -> Result<R> {
        let mut step = Some((read, call));
        let mut result = None;
        let lent = lend_command(command, &mut |command: &Command| {
            if let Some((read, call)) = step.take() {
                result = Some(read().and_then(|arguments| {
                    let mut inner = command.inner.try_borrow_mut().map_err(|_| shared::busy())?;
                    self.with(|session| call(session, &mut inner, arguments))
                }));
            }
        });
        match (lent, result) {
            (Ok(()), Some(found)) => Ok(found?),
            _ => Err(key::with_type(command, |got| shared::not_a_command("command", got)).into()),
        }
    }
}

/// A u64 time as JavaScript gets it: a `bigint`, or `null`.
fn time_or_null(ms: Option<u64>) -> JsValue {
    ms.map_or(JsValue::NULL, JsValue::from)
}

/// The `access` argument: `"read"` or `"write"` ([`ss::Access::from_name`]).
fn access_argument(value: &JsValue) -> sr::Result<ss::Access> {
    ss::Access::from_name(&key::text_argument(value, "access")?)
}

#[wasm_bindgen(module = "/js/support.mjs")]
extern "C" {
    /// The package's `Action` (`bindings-js/shared.mjs`); the glue re-exports it.
    #[wasm_bindgen(reexport)]
    pub type Action;

    /// A new `Action` of the fields of a [`FlatAction`], in its order (`undefined` for
    /// `None`, which the constructor makes `null`).
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = makeAction)]
    fn make_action(
        kind: &str,
        address: Option<String>,
        host: Option<String>,
        port: Option<u16>,
        asking: Option<bool>,
        readonly: Option<bool>,
        until_ms: Option<u64>,
        delay_ms: Option<u32>,
        code: Option<&str>,
        message: Option<String>,
    ) -> Action;

    /// Calls `lend(command)`: the glue of the callback checks that `command` is a live
    /// `Command` and lends it, as for `this` in a method; a failed check throws, which
    /// `catch` makes an `Err`.
    #[wasm_bindgen(catch, js_name = lend)]
    fn lend_command(command: &JsValue, lend: &mut dyn FnMut(&Command)) -> core::result::Result<(), JsValue>;
}

/// An auto-pipelining connection: its `address` (a string) and `readonly` (a boolean).
fn connection(address: &JsValue, readonly: &JsValue) -> sr::Result<(String, bool)> {
    let address = key::text_argument(address, "address")?;
    let readonly = key::with_type(readonly, shared::readonly)?;
    Ok((address, readonly))
}
