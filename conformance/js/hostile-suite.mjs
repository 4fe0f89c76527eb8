// No crash across the FFI, and one message source: every public call of a JavaScript
// package with hostile arguments, from the table both languages share
// (conformance/hostile/calls.json, format in conformance/README.md), plus what only
// JavaScript has (undefined, symbols, functions, proxies, getters that throw, cycles,
// detached, out-of-bounds, foreign and lying typed arrays, BigInts inside documents).
//
// Every call runs in both packages, the addon and the WASM build: each must throw a
// ShardrouteError with the table's code (or succeed where the table says so), and the two
// must give the same outcome, code and message, word for word. Run by the API suite
// (api-suite.mjs) for each package; the other package is loaded from its directory, so
// both must be built (each package's test.sh builds the other).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import vm from 'node:vm';

import { ADDON, WASM } from './runtimes.mjs';
import { repoRoot } from './vectors.mjs';

/** The classes of the session, whose calls session-suite.mjs covers instead of the table. */
export const SESSION_CLASSES = ['ClusterSession', 'Command', 'Action'];
/** The classes of the topology follower, whose calls follower-suite.mjs covers instead of the table. */
export const FOLLOWER_CLASSES = ['TopologyFollower', 'Offered'];
/** The class of the migration session, whose calls migration-session-suite.mjs covers instead of the table. */
export const MIGRATION_SESSION_CLASSES = ['MigrationSession'];
/** The source session's class: source-suite.mjs covers its calls. */
export const SOURCE_CLASSES = ['SourceSession'];
/** The routing service's class: api-suite.mjs gives its calls their bad arguments, and the
 * service tests of each package (test/service.test.mjs) its hostile requests. */
export const SERVICE_CLASSES = ['RoutingService'];
const TABLE = JSON.parse(readFileSync(join(repoRoot, 'conformance', 'hostile', 'calls.json'), 'utf8'));
const FLOATS = { nan: NaN, inf: Infinity, '-inf': -Infinity, '-0': -0 };
const ARRAYS = {
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array, int8: Int8Array,
  int32: Int32Array, int64: BigInt64Array, float64: Float64Array,
};

/** `snake_case` as `camelCase`: the JavaScript name of a call the table names as Python does. */
const camel = (name) => name.replace(/_([a-z0-9])/g, (_, next) => next.toUpperCase());

/** The routers, migrations and documents of the table, built with one package. */
class Fixtures {
  constructor(api) {
    this.api = api;
    this.documents = TABLE.fixtures;
    this.routers = Object.fromEntries(Object.entries(TABLE.fixtures).map(([name, d]) => [name, new api.Router(d)]));
    this.migrations = Object.fromEntries(Object.entries(TABLE.migrations).map(([name, spec]) => [name,
      Array.isArray(spec) ? new api.Migration(this.routers[spec[0]], this.routers[spec[1]])
        : api.Migration.ofDictionary(this.routers[spec.of_dictionary])]));
  }

  /** A table value as the JavaScript value a user would pass. */
  value(written) {
    if (Array.isArray(written)) return written.map((item) => this.value(item));
    if (written === null || typeof written !== 'object') return written;
    const tags = Object.keys(written).filter((name) => name.startsWith('$'));
    if (tags.length === 0) return Object.fromEntries(Object.entries(written).map(([n, item]) => [n, this.value(item)]));
    assert.equal(Object.keys(written).length, 1, `a tagged value has one field: ${JSON.stringify(written)}`);
    const [tag] = tags;
    const spec = written[tag];
    switch (tag) {
      case '$float': return FLOATS[spec];
      case '$int': return BigInt(spec);
      case '$bytes': return hexBytes(spec);
      case '$array': {
        const [dtype, items] = spec;
        const Type = ARRAYS[dtype];
        return Type.from(items, (item) => (Type === BigUint64Array || Type === BigInt64Array ? BigInt(item) : item));
      }
      case '$repeat':
        return 'text' in spec ? spec.text.repeat(spec.times) : repeatBytes(hexBytes(spec.hex), spec.times);
      case '$nest': {
        let nested = this.value(spec.leaf);
        for (let i = 0; i < spec.depth; i++) nested = [nested];
        return nested;
      }
      case '$router': return this.routers[spec];
      case '$migration': return this.migrations[spec];
      case '$fixture': return structuredClone(this.documents[spec]);
      case '$dictionary': return damaged(this.api.encodeDictionary(this.documents[spec.fixture]), spec);
      default: throw new Error(`unknown tag ${tag}`);
    }
  }
}

