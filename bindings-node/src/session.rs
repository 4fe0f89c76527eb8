//! [`ClusterSession`] and [`Command`]: the core's sans-IO Redis Cluster session
//! ([`ss`]) for JavaScript. Conversion only, every decision is the core's; what the two
//! JavaScript packages share of it (the refusals the core does not word yet, the flat
//! action) is `bindings-js/session.rs`, included as [`crate::js_session`].
//!
//! `index.js` wraps the native session as the public `ClusterSession`: it serializes
//! `config` and the `CLUSTER SHARDS` reply of `refreshed` (`documentToJson`, strict), makes
//! the package's `Action` from the fields [`RawAction`] gives, parses the JSON text of
//! `config` and `sessionDefaults`, and wraps the native `router` as a public `Router`.
//! Its public `Command` holds a native [`Command`], which it passes back.
//!
//! Both objects keep their core state in a `RefCell`, borrowed mutably only while the core
//! runs, after every argument was read: reading an argument may run JavaScript (a getter,
//! a proxy trap), which may call the session again.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use napi::bindgen_prelude::{Array, BigInt, ClassInstance, Object, Uint32Array};
use napi::{Env, Unknown, ValueType};
use napi_derive::napi;
use shardroute as sr;
use sr::argument::JsType;
use sr::session as ss;

use crate::errors::{self, Result, Throw};
use crate::js_session::{self as shared, FlatAction};
use crate::key;
use crate::router::Router;

/// The session's defaults (`ClusterConfig::default`, the core's constants) as JSON text,
/// which `index.js` parses: `sessionDefaults()`.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn session_defaults() -> String {
    ss::ClusterConfig::default().to_value().to_string()
}

/// A node address read by the core's one parser ([`ss::Endpoint::parse`]): `{ host, port }`.
#[napi(object, object_from_js = false)]
pub struct Endpoint {
    /// The host, without the brackets of an IPv6 host; empty for `:port`.
    pub host: String,
    /// The port, in `1..=65535`.
    pub port: u16,
}

/// Reads a node address, `host:port` (IPv6 as `[::1]:7000` or `::1:7000`) as Redis writes
/// it and users give startup nodes: `parseAddress`.
///
/// # Errors
/// `invalid_argument` for a value that is not a string, no port, a port outside
/// `1..=65535`, or a host with white space, a control character or unbalanced brackets.
// Only `#[napi]`'s registration calls it, and test builds leave that out.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn parse_address(address: Unknown) -> Result<Endpoint> {
    let endpoint = ss::Endpoint::parse(&crate::text_argument(address, "address")?).or_throw()?;
    Ok(Endpoint { host: endpoint.host().to_owned(), port: endpoint.port() })
}

/// A Redis Cluster client's decisions ([`ss::ClusterSession`]); `index.js` wraps it as the
/// public `ClusterSession`.
#[napi]
pub struct ClusterSession {
    /// Shared with the session's hot function ([`ClusterSession::hot_send_now`]).
    inner: Rc<RefCell<ss::ClusterSession>>,
}

/// One command's progress, made by [`ClusterSession::command`] and passed back to the
/// session's calls; `index.js` wraps it as the public `Command`.
#[napi]
pub struct Command {
    inner: RefCell<ss::Command>,
}

#[napi]
impl Command {
    /// The command's hash slot.
    #[napi(getter, catch_unwind)]
    pub fn slot(&self) -> Result<u32> {
        Ok(self.inner.try_borrow().map_err(|_| errors::from_core(shared::busy()))?.slot())
    }

    /// Redirects (`MOVED`, `ASK`) followed so far.
    #[napi(getter, catch_unwind)]
    pub fn redirects(&self) -> Result<u32> {
        Ok(self.inner.try_borrow().map_err(|_| errors::from_core(shared::busy()))?.redirects())
    }

    /// Whether an attempt the session sent is in flight and its reply still wanted
    /// ([`ss::Command::in_flight`]).
    #[napi(getter, catch_unwind)]
    pub fn in_flight(&self) -> Result<bool> {
        Ok(self.inner.try_borrow().map_err(|_| errors::from_core(shared::busy()))?.in_flight())
    }
}

/// An action as the fields of the package's `Action`, in its constructor's order
/// ([`FlatAction`]); `None` is `null`.
pub type RawAction = (
    &'static str,
    Option<String>,
    Option<String>,
    Option<u16>,
    Option<bool>,
    Option<bool>,
    Option<BigInt>,
    Option<u32>,
    Option<&'static str>,
    Option<String>,
);

