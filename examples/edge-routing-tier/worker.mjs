// The edge routing tier: a module worker (`export default { fetch }`) that runs unchanged
// in workerd (bundled as wrangler bundles one: run.py, bundle.mjs) and in Deno (deno.mjs,
// a Deno.serve wrapper). It stands in front of the messages shards of
// examples/postgres-messages, each behind its own small HTTP service
// (shard_service.py), and routes every request by user id with shardroute-wasm, while
// the shards grow from 5 to 10 under it.
//
//   GET  /users/{id}/messages   the user's timeline (newest first)
//   POST /users/{id}/messages   {"id": <message id, chosen by the client>, "body": "..."}
//
// Each answer says which shard served it (`x-shard`: the shards read, in the read
// plan's order, old owner first; or the one written), the epoch it was routed under
// (`x-epoch`) and the runtime (`x-runtime`).
//
// The topology comes over HTTP from `shardroute serve` (HttpFollower of
// shardroute-wasm/route/http, long polls): one serve for the etcd key `topology`, one for
// `previous` (run B's lazy move). How a request is routed is the core's migration
// session, `MigrationSession.ofTopology(topology, previous, held)`, which decides the mode
// from what the two hold and the topology the worker routed under just before (`held`,
// docs/rebalancing.md): a vbucket dictionary with a `forward_map`, `background`; a
// `previous` one epoch older than the topology, `lazy`; otherwise `plain`, or
// `catch-up` (below). Writes go to `writePlan(user)` under its fence epoch; reads union
// `readPlan(user, moved)` by id, queried in the plan's order (the core's: old owner
// first); a read asks `lazySteps(user)`, which names a move only in lazy mode. A shard
// that refuses the epoch (409, its fence) makes the worker ask both serves again, plan
// again and retry. The worker never branches on the mode except to count.
//
// The two serves follow etcd independently, so the worker may hold run B's new topology
// before the `previous` written with it in the same etcd transaction. Until it has that
// `previous`, a non-dictionary topology that follows the one the worker routed under
// just before is routed in `catch-up`: reads look at that one's owner, then the new
// one; nothing is moved (moves are for whoever holds `previous`). If etcd holds a
// `previous` for it, it is that same document (the epoch before), so reads look exactly
// where the lazy session would before a move; if it holds none, the old owner's part of
// the answer is empty.
//
// The driver configures the worker and keeps its followers alive with one long request,
// `POST /follow` {"topology": url, "previous": url, "shards": {"shard_1": url, ...},
// "runtime": "workerd" | "deno"}: the followers live in that request (workerd runs a
// request's timers and subrequests only while it lasts), which answers a stream of JSON
// lines ({"event": "ready", "epoch"}, then one {"event": "epoch", ...} a second) and
// closes them when it ends. `GET /stats` answers the counters and every routing
// installed.
import { HttpFollower, MigrationSession } from './shardroute.mjs';

/** Attempts of one request after fence refusals, before it fails (502). */
const TRIES = 50;
/** One call to a shard service, at most (a shard that hangs fails the request, 502). */
const CALL_TIMEOUT_MS = 10000;
const FOLLOW = { waitS: 30, config: { reconnect_first_ms: 50, reconnect_max_ms: 500 } };

let config = null;
let topology = null;
let previous = null;
let routing = null;
/** Topology routers installed, by epoch (bigint): the one routed under just before. */
const installedRouters = new Map();
const installs = [];
const stats = {
  requests: 0, reads: 0, writes: 0, failed: 0, refused_by_fence: 0, refreshes: 0,
  lazy_moves: 0, moved_rows: 0, catch_up_reads: 0, refused_documents: 0,
};

class Fenced extends Error {
  constructor(shard, epoch, minEpoch) {
    super(`${shard} refused epoch ${epoch}: its fence is at ${minEpoch}`);
    this.minEpoch = minEpoch;
  }
}

/**
 * Routing from what the followers hold now, unless it is the routing in force: the
 * core's session (every routing decision), swapped whole with the epochs it was made
 * from and the router of the `vbucket` column (a dictionary's; 0 otherwise).
 */
