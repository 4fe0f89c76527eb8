// The WASM follower of the live run inside workerd (the runtime of Cloudflare Workers): a
// module worker, bundled as wrangler bundles one (follow-workerd.mjs starts it), that
// follows the topology `shardroute serve` serves with `HttpFollower` of
// `shardroute-wasm/http` for as long as one request lasts. `GET /follow?url=URL` answers a
// stream of JSON lines: {"event": "ready"}, then one {"event": "installed", "epoch", "t",
// "stats"} per installed epoch and one {"event": "refused", "code", "stats"} per refusal.
// The follower lives in that request (a worker cannot keep one between requests), and
// ends when the request is cancelled. `GET /` answers "ok" (for the driver's start-up).
import { HttpFollower } from 'shardroute-wasm/http';

const line = (event, fields) => `${JSON.stringify({ event, ...fields },
  (_, value) => (typeof value === 'bigint' ? Number(value) : value))}\n`;

export default {
  async fetch(request) {
    const { pathname, searchParams } = new URL(request.url);
    if (pathname !== '/follow') return new Response('ok');
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const encoder = new TextEncoder();
    const emit = (event, fields = {}) => {
      writer.write(encoder.encode(line(event, fields))).catch(() => {});
    };
    const follower = await HttpFollower.start(searchParams.get('url'), {
      waitS: 30,
      config: { reconnect_first_ms: 50, reconnect_max_ms: 500 },
      onChange: (f) => emit('installed', { epoch: f.router.epoch, t: Date.now() / 1000, stats: f.stats }),
      onRefused: (f, offered) => emit('refused', { code: offered.code, stats: f.stats }),
    });
    request.signal?.addEventListener('abort', () => follower.close(), { once: true });
    writer.closed.catch(() => follower.close());
    emit('ready', { stats: follower.stats });
    return new Response(readable, { headers: { 'content-type': 'application/x-ndjson' } });
  },
};
