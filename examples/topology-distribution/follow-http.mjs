// The WASM follower of the live run, for Deno (and any runtime with fetch): follows the
// topology that `shardroute serve` serves over HTTP with `HttpFollower` of
// `shardroute-wasm/http` (long polls, ETags), and prints one JSON line per installed
// epoch ({"event": "installed", "epoch", "t"}) and per refusal. A line on stdin prints
// {"event": "done", "stats"} and exits.
//
//     deno run -A follow-http.mjs http://127.0.0.1:PORT/
import { HttpFollower } from 'shardroute-wasm/http';

const url = Deno.args[0];
const emit = (event, fields = {}) => console.log(JSON.stringify({ event, ...fields },
  (_, value) => (typeof value === 'bigint' ? Number(value) : value)));

const follower = await HttpFollower.start(url, {
  waitS: 30,
  config: { reconnect_first_ms: 50, reconnect_max_ms: 500 },
  onChange: (f) => emit('installed', { epoch: f.router.epoch, t: Date.now() / 1000 }),
  onRefused: (_, offered) => emit('refused', { code: offered.code }),
});
emit('ready');
for await (const _ of Deno.stdin.readable) break;
emit('done', { stats: follower.stats });
follower.close();
Deno.exit(0);
