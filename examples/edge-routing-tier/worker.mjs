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
// plan's order, new owner first; or the one written), the epoch it was routed under
// (`x-epoch`) and the runtime (`x-runtime`).
//
// The topology comes over HTTP from `shardroute serve` (HttpFollower of
// shardroute-wasm/route/http, long polls): one serve for the etcd key `topology`, one for
// `previous` (run B's lazy move). How a request is routed is the core's migration
// session, by what the two hold (`Routing` below): a vbucket dictionary with a
// `forward_map`, the background session of `Migration.ofDictionary`; a `previous` one
// epoch older than the topology, the lazy session of `Migration(previous, topology)`;
// otherwise the router alone. Writes go to `writePlan(user)` under its fence epoch;
// reads union `readPlan(user, moved)` by id, the old owner queried first
// (docs/rebalancing.md); a lazy read of a user that has not arrived makes the session's
// `lazySteps`. A shard that refuses the epoch (409, its fence) makes the worker ask
// both serves again, plan again and retry.
//
// The two serves follow etcd independently, so the worker may hold run B's new topology
// before the `previous` written with it in the same etcd transaction. Until it has that
// `previous`, a non-dictionary topology that follows the one the worker routed under
// just before is read as `Migration(that one, new)` describes (new owner, then old; no
// moves, which are for whoever holds `previous`): "catch-up". If etcd holds a `previous`
// for it, it is that same document (the epoch before), so reads look exactly where the
// lazy session would before a move; if it holds none, the old owner's part of the
// answer is empty.
//
// The driver configures the worker and keeps its followers alive with one long request,
// `POST /follow` {"topology": url, "previous": url, "shards": {"shard_1": url, ...},
// "runtime": "workerd" | "deno"}: the followers live in that request (workerd runs a
// request's timers and subrequests only while it lasts), which answers a stream of JSON
// lines ({"event": "ready", "epoch"}, then one {"event": "epoch", ...} a second) and
// closes them when it ends. `GET /stats` answers the counters and every routing
// installed.
import { HttpFollower, Migration, MigrationSession } from './shardroute.mjs';

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

const sameButEpoch = (a, b) => JSON.stringify({ ...JSON.parse(a.toJson()), epoch: 0 }) === JSON.stringify({ ...JSON.parse(b.toJson()), epoch: 0 });

/** The router in force and, while data moves, how (immutable; rebuilt on every change). */
class Routing {
  constructor(router, previousRouter, before) {
    this.router = router;
    this.epoch = router.epoch;
    this.previousEpoch = previousRouter ? previousRouter.epoch : null;
    const strategy = JSON.parse(router.toJson()).strategy;
    this.vbuckets = strategy.type === 'vbucket';
    this.mode = 'plain';
    this.session = null;
    this.migration = null;
    if (this.vbuckets && strategy.forward_map) {
      this.mode = 'background';
      this.session = new MigrationSession(Migration.ofDictionary(router), 'background');
    } else if (previousRouter && previousRouter.epoch === this.epoch - 1n) {
      this.mode = 'lazy';
      this.session = new MigrationSession(new Migration(previousRouter, router), 'lazy');
    } else if (!this.vbuckets && before && before.epoch === this.epoch - 1n && !sameButEpoch(before, router)) {
      this.mode = 'catch-up';
      this.migration = new Migration(before, router);
    }
  }

  /** The column `vbucket`: the user's vbucket under a dictionary, else 0. */
  vbucket(user) {
    return this.vbuckets ? this.router.route(user) : 0;
  }

  writePlan(user) {
    if (this.session) return this.session.writePlan(user);
    if (this.migration) return { node: this.migration.writeTarget(user), fence_epoch: this.epoch };
    return { node: this.router.node(user), fence_epoch: this.epoch };
  }

  lazySteps(user) {
    return this.mode === 'lazy' ? this.session.lazySteps(user) : null;
  }

  readPlan(user, moved) {
    if (this.session) return this.session.readPlan(user, moved);
    if (this.migration) return this.migration.readTargets(user, false);
    return [this.router.node(user)];
  }

  /** What the session makes of a fence refusal (the core's reading: follow the topology). */
  fenced(minEpoch) {
    return this.session ? this.session.fenced(BigInt(minEpoch)) : 'refresh';
  }
}

/** Routing from what the followers hold now, unless it is the routing in force. */
function install() {
  const router = topology?.router;
  if (!router) return;
  const previousRouter = previous?.router ?? null;
  installedRouters.set(router.epoch, router);
  if (routing && routing.epoch === router.epoch && routing.previousEpoch === (previousRouter ? previousRouter.epoch : null)) return;
  if (routing && routing.epoch > router.epoch) return;
  const next = new Routing(router, previousRouter, installedRouters.get(router.epoch - 1n) ?? null);
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
      if (current.fenced(err.minEpoch) !== 'refresh') throw err;
      await refresh(current);
    }
  }
}

/** The lazy move of docs/rebalancing.md, run B, step by step as the session gives it. */
async function moveUser(user, steps) {
  const epoch = steps.fence_epoch;
  await call(steps.retire_from, 'POST', `/fence?user=${user}`, epoch);
  const { messages } = await call(steps.read_from, 'GET', `/users/${user}/messages?full=1`, epoch);
  const { inserted } = await call(steps.write_to, 'POST', `/users/${user}/import`, epoch, { rows: messages });
  await call(steps.retire_from, 'DELETE', `/users/${user}/messages`, epoch);
  stats.lazy_moves += 1;
  stats.moved_rows += inserted;
}

async function timeline(user) {
  return fenced(async (r) => {
    let moved = false;
    const steps = r.lazySteps(user);
    if (steps) {
      const flag = await call(steps.write_to, 'GET', `/users/${user}/moved`, steps.fence_epoch);
      if (!flag.moved) await moveUser(user, steps);
      moved = true;
    }
    const plan = r.readPlan(user, moved);
    if (r.mode === 'catch-up' && plan.length > 1) stats.catch_up_reads += 1;
    const found = new Map();
    // Old owner first: a move that completes between the two reads then leaves every
    // row on the new owner, read second.
    for (const shard of [...plan].reverse()) {
      for (const message of (await call(shard, 'GET', `/users/${user}/messages`, r.epoch)).messages) found.set(message.id, message);
    }
    const messages = [...found.values()].sort((a, b) => (a.time === b.time ? b.id - a.id : a.time < b.time ? 1 : -1));
    return { plan, epoch: r.epoch, body: { user, messages } };
  });
}

async function write(user, message) {
  return fenced(async (r) => {
    const { node, fence_epoch: epoch } = r.writePlan(user);
    const vbucket = r.vbucket(user);
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
