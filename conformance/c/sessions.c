/* The C runner's session scenarios (conformance/README.md, "Session scenarios"): each
 * step is one ABI call on the session handle; the session decides, the runner writes. */
#include "runner.h"

/* A step's time: the integer field `name`, 0 when absent; -1 when malformed. */
static int now_of(json_t *step, const char *name, uint64_t *now) {
  json_t *value = json_object_get(step, name);
  *now = 0;
  if (!value) return 0;
  if (!json_is_integer(value) || json_integer_value(value) < 0) {
    fail("%s is not an integer", name);
    return -1;
  }
  *now = (uint64_t)json_integer_value(value);
  return 0;
}

/* A decimal string field as a u64; -1 when malformed. */
static int decimal_field(json_t *step, const char *name, uint64_t *out) {
  const char *text = json_string_value(json_object_get(step, name));
  char *end;
  if (!text || !*text || *text == '-') {
    fail("bad %s", name);
    return -1;
  }
  errno = 0;
  *out = strtoull(text, &end, 10);
  if (*end || errno) {
    fail("bad %s", name);
    return -1;
  }
  return 0;
}

/* The step's result when a call fails: {"error": code}. */
#define STEP(call)                                                                                                     \
  do {                                                                                                                 \
    sr_error *step_error_ = (call);                                                                                    \
    if (step_error_) {                                                                                                 \
      result = error_json(step_error_);                                                                                \
      goto append;                                                                                                     \
    }                                                                                                                  \
  } while (0)
/* A step's key (or keys): the core's refusal is the step's result. */
#define STEP_KEY(value, key)                                                                                           \
  do {                                                                                                                 \
    sr_error *key_error_ = NULL;                                                                                       \
    int key_rc_ = key_of((value), (key), &key_error_);                                                                 \
    if (key_rc_ < 0) goto malformed;                                                                                   \
    if (key_rc_ > 0) {                                                                                                 \
      result = error_json(key_error_);                                                                                 \
      goto append;                                                                                                     \
    }                                                                                                                  \
  } while (0)
#define STEP_KEYS(value, keys, count)                                                                                  \
  do {                                                                                                                 \
    sr_error *key_error_ = NULL;                                                                                       \
    int key_rc_ = keys_of((value), (keys), (count), &key_error_);                                                      \
    if (key_rc_ < 0) goto malformed;                                                                                   \
    if (key_rc_ > 0) {                                                                                                 \
      result = error_json(key_error_);                                                                                 \
      goto append;                                                                                                     \
    }                                                                                                                  \
  } while (0)
#define MALFORMED(...)                                                                                                 \
  do {                                                                                                                 \
    fail(__VA_ARGS__);                                                                                                 \
    goto malformed;                                                                                                    \
  } while (0)

/* A list of texts as sr_str (deferred free). */
static sr_str *strs_of(json_t *array, size_t *count) {
  if (!json_is_array(array)) return NULL;
  *count = json_array_size(array);
  sr_str *items = malloc(*count * sizeof *items + 1);
  defer(OWN_MALLOC, items, 0);
  for (size_t i = 0; i < *count; i++) {
    items[i].ptr = text_of(json_array_get(array, i), &items[i].len);
    if (!items[i].ptr) return NULL;
  }
  return items;
}

