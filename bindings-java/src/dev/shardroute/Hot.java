package dev.shardroute;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

/**
 * The hot calls of the ABI through JNA's direct mapping (no proxy, no by-reference objects):
 * handles and the returned {@code sr_error *} are raw addresses ({@code 0} is NULL),
 * out-parameters one-element primitive arrays. Same library and same functions as
 * {@link Lib}; only the binding differs. The single-key calls take {@link Scratch}'s native
 * buffer instead of arrays; the ones here are the batches and the single-key path for keys
 * longer than that buffer holds.
 */
final class Hot {
  private Hot() {}

  static {
    Native.register(Hot.class, NativeLibrary.getInstance("shardroute"));
  }

  static native long sr_router_route(long router, byte[] key, long keyLen, int[] shard);

  static native long sr_router_node(long router, byte[] key, long keyLen, long[] node, long[] nodeLen);

  static native long sr_router_route_packed(long router, byte[] data, long dataLen, int[] offsets, long offsetsCount,
      int[] outShards, long capacity);

  static native long sr_router_route_u64s(long router, long[] keys, long count, int[] outShards, long capacity);

  /** A handle's address, 0 once closed (the ABI then answers invalid_argument). */
  static long address(Pointer pointer) {
    return pointer == null ? 0 : Pointer.nativeValue(pointer);
  }

  /** Throws the error at {@code error} (and frees it); nothing when it is 0. */
  static void check(long error) {
    if (error != 0) Ffi.check(new Pointer(error));
  }

  /** Borrowed text at (address, length). */
  static String text(long[] node, long[] len) {
    return len[0] == 0 ? "" : new String(new Pointer(node[0]).getByteArray(0, (int) len[0]),
        java.nio.charset.StandardCharsets.UTF_8);
  }
}
