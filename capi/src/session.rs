//! The sans-IO sessions fed replies and time: `sr_cluster_session` (Redis Cluster) with
//! its `sr_command`s, and `sr_follower` (a topology follower). A session is one
//! caller's: not safe to call from two threads at once.

use std::ffi::c_char;

use serde_json::{json, Value};
use sr::session::{
    Access, Action, ClusterConfig, ClusterSession, Command, Follower, FollowerConfig, Offered, Transport,
};

use crate::router::new_router;
use crate::{
    arg_text, bytes, free_box, guard, handle_mut, handle_out, json_arg, json_out, keys, optional_out, out, sr_error,
    sr_key, sr_router, sr_str, text, texts, value_out, Res,
};
use sr::ErrorKind;

/// A Redis Cluster session. Free with `sr_cluster_session_free`.
pub struct sr_cluster_session(ClusterSession);

/// One command begun on a session (`sr_cluster_session_command`); used only with that
/// session. Free with `sr_command_free`.
pub struct sr_command(Command);

/// A topology follower. Free with `sr_follower_free`.
pub struct sr_follower(Follower);

unsafe fn session<'a>(pointer: *mut sr_cluster_session) -> Res<&'a mut ClusterSession> {
    Ok(&mut handle_mut(pointer, "the session")?.0)
}

unsafe fn command<'a>(pointer: *mut sr_command) -> Res<&'a mut Command> {
    Ok(&mut handle_mut(pointer, "the command")?.0)
}

unsafe fn access(name: *const c_char, name_len: usize) -> Res<Access> {
    Access::from_name(arg_text(name, name_len, "access")?)
}

/// A config argument (JSON text), or the defaults for `NULL`.
unsafe fn config_or_default<C: Default>(
    config: *const c_char,
    config_len: usize,
    parse: impl FnOnce(&Value) -> Res<C>,
) -> Res<C> {
    if config.is_null() {
        Ok(C::default())
    } else {
        parse(&json_arg(config, config_len, "config")?)
    }
}

/// The session's defaults as JSON (`{"max_redirects", ...}`; free with `sr_string_free`):
/// the config a `NULL` config means.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_config_defaults(out_json: *mut *mut c_char) -> *mut sr_error {
    json_out(out_json, || Ok(ClusterConfig::default().to_value()))
}

/// A session with no table yet over `seed_count` seeds (`host:port`, borrowed) and a
/// config (JSON text, borrowed; `NULL` for the defaults). `*out` is freed with
/// `sr_cluster_session_free`. `invalid_argument` for no seeds, a bad one, a bad config.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_new(
    seeds: *const sr_str,
    seed_count: usize,
    config: *const c_char,
    config_len: usize,
    out_session: *mut *mut sr_cluster_session,
) -> *mut sr_error {
    handle_out(out_session, || {
        let seeds = texts(seeds, seed_count, "a seed")?;
        let config = config_or_default(config, config_len, ClusterConfig::from_value)?;
        Ok(sr_cluster_session(ClusterSession::new(&seeds, config)?))
    })
}

/// Frees a session. `NULL` is a no-op. Its commands are freed apart (`sr_command_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_free(session: *mut sr_cluster_session) {
    free_box(session)
}

/// Frees a command. `NULL` is a no-op.
#[no_mangle]
pub unsafe extern "C" fn sr_command_free(command: *mut sr_command) {
    free_box(command)
}

/// Begins a command on `count` keys (borrowed) with `access` (`"read"` or `"write"`,
/// borrowed) at `now_ms`: `*out` receives the command (free with `sr_command_free`),
/// `*slot` its slot. `cross_slot` for keys in two slots.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_command(
    session: *mut sr_cluster_session,
    keys: *const sr_key,
    count: usize,
    access: *const c_char,
    access_len: usize,
    now_ms: u64,
    out_command: *mut *mut sr_command,
    slot: *mut u32,
) -> *mut sr_error {
    guard(|| {
        let (target, slot) = (out(out_command, "out")?, out(slot, "slot")?);
        let session = self::session(session)?;
        let keys = self::keys(keys, count)?;
        let begun = session.command(&keys, self::access(access, access_len)?, now_ms)?;
        *slot = begun.slot();
        *target = Box::into_raw(Box::new(sr_command(begun)));
        Ok(())
    })
}

