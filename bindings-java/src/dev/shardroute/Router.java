package dev.shardroute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;

/**
 * A router built from a topology document ({@code sr_router}): immutable, usable from many
 * threads at once. Shards are {@code int}s (unsigned 32-bit in the ABI; topologies stay far
 * below 2^31), epochs and integer keys unsigned {@code long}s. Structured results are the
 * ABI's JSON text. Close it (try-with-resources); a {@link java.lang.ref.Cleaner} frees one
 * nobody closed.
 */
public final class Router extends Handle {
  Router(Pointer pointer) {
    super(pointer, Ffi.LIB::sr_router_free);
  }

  /** A router from a topology document (JSON text); {@code invalid_topology} if refused. */
  public static Router fromJson(String json) {
    byte[] text = Ffi.utf8(json);
    return new Router(Ffi.handle(out -> Ffi.LIB.sr_router_new(text, text.length, out)));
  }

  /** Another handle on the same routing table. */
  public Router copy() {
    return new Router(Ffi.handle(out -> Ffi.LIB.sr_router_clone(ptr(), out)));
  }

  /** The topology's epoch (unsigned). */
  public long epoch() {
    LongByReference epoch = new LongByReference();
    try {
      Ffi.check(Ffi.LIB.sr_router_epoch(ptr(), epoch));
    } finally {
      Ffi.fence(this);
    }
    return epoch.getValue();
  }

  /** The canonical topology document (JSON). */
  public String toJson() {
    return Ffi.json(out -> Ffi.LIB.sr_router_to_json(ptr(), out));
  }

  /**
   * The shard of a key of bytes. A key up to {@link Scratch#MAX_KEY_BYTES} is copied into this
   * thread's reused native buffer (no array crosses JNA); a longer one is passed as an array.
   */
  public int route(byte[] key) {
    long router = Hot.address(ptr());
    try {
      if (!Scratch.fits(key)) {
        int[] shard = new int[1];
        Hot.check(Hot.sr_router_route(router, key, key.length, shard));
        return shard[0];
      }
      Scratch scratch = Scratch.get(key.length);
      try {
        Hot.check(Scratch.sr_router_route(router, scratch.key(key), key.length, scratch.address));
        return scratch.shard();
      } finally {
        scratch.fence();
      }
    } finally {
      Ffi.fence(this);
    }
  }

  /** The shard of a text key (its UTF-8). */
  public int route(String key) {
    return route(key.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * The shard of an integer key. {@code key} is unsigned: {@code -1L} is 2^64-1 (build one
   * above {@link Long#MAX_VALUE} with {@link Long#parseUnsignedLong(String)}).
   */
  public int routeU64(long key) {
    Scratch scratch = Scratch.get(0);
    try {
      Hot.check(Scratch.sr_router_route_u64(Hot.address(ptr()), key, scratch.address));
      return scratch.shard();
    } finally {
      scratch.fence();
      Ffi.fence(this);
    }
  }

  /** The node id that owns a key of bytes (through this thread's native buffer, as {@link #route(byte[])}). */
  public String node(byte[] key) {
    long router = Hot.address(ptr());
    try {
      if (!Scratch.fits(key)) {
        long[] node = new long[1], len = new long[1];
        Hot.check(Hot.sr_router_node(router, key, key.length, node, len));
        return Hot.text(node, len);
      }
      Scratch scratch = Scratch.get(key.length);
      try {
        Hot.check(Scratch.sr_router_node(router, scratch.key(key), key.length, scratch.address, scratch.address + 8));
        return scratch.node();
      } finally {
        scratch.fence();
      }
    } finally {
      Ffi.fence(this);
    }
  }

  /** The node id that owns a text key (its UTF-8). */
  public String node(String key) {
    return node(key.getBytes(StandardCharsets.UTF_8));
  }

  /** The node id that owns an integer key (unsigned). */
  public String nodeU64(long key) {
    Scratch scratch = Scratch.get(0);
    try {
      Hot.check(Scratch.sr_router_node_u64(Hot.address(ptr()), key, scratch.address, scratch.address + 8));
      return scratch.node();
    } finally {
      scratch.fence();
      Ffi.fence(this);
    }
  }

  /** The shard of each key (bytes and integers mixed). */
  public int[] routeMany(Key[] keys) {
    Ffi.Args args = new Ffi.Args();
    SrKey[] native_ = args.keys(keys);
    int[] shards = new int[keys.length];
    try {
      Ffi.check(Ffi.LIB.sr_router_route_many(ptr(), native_, keys.length, keys.length == 0 ? null : shards, keys.length));
    } finally {
      Ffi.fence(this);
      Ffi.fence(native_);
    }
    return shards;
  }

  /**
   * The shard of each key packed in {@code data} (Arrow's binary layout): key {@code i} is
   * {@code data[offsets[i]..offsets[i+1]]}, so there are {@code offsets.length - 1} keys.
   */
  public int[] routePacked(byte[] data, int[] offsets) {
    int count = Math.max(offsets.length - 1, 0);
    int[] shards = new int[count];
    try {
      Hot.check(Hot.sr_router_route_packed(Hot.address(ptr()), data.length == 0 ? null : data, data.length,
          offsets.length == 0 ? null : offsets, offsets.length, count == 0 ? null : shards, count));
    } finally {
      Ffi.fence(this);
    }
    return shards;
  }

  /** The shard of each integer key (unsigned). */
  public int[] routeU64s(long[] keys) {
    int[] shards = new int[keys.length];
    try {
      Hot.check(Hot.sr_router_route_u64s(Hot.address(ptr()), keys.length == 0 ? null : keys, keys.length,
          keys.length == 0 ? null : shards, keys.length));
    } finally {
      Ffi.fence(this);
    }
    return shards;
  }

  /** The first {@code count} distinct nodes for a key, as a JSON array. */
  public String replicas(Key key, int count) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_router_replicas(ptr(), k, count, out));
  }

  /** Where a key lives (shard, node, ...), as JSON. */
  public String locate(Key key) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_router_locate(ptr(), k, out));
  }

