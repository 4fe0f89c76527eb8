// The Node service of the example: writes and reads its own keys through
// `ClusterClient` of shardroute/redis while the cluster changes, and reports what it saw.
//
// Driven by run.py over stdin/stdout, one line each way; the same protocol as the Python
// service, workload.py (README.md specifies it):
//
//     load            write every key (MSET per hash-tag group), read them back with
//                     pipelines grouped by node
//     churn <phase>   write and read random keys until `stop`; in the phases that
//                     change masters (WAITED) each write is `SET` + `WAIT 1`, so it
//                     counts as acknowledged only once a replica has it
//     stop [<t>]      end the churn; with <t>, the wall-clock time (s since the epoch) a
//                     replica was promoted during it, its answer also says how late after
//                     the promotion the churn's commands ended (`afterPromotion`)
//     settle <phase>  refresh the table, read every key once more: MOVED must be 0
//     verify          read every key: its last acknowledged value, or a write the server
//                     accepted but never acknowledged (reported apart), else lost/stale
//     quit
//
// Each command ends with one JSON line: {"event": "done", "command", "phase", "ops",
// "moved", "ask", "errors", "refreshes", "longest_redirect_chain", "p50_us", "p99_us", ...}.
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import { ClusterClient } from 'shardroute/redis';

const WAITED = ['failover', 'pause', 'pause-2', 'graceful']; // phases whose writes are SET + WAIT 1

/** The wall clock in ms since the epoch, sub-millisecond (the clock run.py's promotion time is on). */
const wallMs = () => performance.timeOrigin + performance.now();

/**
 * How the commands of a churn ended relative to a promotion at `promotedAtMs` (each span
 * is a command's wall-clock [start, end] in ms, and its name); the same fields as workload.py's
 * `after_promotion` (README.md, "A paused primary"):
 *
 * - `late_after_promotion_ms`: the most any command ended after the promotion or after
 *   its own start, whichever is later: max of end - max(start, promotion) over the
 *   commands that ended after the promotion (0 when none did). "Every command finishes
 *   within promotion + 1 s" is this < 1000.
 * - `in_flight_at_promotion`: commands that started at or before the promotion and ended
 *   after it (the pause held them): at least one, or the pause tested nothing.
 * - `commands_after_promotion`: commands that ended after the promotion.
 * - `latest_command`: the command that set `late_after_promotion_ms`, its start and end
 *   in ms from the promotion (to tell a stall from a slow command).
 */
function afterPromotion(spans, promotedAtMs) {
  const round = (ms) => Math.round(ms * 10) / 10;
  let late = 0;
  let latest = null;
  let inFlight = 0;
  let after = 0;
  for (const [start, end, name] of spans) {
    if (end <= promotedAtMs) continue;
    after += 1;
    if (start <= promotedAtMs) inFlight += 1;
    const lateness = end - Math.max(start, promotedAtMs);
    if (latest === null || lateness > late) {
      late = lateness;
      latest = { command: name, started_ms: round(start - promotedAtMs), ended_ms: round(end - promotedAtMs) };
    }
  }
  return {
    promoted_at: promotedAtMs / 1000, late_after_promotion_ms: round(late),
    in_flight_at_promotion: inFlight, commands_after_promotion: after, latest_command: latest,
  };
}
const GROUP = 10; // keys per hash tag, written together with one MSET
const BATCH = 1000; // keys per pipelined read