/// A call on a session and one of its commands that returns an action, written as JSON.
unsafe fn action_call(
    session: *mut sr_cluster_session,
    command: *mut sr_command,
    out_action: *mut *mut c_char,
    body: impl FnOnce(&mut ClusterSession, &mut Command) -> Res<Action>,
) -> *mut sr_error {
    json_out(out_action, || Ok(body(self::session(session)?, self::command(command)?)?.to_value()))
}

/// A pipeline call on one connection.
unsafe fn pipeline_call(
    session: *mut sr_cluster_session,
    address: *const c_char,
    address_len: usize,
    body: impl FnOnce(&mut ClusterSession, &str) -> Res<()>,
) -> *mut sr_error {
    guard(|| body(self::session(session)?, arg_text(address, address_len, "the address")?))
}

/// A pipeline call on one connection that writes one value to `*target` (`what`).
unsafe fn pipeline_value<T>(
    session: *mut sr_cluster_session,
    address: *const c_char,
    address_len: usize,
    target: *mut T,
    what: &str,
    body: impl FnOnce(&mut ClusterSession, &str) -> T,
) -> *mut sr_error {
    pipeline_call(session, address, address_len, |s, address| {
        *out(target, what)? = body(s, address);
        Ok(())
    })
}

/// What to do next for `command` at `now_ms`: `*out` is an action as JSON, one of
/// `{"send": {"address", "host", "port", "asking", "readonly"}}`, `{"wait": {"until_ms",
/// "delay_ms"}}`, `{"refresh": {}}`, `{"done": {}}`, `{"fail": {"code"}}` (free with
/// `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_poll(
    session: *mut sr_cluster_session,
    command: *mut sr_command,
    now_ms: u64,
    out_action: *mut *mut c_char,
) -> *mut sr_error {
    action_call(session, command, out_action, |s, c| Ok(s.poll(c, now_ms)))
}
/// The command's reply was a success: the next action (as `sr_cluster_session_poll`).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_succeeded(
    session: *mut sr_cluster_session,
    command: *mut sr_command,
    now_ms: u64,
    out_action: *mut *mut c_char,
) -> *mut sr_error {
    action_call(session, command, out_action, |s, c| Ok(s.succeeded(c, now_ms)))
}
/// The attempt has had no reply for the stall time: the next action.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_stalled(
    session: *mut sr_cluster_session,
    command: *mut sr_command,
    now_ms: u64,
    out_action: *mut *mut c_char,
) -> *mut sr_error {
    action_call(session, command, out_action, |s, c| Ok(s.stalled(c, now_ms)))
}
/// The command's deadline came: the next action.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_on_deadline(
    session: *mut sr_cluster_session,
    command: *mut sr_command,
    now_ms: u64,
    out_action: *mut *mut c_char,
) -> *mut sr_error {
    action_call(session, command, out_action, |s, c| Ok(s.on_deadline(c, now_ms)))
}
/// The reply was an error: `text` (borrowed) and `name_count` class names or codes,
/// most derived first (borrowed). The next action.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_failed(
    session: *mut sr_cluster_session,
    command: *mut sr_command,
    text: *const c_char,
    text_len: usize,
    names: *const sr_str,
    name_count: usize,
    now_ms: u64,
    out_action: *mut *mut c_char,
) -> *mut sr_error {
    action_call(session, command, out_action, |s, c| {
        Ok({
            let names = texts(names, name_count, "a name")?;
            s.failed(c, arg_text(text, text_len, "the error text")?, &names, now_ms)
        })
    })
}
/// The connection failed (`why`: `"refused"`, `"reset"`, `"timeout"`, borrowed): the
/// next action.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_unreachable(
    session: *mut sr_cluster_session,
    command: *mut sr_command,
    why: *const c_char,
    why_len: usize,
    now_ms: u64,
    out_action: *mut *mut c_char,
) -> *mut sr_error {
    action_call(session, command, out_action, |s, c| {
        Ok({
            let why = arg_text(why, why_len, "why")?;
            let why = Transport::from_name(why)
                .ok_or_else(|| crate::argument(format!("why is {why:?}, not refused, reset or timeout")))?;
            s.unreachable(c, why, now_ms)
        })
    })
}