function hexBytes(hex) {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

function repeatBytes(unit, times) {
  const out = new Uint8Array(unit.length * times);
  for (let at = 0; at < out.length; at += unit.length) out.set(unit, at);
  return out;
}

/** Encoded dictionary bytes damaged as the table's `$dictionary` says (as test_hostile.py does). */
function damaged(encoded, spec) {
  let bytes = Uint8Array.from(encoded);
  if ('keep' in spec) bytes = bytes.slice(0, spec.keep);
  if ('flip_bit' in spec) bytes[spec.flip_bit < 0 ? bytes.length + spec.flip_bit : spec.flip_bit] ^= 1;
  if ('append' in spec) bytes = Uint8Array.of(...bytes, ...hexBytes(spec.append));
  return bytes;
}

/** `args` with every placeholder '$' replaced by `value` (already a JavaScript value). */
function substitute(args, value, fixtures) {
  if (args === '$') return value;
  if (Array.isArray(args)) return args.map((item) => substitute(item, value, fixtures));
  if (args !== null && typeof args === 'object' && !Object.keys(args).some((name) => name.startsWith('$'))) {
    return Object.fromEntries(Object.entries(args).map(([name, item]) => [name, substitute(item, value, fixtures)]));
  }
  return fixtures.value(args);
}

/** Makes the call of a table entry in one package, `value` in place of '$'. */
function invoke(fixtures, call, value) {
  const { api } = fixtures;
  const args = substitute(call.args, value, fixtures);
  const [owner, method] = call.call.includes('.') ? call.call.split('.') : [undefined, call.call];
  const name = camel(method);
  if (owner && call.on !== undefined) {
    const target = owner === 'Router' ? fixtures.routers[call.on] : fixtures.migrations[call.on];
    return call.get ? target[name] : target[name](...args);
  }
  if (owner) return api[owner][name](...args);
  if (name === 'Router' || name === 'Migration') return new api[name](...args);
  return api[name](...args);
}

/**
 * What a call did: `{ ok: true }`, or `{ code, message }` of the ShardrouteError it threw.
 * Anything else thrown (a plain Error, a wasm trap's RuntimeError, a string) fails here.
 */
export function outcome(api, run) {
  try {
    run();
    return { ok: true };
  } catch (err) {
    assert.ok(err instanceof api.ShardrouteError, `threw ${err?.constructor?.name}: ${err?.message ?? String(err)}`);
    assert.equal(typeof err.code, 'string');
    return { code: err.code, message: err.message };
  }
}

/** Every case of the table JavaScript runs: `{ name, call, value, code, messageContains }`. */
function tableCases() {
  const cases = [];
  for (const group of TABLE.groups) {
    group.calls.forEach((call, index) => {
      if ((call.only ?? 'js') !== 'js') return;
      for (const value of group.values) {
        if ((value.only ?? 'js') !== 'js') continue;
        const code = value.id in (call.expect ?? {}) ? call.expect[value.id] : value.code;
        cases.push({ name: `${group.name}/${call.call}#${index}/${value.id}`, group: group.name, call, value: value.value,
          code, messageContains: value.message_contains });
      }
    });
  }
  return cases;
}

/** Loads the other package from its directory, as a user's code would. */
export function otherPackage(runtime) {
  const other = runtime.packageName === ADDON.packageName ? WASM : ADDON;
  const require = createRequire(join(other.packageDir, 'package.json'));
  try {
    return require(other.packageName);
  } catch (err) {
    throw new Error(`${other.packageName} is not built (its build.sh): the two packages' messages are compared`,
      { cause: err });
  }
}

/**
 * JavaScript values the table cannot write, per group of the table: each with the code
 * every call of the group must throw (null: succeed; `undefined`: the call decides, and
 * the two packages must agree).
 */
function jsOnlyValues() {
  const detached = () => {
    const bytes = Uint8Array.of(1, 2);
    structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
    return bytes;
  };
  const outOfBounds = () => {
    const buffer = new ArrayBuffer(8, { maxByteLength: 16 });
    const view = new Uint8Array(buffer, 4, 4);
    buffer.resize(2);
    return view;
  };
  const lying = () => {
    const bytes = Uint8Array.of(1, 2, 3);
    Object.defineProperty(bytes, 'length', { value: 1 << 30 });
    return bytes;
  };
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    return proxy;
  };
  const throwingGetter = (object, name) => Object.defineProperty({ ...object }, name, {
    enumerable: true, get() { throw new Error(`no ${name}`); },
  });
  const cyclic = (object) => {
    const copy = { ...object };
    copy.placement = copy;
    return copy;
  };
  const foreign = (source) => vm.runInNewContext(source);
  const document = TABLE.groups.find((group) => group.name === 'documents').values.find((v) => v.id === 'valid').value;
  const withNode = (node) => ({ ...document, nodes: [node, { id: 'b' }] });
  const notData = [
    ['symbol', Symbol('s')], ['function', () => 1], ['boxed_string', new String('a')], ['map', new Map()],
    ['date', new Date(0)], ['revoked_proxy', revoked()],
  ];
  return {
    keys: [
      ...notData.map(([id, value]) => ({ id, value, code: 'invalid_key' })),
      { id: 'unsafe_number', value: 2 ** 53, code: 'invalid_key' },
      { id: 'max_value', value: Number.MAX_VALUE, code: 'invalid_key' },
      { id: 'negative_zero', value: -0, code: null },
      { id: 'array_proxy', value: new Proxy(['a'], {}), code: 'invalid_key' },
      { id: 'detached_bytes', value: detached(), code: 'invalid_key' },
      { id: 'out_of_bounds_bytes', value: outOfBounds(), code: 'invalid_key' },
      { id: 'lying_length_bytes', value: lying(), code: null },
      { id: 'foreign_bytes', value: foreign('new Uint8Array([1, 2])'), code: null },
      { id: 'foreign_uint16_array', value: foreign('new Uint16Array(1)'), code: 'invalid_key' },
      { id: 'shared_bytes', value: new Uint8Array(new SharedArrayBuffer(4)), code: null },
      { id: 'buffer', value: Buffer.from('key'), code: null },
      { id: 'clamped', value: new Uint8ClampedArray(2), code: 'invalid_key' },
      { id: 'data_view', value: new DataView(new ArrayBuffer(2)), code: 'invalid_key' },
      { id: 'array_buffer', value: new ArrayBuffer(2), code: 'invalid_key' },
    ],
    counts: [
      ...notData.map(([id, value]) => ({ id, value, code: 'invalid_argument' })),
      { id: 'bigint', value: 1n, code: 'invalid_argument' },
      { id: 'negative_zero', value: -0, code: undefined },
    ],
    u64_arguments: [
      ...notData.map(([id, value]) => ({ id, value, code: 'invalid_key' })),
      { id: 'number', value: 3, code: 'invalid_key' },
      { id: 'decimal_text', value: '12', code: null },
      { id: 'signed_text', value: '+12', code: 'invalid_key' },
    ],
    texts: notData.map(([id, value]) => ({ id, value, code: 'invalid_argument' })),
    documents: [
      ...notData.map(([id, value]) => ({ id, value, code: 'invalid_topology' })),
      ...notData.map(([id, value]) => ({ id: `${id}_weight`, value: withNode({ id: 'a', weight: value }),
        code: 'invalid_topology' })),
      { id: 'bigint_weight', value: withNode({ id: 'a', weight: 2n }), code: 'invalid_topology' },
      { id: 'bigint_epoch', value: { ...document, epoch: 9n }, code: undefined },
      { id: 'undefined_member', value: { ...document, hashing: undefined }, code: undefined },
      { id: 'undefined_node', value: { ...document, nodes: [{ id: 'a' }, undefined] }, code: 'invalid_topology' },
      { id: 'throwing_getter', value: throwingGetter(document, 'nodes'), code: 'invalid_topology' },
      { id: 'cycle', value: cyclic(document), code: 'invalid_topology' },
      { id: 'class_instance', value: Object.assign(Object.create({ kind: 'class' }), document), code: 'invalid_topology' },
      { id: 'null_prototype', value: Object.assign(Object.create(null), document), code: undefined },
      { id: 'array_proxy_nodes', value: { ...document, nodes: new Proxy([{ id: 'a' }, { id: 'b' }], {}) }, code: undefined },
      { id: 'sparse_nodes', value: { ...document, nodes: Object.assign([], { length: 2 ** 32 - 1 }) }, code: 'limit_exceeded' },
      { id: 'text_past_the_limit', value: withNode({ id: 'x'.repeat(64 * 2 ** 20) }), code: 'limit_exceeded' },
    ],
    operations: [
      ...notData.map(([id, value]) => ({ id, value, code: 'invalid_argument' })),
      { id: 'nan_in_function', value: { op: 'add_node', node: { id: 'd', weight: () => NaN } }, code: 'invalid_argument' },
      { id: 'cycle', value: (() => { const op = { op: 'add_node' }; op.node = op; return op; })(), code: 'invalid_argument' },
      { id: 'throwing_getter', value: throwingGetter({ op: 'add_node' }, 'node'), code: 'invalid_argument' },
    ],
    key_arrays: [
      ...notData.map(([id, value]) => ({ id, value, code: 'invalid_argument' })),
      { id: 'array_proxy', value: new Proxy(['a', 'b'], {}), code: undefined },
      { id: 'throwing_element', value: Object.defineProperty(['a', 'b'], 1, { get() { throw new Error('no'); } }),
        code: 'invalid_key' },
      { id: 'throwing_length', value: new Proxy(['a'], { get(t, n) { if (n === 'length') throw new Error('no'); return t[n]; } }),
        code: 'invalid_argument' },
      { id: 'huge_length', value: new Proxy(['a'], { get(t, n) { return n === 'length' ? 2 ** 40 : t[n]; } }),
        code: 'invalid_argument' },
      { id: 'sparse', value: Object.assign([], { length: 2 ** 32 - 1 }), code: 'invalid_key' },
      { id: 'arguments_object', value: (function args() { return arguments; })('a'), code: 'invalid_argument' },
      { id: 'uint64_array', value: BigUint64Array.of(1n), code: 'invalid_argument' },
    ],
    packed_data: [
      { id: 'detached', value: detached(), code: 'invalid_argument' },
      { id: 'out_of_bounds', value: outOfBounds(), code: 'invalid_argument' },
      { id: 'lying_length', value: lying(), code: null },
      { id: 'foreign', value: foreign('new Uint8Array([97, 98])'), code: null },
      { id: 'buffer', value: Buffer.from('ab'), code: null },
    ],
    packed_offsets: [
      { id: 'detached', value: (() => { const o = Uint32Array.of(0, 1); structuredClone(o.buffer, { transfer: [o.buffer] }); return o; })(),
        code: 'invalid_argument' },
      { id: 'lying_length', value: Object.defineProperty(Uint32Array.of(0, 1), 'length', { value: 9 }), code: null },
      { id: 'foreign', value: foreign('new Uint32Array([0, 1, 2])'), code: null },
      { id: 'int32_array', value: Int32Array.of(0, 1), code: 'invalid_argument' },
      { id: 'list', value: [0, 1], code: 'invalid_argument' },
    ],
    u64_arrays: [
      { id: 'detached', value: (() => { const k = BigUint64Array.of(1n); structuredClone(k.buffer, { transfer: [k.buffer] }); return k; })(),
        code: 'invalid_argument' },
      { id: 'empty', value: new BigUint64Array(0), code: null },
      { id: 'lying_length', value: Object.defineProperty(BigUint64Array.of(1n), 'length', { value: 100 }), code: null },
      { id: 'foreign', value: foreign('new BigUint64Array([1n, 2n])'), code: null },
      { id: 'shared', value: new BigUint64Array(new SharedArrayBuffer(16)), code: null },
    ],
    routers: [
      ...notData.map(([id, value]) => ({ id, value, code: 'invalid_argument' })),
      { id: 'fake_router', value: { __wbg_ptr: 8 }, code: 'invalid_argument' },
    ],
    binary_dictionaries: [
      ...notData.map(([id, value]) => ({ id, value, code: 'invalid_argument' })),
      { id: 'detached', value: detached(), code: 'invalid_argument' },
      { id: 'out_of_bounds', value: outOfBounds(), code: 'invalid_argument' },
    ],
  };
}

