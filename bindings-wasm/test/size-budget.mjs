// Checks each build's .wasm against its budget in size-budget.json (raw bytes, and gzip:
// zlib at level 9): more than the file's `tolerance` over either fails, with what to do if
// the growth is wanted (raise the budget in the file, with a reason, so the raise is a
// visible diff). Run by test.sh after build.sh, so `make test-wasm` and `make check` check
// it; `node test/size-budget.mjs [budget.json]` by hand. Exits 1 on any build over budget.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const budgetPath = process.argv[2] ?? join(packageDir, 'size-budget.json');
const shown = relative(process.cwd(), budgetPath) || budgetPath;
const budget = JSON.parse(readFileSync(budgetPath, 'utf8'));
const bytes = (n) => n.toLocaleString('en-US');
const percent = (size, limit) => `${size >= limit ? '+' : ''}${((size / limit - 1) * 100).toFixed(1)}%`;

const problems = [];
for (const [name, build] of Object.entries(budget.builds)) {
  const [stampFile, variant] = build.stamp;
  let stamp = '';
  try {
    stamp = readFileSync(join(packageDir, stampFile), 'utf8').trim();
  } catch {
    // Checked below.
  }
  if (stamp !== variant) {
    problems.push(`${name}: ${stampFile} says "${stamp || 'nothing'}", not "${variant}": run build.sh (without SHARDROUTE_WASM_FEATURES or SHARDROUTE_WASM_ROUTE_STRATEGIES) first`);
    continue;
  }
  if (typeof build.reason !== 'string' || build.reason.trim() === '') {
    problems.push(`${name}: no reason for its budget in ${shown} (builds.${name}.reason)`);
  }
  const wasm = readFileSync(join(packageDir, build.file));
  const sizes = { raw: wasm.length, gzip: gzipSync(wasm, { level: 9 }).length };
  const line = [];
  for (const kind of ['raw', 'gzip']) {
    const limit = Math.floor(build[kind] * (1 + budget.tolerance));
    line.push(`${bytes(sizes[kind])} ${kind} (budget ${bytes(build[kind])}, ${percent(sizes[kind], build[kind])})`);
    if (sizes[kind] > limit) {
      problems.push(`${name}: ${build.file} is ${bytes(sizes[kind])} bytes ${kind}, ${percent(sizes[kind], build[kind])} over its `
        + `budget of ${bytes(build[kind])} (at most ${budget.tolerance * 100}% over: ${bytes(limit)}). Make it smaller, or, if the `
        + `growth is worth it, raise the budget: edit ${shown}, set builds.${name}.${kind} to ${sizes[kind]} and say why in `
        + `builds.${name}.reason; the raise is then a visible diff.`);
    } else if (sizes[kind] < build[kind] * (1 - budget.tolerance)) {
      line.push(`(more than ${budget.tolerance * 100}% under: lower builds.${name}.${kind} to keep the gain)`);
    }
  }
  console.log(`size budget: ${name} ${line.join(', ')}`);
}
for (const problem of problems) console.error(`size budget FAILED: ${problem}`);
process.exitCode = problems.length ? 1 : 0;