/** A seeded generator of integers in [0, n) (mulberry32 over an FNV-1a hash of the seed). */
function randomFrom(seed) {
  let state = 2166136261;
  for (const char of seed) state = Math.imul(state ^ char.charCodeAt(0), 16777619) >>> 0;
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

class Service {
  constructor(client, prefix, count) {
    this.client = client;
    this.keys = Array.from({ length: count }, (_, i) => `{${prefix}:${Math.floor(i / GROUP)}}:${i % GROUP}`);
    this.acknowledged = new Map(); // key -> last value a write was acknowledged with
    this.unacknowledged = new Map(); // key -> values written since, not acknowledged
    this.version = 0;
    this.latencies = [];
    this.spans = []; // each command's wall-clock [start, end] in ms, and name
    this.promotedAtMs = null; // given with `stop` after a promotion
    this.staleReads = 0;
    this.appErrors = {}; // what the client threw to the service, by kind
    this.stopping = false;
  }

  value(index) {
    this.version += 1;
    return `${index}:${this.version}`;
  }

  report(command, phase, ops, extra = {}) {
    const { stats } = this.client;
    const samples = Float64Array.from(this.latencies).sort();
    const percentile = (p) =>
      samples.length ? Math.round(samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] * 10000) / 10 : 0;
    const line = {
      event: 'done', command, phase, ops, moved: stats.moved, ask: stats.ask, errors: stats.errors,
      error_kinds: stats.errorKinds, refreshes: stats.refreshes, longest_redirect_chain: stats.longestRedirectChain,
      stale_reads: this.staleReads, p50_us: percentile(0.5), p99_us: percentile(0.99),
      epoch: Number(this.client.router.epoch), app_errors: this.appErrors, ...extra,
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
    stats.reset();
    this.latencies = [];
    this.spans = [];
    this.staleReads = 0;
    this.appErrors = {};
  }

  /** `call()` awaited, its time (ms) recorded when it resolves, its wall-clock span (`spans`, named `name`) also when it throws. */
  async timed(call, name = '?') {
    const start = wallMs();
    let resolved = false;
    try {
      const result = await call();
      resolved = true;
      return result;
    } finally {
      const end = wallMs();
      this.spans.push([start, end, name]);
      if (resolved) this.latencies.push(end - start);
    }
  }

  // -- commands ------------------------------------------------------------------

  async load() {
    for (let start = 0; start < this.keys.length; start += GROUP) {
      const group = new Map();
      for (let i = start; i < Math.min(start + GROUP, this.keys.length); i += 1) group.set(this.keys[i], this.value(i));
      await this.timed(() => this.client.mset(group));
      for (const [key, value] of group) this.acknowledged.set(key, value);
    }
    let ops = Math.floor(this.keys.length / GROUP);
    for (let start = 0; start < this.keys.length; start += BATCH) {
      const batch = this.keys.slice(start, start + BATCH);
      this.check(batch, await this.timed(() => this.client.pipelineGet(batch)));
      ops += batch.length;
    }
    this.report('load', 'steady', ops, { keys: this.keys.length });
  }

  async churn(phase) {
    const wait = WAITED.includes(phase);
    let ops = 0;
    let unacknowledged = 0;
    const random = randomFrom(phase);
    this.spans = [];
    const counted = (err) => {
      const kind = err?.name ?? 'Error';
      this.appErrors[kind] = (this.appErrors[kind] ?? 0) + 1;
    };
    while (!this.stopping) {
      const index = random(this.keys.length);
      const key = this.keys[index];
      const value = this.value(index);
      try {
        if (!wait) {
          await this.timed(() => this.client.set(key, value), 'set');
          this.acknowledged.set(key, value);
        } else if ((await this.timed(() => this.client.setAndWait(key, value, 1, 500), 'setAndWait')) >= 1) {
          this.acknowledged.set(key, value);
          this.unacknowledged.delete(key);
        } else {
          this.pending(key, value);
          unacknowledged += 1;
        }
      } catch (err) {
        // What the application sees, counted; the write may or may not have been applied.
        this.pending(key, value);
        counted(err);
      }
      const read = this.keys[random(this.keys.length)];
      try {
        this.check([read], [await this.timed(() => this.client.get(read), 'get')]);
      } catch (err) {
        counted(err);
      }
      ops += 2;
    }
    this.stopping = false;
    const promotedAtMs = this.promotedAtMs;
    this.promotedAtMs = null;
    const extra = promotedAtMs === null ? {} : afterPromotion(this.spans, promotedAtMs);
    this.report('churn', phase, ops, { unacknowledged_writes: unacknowledged, ...extra });
  }

  pending(key, value) {
    const values = this.unacknowledged.get(key);
    if (values === undefined) this.unacknowledged.set(key, [value]);
    else values.push(value);
  }

  async settle(phase) {
    // The change is over: refresh once, as a client's periodic refresh would. MOVEDs
    // during the change refresh at most every `refresh_interval_ms`, so slots moved in
    // the last such window and not touched since may still be stale here.
    await this.client.refresh();
    for (let start = 0; start < this.keys.length; start += BATCH) {
      const batch = this.keys.slice(start, start + BATCH);
      this.check(batch, await this.timed(() => this.client.pipelineGet(batch)));
    }
    this.report('settle', phase, this.keys.length);
  }

  async verify() {
    let lost = 0;
    let stale = 0;
    let unreplicatedLost = 0;
    let unreplicatedKept = 0;
    for (let start = 0; start < this.keys.length; start += BATCH) {
      const batch = this.keys.slice(start, start + BATCH);
      const values = await this.timed(() => this.client.pipelineGet(batch));
      batch.forEach((key, i) => {
        const value = values[i];
        const pending = this.unacknowledged.get(key) ?? [];
        if (pending.length && pending.includes(value)) unreplicatedKept += 1;
        else if (value === (this.acknowledged.get(key) ?? null)) unreplicatedLost += pending.length ? 1 : 0;
        else if (value === null) lost += 1;
        else stale += 1;
      });
    }
    this.report('verify', 'end', this.keys.length, {
      lost, stale, unreplicated_writes_lost: unreplicatedLost, unreplicated_writes_kept: unreplicatedKept,
    });
  }

  /** A read must see the last acknowledged value or a later unacknowledged one. */
  check(keys, values) {
    keys.forEach((key, i) => {
      const value = values[i];
      if (value !== (this.acknowledged.get(key) ?? null) && !(this.unacknowledged.get(key) ?? []).includes(value)) {
        this.staleReads += 1;
      }
    });
  }
}

async function main() {
  const { values: args } = parseArgs({
    options: { seeds: { type: 'string' }, prefix: { type: 'string', default: 'js' }, keys: { type: 'string', default: '100000' } },
  });
  if (args.seeds === undefined) throw new Error('--seeds host:port,... is required');
  const client = await ClusterClient.connect(args.seeds.split(','), { config: { retry_budget_ms: 30000 } });
  const service = new Service(client, args.prefix, Number(args.keys));
  process.stdout.write(`${JSON.stringify({ event: 'ready', epoch: Number(client.router.epoch) })}\n`);
  // Lines keep arriving while a churn runs: it is not awaited until `stop`.
  let churning = null;
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const [command, argument = ''] = line.trim().split(/ (.*)/s);
    if (command === 'stop') {
      if (churning !== null) {
        service.promotedAtMs = argument ? Number(argument) * 1000 : null;
        service.stopping = true;
        await churning;
        churning = null;
      }
    } else if (command === 'churn') {
      churning = service.churn(argument);
    } else if (command === 'load') {
      await service.load();
    } else if (command === 'settle') {
      await service.settle(argument);
    } else if (command === 'verify') {
      await service.verify();
    } else if (command === 'quit') {
      break;
    }
  }
  await client.close();
}

await main();
