// `shardroute-wasm/service` where edge workers run it, from an `npm pack` tarball installed
// into a scratch project of its own (target/wasm-edge-service/app): test/edge/service-worker.mjs
// serves the routing service in workerd (bundled as wrangler bundles it) and under
// Deno.serve, each on a port it binds itself, and this test asks both over HTTP: the
// answers are the Router's and byte for byte the handler's in Node, from several clients at
// once; a batch at the key limit; hostile requests (a key that is not UTF-8, a declared
// body past the limit) get the core's refusal. The handler's deadline and its streaming
// limit are test/service.test.mjs's. Every process started here is stopped by its handle.
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Router } from 'shardroute-wasm';
import { handler, serviceLimits } from 'shardroute-wasm/service';
import { repoRoot } from '../../conformance/js/vectors.mjs';
import { DOCUMENT } from './edge/service-worker.mjs';
import { bundleForWorkerd, denoBinary, denoListening, installPacked, startServing, startWorkerd, stop } from './edge/runtimes.mjs';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const scratch = join(repoRoot, 'target', 'wasm-edge-service');
const app = join(scratch, 'app');
const router = new Router(DOCUMENT);
const local = handler(router);
const { maxBodyBytes, maxKeys } = serviceLimits();

before(() => {
  installPacked(packageDir, scratch, app, 'edge-service-app');
  for (const file of ['service-worker.mjs', 'service-deno.mjs']) {
    copyFileSync(fileURLToPath(new URL(`./edge/${file}`, import.meta.url)), join(app, file));
  }
});

/** `head` written on a raw socket; what came back before the server closed or 5 s passed. */
function raw(base, head) {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const chunks = [];
    const done = () => resolve(Buffer.concat(chunks).toString('latin1'));
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (Buffer.concat(chunks).includes('\r\n\r\n{')) socket.end();
    });
    socket.on('error', done);
    socket.on('close', done);
    socket.write(head);
  });
}

/** What a served service at `base` must answer. */
async function assertServes(base) {
  const clients = [0, 1, 2, 3].map(async (client) => {
    for (let i = 0; i < 150; i++) {
      const key = `tenant-${client}/user:${i} é&=+?`;
      const target = `/route?key=${encodeURIComponent(key)}`;
      const served = await fetch(new URL(target, base));
      assert.equal(served.status, 200);
      const bytes = new Uint8Array(await served.arrayBuffer());
      const answer = JSON.parse(Buffer.from(bytes).toString('utf8'));
      assert.equal(answer.node, router.node(key), key);
      assert.equal(answer.shard, router.route(key), key);
      assert.equal(answer.epoch, 21);
      const mine = await local(new Request(`http://local${target}`));
      assert.deepEqual(bytes, new Uint8Array(await mine.arrayBuffer()), `the same bytes as in Node: ${key}`);
      assert.equal(served.headers.get('etag'), mine.headers.get('etag'));
    }
  });
  const keys = Array.from({ length: maxKeys }, (_, i) => `order:${i}`);
  const batch = await fetch(new URL('/route', base), { method: 'POST', body: JSON.stringify({ keys }) });
  await Promise.all(clients);
  assert.equal(batch.status, 200);
  assert.deepEqual((await batch.json()).answers.map(({ shard }) => shard), keys.map((key) => router.route(key)));
  const notText = await fetch(new URL('/route?key=%FF', base));
  assert.equal(notText.status, 400);
  assert.equal((await notText.json()).error.code, 'invalid_key');
  const tooMany = await fetch(new URL('/route', base), { method: 'POST', body: JSON.stringify({ keys: [...keys, 'one more'] }) });
  assert.equal(tooMany.status, 413);
  assert.equal((await tooMany.json()).error.code, 'limit_exceeded');
  const declared = await raw(base, `POST /route HTTP/1.1\r\nHost: x\r\nContent-Length: ${maxBodyBytes + 1}\r\n\r\n{"keys": [`);
  assert.match(declared, /^HTTP\/1\.1 413 /);
  assert.equal(JSON.parse(declared.slice(declared.indexOf('\r\n\r\n') + 4)).error.code, 'limit_exceeded');
}

let workerd;
let deno;
after(async () => {
  await stop(workerd);
  await stop(deno);
});

test('workerd: a module worker exporting the handler, bundled as wrangler bundles', async () => {
  const out = join(scratch, 'workerd');
  const wasmModules = await bundleForWorkerd(join(app, 'service-worker.mjs'), out);
  assert.deepEqual(wasmModules, ['shardroute_wasm_bg.wasm'], 'one .wasm: the entry and ./service share the module');
  let urls;
  ({ child: workerd, urls } = await startWorkerd(out));
  await assertServes(urls[0]);
});

test('Deno: the same handler under Deno.serve', async () => {
  const env = { ...process.env, DENO_DIR: join(scratch, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
  let url;
  ({ child: deno, url } = await startServing(denoBinary(),
    ['run', '--no-prompt', '--allow-net=127.0.0.1', 'service-deno.mjs'], denoListening, { cwd: app, env }));
  await assertServes(url);
});
