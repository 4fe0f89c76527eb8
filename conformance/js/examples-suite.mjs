// The examples of both JavaScript packages, run as a user would run them: the README's
// one JavaScript example, and examples/demo.mjs. Each package's test/examples.test.mjs
// calls `examplesSuite(api, packageDir)`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { demoKeys, demoRows } from './demo.mjs';

/** Defines the example tests for the package in `packageDir`, whose module is `api`. */
export function examplesSuite(api, packageDir) {
  test('the README example runs and prints what its comments say', () => {
    const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
    assert.equal(blocks.length, 1, 'README.md has one ```js block');
    // Run from the package directory, so that the example's import of the package by its
    // own name resolves to this package, as it would in a user's project.
    const output = execFileSync(process.execPath, ['--input-type=module', '--eval', blocks[0]], {
      cwd: packageDir,
      encoding: 'utf8',
    });
    const lines = output.trimEnd().split('\n');
    assert.equal(lines[0], 'true true');
    assert.match(lines[1], /^\d+ 3n$/);
    assert.match(lines[2], /^Uint32Array\(3\) \[ \d+, \d+, \d+ \]$/);
    assert.deepEqual(lines.slice(3), ['cbf43926', '55', 'true invalid_key']);
  });

  test('examples/demo.mjs prints one JSON array of the demo keys routed', () => {
    const output = execFileSync(process.execPath, [join(packageDir, 'examples', 'demo.mjs')], { encoding: 'utf8' });
    const rows = JSON.parse(output);
    assert.deepEqual(rows.map((row) => row.key), demoKeys());
    assert.deepEqual(rows, demoRows(api.Router));
    for (const row of rows) {
      assert.equal(row.replicas[0], row.node);
      assert.equal(row.replicas.length, 2);
    }
  });
}
