// The route build, `shardroute-wasm/route` (pkg-route/), under Node, imported by the
// package's own name as a user imports it: its share of the conformance vectors
// (route/subset.mjs: the calls it has, over the strategies built in; the rest counted as
// skipped, with reasons), that it exports exactly what route.d.ts declares and none of the
// calls it leaves out, that it refuses the strategies not built in, that its objects and
// the full package's do not mix, and `shardroute-wasm/route/http` following a document
// over HTTP with the route build's follower. test/route-edge.test.mjs runs the same
// vectors in Chromium, workerd and Deno.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import * as full from 'shardroute-wasm';
import * as api from 'shardroute-wasm/route';
import * as routeHttp from 'shardroute-wasm/route/http';
import { runVectors } from '../../conformance/runner.mjs';
import { TopologyHttpServer } from '../../conformance/js/http-server.mjs';
import { repoRoot, report } from '../../conformance/js/vectors.mjs';
import { allStrategies, routeStrategies, routeSubset, skipSummary, withSkipped } from './route/subset.mjs';

const packageDir = join(repoRoot, 'bindings-wasm');
const declarations = readFileSync(join(packageDir, 'route.d.ts'), 'utf8');
const doc = (strategy, extra = {}) => ({
  format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }], strategy, ...extra,
});

/** What the route build leaves out: not exported, or not on the class (route.d.ts's header). */
const LEFT_OUT = {
  functions: ['apply', 'diff', 'encodeDictionary', 'hashKey', 'jump', 'moduloMoves', 'parseRedirect', 'parseAddress',
    'sessionDefaults', 'ClusterSession', 'Command', 'Action'],
  Router: ['routeU64s', 'routePacked', 'sameSlot', 'groupByNode', 'stats', 'shardsForRange', 'decodeId', 'locate', 'fanout',
    'saltedKey', 'saltedKeys', 'moved', 'ask', 'scatterEvery', 'scatterRange', 'scatterKeys', 'index', 'indexNames',
    'indexWritePlan'],
  Migration: ['movingShards', 'scanNodes', 'movingKeys'],
  MigrationSession: ['copyBatch', 'scanNodes', 'actions', 'lazyGroups', 'resumeAt'],
  TopologyFollower: ['publish'],
};

