package dev.shardroute;

/**
 * An error of libshardroute: {@link #getCode()} is the core's stable code ({@code invalid_key},
 * {@code invalid_topology}, {@code invalid_argument}, {@code limit_exceeded}, ...), the same as
 * {@code .code} in Python and JavaScript (docs/c.md, "Error codes").
 */
public class ShardrouteException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final String code;

  /** An error of {@code code} with the core's {@code message}. */
  public ShardrouteException(String code, String message) {
    super(code + ": " + message);
    this.code = code;
  }

  /** The core's stable error code. */
  public String getCode() {
    return code;
  }
}