json_t *redis_session(json_t *c) {
  size_t seed_count, len;
  sr_str *seeds = strs_of(json_object_get(c, "seeds"), &seed_count);
  if (!seeds) FAIL("seeds is not an array of strings");
  json_t *config = json_object_get(c, "config");
  char *config_text = config ? dump(config, &len) : NULL;
  sr_cluster_session *session;
  TRY(sr_cluster_session_new(seeds, seed_count, config_text, config ? len : 0, &session));
  sr_command **commands = NULL;
  size_t command_count = 0;
  json_t *results = json_array(), *step;
  size_t i;
  json_array_foreach(json_object_get(c, "steps"), i, step) {
    json_t *result = NULL;
    uint64_t now;
    bool present;
    uint64_t deadline;
    uint32_t number, other;
    char *out;
    if (now_of(step, "now_ms", &now)) goto malformed;
    const char *call = json_string_value(json_object_get(step, "call"));
    if (!call) MALFORMED("a step has no call");
    sr_command *command = NULL;
    json_t *picked = json_object_get(step, "command");
    if (picked) {
      if (!json_is_integer(picked) || (size_t)json_integer_value(picked) >= command_count)
        MALFORMED("%s: no command %lld", call, (long long)json_integer_value(picked));
      command = commands[json_integer_value(picked)];
    } else if (command_count)
      command = commands[command_count - 1];
    const char *address = text_of(json_object_get(step, "address"), &len);
    size_t address_len = address ? len : 0;
    json_t *readonly = json_object_get(step, "readonly");
    if (!strcmp(call, "command") || !strcmp(call, "plan")) {
      sr_key *keys;
      size_t count, access_len;
      STEP_KEYS(json_object_get(step, "keys"), &keys, &count);
      const char *access = text_of(json_object_get(step, "access"), &access_len);
      if (!access) MALFORMED("access is not a string");
      if (!strcmp(call, "plan")) {
        STEP(sr_cluster_session_plan(session, keys, count, access, access_len, &out));
        result = parsed(out);
      } else {
        sr_command *begun;
        STEP(sr_cluster_session_command(session, keys, count, access, access_len, now, &begun, &number));
        commands = realloc(commands, (command_count + 1) * sizeof *commands);
        commands[command_count++] = begun;
        result = json_pack("{s:i}", "slot", (json_int_t)number);
      }
    } else if (!strcmp(call, "poll") || !strcmp(call, "succeeded") || !strcmp(call, "stalled") ||
               !strcmp(call, "on_deadline") || !strcmp(call, "failed") || !strcmp(call, "unreachable") ||
               !strcmp(call, "deadline")) {
      if (!command) MALFORMED("%s: no command begun", call);
      if (!strcmp(call, "poll")) STEP(sr_cluster_session_poll(session, command, now, &out));
      else if (!strcmp(call, "succeeded")) STEP(sr_cluster_session_succeeded(session, command, now, &out));
      else if (!strcmp(call, "stalled")) STEP(sr_cluster_session_stalled(session, command, now, &out));
      else if (!strcmp(call, "on_deadline")) STEP(sr_cluster_session_on_deadline(session, command, now, &out));
      else if (!strcmp(call, "failed")) {
        size_t text_len, name_count;
        const char *text = text_of(json_object_get(step, "text"), &text_len);
        sr_str *names = strs_of(json_object_get(step, "names"), &name_count);
        if (!text || !names) MALFORMED("bad text or names");
        STEP(sr_cluster_session_failed(session, command, text, text_len, names, name_count, now, &out));
      } else if (!strcmp(call, "unreachable")) {
        size_t why_len;
        const char *why = text_of(json_object_get(step, "why"), &why_len);
        if (!why) MALFORMED("why is not a string");
        STEP(sr_cluster_session_unreachable(session, command, why, why_len, now, &out));
      } else {
        STEP(sr_cluster_session_deadline(session, command, &present, &deadline));
        result = json_pack("{s:o}", "deadline_ms", optional_decimal(present, deadline));
        goto append;
      }
      result = parsed(out);
    } else if (!strcmp(call, "refresh_sent")) {
      if (!address) MALFORMED("address is not a string");
      STEP(sr_cluster_session_refresh_sent(session, address, address_len, now, &present, &deadline));
      result = json_pack("{s:o}", "deadline_ms", optional_decimal(present, deadline));
    } else if (!strcmp(call, "next_deadline")) {
      STEP(sr_cluster_session_next_deadline(session, &present, &deadline));
      result = json_pack("{s:o}", "deadline_ms", optional_decimal(present, deadline));
    } else if (!strcmp(call, "batch_deadline")) {
      STEP(sr_cluster_session_batch_deadline(session, now, &present, &deadline));
      result = json_pack("{s:o}", "deadline_ms", optional_decimal(present, deadline));
    } else if (!strncmp(call, "pipeline_", 9)) {
      if (!address || !json_is_boolean(readonly)) MALFORMED("bad address or readonly");
      bool ro = json_is_true(readonly);
      if (!strcmp(call, "pipeline_queued")) {
        STEP(sr_cluster_session_pipeline_queued(session, address, address_len, ro, &number));
        result = json_pack("{s:i}", "queued", (json_int_t)number);
      } else if (!strcmp(call, "pipeline_take")) {
        STEP(sr_cluster_session_pipeline_take(session, address, address_len, ro, &number));
        result = json_pack("{s:i}", "write", (json_int_t)number);
      } else if (!strcmp(call, "pipeline_done")) {
        STEP(sr_cluster_session_pipeline_done(session, address, address_len, ro, &number));
        result = json_pack("{s:i}", "write", (json_int_t)number);
      } else if (!strcmp(call, "pipeline_withdrawn")) {
        if (u32_field(step, "count", &number)) goto malformed;
        STEP(sr_cluster_session_pipeline_withdrawn(session, address, address_len, ro, number));
        result = json_pack("{s:b}", "ok", 1);
      } else if (!strcmp(call, "pipeline_pending")) {
        STEP(sr_cluster_session_pipeline_pending(session, address, address_len, ro, &number, &other));
        result = json_pack("{s:i,s:i}", "queued", (json_int_t)number, "writes", (json_int_t)other);
      } else
        MALFORMED("unknown session call %s", call);
    } else if (!strcmp(call, "timeout")) {
      STEP(sr_cluster_session_timeout(session, now, &present));
      result = json_pack("{s:b}", "timed_out", present);
    } else if (!strcmp(call, "refreshed")) {
      json_t *reply = json_object_get(step, "reply");
      if (!reply) MALFORMED("refreshed has no reply");
      char *reply_text = dump(reply, &len);
      STEP(sr_cluster_session_refreshed(session, reply_text, len, now));
      result = json_pack("{s:b}", "ok", 1);
    } else if (!strcmp(call, "refresh_failed")) {
      STEP(sr_cluster_session_refresh_failed(session, now));
      result = json_pack("{s:b}", "ok", 1);
    } else if (!strcmp(call, "candidates")) {
      STEP(sr_cluster_session_candidates(session, &out));
      result = json_pack("{s:o}", "addresses", parsed(out));
    } else if (!strcmp(call, "stats")) {
      STEP(sr_cluster_session_stats(session, &out));
      result = parsed(out);
    } else
      MALFORMED("unknown session call %s", call);
  append:
    if (!result) goto malformed;
    json_array_append_new(results, result);
  }
  for (size_t k = 0; k < command_count; k++) sr_command_free(commands[k]);
  free(commands);
  sr_cluster_session_free(session);
  return json_pack("{s:o}", "results", results);
malformed:
  for (size_t k = 0; k < command_count; k++) sr_command_free(commands[k]);
  free(commands);
  sr_cluster_session_free(session);
  json_decref(results);
  return NULL;
}