fn raw(action: ss::Action) -> RawAction {
    let flat = FlatAction::from(action);
    (
        flat.kind,
        flat.address,
        flat.host,
        flat.port,
        flat.asking,
        flat.readonly,
        flat.until_ms.map(BigInt::from),
        flat.delay_ms,
        flat.code,
        flat.message,
    )
}

/// One node's share of a batch ([`ss::Group`]): `{ address, readonly, slots }`, `slots`
/// as `[slot, key indices]` pairs.
#[napi(object, object_from_js = false)]
pub struct PlanGroup {
    /// The node's `host:port`.
    pub address: String,
    /// Over a `READONLY` connection (a replica read).
    pub readonly: bool,
    /// `[slot, indices]`, slots increasing, each slot's key indices in input order.
    pub slots: Vec<(u32, Vec<u32>)>,
}

/// One node's share of a batch, flat ([`ss::FlatGroup`]): `{ address, readonly, indices,
/// starts }`, slot `i`'s key indices `indices[starts[i]..starts[i + 1]]` (what the shell's
/// `mget` and pipelines read; not public API).
#[napi(object, object_from_js = false)]
pub struct FlatPlanGroup {
    /// The node's `host:port`.
    pub address: String,
    /// Over a `READONLY` connection (a replica read).
    pub readonly: bool,
    /// The key indices, slot after slot (slots increasing), each slot's in input order.
    pub indices: Uint32Array,
    /// Where each slot's indices start, and last `indices.length`.
    pub starts: Uint32Array,
}

#[napi]
impl ClusterSession {
    /// A session with no table yet over `seeds` (an array of `host:port`), with `config`
    /// (JSON text from `index.js`, or `undefined` or `null` for the defaults).
    ///
    /// # Errors
    /// `invalid_argument` for seeds that are not an array of `host:port` strings, none, or
    /// a bad config ([`ss::ClusterConfig::from_value`]).
    #[napi(constructor, catch_unwind)]
    pub fn new(seeds: Unknown, config: Unknown) -> Result<Self> {
        let seeds = key::strings_from_js(seeds, "seeds")?;
        let config = match config.get_type().or_throw()? {
            ValueType::Undefined | ValueType::Null => None,
            _ => Some(crate::text_argument(config, "config")?),
        };
        let config = shared::config(config.as_deref()).or_throw()?;
        let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
        Ok(ClusterSession { inner: Rc::new(RefCell::new(ss::ClusterSession::new(&seeds, config).or_throw()?)) })
    }

    /// Begins a command on `keys` (an array: one key, or the keys of a multi-key command)
    /// with `access` `"read"` or `"write"`, at `nowMs`.
    ///
    /// # Errors
    /// As [`key::many_from_js`]; `invalid_argument` for no keys, a bad access or time;
    /// `cross_slot` for keys in different slots.
    #[napi(catch_unwind)]
    pub fn command(&self, keys: Unknown, access: Unknown, now_ms: Unknown) -> Result<Command> {
        let keys = key::many_from_js(keys)?;
        let access = access_argument(access)?;
        let now = milliseconds(now_ms)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(key::Key::as_core).collect();
        let command = self.session()?.command(&keys, access, now).or_throw()?;
        Ok(Command { inner: RefCell::new(command) })
    }

