package dev.shardroute;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;

/** {@code sr_key}: a key as the ABI takes it (bytes, or a u64). Package-private. */
@Structure.FieldOrder({"kind", "bytes", "len", "value"})
public class SrKey extends Structure {
  /** {@code SR_KEY_BYTES} or {@code SR_KEY_U64}. */
  public int kind;
  /** The key's bytes, {@code NULL} with len 0. */
  public Pointer bytes;
  /** Their number. */
  public long len;
  /** The integer key. */
  public long value;

  /** For JNA. */
  public SrKey() {}

  /** By value, inside {@code sr_term}. */
  public static class ByValue extends SrKey implements Structure.ByValue {}
}