/* A step's document: a topology id or raw text (deferred free). */
static const char *document_of(json_t *step, size_t *len) {
  json_t *id = json_object_get(step, "document"), *raw = json_object_get(step, "document_json");
  if (id && !raw && json_is_string(id)) {
    json_t *doc = json_object_get(topologies, json_string_value(id));
    return doc ? dump(doc, len) : NULL;
  }
  if (raw && !id) return text_of(raw, len);
  return NULL;
}

json_t *topology_follower(json_t *c) {
  size_t len;
  json_t *config = json_object_get(c, "config");
  char *config_text = config ? dump(config, &len) : NULL;
  sr_follower *follower;
  TRY(sr_follower_new(config_text, config ? len : 0, &follower));
  json_t *results = json_array(), *step;
  size_t i;
  json_array_foreach(json_object_get(c, "steps"), i, step) {
    json_t *result = NULL;
    uint64_t now, value;
    bool present;
    char *out;
    if (now_of(step, "now_ms", &now)) goto malformed;
    const char *call = json_string_value(json_object_get(step, "call"));
    if (!call) MALFORMED("a step has no call");
    json_t *revision = json_object_get(step, "revision");
    if (!strcmp(call, "offer") || !strcmp(call, "publish")) {
      const char *document = document_of(step, &len);
      if (!document) MALFORMED("a step names document (an id) or document_json (text)");
      if (!strcmp(call, "publish")) STEP(sr_follower_publish(follower, document, len, &out));
      else {
        if (!json_is_integer(revision)) MALFORMED("revision is not an integer");
        STEP(sr_follower_offer(follower, document, len, (uint64_t)json_integer_value(revision), now, &out));
      }
      result = parsed(out);
    } else if (!strcmp(call, "offer_dictionary") || !strcmp(call, "offer_bytes")) {
      uint8_t *bytes;
      const char *hex = json_string_value(json_object_get(step, "hex"));
      if (!hex || !json_is_integer(revision)) MALFORMED("bad hex or revision");
      if (bytes_of_hex(hex, &bytes, &len)) goto malformed;
      if (!strcmp(call, "offer_bytes"))
        STEP(sr_follower_offer_bytes(follower, bytes, len, (uint64_t)json_integer_value(revision), now, &out));
      else
        STEP(sr_follower_offer_dictionary(follower, bytes, len, (uint64_t)json_integer_value(revision), now, &out));
      result = parsed(out);
    } else if (!strcmp(call, "disconnected")) {
      STEP(sr_follower_disconnected(follower, now, &value));
      result = json_pack("{s:o}", "reconnect_at_ms", decimal(value));
    } else if (!strcmp(call, "connected")) {
      STEP(sr_follower_connected(follower));
      result = json_pack("{s:b}", "ok", 1);
    } else if (!strcmp(call, "state")) {
      sr_router *router;
      uint64_t epoch = 0;
      STEP(sr_follower_router(follower, &router));
      if (router) {
        sr_error *error = sr_router_epoch(router, &epoch);
        sr_router_free(router);
        if (error) {
          result = error_json(error);
          goto append;
        }
      }
      STEP(sr_follower_revision(follower, &present, &value));
      result = json_pack("{s:o,s:o}", "epoch", optional_decimal(router != NULL, epoch), "revision",
                         optional_decimal(present, value));
    } else if (!strcmp(call, "stats")) {
      STEP(sr_follower_stats(follower, &out));
      result = parsed(out);
    } else if (!strcmp(call, "next_deadline")) {
      STEP(sr_follower_next_deadline(follower, &present, &value));
      result = json_pack("{s:o}", "deadline_ms", optional_decimal(present, value));
    } else
      MALFORMED("unknown follower call %s", call);
  append:
    if (!result) goto malformed;
    json_array_append_new(results, result);
  }
  sr_follower_free(follower);
  return json_pack("{s:o}", "results", results);
malformed:
  sr_follower_free(follower);
  json_decref(results);
  return NULL;
}

