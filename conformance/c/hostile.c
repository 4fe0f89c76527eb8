/* Hostile arguments through the C ABI: the part of conformance/hostile/calls.json that a
 * C caller can write (a C compiler already refuses a wrong type): NULL handles, keys and
 * out-parameters, bad key kinds, text that is not UTF-8, out-of-range integers, 100 MiB
 * keys, bad packed offsets and short out arrays, damaged binary dictionaries, older
 * epochs. Each call must give exactly its code (as every binding does), with a message,
 * and free cleanly (make test-c runs this under valgrind). Exits 1 on any mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shardroute.h"

static int failures, checks;

/* `code` NULL: the call must succeed. */
static void expect(sr_error *error, const char *code, const char *what) {
  checks++;
  const char *got = error ? sr_error_code(error) : NULL;
  int same = (!got && !code) || (got && code && !strcmp(got, code));
  if (same && error && (!sr_error_message(error) || !*sr_error_message(error))) same = 0;
  if (!same) {
    failures++;
    fprintf(stderr, "FAILED %s: expected %s, got %s (%s)\n", what, code ? code : "success", got ? got : "success",
            error ? sr_error_message(error) : "");
  }
  sr_error_free(error);
}

#define S(text) text, strlen(text)

static const char RING[] = "{\"format\": \"shardroute/1\", \"epoch\": 7, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}, "
                           "{\"id\": \"c\"}], \"strategy\": {\"type\": \"ring\", \"points_per_node\": 40}}";
static const char OLDER[] = "{\"format\": \"shardroute/1\", \"epoch\": 6, \"nodes\": [{\"id\": \"a\"}], \"strategy\": "
                            "{\"type\": \"ring\", \"points_per_node\": 40}}";
static const char CLUSTER[] =
    "{\"format\": \"shardroute/1\", \"epoch\": 5, \"nodes\": [{\"id\": \"m1\", \"address\": \"127.0.0.1:7001\"}, "
    "{\"id\": \"m2\", \"address\": \"127.0.0.1:7002\"}], \"strategy\": {\"type\": \"redis_cluster\", \"slots\": "
    "[{\"start\": 0, \"end\": 8191, \"nodes\": [\"m1\"]}, {\"start\": 8192, \"end\": 16383, \"nodes\": [\"m2\"]}]}}";
static const char DICTIONARY[] =
    "{\"format\": \"shardroute/1\", \"epoch\": 3, \"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\"}, {\"id\": \"c\"}], "
    "\"strategy\": {\"type\": \"vbucket\", \"vbuckets\": 4, \"map\": [[\"a\", \"b\"], [\"b\", \"c\"], [\"c\", \"a\"], "
    "[\"a\", \"c\"]]}}";
static const char NOT_UTF8[] = "\xff\xfe";

