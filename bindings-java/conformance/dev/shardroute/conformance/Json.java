package dev.shardroute.conformance;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A small strict JSON reader and writer (RFC 8259) for the conformance runner: objects are
 * {@link LinkedHashMap}s (order kept for writing, ignored by {@code equals}), arrays
 * {@link ArrayList}s, integers {@link Long} (or {@link BigInteger} beyond it), other numbers
 * {@link Double}, and null {@link #NULL}. An integer and a real are different values, as in
 * jansson's {@code json_equal}. Rejects trailing commas, leading zeros, bad escapes, lone
 * surrogates, duplicate keys and trailing text.
 */
final class Json {
  private Json() {}

  /** JSON null (Java null means "absent"). */
  static final Object NULL = new Object() {
    @Override
    public String toString() {
      return "null";
    }
  };

  static final class SyntaxError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    SyntaxError(String message, int at) {
      super(message + " at " + at);
    }
  }

  static Object parse(String text) {
    Json.Reader reader = new Json.Reader(text);
    reader.space();
    Object value = reader.value(0);
    reader.space();
    if (reader.at != text.length()) throw new SyntaxError("trailing text", reader.at);
    return value;
  }

  private static final class Reader {
    private static final int MAX_DEPTH = 512;
    private final String s;
    private int at;

    Reader(String s) {
      this.s = s;
    }

    void space() {
      while (at < s.length()) {
        char c = s.charAt(at);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') at++;
        else break;
      }
    }

    private char peek() {
      if (at >= s.length()) throw new SyntaxError("unexpected end", at);
      return s.charAt(at);
    }

    private void expect(String word) {
      if (!s.startsWith(word, at)) throw new SyntaxError("expected " + word, at);
      at += word.length();
    }

    Object value(int depth) {
      if (depth > MAX_DEPTH) throw new SyntaxError("too deep", at);
      char c = peek();
      switch (c) {
        case '{': return object(depth);
        case '[': return array(depth);
        case '"': return string();
        case 't': expect("true"); return Boolean.TRUE;
        case 'f': expect("false"); return Boolean.FALSE;
        case 'n': expect("null"); return NULL;
        default:
          if (c == '-' || (c >= '0' && c <= '9')) return number();
          throw new SyntaxError("unexpected " + c, at);
      }
    }

    private Map<String, Object> object(int depth) {
      at++;
      Map<String, Object> map = new LinkedHashMap<>();
      space();
      if (peek() == '}') {
        at++;
        return map;
      }
      while (true) {
        space();
        if (peek() != '"') throw new SyntaxError("expected a key", at);
        String key = string();
        space();
        expect(":");
        space();
        if (map.put(key, value(depth + 1)) != null) throw new SyntaxError("duplicate key " + key, at);
        space();
        char c = peek();
        at++;
        if (c == '}') return map;
        if (c != ',') throw new SyntaxError("expected , or }", at - 1);
      }
    }

    private List<Object> array(int depth) {
      at++;
      List<Object> list = new ArrayList<>();
      space();
      if (peek() == ']') {
        at++;
        return list;
      }
      while (true) {
        space();
        list.add(value(depth + 1));
        space();
        char c = peek();
        at++;
        if (c == ']') return list;
        if (c != ',') throw new SyntaxError("expected , or ]", at - 1);
      }
    }

    private int hex4() {
      if (at + 4 > s.length()) throw new SyntaxError("short \\u escape", at);
      int value = 0;
      for (int i = 0; i < 4; i++) {
        int d = Character.digit(s.charAt(at + i), 16);
        if (d < 0) throw new SyntaxError("bad \\u escape", at);
        value = value << 4 | d;
      }
      at += 4;
      return value;
    }

    private String string() {
      at++;
      StringBuilder out = new StringBuilder();
      while (true) {
        char c = peek();
        at++;
        if (c == '"') return out.toString();
        if (c < 0x20) throw new SyntaxError("control character in a string", at - 1);
        if (Character.isSurrogate(c)) {
          // Only a well-formed pair can come from valid UTF-8 text.
          if (!Character.isHighSurrogate(c) || at >= s.length() || !Character.isLowSurrogate(s.charAt(at)))
            throw new SyntaxError("lone surrogate", at - 1);
          out.append(c).append(s.charAt(at++));
          continue;
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        char e = peek();
        at++;
        switch (e) {
          case '"': out.append('"'); break;
          case '\\': out.append('\\'); break;
          case '/': out.append('/'); break;
          case 'b': out.append('\b'); break;
          case 'f': out.append('\f'); break;
          case 'n': out.append('\n'); break;
          case 'r': out.append('\r'); break;
          case 't': out.append('\t'); break;
          case 'u': {
            int unit = hex4();
            if (Character.isHighSurrogate((char) unit)) {
              if (!s.startsWith("\\u", at)) throw new SyntaxError("lone surrogate", at);
              at += 2;
              int low = hex4();
              if (!Character.isLowSurrogate((char) low)) throw new SyntaxError("lone surrogate", at);
              out.append((char) unit).append((char) low);
            } else if (Character.isLowSurrogate((char) unit)) {
              throw new SyntaxError("lone surrogate", at);
            } else out.append((char) unit);
            break;
          }
          default: throw new SyntaxError("bad escape \\" + e, at - 1);
        }
      }
    }

    private Object number() {
      int start = at;
      boolean integer = true;
      if (peek() == '-') at++;
      char c = peek();
      if (c == '0') at++;
      else if (c >= '1' && c <= '9') digits();
      else throw new SyntaxError("bad number", at);
      if (at < s.length() && s.charAt(at) == '.') {
        integer = false;
        at++;
        if (!(at < s.length() && Character.isDigit(s.charAt(at)))) throw new SyntaxError("bad fraction", at);
        digits();
      }
      if (at < s.length() && (s.charAt(at) == 'e' || s.charAt(at) == 'E')) {
        integer = false;
        at++;
        if (at < s.length() && (s.charAt(at) == '+' || s.charAt(at) == '-')) at++;
        if (!(at < s.length() && Character.isDigit(s.charAt(at)))) throw new SyntaxError("bad exponent", at);
        digits();
      }
      String text = s.substring(start, at);
      if (!integer) return Double.valueOf(text);
      BigInteger big = new BigInteger(text);
      return big.bitLength() < 64 ? (Object) big.longValue() : big;
    }

    private void digits() {
      while (at < s.length() && s.charAt(at) >= '0' && s.charAt(at) <= '9') at++;
    }
  }

  /** Compact JSON text, keys in their order ({@code sorted}: by name). */
  static String write(Object value, boolean sorted) {
    StringBuilder out = new StringBuilder();
    write(out, value, sorted);
    return out.toString();
  }

  static String write(Object value) {
    return write(value, false);
  }

  @SuppressWarnings("unchecked")
  private static void write(StringBuilder out, Object value, boolean sorted) {
    if (value == NULL || value == null) out.append("null");
    else if (value instanceof String text) string(out, text);
    else if (value instanceof Boolean || value instanceof Long || value instanceof BigInteger || value instanceof Integer)
      out.append(value);
    else if (value instanceof Double d) {
      if (d.isNaN() || d.isInfinite()) throw new IllegalArgumentException("not a JSON number: " + d);
      out.append(d);
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) out.append(',');
        write(out, list.get(i), sorted);
      }
      out.append(']');
    } else if (value instanceof Map<?, ?> map) {
      Map<String, Object> entries = (Map<String, Object>) map;
      if (sorted) entries = new TreeMap<>(entries);
      out.append('{');
      boolean first = true;
      for (Map.Entry<String, Object> entry : entries.entrySet()) {
        if (!first) out.append(',');
        first = false;
        string(out, entry.getKey());
        out.append(':');
        write(out, entry.getValue(), sorted);
      }
      out.append('}');
    } else throw new IllegalArgumentException("not a JSON value: " + value.getClass());
  }

  private static void string(StringBuilder out, String text) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        default:
          if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
          else out.append(c);
      }
    }
    out.append('"');
  }
}
