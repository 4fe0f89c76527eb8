package dev.shardroute;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The single-key hot path over reused native memory: each thread has one direct buffer that
 * holds the call's out-parameters (its first {@link #OUT} bytes) and then the key's bytes,
 * so a call passes only primitive {@code long}s through JNA's direct mapping. An array
 * argument costs JNA far more than the call ({@code bench/ffi}: about 180 ns per call for a
 * {@code byte[]} and an {@code int[]}, against a 60-80 ns floor), and the array path is what
 * {@link Router#route(byte[])} paid before.
 *
 * <p>Bounded: the buffer grows on demand (doubling) up to {@link #MAX_KEY_BYTES} of key; a
 * longer key goes through the array path ({@link Hot}), which copies it per call, so every
 * key the core routes is still routed (the core has no key length limit). Thread-safe: one
 * buffer per thread ({@link ThreadLocal}), used within one call, which never calls back
 * into Java.
 */
final class Scratch {
  /** The out-parameters' bytes at the buffer's start: a shard, or a node's address and length. */
  static final int OUT = 16;

  /** The longest key copied into the buffer (64 KiB); a longer one takes the array path. */
  static final int MAX_KEY_BYTES = 64 << 10;

  private static final int INITIAL_KEY_BYTES = 240;

  private static final ThreadLocal<Scratch> LOCAL = ThreadLocal.withInitial(() -> new Scratch(INITIAL_KEY_BYTES));

  static {
    Native.register(Scratch.class, NativeLibrary.getInstance("shardroute"));
  }

  static native long sr_router_route(long router, long key, long keyLen, long shard);

  static native long sr_router_route_u64(long router, long key, long shard);

  static native long sr_router_node(long router, long key, long keyLen, long node, long nodeLen);

  static native long sr_router_node_u64(long router, long key, long node, long nodeLen);

  private final ByteBuffer buffer;
  /** The buffer's native address: the out-parameters here, the key at {@code address + OUT}. */
  final long address;

  private Scratch(int keyBytes) {
    buffer = ByteBuffer.allocateDirect(OUT + keyBytes).order(ByteOrder.nativeOrder());
    address = Pointer.nativeValue(Native.getDirectBufferPointer(buffer));
  }

  /** This thread's buffer, grown to hold {@code keyBytes} (at most {@link #MAX_KEY_BYTES}). */
  static Scratch get(int keyBytes) {
    Scratch scratch = LOCAL.get();
    if (OUT + keyBytes > scratch.buffer.capacity()) {
      int size = Math.max(keyBytes, Math.min(MAX_KEY_BYTES, 2 * (scratch.buffer.capacity() - OUT)));
      scratch = new Scratch(size);
      LOCAL.set(scratch);
    }
    return scratch;
  }

  /** The buffer's size in bytes (the out-parameters and the longest key so far). */
  int capacity() {
    return buffer.capacity();
  }

  /** Whether {@code key} is copied into the buffer (else it takes the array path). */
  static boolean fits(byte[] key) {
    return key.length <= MAX_KEY_BYTES;
  }

  /** Copies {@code key} in after the out-parameters; its native address. */
  long key(byte[] key) {
    buffer.put(OUT, key);
    return address + OUT;
  }

  /** The shard a call wrote. */
  int shard() {
    return buffer.getInt(0);
  }

  /** The borrowed node text a call wrote (its address, then its length), as a String. */
  String node() {
    long len = buffer.getLong(8);
    return len == 0 ? "" : new String(new Pointer(buffer.getLong(0)).getByteArray(0, (int) len), StandardCharsets.UTF_8);
  }

  /** Keeps the buffer alive until the call that used its address has returned. */
  void fence() {
    Reference.reachabilityFence(buffer);
  }
}
