// Bundles the edge worker (worker.mjs) for workerd as wrangler bundles a module worker
// (bindings-wasm/test/edge/runtimes.mjs: esbuild with the workerd condition, the .wasm a
// module of its own) into OUT, with OUT/config.capnp serving it on 127.0.0.1 port 0 and
// letting it reach local addresses (the serves and the shard services). Prints
// {"event": "bundled", "workerd": <the binary of npm's workerd>, "config"}; run.py then
// starts `workerd serve config.capnp --control-fd N` in OUT itself (workerd says there
// which port it bound), and stops it by its PID.
//
//     node bundle.mjs OUT
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { bundleForWorkerd, workerdBinary } from '../../bindings-wasm/test/edge/runtimes.mjs';

const [out] = process.argv.slice(2);
const here = fileURLToPath(new URL('.', import.meta.url));
await bundleForWorkerd(join(here, 'worker.mjs'), out, 1, { network: true });
console.log(JSON.stringify({ event: 'bundled', workerd: workerdBinary(), config: join(out, 'config.capnp') }));
