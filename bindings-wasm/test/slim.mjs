// A slim package, as build.sh makes it with SHARDROUTE_WASM_FEATURES=jump,redis_cluster,vbucket
// (test.sh builds it, runs this, then builds the full package again): the conformance
// vectors of those strategies and of key hashing pass, except the calls that need the
// topology operations this build leaves out, and so do the topology follower's
// scenarios and the migration session's over those strategies; other strategies are
// refused as not built in, and `apply`, `Router.moved` and `new ClusterSession` say that
// they are not built in. Exits non-zero on any failure. Reads the nodejs build directly:
// `node test/slim.mjs`.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { runVectors, summaryLine } from '../../conformance/runner.mjs';
import { vectorsDir } from '../../conformance/js/vectors.mjs';

const STRATEGIES = ['jump', 'redis_cluster', 'vbucket'];
const OPERATIONS = new Set(['apply', 'moved']);
const packageDir = new URL('..', import.meta.url).pathname;
assert.equal(readFileSync(join(packageDir, 'pkg', '.stamp'), 'utf8').trim(), `slim-${STRATEGIES.join('-')}`,
  'pkg/ is not the slim build: run SHARDROUTE_WASM_FEATURES=jump,redis_cluster,vbucket ./build.sh');
const api = createRequire(import.meta.url)(join(packageDir, 'pkg', 'node', 'shardroute_wasm.js'));

// The follower and the migration session need routing only: they are in the slim package
// whole. The follower's scenarios' documents are jump and vbucket; the migration
// session's cases run where their topologies (before, after, dictionary; topology,
// previous, held for a session made from topologies) are of the strategies built in (the
// vbucket dictionary in motion).
const builtIn = (file, kase) => ['before', 'after', 'dictionary', 'topology', 'previous', 'held']
  .every((side) => typeof kase[side] !== 'string' || file.topologies?.[kase[side]] === undefined
    || STRATEGIES.includes(file.topologies[kase[side]].strategy.type));
const files = [...STRATEGIES, 'hashing', 'session_follower', 'session_migration'].map((name) => {
  const file = JSON.parse(readFileSync(join(vectorsDir, `${name}.json`), 'utf8'));
  return { ...file, cases: file.cases.filter((kase) => !OPERATIONS.has(kase.op) && builtIn(file, kase)) };
});
assert.ok(files.at(-1).cases.length > 0, 'no migration session case runs');
const result = runVectors(api, files);
for (const { name, reason } of result.failures) console.error(`FAIL ${name}: ${reason}`);
console.log(summaryLine('wasm-slim', result));
assert.equal(result.failed, 0);
assert.ok(result.passed > 500, `only ${result.passed} cases ran`);

const doc = (type) => ({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type } });
const refused = (fn, code, pattern) => assert.throws(fn, (err) => err instanceof api.ShardrouteError && err.code === code
  && pattern.test(err.message));
for (const type of ['ring', 'modulo', 'ketama']) {
  refused(() => new api.Router(doc(type)), 'invalid_topology', new RegExp(`"${type}" is not built in`));
}
refused(() => new api.Router(doc('nope')), 'invalid_topology', /expected one of jump, vbucket, redis_cluster$/);
refused(() => api.apply(doc('jump'), { op: 'add_node', node: { id: 'c' } }), 'invalid_argument', /^apply is not built into/);
const cluster = new api.Router({ ...doc('redis_cluster'), nodes: [{ id: 'a', address: '10.0.0.1:6379' }] });
refused(() => cluster.moved(1, '10.0.0.2:6379'), 'invalid_argument', /^Router.moved is not built into/);
refused(() => new api.ClusterSession(['10.0.0.1:6379']), 'invalid_argument', /^ClusterSession is not built into/);

const wasm = join(packageDir, 'pkg', 'web', 'shardroute_wasm_bg.wasm');
console.log(`wasm-slim: ok; ${wasm.slice(packageDir.length)} is ${statSync(wasm).size} bytes`);
