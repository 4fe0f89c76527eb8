//! `sr_source_session`: the sans-IO source session (etcd's JSON gateway, ZooKeeper, an
//! HTTP endpoint polled with `If-None-Match`) fed responses, bytes and time, returning
//! actions as JSON (`Action::to_value`). One caller's: not for two threads at once.

use std::ffi::c_char;

use serde_json::{json, Value};
use sr::session::{SourceAction, SourceSession};
use sr::ErrorKind;

use crate::{
    arg_text, bytes, free_box, guard, handle, handle_mut, handle_out, json_arg, json_out, optional_out, out, put_json,
    sr_error, Res,
};

/// A source session. Free with `sr_source_session_free`.
pub struct sr_source_session(SourceSession);

unsafe fn session<'a>(pointer: *mut sr_source_session) -> Res<&'a mut SourceSession> {
    Ok(&mut handle_mut(pointer, "the source session")?.0)
}

fn actions(actions: &[SourceAction]) -> Value {
    sr::session::source::actions_value(actions)
}

/// A session from a config (JSON text, borrowed: `{"source": "etcd" | "http" |
/// "zookeeper", ...}`, core/src/session/source.rs). `*out` is freed with
/// `sr_source_session_free`.
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_new(
    config: *const c_char,
    config_len: usize,
    out_session: *mut *mut sr_source_session,
) -> *mut sr_error {
    handle_out(out_session, || {
        Ok(sr_source_session(SourceSession::from_config(&json_arg(config, config_len, "config")?)?))
    })
}

/// Frees a source session. `NULL` is a no-op.
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_free(session: *mut sr_source_session) {
    free_box(session)
}

/// A source session call that returns its actions as a JSON array (each an object with
/// one key: `request`, `connect`, `send`, `cancel`, `offered`, `lost`, `done`, `failed`).
unsafe fn source_call(
    session: *mut sr_source_session,
    out_actions: *mut *mut c_char,
    body: impl FnOnce(&mut SourceSession) -> Res<Vec<SourceAction>>,
) -> *mut sr_error {
    json_out(out_actions, || Ok(actions(&body(self::session(session)?)?)))
}

/// Starts the session at `now_ms`: `*out` is a JSON array of actions (free with
/// `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_start(
    session: *mut sr_source_session,
    now_ms: u64,
    out_actions: *mut *mut c_char,
) -> *mut sr_error {
    source_call(session, out_actions, |s| Ok(s.start(now_ms)))
}
/// A connection asked for by a `connect` action (`id`) is open.
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_opened(
    session: *mut sr_source_session,
    id: u64,
    now_ms: u64,
    out_actions: *mut *mut c_char,
) -> *mut sr_error {
    source_call(session, out_actions, |s| Ok(s.opened(id, now_ms)))
}
/// The response to request `id`: `status`, `headers` (a JSON object as text, borrowed;
/// `NULL` for none) and the body (borrowed bytes). The actions, as JSON.
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_response(
    session: *mut sr_source_session,
    id: u64,
    status: u16,
    headers: *const c_char,
    headers_len: usize,
    body: *const u8,
    body_len: usize,
    now_ms: u64,
    out_actions: *mut *mut c_char,
) -> *mut sr_error {
    source_call(session, out_actions, |s| {
        Ok({
            let headers = if headers.is_null() { json!({}) } else { json_arg(headers, headers_len, "headers")? };
            s.response(id, now_ms, status, &headers, bytes(body, body_len, "the body", ErrorKind::InvalidArgument)?)
        })
    })
}
/// Bytes (borrowed) read on stream or connection `id`. The actions, as JSON.
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_chunk(
    session: *mut sr_source_session,
    id: u64,
    data: *const u8,
    data_len: usize,
    now_ms: u64,
    out_actions: *mut *mut c_char,
) -> *mut sr_error {
    source_call(session, out_actions, |s| {
        Ok(s.chunk(id, now_ms, bytes(data, data_len, "the data", ErrorKind::InvalidArgument)?))
    })
}
/// Request or connection `id` failed: `code` (`"unreachable"`, `"closed"`,
/// `"limit_exceeded"`) and `message`, both borrowed. The actions, as JSON.
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_failed(
    session: *mut sr_source_session,
    id: u64,
    code: *const c_char,
    code_len: usize,
    message: *const c_char,
    message_len: usize,
    now_ms: u64,
    out_actions: *mut *mut c_char,
) -> *mut sr_error {
    source_call(session, out_actions, |s| {
        Ok({
            s.failed(id, now_ms, arg_text(code, code_len, "the code")?, arg_text(message, message_len, "the message")?)
        })
    })
}
/// The deadline came (`sr_source_session_deadline`). The actions, as JSON.
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_timer(
    session: *mut sr_source_session,
    now_ms: u64,
    out_actions: *mut *mut c_char,
) -> *mut sr_error {
    source_call(session, out_actions, |s| Ok(s.timer(now_ms)))
}
/// The shell closes the session. The actions, as JSON.
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_close(
    session: *mut sr_source_session,
    now_ms: u64,
    out_actions: *mut *mut c_char,
) -> *mut sr_error {
    source_call(session, out_actions, |s| Ok(s.close(now_ms)))
}

/// A call on the source (`op`: JSON text, borrowed, e.g. `{"op": "get", "key"}`) at
/// `now_ms`: `*call` receives the call's number, `*out` the actions as a JSON array
/// (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_call(
    session: *mut sr_source_session,
    op: *const c_char,
    op_len: usize,
    now_ms: u64,
    call: *mut u64,
    out_actions: *mut *mut c_char,
) -> *mut sr_error {
    guard(|| {
        let (call, slot) = (out(call, "call")?, out(out_actions, "out")?);
        let session = self::session(session)?;
        let (number, done) = session.call(&json_arg(op, op_len, "op")?, now_ms)?;
        *call = number;
        put_json(slot, &actions(&done))
    })
}

/// When to call `sr_source_session_timer` next (`*present` false: no timer).
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_deadline(
    session: *const sr_source_session,
    present: *mut bool,
    deadline_ms: *mut u64,
) -> *mut sr_error {
    optional_out(present, deadline_ms, "deadline_ms", || Ok(handle(session, "the source session")?.0.deadline()))
}

/// The session's state as JSON (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_source_session_state(
    session: *const sr_source_session,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || Ok(handle(session, "the source session")?.0.state()))
}
