/* The C rows of bench/ffi/bench.sh: single-key route through libshardroute.so from C (bytes
 * and u64), the packed batch, and the C call floor (sr_version: an exported function that
 * returns a static pointer, called through the same shared library and PLT). The topology
 * and keys are those of capi/src/bin/bench-route.rs. `bench ROUNDS` prints `row NAME NS`
 * lines, ns per key (per call for the floor). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shardroute.h"

#define KEYS 1024

static const char TOPOLOGY[] =
    "{\"format\": \"shardroute/1\", \"epoch\": 1, \"nodes\": [{\"id\": \"n0\"}, {\"id\": \"n1\"}, {\"id\": \"n2\"}, "
    "{\"id\": \"n3\"}, {\"id\": \"n4\"}, {\"id\": \"n5\"}, {\"id\": \"n6\"}, {\"id\": \"n7\"}, {\"id\": \"n8\"}, "
    "{\"id\": \"n9\"}, {\"id\": \"n10\"}, {\"id\": \"n11\"}, {\"id\": \"n12\"}, {\"id\": \"n13\"}, {\"id\": \"n14\"}, "
    "{\"id\": \"n15\"}], \"strategy\": {\"type\": \"jump\"}}";

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static char keys[KEYS][16];
static size_t lens[KEYS];
static uint8_t data[KEYS * 16];
static uint32_t offsets[KEYS + 1], shards[KEYS];
static volatile uint64_t sum;

static int route_bytes(const sr_router *router, int rounds) {
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < KEYS; i++) {
      uint32_t shard;
      if (sr_router_route(router, (const uint8_t *)keys[i], lens[i], &shard)) return 1;
      sum += shard;
    }
  return 0;
}

static int route_u64(const sr_router *router, int rounds) {
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < KEYS; i++) {
      uint32_t shard;
      if (sr_router_route_u64(router, (uint64_t)i, &shard)) return 1;
      sum += shard;
    }
  return 0;
}

static int route_packed(const sr_router *router, int rounds) {
  for (int r = 0; r < rounds; r++) {
    if (sr_router_route_packed(router, data, offsets[KEYS], offsets, KEYS + 1, shards, KEYS)) return 1;
    sum += shards[r % KEYS];
  }
  return 0;
}

static int floor_call(const sr_router *router, int rounds) {
  (void)router;
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < KEYS; i++) sum += (uintptr_t)sr_version();
  return 0;
}

static int run(const char *name, int (*body)(const sr_router *, int), const sr_router *router, int rounds) {
  if (body(router, rounds / 10 + 1)) return 1; /* warm-up */
  double start = now_ns();
  if (body(router, rounds)) return 1;
  printf("row %s %.3f\n", name, (now_ns() - start) / ((double)rounds * KEYS));
  return 0;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1000;
  if (rounds < 1) rounds = 1;
  sr_router *router;
  sr_error *error = sr_router_new(TOPOLOGY, strlen(TOPOLOGY), &router);
  if (error) {
    fprintf(stderr, "%s: %s\n", sr_error_code(error), sr_error_message(error));
    return 1;
  }
  for (int i = 0; i < KEYS; i++) {
    lens[i] = (size_t)snprintf(keys[i], sizeof keys[i], "user:%d", i);
    memcpy(data + offsets[i], keys[i], lens[i]);
    offsets[i + 1] = offsets[i] + (uint32_t)lens[i];
  }
  int failed = run("c.route", route_bytes, router, rounds) || run("c.route_u64", route_u64, router, rounds) ||
               run("c.packed", route_packed, router, rounds) || run("c.floor", floor_call, router, rounds);
  sr_router_free(router);
  return failed;
}
