package dev.shardroute;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A key: bytes (text is its UTF-8) or an unsigned 64-bit integer, the two forms of
 * {@code sr_key}. Immutable.
 */
public final class Key {
  final byte[] bytes;
  final long value;

  private Key(byte[] bytes, long value) {
    this.bytes = bytes;
    this.value = value;
  }

  /** A key of bytes (copied). */
  public static Key of(byte[] bytes) {
    return new Key(bytes.clone(), 0);
  }

  /** A text key: its UTF-8 bytes. */
  public static Key of(String text) {
    return new Key(text.getBytes(StandardCharsets.UTF_8), 0);
  }

  /**
   * An integer key. {@code value} is read as unsigned: {@code -1L} is 2^64-1 (use
   * {@link Long#parseUnsignedLong(String)} to write one above {@link Long#MAX_VALUE}).
   */
  public static Key u64(long value) {
    return new Key(null, value);
  }

  /** Whether this is an integer key. */
  public boolean isU64() {
    return bytes == null;
  }

  /** The key's bytes (a copy), or null for an integer key. */
  public byte[] bytes() {
    return bytes == null ? null : bytes.clone();
  }

  /** The integer key (unsigned), or 0 for a bytes key. */
  public long u64Value() {
    return value;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Key k && Arrays.equals(bytes, k.bytes) && value == k.value;
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes) * 31 + Long.hashCode(value);
  }

  @Override
  public String toString() {
    return bytes == null ? "Key.u64(" + Long.toUnsignedString(value) + ")" : "Key.of(" + Arrays.toString(bytes) + ")";
  }
}
