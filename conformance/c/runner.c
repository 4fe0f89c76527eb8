/* The C conformance runner: every case of every file in conformance/vectors through
 * libshardroute's C ABI (capi/include/shardroute.h), compared with its `expect`
 * (conformance/README.md). Prints `conformance c: N passed, M failed, 0 skipped` and
 * writes target/conformance/c.json. Usage: runner [vectors dir] [count file]; the
 * environment's SHARDROUTE_VECTORS_FILTER keeps the cases whose name contains it. */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include "runner.h"

char reason[1024];
json_t *topologies;

json_t *fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(reason, sizeof reason, format, args);
  va_end(args);
  return NULL;
}

/* ---- what to free when a case ends ---- */
struct deferred {
  enum owner kind;
  void *pointer;
  size_t len;
};
static struct deferred *deferred;
static size_t deferred_count, deferred_capacity;

void defer(enum owner kind, void *pointer, size_t len) {
  if (deferred_count == deferred_capacity) {
    deferred_capacity = deferred_capacity ? deferred_capacity * 2 : 64;
    deferred = realloc(deferred, deferred_capacity * sizeof *deferred);
    if (!deferred) abort();
  }
  deferred[deferred_count++] = (struct deferred){kind, pointer, len};
}

void release_all(void) {
  while (deferred_count > 0) {
    struct deferred d = deferred[--deferred_count];
    switch (d.kind) {
    case OWN_MALLOC: free(d.pointer); break;
    case OWN_SR_BYTES: sr_bytes_free(d.pointer, d.len); break;
    case OWN_ROUTER: sr_router_free(d.pointer); break;
    case OWN_MIGRATION: sr_migration_free(d.pointer); break;
    case OWN_JSON: json_decref(d.pointer); break;
    }
  }
}

/* ---- conversions ---- */
json_t *error_json(sr_error *error) {
  json_t *result = json_pack("{s:s}", "error", sr_error_code(error));
  sr_error_free(error);
  return result;
}

json_t *parsed(char *text) {
  json_error_t problem;
  json_t *value = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &problem);
  if (!value) fail("the ABI returned JSON jansson cannot read (%s): %.200s", problem.text, text);
  sr_string_free(text);
  return value;
}

json_t *decimal(uint64_t value) {
  char text[24];
  snprintf(text, sizeof text, "%" PRIu64, value);
  return json_string(text);
}

json_t *optional_decimal(bool present, uint64_t value) { return present ? decimal(value) : json_null(); }

const char *text_of(json_t *value, size_t *len) {
  if (!json_is_string(value)) return NULL;
  *len = json_string_length(value);
  return json_string_value(value);
}

int u32_field(json_t *object, const char *name, uint32_t *out) {
  json_t *value = json_object_get(object, name);
  if (!json_is_integer(value) || json_integer_value(value) < 0 || json_integer_value(value) > UINT32_MAX) {
    fail("bad %s", name);
    return -1;
  }
  *out = (uint32_t)json_integer_value(value);
  return 0;
}

char *hex_of(const uint8_t *bytes, size_t len) {
  char *hex = malloc(2 * len + 1);
  for (size_t i = 0; i < len; i++) snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
  hex[2 * len] = 0;
  defer(OWN_MALLOC, hex, 0);
  return hex;
}

static int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int bytes_of_hex(const char *hex, uint8_t **out, size_t *len) {
  size_t n = strlen(hex);
  if (n % 2) {
    fail("odd-length hex %.60s", hex);
    return -1;
  }
  uint8_t *bytes = malloc(n / 2 + 1);
  defer(OWN_MALLOC, bytes, 0);
  for (size_t i = 0; i < n / 2; i++) {
    int high = nibble(hex[2 * i]), low = nibble(hex[2 * i + 1]);
    if (high < 0 || low < 0) {
      fail("bad hex %.60s", hex);
      return -1;
    }
    bytes[i] = (uint8_t)(high << 4 | low);
  }
  *out = bytes;
  *len = n / 2;
  return 0;
}

char *dump(json_t *value, size_t *len) {
  char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
  if (!text) abort();
  defer(OWN_MALLOC, text, 0);
  if (len) *len = strlen(text);
  return text;
}

