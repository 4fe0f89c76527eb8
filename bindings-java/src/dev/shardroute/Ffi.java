package dev.shardroute;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.ByteByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * The one place that loads libshardroute, maps its errors and converts arguments and results.
 * Every call of the package goes through {@link #check}; structured results are the ABI's JSON
 * text, freed here.
 */
final class Ffi {
  private Ffi() {}

  /** The library: {@code libshardroute.so}, found on {@code jna.library.path}. */
  static final Lib LIB = Native.load("shardroute", Lib.class);

  static {
    String library = LIB.sr_version().getString(0, "UTF-8");
    if (!library.equals(Shardroute.VERSION)) {
      throw new IllegalStateException(
          "libshardroute " + library + " under the Java package " + Shardroute.VERSION);
    }
  }

  /** Throws the error an ABI call returned (and frees it); nothing when it is NULL. */
  static void check(Pointer error) {
    if (error == null) return;
    String code = LIB.sr_error_code(error).getString(0, "UTF-8");
    String message = LIB.sr_error_message(error).getString(0, "UTF-8");
    LIB.sr_error_free(error);
    throw new ShardrouteException(code, message);
  }

  static byte[] utf8(String text) {
    return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
  }

  static long len(byte[] bytes) {
    return bytes == null ? 0 : bytes.length;
  }

  /** Borrowed text (pointer, length) as a String. */
  static String text(PointerByReference pointer, LongByReference len) {
    long n = len.getValue();
    return n == 0 ? "" : new String(pointer.getValue().getByteArray(0, (int) n), StandardCharsets.UTF_8);
  }

  /** A call that writes JSON text: the text, freed. The lambda is kept reachable during the call. */
  static String json(Function<PointerByReference, Pointer> call) {
    PointerByReference out = new PointerByReference();
    try {
      check(call.apply(out));
      Pointer text = out.getValue();
      try {
        return text.getString(0, "UTF-8");
      } finally {
        LIB.sr_string_free(text);
      }
    } finally {
      Reference.reachabilityFence(call);
    }
  }

  /** A call that writes a handle. */
  static Pointer handle(Function<PointerByReference, Pointer> call) {
    PointerByReference out = new PointerByReference();
    try {
      check(call.apply(out));
      return out.getValue();
    } finally {
      Reference.reachabilityFence(call);
    }
  }

  /** A call that writes borrowed text (a node id, an address). */
  interface TextCall {
    Pointer apply(PointerByReference pointer, LongByReference len);
  }

  static String text(TextCall call) {
    PointerByReference pointer = new PointerByReference();
    LongByReference len = new LongByReference();
    try {
      check(call.apply(pointer, len));
      return text(pointer, len);
    } finally {
      Reference.reachabilityFence(call);
    }
  }

  /** A call that writes an optional u64 (a deadline, a revision). */
  interface OptionalCall {
    Pointer apply(ByteByReference present, LongByReference value);
  }

  static OptionalLong optional(OptionalCall call) {
    ByteByReference present = new ByteByReference();
    LongByReference value = new LongByReference();
    try {
      check(call.apply(present, value));
      return present.getValue() != 0 ? OptionalLong.of(value.getValue()) : OptionalLong.empty();
    } finally {
      Reference.reachabilityFence(call);
    }
  }

  /** Bytes the ABI allocated, copied and freed. */
  static byte[] bytes(PointerByReference pointer, LongByReference len) {
    long n = len.getValue();
    Pointer p = pointer.getValue();
    try {
      return n == 0 ? new byte[0] : p.getByteArray(0, (int) n);
    } finally {
      LIB.sr_bytes_free(p, n);
    }
  }

  static void fence(Object object) {
    Reference.reachabilityFence(object);
  }

  /** Native copies of keys, texts and terms for one call; keeps their memory reachable. */
  static final class Args {
    private final List<Memory> kept = new ArrayList<>();

    Pointer memory(byte[] bytes) {
      if (bytes == null || bytes.length == 0) return null;
      Memory memory = new Memory(bytes.length);
      memory.write(0, bytes, 0, bytes.length);
      kept.add(memory);
      return memory;
    }

    private void fill(SrKey out, Key key) {
      if (key.bytes == null) {
        out.kind = Shardroute.SR_KEY_U64;
        out.value = key.value;
      } else {
        out.kind = Shardroute.SR_KEY_BYTES;
        out.bytes = memory(key.bytes);
        out.len = key.bytes.length;
      }
    }

    /** One key, or null. */
    SrKey key(Key key) {
      if (key == null) return null;
      SrKey out = new SrKey();
      fill(out, key);
      out.write();
      return out;
    }

    /** Keys as a contiguous array (null when there are none). */
    SrKey[] keys(Key[] keys) {
      if (keys.length == 0) return null;
      SrKey[] out = (SrKey[]) new SrKey().toArray(keys.length);
      for (int i = 0; i < keys.length; i++) {
        fill(out[i], keys[i]);
        out[i].write();
      }
      return out;
    }

    /** Texts as a contiguous sr_str array (null when there are none). */
    SrStr[] strs(String[] texts) {
      if (texts.length == 0) return null;
      SrStr[] out = (SrStr[]) new SrStr().toArray(texts.length);
      for (int i = 0; i < texts.length; i++) {
        byte[] bytes = utf8(texts[i]);
        out[i].ptr = memory(bytes);
        out[i].len = bytes.length;
        out[i].write();
      }
      return out;
    }

    /** Terms as a contiguous sr_term array (null when there are none). */
    SrTerm[] terms(Term[] terms) {
      if (terms.length == 0) return null;
      SrTerm[] out = (SrTerm[]) new SrTerm().toArray(terms.length);
      for (int i = 0; i < terms.length; i++) {
        byte[] name = utf8(terms[i].index());
        out[i].name = memory(name);
        out[i].name_len = name.length;
        fill(out[i].term, terms[i].term());
        out[i].write();
      }
      return out;
    }
  }
}
