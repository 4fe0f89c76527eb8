package dev.shardroute;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Unit tests of the Java package's shell: error codes, handle lifetime, the unsigned and
 * bool conversions, the batch forms. Plain Java (no test framework): {@code main} runs every
 * test, prints each failure and exits 1 if any failed.
 */
public final class ApiTest {
  private static final String DOC = "{\"format\": \"shardroute/1\", \"epoch\": 7, \"nodes\": "
      + "[{\"id\": \"a\"}, {\"id\": \"b\"}, {\"id\": \"c\"}], \"strategy\": {\"type\": \"jump\"}}";
  private static final List<String> failures = new ArrayList<>();
  private static int run;

  private interface Body {
    void run() throws Exception;
  }

  private static void test(String name, Body body) {
    run++;
    try {
      body.run();
    } catch (Throwable t) {
      failures.add(name + ": " + t);
    }
  }

  private static void check(boolean condition, String what) {
    if (!condition) throw new AssertionError(what);
  }

  /** The code of the ShardrouteException {@code body} throws (it must throw one). */
  private static String codeOf(Body body) throws Exception {
    try {
      body.run();
    } catch (ShardrouteException e) {
      return e.getCode();
    }
    throw new AssertionError("no ShardrouteException");
  }

  public static void main(String[] args) {
    test("version: the library is the package's", () ->
        check(Shardroute.libraryVersion().equals(Shardroute.VERSION), Shardroute.libraryVersion()));

    test("a bad document is invalid_topology, with the core's message", () -> {
      check(codeOf(() -> Router.fromJson("{}")).equals("invalid_topology"), "code");
      check(codeOf(() -> Router.fromJson("not json")).equals("invalid_topology"), "code of text");
      try {
        Router.fromJson("{}");
      } catch (ShardrouteException e) {
        check(e.getMessage().startsWith("invalid_topology: ") && e.getMessage().length() > 18, e.getMessage());
      }
    });

    test("a bad key is invalid_key", () -> {
      check(codeOf(() -> Shardroute.parseU64("-1")).equals("invalid_key"), "negative u64");
      check(codeOf(() -> Shardroute.parseU64("18446744073709551616")).equals("invalid_key"), "u64 overflow");
      check(codeOf(() -> Shardroute.utf8FromUtf16(new short[] {(short) 0xd800})).equals("invalid_key"),
          "lone surrogate");
      String u64Doc = DOC.replace("\"epoch\": 7", "\"epoch\": 7, \"hashing\": {\"keys\": \"u64\"}");
      try (Router router = Router.fromJson(u64Doc)) {
        check(codeOf(() -> router.route("text")).equals("invalid_key"), "text under keys u64");
      }
    });

    test("other bad arguments are invalid_argument", () -> {
      try (Router router = Router.fromJson(DOC)) {
        // offsets that run past the data
        check(codeOf(() -> router.routePacked(new byte[2], new int[] {0, 5})).equals("invalid_argument"), "offsets");
      }
    });

    test("close twice is safe; a closed handle is invalid_argument", () -> {
      Router router = Router.fromJson(DOC);
      router.close();
      router.close();
      check(codeOf(() -> router.route("k")).equals("invalid_argument"), "route after close");
      check(codeOf(router::toJson).equals("invalid_argument"), "toJson after close");
      Follower follower = Follower.create(null);
      follower.close();
      follower.close();
      ClusterSession session = ClusterSession.create(new String[] {"127.0.0.1:7000"}, null);
      Command command = session.command(new Key[] {Key.of("k")}, "write", 0);
      command.close();
      command.close();
      session.close();
      session.close();
    });

    test("route, node and the batch forms agree; epoch is unsigned", () -> {
      try (Router router = Router.fromJson(DOC)) {
        check(router.epoch() == 7, "epoch");
        check(router.route("user:42") == 1 && router.node("user:42").equals("b"), "user:42");
        byte[] data = "user:1user:2user:3".getBytes(StandardCharsets.UTF_8);
        int[] packed = router.routePacked(data, new int[] {0, 6, 12, 18});
        int[] many = router.routeMany(new Key[] {Key.of("user:1"), Key.of("user:2"), Key.of("user:3")});
        check(java.util.Arrays.equals(packed, many), "packed == many");
        check(packed[0] == router.route("user:1"), "packed == route");
        check(router.routePacked(new byte[0], new int[] {0}).length == 0, "empty batch");
        // 2^64-1 as a Java long is -1: routeU64 reads it unsigned, like the u64 key form.
        long max = Long.parseUnsignedLong("18446744073709551615");
        check(max == -1L, "max");
        int shard = router.routeU64(max);
        check(router.routeU64s(new long[] {max})[0] == shard, "u64s");
        check(router.routeMany(new Key[] {Key.u64(Shardroute.parseU64("18446744073709551615"))})[0] == shard, "many");
        check(router.nodeU64(max).equals(router.shardOwner(shard)), "nodeU64");
        try (Router copy = router.copy()) {
          check(copy.toJson().equals(router.toJson()), "copy");
        }
      }
    });

    test("structured results are the ABI's JSON text", () -> {
      try (Router router = Router.fromJson(DOC)) {
        check(router.replicas(Key.of("user:42"), 2).equals("[\"b\",\"c\"]"), router.replicas(Key.of("user:42"), 2));
      }
    });

    test("bool out-parameters: absent and present optionals, timed_out false", () -> {
      try (Follower follower = Follower.create(null)) {
        check(follower.revision().equals(OptionalLong.empty()), "no revision yet");
        check(follower.router() == null, "no router yet");
        follower.offer(DOC, 3, 0);
        check(follower.revision().equals(OptionalLong.of(3)), "revision 3");
        try (Router router = follower.router()) {
          check(router.epoch() == 7, "follower's router");
        }
      }
      try (ClusterSession session = ClusterSession.create(new String[] {"127.0.0.1:7000"}, null)) {
        check(!session.timeout(0), "not timed out at 0");
      }
    });

    // The ABI answers ask with an offset and a length into its argument; JNA passes the call a
    // temporary copy of the array, so the former answer, a pointer into that copy, read garbage
    // here once the array path was used (it did on 5 redis_cluster/ask vectors).
    test("ask answers with the address, read from the caller's own array", () -> {
      String cluster = "{\"format\": \"shardroute/1\", \"epoch\": 5, \"nodes\": [{\"id\": \"m1\", "
          + "\"address\": \"127.0.0.1:7001\"}, {\"id\": \"m2\", \"address\": \"127.0.0.1:7002\"}], "
          + "\"strategy\": {\"type\": \"redis_cluster\", \"slots\": [{\"nodes\": [\"m1\"], \"start\": 0, "
          + "\"end\": 8191}, {\"nodes\": [\"m2\"], \"start\": 8192, \"end\": 16383}]}}";
      try (Router router = Router.fromJson(cluster)) {
        for (int i = 0; i < 200; i++) {
          String address = "h".repeat(i) + ":" + (7000 + i);
          check(router.ask(7, address).equals(address), "ask " + address);
        }
      }
    });

    // route/node copy the key into a per-thread native buffer (Scratch): every length, across
    // its growth and past its bound (the array path), answers as the batch does.
    test("route and node over the per-thread buffer agree with the batch at every key length", () -> {
      try (Router router = Router.fromJson(DOC)) {
        int[] lengths = {0, 1, 7, 239, 240, 241, 480, 1000, 4097, Scratch.MAX_KEY_BYTES - 1, Scratch.MAX_KEY_BYTES,
            Scratch.MAX_KEY_BYTES + 1, 3 << 20, 5};
        for (int length : lengths) {
          byte[] key = new byte[length];
          for (int i = 0; i < length; i++) key[i] = (byte) ('a' + (i * 7 + length) % 26);
          int shard = router.routePacked(key, new int[] {0, length})[0];
          check(router.route(key) == shard, "route of a key of " + length + " bytes");
          check(router.node(key).equals(router.shardOwner(shard)), "node of a key of " + length + " bytes");
          check(Scratch.get(0).capacity() <= Scratch.OUT + Scratch.MAX_KEY_BYTES, "the buffer stays bounded");
        }
        check(router.routeU64(-1L) == router.routeU64s(new long[] {-1L})[0], "routeU64(2^64 - 1)");
        check(router.nodeU64(42).equals(router.shardOwner(router.routeU64(42))), "nodeU64");
      }
    });

    test("route from many threads at once: each thread's buffer is its own", () -> {
      try (Router router = Router.fromJson(DOC)) {
        int keys = 2000;
        int[] expected = new int[keys];
        for (int i = 0; i < keys; i++) expected[i] = router.route("user:" + i + "x".repeat(i % 300));
        List<Thread> threads = new ArrayList<>();
        List<String> wrong = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < 8; t++) {
          final int offset = t;
          Thread thread = new Thread(() -> {
            for (int round = 0; round < 5; round++) {
              for (int i = 0; i < keys; i++) {
                int k = (i + offset * 251) % keys;
                if (router.route("user:" + k + "x".repeat(k % 300)) != expected[k]) wrong.add("key " + k);
              }
            }
          });
          threads.add(thread);
          thread.start();
        }
        for (Thread thread : threads) thread.join();
        check(wrong.isEmpty(), "wrong shards: " + wrong.size());
      }
    });

    test("a closed router's route and node are invalid_argument", () -> {
      Router router = Router.fromJson(DOC);
      router.close();
      check(codeOf(() -> router.route("k")).equals("invalid_argument"), "route");
      check(codeOf(() -> router.node("k")).equals("invalid_argument"), "node");
      check(codeOf(() -> router.routeU64(1)).equals("invalid_argument"), "routeU64");
      check(codeOf(() -> router.nodeU64(1)).equals("invalid_argument"), "nodeU64");
    });

    for (String failure : failures) System.err.println("FAILED " + failure);
    System.out.println("java api tests: " + (run - failures.size()) + " passed, " + failures.size() + " failed");
    System.exit(failures.isEmpty() ? 0 : 1);
  }
}
