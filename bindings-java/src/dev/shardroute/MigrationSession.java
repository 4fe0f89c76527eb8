package dev.shardroute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * A migration session ({@code sr_migration_session}): the plans and actions of a live
 * migration, fed time ({@code nowMs}, unsigned). One caller's at a time. Results are JSON.
 */
public final class MigrationSession extends Handle {
  MigrationSession(Pointer pointer) {
    super(pointer, Ffi.LIB::sr_migration_session_free);
  }

  /** A session over {@code migration} in {@code mode}, until {@code untilMs} if present. */
  public static MigrationSession create(Migration migration, String mode, OptionalLong untilMs) {
    byte[] text = Ffi.utf8(mode);
    byte has = (byte) (untilMs.isPresent() ? 1 : 0);
    long until = untilMs.orElse(0);
    return new MigrationSession(Ffi.handle(out ->
        Ffi.LIB.sr_migration_session_new(migration.ptr(), text, text.length, has, until, out)));
  }

  /** The session a topology's migration block describes ({@code previous}, {@code held} may be null). */
  public static MigrationSession ofTopology(Router topology, Router previous, Router held) {
    return new MigrationSession(Ffi.handle(out -> Ffi.LIB.sr_migration_session_of_topology(topology.ptr(),
        previous == null ? null : previous.ptr(), held == null ? null : held.ptr(), out)));
  }

  /** The session's mode. */
  public String mode() {
    return Ffi.text((p, n) -> Ffi.LIB.sr_migration_session_mode(ptr(), p, n));
  }

  /** The epoch writes are fenced at (unsigned). */
  public long fenceEpoch() {
    LongByReference epoch = new LongByReference();
    try {
      Ffi.check(Ffi.LIB.sr_migration_session_fence_epoch(ptr(), epoch));
    } finally {
      Ffi.fence(this);
    }
    return epoch.getValue();
  }

  /** The nodes to scan, as JSON. */
  public String scanNodes() {
    return Ffi.json(out -> Ffi.LIB.sr_migration_session_scan_nodes(ptr(), out));
  }

  /** The nodes a read of the key tries, as a JSON array. */
  public String readPlan(Key key, boolean moved) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_migration_session_read_plan(ptr(), k, (byte) (moved ? 1 : 0), out));
  }

  /** The nodes a read of the key tries at {@code nowMs}, as a JSON array. */
  public String readPlanAt(Key key, boolean moved, long nowMs) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_migration_session_read_plan_at(ptr(), k, (byte) (moved ? 1 : 0), nowMs, out));
  }

  /** Where a write of the key goes, as JSON. */
  public String writePlan(Key key) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_migration_session_write_plan(ptr(), k, out));
  }

  /** The steps of a lazy move of the key, as a JSON array. */
  public String lazySteps(Key key) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_migration_session_lazy_steps(ptr(), k, out));
  }

  /**
   * The lazy moves of the keys grouped by their steps, as a JSON array of {@code {"steps",
   * "indices"}}: one per distinct steps in the order of its first key; keys that stay left
   * out; empty unless the session is lazy.
   */
  public String lazyGroups(Key[] keys) {
    SrKey[] native_ = new Ffi.Args().keys(keys);
    return Ffi.json(out -> Ffi.LIB.sr_migration_session_lazy_groups(ptr(), native_, keys.length, out));
  }

  /**
   * When a copy job starts its next step (unsigned ms), once the last one ran from
   * {@code startedMs} to {@code finishedMs}: the core's pace of {@code dutyPerMille}
   * (thousandths of the wall time the job works, 1 to 1000) and {@code minPauseMs} (the
   * shortest rest, unsigned), each empty for the core's default.
   */
  public long resumeAt(long startedMs, long finishedMs, OptionalInt dutyPerMille, OptionalLong minPauseMs) {
    LongByReference resume = new LongByReference();
    byte hasDuty = (byte) (dutyPerMille.isPresent() ? 1 : 0);
    byte hasPause = (byte) (minPauseMs.isPresent() ? 1 : 0);
    try {
      Ffi.check(Ffi.LIB.sr_migration_session_resume_at(ptr(), startedMs, finishedMs, hasDuty, dutyPerMille.orElse(0),
          hasPause, minPauseMs.orElse(0), resume));
    } finally {
      Ffi.fence(this);
    }
    return resume.getValue();
  }

  /** The next copy batch from {@code cursor}, at most {@code max}, as JSON. */
  public String copyBatch(int cursor, int max) {
    return Ffi.json(out -> Ffi.LIB.sr_migration_session_copy_batch(ptr(), cursor, max, out));
  }

  /** What to do at {@code nowMs}, as a JSON array of actions. */
  public String actions(long nowMs, boolean moved) {
    return Ffi.json(out -> Ffi.LIB.sr_migration_session_actions(ptr(), nowMs, (byte) (moved ? 1 : 0), out));
  }

  /** Whether writes are fenced for {@code minEpoch} (unsigned), as JSON. */
  public String fenced(long minEpoch) {
    return Ffi.json(out -> Ffi.LIB.sr_migration_session_fenced(ptr(), minEpoch, out));
  }

  /** When to call again after {@code nowMs}, if ever (unsigned). */
  public OptionalLong nextDeadline(long nowMs) {
    return Ffi.optional((present, value) -> Ffi.LIB.sr_migration_session_next_deadline(ptr(), nowMs, present, value));
  }
}