int main(void) {
  sr_router *ring = NULL, *older = NULL, *cluster = NULL, *out_router = NULL;
  uint32_t shard, shards[4];
  uint64_t value;
  char *json = NULL;
  const char *text;
  size_t len;

  if (strcmp(sr_version(), SHARDROUTE_VERSION)) {
    fprintf(stderr, "FAILED version: library %s, header %s\n", sr_version(), SHARDROUTE_VERSION);
    return 1;
  }
  expect(sr_router_new(S(RING), &ring), NULL, "Router(ring)");
  expect(sr_router_new(S(OLDER), &older), NULL, "Router(older)");
  expect(sr_router_new(S(CLUSTER), &cluster), NULL, "Router(cluster)");
  if (!ring || !older || !cluster) return 1;

  /* NULL handles and out-parameters. */
  expect(sr_router_route(NULL, (const uint8_t *)"k", 1, &shard), "invalid_argument", "route on a NULL router");
  expect(sr_router_route(ring, (const uint8_t *)"k", 1, NULL), "invalid_argument", "route into NULL");
  expect(sr_router_new(S(RING), NULL), "invalid_argument", "Router into NULL");
  expect(sr_migration_new(ring, NULL, NULL), "invalid_argument", "Migration into NULL");
  sr_migration *migration = NULL;
  expect(sr_migration_new(NULL, ring, &migration), "invalid_argument", "Migration of a NULL router");
  expect(sr_diff(ring, NULL, NULL, 0, false, &json), "invalid_argument", "diff with a NULL router");
  expect(sr_cluster_session_poll(NULL, NULL, 0, &json), "invalid_argument", "poll on a NULL session");
  expect(sr_follower_connected(NULL), "invalid_argument", "connected on a NULL follower");
  expect(sr_source_session_timer(NULL, 0, &json), "invalid_argument", "timer on a NULL source session");
  expect(sr_migration_session_scan_nodes(NULL, &json), "invalid_argument", "scan_nodes on a NULL session");
  if (sr_error_code(NULL) || sr_error_message(NULL)) expect(NULL, "NULL", "sr_error_code(NULL) is NULL");
  sr_error_free(NULL), sr_string_free(NULL), sr_bytes_free(NULL, 0), sr_router_free(NULL);

  /* Keys: NULL, a bad kind, NULL bytes with a length, an empty key, 100 MiB keys. */
  sr_key bad_kind = {7, NULL, 0, 0}, null_bytes = {SR_KEY_BYTES, NULL, 3, 0}, empty = {SR_KEY_BYTES, NULL, 0, 0};
  expect(sr_router_replicas(ring, NULL, 2, &json), "invalid_key", "replicas of a NULL key");
  expect(sr_router_replicas(ring, &bad_kind, 2, &json), "invalid_key", "replicas of a key of kind 7");
  expect(sr_router_replicas(ring, &null_bytes, 2, &json), "invalid_key", "replicas of NULL bytes, length 3");
  expect(sr_router_route(ring, NULL, 3, &shard), "invalid_key", "route of NULL bytes, length 3");
  expect(sr_router_route(ring, NULL, 0, &shard), NULL, "route of the empty key");
  expect(sr_router_locate(ring, &empty, &json), NULL, "locate the empty key");
  sr_string_free(json);
  size_t huge = 100u << 20;
  uint8_t *big = malloc(huge);
  memset(big, 'k', huge);
  sr_key big_key = {SR_KEY_BYTES, big, huge, 0};
  expect(sr_router_route(ring, big, huge, &shard), NULL, "route a 100 MiB key");
  expect(sr_hash_key(&big_key, NULL, 0, &value), NULL, "hash_key a 100 MiB key");
  uint32_t offsets[2] = {0, (uint32_t)huge};
  expect(sr_router_route_packed(ring, big, huge, offsets, 2, shards, 4), NULL, "route_packed a 100 MiB key");
  free(big);

  /* Integers as text: u64 keys, jump's hash, decode_id's id. */
  const char *not_u64[] = {"-1", "18446744073709551616", "1.5", "", "1e3", " 1", "0x10"};
  for (size_t i = 0; i < sizeof not_u64 / sizeof *not_u64; i++)
    expect(sr_parse_u64(S(not_u64[i]), &value), "invalid_key", not_u64[i]);
  expect(sr_parse_u64(S("18446744073709551615"), &value), NULL, "2^64 - 1");
  expect(sr_parse_u64(S(NOT_UTF8), &value), "invalid_key", "a u64 that is not UTF-8");
  expect(sr_jump(1, 0, &shard), "no_nodes", "jump into 0 buckets");
  expect(sr_router_shard_owner(ring, UINT32_MAX, &text, &len), "invalid_argument", "shard_owner(2^32 - 1)");
  expect(sr_modulo_moves(0, 3, &json), "no_nodes", "modulo_moves(0, 3)");

  /* Lone surrogates. */
  uint16_t lone[] = {104, 0xd800};
  uint8_t *bytes;
  expect(sr_utf8_from_utf16(lone, 2, &bytes, &len), "invalid_key", "a lone high surrogate");
  uint16_t pair[] = {0xd83d, 0xde00};
  expect(sr_utf8_from_utf16(pair, 2, &bytes, &len), NULL, "a surrogate pair");
  sr_bytes_free(bytes, len);

  /* Text that is not UTF-8, with each argument's code. */
  expect(sr_router_new(S(NOT_UTF8), &out_router), "invalid_topology", "Router(not UTF-8)");
  expect(sr_router_new(S(""), &out_router), "invalid_topology", "Router(empty text)");
  expect(sr_router_new(S("{"), &out_router), "invalid_topology", "Router(broken JSON)");
  expect(sr_router_new(NULL, 5, &out_router), "invalid_topology", "Router(NULL, 5)");
  expect(sr_apply(S(NOT_UTF8), S("{\"op\": \"remove_node\", \"id\": \"a\"}"), &json), "invalid_topology",
         "apply on a topology that is not UTF-8");
  expect(sr_apply(S(RING), S(NOT_UTF8), &json), "invalid_argument", "apply an operation that is not UTF-8");
  expect(sr_apply(S(RING), S("{\"op\": \"no_such_op\"}"), &json), "invalid_argument", "apply an unknown op");
  expect(sr_apply(S(RING), S("{\"op\": \"remove_node\", \"id\": \"a\"}"), &json), NULL, "apply remove_node");
  sr_string_free(json);
  expect(sr_encode_dictionary(S(NOT_UTF8), &bytes, &len), "invalid_topology", "encode_dictionary(not UTF-8)");
  sr_key key = {SR_KEY_BYTES, (const uint8_t *)"k", 1, 0};
  expect(sr_hash_key(&key, S(NOT_UTF8), &value), "invalid_topology", "hash_key with a spec that is not UTF-8");
  expect(sr_hash_key(&key, S("{\"function\": \"nope\"}"), &value), "invalid_topology", "an unknown hash function");
  expect(sr_parse_redirect(S(NOT_UTF8), &json), "invalid_argument", "parse_redirect(not UTF-8)");
  expect(sr_parse_redirect(S("MOVED 3999 127.0.0.1:6381"), &json), NULL, "parse_redirect(MOVED)");
  sr_string_free(json);
  expect(sr_parse_address(S("no-port"), &json), "invalid_argument", "parse_address(no port)");
  expect(sr_router_moved(cluster, 1, S(NOT_UTF8), &out_router), "invalid_argument", "moved to a non-UTF-8 address");
  size_t offset = 0;
  expect(sr_router_ask(cluster, 1, S(""), &offset, &len), "invalid_argument", "ask an empty address");
  expect(sr_router_ask(cluster, 1, S("127.0.0.1:7003"), NULL, &len), "invalid_argument", "ask, out_offset NULL");
  expect(sr_router_ask(cluster, 1, S("127.0.0.1:7003"), &offset, NULL), "invalid_argument", "ask, out_len NULL");
  /* ask answers an offset and a length into its argument, never a pointer: here the argument
   * is a copy (as JNA passes one) wiped right after the call, and the answer, read from the
   * caller's own buffer, is the address. */
  {
    const char *address = "127.0.0.1:7003";
    char *copy = malloc(strlen(address));
    memcpy(copy, address, strlen(address));
    offset = len = (size_t)-1;
    expect(sr_router_ask(cluster, 1, copy, strlen(address), &offset, &len), NULL, "ask 127.0.0.1:7003");
    memset(copy, 'x', strlen(address));
    free(copy);
    checks++;
    if (offset > strlen(address) || len > strlen(address) - offset ||
        memcmp(address + offset, "127.0.0.1:7003", len) || len != strlen(address)) {
      failures++;
      fprintf(stderr, "FAILED ask: offset %zu, length %zu is not the address within its argument\n", offset, len);
    }
  }
  expect(sr_router_moved(cluster, 16384, S("127.0.0.1:7003"), &out_router), "invalid_argument", "moved slot 16384");
  expect(sr_router_index(ring, S(NOT_UTF8), &out_router), "invalid_argument", "index(not UTF-8)");
  expect(sr_router_table(ring, S("users"), &out_router), "invalid_argument", "table(an unknown table)");
  sr_str seed = {NOT_UTF8, 2};
  sr_cluster_session *session = NULL;
  expect(sr_cluster_session_new(&seed, 1, NULL, 0, &session), "invalid_argument", "a seed that is not UTF-8");
  expect(sr_cluster_session_new(NULL, 0, NULL, 0, &session), "invalid_argument", "no seeds");
  sr_str good_seed = {"127.0.0.1:7001", 14};
  expect(sr_cluster_session_new(&good_seed, 1, S("{\"max_redirects\": -1}"), &session), "invalid_argument",
         "a bad config");
  expect(sr_cluster_session_new(&good_seed, 1, S(NOT_UTF8), &session), "invalid_argument", "a non-UTF-8 config");

  /* Packed batches: offsets, and an out array too short. */
  const uint8_t data[] = "abcdef";
  uint32_t good[] = {0, 3, 6}, decreasing[] = {0, 4, 3}, past[] = {0, 3, 7};
  expect(sr_router_route_packed(ring, data, 6, good, 0, shards, 4), "invalid_argument", "no offsets");
  expect(sr_router_route_packed(ring, data, 6, decreasing, 3, shards, 4), "invalid_argument", "decreasing offsets");
  expect(sr_router_route_packed(ring, data, 6, past, 3, shards, 4), "invalid_argument", "offsets past the end");
  expect(sr_router_route_packed(ring, data, 6, good, 3, shards, 1), "invalid_argument", "an out array too short");
  expect(sr_router_route_packed(ring, NULL, 6, good, 3, shards, 4), "invalid_argument", "NULL data, length 6");
  expect(sr_router_route_packed(ring, data, 6, good, 3, shards, 4), NULL, "route_packed two keys");
  uint64_t integers[] = {1, 2, 3};
  expect(sr_router_route_u64s(ring, integers, 3, NULL, 3), "invalid_argument", "route_u64s into NULL");
  expect(sr_router_route_u64s(ring, integers, 3, shards, 3), NULL, "route_u64s");
  expect(sr_router_route_many(ring, NULL, 0, NULL, 0), NULL, "route_many of no keys");

  /* Damaged binary dictionaries. */
  expect(sr_encode_dictionary(S(RING), &bytes, &len), "invalid_argument", "encode_dictionary(ring)");
  bytes = NULL;
  expect(sr_encode_dictionary(S(DICTIONARY), &bytes, &len), NULL, "encode_dictionary(vbucket)");
  if (!bytes) return 1;
  expect(sr_decode_dictionary(bytes, 0, &json), "invalid_topology", "an empty dictionary");
  expect(sr_decode_dictionary(bytes, len - 1, &json), "invalid_topology", "a truncated dictionary");
  bytes[len / 2] ^= 1;
  expect(sr_decode_dictionary(bytes, len, &json), "invalid_topology", "a dictionary with a flipped bit");
  bytes[len / 2] ^= 1;
  expect(sr_decode_dictionary(bytes, len, &json), NULL, "the dictionary as written");
  sr_string_free(json);
  sr_bytes_free(bytes, len);

  /* Epochs only grow. */
  expect(sr_router_replace(ring, older, &out_router), "stale_epoch", "replace by an older epoch");
  expect(sr_migration_new(ring, older, &migration), "stale_epoch", "a migration to an older epoch");
  expect(sr_migration_new(ring, ring, &migration), "stale_epoch", "a migration to the same epoch");

  sr_router_free(ring);
  sr_router_free(older);
  sr_router_free(cluster);
  printf("hostile c: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