    /// `sendNow(keys, access, nowMs, out)`: [`ss::ClusterSession::send_now_timed`] as a
    /// plain N-API function over this session ([`crate::hot`]: a tenth of a method's call
    /// cost), for the shell's steady path. It returns `-1` when the command takes the
    /// general path, else `2 * node + readonly`, `node` an index in
    /// [`endpoints`](ClusterSession::endpoints), and sets `out[0]` (an array `index.js`
    /// made once) to the attempt's deadline, a `number`, or `-1` for none. With a fifth
    /// argument `true` (the shell's auto-pipelining), a command sent also joins its
    /// connection's queue in the same call ([`ss::ClusterSession::pipeline_queued`] on the
    /// endpoint's address, as `pipelineQueued` would be called next): `out[1]` is set to
    /// its answer. With a sixth and seventh argument `address`, `readonly` (not `undefined`
    /// or `null`), a write on that connection ended first: before anything else,
    /// [`ss::ClusterSession::pipeline_done`] as `pipelineDone(address, readonly)` would
    /// be called, its answer in `out[2]` (set even when the send then fails).
    /// `index.js` makes it once per session.
    #[napi(catch_unwind)]
    pub fn hot_send_now<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        crate::hot::function(env, "sendNow", send_now_callback, Rc::clone(&self.inner))
    }

    /// `[queued, take, done, withdrawn]`: [`pipeline_queued`](ClusterSession::pipeline_queued),
    /// [`pipeline_take`](ClusterSession::pipeline_take),
    /// [`pipeline_done`](ClusterSession::pipeline_done) and
    /// [`pipeline_withdrawn`](ClusterSession::pipeline_withdrawn) as plain N-API functions over
    /// this session ([`crate::hot`]: a method call costs about a microsecond here, a plain
    /// function a tenth), for the shell's auto-pipelining, which calls them about twice a
    /// command. The same arguments, results and refusals as the methods. `index.js` makes
    /// them once per session.
    #[napi(catch_unwind)]
    pub fn hot_pipeline<'env>(&self, env: &'env Env) -> Result<Array<'env>> {
        let callbacks: [(&str, crate::hot::Callback); 4] = [
            ("pipelineQueued", pipeline_queued_callback),
            ("pipelineTake", pipeline_take_callback),
            ("pipelineDone", pipeline_done_callback),
            ("pipelineWithdrawn", pipeline_withdrawn_callback),
        ];
        let mut array = env.create_array(4).or_throw()?;
        for (index, (name, callback)) in (0u32..).zip(callbacks) {
            array.set(index, crate::hot::function(env, name, callback, Rc::clone(&self.inner))?).or_throw()?;
        }
        Ok(array)
    }

    /// The current table's node addresses, in node order ([`ss::ClusterSession::endpoints`]).
    #[napi(catch_unwind)]
    pub fn endpoints(&self) -> Result<Vec<String>> {
        Ok(self.session()?.endpoints().iter().map(ss::Endpoint::address).collect())
    }

    /// A number that changes whenever [`endpoints`](ClusterSession::endpoints) may have
    /// ([`ss::ClusterSession::endpoints_version`]): `index.js` keeps its targets while it
    /// stays, so a MOVED to a node of the table converts no addresses.
    #[napi(catch_unwind)]
    pub fn endpoints_version(&self) -> Result<f64> {
        // Compared for equality only; exact below 2^53 tables.
        #[allow(clippy::cast_precision_loss)]
        Ok(self.session()?.endpoints_version() as f64)
    }

    /// The command of an attempt `sendNow` sent to `address` at `sentMs`
    /// ([`ss::ClusterSession::command_sent_at`]; without `sentMs`, one with no attempt
    /// times: [`ss::ClusterSession::command_sent`]).
    ///
    /// # Errors
    /// As [`command`](ClusterSession::command); `invalid_argument` for a bad address.
    #[napi(catch_unwind)]
    pub fn command_sent(
        &self,
        keys: Unknown,
        access: Unknown,
        address: Unknown,
        sent_ms: Option<Unknown>,
    ) -> Result<Command> {
        let keys = key::many_from_js(keys)?;
        let access = access_argument(access)?;
        let address = crate::text_argument(address, "address")?;
        let sent = sent_ms.map(milliseconds).transpose()?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(key::Key::as_core).collect();
        let mut session = self.session()?;
        let command = match sent {
            Some(sent) => session.command_sent_at(&keys, access, &address, sent),
            None => session.command_sent(&keys, access, &address),
        };
        Ok(Command { inner: RefCell::new(command.or_throw()?) })
    }

    /// What to do now for `command` ([`ss::ClusterSession::poll`]).
    #[napi(catch_unwind)]
    pub fn poll(&self, env: &Env, command: Unknown, now_ms: Unknown) -> Result<RawAction> {
        let command = command_argument(env, command)?;
        let now = milliseconds(now_ms)?;
        self.step(&command, |session, command| session.poll(command, now))
    }

    /// The attempt answered ([`ss::ClusterSession::succeeded`]).
    #[napi(catch_unwind)]
    pub fn succeeded(&self, env: &Env, command: Unknown, now_ms: Unknown) -> Result<RawAction> {
        let command = command_argument(env, command)?;
        let now = milliseconds(now_ms)?;
        self.step(&command, |session, command| session.succeeded(command, now))
    }

    /// The attempt failed with `text` whose class names or error codes are `names`
    /// ([`ss::ClusterSession::failed`]).
    #[napi(catch_unwind)]
    pub fn failed(
        &self,
        env: &Env,
        command: Unknown,
        text: Unknown,
        names: Unknown,
        now_ms: Unknown,
    ) -> Result<RawAction> {
        let command = command_argument(env, command)?;
        let text = crate::text_argument(text, "text")?;
        let names = key::strings_from_js(names, "names")?;
        let now = milliseconds(now_ms)?;
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.step(&command, |session, command| session.failed(command, &text, &names, now))
    }

    /// The attempt has had no reply for `stall_ms` and is still waiting
    /// ([`ss::ClusterSession::stalled`]).
    #[napi(catch_unwind)]
    pub fn stalled(&self, env: &Env, command: Unknown, now_ms: Unknown) -> Result<RawAction> {
        let command = command_argument(env, command)?;
        let now = milliseconds(now_ms)?;
        self.step(&command, |session, command| session.stalled(command, now))
    }

    /// When to ask about `command` next, a `bigint` on the `nowMs` clock, or `null`
    /// ([`ss::ClusterSession::deadline`]).
    #[napi(catch_unwind)]
    pub fn deadline(&self, env: &Env, command: Unknown) -> Result<Option<BigInt>> {
        let command = command_argument(env, command)?;
        let inner = command.inner.try_borrow().map_err(|_| errors::from_core(shared::busy()))?;
        Ok(self.session()?.deadline(&inner).map(BigInt::from))
    }

    /// The command timeout of `command`'s attempt in flight, a `bigint`, or `null`
    /// ([`ss::ClusterSession::reply_deadline`]).
    #[napi(catch_unwind)]
    pub fn reply_deadline(&self, env: &Env, command: Unknown) -> Result<Option<BigInt>> {
        let command = command_argument(env, command)?;
        let inner = command.inner.try_borrow().map_err(|_| errors::from_core(shared::busy()))?;
        Ok(self.session()?.reply_deadline(&inner).map(BigInt::from))
    }

    /// `command`'s deadline came ([`ss::ClusterSession::on_deadline`]).
    #[napi(catch_unwind)]
    pub fn on_deadline(&self, env: &Env, command: Unknown, now_ms: Unknown) -> Result<RawAction> {
        let command = command_argument(env, command)?;
        let now = milliseconds(now_ms)?;
        self.step(&command, |session, command| session.on_deadline(command, now))
    }

    /// A refresh asks `address` for `CLUSTER SHARDS` at `nowMs`: its deadline, a `bigint`,
    /// or `null` ([`ss::ClusterSession::refresh_sent`]).
    ///
    /// # Errors
    /// `invalid_argument` for a bad address or time.
    #[napi(catch_unwind)]
    pub fn refresh_sent(&self, address: Unknown, now_ms: Unknown) -> Result<Option<BigInt>> {
        let address = crate::text_argument(address, "address")?;
        let now = milliseconds(now_ms)?;
        Ok(self.session()?.refresh_sent(&address, now).or_throw()?.map(BigInt::from))
    }

    /// The command timeout of the refresh request in flight, a `bigint`, or `null`
    /// ([`ss::ClusterSession::refresh_reply_deadline`]).
    #[napi(catch_unwind)]
    pub fn refresh_reply_deadline(&self) -> Result<Option<BigInt>> {
        Ok(self.session()?.refresh_reply_deadline().map(BigInt::from))
    }

    /// The deadline of one node's pipeline of a batch sent at `nowMs`, or `null`
    /// ([`ss::ClusterSession::batch_deadline`]).
    #[napi(catch_unwind)]
    pub fn batch_deadline(&self, now_ms: Unknown) -> Result<Option<BigInt>> {
        let now = milliseconds(now_ms)?;
        Ok(self.session()?.batch_deadline(now).map(BigInt::from))
    }

    /// Auto-pipelining: one command joined the queue of the connection to `address`
    /// (`readonly`: a `READONLY` one): `0` it waits, `1` schedule a flush at the end of
    /// the turn, `2` the connection was idle: write this command now, alone (one write in
    /// flight, ended by `pipelineDone`) ([`ss::ClusterSession::pipeline_queued`]).
    ///
    /// # Errors
    /// `invalid_argument` for an address that is not a string or a `readonly` that is
    /// not a boolean.
    #[napi(catch_unwind)]
    pub fn pipeline_queued(&self, address: Unknown, readonly: Unknown) -> Result<u32> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.session()?.pipeline_queued(&address, readonly) as u32)
    }

    /// Auto-pipelining, at the flush: how many queued commands the next write takes
    /// ([`ss::ClusterSession::pipeline_take`]).
    ///
    /// # Errors
    /// As [`pipeline_queued`](ClusterSession::pipeline_queued).
    #[napi(catch_unwind)]
    pub fn pipeline_take(&self, address: Unknown, readonly: Unknown) -> Result<u32> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.session()?.pipeline_take(&address, readonly))
    }

    /// Auto-pipelining: one write ended; how many queued commands to write now
    /// ([`ss::ClusterSession::pipeline_done`]).
    ///
    /// # Errors
    /// As [`pipeline_queued`](ClusterSession::pipeline_queued).
    #[napi(catch_unwind)]
    pub fn pipeline_done(&self, address: Unknown, readonly: Unknown) -> Result<u32> {
        let (address, readonly) = connection(address, readonly)?;
        Ok(self.session()?.pipeline_done(&address, readonly))
    }

    /// Auto-pipelining: `count` queued commands left the queue unwritten
    /// ([`ss::ClusterSession::pipeline_withdrawn`]).
    ///
    /// # Errors
    /// As [`pipeline_queued`](ClusterSession::pipeline_queued); `invalid_argument` for a
    /// count that is not an integer in `0..2^32`.
    #[napi(catch_unwind)]
    pub fn pipeline_withdrawn(&self, address: Unknown, readonly: Unknown, count: Unknown) -> Result<()> {
        let (address, readonly) = connection(address, readonly)?;
        let count = sr::argument::count("count", key::js_type(count)?).or_throw()?;
        self.session()?.pipeline_withdrawn(&address, readonly, count);
        Ok(())
    }

    /// Auto-pipelining's counts for a connection: `[queued, writes]`
    /// ([`ss::ClusterSession::pipeline_pending`]).
    ///
    /// # Errors
    /// As [`pipeline_queued`](ClusterSession::pipeline_queued).
    #[napi(catch_unwind)]
    pub fn pipeline_pending(&self, address: Unknown, readonly: Unknown) -> Result<Vec<u32>> {
        let (address, readonly) = connection(address, readonly)?;
        let (queued, writes) = self.session()?.pipeline_pending(&address, readonly);
        Ok(vec![queued, writes])
    }

    /// When the session's own request in flight must be given up, or `null`
    /// ([`ss::ClusterSession::next_deadline`]).
    #[napi(catch_unwind)]
    pub fn next_deadline(&self) -> Result<Option<BigInt>> {
        Ok(self.session()?.next_deadline().map(BigInt::from))
    }

    /// The session's deadline came: whether the refresh request in flight was given up
    /// ([`ss::ClusterSession::timeout`]).
    #[napi(catch_unwind)]
    pub fn timeout(&self, now_ms: Unknown) -> Result<bool> {
        let now = milliseconds(now_ms)?;
        Ok(self.session()?.timeout(now))
    }

    /// The `host:port` of node `id` in the current table, or `null`
    /// ([`ss::ClusterSession::address_of`]).
    #[napi(catch_unwind)]
    pub fn address_of(&self, id: Unknown) -> Result<Option<String>> {
        let id = crate::text_argument(id, "node")?;
        Ok(self.session()?.address_of(&id))
    }

    /// The attempt could not reach its node: `why` is `"refused"`, `"reset"` or
    /// `"timeout"` ([`ss::ClusterSession::unreachable`]).
    #[napi(catch_unwind)]
    pub fn unreachable(&self, env: &Env, command: Unknown, why: Unknown, now_ms: Unknown) -> Result<RawAction> {
        let command = command_argument(env, command)?;
        let why = shared::transport(&crate::text_argument(why, "why")?).or_throw()?;
        let now = milliseconds(now_ms)?;
        self.step(&command, |session, command| session.unreachable(command, why, now))
    }

    /// Where a refresh asks for `CLUSTER SHARDS`, in order, as `host:port`.
    #[napi(catch_unwind)]
    pub fn refresh_candidates(&self) -> Result<Vec<String>> {
        Ok(self.session()?.refresh_candidates().iter().map(ss::Endpoint::address).collect())
    }

    /// A `CLUSTER SHARDS` reply (JSON text from `index.js`) installs its table at `nowMs`.
    ///
    /// # Errors
    /// `invalid_argument` for a bad time, or a reply that does not make a whole table.
    #[napi(catch_unwind)]
    pub fn refreshed(&self, reply: Unknown, now_ms: Unknown) -> Result<()> {
        let now = milliseconds(now_ms)?;
        let reply = shared::json(&crate::text_argument(reply, "reply")?, "reply").or_throw()?;
        self.session()?.refreshed(&reply, now).or_throw()
    }

    /// No candidate gave a usable reply ([`ss::ClusterSession::refresh_failed`]).
    #[napi(catch_unwind)]
    pub fn refresh_failed(&self, now_ms: Unknown) -> Result<()> {
        let now = milliseconds(now_ms)?;
        self.session()?.refresh_failed(now);
        Ok(())
    }

    /// Whether a refresh is due at `nowMs`.
    #[napi(catch_unwind)]
    pub fn wants_refresh(&self, now_ms: Unknown) -> Result<bool> {
        let now = milliseconds(now_ms)?;
        Ok(self.session()?.wants_refresh(now))
    }

    /// Keys grouped for a batch ([`ss::ClusterSession::plan`]).
    ///
    /// # Errors
    /// As [`key::many_from_js`]; `invalid_argument` for a bad access, or before the first
    /// table.
    #[napi(catch_unwind)]
    pub fn plan(&self, keys: Unknown, access: Unknown) -> Result<Vec<PlanGroup>> {
        let keys = key::many_from_js(keys)?;
        let access = access_argument(access)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(key::Key::as_core).collect();
        let groups = self.session()?.plan(&keys, access).or_throw()?;
        Ok(groups
            .into_iter()
            .map(|group| PlanGroup {
                address: group.target.endpoint.address(),
                readonly: group.target.readonly,
                slots: group.slots,
            })
            .collect())
    }

    /// [`plan`](ClusterSession::plan)'s groups flat ([`ss::ClusterSession::plan_flat`]):
    /// two `Uint32Array`s a node in place of two arrays a slot (a thousand keys over a
    /// thousand slots cost a third of a microsecond a key the other way). For the shell's
    /// batches (`index.js`'s fast path), not public API.
    ///
    /// # Errors
    /// As [`plan`](ClusterSession::plan).
    #[napi(catch_unwind)]
    pub fn plan_flat(&self, keys: Unknown, access: Unknown) -> Result<Vec<FlatPlanGroup>> {
        let keys = key::many_from_js(keys)?;
        let access = access_argument(access)?;
        let keys: Vec<sr::Key<'_>> = keys.iter().map(key::Key::as_core).collect();
        let groups = self.session()?.plan_flat(&keys, access).or_throw()?;
        Ok(groups
            .into_iter()
            .map(|group| FlatPlanGroup {
                address: group.target.endpoint.address(),
                readonly: group.target.readonly,
                indices: Uint32Array::new(group.indices),
                starts: Uint32Array::new(group.starts),
            })
            .collect())
    }

    /// The counters, the core's `SessionStats::to_value` names in `camelCase`: every `u64` a
    /// `bigint` (`errors` too: outcome name to count), `longestRedirectChain` a number.
    #[napi(getter, catch_unwind)]
    pub fn stats<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        let session = self.session()?;
        let stats = session.stats();
        let mut object = Object::new(env).or_throw()?;
        let counters = [
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
        ];
        for (name, count) in counters {
            object.set(name, BigInt::from(count)).or_throw()?;
        }
        object.set("longestRedirectChain", stats.longest_redirect_chain).or_throw()?;
        let mut errors = Object::new(env).or_throw()?;
        for &(name, count) in &stats.errors {
            errors.set(name, BigInt::from(count)).or_throw()?;
        }
        object.set("errors", errors).or_throw()?;
        Ok(object)
    }

    /// Zeroes the counters.
    #[napi(catch_unwind)]
    pub fn reset_stats(&self) -> Result<()> {
        self.session()?.reset_stats();
        Ok(())
    }

    /// The settings in force, as JSON text (`index.js` parses it).
    #[napi(getter, catch_unwind)]
    pub fn config(&self) -> Result<String> {
        Ok(self.session()?.config().to_value().to_string())
    }

    /// The current router (`index.js` wraps it as a public `Router`), or `null` before the
    /// first table.
    #[napi(getter, catch_unwind)]
    pub fn router(&self) -> Result<Option<Router>> {
        Ok(self.session()?.router().map(|router| Router { inner: Arc::new(router.clone()) }))
    }
}