json_t *misplaced(json_t *c) {
  sr_router *router;
  sr_error *error = NULL;
  int rc = fresh_router(json_object_get(c, "topology"), &router, &error);
  if (rc < 0) return NULL;
  if (rc > 0) return error_json(error);
  json_t *node = json_object_get(c, "node"), *shard = json_object_get(c, "shard");
  size_t node_len = 0, count;
  const char *node_text = NULL;
  uint32_t shard_number = 0;
  if (node && !shard) {
    if (!(node_text = text_of(node, &node_len))) FAIL("node is not a string");
  } else if (shard && !node) {
    if (u32_field(c, "shard", &shard_number)) return NULL;
  } else
    FAIL("a misplaced case names node or shard");
  sr_key *keys;
  KEYS(json_object_get(c, "keys"), &keys, &count);
  char *out;
  TRY(sr_misplaced(router, node_text, node_len, shard_number, keys, count, &out));
  return parsed(out);
}

json_t *migration_session(json_t *c) {
  sr_migration_session *session = NULL;
  sr_error *error = NULL;
  int rc;
  if (json_object_get(c, "topology")) {
    sr_router *topology, *previous = NULL, *held = NULL;
    if ((rc = fresh_router(json_object_get(c, "topology"), &topology, &error))) return rc < 0 ? NULL : error_json(error);
    if (json_object_get(c, "previous") &&
        (rc = fresh_router(json_object_get(c, "previous"), &previous, &error)))
      return rc < 0 ? NULL : error_json(error);
    if (json_object_get(c, "held") && (rc = fresh_router(json_object_get(c, "held"), &held, &error)))
      return rc < 0 ? NULL : error_json(error);
    TRY(sr_migration_session_of_topology(topology, previous, held, &session));
  } else {
    json_t *before = json_object_get(c, "before"), *after = json_object_get(c, "after"),
           *dictionary = json_object_get(c, "dictionary");
    sr_migration *migration;
    sr_router *a, *b;
    if (before && after && !dictionary) {
      if ((rc = fresh_router(before, &a, &error))) return rc < 0 ? NULL : error_json(error);
      if ((rc = fresh_router(after, &b, &error))) return rc < 0 ? NULL : error_json(error);
      TRY(sr_migration_new(a, b, &migration));
    } else if (dictionary && !before && !after) {
      if ((rc = fresh_router(dictionary, &a, &error))) return rc < 0 ? NULL : error_json(error);
      TRY(sr_migration_of_dictionary(a, &migration));
    } else
      FAIL("a migration_session case names topology, before and after, or dictionary");
    defer(OWN_MIGRATION, migration, 0);
    size_t mode_len;
    const char *mode = text_of(json_object_get(c, "mode"), &mode_len);
    if (!mode) FAIL("mode is not a string");
    uint64_t until = 0;
    bool has_until = json_object_get(c, "until_ms") != NULL;
    if (has_until && decimal_field(c, "until_ms", &until)) return NULL;
    TRY(sr_migration_session_new(migration, mode, mode_len, has_until, until, &session));
  }
  json_t *results = json_array(), *step;
  size_t i;
  json_array_foreach(json_object_get(c, "steps"), i, step) {
    json_t *result = NULL;
    char *out;
    sr_key key;
    uint64_t value, now;
    bool present;
    const char *call = json_string_value(json_object_get(step, "call"));
    if (!call) MALFORMED("a step has no call");
    json_t *moved = json_object_get(step, "moved");
    if (!strcmp(call, "fence_epoch")) {
      STEP(sr_migration_session_fence_epoch(session, &value));
      result = json_pack("{s:o}", "epoch", decimal(value));
    } else if (!strcmp(call, "mode")) {
      const char *mode;
      size_t mode_len;
      STEP(sr_migration_session_mode(session, &mode, &mode_len));
      result = json_pack("{s:s%}", "mode", mode, mode_len);
    } else if (!strcmp(call, "scan_nodes")) {
      STEP(sr_migration_session_scan_nodes(session, &out));
      result = json_pack("{s:o}", "nodes", parsed(out));
    } else if (!strcmp(call, "read_plan") || !strcmp(call, "read_plan_at")) {
      if (!json_is_boolean(moved)) MALFORMED("moved is not a boolean");
      if (!strcmp(call, "read_plan_at") && decimal_field(step, "now_ms", &now)) goto malformed;
      STEP_KEY(json_object_get(step, "key"), &key);
      if (!strcmp(call, "read_plan")) STEP(sr_migration_session_read_plan(session, &key, json_is_true(moved), &out));
      else STEP(sr_migration_session_read_plan_at(session, &key, json_is_true(moved), now, &out));
      result = json_pack("{s:o}", "nodes", parsed(out));
    } else if (!strcmp(call, "write_plan")) {
      STEP_KEY(json_object_get(step, "key"), &key);
      STEP(sr_migration_session_write_plan(session, &key, &out));
      result = parsed(out);
    } else if (!strcmp(call, "lazy_steps")) {
      STEP_KEY(json_object_get(step, "key"), &key);
      STEP(sr_migration_session_lazy_steps(session, &key, &out));
      result = json_pack("{s:o}", "steps", parsed(out));
    } else if (!strcmp(call, "copy_batch")) {
      uint32_t cursor, max;
      if (u32_field(step, "cursor", &cursor) || u32_field(step, "max", &max)) goto malformed;
      STEP(sr_migration_session_copy_batch(session, cursor, max, &out));
      result = parsed(out);
    } else if (!strcmp(call, "next_deadline")) {
      if (decimal_field(step, "now_ms", &now)) goto malformed;
      STEP(sr_migration_session_next_deadline(session, now, &present, &value));
      result = json_pack("{s:o}", "deadline_ms", optional_decimal(present, value));
    } else if (!strcmp(call, "actions")) {
      if (decimal_field(step, "now_ms", &now)) goto malformed;
      if (!json_is_boolean(moved)) MALFORMED("moved is not a boolean");
      STEP(sr_migration_session_actions(session, now, json_is_true(moved), &out));
      result = json_pack("{s:o}", "actions", parsed(out));
    } else if (!strcmp(call, "fenced")) {
      if (decimal_field(step, "min_epoch", &value)) goto malformed;
      STEP(sr_migration_session_fenced(session, value, &out));
      result = parsed(out);
    } else if (!strcmp(call, "lazy_groups")) {
      sr_key *keys;
      size_t count;
      STEP_KEYS(json_object_get(step, "keys"), &keys, &count);
      STEP(sr_migration_session_lazy_groups(session, keys, count, &out));
      result = json_pack("{s:o}", "groups", parsed(out));
    } else if (!strcmp(call, "resume_at")) {
      /* The duty and the pause absent: the core's defaults. */
      uint64_t started, finished, min_pause = 0;
      uint32_t duty = 0;
      bool has_duty = json_object_get(step, "duty_per_mille") != NULL;
      bool has_min_pause = json_object_get(step, "min_pause_ms") != NULL;
      if (decimal_field(step, "started_ms", &started) || decimal_field(step, "finished_ms", &finished)) goto malformed;
      if (has_duty && u32_field(step, "duty_per_mille", &duty)) goto malformed;
      if (has_min_pause && decimal_field(step, "min_pause_ms", &min_pause)) goto malformed;
      STEP(sr_migration_session_resume_at(session, started, finished, has_duty, duty, has_min_pause, min_pause, &value));
      result = json_pack("{s:o}", "resume_ms", decimal(value));
    } else
      MALFORMED("unknown migration session call %s", call);
  append:
    if (!result) goto malformed;
    json_array_append_new(results, result);
  }
  sr_migration_session_free(session);
  return json_pack("{s:o}", "results", results);
malformed:
  sr_migration_session_free(session);
  json_decref(results);
  return NULL;
}