/// When to ask about `command` next: `*present` false when no deadline, else
/// `*deadline_ms`.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_deadline(
    session: *mut sr_cluster_session,
    command: *mut sr_command,
    present: *mut bool,
    deadline_ms: *mut u64,
) -> *mut sr_error {
    optional_out(present, deadline_ms, "deadline_ms", || Ok(self::session(session)?.deadline(self::command(command)?)))
}

/// A refresh request was sent to `address` (borrowed) at `now_ms`: its deadline
/// (`*present`, `*deadline_ms`).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_refresh_sent(
    session: *mut sr_cluster_session,
    address: *const c_char,
    address_len: usize,
    now_ms: u64,
    present: *mut bool,
    deadline_ms: *mut u64,
) -> *mut sr_error {
    optional_out(present, deadline_ms, "deadline_ms", || {
        self::session(session)?.refresh_sent(arg_text(address, address_len, "the address")?, now_ms)
    })
}

/// The deadline of the session's own request in flight (`*present`, `*deadline_ms`).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_next_deadline(
    session: *mut sr_cluster_session,
    present: *mut bool,
    deadline_ms: *mut u64,
) -> *mut sr_error {
    optional_out(present, deadline_ms, "deadline_ms", || Ok(self::session(session)?.next_deadline()))
}

/// The deadline of one node's pipeline of a batch sent at `now_ms`.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_batch_deadline(
    session: *mut sr_cluster_session,
    now_ms: u64,
    present: *mut bool,
    deadline_ms: *mut u64,
) -> *mut sr_error {
    optional_out(present, deadline_ms, "deadline_ms", || Ok(self::session(session)?.batch_deadline(now_ms)))
}

/// Whether the session's request in flight was given up at `now_ms`, into `*timed_out`.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_timeout(
    session: *mut sr_cluster_session,
    now_ms: u64,
    timed_out: *mut bool,
) -> *mut sr_error {
    value_out(timed_out, "timed_out", || Ok(self::session(session)?.timeout(now_ms)))
}

/// A `CLUSTER SHARDS` reply (JSON text, borrowed) installs its table at `now_ms`;
/// `invalid_argument` when it does not make a whole table (the table is kept).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_refreshed(
    session: *mut sr_cluster_session,
    reply: *const c_char,
    reply_len: usize,
    now_ms: u64,
) -> *mut sr_error {
    guard(|| self::session(session)?.refreshed(&json_arg(reply, reply_len, "reply")?, now_ms))
}

/// No refresh candidate gave a usable reply at `now_ms`.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_refresh_failed(
    session: *mut sr_cluster_session,
    now_ms: u64,
) -> *mut sr_error {
    guard(|| {
        self::session(session)?.refresh_failed(now_ms);
        Ok(())
    })
}

/// Where a refresh asks, in order: `*out` is a JSON array of addresses (free with
/// `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_candidates(
    session: *mut sr_cluster_session,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let addresses: Vec<String> = self::session(session)?.refresh_candidates().iter().map(|e| e.address()).collect();
        Ok(json!(addresses))
    })
}

/// The session's counters: `*out` is `{"commands", "moved", "ask", ..., "errors": {}}`
/// (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_stats(
    session: *mut sr_cluster_session,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || Ok(self::session(session)?.stats().to_value()))
}

/// A batch of `count` keys (borrowed) grouped by connection: `*out` is `{"groups":
/// [{"address", "readonly", "slots": [[slot, [key indices]]]}]}` (free with
/// `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_plan(
    session: *mut sr_cluster_session,
    keys: *const sr_key,
    count: usize,
    access: *const c_char,
    access_len: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let session = self::session(session)?;
        let keys = self::keys(keys, count)?;
        let groups = session.plan(&keys, self::access(access, access_len)?)?;
        let groups: Vec<Value> = groups
            .iter()
            .map(|g| json!({"address": g.target.endpoint.address(), "readonly": g.target.readonly, "slots": g.slots}))
            .collect();
        Ok(json!({ "groups": groups }))
    })
}

