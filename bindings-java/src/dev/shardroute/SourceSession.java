package dev.shardroute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import java.util.OptionalLong;

/**
 * A topology source session ({@code sr_source_session}: etcd, ZooKeeper or HTTP), sans-IO:
 * fed responses, chunks, failures and time ({@code nowMs}, unsigned), it answers with actions
 * as a JSON array. One caller's at a time.
 */
public final class SourceSession extends Handle {
  SourceSession(Pointer pointer) {
    super(pointer, Ffi.LIB::sr_source_session_free);
  }

  /** The call number and the actions of {@link #call}. */
  public record Call(long call, String actions) {}

  /** A session from its config (JSON). */
  public static SourceSession create(String configJson) {
    byte[] config = Ffi.utf8(configJson);
    return new SourceSession(Ffi.handle(out -> Ffi.LIB.sr_source_session_new(config, config.length, out)));
  }

  /** Starts: the first actions. */
  public String start(long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_source_session_start(ptr(), nowMs, out));
  }

  /** Request {@code id}'s stream opened. */
  public String opened(long id, long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_source_session_opened(ptr(), id, nowMs, out));
  }

  /** Request {@code id}'s response (headers: a JSON object or null). */
  public String response(long id, int status, String headersJson, byte[] body, long nowMs) {
    byte[] headers = Ffi.utf8(headersJson);
    byte[] data = body == null || body.length == 0 ? null : body;
    return Ffi.json(out -> Ffi.LIB.sr_source_session_response(ptr(), id, (short) status, headers, Ffi.len(headers),
        data, Ffi.len(data), nowMs, out));
  }

  /** A chunk of request {@code id}'s stream. */
  public String chunk(long id, byte[] data, long nowMs) {
    byte[] bytes = data.length == 0 ? null : data;
    return Ffi.json(out -> Ffi.LIB.sr_source_session_chunk(ptr(), id, bytes, Ffi.len(bytes), nowMs, out));
  }

  /** Request {@code id} failed with {@code code} and {@code message}. */
  public String failed(long id, String code, String message, long nowMs) {
    byte[] c = Ffi.utf8(code), m = Ffi.utf8(message);
    return Ffi.json(out -> Ffi.LIB.sr_source_session_failed(ptr(), id, c, c.length, m, m.length, nowMs, out));
  }

  /** The timer fired. */
  public String timer(long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_source_session_timer(ptr(), nowMs, out));
  }

  /** Stops watching ({@code sr_source_session_close}; {@link #close()} frees the handle). */
  public String stop(long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_source_session_close(ptr(), nowMs, out));
  }

  /** An operation (JSON) on the store: its call number and the actions. */
  public Call call(String opJson, long nowMs) {
    byte[] op = Ffi.utf8(opJson);
    LongByReference number = new LongByReference();
    String actions = Ffi.json(out -> Ffi.LIB.sr_source_session_call(ptr(), op, op.length, nowMs, number, out));
    return new Call(number.getValue(), actions);
  }

  /** The session's deadline, if any. */
  public OptionalLong deadline() {
    return Ffi.optional((present, value) -> Ffi.LIB.sr_source_session_deadline(ptr(), present, value));
  }

  /** The session's state, as JSON. */
  public String state() {
    return Ffi.json(out -> Ffi.LIB.sr_source_session_state(ptr(), out));
  }

}