/** The members route.d.ts declares for class `name`: methods and getters, and statics. */
function declaredMembers(name) {
  const body = new RegExp(`^export declare class ${name} [^{]*\\{\\n([\\s\\S]*?)^\\}`, 'm').exec(declarations)?.[1];
  assert.ok(body, `route.d.ts declares class ${name}`);
  const names = (pattern) => [...new Set([...body.matchAll(pattern)].map((m) => m[1]))];
  // Methods taken from the full package's declaration (`export interface X extends
  // Pick<FullX, 'a' | 'b'> {}`, merged into the class).
  const picked = new RegExp(`^export interface ${name} extends Pick<\\w+, ([^>]*)> \\{\\}`, 'm').exec(declarations)?.[1];
  const pickedNames = picked ? [...picked.matchAll(/'(\w+)'/g)].map((m) => m[1]) : [];
  return {
    methods: [...names(/^ {2}(?:get )?(\w+)\(/gm).filter((member) => member !== 'constructor'), ...pickedNames],
    statics: names(/^ {2}static (\w+)\(/gm),
  };
}

test('the route subset of the conformance vectors passes (wasm-route-node)', () => {
  const { files, skipped } = routeSubset();
  const result = withSkipped(runVectors(api, files), skipped);
  console.log(skipSummary(skipped).join('\n'));
  assert.ok(report('wasm-route-node', result), `${result.failed} case(s) failed, ${result.passed} passed`);
  assert.ok(result.passed > 1000, `only ${result.passed} cases ran`);
});

describe('the route build\'s API', () => {
  test('it exports exactly what route.d.ts declares, and none of the calls it leaves out', () => {
    const declared = [...declarations.matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1]);
    const exported = Object.keys(api).filter((name) => name !== 'default' && name !== 'module.exports');
    assert.deepEqual(exported.sort(), declared.sort());
    for (const name of LEFT_OUT.functions) {
      assert.equal(api[name], undefined, `${name} is left out`);
      assert.ok(declarations.includes(`\`${name}\``), `route.d.ts names ${name} as left out`);
      assert.equal(typeof full[name], 'function', `the full package has ${name}`);
    }
  });

  for (const name of ['Router', 'Migration', 'MigrationSession', 'TopologyFollower']) {
    test(`${name} has the methods route.d.ts declares and none that it leaves out`, () => {
      const { methods, statics } = declaredMembers(name);
      // wasm-bindgen's own: `free` (declared), `__destroy_into_raw`, `__wrap`.
      const own = (names) => names.filter((member) => !member.startsWith('__') && member !== 'constructor');
      assert.deepEqual(own(Object.getOwnPropertyNames(api[name].prototype)).sort(), methods.sort());
      assert.deepEqual(own(Object.getOwnPropertyNames(api[name])).filter((m) => !['length', 'name', 'prototype'].includes(m)).sort(),
        statics.sort());
      for (const member of LEFT_OUT[name]) {
        assert.equal(member in api[name].prototype, false, `${name}.${member} is left out`);
        assert.ok(member in full[name].prototype, `the full package's ${name} has ${member}`);
        assert.ok(declarations.includes(`\`${member}\``), `route.d.ts names ${name}.${member} as left out`);
      }
    });
  }

  test('the strategies not built in are refused, naming the package that has them; the others route as in the full package', () => {
    const built = routeStrategies();
    assert.deepEqual([...built].sort(), ['jump', 'modulo', 'redis_cluster', 'vbucket']);
    const notIn = (type) => `strategy "${type}" is not in shardroute-wasm/route, which routes only modulo, jump, vbucket, `
      + "redis_cluster; import 'shardroute-wasm' for every strategy";
    const follower = new api.TopologyFollower();
    for (const type of allStrategies().filter((name) => !built.includes(name))) {
      assert.throws(() => new api.Router(doc({ type })), (err) => err instanceof api.ShardrouteError
        && err.code === 'invalid_topology' && err.message === `strategy.type: ${notIn(type)}`, type);
      // An index of that strategy, and a follower's refusal, say the same.
      assert.throws(() => new api.Router(doc({ type: 'jump' }, { indexes: { by_email: { strategy: { type } } } })),
        (err) => err.code === 'invalid_topology' && err.message.endsWith(notIn(type)), `index of ${type}`);
      const offered = follower.offer(doc({ type }), 1, 0);
      assert.deepEqual([offered.kind, offered.code, offered.message], ['refused', 'invalid_topology', `strategy.type: ${notIn(type)}`]);
    }
    // The sources it leaves out too.
    for (const [source, config] of [['etcd', { members: ['127.0.0.1:2379'], key: 'k' }], ['ZooKeeper', { path: '/k' }]]) {
      assert.throws(() => new api.SourceSession({ source: source.toLowerCase(), ...config }), {
        code: 'invalid_argument',
        message: `config.source: the ${source} session is not in shardroute-wasm/route, which follows only HTTP sources; `
          + "import 'shardroute-wasm' for etcd and ZooKeeper",
      });
    }
    // Table families (the core's `tables` feature) too; the full package routes them.
    const families = doc({ type: 'jump' }, { node_groups: { g: ['a'] }, table_families: { f: { tables: ['t'], group: 'g', reference: true } } });
    assert.throws(() => new api.Router(families), {
      code: 'invalid_topology',
      message: "node_groups: table families are not in shardroute-wasm/route, which routes by the document's one rule; "
        + "import 'shardroute-wasm' for node_groups, table_families and tenants",
    });
    assert.equal(new full.Router(families).table('t').node('k'), 'a');
    assert.throws(() => new api.Router(doc({ type: 'nope' })), (err) => err instanceof api.ShardrouteError
      && err.code === 'invalid_topology' && /expected one of modulo, jump, vbucket, redis_cluster$/.test(err.message));
    const keys = ['user:1', 42n, 7, new Uint8Array([1, 2, 3]), 'ключ'];
    for (const strategy of [{ type: 'modulo' }, { type: 'jump' }, { type: 'vbucket', vbuckets: 64 }, { type: 'redis_cluster' }]) {
      const [mine, theirs] = [new api.Router(doc(strategy)), new full.Router(doc(strategy))];
      assert.deepEqual(Array.from(mine.routeMany(keys)), Array.from(theirs.routeMany(keys)), strategy.type);
      assert.deepEqual(mine.nodeMany(keys), theirs.nodeMany(keys), strategy.type);
      assert.equal(mine.toJson(), theirs.toJson());
    }
  });

  test('a bad argument is a ShardrouteError of this build with a stable code, never a trap', () => {
    const router = new api.Router(doc({ type: 'jump' }));
    for (const [call, code] of [[() => router.route('\ud800'), 'invalid_key'], [() => router.route(-1), 'invalid_key'],
      [() => router.replicas('k', 3), 'invalid_argument'], [() => router.routeMany('k'), 'invalid_argument'],
      [() => router.replace(doc({ type: 'jump' }, { epoch: 0 })), 'stale_epoch'], [() => new api.Router('{'), 'invalid_topology'],
      [() => api.decodeDictionary(new Uint8Array(8)), 'invalid_topology'], [() => new api.Migration(router, router), 'stale_epoch'],
      [() => new api.TopologyFollower({ nope: 1 }), 'invalid_argument']]) {
      assert.throws(call, (err) => err instanceof api.ShardrouteError && err.code === code && !(err instanceof full.ShardrouteError));
    }
    assert.equal(router.route('user:1'), new full.Router(doc({ type: 'jump' })).route('user:1'), 'the router still works');
  });

  test('objects of the full package are not the route build\'s (each build has its own module)', () => {
    const before = new full.Router(doc({ type: 'modulo' }));
    const after = new full.Router(doc({ type: 'modulo' }, { epoch: 2 }));
    assert.throws(() => new api.Migration(before, after), (err) => err.code === 'invalid_argument');
    const migration = new api.Migration(new api.Router(doc({ type: 'modulo' })), new api.Router(doc({ type: 'modulo' }, { epoch: 2, nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] })));
    const session = new api.MigrationSession(migration, 'lazy');
    assert.equal(session.fenceEpoch, 2n);
    assert.throws(() => new full.MigrationSession(migration, 'lazy'), (err) => err.code === 'invalid_argument');
  });

  test('require and import share one module, with init and initSync no-ops under Node', async () => {
    const cjs = createRequire(join(packageDir, 'package.json'))('shardroute-wasm/route');
    assert.equal(cjs.Router, api.Router);
    await api.init();
    api.initSync();
  });
});