int key_of(json_t *value, sr_key *out, sr_error **error) {
  const char *form;
  json_t *inner;
  if (!json_is_object(value) || json_object_size(value) != 1) {
    fail("bad key");
    return -1;
  }
  form = json_object_iter_key(json_object_iter(value));
  inner = json_object_iter_value(json_object_iter(value));
  memset(out, 0, sizeof *out);
  size_t len;
  const char *text = text_of(inner, &len);
  if (!strcmp(form, "utf8") && text) {
    *out = (sr_key){SR_KEY_BYTES, (const uint8_t *)text, len, 0};
    return 0;
  }
  if (!strcmp(form, "hex") && text) {
    uint8_t *bytes;
    if (bytes_of_hex(text, &bytes, &len)) return -1;
    *out = (sr_key){SR_KEY_BYTES, bytes, len, 0};
    return 0;
  }
  if (!strcmp(form, "u64") && text) {
    out->kind = SR_KEY_U64;
    *error = sr_parse_u64(text, len, &out->value);
    return *error ? 1 : 0;
  }
  if (!strcmp(form, "utf16") && json_is_array(inner)) {
    size_t count = json_array_size(inner);
    uint16_t *units = malloc(count * sizeof *units + 1);
    defer(OWN_MALLOC, units, 0);
    for (size_t i = 0; i < count; i++) {
      json_t *unit = json_array_get(inner, i);
      if (!json_is_integer(unit) || json_integer_value(unit) < 0 || json_integer_value(unit) > 0xffff) {
        fail("bad utf16 unit");
        return -1;
      }
      units[i] = (uint16_t)json_integer_value(unit);
    }
    uint8_t *bytes;
    *error = sr_utf8_from_utf16(units, count, &bytes, &len);
    if (*error) return 1;
    defer(OWN_SR_BYTES, bytes, len);
    *out = (sr_key){SR_KEY_BYTES, bytes, len, 0};
    return 0;
  }
  fail("unknown key form %s", form);
  return -1;
}

int keys_of(json_t *array, sr_key **out, size_t *count, sr_error **error) {
  if (!json_is_array(array)) {
    fail("keys is not an array");
    return -1;
  }
  *count = json_array_size(array);
  *out = malloc(*count * sizeof **out + 1);
  defer(OWN_MALLOC, *out, 0);
  for (size_t i = 0; i < *count; i++) {
    int rc = key_of(json_array_get(array, i), &(*out)[i], error);
    if (rc) return rc;
  }
  return 0;
}

static int valid_utf8(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    size_t extra;
    uint32_t point;
    if (c < 0x80) { i++; continue; }
    else if ((c & 0xe0) == 0xc0) { extra = 1; point = c & 0x1f; }
    else if ((c & 0xf0) == 0xe0) { extra = 2; point = c & 0x0f; }
    else if ((c & 0xf8) == 0xf0) { extra = 3; point = c & 0x07; }
    else return 0;
    if (i + extra >= n) return 0;
    for (size_t k = 1; k <= extra; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return 0;
      point = point << 6 | (s[i + k] & 0x3f);
    }
    if ((extra == 1 && point < 0x80) || (extra == 2 && point < 0x800) || (extra == 3 && point < 0x10000) ||
        point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff))
      return 0;
    i += extra + 1;
  }
  return 1;
}

json_t *key_form(json_t *source, json_t *key) {
  json_t *hex = json_object_get(key, "hex");
  int text_form = json_object_get(source, "utf8") || json_object_get(source, "utf16");
  if (hex && text_form) {
    uint8_t *bytes;
    size_t len;
    if (bytes_of_hex(json_string_value(hex), &bytes, &len)) return NULL;
    if (valid_utf8(bytes, len)) return json_pack("{s:s%}", "utf8", (const char *)bytes, len);
  }
  return json_incref(key);
}

/* ---- routers of the current file ---- */
struct cached {
  char *id;
  sr_router *router;
};
static struct cached *cache;
static size_t cache_count;

static int build(json_t *doc, sr_router **out, sr_error **error) {
  size_t len;
  char *text = dump(doc, &len);
  *error = sr_router_new(text, len, out);
  return *error ? 1 : 0;
}

