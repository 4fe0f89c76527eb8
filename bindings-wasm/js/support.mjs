// The JavaScript half of the Rust binding (src/errors.rs, src/topology.rs and src/router.rs
// import it).
// wasm-bindgen copies this file next to the generated glue (pkg/*/snippets/), and the glue
// re-exports ShardrouteError, so the class thrown is the class the package exports.

/** The error every failed call throws: a real `Error` whose `code` is the core's stable code. */
export class ShardrouteError extends Error {
  /**
   * @param {string} code one of the core's codes, such as 'invalid_key'
   * @param {string} message what went wrong, for people
   * @param {{cause?: unknown}} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    /**
     * 'invalid_topology', 'invalid_key', 'no_nodes', 'limit_exceeded', 'invalid_argument',
     * 'stale_epoch' or 'read_only'.
     */
    this.code = code;
  }
}
Object.defineProperty(ShardrouteError.prototype, 'name', {
  value: 'ShardrouteError',
  writable: true,
  configurable: true,
});

/**
 * The JSON text of a topology or hashing object; a BigInt becomes its decimal string, which
 * the core reads as a u64. Throws what JSON.stringify throws (a cycle, a throwing toJSON).
 */
export function documentToJson(value) {
  return JSON.stringify(value, (_name, item) => (typeof item === 'bigint' ? item.toString() : item));
}

/**
 * Calls `lend(router)`, for a Rust call that takes a Router argument (`diff`): the glue of
 * the callback checks that `router` is a live Router and lends it to Rust, which leaves it
 * with its owner; when the check throws, the Rust side reports `invalid_argument`.
 */
export function lendRouter(router, lend) {
  lend(router);
}
