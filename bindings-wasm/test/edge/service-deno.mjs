// test/edge/service-worker.mjs's handler under Deno.serve on 127.0.0.1, a port Deno binds
// itself (it prints "Listening on ..."): test/edge-service.test.mjs reads it back.
import worker from './service-worker.mjs';

Deno.serve({ hostname: '127.0.0.1', port: 0 }, worker.fetch);
