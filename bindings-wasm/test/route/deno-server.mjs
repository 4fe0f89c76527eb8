// worker.mjs under Deno, served by Deno.serve on 127.0.0.1:$PORT (test/route-edge.test.mjs: PORT=0, Deno prints the port it bound).
import worker from './worker.mjs';

Deno.serve({ hostname: '127.0.0.1', port: Number(Deno.env.get('PORT')) }, (request) => worker.fetch(request));
