package dev.shardroute.conformance;

import static dev.shardroute.conformance.Runner.asList;
import static dev.shardroute.conformance.Runner.asObject;
import static dev.shardroute.conformance.Runner.bytesOfHex;
import static dev.shardroute.conformance.Runner.decimal;
import static dev.shardroute.conformance.Runner.dump;
import static dev.shardroute.conformance.Runner.errorJson;
import static dev.shardroute.conformance.Runner.keyOf;
import static dev.shardroute.conformance.Runner.keysOf;
import static dev.shardroute.conformance.Runner.object;
import static dev.shardroute.conformance.Runner.optionalDecimal;
import static dev.shardroute.conformance.Runner.parsed;
import static dev.shardroute.conformance.Runner.text;
import static dev.shardroute.conformance.Runner.u32;
import static dev.shardroute.conformance.Runner.u32Field;

import dev.shardroute.ClusterSession;
import dev.shardroute.Command;
import dev.shardroute.Follower;
import dev.shardroute.Key;
import dev.shardroute.Migration;
import dev.shardroute.MigrationSession;
import dev.shardroute.Router;
import dev.shardroute.Shardroute;
import dev.shardroute.ShardrouteException;
import dev.shardroute.SourceSession;
import dev.shardroute.conformance.Runner.Malformed;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The session scenarios (conformance/README.md, "Session scenarios"), as the C runner's
 * sessions.c runs them: each step is one call on the session; the session decides, the
 * runner writes. A step the core refuses gives {@code {"error": code}}; a malformed step fails
 * the case.
 */
final class Sessions {
  private Sessions() {}

  /** One step: its result, or the core's refusal of a call in it. */
  private interface Step {
    Object run() throws Malformed;
  }

  private static Object step(Step step) throws Malformed {
    try {
      return step.run();
    } catch (ShardrouteException error) {
      return errorJson(error);
    }
  }

  /** A step's time: the integer field {@code name}, 0 when absent. */
  private static long nowOf(Map<String, Object> step, String name) throws Malformed {
    Object value = step.get(name);
    if (value == null) return 0;
    if (!(value instanceof Long n) || n < 0) throw new Malformed(name + " is not an integer");
    return n;
  }

  /** A decimal string field as a u64. */
  private static long decimalField(Map<String, Object> step, String name) throws Malformed {
    String text = text(step.get(name));
    if (text == null || text.isEmpty() || text.startsWith("-")) throw new Malformed("bad " + name);
    try {
      return Long.parseUnsignedLong(text);
    } catch (NumberFormatException e) {
      throw new Malformed("bad " + name);
    }
  }

  private static String[] strs(Object value) {
    List<Object> list = asList(value);
    if (list == null) return null;
    String[] out = new String[list.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = text(list.get(i));
      if (out[i] == null) return null;
    }
    return out;
  }

  private static List<Map<String, Object>> steps(Map<String, Object> c) throws Malformed {
    List<Object> list = asList(c.get("steps"));
    List<Map<String, Object>> out = new ArrayList<>();
    if (list == null) return out;
    for (Object each : list) {
      Map<String, Object> step = asObject(each);
      if (step == null) throw new Malformed("a step is not an object");
      out.add(step);
    }
    return out;
  }

  private static Object deadline(OptionalLong deadline) {
    return object("deadline_ms", optionalDecimal(deadline));
  }

