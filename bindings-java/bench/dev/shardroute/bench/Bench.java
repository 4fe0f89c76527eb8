package dev.shardroute.bench;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import dev.shardroute.Router;
import java.nio.charset.StandardCharsets;

/**
 * The Java rows of bench/ffi/bench.sh: {@code route(byte[])}, {@code routeU64} and
 * {@code routePacked} of the package on the topology and keys of
 * capi/src/bin/bench-route.rs, and the JNA call floors, each through JNA's direct mapping
 * (the mapping the package's hot calls use, {@code Hot}): {@code sr_version} of libshardroute
 * with no argument (the floor of any call), and libc's {@code memcmp(byte[], int[], 0)}, a
 * call that does nothing with the argument kinds of {@code sr_router_route} (a {@code byte[]}
 * in, an {@code int[]} out-parameter), so the cost JNA adds per array is shown apart.
 * {@code Bench ROUNDS} prints {@code row NAME NS} lines, ns per key (per call for the floors).
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

  static void run(String name, int rounds, Body body) {
    // JIT warm-up: enough calls for C2 to compile the loop (rounds/2 at least 20 rounds).
    body.run(Math.max(20, rounds / 2));
    long start = System.nanoTime();
    body.run(rounds);
    System.out.printf("row %s %.3f%n", name, (System.nanoTime() - start) / ((double) rounds * KEYS));
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
    try (Router router = Router.fromJson(JUMP16)) {
      run("java.route", rounds, n -> {
        for (; n > 0; n--) for (byte[] key : keys) sum += router.route(key);
      });
      run("java.route_u64", rounds, n -> {
        for (; n > 0; n--) for (int i = 0; i < KEYS; i++) sum += router.routeU64(i);
      });
      run("java.packed", rounds, n -> {
        for (; n > 0; n--) sum += router.routePacked(data, offsets)[n % KEYS];
      });
    }
    run("java.floor", rounds, n -> {
      for (; n > 0; n--) for (int i = 0; i < KEYS; i++) sum += Floor.sr_version();
    });
    int[] out = new int[1];
    run("java.floor_arrays", rounds, n -> {
      for (; n > 0; n--) for (byte[] key : keys) sum += ArrayFloor.memcmp(key, out, 0);
    });
    if (sum == 42) System.out.println(); // keeps the loops
  }
}
