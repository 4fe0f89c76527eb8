// The conformance vectors for the JavaScript runners under Node (each package's
// test/conformance.test.mjs, and bindings-wasm/test/browser.mjs for Chromium): where the
// vector files are, and how a run is reported. Paths are relative to this file, never to
// the working directory.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { runVectors, summaryLine } from '../runner.mjs';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const vectorsDir = join(repoRoot, 'conformance', 'vectors');

/** Only cases whose name contains this substring run (empty: all). */
export const filter = process.env.SHARDROUTE_VECTORS_FILTER ?? '';

/** The vector file names (`*.json`), sorted. */
export function vectorFileNames() {
  return readdirSync(vectorsDir)
    .filter((name) => name.endsWith('.json'))
    .sort();
}

/** Every vector file, parsed, in the order of vectorFileNames. */
export function loadVectorFiles() {
  return vectorFileNames().map((name) => JSON.parse(readFileSync(join(vectorsDir, name), 'utf8')));
}

/**
 * Prints the summary line (and each failure on stderr), writes
 * target/conformance/<runner>.json, and returns whether the run passed: no failure and at
 * least one case.
 */
export function report(runner, result) {
  for (const { name, reason } of result.failures) console.error(`FAIL ${name}: ${reason}`);
  console.log(summaryLine(runner, result));
  const outDir = join(repoRoot, 'target', 'conformance');
  mkdirSync(outDir, { recursive: true });
  const counts = { runner, passed: result.passed, failed: result.failed, skipped: result.skipped };
  writeFileSync(join(outDir, `${runner}.json`), `${JSON.stringify(counts)}\n`);
  return result.failed === 0 && result.passed > 0;
}

/** The test that runs every vector against `api` (a package's module) as runner `runner`, and reports it. */
export function conformanceTest(api, runner) {
  test(`every conformance vector passes (${runner})`, () => {
    const result = runVectors(api, loadVectorFiles(), filter);
    const ok = report(runner, result);
    assert.equal(result.failed, 0, `${result.failed} case(s) failed: ${result.failures.map((f) => f.name).join(', ')}`);
    assert.ok(ok && result.passed > 0, `no case ran (vectors in ${vectorsDir})`);
  });
}