  /** The key under salt {@code salt}, as a JSON key object. */
  public String saltedKey(Key key, int salt) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_router_salted_key(ptr(), k, salt, out));
  }

  /** Every salted form of the key with its shard, as JSON. */
  public String saltedKeys(Key key) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_router_salted_keys(ptr(), k, out));
  }

  /** The nodes a write of the key goes to, as a JSON array. */
  public String routeWrite(Key key) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.json(out -> Ffi.LIB.sr_router_route_write(ptr(), k, out));
  }

  /** The node a read of the key goes to. */
  public String routeRead(Key key) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.text((p, n) -> Ffi.LIB.sr_router_route_read(ptr(), k, p, n));
  }

  /** The replica a read of the key goes to on turn {@code turn}. */
  public String readReplica(Key key, int turn) {
    SrKey k = new Ffi.Args().key(key);
    return Ffi.text((p, n) -> Ffi.LIB.sr_router_read_replica(ptr(), k, turn, p, n));
  }

  /** The node that owns a shard. */
  public String shardOwner(int shard) {
    return Ffi.text((p, n) -> Ffi.LIB.sr_router_shard_owner(ptr(), shard, p, n));
  }

  /** The shards a key range touches ({@code end} null: unbounded), as a JSON array. */
  public String shardsForRange(Key start, Key end) {
    Ffi.Args args = new Ffi.Args();
    SrKey s = args.key(start), e = args.key(end);
    return Ffi.json(out -> Ffi.LIB.sr_router_shards_for_range(ptr(), s, e, out));
  }

  /** An id (unsigned) decoded by the topology's id scheme, as JSON. */
  public String decodeId(long id) {
    return Ffi.json(out -> Ffi.LIB.sr_router_decode_id(ptr(), id, out));
  }

  /** The one shard all keys share ({@code cross_slot} if they do not). */
  public int sameSlot(Key[] keys) {
    SrKey[] native_ = new Ffi.Args().keys(keys);
    IntByReference shard = new IntByReference();
    try {
      Ffi.check(Ffi.LIB.sr_router_same_slot(ptr(), native_, keys.length, shard));
    } finally {
      Ffi.fence(this);
      Ffi.fence(native_);
    }
    return shard.getValue();
  }

  /** The keys grouped by node, as JSON. */
  public String groupByNode(Key[] keys) {
    SrKey[] native_ = new Ffi.Args().keys(keys);
    return Ffi.json(out -> Ffi.LIB.sr_router_group_by_node(ptr(), native_, keys.length, out));
  }

  /** How the keys spread over shards and nodes, as JSON. */
  public String stats(Key[] keys) {
    SrKey[] native_ = new Ffi.Args().keys(keys);
    return Ffi.json(out -> Ffi.LIB.sr_router_stats(ptr(), native_, keys.length, out));
  }

  /** A new router after a Redis {@code MOVED slot address}. */
  public Router moved(int slot, String address) {
    byte[] text = Ffi.utf8(address);
    return new Router(Ffi.handle(out -> Ffi.LIB.sr_router_moved(ptr(), slot, text, text.length, out)));
  }

  /**
   * The address to ask after a Redis {@code ASK slot address} (checked by the core). The ABI
   * answers with an offset and a length into its argument, read here from the caller's own
   * array (JNA passes the call a temporary copy of it).
   */
  public String ask(int slot, String address) {
    byte[] text = Ffi.utf8(address);
    LongByReference offset = new LongByReference(), len = new LongByReference();
    try {
      Ffi.check(Ffi.LIB.sr_router_ask(ptr(), slot, text.length == 0 ? null : text, text.length, offset, len));
    } finally {
      Ffi.fence(this);
    }
    long start = offset.getValue(), n = len.getValue();
    if (start < 0 || n < 0 || start > text.length || n > text.length - start) {
      throw new ShardrouteException("internal", "ask answered a span outside its argument (a bug)");
    }
    return new String(text, (int) start, (int) n, StandardCharsets.UTF_8);
  }

  /** {@code next} if it may replace this router ({@code stale_epoch} if not), as a new handle. */
  public Router replace(Router next) {
    return new Router(Ffi.handle(out -> Ffi.LIB.sr_router_replace(ptr(), next.ptr(), out)));
  }

  /** A scatter plan over every shard, as JSON ({@code zone} may be null). */
  public String scatterEvery(String readFrom, int turn, String zone) {
    return scatter(Shardroute.SR_SCOPE_EVERY, null, null, new Key[0], readFrom, turn, zone);
  }

  /** A scatter plan over a key range ({@code end} null: unbounded), as JSON. */
  public String scatterRange(Key start, Key end, String readFrom, int turn, String zone) {
    return scatter(Shardroute.SR_SCOPE_RANGE, start, end, new Key[0], readFrom, turn, zone);
  }

  /** A scatter plan over the shards of {@code keys}, as JSON. */
  public String scatterKeys(Key[] keys, String readFrom, int turn, String zone) {
    return scatter(Shardroute.SR_SCOPE_KEYS, null, null, keys, readFrom, turn, zone);
  }

  private String scatter(int scope, Key start, Key end, Key[] keys, String readFrom, int turn, String zone) {
    Ffi.Args args = new Ffi.Args();
    SrKey s = args.key(start), e = args.key(end);
    SrKey[] native_ = args.keys(keys);
    byte[] read = Ffi.utf8(readFrom), zoneText = Ffi.utf8(zone);
    return Ffi.json(out -> Ffi.LIB.sr_router_scatter(ptr(), scope, s, e, native_, keys.length, read, read.length, turn,
        zoneText, Ffi.len(zoneText), out));
  }

  /** The router of a secondary index. */
  public Router index(String name) {
    byte[] text = Ffi.utf8(name);
    return new Router(Ffi.handle(out -> Ffi.LIB.sr_router_index(ptr(), text, text.length, out)));
  }

  /** The router of a table. */
  public Router table(String name) {
    byte[] text = Ffi.utf8(name);
    return new Router(Ffi.handle(out -> Ffi.LIB.sr_router_table(ptr(), text, text.length, out)));
  }

  /** The table names, as a JSON array. */
  public String tableNames() {
    return Ffi.json(out -> Ffi.LIB.sr_router_table_names(ptr(), out));
  }

  /** The secondary index names, as a JSON array. */
  public String indexNames() {
    return Ffi.json(out -> Ffi.LIB.sr_router_index_names(ptr(), out));
  }

  /** The node a read of the key goes to, nearest {@code zone} (null: none). */
  public String readNear(Key key, String zone) {
    SrKey k = new Ffi.Args().key(key);
    byte[] text = Ffi.utf8(zone);
    return Ffi.text((p, n) -> Ffi.LIB.sr_router_read_near(ptr(), k, text, Ffi.len(text), p, n));
  }

  /** Where a row and its index entries are written, as JSON. */
  public String indexWritePlan(Key key, Term[] terms) {
    Ffi.Args args = new Ffi.Args();
    SrKey k = args.key(key);
    SrTerm[] native_ = args.terms(terms);
    return Ffi.json(out -> Ffi.LIB.sr_router_index_write_plan(ptr(), k, native_, terms.length, out));
  }

  /** For the package's own calls that take a router out-parameter. */
  static Router adopt(PointerByReference out) {
    Pointer p = out.getValue();
    return p == null ? null : new Router(p);
  }
}