/// A command was queued on the connection: `*queued` is `0` (wait), `1` (schedule one
/// flush at the end of the turn) or `2` (the connection was idle: write it now).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_pipeline_queued(
    session: *mut sr_cluster_session,
    address: *const c_char,
    address_len: usize,
    readonly: bool,
    queued: *mut u32,
) -> *mut sr_error {
    pipeline_value(session, address, address_len, queued, "queued", |s, address| {
        s.pipeline_queued(address, readonly) as u32
    })
}
/// How many queued commands go in the next write, into `*write` (0: none now).
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_pipeline_take(
    session: *mut sr_cluster_session,
    address: *const c_char,
    address_len: usize,
    readonly: bool,
    write: *mut u32,
) -> *mut sr_error {
    pipeline_value(session, address, address_len, write, "write", |s, address| s.pipeline_take(address, readonly))
}
/// One write ended: how many queued commands to write now, into `*write`.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_pipeline_done(
    session: *mut sr_cluster_session,
    address: *const c_char,
    address_len: usize,
    readonly: bool,
    write: *mut u32,
) -> *mut sr_error {
    pipeline_value(session, address, address_len, write, "write", |s, address| s.pipeline_done(address, readonly))
}
/// `count` queued, unwritten commands left the queue.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_pipeline_withdrawn(
    session: *mut sr_cluster_session,
    address: *const c_char,
    address_len: usize,
    readonly: bool,
    count: u32,
) -> *mut sr_error {
    pipeline_call(session, address, address_len, |s, address| {
        s.pipeline_withdrawn(address, readonly, count);
        Ok(())
    })
}
/// Commands queued and writes in flight on the connection.
#[no_mangle]
pub unsafe extern "C" fn sr_cluster_session_pipeline_pending(
    session: *mut sr_cluster_session,
    address: *const c_char,
    address_len: usize,
    readonly: bool,
    queued: *mut u32,
    writes: *mut u32,
) -> *mut sr_error {
    pipeline_call(session, address, address_len, |s, address| {
        let (queued, writes) = (out(queued, "queued")?, out(writes, "writes")?);
        let (now_queued, now_writes) = s.pipeline_pending(address, readonly);
        *queued = now_queued;
        *writes = now_writes;
        Ok(())
    })
}

unsafe fn follower<'a>(pointer: *mut sr_follower) -> Res<&'a mut Follower> {
    Ok(&mut handle_mut(pointer, "the follower")?.0)
}

/// The follower's defaults as JSON (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_follower_config_defaults(out_json: *mut *mut c_char) -> *mut sr_error {
    json_out(out_json, || Ok(FollowerConfig::default().to_value()))
}

/// A follower with a config (JSON text, borrowed; `NULL` for the defaults). `*out` is
/// freed with `sr_follower_free`.
#[no_mangle]
pub unsafe extern "C" fn sr_follower_new(
    config: *const c_char,
    config_len: usize,
    out_follower: *mut *mut sr_follower,
) -> *mut sr_error {
    handle_out(out_follower, || {
        Ok(sr_follower(Follower::new(config_or_default(config, config_len, FollowerConfig::from_value)?)))
    })
}

/// Frees a follower. `NULL` is a no-op.
#[no_mangle]
pub unsafe extern "C" fn sr_follower_free(follower: *mut sr_follower) {
    free_box(follower)
}

/// A follower call that offers a document and writes the outcome as JSON.
unsafe fn offer_call(
    follower: *mut sr_follower,
    out_json: *mut *mut c_char,
    body: impl FnOnce(&mut Follower) -> Res<Offered>,
) -> *mut sr_error {
    json_out(out_json, || Ok(body(self::follower(follower)?)?.to_value()))
}

/// A document (JSON text, borrowed) seen at `revision`, `now_ms`: `*out` is
/// `{"installed": {"epoch"}}`, `{"unchanged": {}}` or `{"refused": {"code"}}` (free with
/// `sr_string_free`). A document that is not UTF-8 is refused like one that is not JSON.
#[no_mangle]
pub unsafe extern "C" fn sr_follower_offer(
    follower: *mut sr_follower,
    document: *const c_char,
    document_len: usize,
    revision: u64,
    now_ms: u64,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    offer_call(follower, out_json, |f| {
        Ok(f.offer(text(document, document_len, "the document", ErrorKind::InvalidTopology)?, revision, now_ms))
    })
}

