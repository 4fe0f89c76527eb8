// The conformance runner of the Node addon: every case of every vector file, through the
// shared JavaScript runner, against the package as a user imports it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as shardroute from '../index.js';
import { runVectors, summaryLine } from '../../conformance/runner.mjs';

const RUNNER = 'node';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const vectorsDir = path.join(root, 'conformance', 'vectors');

function loadVectorFiles() {
  return fs
    .readdirSync(vectorsDir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => JSON.parse(fs.readFileSync(path.join(vectorsDir, name), 'utf8')));
}

test('conformance vectors', () => {
  const result = runVectors(shardroute, loadVectorFiles(), process.env.SHARDROUTE_VECTORS_FILTER ?? '');
  for (const { name, reason } of result.failures) console.log(`FAILED ${name}: ${reason}`);
  console.log(summaryLine(RUNNER, result));

  const countsDir = path.join(root, 'target', 'conformance');
  fs.mkdirSync(countsDir, { recursive: true });
  const counts = { runner: RUNNER, passed: result.passed, failed: result.failed, skipped: result.skipped };
  fs.writeFileSync(path.join(countsDir, `${RUNNER}.json`), `${JSON.stringify(counts)}\n`);

  assert.equal(result.failed, 0, `${result.failed} conformance case(s) failed`);
  assert.ok(result.passed > 0, `no conformance case ran (vectors in ${vectorsDir})`);
});
