/* The C conformance runner's shared helpers (runner.c, sessions.c): conversions from
 * the vector format to the ABI's arguments, and back. Decides nothing: libshardroute
 * does (conformance/README.md). */
#ifndef SR_RUNNER_H
#define SR_RUNNER_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shardroute.h"

/* Why the current case could not run (a malformed vector or an unknown op): the case
 * fails with it. */
extern char reason[1024];
json_t *fail(const char *format, ...);
#define FAIL(...) return fail(__VA_ARGS__)

/* What to free when the current case ends. */
enum owner { OWN_MALLOC, OWN_SR_BYTES, OWN_ROUTER, OWN_MIGRATION, OWN_JSON };
void defer(enum owner kind, void *pointer, size_t len);
void release_all(void);

/* {"error": code}, freeing the error. */
json_t *error_json(sr_error *error);
/* The core's error of a call as the case's result. */
#define TRY(call)                                                                                                      \
  do {                                                                                                                 \
    sr_error *try_error_ = (call);                                                                                     \
    if (try_error_) return error_json(try_error_);                                                                     \
  } while (0)

/* Parses JSON text a call returned, then frees it. */
json_t *parsed(char *text);
/* A decimal string of a u64. */
json_t *decimal(uint64_t value);
/* A deadline: a decimal string or null. */
json_t *optional_decimal(bool present, uint64_t value);
/* The text of a field as (pointer, length), or NULL. */
const char *text_of(json_t *value, size_t *len);
/* A field that must be an integer in 0..2^32. */
int u32_field(json_t *object, const char *name, uint32_t *out);
/* Lowercase hex of bytes (deferred free), and hex to bytes (deferred free). */
char *hex_of(const uint8_t *bytes, size_t len);
int bytes_of_hex(const char *hex, uint8_t **out, size_t *len);
/* A document as JSON text (deferred free). */
char *dump(json_t *value, size_t *len);

/* A vector key as an sr_key: 0 ok, 1 the core refused it (*error set), -1 malformed. */
int key_of(json_t *value, sr_key *out, sr_error **error);
#define KEY(value, key)                                                                                                \
  do {                                                                                                                 \
    sr_error *key_error_ = NULL;                                                                                       \
    int key_rc_ = key_of((value), (key), &key_error_);                                                                 \
    if (key_rc_ < 0) return NULL;                                                                                      \
    if (key_rc_ > 0) return error_json(key_error_);                                                                    \
  } while (0)
/* An array of vector keys (deferred free). */
int keys_of(json_t *array, sr_key **out, size_t *count, sr_error **error);
#define KEYS(array, keys, count)                                                                                       \
  do {                                                                                                                 \
    sr_error *key_error_ = NULL;                                                                                       \
    int key_rc_ = keys_of((array), (keys), (count), &key_error_);                                                      \
    if (key_rc_ < 0) return NULL;                                                                                      \
    if (key_rc_ > 0) return error_json(key_error_);                                                                    \
  } while (0)
/* A returned key object in the form of the key it came from (text stays utf8). */
json_t *key_form(json_t *source, json_t *key);

/* The topology documents of the current file, and routers built from them (cached). */
extern json_t *topologies;
/* 0 ok, 1 the core refused the document, -1 unknown id. Cached routers are the file's. */
int router_for(const char *id, sr_router **out, sr_error **error);
/* A router built afresh from a topology id (deferred free). */
int fresh_router(json_t *id, sr_router **out, sr_error **error);

json_t *redis_session(json_t *c);
json_t *topology_follower(json_t *c);
json_t *migration_session(json_t *c);
json_t *session_source(json_t *c);
json_t *misplaced(json_t *c);

#endif