/// A binary dictionary (borrowed) seen at `revision`: as `sr_follower_offer`.
#[no_mangle]
pub unsafe extern "C" fn sr_follower_offer_dictionary(
    follower: *mut sr_follower,
    data: *const u8,
    data_len: usize,
    revision: u64,
    now_ms: u64,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    offer_call(follower, out_json, |f| {
        Ok(f.offer_dictionary(bytes(data, data_len, "the dictionary", ErrorKind::InvalidArgument)?, revision, now_ms))
    })
}

/// A stored value (borrowed bytes: a JSON document or a binary dictionary, told apart by
/// the core) seen at `revision`: as `sr_follower_offer`.
#[no_mangle]
pub unsafe extern "C" fn sr_follower_offer_bytes(
    follower: *mut sr_follower,
    data: *const u8,
    data_len: usize,
    revision: u64,
    now_ms: u64,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    offer_call(follower, out_json, |f| {
        Ok(f.offer_bytes(bytes(data, data_len, "the value", ErrorKind::InvalidArgument)?, revision, now_ms))
    })
}

/// The watch was lost at `now_ms`: when to reconnect, into `*reconnect_at_ms`.
#[no_mangle]
pub unsafe extern "C" fn sr_follower_disconnected(
    follower: *mut sr_follower,
    now_ms: u64,
    reconnect_at_ms: *mut u64,
) -> *mut sr_error {
    value_out(reconnect_at_ms, "reconnect_at_ms", || Ok(self::follower(follower)?.disconnected(now_ms)))
}

/// The watch is back.
#[no_mangle]
pub unsafe extern "C" fn sr_follower_connected(follower: *mut sr_follower) -> *mut sr_error {
    guard(|| {
        self::follower(follower)?.connected();
        Ok(())
    })
}

/// The pending reconnect time (`*present`, `*deadline_ms`).
#[no_mangle]
pub unsafe extern "C" fn sr_follower_next_deadline(
    follower: *mut sr_follower,
    present: *mut bool,
    deadline_ms: *mut u64,
) -> *mut sr_error {
    optional_out(present, deadline_ms, "deadline_ms", || Ok(self::follower(follower)?.next_deadline()))
}

/// The write that publishes `document` (JSON text, borrowed) after the one held: `*out`
/// is `{"expected_revision": decimal | null, "epoch": decimal, "document"}` (free with
/// `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_follower_publish(
    follower: *mut sr_follower,
    document: *const c_char,
    document_len: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let follower = self::follower(follower)?;
        let write = follower.publish(text(document, document_len, "the document", ErrorKind::InvalidTopology)?)?;
        Ok(json!({
            "expected_revision": write.expected_revision.map(|r| r.to_string()),
            "epoch": write.epoch.to_string(),
            "document": write.document,
        }))
    })
}

/// The router held: `*out` receives a new handle on it (free with `sr_router_free`), or
/// `NULL` before the first document.
#[no_mangle]
pub unsafe extern "C" fn sr_follower_router(
    follower: *mut sr_follower,
    out_router: *mut *mut sr_router,
) -> *mut sr_error {
    value_out(out_router, "out", || {
        Ok(self::follower(follower)?.router().map_or(std::ptr::null_mut(), |r| new_router(r.clone())))
    })
}

/// The revision held (`*present` false before the first document).
#[no_mangle]
pub unsafe extern "C" fn sr_follower_revision(
    follower: *mut sr_follower,
    present: *mut bool,
    revision: *mut u64,
) -> *mut sr_error {
    optional_out(present, revision, "revision", || Ok(self::follower(follower)?.revision()))
}

/// The follower's counters: `*out` is `{"offered", "installed", "unchanged",
/// "disconnects", "refused": {code: count}}` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_follower_stats(follower: *mut sr_follower, out_json: *mut *mut c_char) -> *mut sr_error {
    json_out(out_json, || Ok(self::follower(follower)?.stats().to_value()))
}