int router_for(const char *id, sr_router **out, sr_error **error) {
  for (size_t i = 0; i < cache_count; i++)
    if (!strcmp(cache[i].id, id)) {
      *out = cache[i].router;
      return 0;
    }
  json_t *doc = json_object_get(topologies, id);
  if (!doc) {
    fail("unknown topology %s", id);
    return -1;
  }
  int rc = build(doc, out, error);
  if (rc == 0) {
    cache = realloc(cache, (cache_count + 1) * sizeof *cache);
    cache[cache_count++] = (struct cached){strdup(id), *out};
  }
  return rc;
}

int fresh_router(json_t *id, sr_router **out, sr_error **error) {
  json_t *doc = json_is_string(id) ? json_object_get(topologies, json_string_value(id)) : NULL;
  if (!doc) {
    fail("unknown topology");
    return -1;
  }
  int rc = build(doc, out, error);
  if (rc == 0) defer(OWN_ROUTER, *out, 0);
  return rc;
}

static void clear_cache(void) {
  for (size_t i = 0; i < cache_count; i++) {
    free(cache[i].id);
    sr_router_free(cache[i].router);
  }
  free(cache);
  cache = NULL;
  cache_count = 0;
}

#define ROUTER(field, router)                                                                                          \
  do {                                                                                                                 \
    const char *router_id_ = json_string_value(json_object_get(c, field));                                             \
    if (!router_id_) FAIL("%s is not a string", field);                                                                \
    sr_error *router_error_ = NULL;                                                                                    \
    int router_rc_ = router_for(router_id_, &(router), &router_error_);                                                \
    if (router_rc_ < 0) return NULL;                                                                                   \
    if (router_rc_ > 0) return error_json(router_error_);                                                              \
    json_t *table_ = json_object_get(c, "table");                                                                      \
    if (table_) {                                                                                                      \
      size_t table_len_;                                                                                               \
      const char *table_name_ = text_of(table_, &table_len_);                                                          \
      if (!table_name_) FAIL("table is not a string");                                                                 \
      TRY(sr_router_table((router), table_name_, table_len_, &(router)));                                              \
      defer(OWN_ROUTER, (router), 0);                                                                                  \
    }                                                                                                                  \
  } while (0)

static json_t *node_text(const char *node, size_t len) { return json_stringn(node, len); }

/* ---- the ops ---- */
static json_t *migration_op(json_t *c, const char *op) {
  sr_migration *migration = NULL;
  json_t *dictionary = json_object_get(c, "dictionary"), *before = json_object_get(c, "before"),
         *after = json_object_get(c, "after");
  sr_router *a, *b;
  if (dictionary && !before && !after) {
    ROUTER("dictionary", a);
    TRY(sr_migration_of_dictionary(a, &migration));
  } else if (!dictionary && before && after) {
    ROUTER("before", a);
    ROUTER("after", b);
    TRY(sr_migration_new(a, b, &migration));
  } else
    FAIL("a migration case names before and after, or dictionary");
  defer(OWN_MIGRATION, migration, 0);
  if (!strcmp(op, "migration")) {
    sr_key key;
    KEY(json_object_get(c, "key"), &key);
    json_t *moved = json_object_get(c, "moved");
    if (!json_is_boolean(moved)) FAIL("moved is not a boolean");
    char *moves, *reads;
    const char *target;
    size_t target_len;
    TRY(sr_migration_moves(migration, &key, &moves));
    json_t *moves_value = parsed(moves);
    defer(OWN_JSON, moves_value, 0);
    TRY(sr_migration_write_target(migration, &key, &target, &target_len));
    TRY(sr_migration_read_targets(migration, &key, json_is_true(moved), &reads));
    return json_pack("{s:O,s:s%,s:o}", "moves", moves_value, "write_target", target, target_len, "read_targets",
                     parsed(reads));
  }
  if (!strcmp(op, "migration_salted")) {
    sr_key key;
    json_t *source = json_object_get(c, "key");
    KEY(source, &key);
    uint32_t salt;
    if (u32_field(c, "salt", &salt)) return NULL;
    char *reads, *write;
    TRY(sr_migration_read_keys(migration, &key, &reads));
    json_t *read_keys = parsed(reads), *forms = json_array();
    defer(OWN_JSON, read_keys, 0);
    defer(OWN_JSON, forms, 0);
    size_t i;
    json_t *each;
    json_array_foreach(read_keys, i, each) json_array_append_new(forms, key_form(source, each));
    TRY(sr_migration_write_key(migration, &key, salt, &write));
    json_t *written = parsed(write);
    defer(OWN_JSON, written, 0);
    return json_pack("{s:O,s:o}", "read_keys", forms, "write_key", key_form(source, written));
  }
  char *out;
  if (!strcmp(op, "migration_scan")) {
    TRY(sr_migration_scan_nodes(migration, &out));
    return json_pack("{s:o}", "nodes", parsed(out));
  }
  if (!strcmp(op, "migration_shards")) {
    TRY(sr_migration_moving_shards(migration, &out));
    return json_pack("{s:o}", "shards", parsed(out));
  }
  sr_key *keys;
  size_t count;
  KEYS(json_object_get(c, "keys"), &keys, &count);
  TRY(sr_migration_moving_keys(migration, keys, count, &out));
  return json_pack("{s:o}", "indices", parsed(out));
}