impl ClusterSession {
    /// The core session, borrowed for one call after its arguments were read.
    fn session(&self) -> Result<std::cell::RefMut<'_, ss::ClusterSession>> {
        self.inner.try_borrow_mut().map_err(|_| errors::from_core(shared::busy()))
    }

    /// `call` on the session and `command`, its action as the package's `Action` takes it.
    fn step(
        &self,
        command: &Command,
        call: impl FnOnce(&mut ss::ClusterSession, &mut ss::Command) -> ss::Action,
    ) -> Result<RawAction> {
        let mut command = command.inner.try_borrow_mut().map_err(|_| errors::from_core(shared::busy()))?;
        let mut session = self.session()?;
        Ok(raw(call(&mut session, &mut command)))
    }
}

/// `sendNow(keys, access, nowMs, out)` of [`ClusterSession::hot_send_now`].
unsafe extern "C" fn send_now_callback(
    env: napi::sys::napi_env,
    info: napi::sys::napi_callback_info,
) -> napi::sys::napi_value {
    // SAFETY: N-API calls this with the env and callback info of a call of a function made
    // by `hot_send_now`, whose data is the session.
    unsafe {
        crate::hot::call_with::<Rc<RefCell<ss::ClusterSession>>, 7>(
            env,
            info,
            |session, [keys, access, now_ms, out, queued, done_address, done_readonly]| {
                if !matches!(key::js_type(done_address)?, JsType::Undefined | JsType::Null) {
                    // A write that ended first (`pipelineDone`), told before anything else is read.
                    let (address, readonly) = connection(done_address, done_readonly)?;
                    let answer = session
                        .try_borrow_mut()
                        .map_err(|_| errors::from_core(shared::busy()))?
                        .pipeline_done(&address, readonly);
                    let mut value = std::ptr::null_mut();
                    // SAFETY: the env of the running call; `out` is a live value of it.
                    napi::check_status!(napi::sys::napi_create_uint32(env, answer, &mut value)).or_throw()?;
                    napi::check_status!(napi::sys::napi_set_element(env, napi::JsValue::raw(&out), 2, value))
                        .or_throw()?;
                }
                let keys = key::many_from_js(keys)?;
                let access = access_argument(access)?;
                let now = milliseconds(now_ms)?;
                let queued = matches!(key::js_type(queued)?, JsType::Boolean(true));
                let keys: Vec<sr::Key<'_>> = keys.iter().map(key::Key::as_core).collect();
                let mut session = session.try_borrow_mut().map_err(|_| errors::from_core(shared::busy()))?;
                let sent = session.send_now_timed(&keys, access, now);
                let code = match sent.or_throw()? {
                    None => -1.0,
                    Some((node, readonly, deadline)) => {
                        if queued {
                            // The endpoint `node` is what the shell's target address is made of
                            // (`endpoints`, in node order); -1 if it were not there (the shell
                            // then asks `pipelineQueued` itself).
                            let address = session.endpoints().get(node as usize).map(ss::Endpoint::address);
                            let answer = match address {
                                Some(address) => f64::from(session.pipeline_queued(&address, readonly) as u32),
                                None => -1.0,
                            };
                            let mut value = std::ptr::null_mut();
                            // SAFETY: the env of the running call; `out` is a live value of it.
                            napi::check_status!(napi::sys::napi_create_double(env, answer, &mut value)).or_throw()?;
                            napi::check_status!(napi::sys::napi_set_element(env, napi::JsValue::raw(&out), 1, value))
                                .or_throw()?;
                        }
                        // A deadline is a time on the shell's clock, a JS number (exact to 2^53 ms).
                        #[allow(clippy::cast_precision_loss)]
                        let deadline = deadline.map_or(-1.0, |ms| ms as f64);
                        let mut value = std::ptr::null_mut();
                        // SAFETY: the env of the running call; `out` is a live value of it.
                        napi::check_status!(napi::sys::napi_create_double(env, deadline, &mut value)).or_throw()?;
                        napi::check_status!(napi::sys::napi_set_element(env, napi::JsValue::raw(&out), 0, value))
                            .or_throw()?;
                        f64::from(node) * 2.0 + f64::from(u8::from(readonly))
                    }
                };
                let mut value = std::ptr::null_mut();
                // SAFETY: the env of the running call.
                napi::check_status!(napi::sys::napi_create_double(env, code, &mut value)).or_throw()?;
                Ok(value)
            },
        )
    }
}

