package dev.shardroute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.OptionalLong;

/**
 * A topology follower ({@code sr_follower}): offered documents with their revisions and time
 * ({@code nowMs}, unsigned), it keeps the router to use. One caller's at a time.
 */
public final class Follower extends Handle {
  Follower(Pointer pointer) {
    super(pointer, Ffi.LIB::sr_follower_free);
  }

  /** A follower with a config (JSON, or null for the defaults). */
  public static Follower create(String configJson) {
    byte[] config = Ffi.utf8(configJson);
    return new Follower(Ffi.handle(out -> Ffi.LIB.sr_follower_new(config, Ffi.len(config), out)));
  }

  /** A topology document at {@code revision}: the outcome, as JSON. */
  public String offer(String document, long revision, long nowMs) {
    byte[] text = Ffi.utf8(document);
    return Ffi.json(out -> Ffi.LIB.sr_follower_offer(ptr(), text, text.length, revision, nowMs, out));
  }

  /** A binary dictionary at {@code revision}: the outcome, as JSON. */
  public String offerDictionary(byte[] data, long revision, long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_follower_offer_dictionary(ptr(), data.length == 0 ? null : data, data.length,
        revision, nowMs, out));
  }

  /** Raw bytes (a document or a dictionary) at {@code revision}: the outcome, as JSON. */
  public String offerBytes(byte[] data, long revision, long nowMs) {
    return Ffi.json(out -> Ffi.LIB.sr_follower_offer_bytes(ptr(), data.length == 0 ? null : data, data.length,
        revision, nowMs, out));
  }

  /** The source disconnected: when to reconnect (unsigned ms). */
  public long disconnected(long nowMs) {
    LongByReference at = new LongByReference();
    try {
      Ffi.check(Ffi.LIB.sr_follower_disconnected(ptr(), nowMs, at));
    } finally {
      Ffi.fence(this);
    }
    return at.getValue();
  }

  /** The source connected. */
  public void connected() {
    try {
      Ffi.check(Ffi.LIB.sr_follower_connected(ptr()));
    } finally {
      Ffi.fence(this);
    }
  }

  /** The next deadline, if any. */
  public OptionalLong nextDeadline() {
    return Ffi.optional((present, value) -> Ffi.LIB.sr_follower_next_deadline(ptr(), present, value));
  }

  /** Checks a document before it is published: the outcome, as JSON. */
  public String publish(String document) {
    byte[] text = Ffi.utf8(document);
    return Ffi.json(out -> Ffi.LIB.sr_follower_publish(ptr(), text, text.length, out));
  }

  /** The current router (a new handle), or null before the first document. */
  public Router router() {
    PointerByReference out = new PointerByReference();
    try {
      Ffi.check(Ffi.LIB.sr_follower_router(ptr(), out));
    } finally {
      Ffi.fence(this);
    }
    return Router.adopt(out);
  }

  /** The current revision, if any. */
  public OptionalLong revision() {
    return Ffi.optional((present, value) -> Ffi.LIB.sr_follower_revision(ptr(), present, value));
  }

  /** The follower's counters, as JSON. */
  public String stats() {
    return Ffi.json(out -> Ffi.LIB.sr_follower_stats(ptr(), out));
  }
}