  static Object redis(Runner runner, Map<String, Object> c) throws Malformed {
    String[] seeds = strs(c.get("seeds"));
    if (seeds == null) throw new Malformed("seeds is not an array of strings");
    Object config = c.get("config");
    ClusterSession session = runner.defer(ClusterSession.create(seeds, config == null ? null : dump(config)));
    List<Command> commands = new ArrayList<>();
    List<Object> results = new ArrayList<>();
    for (Map<String, Object> step : steps(c)) {
      long now = nowOf(step, "now_ms");
      String call = text(step.get("call"));
      if (call == null) throw new Malformed("a step has no call");
      Command picked = null;
      Object index = step.get("command");
      if (index != null) {
        if (!(index instanceof Long n) || n < 0 || n >= commands.size())
          throw new Malformed(call + ": no command " + index);
        picked = commands.get((int) (long) n);
      } else if (!commands.isEmpty()) picked = commands.get(commands.size() - 1);
      Command command = picked;
      String address = text(step.get("address"));
      Object readonly = step.get("readonly");
      results.add(step(() -> {
        switch (call) {
          case "command":
          case "plan": {
            Key[] keys = keysOf(step.get("keys"));
            String access = text(step.get("access"));
            if (access == null) throw new Malformed("access is not a string");
            if (call.equals("plan")) return parsed(session.plan(keys, access));
            Command begun = runner.defer(session.command(keys, access, now));
            commands.add(begun);
            return object("slot", u32(begun.slot()));
          }
          case "poll":
          case "succeeded":
          case "stalled":
          case "on_deadline":
          case "failed":
          case "unreachable":
          case "deadline": {
            if (command == null) throw new Malformed(call + ": no command begun");
            switch (call) {
              case "poll": return parsed(session.poll(command, now));
              case "succeeded": return parsed(session.succeeded(command, now));
              case "stalled": return parsed(session.stalled(command, now));
              case "on_deadline": return parsed(session.onDeadline(command, now));
              case "failed": {
                String text = text(step.get("text"));
                String[] names = strs(step.get("names"));
                if (text == null || names == null) throw new Malformed("bad text or names");
                return parsed(session.failed(command, text, names, now));
              }
              case "unreachable": {
                String why = text(step.get("why"));
                if (why == null) throw new Malformed("why is not a string");
                return parsed(session.unreachable(command, why, now));
              }
              default: return deadline(session.deadline(command));
            }
          }
          case "refresh_sent":
            if (address == null) throw new Malformed("address is not a string");
            return deadline(session.refreshSent(address, now));
          case "next_deadline": return deadline(session.nextDeadline());
          case "batch_deadline": return deadline(session.batchDeadline(now));
          case "timeout": return object("timed_out", session.timeout(now));
          case "refreshed": {
            Object reply = step.get("reply");
            if (reply == null) throw new Malformed("refreshed has no reply");
            session.refreshed(dump(reply), now);
            return object("ok", true);
          }
          case "refresh_failed":
            session.refreshFailed(now);
            return object("ok", true);
          case "candidates": return object("addresses", parsed(session.candidates()));
          case "stats": return parsed(session.stats());
          default:
            if (!call.startsWith("pipeline_")) throw new Malformed("unknown session call " + call);
            if (address == null || !(readonly instanceof Boolean ro)) throw new Malformed("bad address or readonly");
            switch (call) {
              case "pipeline_queued": return object("queued", u32(session.pipelineQueued(address, ro)));
              case "pipeline_take": return object("write", u32(session.pipelineTake(address, ro)));
              case "pipeline_done": return object("write", u32(session.pipelineDone(address, ro)));
              case "pipeline_withdrawn": {
                int count = u32Field(step, "count");
                session.pipelineWithdrawn(address, ro, count);
                return object("ok", true);
              }
              case "pipeline_pending": {
                ClusterSession.Pending pending = session.pipelinePending(address, ro);
                return object("queued", u32(pending.queued()), "writes", u32(pending.writes()));
              }
              default: throw new Malformed("unknown session call " + call);
            }
        }
      }));
    }
    return object("results", results);
  }

  /** A step's document: a topology id or raw text. */
  private static String documentOf(Runner runner, Map<String, Object> step) {
    Object id = step.get("document"), raw = step.get("document_json");
    if (id != null && raw == null && id instanceof String s) {
      Object doc = runner.topologies.get(s);
      return doc == null ? null : dump(doc);
    }
    if (raw != null && id == null) return text(raw);
    return null;
  }

  static Object follower(Runner runner, Map<String, Object> c) throws Malformed {
    Object config = c.get("config");
    Follower follower = runner.defer(Follower.create(config == null ? null : dump(config)));
    List<Object> results = new ArrayList<>();
    for (Map<String, Object> step : steps(c)) {
      long now = nowOf(step, "now_ms");
      String call = text(step.get("call"));
      if (call == null) throw new Malformed("a step has no call");
      Object revision = step.get("revision");
      results.add(step(() -> {
        switch (call) {
          case "offer":
          case "publish": {
            String document = documentOf(runner, step);
            if (document == null) throw new Malformed("a step names document (an id) or document_json (text)");
            if (call.equals("publish")) return parsed(follower.publish(document));
            if (!(revision instanceof Long r)) throw new Malformed("revision is not an integer");
            return parsed(follower.offer(document, r, now));
          }
          case "offer_dictionary":
          case "offer_bytes": {
            String hex = text(step.get("hex"));
            if (hex == null || !(revision instanceof Long r)) throw new Malformed("bad hex or revision");
            byte[] bytes = bytesOfHex(hex);
            if (call.equals("offer_bytes")) return parsed(follower.offerBytes(bytes, r, now));
            return parsed(follower.offerDictionary(bytes, r, now));
          }
          case "disconnected": return object("reconnect_at_ms", decimal(follower.disconnected(now)));
          case "connected":
            follower.connected();
            return object("ok", true);
          case "state": {
            Object epoch;
            try (Router router = follower.router()) {
              epoch = router == null ? dev.shardroute.conformance.Json.NULL : decimal(router.epoch());
            }
            return object("epoch", epoch, "revision", optionalDecimal(follower.revision()));
          }
          case "stats": return parsed(follower.stats());
          case "next_deadline": return deadline(follower.nextDeadline());
          default: throw new Malformed("unknown follower call " + call);
        }
      }));
    }
    return object("results", results);
  }

