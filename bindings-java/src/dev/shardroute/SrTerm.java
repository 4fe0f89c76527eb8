package dev.shardroute;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;

/** {@code sr_term}: an index's name and its term. */
@Structure.FieldOrder({"name", "name_len", "term"})
public class SrTerm extends Structure {
  /** The index's name (UTF-8). */
  public Pointer name;
  /** Its length in bytes. */
  public long name_len;
  /** The term. */
  public SrKey.ByValue term;

  /** For JNA. */
  public SrTerm() {}
}
