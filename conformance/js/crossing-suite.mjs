// Values crossing into a JavaScript package as data (ClusterSession.refreshed's reply,
// apply's operation, a Router's document, hashKey's spec, text arguments): the table
// conformance/hostile/crossing.json gives the code AND the message each must give, and the
// Python binding (bindings-py/tests/test_crossing_values.py) runs the same table, so the
// three refuse a 500-deep reply, a lone surrogate, a NaN weight or a 2^64 slot in the same
// words, and read 16383.0 the same. Each package's test/crossing-values.test.mjs calls
// `crossingSuite(api)` with its module.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const TABLE = JSON.parse(readFileSync(new URL('../hostile/crossing.json', import.meta.url), 'utf8'));
const FLOATS = { nan: NaN, inf: Infinity, '-inf': -Infinity, '-0': -0 };

/** A table value as the JavaScript value a user would pass (the tags: the table's description). */
function value(written) {
  if (Array.isArray(written)) return written.map(value);
  if (written === null || typeof written !== 'object') return written;
  const [tag] = Object.keys(written);
  const spec = written[tag];
  switch (tag) {
    case '$float': return FLOATS[spec];
    case '$int':
    case '$bigint': return BigInt(spec);
    case '$nest': {
      let nested = value(spec.leaf);
      for (let i = 0; i < spec.depth; i++) nested = [nested];
      return nested;
    }
    case '$repeat': return spec.text.repeat(spec.times);
    case '$cycle': {
      const cycle = [];
      cycle.push(cycle);
      return cycle;
    }
    default: return Object.fromEntries(Object.entries(written).map(([name, item]) => [name, value(item)]));
  }
}

/** Defines one test per case of the table for the package `api`. */
export function crossingSuite(api) {
  /** Makes the table's call with `argument`; a session's reply must then route a key. */
  function call(name, argument) {
    switch (name) {
      case 'ClusterSession.refreshed': {
        const session = new api.ClusterSession(TABLE.fixtures.seeds);
        session.refreshed(argument, 0);
        assert.equal(session.plan(['a'], 'write').length, 1, 'the reply installed a table');
        return;
      }
      case 'apply': return void api.apply(TABLE.fixtures.apply_topology, argument);
      case 'Router': return void new api.Router(argument);
      case 'hash_key': return void api.hashKey('k', argument);
      case 'parse_redirect': return void api.parseRedirect(argument);
      case 'parse_address': return void api.parseAddress(argument);
      default: throw new Error(`unknown call ${name}`);
    }
  }

  for (const entry of TABLE.cases) {
    test(`${entry.call}: ${entry.id}`, () => {
      const argument = value(entry.value);
      if (entry.code === null) {
        call(entry.call, argument);
        return;
      }
      assert.throws(() => call(entry.call, argument), (err) => {
        assert.ok(err instanceof api.ShardrouteError, `the package's own class, not ${err?.constructor?.name}`);
        assert.deepEqual({ code: err.code, message: err.message }, { code: entry.code, message: entry.message });
        return true;
      });
    });
  }
}
