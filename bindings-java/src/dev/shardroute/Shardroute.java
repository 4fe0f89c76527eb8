package dev.shardroute;

import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The calls of libshardroute that take no handle: documents, hashing, dictionaries, and the
 * ABI's constants. Structured results are JSON text in the shapes of conformance/README.md.
 * Unsigned 64-bit values (hashes, ids, times) are Java {@code long}s read as unsigned
 * ({@link Long#toUnsignedString(long)}).
 */
public final class Shardroute {
  private Shardroute() {}

  /** The package's version; the library must be the same (checked at load). */
  public static final String VERSION = "0.1.0";
  /** {@code SR_KEY_BYTES}. */
  public static final int SR_KEY_BYTES = 0;
  /** {@code SR_KEY_U64}. */
  public static final int SR_KEY_U64 = 1;
  /** {@code SR_SCOPE_EVERY}. */
  public static final int SR_SCOPE_EVERY = 0;
  /** {@code SR_SCOPE_RANGE}. */
  public static final int SR_SCOPE_RANGE = 1;
  /** {@code SR_SCOPE_KEYS}. */
  public static final int SR_SCOPE_KEYS = 2;

  /** The loaded library's version ({@code sr_version}). */
  public static String libraryVersion() {
    return Ffi.LIB.sr_version().getString(0, "UTF-8");
  }

  /** A decimal u64 ({@code invalid_key} when it is not one); the result is unsigned. */
  public static long parseU64(String text) {
    byte[] bytes = Ffi.utf8(text);
    LongByReference value = new LongByReference();
    Ffi.check(Ffi.LIB.sr_parse_u64(bytes, Ffi.len(bytes), value));
    return value.getValue();
  }

  /** UTF-16 code units as UTF-8 ({@code invalid_key} on a lone surrogate). */
  public static byte[] utf8FromUtf16(short[] units) {
    PointerByReference out = new PointerByReference();
    LongByReference len = new LongByReference();
    Ffi.check(Ffi.LIB.sr_utf8_from_utf16(units.length == 0 ? null : units, units.length, out, len));
    return Ffi.bytes(out, len);
  }

  /** The key's hash under a hashing spec (JSON, or null for the default); unsigned. */
  public static long hashKey(Key key, String specJson) {
    Ffi.Args args = new Ffi.Args();
    byte[] spec = Ffi.utf8(specJson);
    LongByReference hash = new LongByReference();
    Ffi.check(Ffi.LIB.sr_hash_key(args.key(key), spec, Ffi.len(spec), hash));
    Ffi.fence(args);
    return hash.getValue();
  }

  /** Jump consistent hash of an (unsigned) hash into {@code buckets}. */
  public static int jump(long hash, int buckets) {
    IntByReference shard = new IntByReference();
    Ffi.check(Ffi.LIB.sr_jump(hash, buckets, shard));
    return shard.getValue();
  }

  /** The moves of {@code hash % old} to {@code hash % new}, as JSON. */
  public static String moduloMoves(int oldCount, int newCount) {
    return Ffi.json(out -> Ffi.LIB.sr_modulo_moves(oldCount, newCount, out));
  }

  /** A Redis {@code MOVED}/{@code ASK} line, as JSON. */
  public static String parseRedirect(String line) {
    byte[] bytes = Ffi.utf8(line);
    return Ffi.json(out -> Ffi.LIB.sr_parse_redirect(bytes, bytes.length, out));
  }

  /** A {@code host:port} address, as JSON. */
  public static String parseAddress(String address) {
    byte[] bytes = Ffi.utf8(address);
    return Ffi.json(out -> Ffi.LIB.sr_parse_address(bytes, bytes.length, out));
  }

  /** An operation (JSON) applied to a topology document (JSON): the result, as JSON. */
  public static String apply(String topologyJson, String operationJson) {
    byte[] topology = Ffi.utf8(topologyJson), operation = Ffi.utf8(operationJson);
    return Ffi.json(out -> Ffi.LIB.sr_apply(topology, topology.length, operation, operation.length, out));
  }

  /** What changes from {@code old} to {@code next} for {@code keys}, as JSON. */
  public static String diff(Router old, Router next, Key[] keys, boolean perKey) {
    Ffi.Args args = new Ffi.Args();
    SrKey[] native_ = args.keys(keys);
    return Ffi.json(out -> Ffi.LIB.sr_diff(old.ptr(), next.ptr(), native_, keys.length, (byte) (perKey ? 1 : 0), out));
  }

  /** A topology document (JSON) as the binary dictionary. */
  public static byte[] encodeDictionary(String topologyJson) {
    byte[] topology = Ffi.utf8(topologyJson);
    PointerByReference out = new PointerByReference();
    LongByReference len = new LongByReference();
    Ffi.check(Ffi.LIB.sr_encode_dictionary(topology, topology.length, out, len));
    return Ffi.bytes(out, len);
  }

  /** A binary dictionary as its canonical topology document (JSON). */
  public static String decodeDictionary(byte[] data) {
    return Ffi.json(out -> Ffi.LIB.sr_decode_dictionary(data.length == 0 ? null : data, data.length, out));
  }

  /** The keys of {@code keys} that do not belong on {@code node}, as JSON. */
  public static String misplacedOnNode(Router router, String node, Key[] keys) {
    Ffi.Args args = new Ffi.Args();
    byte[] name = Ffi.utf8(node);
    SrKey[] native_ = args.keys(keys);
    return Ffi.json(out -> Ffi.LIB.sr_misplaced(router.ptr(), name, name.length, 0, native_, keys.length, out));
  }

  /** The keys of {@code keys} that do not belong in {@code shard}, as JSON. */
  public static String misplacedInShard(Router router, int shard, Key[] keys) {
    Ffi.Args args = new Ffi.Args();
    SrKey[] native_ = args.keys(keys);
    return Ffi.json(out -> Ffi.LIB.sr_misplaced(router.ptr(), null, 0, shard, native_, keys.length, out));
  }

  /** The Redis Cluster session's default config, as JSON. */
  public static String clusterConfigDefaults() {
    return Ffi.json(out -> Ffi.LIB.sr_cluster_config_defaults(out));
  }

  /** The topology follower's default config, as JSON. */
  public static String followerConfigDefaults() {
    return Ffi.json(out -> Ffi.LIB.sr_follower_config_defaults(out));
  }
}
