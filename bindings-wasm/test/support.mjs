// Shared by the two conformance runners (conformance.test.mjs under Node, browser.mjs in
// Chromium): where the vectors are, and how a run is reported. Paths are relative to this
// file, never to the working directory.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { summaryLine } from '../../conformance/runner.mjs';

export const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = join(packageDir, '..');
export const vectorsDir = join(repoRoot, 'conformance', 'vectors');

/** Only cases whose name contains this substring run (empty: all). */
export const filter = process.env.SHARDROUTE_VECTORS_FILTER ?? '';

/** The vector file names (`*.json`), sorted. */
export function vectorFileNames() {
  return readdirSync(vectorsDir)
    .filter((name) => name.endsWith('.json'))
    .sort();
}

/** Every vector file, parsed. */
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