  static Object misplaced(Runner runner, Map<String, Object> c) throws Malformed {
    Router router = runner.freshRouter(c.get("topology"));
    Object node = c.get("node"), shard = c.get("shard");
    if (node != null && shard == null) {
      String name = text(node);
      if (name == null) throw new Malformed("node is not a string");
      return parsed(Shardroute.misplacedOnNode(router, name, keysOf(c.get("keys"))));
    } else if (shard != null && node == null) {
      int number = u32Field(c, "shard");
      return parsed(Shardroute.misplacedInShard(router, number, keysOf(c.get("keys"))));
    }
    throw new Malformed("a misplaced case names node or shard");
  }

  static Object migration(Runner runner, Map<String, Object> c) throws Malformed {
    MigrationSession session;
    if (c.get("topology") != null) {
      Router topology = runner.freshRouter(c.get("topology"));
      Router previous = c.get("previous") != null ? runner.freshRouter(c.get("previous")) : null;
      Router held = c.get("held") != null ? runner.freshRouter(c.get("held")) : null;
      session = runner.defer(MigrationSession.ofTopology(topology, previous, held));
    } else {
      Object before = c.get("before"), after = c.get("after"), dictionary = c.get("dictionary");
      Migration migration;
      if (before != null && after != null && dictionary == null) {
        Router a = runner.freshRouter(before);
        Router b = runner.freshRouter(after);
        migration = Migration.between(a, b);
      } else if (dictionary != null && before == null && after == null) {
        migration = Migration.ofDictionary(runner.freshRouter(dictionary));
      } else throw new Malformed("a migration_session case names topology, before and after, or dictionary");
      runner.defer(migration);
      String mode = text(c.get("mode"));
      if (mode == null) throw new Malformed("mode is not a string");
      OptionalLong until = c.containsKey("until_ms") ? OptionalLong.of(decimalField(c, "until_ms")) : OptionalLong.empty();
      session = runner.defer(MigrationSession.create(migration, mode, until));
    }
    List<Object> results = new ArrayList<>();
    for (Map<String, Object> step : steps(c)) {
      String call = text(step.get("call"));
      if (call == null) throw new Malformed("a step has no call");
      Object moved = step.get("moved");
      results.add(step(() -> {
        switch (call) {
          case "fence_epoch": return object("epoch", decimal(session.fenceEpoch()));
          case "mode": return object("mode", session.mode());
          case "scan_nodes": return object("nodes", parsed(session.scanNodes()));
          case "read_plan":
          case "read_plan_at": {
            if (!(moved instanceof Boolean m)) throw new Malformed("moved is not a boolean");
            long now = call.equals("read_plan_at") ? decimalField(step, "now_ms") : 0;
            Key key = keyOf(step.get("key"));
            if (call.equals("read_plan")) return object("nodes", parsed(session.readPlan(key, m)));
            return object("nodes", parsed(session.readPlanAt(key, m, now)));
          }
          case "write_plan": return parsed(session.writePlan(keyOf(step.get("key"))));
          case "lazy_steps": return object("steps", parsed(session.lazySteps(keyOf(step.get("key")))));
          case "copy_batch": {
            int cursor = u32Field(step, "cursor"), max = u32Field(step, "max");
            return parsed(session.copyBatch(cursor, max));
          }
          case "next_deadline": return deadline(session.nextDeadline(decimalField(step, "now_ms")));
          case "actions": {
            long now = decimalField(step, "now_ms");
            if (!(moved instanceof Boolean m)) throw new Malformed("moved is not a boolean");
            return object("actions", parsed(session.actions(now, m)));
          }
          case "fenced": return parsed(session.fenced(decimalField(step, "min_epoch")));
          case "lazy_groups": return object("groups", parsed(session.lazyGroups(keysOf(step.get("keys")))));
          case "resume_at": {
            // The duty and the pause absent (empty): the core's defaults.
            OptionalInt duty = step.containsKey("duty_per_mille") ? OptionalInt.of(u32Field(step, "duty_per_mille"))
                : OptionalInt.empty();
            OptionalLong pause = step.containsKey("min_pause_ms") ? OptionalLong.of(decimalField(step, "min_pause_ms"))
                : OptionalLong.empty();
            long started = decimalField(step, "started_ms"), finished = decimalField(step, "finished_ms");
            return object("resume_ms", decimal(session.resumeAt(started, finished, duty, pause)));
          }
          default: throw new Malformed("unknown migration session call " + call);
        }
      }));
    }
    return object("results", results);
  }