/* Standard base64, padding optional (deferred free); -1 when malformed. */
static int base64(const char *text, uint8_t **out, size_t *len) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t n = strlen(text);
  while (n && text[n - 1] == '=') n--;
  uint8_t *bytes = malloc(n + 1);
  defer(OWN_MALLOC, bytes, 0);
  uint32_t bits = 0, count = 0;
  *len = 0;
  for (size_t i = 0; i < n; i++) {
    const char *at = strchr(alphabet, text[i]);
    if (!at || !text[i]) {
      fail("not base64");
      return -1;
    }
    bits = bits << 6 | (uint32_t)(at - alphabet);
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes[(*len)++] = (uint8_t)(bits >> count);
    }
  }
  *out = bytes;
  return 0;
}

/* The bytes of field `text_name` (UTF-8) or `b64_name` (base64); `required`: one must be. */
static int payload(json_t *step, const char *text_name, const char *b64_name, int required, const uint8_t **out,
                   size_t *len) {
  json_t *plain = json_object_get(step, text_name), *encoded = json_object_get(step, b64_name);
  if (plain && !encoded && json_is_string(plain)) {
    *out = (const uint8_t *)json_string_value(plain);
    *len = json_string_length(plain);
    return 0;
  }
  if (encoded && !plain && json_is_string(encoded)) return base64(json_string_value(encoded), (uint8_t **)out, len);
  if (!plain && !encoded && !required) {
    *out = NULL;
    *len = 0;
    return 0;
  }
  fail("bad %s / %s", text_name, b64_name);
  return -1;
}

