package dev.shardroute.conformance;

import dev.shardroute.Key;
import dev.shardroute.Migration;
import dev.shardroute.Router;
import dev.shardroute.Shardroute;
import dev.shardroute.ShardrouteException;
import dev.shardroute.Term;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The Java conformance runner: every case of every file in conformance/vectors through the
 * Java package (dev.shardroute, over libshardroute), compared with its {@code expect}
 * (conformance/README.md), field order ignored. The model is the C runner
 * (conformance/c/runner.c): the same ops, the same order of argument checks. Prints
 * {@code conformance java: N passed, M failed, 0 skipped} and writes the count file.
 * Usage: Runner [vectors dir] [count file]; SHARDROUTE_VECTORS_FILTER keeps the cases whose
 * name contains it.
 */
public final class Runner {
  /** A case that cannot run (a malformed vector or an unknown op): it fails with the reason. */
  static final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    Malformed(String reason) {
      super(reason);
    }
  }

  /** The topology documents of the current file. */
  Map<String, Object> topologies = new HashMap<>();
  /** Routers built from them, by id (the file's). */
  private final Map<String, Router> cache = new HashMap<>();
  /** What to close when the current case ends. */
  final List<AutoCloseable> deferred = new ArrayList<>();

  <T extends AutoCloseable> T defer(T handle) {
    deferred.add(handle);
    return handle;
  }

  private void releaseAll() {
    for (int i = deferred.size() - 1; i >= 0; i--) {
      try {
        deferred.get(i).close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    deferred.clear();
  }

  private void clearCache() {
    cache.values().forEach(Router::close);
    cache.clear();
  }

  // ---- conversions ----

  static Map<String, Object> object(Object... pairs) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) map.put((String) pairs[i], pairs[i + 1]);
    return map;
  }

  static Map<String, Object> errorJson(ShardrouteException error) {
    return object("error", error.getCode());
  }

  static String decimal(long value) {
    return Long.toUnsignedString(value);
  }

  static Object optionalDecimal(java.util.OptionalLong value) {
    return value.isPresent() ? decimal(value.getAsLong()) : Json.NULL;
  }

  static long u32(int value) {
    return Integer.toUnsignedLong(value);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> asObject(Object value) {
    return value instanceof Map<?, ?> ? (Map<String, Object>) value : null;
  }

  @SuppressWarnings("unchecked")
  static List<Object> asList(Object value) {
    return value instanceof List<?> ? (List<Object>) value : null;
  }

  static String text(Object value) {
    return value instanceof String s ? s : null;
  }

  static boolean isTrue(Object value) {
    return Boolean.TRUE.equals(value);
  }

  static int u32Field(Map<String, Object> object, String name) throws Malformed {
    Object value = object.get(name);
    if (!(value instanceof Long n) || n < 0 || n > 0xffffffffL) throw new Malformed("bad " + name);
    return (int) (long) n;
  }

  static String hexOf(byte[] bytes) {
    StringBuilder out = new StringBuilder(bytes.length * 2);
    for (byte b : bytes) out.append(Character.forDigit((b >> 4) & 15, 16)).append(Character.forDigit(b & 15, 16));
    return out.toString();
  }

  static byte[] bytesOfHex(String hex) throws Malformed {
    if (hex.length() % 2 != 0) throw new Malformed("odd-length hex " + hex);
    byte[] bytes = new byte[hex.length() / 2];
    for (int i = 0; i < bytes.length; i++) {
      int high = Character.digit(hex.charAt(2 * i), 16), low = Character.digit(hex.charAt(2 * i + 1), 16);
      if (high < 0 || low < 0) throw new Malformed("bad hex " + hex);
      bytes[i] = (byte) (high << 4 | low);
    }
    return bytes;
  }

  /** JSON text the package returned, parsed. */
  static Object parsed(String text) {
    return Json.parse(text);
  }

  /** A vector key as a Key: Malformed if it is not one, the core's error if it refuses it. */
  static Key keyOf(Object value) throws Malformed {
    Map<String, Object> object = asObject(value);
    if (object == null || object.size() != 1) throw new Malformed("bad key");
    Map.Entry<String, Object> entry = object.entrySet().iterator().next();
    String form = entry.getKey();
    Object inner = entry.getValue();
    String text = text(inner);
    if (form.equals("utf8") && text != null) return Key.of(text);
    if (form.equals("hex") && text != null) return Key.of(bytesOfHex(text));
    if (form.equals("u64") && text != null) return Key.u64(Shardroute.parseU64(text));
    List<Object> units = asList(inner);
    if (form.equals("utf16") && units != null) {
      short[] array = new short[units.size()];
      for (int i = 0; i < array.length; i++) {
        if (!(units.get(i) instanceof Long unit) || unit < 0 || unit > 0xffff) throw new Malformed("bad utf16 unit");
        array[i] = (short) (long) unit;
      }
      return Key.of(Shardroute.utf8FromUtf16(array));
    }
    throw new Malformed("unknown key form " + form);
  }

  static Key[] keysOf(Object value) throws Malformed {
    List<Object> list = asList(value);
    if (list == null) throw new Malformed("keys is not an array");
    Key[] keys = new Key[list.size()];
    for (int i = 0; i < keys.length; i++) keys[i] = keyOf(list.get(i));
    return keys;
  }

  /** A returned key object in the form of the key it came from (text stays utf8). */
  static Object keyForm(Object source, Object key) throws Malformed {
    Map<String, Object> sourceObject = asObject(source), keyObject = asObject(key);
    Object hex = keyObject == null ? null : keyObject.get("hex");
    boolean textForm = sourceObject != null && (sourceObject.containsKey("utf8") || sourceObject.containsKey("utf16"));
    if (hex instanceof String h && textForm) {
      byte[] bytes = bytesOfHex(h);
      try {
        String decoded = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        return object("utf8", decoded);
      } catch (CharacterCodingException notText) {
        return key;
      }
    }
    return key;
  }

  /** A document as JSON text. */
  static String dump(Object value) {
    return Json.write(value);
  }

  // ---- routers of the current file ----

  Router routerFor(String id) throws Malformed {
    Router cached = cache.get(id);
    if (cached != null) return cached;
    Object doc = topologies.get(id);
    if (doc == null) throw new Malformed("unknown topology " + id);
    Router router = Router.fromJson(dump(doc));
    cache.put(id, router);
    return router;
  }

  Router freshRouter(Object id) throws Malformed {
    Object doc = id instanceof String s ? topologies.get(s) : null;
    if (doc == null) throw new Malformed("unknown topology");
    return defer(Router.fromJson(dump(doc)));
  }

  /** The router a case names in {@code field}, through its {@code table} if it names one. */
  Router router(Map<String, Object> c, String field) throws Malformed {
    String id = text(c.get(field));
    if (id == null) throw new Malformed(field + " is not a string");
    Router router = routerFor(id);
    if (c.containsKey("table")) {
      String table = text(c.get("table"));
      if (table == null) throw new Malformed("table is not a string");
      router = defer(router.table(table));
    }
    return router;
  }

  // ---- the ops ----

  private Object migrationOp(Map<String, Object> c, String op) throws Malformed {
    Object dictionary = c.get("dictionary"), before = c.get("before"), after = c.get("after");
    Migration migration;
    if (dictionary != null && before == null && after == null) {
      migration = Migration.ofDictionary(router(c, "dictionary"));
    } else if (dictionary == null && before != null && after != null) {
      Router a = router(c, "before");
      Router b = router(c, "after");
      migration = Migration.between(a, b);
    } else throw new Malformed("a migration case names before and after, or dictionary");
    defer(migration);
    switch (op) {
      case "migration": {
        Key key = keyOf(c.get("key"));
        if (!(c.get("moved") instanceof Boolean moved)) throw new Malformed("moved is not a boolean");
        Object moves = parsed(migration.moves(key));
        String target = migration.writeTarget(key);
        return object("moves", moves, "write_target", target, "read_targets", parsed(migration.readTargets(key, moved)));
      }
      case "migration_salted": {
        Object source = c.get("key");
        Key key = keyOf(source);
        int salt = u32Field(c, "salt");
        List<Object> forms = new ArrayList<>();
        for (Object each : asList(parsed(migration.readKeys(key)))) forms.add(keyForm(source, each));
        return object("read_keys", forms, "write_key", keyForm(source, parsed(migration.writeKey(key, salt))));
      }
      case "migration_scan": return object("nodes", parsed(migration.scanNodes()));
      case "migration_shards": return object("shards", parsed(migration.movingShards()));
      default: return object("indices", parsed(migration.movingKeys(keysOf(c.get("keys")))));
    }
  }

  private static Object routeMany(Router router, Key[] keys) {
    int bytesKeys = 0, total = 0;
    for (Key key : keys) {
      if (!key.isU64()) {
        bytesKeys++;
        total += key.bytes().length;
      }
    }
    int[] shards;
    // Each batch form of the package in turn: packed bytes, u64s, or mixed keys.
    if (bytesKeys == keys.length) {
      byte[] data = new byte[total];
      int[] offsets = new int[keys.length + 1];
      for (int i = 0; i < keys.length; i++) {
        byte[] bytes = keys[i].bytes();
        System.arraycopy(bytes, 0, data, offsets[i], bytes.length);
        offsets[i + 1] = offsets[i] + bytes.length;
      }
      shards = router.routePacked(data, offsets);
    } else if (bytesKeys == 0) {
      long[] values = new long[keys.length];
      for (int i = 0; i < keys.length; i++) values[i] = keys[i].u64Value();
      shards = router.routeU64s(values);
    } else shards = router.routeMany(keys);
    List<Object> list = new ArrayList<>();
    for (int shard : shards) list.add(u32(shard));
    return object("shards", list);
  }

  private static Object routed(Router router, Key key) {
    int shard;
    String node;
    if (key.isU64()) {
      shard = router.routeU64(key.u64Value());
      node = router.nodeU64(key.u64Value());
    } else {
      shard = router.route(key.bytes());
      node = router.node(key.bytes());
    }
    return object("shard", u32(shard), "node", node);
  }

  /** A zone field: null, or a string; anything else (or absent) is malformed. */
  private static String zone(Map<String, Object> c, String what) throws Malformed {
    Object zone = c.get("zone");
    if (zone == Json.NULL) return null;
    if (zone instanceof String s) return s;
    throw new Malformed(what);
  }

  /** An end key: JSON null is unbounded; anything else must be a key (absent is malformed). */
  private static Key endKey(Map<String, Object> c) throws Malformed {
    Object end = c.get("end");
    return end == Json.NULL ? null : keyOf(end);
  }

  Object evaluate(Map<String, Object> c) throws Malformed {
    String op = text(c.get("op"));
    if (op == null) throw new Malformed("a case has no op");
    switch (op) {
      case "load":
      case "apply":
      case "encode_dictionary": {
        Object raw = c.get("topology_json");
        String text;
        if (raw != null && !(raw instanceof String)) throw new Malformed("topology_json is not a string");
        if (raw != null) text = (String) raw;
        else {
          Object doc = topologies.get(text(c.get("topology")));
          if (doc == null) throw new Malformed("unknown topology");
          text = dump(doc);
        }
        if (op.equals("load")) {
          Router router = defer(Router.fromJson(text));
          long epoch = router.epoch();
          return object("epoch", decimal(epoch), "to_json", router.toJson());
        }
        if (op.equals("apply")) {
          Object operation = c.get("operation");
          if (operation == null) throw new Malformed("case has no operation");
          return object("result", parsed(Shardroute.apply(text, dump(operation))));
        }
        return object("hex", hexOf(Shardroute.encodeDictionary(text)));
      }
      case "route":
      case "replicas": {
        Router router = router(c, "topology");
        Key key = keyOf(c.get("key"));
        if (op.equals("route")) return routed(router, key);
        int count = u32Field(c, "count");
        return object("nodes", parsed(router.replicas(key, count)));
      }
      case "route_many": {
        Router router = router(c, "topology");
        return routeMany(router, keysOf(c.get("keys")));
      }
      case "hash_key": {
        Object spec = c.get("hashing");
        String specText = spec == null ? null : dump(spec);
        Key key;
        try {
          key = keyOf(c.get("key"));
        } catch (ShardrouteException keyError) {
          // The spec's error comes first, as in every runner.
          Shardroute.hashKey(Key.u64(0), specText);
          throw keyError;
        }
        return object("hash", decimal(Shardroute.hashKey(key, specText)));
      }
      case "jump": {
        int buckets = u32Field(c, "buckets");
        String hash = text(c.get("hash"));
        if (hash == null) throw new Malformed("hash is not a string");
        return object("shard", u32(Shardroute.jump(Shardroute.parseU64(hash), buckets)));
      }
      case "scatter": {
        Router router = router(c, "topology");
        String zone = zone(c, "bad zone");
        int turn = u32Field(c, "turn");
        String readFrom = text(c.get("read_from")), scope = text(c.get("scope"));
        if (readFrom == null || scope == null) throw new Malformed("bad read_from or scope");
        switch (scope) {
          case "every": return parsed(router.scatterEvery(readFrom, turn, zone));
          case "range": {
            Key start = keyOf(c.get("start"));
            Key end = endKey(c);
            return parsed(router.scatterRange(start, end, readFrom, turn, zone));
          }
          case "keys": return parsed(router.scatterKeys(keysOf(c.get("keys")), readFrom, turn, zone));
          default: throw new Malformed("unknown scope " + scope);
        }
      }
      case "shards_for_range": {
        Router router = router(c, "topology");
        Key start = keyOf(c.get("start"));
        Key end = endKey(c);
        return object("shards", parsed(router.shardsForRange(start, end)));
      }
      case "decode_id": {
        Router router = router(c, "topology");
        String id = text(c.get("id"));
        if (id == null) throw new Malformed("id is not a string");
        return parsed(router.decodeId(Shardroute.parseU64(id)));
      }
      case "locate": {
        Router router = router(c, "topology");
        return parsed(router.locate(keyOf(c.get("key"))));
      }
      case "salted_key": {
        Router router = router(c, "topology");
        Object source = c.get("key");
        int salt = u32Field(c, "salt");
        Key key = keyOf(source);
        return object("key", keyForm(source, parsed(router.saltedKey(key, salt))));
      }
      case "salted_keys": {
        Router router = router(c, "topology");
        Object source = c.get("key");
        Key key = keyOf(source);
        List<Object> list = new ArrayList<>();
        for (Object pair : asList(parsed(router.saltedKeys(key)))) {
          List<Object> p = asList(pair);
          list.add(List.of(keyForm(source, p.get(0)), p.get(1)));
        }
        return object("keys", list);
      }
      case "modulo_moves": {
        int old = u32Field(c, "old"), next = u32Field(c, "new");
        return object("moves", parsed(Shardroute.moduloMoves(old, next)));
      }
      case "route_read":
      case "route_write":
      case "read_replica": {
        Router router = router(c, "topology");
        Key key = keyOf(c.get("key"));
        if (op.equals("route_read")) return object("node", router.routeRead(key));
        if (op.equals("read_replica")) return object("node", router.readReplica(key, u32Field(c, "turn")));
        return object("nodes", parsed(router.routeWrite(key)));
      }
      case "read_near": {
        Router router = router(c, "topology");
        Key key = keyOf(c.get("key"));
        String zone = zone(c, "zone is neither a string nor null");
        return object("node", router.readNear(key, zone));
      }
      case "stats":
      case "same_slot":
      case "group_by_node": {
        Router router = router(c, "topology");
        Key[] keys = keysOf(c.get("keys"));
        if (op.equals("same_slot")) return object("shard", u32(router.sameSlot(keys)));
        if (op.equals("stats")) return object("result", parsed(router.stats(keys)));
        return object("groups", parsed(router.groupByNode(keys)));
      }
      case "moved":
      case "ask": {
        Router router = router(c, "topology");
        int slot = u32Field(c, "slot");
        String address = text(c.get("address"));
        if (address == null) throw new Malformed("address is not a string");
        if (op.equals("moved")) return object("to_json", defer(router.moved(slot, address)).toJson());
        return object("address", router.ask(slot, address));
      }
      case "parse_redirect": {
        String line = text(c.get("line"));
        if (line == null) throw new Malformed("line is not a string");
        return parsed(Shardroute.parseRedirect(line));
      }
      case "index_route": {
        Router router = router(c, "topology");
        Key key = keyOf(c.get("key"));
        String index = text(c.get("index"));
        if (index == null) throw new Malformed("index is not a string");
        return routed(defer(router.index(index)), key);
      }
      case "index_write_plan": {
        Router router = router(c, "topology");
        Key key = keyOf(c.get("key"));
        List<Object> terms = asList(c.get("terms"));
        if (terms == null) throw new Malformed("terms is not an array");
        Term[] pairs = new Term[terms.size()];
        for (int i = 0; i < pairs.length; i++) {
          List<Object> pair = asList(terms.get(i));
          String name = pair == null || pair.isEmpty() ? null : text(pair.get(0));
          if (name == null) throw new Malformed("a term pair has no name");
          pairs[i] = new Term(name, keyOf(pair.size() > 1 ? pair.get(1) : null));
        }
        return parsed(router.indexWritePlan(key, pairs));
      }
      case "shard_owner": {
        Router router = router(c, "topology");
        return object("node", router.shardOwner(u32Field(c, "shard")));
      }
      case "replace": {
        Router router = router(c, "topology");
        Router next = router(c, "next");
        return object("epoch", decimal(defer(router.replace(next)).epoch()));
      }
      case "diff": {
        Router old = router(c, "old");
        Router next = router(c, "new");
        Key[] keys = keysOf(c.get("keys"));
        return object("result", parsed(Shardroute.diff(old, next, keys, isTrue(c.get("per_key")))));
      }
      case "decode_dictionary": {
        String hex = text(c.get("hex"));
        if (hex == null) throw new Malformed("hex is not a string");
        return object("to_json", Shardroute.decodeDictionary(bytesOfHex(hex)));
      }
      case "redis_session": return Sessions.redis(this, c);
      case "topology_follower": return Sessions.follower(this, c);
      case "migration_session": return Sessions.migration(this, c);
      case "misplaced": return Sessions.misplaced(this, c);
      case "session_source": return Sessions.source(this, c);
      default:
        if (op.startsWith("migration")) return migrationOp(c, op);
        throw new Malformed("unknown op " + op);
    }
  }

  /** The case's result: the core's refusal of any call is {@code {"error": code}}. */
  Object run(Map<String, Object> c) throws Malformed {
    try {
      return evaluate(c);
    } catch (ShardrouteException error) {
      return errorJson(error);
    } finally {
      releaseAll();
    }
  }

  public static void main(String[] argv) throws IOException {
    Path dir = Path.of(argv.length > 0 ? argv[0] : "conformance/vectors");
    Path countFile = Path.of(argv.length > 1 ? argv[1] : "target/conformance/java.json");
    String filter = System.getenv().getOrDefault("SHARDROUTE_VECTORS_FILTER", "");
    if (!Shardroute.libraryVersion().equals(Shardroute.VERSION)) {
      System.err.println("libshardroute " + Shardroute.libraryVersion() + " under the Java package " + Shardroute.VERSION);
      System.exit(2);
    }
    List<Path> files;
    try (Stream<Path> listing = Files.list(dir)) {
      files = listing.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
    }
    Runner runner = new Runner();
    long passed = 0, failed = 0;
    for (Path path : files) {
      Map<String, Object> file;
      try {
        String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(Files.readAllBytes(path))).toString();
        file = asObject(Json.parse(text));
      } catch (CharacterCodingException | Json.SyntaxError problem) {
        System.err.println("FAILED " + path + ": " + problem.getMessage());
        failed++;
        continue;
      }
      if (file == null || !"shardroute-vectors/1".equals(file.get("format"))) {
        System.err.println("FAILED " + path + ": unknown vector format");
        failed++;
        continue;
      }
      Map<String, Object> topologies = asObject(file.get("topologies"));
      runner.topologies = topologies == null ? new HashMap<>() : topologies;
      List<Object> cases = asList(file.get("cases"));
      for (Object each : cases == null ? List.<Object>of() : cases) {
        Map<String, Object> c = asObject(each);
        String name = c == null ? null : text(c.get("name"));
        if (name == null) name = "<unnamed>";
        if (!name.contains(filter)) continue;
        Object expect = c == null ? null : c.get("expect");
        try {
          Object actual = c == null ? null : runner.run(c);
          if (actual != null && actual.equals(expect)) passed++;
          else {
            failed++;
            System.err.println("FAILED " + name + ": expected " + clip(Json.write(expect, true)) + ", got "
                + clip(Json.write(actual, true)));
          }
        } catch (Malformed | Json.SyntaxError problem) {
          failed++;
          System.err.println("FAILED " + name + ": " + problem.getMessage());
        }
      }
      runner.clearCache();
    }
    System.out.println("conformance java: " + passed + " passed, " + failed + " failed, 0 skipped");
    Files.createDirectories(countFile.toAbsolutePath().getParent());
    Files.writeString(countFile,
        "{\"runner\": \"java\", \"passed\": " + passed + ", \"failed\": " + failed + ", \"skipped\": 0}\n");
    System.exit(failed == 0 ? 0 : 1);
  }

  private static String clip(String text) {
    return text.length() > 400 ? text.substring(0, 400) : text;
  }
}