  /** Standard base64, padding optional, trailing bits dropped (as the C runner). */
  private static byte[] base64(String text) throws Malformed {
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    int n = text.length();
    while (n > 0 && text.charAt(n - 1) == '=') n--;
    byte[] bytes = new byte[n];
    int len = 0, bits = 0, count = 0;
    for (int i = 0; i < n; i++) {
      int at = alphabet.indexOf(text.charAt(i));
      if (at < 0) throw new Malformed("not base64");
      bits = bits << 6 | at;
      count += 6;
      if (count >= 8) {
        count -= 8;
        bytes[len++] = (byte) (bits >> count);
      }
    }
    return java.util.Arrays.copyOf(bytes, len);
  }

  /** The bytes of field {@code textName} (UTF-8) or {@code b64Name} (base64); null when neither and not required. */
  private static byte[] payload(Map<String, Object> step, String textName, String b64Name, boolean required)
      throws Malformed {
    Object plain = step.get(textName), encoded = step.get(b64Name);
    if (plain != null && encoded == null && plain instanceof String s) return s.getBytes(StandardCharsets.UTF_8);
    if (encoded != null && plain == null && encoded instanceof String s) return base64(s);
    if (plain == null && encoded == null && !required) return new byte[0];
    throw new Malformed("bad " + textName + " / " + b64Name);
  }

  private static Object deadlineOf(SourceSession session) {
    try {
      OptionalLong deadline = session.deadline();
      return deadline.isPresent() ? (Object) deadline.getAsLong() : Json.NULL;
    } catch (ShardrouteException error) {
      return errorJson(error);
    }
  }

  static Object source(Runner runner, Map<String, Object> c) throws Malformed {
    Object config = c.get("config");
    if (config == null) throw new Malformed("case has no config");
    SourceSession session;
    try {
      session = runner.defer(SourceSession.create(dump(config)));
    } catch (ShardrouteException refused) {
      return object("error", object("code", refused.getCode()));
    }
    List<Object> results = new ArrayList<>();
    for (Map<String, Object> step : steps(c)) {
      long now = nowOf(step, "now");
      String call = text(step.get("call"));
      if (call == null) throw new Malformed("a step has no call");
      Object idValue = step.get("id");
      long id = idValue instanceof Long n ? n : 0;
      boolean needsId = call.equals("response") || call.equals("chunk") || call.equals("opened") || call.equals("failed");
      if (needsId && !(idValue instanceof Long)) throw new Malformed("id is not an integer");
      if (call.equals("call")) {
        Object op = step.get("op");
        if (op == null) throw new Malformed("call has no op");
        try {
          SourceSession.Call made = session.call(dump(op), now);
          results.add(object("call", made.call(), "actions", parsed(made.actions()), "deadline", deadlineOf(session)));
        } catch (ShardrouteException error) {
          results.add(object("error", object("code", error.getCode()), "deadline", deadlineOf(session)));
        }
        continue;
      }
      if (call.equals("state")) {
        results.add(step(() -> parsed(session.state())));
        continue;
      }
      String actions;
      try {
        switch (call) {
          case "start": actions = session.start(now); break;
          case "response": {
            long status = step.get("status") instanceof Long s ? s : -1;
            if (status < 0 || status > 65535) throw new Malformed("status is not a u16");
            byte[] body = payload(step, "body", "body_b64", false);
            Object headers = step.get("headers");
            actions = session.response(id, (int) status, headers == null ? null : dump(headers), body, now);
            break;
          }
          case "chunk": actions = session.chunk(id, payload(step, "data", "data_b64", true), now); break;
          case "opened": actions = session.opened(id, now); break;
          case "failed": {
            String code = text(step.get("code")), message = text(step.get("message"));
            if (code == null || message == null) throw new Malformed("bad code or message");
            actions = session.failed(id, code, message, now);
            break;
          }
          case "timer": actions = session.timer(now); break;
          case "close": actions = session.stop(now); break;
          default: throw new Malformed("unknown source session call " + call);
        }
      } catch (ShardrouteException error) {
        results.add(errorJson(error));
        continue;
      }
      results.add(object("actions", parsed(actions), "deadline", deadlineOf(session)));
    }
    return object("results", results);
  }
}
