// test/size-budget.mjs, the check of size-budget.json that test.sh runs: it passes on the
// committed budget, and fails, saying how to raise the budget, on a build more than the
// tolerance over its budget or a budget without a reason (budgets written to a scratch
// file from the committed one).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const check = fileURLToPath(new URL('./size-budget.mjs', import.meta.url));
const committed = JSON.parse(readFileSync(new URL('../size-budget.json', import.meta.url), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'size-budget-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The sizes of a build as the check measures them, so the cases below hold whatever the
 * committed budget's slack is. */
function measured(build) {
  const wasm = readFileSync(new URL(`../${committed.builds[build].file}`, import.meta.url));
  return { raw: wasm.length, gzip: gzipSync(wasm, { level: 9 }).length };
}

/** The check run on `budget` (the committed one when omitted): its exit code and output. */
function run(budget) {
  const args = [check];
  if (budget) {
    const path = join(scratch, 'size-budget.json');
    writeFileSync(path, JSON.stringify(budget));
    args.push(path);
  }
  const child = spawnSync(process.execPath, args, { encoding: 'utf8' });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

test('the committed budget holds for both builds', () => {
  const { status, stdout, stderr } = run();
  assert.equal(status, 0, stderr);
  assert.match(stdout, /^size budget: full /m);
  assert.match(stdout, /^size budget: route /m);
});

test('a build over its budget by more than the tolerance fails, saying how to raise the budget', () => {
  const budget = structuredClone(committed);
  budget.builds.route.raw = Math.floor(measured('route').raw / 1.065);
  const { status, stderr } = run(budget);
  assert.equal(status, 1);
  assert.match(stderr, /route: pkg-route\/web\/shardroute_route_bg\.wasm is [\d,]+ bytes raw, \+6\.\d% over its budget/);
  assert.match(stderr, /raise the budget: edit .*size-budget\.json, set builds\.route\.raw to \d+ and say why in builds\.route\.reason/);
  assert.doesNotMatch(stderr, /full:/, 'the full build is within its budget');
});

test('growth within the tolerance passes; a budget without a reason does not', () => {
  const within = structuredClone(committed);
  within.builds.full.gzip = Math.ceil(measured('full').gzip / 1.04);
  assert.equal(run(within).status, 0);
  const unexplained = structuredClone(committed);
  unexplained.builds.full.reason = '';
  const { status, stderr } = run(unexplained);
  assert.equal(status, 1);
  assert.match(stderr, /full: no reason for its budget/);
});
