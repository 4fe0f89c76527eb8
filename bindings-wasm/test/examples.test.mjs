// The README's Node.js example and examples/demo.mjs, run as a user would run them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { Router } from 'shardroute-wasm';
import { packageDir, repoRoot } from './support.mjs';

const demoDir = join(repoRoot, 'conformance', 'demo');

test('the README example runs and prints what its comments say', () => {
  const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
  assert.equal(blocks.length, 1, 'README.md has one ```js block');
  // Run from the package directory, so `import ... from 'shardroute-wasm'` resolves to this
  // package by its own name, as it would in a user's project.
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
  const keys = JSON.parse(readFileSync(join(demoDir, 'keys.json'), 'utf8'));
  const router = new Router(readFileSync(join(demoDir, 'topology.json'), 'utf8'));
  assert.deepEqual(
    rows,
    keys.map((key) => ({ key, shard: router.route(key), node: router.node(key), replicas: router.replicas(key, 2) })),
  );
  for (const row of rows) assert.equal(row.replicas[0], row.node);
});
