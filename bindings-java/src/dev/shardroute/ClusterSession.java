package dev.shardroute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.ByteByReference;
import com.sun.jna.ptr.IntByReference;
import java.util.OptionalLong;

/**
 * A sans-IO Redis Cluster session ({@code sr_cluster_session}): fed replies, errors and time
 * ({@code nowMs}, unsigned), it answers with the next action as JSON. One caller's at a time.
 */
public final class ClusterSession extends Handle {
  ClusterSession(Pointer pointer) {
    super(pointer, Ffi.LIB::sr_cluster_session_free);
  }

  /** Queued and write counts of a pipeline. */
  public record Pending(int queued, int writes) {}

  /** A session over seed addresses with a config (JSON, or null for the defaults). */
  public static ClusterSession create(String[] seeds, String configJson) {
    Ffi.Args args = new Ffi.Args();
    SrStr[] native_ = args.strs(seeds);
    byte[] config = Ffi.utf8(configJson);
    return new ClusterSession(Ffi.handle(out ->
        Ffi.LIB.sr_cluster_session_new(native_, seeds.length, config, Ffi.len(config), out)));
  }

  /** Begins a command on {@code keys} with {@code access} ("read" or "write"). */
  public Command command(Key[] keys, String access, long nowMs) {
    SrKey[] native_ = new Ffi.Args().keys(keys);
    byte[] text = Ffi.utf8(access);
    IntByReference slot = new IntByReference();
    Pointer command = Ffi.handle(out ->
        Ffi.LIB.sr_cluster_session_command(ptr(), native_, keys.length, text, text.length, nowMs, out, slot));
    return new Command(command, slot.getValue());
  }