/**
 * Defines the hostile-argument tests for one package (`api`, `runtime`: its column of
 * runtimes.mjs); `declarations` is its index.d.ts text.
 */
export function hostileSuite(api, runtime, declarations) {
  describe('hostile arguments (conformance/hostile/calls.json), the same in both packages', () => {
    const other = otherPackage(runtime);
    const mine = new Fixtures(api);
    const theirs = new Fixtures(other);
    const cases = tableCases();

    /** Runs one call in both packages: this one's outcome, asserted equal to the other's. */
    const both = (call, value, theirValue = value) => {
      const here = outcome(api, () => invoke(mine, call, value));
      const there = outcome(other, () => invoke(theirs, call, theirValue));
      assert.deepEqual(here, there, `${runtime.packageName} and the other package differ`);
      return here;
    };

    test(`every case of the table (${cases.length}) throws its code, word for word as the other package`, () => {
      const failures = [];
      for (const { name, call, value, code, messageContains } of cases) {
        try {
          const got = both(call, mine.value(value), theirs.value(value));
          assert.equal(got.code, code ?? undefined, got.message);
          if (messageContains !== undefined) assert.ok(got.message.includes(messageContains), got.message);
        } catch (err) {
          failures.push(`${name}: ${err.message}`);
        }
      }
      assert.deepEqual(failures, []);
    });

    test('every public call of index.d.ts is in the table', () => {
      const called = new Set(cases.map(({ call }) => {
        const [owner, method] = call.call.includes('.') ? call.call.split('.') : [undefined, call.call];
        return owner ? `${owner}.${camel(method)}` : camel(method);
      }));
      const declared = new Set();
      for (const [, kind, name] of declarations.matchAll(/^export declare (class|function) (\w+)/gm)) {
        if (kind === 'function') declared.add(name);
        // The session's and the follower's classes hold state between calls, and a
        // migration session is made of a Migration: session-suite.mjs, follower-suite.mjs
        // and migration-session-suite.mjs give every one of their calls its bad
        // arguments, and check that they cover them all.
        if (kind !== 'class' || name === 'ShardrouteError') continue;
        if ([...SESSION_CLASSES, ...FOLLOWER_CLASSES, ...MIGRATION_SESSION_CLASSES, ...SOURCE_CLASSES, ...SERVICE_CLASSES].includes(name)) continue;
        declared.add(name);
        const body = new RegExp(`^export declare class ${name} [^{]*\\{\\n([\\s\\S]*?)^\\}`, 'm').exec(declarations)[1];
        for (const [, member] of body.matchAll(/^ {2}(?:get |static )?(\w+)\(/gm)) {
          if (member !== 'constructor') declared.add(`${name}.${member}`);
        }
      }
      assert.deepEqual([...declared].filter((name) => !called.has(name)), [], 'declared calls without hostile cases');
      assert.deepEqual([...called].filter((name) => !declared.has(name)), [], 'table calls index.d.ts does not declare');
      assert.ok(declared.size >= 40);
    });

    test('undefined in every argument of every call: the same outcome in both packages, never a code-less error', () => {
      const failures = [];
      const seen = new Set();
      for (const { name, call } of cases) {
        const key = JSON.stringify(call);
        if (seen.has(key)) continue;
        seen.add(key);
        try {
          both(call, undefined);
        } catch (err) {
          failures.push(`${name}: ${err.message}`);
        }
      }
      assert.deepEqual(failures, []);
    });

    test('JavaScript-only values, per group of the table', () => {
      const extras = jsOnlyValues();
      const failures = [];
      let count = 0;
      for (const group of TABLE.groups) {
        for (const { id, value, code } of extras[group.name] ?? []) {
          for (const call of group.calls) {
            if ((call.only ?? 'js') !== 'js') continue;
            count += 1;
            try {
              const got = both(call, value);
              if (code !== undefined) assert.equal(got.code, code ?? undefined, got.message);
            } catch (err) {
              failures.push(`${group.name}/${call.call}/${id}: ${err.message}`);
            }
          }
        }
      }
      assert.deepEqual(failures, []);
      assert.ok(count > 300, `${count} calls`);
    });

    // The bindings' findings of issue 17, one test each (the table covers them among the rest).
    const found = (title, code, call) => test(title, () => {
      const here = outcome(api, () => call(api, mine));
      assert.equal(here.code, code, here.message);
      assert.deepEqual(outcome(other, () => call(other, theirs)), here, 'the two packages differ');
    });
    found('a detached Uint8Array key is invalid_key, never the empty key', 'invalid_key', (_, f) => {
      const bytes = Uint8Array.of(1, 2);
      structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
      return f.routers.ring.route(bytes);
    });
    found('an array of keys whose getter throws is invalid_key with a code', 'invalid_key',
      (_, f) => f.routers.ring.routeMany(Object.defineProperty(['a', 'b'], 1, { get() { throw new Error('no'); } })));
    found('a Proxy array as a key is invalid_key', 'invalid_key', (_, f) => f.routers.ring.route(new Proxy(['a'], {})));
    found('undefined as a key: the same words', 'invalid_key', (_, f) => f.routers.ring.route(undefined));
    found('a replica count past the nodes: the same words', 'invalid_argument', (_, f) => f.routers.ring.replicas('k', 9));
    found('a BigInt id out of range: the same words', 'invalid_key', (_, f) => f.routers.ids.decodeId(2n ** 64n));

    test('a NaN or an infinite weight in an object is refused as in its JSON text, naming the field', () => {
      const document = { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'ring' } };
      for (const weight of [NaN, Infinity, -Infinity]) {
        const bad = { ...document, nodes: [{ id: 'a' }, { id: 'b', weight }] };
        const err = outcome(api, () => new api.Router(bad));
        assert.deepEqual(err, { code: 'invalid_topology', message: `nodes[1].weight: ${weight} is not a JSON number` });
        assert.deepEqual(outcome(api, () => api.apply(bad, { op: 'add_node', node: { id: 'c' } })), err);
        assert.deepEqual(outcome(api, () => api.apply({ ...document, nodes: [{ id: 'a' }] }, { op: 'add_node', node: { id: 'c', weight } })),
          { code: 'invalid_argument', message: `node.weight: ${weight} is not a JSON number` });
      }
    });
  });
}
