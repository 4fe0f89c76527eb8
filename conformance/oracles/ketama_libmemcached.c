/* Oracle harness for the ketama profile: asks Debian's libmemcached which server a key
 * maps to (memcached_generate_hash), without connecting to any server.
 *
 * usage: ketama_libmemcached weighted|unweighted keys|hashes host:port:weight...
 * stdin: one hex-encoded key per line ("keys"), or one decimal u32 per line ("hashes":
 * the value is used as the key's hash through a custom hashkit function, to probe the
 * continuum at exact points). stdout: the server index per line, in input order.
 * Built and run by conformance/oracles/test_ketama.py. */
#include <libmemcached/memcached.h>
#include <libhashkit-1.0/hashkit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t as_hash(const char *key, size_t length, void *context) {
  (void)context;
  uint32_t value = 0;
  for (size_t i = 0; i < length; i++) value = value * 10 + (uint32_t)(key[i] - '0');
  return value;
}

static int hex(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: %s weighted|unweighted keys|hashes host:port:weight...\n", argv[0]); return 2; }
  int weighted = strcmp(argv[1], "weighted") == 0;
  int hashes = strcmp(argv[2], "hashes") == 0;
  memcached_st *memc = memcached_create(NULL);
  if (!memc) return 3;
  for (int i = 3; i < argc; i++) {
    char *spec = strdup(argv[i]);
    char *last = strrchr(spec, ':');
    *last = 0;
    uint32_t weight = (uint32_t)strtoul(last + 1, NULL, 10);
    char *port = strrchr(spec, ':');
    *port = 0;
    if (memcached_server_add_with_weight(memc, spec, (in_port_t)atoi(port + 1), weight) != MEMCACHED_SUCCESS) {
      fprintf(stderr, "server_add failed for %s\n", argv[i]);
      return 4;
    }
    free(spec);
  }
  memcached_behavior_t behavior = weighted ? MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED : MEMCACHED_BEHAVIOR_KETAMA;
  if (memcached_behavior_set(memc, behavior, 1) != MEMCACHED_SUCCESS) return 5;
  if (hashes) {
    hashkit_st *kit = hashkit_create(NULL);
    hashkit_set_custom_function(kit, as_hash, NULL);
    if (memcached_set_hashkit(memc, kit) != MEMCACHED_SUCCESS) return 6;
  }
  char *line = NULL;
  size_t capacity = 0;
  ssize_t read;
  char *key = NULL;
  size_t key_capacity = 0;
  while ((read = getline(&line, &capacity, stdin)) != -1) {
    while (read > 0 && (line[read - 1] == '\n' || line[read - 1] == '\r')) line[--read] = 0;
    size_t length;
    if (hashes) {
      if ((size_t)read + 1 > key_capacity) { key_capacity = (size_t)read + 1; key = realloc(key, key_capacity); }
      memcpy(key, line, (size_t)read);
      length = (size_t)read;
    } else {
      length = (size_t)read / 2;
      if (length + 1 > key_capacity) { key_capacity = length + 1; key = realloc(key, key_capacity); }
      for (size_t i = 0; i < length; i++) key[i] = (char)(hex(line[2 * i]) * 16 + hex(line[2 * i + 1]));
    }
    printf("%u\n", memcached_generate_hash(memc, key, length));
  }
  memcached_free(memc);
  return 0;
}