  /** The command's next action. */
  public String poll(Command command, long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_cluster_session_poll(ptr(), command.ptr(), nowMs, out));
  }

  /** The command succeeded: the next action. */
  public String succeeded(Command command, long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_cluster_session_succeeded(ptr(), command.ptr(), nowMs, out));
  }

  /** The command stalled: the next action. */
  public String stalled(Command command, long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_cluster_session_stalled(ptr(), command.ptr(), nowMs, out));
  }

  /** The command's deadline passed: the next action. */
  public String onDeadline(Command command, long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_cluster_session_on_deadline(ptr(), command.ptr(), nowMs, out));
  }

  /** The command failed with an error reply {@code text} ({@code names}: the reply's error names). */
  public String failed(Command command, String text, String[] names, long nowMs) {
    Ffi.Args args = new Ffi.Args();
    SrStr[] native_ = args.strs(names);
    byte[] reply = Ffi.utf8(text);
    return Ffi.json(out -> Ffi.LIB.sr_cluster_session_failed(ptr(), command.ptr(), reply, reply.length, native_,
        names.length, nowMs, out));
  }

  /** The command's node could not be reached ({@code why}): the next action. */
  public String unreachable(Command command, String why, long nowMs) {
    byte[] text = Ffi.utf8(why);
    return Ffi.json(out -> Ffi.LIB.sr_cluster_session_unreachable(ptr(), command.ptr(), text, text.length, nowMs, out));
  }

  /** The command's deadline, if any. */
  public OptionalLong deadline(Command command) {
    return Ffi.optional((present, value) -> Ffi.LIB.sr_cluster_session_deadline(ptr(), command.ptr(), present, value));
  }

  /** A refresh was sent to {@code address}: its deadline, if any. */
  public OptionalLong refreshSent(String address, long nowMs) {
    byte[] text = Ffi.utf8(address);
    return Ffi.optional((present, value) ->
        Ffi.LIB.sr_cluster_session_refresh_sent(ptr(), text, text.length, nowMs, present, value));
  }

  /** The session's next deadline, if any. */
  public OptionalLong nextDeadline() {
    return Ffi.optional((present, value) -> Ffi.LIB.sr_cluster_session_next_deadline(ptr(), present, value));
  }

  /** The batch's deadline, if any. */
  public OptionalLong batchDeadline(long nowMs) {
    return Ffi.optional((present, value) -> Ffi.LIB.sr_cluster_session_batch_deadline(ptr(), nowMs, present, value));
  }

  /** Whether the session timed out at {@code nowMs}. */
  public boolean timeout(long nowMs) {
    ByteByReference timedOut = new ByteByReference();
    try {
      Ffi.check(Ffi.LIB.sr_cluster_session_timeout(ptr(), nowMs, timedOut));
    } finally {
      Ffi.fence(this);
    }
    return timedOut.getValue() != 0;
  }

  /** A refresh answered with {@code replyJson} (the CLUSTER SHARDS/SLOTS reply as JSON). */
  public void refreshed(String replyJson, long nowMs) {
    byte[] text = Ffi.utf8(replyJson);
    try {
      Ffi.check(Ffi.LIB.sr_cluster_session_refreshed(ptr(), text, text.length, nowMs));
    } finally {
      Ffi.fence(this);
    }
  }

  /** A refresh failed. */
  public void refreshFailed(long nowMs) {
    try {
      Ffi.check(Ffi.LIB.sr_cluster_session_refresh_failed(ptr(), nowMs));
    } finally {
      Ffi.fence(this);
    }
  }

  /** The addresses to refresh from, as a JSON array. */
  public String candidates() {
    return Ffi.json(out -> Ffi.LIB.sr_cluster_session_candidates(ptr(), out));
  }

  /** The session's counters, as JSON. */
  public String stats() {
    return Ffi.json(out -> Ffi.LIB.sr_cluster_session_stats(ptr(), out));
  }

  /** Where a command on {@code keys} would go, as JSON. */
  public String plan(Key[] keys, String access) {
    SrKey[] native_ = new Ffi.Args().keys(keys);
    byte[] text = Ffi.utf8(access);
    return Ffi.json(out -> Ffi.LIB.sr_cluster_session_plan(ptr(), native_, keys.length, text, text.length, out));
  }

  private interface PipelineCall {
    Pointer apply(Pointer session, byte[] address, long len, byte readonly, IntByReference out);
  }

  private int pipeline(PipelineCall call, String address, boolean readonly) {
    byte[] text = Ffi.utf8(address);
    IntByReference out = new IntByReference();
    try {
      Ffi.check(call.apply(ptr(), text, text.length, (byte) (readonly ? 1 : 0), out));
    } finally {
      Ffi.fence(this);
    }
    return out.getValue();
  }

  /** The commands queued on a connection. */
  public int pipelineQueued(String address, boolean readonly) {
    return pipeline(Ffi.LIB::sr_cluster_session_pipeline_queued, address, readonly);
  }

  /** Takes a pipeline slot: the write number. */
  public int pipelineTake(String address, boolean readonly) {
    return pipeline(Ffi.LIB::sr_cluster_session_pipeline_take, address, readonly);
  }

  /** A pipelined command is done: the write number. */
  public int pipelineDone(String address, boolean readonly) {
    return pipeline(Ffi.LIB::sr_cluster_session_pipeline_done, address, readonly);
  }

  /** {@code count} queued commands were withdrawn. */
  public void pipelineWithdrawn(String address, boolean readonly, int count) {
    byte[] text = Ffi.utf8(address);
    try {
      Ffi.check(Ffi.LIB.sr_cluster_session_pipeline_withdrawn(ptr(), text, text.length, (byte) (readonly ? 1 : 0), count));
    } finally {
      Ffi.fence(this);
    }
  }

  /** The queued commands and writes of a connection. */
  public Pending pipelinePending(String address, boolean readonly) {
    byte[] text = Ffi.utf8(address);
    IntByReference queued = new IntByReference(), writes = new IntByReference();
    try {
      Ffi.check(Ffi.LIB.sr_cluster_session_pipeline_pending(ptr(), text, text.length, (byte) (readonly ? 1 : 0),
          queued, writes));
    } finally {
      Ffi.fence(this);
    }
    return new Pending(queued.getValue(), writes.getValue());
  }

}