describe('shardroute-wasm/route/http', () => {
  test('route-http.d.ts is http.d.ts over route.d.ts, and declares the entry\'s exports', () => {
    const types = readFileSync(join(packageDir, 'route-http.d.ts'), 'utf8');
    assert.equal(types, readFileSync(join(repoRoot, 'bindings-js', 'http.d.ts'), 'utf8').replace("from './index.js';", "from './route.js';"));
    const declared = [...types.matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual(declared.sort(), Object.keys(routeHttp).filter((name) => name !== 'default').sort());
  });

  test('HttpFollower follows a document with the route build\'s follower', async () => {
    const server = await TopologyHttpServer.open({ body: JSON.stringify(doc({ type: 'jump' }, { epoch: 3 })) });
    let follower;
    try {
      follower = await routeHttp.HttpFollower.start(server.url, { intervalMs: 50, waitS: 1 });
      assert.ok(follower.router instanceof api.Router, 'a route Router');
      assert.equal(follower.router.epoch, 3n);
      server.set(JSON.stringify(doc({ type: 'ring' }, { epoch: 4 })));
      const refused = await follower.refresh();
      assert.deepEqual([refused.kind, refused.code], ['refused', 'invalid_topology']);
      server.set(JSON.stringify(doc({ type: 'modulo' }, { epoch: 5 })));
      assert.ok(await follower.waitForEpoch(5n, 5000));
      assert.equal(follower.router.node(7), new full.Router(doc({ type: 'modulo' }, { epoch: 5 })).node(7));
    } finally {
      follower?.close();
      await server.stop();
    }
  });
});
