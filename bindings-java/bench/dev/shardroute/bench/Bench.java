package dev.shardroute.bench;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import dev.shardroute.Router;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Java rows of bench/ffi/bench.sh: {@code route(byte[])}, {@code node(byte[])},
 * {@code routeU64} and {@code routePacked} of the package on the topology and keys of
 * capi/src/bin/bench-route.rs; the array path {@code route(byte[])} took before
 * (direct-mapped {@code sr_router_route} with a {@code byte[]} and an {@code int[]}); and the
 * JNA call floors, each through JNA's direct mapping (the mapping the package's hot calls
 * use, {@code Hot} and {@code Scratch}): {@code sr_version} of libshardroute
 * with no argument (the floor of any call), and libc's {@code memcmp(byte[], int[], 0)}, a
 * call that does nothing with the argument kinds of {@code sr_router_route} (a {@code byte[]}
 * in, an {@code int[]} out-parameter), so the cost JNA adds per array is shown apart.
 * {@code Bench ROUNDS} prints {@code row NAME NS} lines, ns per key (per call for the floors):
 * each row warmed up, then timed in interleaved repetitions ({@link #runAll}).
 */
public final class Bench {
  private Bench() {}

  /** libshardroute's trivial export, direct-mapped like the package's hot calls. */
  static final class Floor {
    static {
      Native.register(Floor.class, NativeLibrary.getInstance("shardroute"));
    }

    static native long sr_version();
  }

  /**
   * {@code sr_router_route} with a {@code byte[]} key and an {@code int[]} out-parameter: the
   * array path {@code route(byte[])} took before it used a per-thread native buffer (kept as
   * a row so one run shows both).
   */
  static final class ArrayRoute {
    static {
      Native.register(ArrayRoute.class, NativeLibrary.getInstance("shardroute"));
    }

    static native long sr_router_new(byte[] json, long jsonLen, long[] router);

    static native long sr_router_route(long router, byte[] key, long keyLen, int[] shard);

    static native void sr_router_free(long router);
  }

  /** libc's memcmp with route's argument kinds, direct-mapped. */
  static final class ArrayFloor {
    static {
      Native.register(ArrayFloor.class, NativeLibrary.getInstance("c"));
    }

    static native int memcmp(byte[] a, int[] b, long n);
  }

  static final String JUMP16 = "{\"format\": \"shardroute/1\", \"epoch\": 1, \"nodes\": [{\"id\": \"n0\"}, {\"id\": \"n1\"}, "
      + "{\"id\": \"n2\"}, {\"id\": \"n3\"}, {\"id\": \"n4\"}, {\"id\": \"n5\"}, {\"id\": \"n6\"}, {\"id\": \"n7\"}, "
      + "{\"id\": \"n8\"}, {\"id\": \"n9\"}, {\"id\": \"n10\"}, {\"id\": \"n11\"}, {\"id\": \"n12\"}, {\"id\": \"n13\"}, "
      + "{\"id\": \"n14\"}, {\"id\": \"n15\"}], \"strategy\": {\"type\": \"jump\"}}";
  static final int KEYS = 1024;
  static long sum;

  interface Body {
    void run(int rounds);
  }

  /** Repetitions of each row, interleaved; a row's figure is their median. */
  static final int REPEATS = 5;

  /**
   * Runs every row: first each one's JIT warm-up (rounds/2, at least 20 rounds, for C2 to
   * compile every row's code before any is timed), then {@link #REPEATS} interleaved
   * repetitions of rounds/REPEATS rounds each, so a load spike on this shared machine hits
   * every row alike; prints each row's median in ns per key.
   */
  static void runAll(int rounds, Map<String, Body> rows) {
    for (Body body : rows.values()) body.run(Math.max(20, rounds / 2));
    int each = Math.max(1, rounds / REPEATS);
    Map<String, double[]> times = new LinkedHashMap<>();
    for (String name : rows.keySet()) times.put(name, new double[REPEATS]);
    for (int repeat = 0; repeat < REPEATS; repeat++) {
      for (Map.Entry<String, Body> row : rows.entrySet()) {
        long start = System.nanoTime();
        row.getValue().run(each);
        times.get(row.getKey())[repeat] = (System.nanoTime() - start) / ((double) each * KEYS);
      }
    }
    for (Map.Entry<String, double[]> row : times.entrySet()) {
      double[] t = row.getValue();
      Arrays.sort(t);
      System.out.printf("row %s %.3f%n", row.getKey(), t[REPEATS / 2]);
    }
  }

  public static void main(String[] args) {
    int rounds = Math.max(1, args.length > 0 ? Integer.parseInt(args[0]) : 1000);
    byte[][] keys = new byte[KEYS][];
    int[] offsets = new int[KEYS + 1];
    StringBuilder packed = new StringBuilder();
    for (int i = 0; i < KEYS; i++) {
      keys[i] = ("user:" + i).getBytes(StandardCharsets.UTF_8);
      packed.append("user:").append(i);
      offsets[i + 1] = offsets[i] + keys[i].length;
    }
    byte[] data = packed.toString().getBytes(StandardCharsets.UTF_8);
    byte[] json = JUMP16.getBytes(StandardCharsets.UTF_8);
    long[] handle = new long[1];
    if (ArrayRoute.sr_router_new(json, json.length, handle) != 0) throw new IllegalStateException("sr_router_new");
    int[] shard = new int[1], out = new int[1];
    Map<String, Body> rows = new LinkedHashMap<>();
    try (Router router = Router.fromJson(JUMP16)) {
      rows.put("java.route", n -> {
        for (; n > 0; n--) for (byte[] key : keys) sum += router.route(key);
      });
      rows.put("java.node", n -> {
        for (; n > 0; n--) for (byte[] key : keys) sum += router.node(key).length();
      });
      rows.put("java.route_u64", n -> {
        for (; n > 0; n--) for (int i = 0; i < KEYS; i++) sum += router.routeU64(i);
      });
      rows.put("java.packed", n -> {
        for (; n > 0; n--) sum += router.routePacked(data, offsets)[n % KEYS];
      });
      rows.put("java.route_arrays", n -> {
        for (; n > 0; n--) for (byte[] key : keys) {
          if (ArrayRoute.sr_router_route(handle[0], key, key.length, shard) != 0) throw new IllegalStateException("route");
          sum += shard[0];
        }
      });
      rows.put("java.floor", n -> {
        for (; n > 0; n--) for (int i = 0; i < KEYS; i++) sum += Floor.sr_version();
      });
      rows.put("java.floor_arrays", n -> {
        for (; n > 0; n--) for (byte[] key : keys) sum += ArrayFloor.memcmp(key, out, 0);
      });
      runAll(rounds, rows);
    }
    ArrayRoute.sr_router_free(handle[0]);
    if (sum == 42) System.out.println(); // keeps the loops
  }
}