static json_t *route_many(sr_router *router, sr_key *keys, size_t count) {
  uint32_t *shards = malloc(count * sizeof *shards + 1);
  defer(OWN_MALLOC, shards, 0);
  size_t bytes_keys = 0, u64_keys = 0, total = 0;
  for (size_t i = 0; i < count; i++) {
    if (keys[i].kind == SR_KEY_BYTES) bytes_keys++, total += keys[i].len;
    else u64_keys++;
  }
  /* Each batch form of the ABI in turn: packed bytes, u64s, or mixed keys. */
  if (bytes_keys == count) {
    uint8_t *data = malloc(total + 1);
    uint32_t *offsets = malloc((count + 1) * sizeof *offsets);
    defer(OWN_MALLOC, data, 0);
    defer(OWN_MALLOC, offsets, 0);
    offsets[0] = 0;
    for (size_t i = 0; i < count; i++) {
      if (keys[i].len) memcpy(data + offsets[i], keys[i].bytes, keys[i].len);
      offsets[i + 1] = offsets[i] + (uint32_t)keys[i].len;
    }
    TRY(sr_router_route_packed(router, data, total, offsets, count + 1, shards, count));
  } else if (u64_keys == count) {
    uint64_t *values = malloc(count * sizeof *values);
    defer(OWN_MALLOC, values, 0);
    for (size_t i = 0; i < count; i++) values[i] = keys[i].value;
    TRY(sr_router_route_u64s(router, values, count, shards, count));
  } else {
    TRY(sr_router_route_many(router, keys, count, shards, count));
  }
  json_t *list = json_array();
  for (size_t i = 0; i < count; i++) json_array_append_new(list, json_integer(shards[i]));
  return json_pack("{s:o}", "shards", list);
}

