// Runs follow-worker.mjs in workerd (npm's `workerd`, bundled with esbuild as wrangler
// bundles a worker: bindings-wasm/test/edge/runtimes.mjs) and speaks for it to run.py as
// the other followers do: it opens the worker's /follow stream against the URL that
// `shardroute serve` serves, and prints its JSON lines ({"event": "ready" | "installed" |
// "refused", ...}). A line on stdin prints {"event": "done", "stats"} (the stats of the
// worker's last line), cancels the request and stops workerd by its PID.
//
//     node follow-workerd.mjs http://127.0.0.1:PORT/
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { bundleForWorkerd, startWorkerd, stop } from '../../bindings-wasm/test/edge/runtimes.mjs';

const serving = process.argv[2];
const here = fileURLToPath(new URL('.', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'shardroute-follow-workerd-'));
await bundleForWorkerd(join(here, 'follow-worker.mjs'), out, 1, { network: true });
// workerd binds a port of its own and reports it (startWorkerd): none is guessed beforehand.
const { child, urls: [url] } = await startWorkerd(out);
process.on('exit', () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(out, { recursive: true, force: true });
});

const cancel = new AbortController();
let stats = {};
const lines = (async () => {
  const response = await fetch(`${url}follow?url=${encodeURIComponent(serving)}`, { signal: cancel.signal });
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of response.body) {
    pending += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = pending.indexOf('\n')) >= 0) {
      const text = pending.slice(0, end);
      pending = pending.slice(end + 1);
      const { stats: latest, ...event } = JSON.parse(text);
      if (latest) stats = latest;
      console.log(JSON.stringify(event));
    }
  }
})().catch((err) => {
  if (!cancel.signal.aborted) {
    console.error(`follow-workerd.mjs: ${err.message}`);
    process.exit(1);
  }
});

for await (const _ of createInterface({ input: process.stdin })) break;
console.log(JSON.stringify({ event: 'done', stats }));
cancel.abort();
await lines;
await stop(child);
process.exit(0);