static json_t *deadline_of(sr_source_session *session) {
  bool present;
  uint64_t deadline;
  sr_error *error = sr_source_session_deadline(session, &present, &deadline);
  if (error) return error_json(error);
  return present ? json_integer((json_int_t)deadline) : json_null();
}

json_t *session_source(json_t *c) {
  size_t len;
  json_t *config = json_object_get(c, "config");
  if (!config) FAIL("case has no config");
  char *config_text = dump(config, &len);
  sr_source_session *session;
  sr_error *refused = sr_source_session_new(config_text, len, &session);
  if (refused) {
    json_t *result = json_pack("{s:{s:s}}", "error", "code", sr_error_code(refused));
    sr_error_free(refused);
    return result;
  }
  json_t *results = json_array(), *step;
  size_t i;
  json_array_foreach(json_object_get(c, "steps"), i, step) {
    json_t *result = NULL;
    char *out = NULL;
    uint64_t now, id = 0;
    sr_error *error = NULL;
    if (now_of(step, "now", &now)) goto malformed;
    const char *call = json_string_value(json_object_get(step, "call"));
    if (!call) MALFORMED("a step has no call");
    json_t *id_value = json_object_get(step, "id");
    if (json_is_integer(id_value)) id = (uint64_t)json_integer_value(id_value);
    int needs_id = !strcmp(call, "response") || !strcmp(call, "chunk") || !strcmp(call, "opened") ||
                   !strcmp(call, "failed");
    if (needs_id && !json_is_integer(id_value)) MALFORMED("id is not an integer");
    if (!strcmp(call, "start")) error = sr_source_session_start(session, now, &out);
    else if (!strcmp(call, "call")) {
      json_t *op = json_object_get(step, "op");
      if (!op) MALFORMED("call has no op");
      char *op_text = dump(op, &len);
      uint64_t number;
      error = sr_source_session_call(session, op_text, len, now, &number, &out);
      if (error) {
        result = json_pack("{s:{s:s},s:o}", "error", "code", sr_error_code(error), "deadline", deadline_of(session));
        sr_error_free(error);
      } else
        result = json_pack("{s:i,s:o,s:o}", "call", (json_int_t)number, "actions", parsed(out), "deadline",
                           deadline_of(session));
      goto append;
    } else if (!strcmp(call, "response")) {
      uint32_t status;
      const uint8_t *body;
      size_t body_len, headers_len = 0;
      if (u32_field(step, "status", &status) || status > 65535) MALFORMED("status is not a u16");
      if (payload(step, "body", "body_b64", 0, &body, &body_len)) goto malformed;
      json_t *headers = json_object_get(step, "headers");
      char *headers_text = headers ? dump(headers, &headers_len) : NULL;
      error = sr_source_session_response(session, id, (uint16_t)status, headers_text, headers_len, body, body_len, now,
                                         &out);
    } else if (!strcmp(call, "chunk")) {
      const uint8_t *data;
      size_t data_len;
      if (payload(step, "data", "data_b64", 1, &data, &data_len)) goto malformed;
      error = sr_source_session_chunk(session, id, data, data_len, now, &out);
    } else if (!strcmp(call, "opened")) error = sr_source_session_opened(session, id, now, &out);
    else if (!strcmp(call, "failed")) {
      size_t code_len, message_len;
      const char *code = text_of(json_object_get(step, "code"), &code_len);
      const char *message = text_of(json_object_get(step, "message"), &message_len);
      if (!code || !message) MALFORMED("bad code or message");
      error = sr_source_session_failed(session, id, code, code_len, message, message_len, now, &out);
    } else if (!strcmp(call, "timer")) error = sr_source_session_timer(session, now, &out);
    else if (!strcmp(call, "close")) error = sr_source_session_close(session, now, &out);
    else if (!strcmp(call, "state")) {
      error = sr_source_session_state(session, &out);
      result = error ? error_json(error) : parsed(out);
      goto append;
    } else
      MALFORMED("unknown source session call %s", call);
    if (error) result = error_json(error);
    else result = json_pack("{s:o,s:o}", "actions", parsed(out), "deadline", deadline_of(session));
  append:
    if (!result) goto malformed;
    json_array_append_new(results, result);
  }
  sr_source_session_free(session);
  return json_pack("{s:o}", "results", results);
malformed:
  sr_source_session_free(session);
  json_decref(results);
  return NULL;
}
