// `shardroute-wasm/http` where edge workers run it, from an `npm pack` tarball installed
// into a scratch project of its own (target/wasm-edge-http/app): test/edge/http-worker.mjs
// follows a document through its own `fetch` in workerd (bundled as wrangler bundles it)
// and in Deno, so the entry imports the package's main entry by name and gets the
// runtime's one instance of the module (the entry its condition picks, which loads the
// .wasm there). What the follower does over real HTTP is test/http.test.mjs's, in Node.
// Every wait is bounded and every process started here is stopped by its own handle.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { Router } from 'shardroute-wasm';
import { repoRoot } from '../../conformance/js/vectors.mjs';
import { bundleForWorkerd, denoBinary, installPacked, startWorkerd, stop } from './edge/runtimes.mjs';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const scratch = join(repoRoot, 'target', 'wasm-edge-http');
const app = join(scratch, 'app');

/** What http-worker.mjs answers when the follower installed its document. */
const expected = () => {
  const router = new Router({ format: 'shardroute/1', epoch: 4, nodes: [{ id: 'a' }, { id: 'b' }], strategy: { type: 'jump' } });
  return ['4', router.node('user:1'), '"4"', 'http', 'function'];
};

before(() => {
  installPacked(packageDir, scratch, app, 'edge-http-app');
  copyFileSync(fileURLToPath(new URL('./edge/http-worker.mjs', import.meta.url)), join(app, 'http-worker.mjs'));
});

let workerd;
after(() => stop(workerd));

test('workerd: a module worker importing shardroute-wasm/http, bundled as wrangler bundles', async () => {
  const out = join(scratch, 'workerd');
  const wasmModules = await bundleForWorkerd(join(app, 'http-worker.mjs'), out);
  assert.deepEqual(wasmModules, ['shardroute_wasm_bg.wasm'], 'one .wasm: the entry and ./http share the module');
  let response;
  ({ child: workerd, response } = await startWorkerd(out));
  assert.deepEqual(JSON.parse(response), expected());
});

test('Deno: the same module, imported from the scratch project', async () => {
  const script = "import worker from './http-worker.mjs'; console.log(await (await worker.fetch()).text());";
  const env = { ...process.env, DENO_DIR: join(scratch, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
  const { stdout } = await promisify(execFile)(denoBinary(), ['eval', script], { cwd: app, env, timeout: 60_000 });
  assert.deepEqual(JSON.parse(stdout), expected());
});