/// The body of the hot auto-pipelining callbacks ([`ClusterSession::hot_pipeline`]): the
/// connection's two arguments (and a third for `withdrawn`) read as the methods read them,
/// then `call` on the session, its answer as a JavaScript value.
///
/// # Safety
/// `env` and `info` must be those of a call of a function made by `hot_pipeline`.
#[inline(always)]
unsafe fn pipeline_call(
    env: napi::sys::napi_env,
    info: napi::sys::napi_callback_info,
    call: impl FnOnce(&mut ss::ClusterSession, &str, bool, Unknown<'_>) -> Result<napi::sys::napi_value>,
) -> napi::sys::napi_value {
    // SAFETY: as the caller promises: the data of a function `hot_pipeline` made is the session.
    unsafe {
        crate::hot::call_with::<Rc<RefCell<ss::ClusterSession>>, 3>(env, info, |session, [address, readonly, third]| {
            let (address, readonly) = connection(address, readonly)?;
            let mut session = session.try_borrow_mut().map_err(|_| errors::from_core(shared::busy()))?;
            call(&mut session, &address, readonly, third)
        })
    }
}

/// `pipelineQueued(address, readonly)` of [`ClusterSession::hot_pipeline`].
unsafe extern "C" fn pipeline_queued_callback(
    env: napi::sys::napi_env,
    info: napi::sys::napi_callback_info,
) -> napi::sys::napi_value {
    // SAFETY: N-API calls this for a function `hot_pipeline` made.
    unsafe {
        pipeline_call(env, info, |session, address, readonly, _| {
            crate::hot::uint32(env, session.pipeline_queued(address, readonly) as u32)
        })
    }
}

/// `pipelineTake(address, readonly)` of [`ClusterSession::hot_pipeline`].
unsafe extern "C" fn pipeline_take_callback(
    env: napi::sys::napi_env,
    info: napi::sys::napi_callback_info,
) -> napi::sys::napi_value {
    // SAFETY: as for `pipeline_queued_callback`.
    unsafe {
        pipeline_call(env, info, |session, address, readonly, _| {
            crate::hot::uint32(env, session.pipeline_take(address, readonly))
        })
    }
}

/// `pipelineDone(address, readonly)` of [`ClusterSession::hot_pipeline`].
unsafe extern "C" fn pipeline_done_callback(
    env: napi::sys::napi_env,
    info: napi::sys::napi_callback_info,
) -> napi::sys::napi_value {
    // SAFETY: as for `pipeline_queued_callback`.
    unsafe {
        pipeline_call(env, info, |session, address, readonly, _| {
            crate::hot::uint32(env, session.pipeline_done(address, readonly))
        })
    }
}

/// `pipelineWithdrawn(address, readonly, count)` of [`ClusterSession::hot_pipeline`].
unsafe extern "C" fn pipeline_withdrawn_callback(
    env: napi::sys::napi_env,
    info: napi::sys::napi_callback_info,
) -> napi::sys::napi_value {
    // SAFETY: as for `pipeline_queued_callback`.
    unsafe {
        pipeline_call(env, info, |session, address, readonly, count| {
            let count = sr::argument::count("count", key::js_type(count)?).or_throw()?;
            session.pipeline_withdrawn(address, readonly, count);
            let mut value = std::ptr::null_mut();
            // SAFETY: the env of the running call.
            napi::check_status!(napi::sys::napi_get_undefined(env, &mut value)).or_throw()?;
            Ok(value)
        })
    }
}

/// The `command` argument: a [`Command`] of this addon.
///
/// # Errors
/// `invalid_argument` for any other value.
fn command_argument<'env>(env: &Env, value: Unknown<'env>) -> Result<ClassInstance<'env, Command>> {
    key::instance(env, value, |got| shared::not_a_command("command", got))
}

