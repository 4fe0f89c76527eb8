package dev.shardroute;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;

/** {@code sr_str}: borrowed text as (pointer, length). */
@Structure.FieldOrder({"ptr", "len"})
public class SrStr extends Structure {
  /** The text's bytes. */
  public Pointer ptr;
  /** Their number. */
  public long len;

  /** For JNA. */
  public SrStr() {}
}
