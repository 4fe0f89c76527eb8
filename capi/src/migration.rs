//! `sr_migration` (a move from one topology to the next) and `sr_migration_session`
//! (the sans-IO plan of reads and writes while it runs).

use std::ffi::c_char;

use serde_json::{json, Value};
use sr::migration::{Holder, Migration};
use sr::session::{Fenced, MigrationAction, MigrationSession, Mode, Pace};

use crate::router::router;
use crate::{
    arg_text, borrowed_out, free_box, handle, handle_out, json_out, key, key_value, keys, optional_out, sr_error,
    sr_key, sr_router, value_out, Res,
};

/// A migration from one router to the next. Immutable; free with `sr_migration_free`.
pub struct sr_migration(Migration);

/// A migration session. Immutable; free with `sr_migration_session_free`.
pub struct sr_migration_session(MigrationSession);

unsafe fn migration<'a>(pointer: *const sr_migration) -> Res<&'a Migration> {
    Ok(&handle(pointer, "the migration")?.0)
}

unsafe fn session<'a>(pointer: *const sr_migration_session) -> Res<&'a MigrationSession> {
    Ok(&handle(pointer, "the migration session")?.0)
}

/// A migration from `before` to `after` (both stay the caller's): `*out` is freed with
/// `sr_migration_free`. `stale_epoch` unless `after` is newer.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_new(
    before: *const sr_router,
    after: *const sr_router,
    out_migration: *mut *mut sr_migration,
) -> *mut sr_error {
    handle_out(out_migration, || Ok(sr_migration(Migration::new(router(before)?.clone(), router(after)?.clone())?)))
}

/// The migration a dictionary topology describes (its moving entries): `*out` is freed
/// with `sr_migration_free`.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_of_dictionary(
    dictionary: *const sr_router,
    out_migration: *mut *mut sr_migration,
) -> *mut sr_error {
    handle_out(out_migration, || Ok(sr_migration(Migration::of_dictionary(router(dictionary)?)?)))
}

/// Frees a migration. `NULL` is a no-op. Text borrowed from it is invalid afterwards.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_free(migration: *mut sr_migration) {
    free_box(migration)
}

/// A migration call with one key that writes JSON text.
unsafe fn key_json<'m>(
    migration: *const sr_migration,
    key: *const sr_key,
    out_json: *mut *mut c_char,
    body: impl FnOnce(&'m Migration, sr::Key<'m>) -> Res<Value>,
) -> *mut sr_error {
    json_out(out_json, || body(self::migration(migration)?, self::key(key)?))
}

/// Whether `key` (borrowed) moves: `*out` is `null` or `[old node, new node]` (free
/// with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_moves(
    migration: *const sr_migration,
    key: *const sr_key,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    key_json(migration, key, out_json, |m, key| Ok(json!(m.moves(key)?.map(|(from, to)| [from, to]))))
}
/// The nodes a read of `key` asks, the new owner first (`moved`: whether the key's
/// data is known to have moved): a JSON array (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_read_targets(
    migration: *const sr_migration,
    key: *const sr_key,
    moved: bool,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    key_json(migration, key, out_json, |m, key| Ok(json!(m.read_targets(key, moved)?)))
}
/// The keys a read of `key` looks under while salting changes: a JSON array of key
/// objects (`{"hex"}` or `{"u64"}`; free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_read_keys(
    migration: *const sr_migration,
    key: *const sr_key,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    key_json(migration, key, out_json, |m, key| Ok(json!(m.read_keys(key).iter().map(key_value).collect::<Vec<_>>())))
}
/// The key a write of `key` with `salt` goes under: a JSON key object (free with
/// `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_write_key(
    migration: *const sr_migration,
    key: *const sr_key,
    salt: u32,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    key_json(migration, key, out_json, |m, key| Ok(key_value(&m.write_key(key, salt))))
}

/// The node a write of `key` (borrowed) goes to: `*node`/`*node_len` receive text
/// borrowed from the migration, valid until `sr_migration_free(migration)`.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_write_target(
    migration: *const sr_migration,
    key: *const sr_key,
    node: *mut *const c_char,
    node_len: *mut usize,
) -> *mut sr_error {
    borrowed_out(node, node_len, ("node", "node_len"), || self::migration(migration)?.write_target(self::key(key)?))
}

/// The shards that change owner: `*out` is a JSON array of `[shard, old node, new node]`
/// in shard order (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_moving_shards(
    migration: *const sr_migration,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let shards = self::migration(migration)?.moving_shards()?;
        Ok(json!(shards.iter().map(|s| json!([s.shard, s.from, s.to])).collect::<Vec<_>>()))
    })
}

/// The nodes a query over every key reads, in order: a JSON array (free with
/// `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_scan_nodes(
    migration: *const sr_migration,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || Ok(json!(self::migration(migration)?.scan_nodes())))
}

