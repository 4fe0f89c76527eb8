// The web entries before and after `init`, under Node: js/index.mjs (the package's
// `browser`, `worker` and `default` entry, `shardroute-wasm/web`) and js/route/index.mjs
// (`shardroute-wasm/route`'s), imported by path, so nothing has loaded their module yet
// (node --test runs each file in a process of its own). Before `init` every call of every
// export that needs the module throws the build's ShardrouteError `not_initialized`,
// saying what to call; after it, the same exports work, and the route build's refusal
// of a strategy it leaves out names the package that has it. The Node entry loads on
// import and needs no `init`. test/browser.mjs checks the first in Chromium too.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import * as node from 'shardroute-wasm';
import * as web from '../js/index.mjs';
import * as route from '../js/route/index.mjs';
import { repoRoot } from '../../conformance/js/vectors.mjs';

const packageDir = join(repoRoot, 'bindings-wasm');
const doc = (type, extra = {}) => ({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type }, ...extra });

/** The exports that need no module: JavaScript classes and constants, and the loaders. */
const PLAIN = new Set(['ShardrouteError', 'Offered', 'Action', 'init', 'initSync', 'MAX_DOCUMENT_BYTES', 'MAX_JSON_NESTING']);

/**
 * Every call an entry's exports offer before `init`: each function and constructor, each
 * class's statics, and each method and getter of its prototype (on a bare object of the
 * class: the first use of the module comes before any use of `this`).
 */
function callsOf(api) {
  const calls = [];
  for (const [name, value] of Object.entries(api)) {
    if (PLAIN.has(name)) continue;
    assert.equal(typeof value, 'function', `${name} is a function or a class`);
    const source = Function.prototype.toString.call(value);
    const isClass = /^class\b/.test(source);
    if (!isClass) {
      calls.push([name, () => value('k', 1)]);
      continue;
    }
    // A class made only by the module's calls (`Command`) has no constructor of its own.
    if (/^\s*constructor\(/m.test(source)) calls.push([`new ${name}`, () => new value('k')]);
    for (const member of Object.getOwnPropertyNames(value)) {
      if (['length', 'name', 'prototype'].includes(member) || member.startsWith('__')) continue;
      calls.push([`${name}.${member}`, () => value[member]('k', 1)]);
    }
    for (const [member, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(value.prototype))) {
      if (member === 'constructor' || member.startsWith('__')) continue;
      const bare = Object.create(value.prototype);
      const call = descriptor.get ?? descriptor.value;
      calls.push([`${name}.prototype.${member}`, () => call.call(bare, 'k', 1)]);
    }
  }
  return calls;
}

for (const [label, api, entry, initFrom, wasm] of [
  ['shardroute-wasm (js/index.mjs)', web, 'shardroute-wasm', 'shardroute-wasm/web', 'pkg/web/shardroute_wasm_bg.wasm'],
  ['shardroute-wasm/route (js/route/index.mjs)', route, 'shardroute-wasm/route', 'shardroute-wasm/route',
    'pkg-route/web/shardroute_route_bg.wasm'],
]) {
  describe(`the web entry of ${label}`, () => {
    test('before init, every call throws not_initialized, saying to call init first', () => {
      const calls = callsOf(api);
      assert.ok(calls.length > 40, `only ${calls.length} calls found`);
      const message = `${entry}: the WebAssembly module is not loaded: call await init() first `
        + `(import { init } from '${initFrom}'), or initSync(module), before any other call`;
      for (const [name, call] of calls) {
        assert.throws(call, (err) => {
          assert.ok(err instanceof api.ShardrouteError, `${name}: ${err}`);
          assert.equal(err.code, 'not_initialized', name);
          assert.equal(err.message, message, name);
          return true;
        }, name);
      }
      // What needs no module works already: the error class, the constants.
      assert.equal(new api.ShardrouteError('invalid_key', 'x').code, 'invalid_key');
      assert.ok(Number.isSafeInteger(api.MAX_DOCUMENT_BYTES));
    });

    test('after init, the same exports work, and init again is a no-op', async () => {
      const bytes = readFileSync(join(packageDir, wasm));
      if (api === web) api.initSync(bytes);
      else await api.init(bytes);
      await api.init();
      const router = new api.Router(doc('jump'));
      assert.equal(router.node('user:1'), new node.Router(doc('jump')).node('user:1'));
    });
  });
}

test('the route web entry\'s refusal of a strategy it leaves out names the package to use', async () => {
  await route.init(readFileSync(join(packageDir, 'pkg-route/web/shardroute_route_bg.wasm')));
  assert.throws(() => new route.Router(doc('ring')), {
    code: 'invalid_topology',
    message: 'strategy.type: strategy "ring" is not in shardroute-wasm/route, which routes only modulo, jump, vbucket, '
      + "redis_cluster; import 'shardroute-wasm' for every strategy",
  });
});

test('the Node entry needs no init: it loads the module on import', () => {
  assert.equal(new node.Router(doc('modulo')).route(7), 1);
  assert.equal(node.jump(1n, 100), 55);
});
