// The edge worker (worker.mjs, unchanged) in Deno: Deno.serve hands every request to its
// `fetch`. Prints {"event": "listening", "url"} once it serves on 127.0.0.1.
//
//     deno run -A deno.mjs [PORT]
import worker from './worker.mjs';

Deno.serve({
  hostname: '127.0.0.1',
  port: Number(Deno.args[0] ?? 0),
  onListen: ({ port }) => console.log(JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${port}` })),
}, (request) => worker.fetch(request));