/// The indices of the `count` keys (borrowed) that change node: a JSON array of
/// increasing integers (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_moving_keys(
    migration: *const sr_migration,
    keys: *const sr_key,
    count: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || Ok(json!(self::migration(migration)?.moving_keys(self::keys(keys, count)?)?)))
}

/// Which of `count` keys (borrowed) held by node `node` (`node_len` bytes, borrowed) or,
/// when `node` is `NULL`, by shard `shard`, belong elsewhere under `router`: `*out` is
/// `{"misplaced": [indices], "count", "checked"}` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_misplaced(
    router: *const sr_router,
    node: *const c_char,
    node_len: usize,
    shard: u32,
    keys: *const sr_key,
    count: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    json_out(out_json, || {
        let router = self::router(router)?;
        let holder =
            if node.is_null() { Holder::Shard(shard) } else { Holder::Node(arg_text(node, node_len, "the node")?) };
        let found = sr::migration::misplaced(router, holder, self::keys(keys, count)?)?;
        Ok(json!({"misplaced": found.indices, "count": found.count(), "checked": found.checked}))
    })
}

/// A session over `migration` (stays the caller's) in mode `mode` (`"background"`,
/// `"lazy"` or `"expiration"`, borrowed text); `until_ms` is read when `has_until`
/// (an expiration's end). `*out` is freed with `sr_migration_session_free`.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_new(
    migration: *const sr_migration,
    mode: *const c_char,
    mode_len: usize,
    has_until: bool,
    until_ms: u64,
    out_session: *mut *mut sr_migration_session,
) -> *mut sr_error {
    handle_out(out_session, || {
        let mode = Mode::from_name(arg_text(mode, mode_len, "the mode")?)?;
        let migration = self::migration(migration)?.clone();
        Ok(sr_migration_session(MigrationSession::of_mode(migration, mode, has_until.then_some(until_ms))?))
    })
}

/// The session for the routing a service holds: `topology`, the `previous` one and the
/// one `held` (each `NULL` when none; all stay the caller's); the session decides its
/// mode. `*out` is freed with `sr_migration_session_free`.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_of_topology(
    topology: *const sr_router,
    previous: *const sr_router,
    held: *const sr_router,
    out_session: *mut *mut sr_migration_session,
) -> *mut sr_error {
    handle_out(out_session, || {
        let optional = |pointer: *const sr_router| -> Res<Option<sr::Router>> {
            if pointer.is_null() {
                Ok(None)
            } else {
                Ok(Some(router(pointer)?.clone()))
            }
        };
        let built = MigrationSession::of_topology(router(topology)?.clone(), optional(previous)?, optional(held)?)?;
        Ok(sr_migration_session(built))
    })
}

/// Frees a migration session. `NULL` is a no-op.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_free(session: *mut sr_migration_session) {
    free_box(session)
}

/// The session's mode name (`"plain"`, `"background"`, `"lazy"`, `"catch-up"`):
/// static text, never freed.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_mode(
    session: *const sr_migration_session,
    mode: *mut *const c_char,
    mode_len: *mut usize,
) -> *mut sr_error {
    borrowed_out(mode, mode_len, ("mode", "mode_len"), || Ok(self::session(session)?.mode().name()))
}

/// The epoch writes are fenced with, into `*epoch`.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_fence_epoch(
    session: *const sr_migration_session,
    epoch: *mut u64,
) -> *mut sr_error {
    value_out(epoch, "epoch", || Ok(self::session(session)?.fence_epoch()))
}

/// A migration session call that writes JSON text.
unsafe fn session_json<'s>(
    session: *const sr_migration_session,
    out_json: *mut *mut c_char,
    body: impl FnOnce(&'s MigrationSession) -> Res<Value>,
) -> *mut sr_error {
    json_out(out_json, || body(self::session(session)?))
}

