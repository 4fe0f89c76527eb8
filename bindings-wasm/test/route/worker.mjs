// The route build's share of the conformance vectors in an edge runtime, for
// test/route-edge.test.mjs: a module worker (workerd, bundled as wrangler bundles one)
// and, through deno-server.mjs, a Deno.serve server. POST the vector files (JSON, the
// route subset) and get the runner's counts and the entry's exports; any GET answers that
// it is up. Copied into
// the scratch project beside conformance/runner.mjs, importing the package by name from
// the npm tarball installed there.
import * as api from 'shardroute-wasm/route';
import { runVectors } from './runner.mjs';

export default {
  async fetch(request) {
    if (request.method !== 'POST') return new Response('up');
    const { passed, failed, failures } = runVectors(api, await request.json());
    return Response.json({ passed, failed, failures: failures.slice(0, 20), exports: Object.keys(api).sort() });
  },
};