function install() {
  const router = topology?.router;
  if (!router) return;
  const previousRouter = previous?.router ?? null;
  const previousEpoch = previousRouter ? previousRouter.epoch : null;
  installedRouters.set(router.epoch, router);
  if (routing && routing.epoch === router.epoch && routing.previousEpoch === previousEpoch) return;
  if (routing && routing.epoch > router.epoch) return;
  const session = MigrationSession.ofTopology(router, previousRouter, installedRouters.get(router.epoch - 1n) ?? null);
  const vbuckets = JSON.parse(router.toJson()).strategy.type === 'vbucket' ? router : null;
  const next = { session, epoch: session.fenceEpoch, previousEpoch, mode: session.mode, vbuckets };
  if (routing && routing.epoch === next.epoch && routing.mode === next.mode) {
    routing = next;
    return;
  }
  routing = next;
  installs.push({ epoch: String(next.epoch), mode: next.mode, t: Date.now() / 1000 });
}

/** After a fence refusal: ask both serves now (no long poll), then route again. */
async function refresh(stale) {
  stats.refreshes += 1;
  await Promise.all([topology, previous].filter(Boolean).map((f) => f.refresh().catch(() => null)));
  install();
  if (routing.epoch <= stale.epoch && routing.previousEpoch === stale.previousEpoch) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** One statement to a shard service; its JSON answer, `Fenced` for a 409. */
async function call(shard, method, path, epoch, body) {
  const base = config.shards[shard];
  if (!base) throw new Error(`no service for ${shard}`);
  const url = `${base}${path}${path.includes('?') ? '&' : '?'}epoch=${epoch}`;
  const init = { method, headers: { 'x-via': config.runtime }, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['content-type'] = 'application/json';
  }
  const response = await fetch(url, init);
  const answer = await response.json();
  if (response.status === 409) throw new Fenced(shard, epoch, answer.min_epoch);
  if (!response.ok) throw new Error(`${shard}: ${method} ${path}: HTTP ${response.status}: ${answer.message ?? answer.error}`);
  return answer;
}

/** Retries `attempt(routing)` after each fence refusal, with the topology read again. */
async function fenced(attempt) {
  for (let tries = 1; ; tries += 1) {
    const current = routing;
    try {
      return await attempt(current);
    } catch (err) {
      if (!(err instanceof Fenced) || tries >= TRIES) throw err;
      stats.refused_by_fence += 1;
      if (current.session.fenced(BigInt(err.minEpoch)) !== 'refresh') throw err;
      await refresh(current);
    }
  }
}

/** The lazy move of docs/rebalancing.md, run B, step by step as the session gives it. */
async function moveUser(user, steps) {
  const epoch = steps.fenceEpoch;
  await call(steps.retireFrom, 'POST', `/fence?user=${user}`, epoch);
  const { messages } = await call(steps.readFrom, 'GET', `/users/${user}/messages?full=1`, epoch);
  const { inserted } = await call(steps.writeTo, 'POST', `/users/${user}/import`, epoch, { rows: messages });
  await call(steps.retireFrom, 'DELETE', `/users/${user}/messages`, epoch);
  stats.lazy_moves += 1;
  stats.moved_rows += inserted;
}

async function timeline(user) {
  return fenced(async (r) => {
    let moved = false;
    const steps = r.session.lazySteps(user); // null unless this read moves the user
    if (steps) {
      const flag = await call(steps.writeTo, 'GET', `/users/${user}/moved`, steps.fenceEpoch);
      if (!flag.moved) await moveUser(user, steps);
      moved = true;
    }
    const plan = r.session.readPlan(user, moved);
    if (r.mode === 'catch-up' && plan.length > 1) stats.catch_up_reads += 1;
    const found = new Map();
    // In the plan's order (the core's: old owner first, see docs/rebalancing.md).
    for (const shard of plan) {
      for (const message of (await call(shard, 'GET', `/users/${user}/messages`, r.epoch)).messages) found.set(message.id, message);
    }
    const messages = [...found.values()].sort((a, b) => (a.time === b.time ? b.id - a.id : a.time < b.time ? 1 : -1));
    return { plan, epoch: r.epoch, body: { user, messages } };
  });
}

async function write(user, message) {
  return fenced(async (r) => {
    const { node, fenceEpoch: epoch } = r.session.writePlan(user);
    const vbucket = r.vbuckets ? r.vbuckets.route(user) : 0;
    await call(node, 'POST', `/users/${user}/messages`, epoch, { id: message.id, body: message.body, vbucket, sender: config.runtime });
    return { plan: [node], epoch, body: { id: message.id, user, vbucket } };
  });
}

// Epochs and other u64 values cross as decimal strings, never as lossy numbers.
const json = (body, status = 200, headers = {}) => new Response(JSON.stringify(body, (_, v) => (typeof v === 'bigint' ? String(v) : v)), {
  status, headers: { 'content-type': 'application/json', ...headers },
});

async function users(request, user) {
  if (!routing) return json({ error: 'no topology yet' }, 503);
  stats.requests += 1;
  try {
    let done;
    if (request.method === 'GET') {
      stats.reads += 1;
      done = await timeline(user);
    } else if (request.method === 'POST') {
      const message = await request.json();
      if (!Number.isSafeInteger(message?.id) || typeof message.body !== 'string') {
        return json({ error: 'bad_request', message: 'a message is {"id": int, "body": str}' }, 400);
      }
      stats.writes += 1;
      done = await write(user, message);
    } else {
      return json({ error: 'method not allowed' }, 405);
    }
    return json(done.body, request.method === 'POST' ? 201 : 200, {
      'x-shard': done.plan.join(','), 'x-epoch': String(done.epoch), 'x-runtime': config.runtime,
    });
  } catch (err) {
    stats.failed += 1;
    return json({ error: err instanceof Fenced ? 'fenced' : 'failed', message: String(err?.message ?? err) }, 502);
  }
}

/** `POST /follow`: configure, start both followers, and keep them for as long as this request lasts. */
async function follow(request) {
  config = await request.json();
  const options = {
    ...FOLLOW,
    onChange: install,
    onRefused: () => { stats.refused_documents += 1; },
  };
  topology = await HttpFollower.start(config.topology, options);
  install();
  const closing = new AbortController();
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // `previous` has no document until run B's switch (serve answers 503): ask until it has.
  (async () => {
    while (!closing.signal.aborted && previous === null) {
      try {
        previous = await HttpFollower.start(config.previous, options);
        install();
      } catch {
        await sleep(100);
      }
    }
  })();
  const { readable, writable } = new TransformStream();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  const stop = () => {
    closing.abort();
    topology?.close();
    previous?.close();
  };
  const line = (event) => writer.write(encoder.encode(`${JSON.stringify(event)}\n`));
  line({ event: 'ready', epoch: String(routing?.epoch ?? 0n) }).catch(stop);
  (async () => {
    while (!closing.signal.aborted) {
      await sleep(1000);
      await line({ event: 'epoch', epoch: String(routing?.epoch ?? 0n), mode: routing?.mode }).catch(stop);
    }
  })();
  // The driver ending the request fails the next heartbeat, which closes the followers.
  return new Response(readable, { headers: { 'content-type': 'application/x-ndjson' } });
}

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    const user = /^\/users\/(\d{1,15})\/messages$/.exec(pathname);
    if (user) return users(request, Number(user[1]));
    if (pathname === '/follow' && request.method === 'POST') return follow(request);
    if (pathname === '/stats') {
      return json({
        runtime: config?.runtime ?? null, epoch: routing?.epoch ?? null, mode: routing?.mode ?? null, stats, installs,
        followers: { topology: topology?.stats ?? null, previous: previous?.stats ?? null },
      });
    }
    if (pathname === '/') return new Response('ok');
    return json({ error: 'not found' }, 404);
  },
};