/// The nodes a query over every key reads: a JSON array (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_scan_nodes(
    session: *const sr_migration_session,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    session_json(session, out_json, |s| Ok(json!(s.scan_nodes())))
}
/// The nodes a read of `key` (borrowed) asks, in order: a JSON array (free with
/// `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_read_plan(
    session: *const sr_migration_session,
    key: *const sr_key,
    moved: bool,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    session_json(session, out_json, |s| Ok(json!(s.read_plan(self::key(key)?, moved)?)))
}
/// `sr_migration_session_read_plan` at time `now_ms` (an expiration session's plan
/// changes at its end).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_read_plan_at(
    session: *const sr_migration_session,
    key: *const sr_key,
    moved: bool,
    now_ms: u64,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    session_json(session, out_json, |s| Ok(json!(s.read_plan_at(self::key(key)?, moved, now_ms)?)))
}
/// Where a write of `key` (borrowed) goes: `{"node", "fence_epoch"}` (the epoch a
/// decimal string; free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_write_plan(
    session: *const sr_migration_session,
    key: *const sr_key,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    session_json(session, out_json, |s| {
        Ok({
            let plan = s.write_plan(self::key(key)?)?;
            json!({"node": plan.node, "fence_epoch": plan.fence_epoch.to_string()})
        })
    })
}
/// A lazy session's steps for `key` (borrowed): `null` or `{"read_from", "write_to",
/// "retire_from", "fence_epoch"}` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_lazy_steps(
    session: *const sr_migration_session,
    key: *const sr_key,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    session_json(session, out_json, |s| {
        Ok({
            json!(s.lazy_steps(self::key(key)?)?.map(|s| json!({"read_from": s.read_from, "write_to": s.write_to,
            "retire_from": s.retire_from, "fence_epoch": s.fence_epoch.to_string()})))
        })
    })
}
/// The lazy moves of the `count` keys (borrowed) grouped by their steps: a JSON array of
/// `{"steps": {"read_from", "write_to", "retire_from", "fence_epoch"}, "indices": [...]}`,
/// one per distinct steps in the order of its first key, indices increasing, keys that
/// stay left out; `[]` unless the session is lazy (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_lazy_groups(
    session: *const sr_migration_session,
    keys: *const sr_key,
    count: usize,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    session_json(session, out_json, |s| {
        let groups = s.lazy_groups(self::keys(keys, count)?)?;
        Ok(json!(groups
            .iter()
            .map(|g| json!({"steps": {"read_from": g.steps.read_from, "write_to": g.steps.write_to,
                "retire_from": g.steps.retire_from, "fence_epoch": g.steps.fence_epoch.to_string()},
                "indices": g.indices}))
            .collect::<Vec<_>>()))
    })
}
/// When a copy job starts its next step, once the last one ran from `started_ms` to
/// `finished_ms` (its monotonic clock, ms), into `*resume_ms`: the finish plus the larger
/// of the shortest pause and the rest that keeps the job at its duty (thousandths of the
/// wall time, 1 to 1000), saturating. `duty_per_mille` is read when `has_duty` and
/// `min_pause_ms` when `has_min_pause`; otherwise the core's defaults (50, 0).
/// `invalid_argument` for a duty outside 1..=1000 or `finished_ms` before `started_ms`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sr_migration_session_resume_at(
    session: *const sr_migration_session,
    started_ms: u64,
    finished_ms: u64,
    has_duty: bool,
    duty_per_mille: u32,
    has_min_pause: bool,
    min_pause_ms: u64,
    resume_ms: *mut u64,
) -> *mut sr_error {
    value_out(resume_ms, "resume_ms", || {
        let pace = Pace::of(has_duty.then_some(duty_per_mille), has_min_pause.then_some(min_pause_ms))?;
        self::session(session)?.resume_at(started_ms, finished_ms, pace)
    })
}
/// A background copy's next batch from `cursor`, at most `max` units: `{"units":
/// [[shard, from, to]], "next": cursor | null}` (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_copy_batch(
    session: *const sr_migration_session,
    cursor: u32,
    max: u32,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    session_json(session, out_json, |s| {
        Ok({
            let batch = s.copy_batch(cursor, max)?;
            json!({"units": batch.units.iter().map(|u| json!([u.shard, u.from, u.to])).collect::<Vec<_>>(), "next": batch.next})
        })
    })
}
/// What the service does at `now_ms`: a JSON array of `{"kind": "retire", "node"}`
/// (free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_actions(
    session: *const sr_migration_session,
    now_ms: u64,
    moved: bool,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    session_json(session, out_json, |s| {
        Ok({
            json!(s
                .actions(now_ms, moved)
                .into_iter()
                .map(|action| match action {
                    MigrationAction::Retire { node } => json!({"kind": "retire", "node": node}),
                })
                .collect::<Vec<_>>())
        })
    })
}
/// What a write refused by a fence at `min_epoch` means: `{"refresh": {}}` (follow a
/// newer document, plan again, retry; free with `sr_string_free`).
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_fenced(
    session: *const sr_migration_session,
    min_epoch: u64,
    out_json: *mut *mut c_char,
) -> *mut sr_error {
    session_json(session, out_json, |s| {
        Ok(match s.fenced(min_epoch)? {
            Fenced::Refresh => json!({"refresh": {}}),
        })
    })
}

/// When to call the session next after `now_ms`: `*present` false when never, else
/// `*deadline_ms`.
#[no_mangle]
pub unsafe extern "C" fn sr_migration_session_next_deadline(
    session: *const sr_migration_session,
    now_ms: u64,
    present: *mut bool,
    deadline_ms: *mut u64,
) -> *mut sr_error {
    optional_out(present, deadline_ms, "deadline_ms", || Ok(self::session(session)?.next_deadline(now_ms)))
}
