package dev.shardroute;

import com.sun.jna.Pointer;

/**
 * A migration between two topologies ({@code sr_migration}): immutable, usable from many
 * threads. Structured results are JSON text.
 */
public final class Migration extends Handle {
  Migration(Pointer pointer) {
    super(pointer, Ffi.LIB::sr_migration_free);
  }

  /** The migration from {@code before} to {@code after}. */
  public static Migration between(Router before, Router after) {
    return new Migration(Ffi.handle(out -> Ffi.LIB.sr_migration_new(before.ptr(), after.ptr(), out)));
  }

  /** The migration a dictionary topology describes. */
  public static Migration ofDictionary(Router dictionary) {
    return new Migration(Ffi.handle(out -> Ffi.LIB.sr_migration_of_dictionary(dictionary.ptr(), out)));
  }

  /** Whether and where the key moves, as JSON. */
  public String moves(Key key) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_migration_moves(ptr(), k, out));
  }

  /** The nodes a read tries ({@code moved}: the key was copied already), as a JSON array. */
  public String readTargets(Key key, boolean moved) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_migration_read_targets(ptr(), k, (byte) (moved ? 1 : 0), out));
  }

  /** The keys a read tries, as a JSON array of key objects. */
  public String readKeys(Key key) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_migration_read_keys(ptr(), k, out));
  }

  /** The key a write uses under {@code salt}, as a JSON key object. */
  public String writeKey(Key key, int salt) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_migration_write_key(ptr(), k, salt, out));
  }

  /** The node a write goes to. */
  public String writeTarget(Key key) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.text((p, n) -> Ffi.LIB.sr_migration_write_target(ptr(), k, p, n));
  }

  /** The shards that move, as JSON. */
  public String movingShards() {
    return Ffi.json(out -> Ffi.LIB.sr_migration_moving_shards(ptr(), out));
  }

  /** The nodes to scan, as JSON. */
  public String scanNodes() {
    return Ffi.json(out -> Ffi.LIB.sr_migration_scan_nodes(ptr(), out));
  }

  /** The indices of the keys that move, as a JSON array. */
  public String movingKeys(Key[] keys) {
    SrKey[] native_ = new Ffi.Args().keys(keys);
    return Ffi.json(out -> Ffi.LIB.sr_migration_moving_keys(ptr(), native_, keys.length, out));
  }
}
