package dev.shardroute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
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
