/* The C side of the C ABI's bench (docs/c.md, "Performance"): single-key route through
 * libshardroute from C, and the packed batch, on the topology and keys of the Rust side
 * (capi/src/bin/bench-route.rs). Prints ns per key. Built and run by conformance/c/bench.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shardroute.h"

#define KEYS 1024
#define ROUNDS 4000

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

int main(void) {
  sr_router *router;
  sr_error *error = sr_router_new(TOPOLOGY, strlen(TOPOLOGY), &router);
  if (error) {
    fprintf(stderr, "%s: %s\n", sr_error_code(error), sr_error_message(error));
    return 1;
  }
  static char keys[KEYS][16];
  static size_t lens[KEYS];
  static uint8_t data[KEYS * 16];
  static uint32_t offsets[KEYS + 1], shards[KEYS];
  for (int i = 0; i < KEYS; i++) {
    lens[i] = (size_t)snprintf(keys[i], sizeof keys[i], "user:%d", i);
    memcpy(data + offsets[i], keys[i], lens[i]);
    offsets[i + 1] = offsets[i] + (uint32_t)lens[i];
  }
  volatile uint64_t sum = 0;
  for (int pass = 0; pass < 2; pass++) {
    double start = now_ns();
    for (int r = 0; r < (pass ? ROUNDS : ROUNDS / 10); r++)
      for (int i = 0; i < KEYS; i++) {
        uint32_t shard;
        sr_error *e = sr_router_route(router, (const uint8_t *)keys[i], lens[i], &shard);
        if (e) return 1;
        sum += shard;
      }
    if (pass) printf("c     %-34s %7.2f ns/key\n", "abi sr_router_route(bytes)", (now_ns() - start) / (ROUNDS * KEYS));
  }
  for (int pass = 0; pass < 2; pass++) {
    double start = now_ns();
    for (int r = 0; r < (pass ? ROUNDS : ROUNDS / 10); r++)
      for (int i = 0; i < KEYS; i++) {
        uint32_t shard;
        if (sr_router_route_u64(router, (uint64_t)i, &shard)) return 1;
        sum += shard;
      }
    if (pass) printf("c     %-34s %7.2f ns/key\n", "abi sr_router_route_u64", (now_ns() - start) / (ROUNDS * KEYS));
  }
  for (int pass = 0; pass < 2; pass++) {
    double start = now_ns();
    for (int r = 0; r < (pass ? ROUNDS : ROUNDS / 10); r++) {
      if (sr_router_route_packed(router, data, offsets[KEYS], offsets, KEYS + 1, shards, KEYS)) return 1;
      sum += shards[r % KEYS];
    }
    if (pass)
      printf("c     %-34s %7.2f ns/key\n", "abi sr_router_route_packed (1024)", (now_ns() - start) / (ROUNDS * KEYS));
  }
  sr_router_free(router);
  return sum == 42; /* keeps the loops */
}