static json_t *evaluate(json_t *c) {
  const char *op = json_string_value(json_object_get(c, "op"));
  if (!op) FAIL("a case has no op");
  sr_router *router = NULL;
  sr_key key;
  sr_key *keys;
  size_t count, len;
  char *out;
  const char *text;
  uint32_t shard, number;

  if (!strcmp(op, "load") || !strcmp(op, "apply") || !strcmp(op, "encode_dictionary")) {
    json_t *raw = json_object_get(c, "topology_json");
    if (raw && !json_is_string(raw)) FAIL("topology_json is not a string");
    if (raw) text = text_of(raw, &len);
    else {
      json_t *doc = json_object_get(topologies, json_string_value(json_object_get(c, "topology")));
      if (!doc) FAIL("unknown topology");
      text = dump(doc, &len);
    }
    if (!strcmp(op, "load")) {
      uint64_t epoch;
      TRY(sr_router_new(text, len, &router));
      defer(OWN_ROUTER, router, 0);
      TRY(sr_router_epoch(router, &epoch));
      TRY(sr_router_to_json(router, &out));
      json_t *canonical = json_string(out);
      sr_string_free(out);
      return json_pack("{s:o,s:o}", "epoch", decimal(epoch), "to_json", canonical);
    }
    if (!strcmp(op, "apply")) {
      size_t operation_len;
      json_t *operation = json_object_get(c, "operation");
      if (!operation) FAIL("case has no operation");
      char *operation_text = dump(operation, &operation_len);
      TRY(sr_apply(text, len, operation_text, operation_len, &out));
      return json_pack("{s:o}", "result", parsed(out));
    }
    uint8_t *bytes;
    TRY(sr_encode_dictionary(text, len, &bytes, &len));
    defer(OWN_SR_BYTES, bytes, len);
    return json_pack("{s:s}", "hex", hex_of(bytes, len));
  }
  if (!strcmp(op, "route") || !strcmp(op, "replicas")) {
    ROUTER("topology", router);
    KEY(json_object_get(c, "key"), &key);
    if (!strcmp(op, "route")) {
      const char *node;
      size_t node_len;
      if (key.kind == SR_KEY_U64) {
        TRY(sr_router_route_u64(router, key.value, &shard));
        TRY(sr_router_node_u64(router, key.value, &node, &node_len));
      } else {
        TRY(sr_router_route(router, key.bytes, key.len, &shard));
        TRY(sr_router_node(router, key.bytes, key.len, &node, &node_len));
      }
      return json_pack("{s:i,s:o}", "shard", (json_int_t)shard, "node", node_text(node, node_len));
    }
    if (u32_field(c, "count", &number)) return NULL;
    TRY(sr_router_replicas(router, &key, number, &out));
    return json_pack("{s:o}", "nodes", parsed(out));
  }
  if (!strcmp(op, "route_many")) {
    ROUTER("topology", router);
    KEYS(json_object_get(c, "keys"), &keys, &count);
    return route_many(router, keys, count);
  }
  if (!strcmp(op, "hash_key")) {
    json_t *spec = json_object_get(c, "hashing");
    char *spec_text = spec ? dump(spec, &len) : NULL;
    sr_error *key_error = NULL;
    int rc = key_of(json_object_get(c, "key"), &key, &key_error);
    if (rc < 0) return NULL;
    if (rc > 0) {
      /* The spec's error comes first, as in every runner. */
      uint64_t ignored;
      sr_key zero = {SR_KEY_U64, NULL, 0, 0};
      sr_error *spec_error = sr_hash_key(&zero, spec_text, spec ? len : 0, &ignored);
      if (spec_error) {
        sr_error_free(key_error);
        return error_json(spec_error);
      }
      return error_json(key_error);
    }
    uint64_t hash;
    TRY(sr_hash_key(&key, spec_text, spec ? len : 0, &hash));
    return json_pack("{s:o}", "hash", decimal(hash));
  }
  if (!strcmp(op, "jump")) {
    uint64_t hash;
    if (u32_field(c, "buckets", &number)) return NULL;
    text = text_of(json_object_get(c, "hash"), &len);
    if (!text) FAIL("hash is not a string");
    TRY(sr_parse_u64(text, len, &hash));
    TRY(sr_jump(hash, number, &shard));
    return json_pack("{s:i}", "shard", (json_int_t)shard);
  }
  if (!strcmp(op, "scatter")) {
    ROUTER("topology", router);
    json_t *zone = json_object_get(c, "zone");
    size_t zone_len = 0;
    const char *zone_text = NULL;
    if (!json_is_null(zone) && !(zone_text = text_of(zone, &zone_len))) FAIL("bad zone");
    if (u32_field(c, "turn", &number)) return NULL;
    size_t read_len;
    const char *read_from = text_of(json_object_get(c, "read_from"), &read_len);
    const char *scope = json_string_value(json_object_get(c, "scope"));
    if (!read_from || !scope) FAIL("bad read_from or scope");
    sr_key start, end, *end_pointer = NULL;
    uint32_t scope_kind;
    keys = NULL;
    count = 0;
    if (!strcmp(scope, "every")) scope_kind = SR_SCOPE_EVERY;
    else if (!strcmp(scope, "range")) {
      scope_kind = SR_SCOPE_RANGE;
      KEY(json_object_get(c, "start"), &start);
      if (!json_is_null(json_object_get(c, "end"))) {
        KEY(json_object_get(c, "end"), &end);
        end_pointer = &end;
      }
    } else if (!strcmp(scope, "keys")) {
      scope_kind = SR_SCOPE_KEYS;
      KEYS(json_object_get(c, "keys"), &keys, &count);
    } else
      FAIL("unknown scope %s", scope);
    TRY(sr_router_scatter(router, scope_kind, scope_kind == SR_SCOPE_RANGE ? &start : NULL, end_pointer, keys, count,
                          read_from, read_len, number, zone_text, zone_len, &out));
    return parsed(out);
  }
  if (!strcmp(op, "shards_for_range")) {
    ROUTER("topology", router);
    sr_key end, *end_pointer = NULL;
    KEY(json_object_get(c, "start"), &key);
    if (!json_is_null(json_object_get(c, "end"))) {
      KEY(json_object_get(c, "end"), &end);
      end_pointer = &end;
    }
    TRY(sr_router_shards_for_range(router, &key, end_pointer, &out));
    return json_pack("{s:o}", "shards", parsed(out));
  }
  if (!strcmp(op, "decode_id")) {
    ROUTER("topology", router);
    uint64_t id;
    text = text_of(json_object_get(c, "id"), &len);
    if (!text) FAIL("id is not a string");
    TRY(sr_parse_u64(text, len, &id));
    TRY(sr_router_decode_id(router, id, &out));
    return parsed(out);
  }
  if (!strcmp(op, "locate")) {
    ROUTER("topology", router);
    KEY(json_object_get(c, "key"), &key);
    TRY(sr_router_locate(router, &key, &out));
    return parsed(out);
  }
  if (!strcmp(op, "salted_key") || !strcmp(op, "salted_keys")) {
    ROUTER("topology", router);
    json_t *source = json_object_get(c, "key");
    if (!strcmp(op, "salted_key")) {
      if (u32_field(c, "salt", &number)) return NULL;
      KEY(source, &key);
      TRY(sr_router_salted_key(router, &key, number, &out));
      json_t *salted = parsed(out);
      defer(OWN_JSON, salted, 0);
      return json_pack("{s:o}", "key", key_form(source, salted));
    }
    KEY(source, &key);
    TRY(sr_router_salted_keys(router, &key, &out));
    json_t *pairs = parsed(out), *list = json_array(), *pair;
    defer(OWN_JSON, pairs, 0);
    size_t i;
    json_array_foreach(pairs, i, pair) json_array_append_new(
        list, json_pack("[o,O]", key_form(source, json_array_get(pair, 0)), json_array_get(pair, 1)));
    return json_pack("{s:o}", "keys", list);
  }
  if (!strcmp(op, "modulo_moves")) {
    uint32_t old;
    if (u32_field(c, "old", &old) || u32_field(c, "new", &number)) return NULL;
    TRY(sr_modulo_moves(old, number, &out));
    return json_pack("{s:o}", "moves", parsed(out));
  }
  if (!strcmp(op, "route_read") || !strcmp(op, "route_write") || !strcmp(op, "read_replica")) {
    ROUTER("topology", router);
    KEY(json_object_get(c, "key"), &key);
    const char *node;
    size_t node_len;
    if (!strcmp(op, "route_read")) {
      TRY(sr_router_route_read(router, &key, &node, &node_len));
      return json_pack("{s:o}", "node", node_text(node, node_len));
    }
    if (!strcmp(op, "read_replica")) {
      if (u32_field(c, "turn", &number)) return NULL;
      TRY(sr_router_read_replica(router, &key, number, &node, &node_len));
      return json_pack("{s:o}", "node", node_text(node, node_len));
    }
    TRY(sr_router_route_write(router, &key, &out));
    return json_pack("{s:o}", "nodes", parsed(out));
  }
  if (!strcmp(op, "read_near")) {
    ROUTER("topology", router);
    KEY(json_object_get(c, "key"), &key);
    json_t *zone = json_object_get(c, "zone");
    size_t zone_len = 0;
    const char *zone_text = NULL, *node;
    size_t node_len;
    if (!json_is_null(zone) && !(zone_text = text_of(zone, &zone_len))) FAIL("zone is neither a string nor null");
    TRY(sr_router_read_near(router, &key, zone_text, zone_len, &node, &node_len));
    return json_pack("{s:o}", "node", node_text(node, node_len));
  }
  if (!strcmp(op, "stats") || !strcmp(op, "same_slot") || !strcmp(op, "group_by_node")) {
    ROUTER("topology", router);
    KEYS(json_object_get(c, "keys"), &keys, &count);
    if (!strcmp(op, "same_slot")) {
      TRY(sr_router_same_slot(router, keys, count, &shard));
      return json_pack("{s:i}", "shard", (json_int_t)shard);
    }
    if (!strcmp(op, "stats")) {
      TRY(sr_router_stats(router, keys, count, &out));
      return json_pack("{s:o}", "result", parsed(out));
    }
    TRY(sr_router_group_by_node(router, keys, count, &out));
    return json_pack("{s:o}", "groups", parsed(out));
  }
  if (!strcmp(op, "moved") || !strcmp(op, "ask")) {
    ROUTER("topology", router);
    if (u32_field(c, "slot", &number)) return NULL;
    text = text_of(json_object_get(c, "address"), &len);
    if (!text) FAIL("address is not a string");
    if (!strcmp(op, "moved")) {
      sr_router *next;
      TRY(sr_router_moved(router, number, text, len, &next));
      defer(OWN_ROUTER, next, 0);
      TRY(sr_router_to_json(next, &out));
      json_t *canonical = json_string(out);
      sr_string_free(out);
      return json_pack("{s:o}", "to_json", canonical);
    }
    size_t offset, address_len;
    TRY(sr_router_ask(router, number, text, len, &offset, &address_len));
    if (offset > len || address_len > len - offset) FAIL("ask answered a span outside its argument");
    return json_pack("{s:s%}", "address", text + offset, address_len);
  }
  if (!strcmp(op, "parse_redirect")) {
    text = text_of(json_object_get(c, "line"), &len);
    if (!text) FAIL("line is not a string");
    TRY(sr_parse_redirect(text, len, &out));
    return parsed(out);
  }
  if (!strncmp(op, "migration", 9) && strcmp(op, "migration_session")) return migration_op(c, op);
  if (!strcmp(op, "index_route")) {
    ROUTER("topology", router);
    KEY(json_object_get(c, "key"), &key);
    text = text_of(json_object_get(c, "index"), &len);
    if (!text) FAIL("index is not a string");
    sr_router *index;
    TRY(sr_router_index(router, text, len, &index));
    defer(OWN_ROUTER, index, 0);
    const char *node;
    size_t node_len;
    if (key.kind == SR_KEY_U64) {
      TRY(sr_router_route_u64(index, key.value, &shard));
      TRY(sr_router_node_u64(index, key.value, &node, &node_len));
    } else {
      TRY(sr_router_route(index, key.bytes, key.len, &shard));
      TRY(sr_router_node(index, key.bytes, key.len, &node, &node_len));
    }
    return json_pack("{s:i,s:o}", "shard", (json_int_t)shard, "node", node_text(node, node_len));
  }
  if (!strcmp(op, "index_write_plan")) {
    ROUTER("topology", router);
    KEY(json_object_get(c, "key"), &key);
    json_t *terms = json_object_get(c, "terms");
    if (!json_is_array(terms)) FAIL("terms is not an array");
    count = json_array_size(terms);
    sr_term *pairs = malloc(count * sizeof *pairs + 1);
    defer(OWN_MALLOC, pairs, 0);
    for (size_t i = 0; i < count; i++) {
      json_t *pair = json_array_get(terms, i);
      pairs[i].name = text_of(json_array_get(pair, 0), &pairs[i].name_len);
      if (!pairs[i].name) FAIL("a term pair has no name");
      KEY(json_array_get(pair, 1), &pairs[i].term);
    }
    TRY(sr_router_index_write_plan(router, &key, pairs, count, &out));
    return parsed(out);
  }
  if (!strcmp(op, "shard_owner")) {
    ROUTER("topology", router);
    if (u32_field(c, "shard", &number)) return NULL;
    const char *node;
    size_t node_len;
    TRY(sr_router_shard_owner(router, number, &node, &node_len));
    return json_pack("{s:o}", "node", node_text(node, node_len));
  }
  if (!strcmp(op, "replace")) {
    sr_router *next, *replaced;
    uint64_t epoch;
    ROUTER("topology", router);
    ROUTER("next", next);
    TRY(sr_router_replace(router, next, &replaced));
    defer(OWN_ROUTER, replaced, 0);
    TRY(sr_router_epoch(replaced, &epoch));
    return json_pack("{s:o}", "epoch", decimal(epoch));
  }
  if (!strcmp(op, "diff")) {
    sr_router *old, *new;
    ROUTER("old", old);
    ROUTER("new", new);
    KEYS(json_object_get(c, "keys"), &keys, &count);
    TRY(sr_diff(old, new, keys, count, json_is_true(json_object_get(c, "per_key")), &out));
    return json_pack("{s:o}", "result", parsed(out));
  }
  if (!strcmp(op, "decode_dictionary")) {
    uint8_t *bytes;
    const char *hex = json_string_value(json_object_get(c, "hex"));
    if (!hex) FAIL("hex is not a string");
    if (bytes_of_hex(hex, &bytes, &len)) return NULL;
    TRY(sr_decode_dictionary(bytes, len, &out));
    json_t *canonical = json_string(out);
    sr_string_free(out);
    return json_pack("{s:o}", "to_json", canonical);
  }
  if (!strcmp(op, "redis_session")) return redis_session(c);
  if (!strcmp(op, "topology_follower")) return topology_follower(c);
  if (!strcmp(op, "migration_session")) return migration_session(c);
  if (!strcmp(op, "misplaced")) return misplaced(c);
  if (!strcmp(op, "session_source")) return session_source(c);
  FAIL("unknown op %s", op);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "conformance/vectors";
  const char *count_file = argc > 2 ? argv[2] : "target/conformance/c.json";
  const char *filter = getenv("SHARDROUTE_VECTORS_FILTER");
  if (!filter) filter = "";
  if (strcmp(sr_version(), SHARDROUTE_VERSION)) {
    fprintf(stderr, "libshardroute %s under a header of %s\n", sr_version(), SHARDROUTE_VERSION);
    return 2;
  }
  DIR *listing = opendir(dir);
  if (!listing) {
    fprintf(stderr, "cannot open %s: %s\n", dir, strerror(errno));
    return 2;
  }
  char **names = NULL;
  size_t name_count = 0;
  struct dirent *entry;
  while ((entry = readdir(listing))) {
    size_t n = strlen(entry->d_name);
    if (n > 5 && !strcmp(entry->d_name + n - 5, ".json")) {
      names = realloc(names, (name_count + 1) * sizeof *names);
      names[name_count++] = strdup(entry->d_name);
    }
  }
  closedir(listing);
  qsort(names, name_count, sizeof *names, by_name);
  unsigned long passed = 0, failed = 0;
  for (size_t f = 0; f < name_count; f++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[f]);
    json_error_t problem;
    json_t *file = json_load_file(path, JSON_ALLOW_NUL, &problem);
    if (!file || strcmp(json_string_value(json_object_get(file, "format")) ?: "", "shardroute-vectors/1")) {
      fprintf(stderr, "FAILED %s: %s\n", path, file ? "unknown vector format" : problem.text);
      failed++;
      json_decref(file);
      free(names[f]);
      continue;
    }
    topologies = json_object_get(file, "topologies");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(file, "cases"), i, c) {
      const char *name = json_string_value(json_object_get(c, "name"));
      if (!name) name = "<unnamed>";
      if (!strstr(name, filter)) continue;
      reason[0] = 0;
      json_t *actual = evaluate(c);
      json_t *expect = json_object_get(c, "expect");
      if (actual && json_equal(actual, expect)) passed++;
      else {
        failed++;
        if (actual) {
          char *got = json_dumps(actual, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
          char *want = json_dumps(expect, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
          fprintf(stderr, "FAILED %s: expected %.400s, got %.400s\n", name, want, got);
          free(got);
          free(want);
        } else
          fprintf(stderr, "FAILED %s: %s\n", name, reason[0] ? reason : "no result");
      }
      json_decref(actual);
      release_all();
    }
    clear_cache();
    json_decref(file);
    free(names[f]);
  }
  free(names);
  free(deferred);
  printf("conformance c: %lu passed, %lu failed, 0 skipped\n", passed, failed);
  FILE *counts = fopen(count_file, "w");
  if (!counts) {
    fprintf(stderr, "cannot write %s: %s\n", count_file, strerror(errno));
    return 2;
  }
  fprintf(counts, "{\"runner\": \"c\", \"passed\": %lu, \"failed\": %lu, \"skipped\": 0}\n", passed, failed);
  fclose(counts);
  return failed ? 1 : 0;
}
