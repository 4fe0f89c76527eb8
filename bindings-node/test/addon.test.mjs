// What only the addon has: Rust panics crossing N-API. The shared API suite
// (conformance/js/api-suite.mjs, run by api.test.mjs) covers everything a user calls.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

test('a panic in the addon is thrown as an Error, not an abort', () => {
  // A child process, so the panic message Rust prints stays out of this output.
  const script = `
    const addon = require('./shardroute.node');
    try { addon.__panicForTesting(); console.log('no throw'); }
    catch (err) { console.log(JSON.stringify([err instanceof Error, err.message])); }
    console.log(typeof addon.jump(1n, 100));`;
  const child = spawnSync(process.execPath, ['-e', script], { cwd: packageDir, encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const [caught, after] = child.stdout.trim().split('\n');
  assert.deepEqual(JSON.parse(caught), [true, 'shardroute-node: deliberate panic for testing']);
  assert.equal(after, 'number', 'the addon still works after a panic');
});

test('every exported Rust function and method catches panics', () => {
  const srcDir = join(packageDir, 'src');
  let exported = 0;
  for (const file of readdirSync(srcDir)) {
    const source = readFileSync(join(srcDir, file), 'utf8').replace(/\/\/.*$/gm, '');
    // Each #[napi] or #[napi(...)] attribute: when the item it marks (up to its `{`, or its
    // `;` for a const) is a fn, the attribute must say catch_unwind. Bare #[napi] also marks
    // the struct, the impl and the exported constants.
    for (const match of source.matchAll(/#\[napi(?:\(([^)]*)\))?\]/g)) {
      const item = source.slice(match.index + match[0].length).split(/[{;]/, 1)[0];
      const fn = /\bfn (\w+)/.exec(item);
      if (fn === null) continue;
      exported += 1;
      assert.match(match[1] ?? '', /\bcatch_unwind\b/, `${file}: fn ${fn[1]} lacks #[napi(catch_unwind)]`);
    }
  }
  // As many as the addon exports: its functions, and each class's constructor, methods
  // and static methods.
  // A Command is made only by ClusterSession.command: its class's constructor is napi-rs's
  // stub, which throws and runs nothing of ours.
  const addon = createRequire(import.meta.url)('../shardroute.node');
  let expected = 0;
  for (const value of Object.values(addon)) {
    if (typeof value !== 'function') continue;
    const statics = Object.getOwnPropertyNames(value).filter((name) => typeof value[name] === 'function');
    expected += (value === addon.Command ? 0 : 1) + statics.length
      + Object.getOwnPropertyNames(value.prototype ?? {}).filter((name) => name !== 'constructor').length;
  }
  assert.equal(exported, expected, 'the scan found every exported function and method');
});