/// An auto-pipelining connection: its `address` (a string) and `readonly` (a boolean).
///
/// # Errors
/// `invalid_argument` for anything else.
fn connection(address: Unknown<'_>, readonly: Unknown<'_>) -> Result<(String, bool)> {
    let address = crate::text_argument(address, "address")?;
    let readonly = shared::readonly(key::js_type(readonly)?).or_throw()?;
    Ok((address, readonly))
}

/// The `access` argument: `"read"` or `"write"` ([`ss::Access::from_name`]).
fn access_argument(value: Unknown<'_>) -> Result<ss::Access> {
    ss::Access::from_name(&crate::text_argument(value, "access")?).or_throw()
}

/// A `nowMs` argument ([`shared::milliseconds`]).
pub(crate) fn milliseconds(value: Unknown<'_>) -> Result<u64> {
    unsigned(value, |got, bigint| shared::milliseconds("nowMs", got, || bigint))
}

/// A `u64` argument that is a `number` or a `bigint` (a time, a revision): `read` (one of
/// the refusals of `bindings-js/`) of what `value` is and, for a `bigint`, its value.
pub(crate) fn unsigned(
    value: Unknown<'_>,
    read: impl FnOnce(JsType<'_>, core::result::Result<u64, bool>) -> sr::Result<u64>,
) -> Result<u64> {
    let got = key::js_type(value)?;
    let bigint = match got {
        JsType::BigInt => key::bigint_u64(value)?,
        _ => Err(false),
    };
    read(got, bigint).or_throw()
}
