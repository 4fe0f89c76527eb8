// The conformance vectors the route build (`shardroute-wasm/route`, pkg-route/) runs:
// every case of a call the route build has, over the strategies built into it, in every
// vector file. The rest is skipped, each with its reason (a call the route build leaves
// out, a strategy not built in), and counted: the runners report passed / failed /
// skipped, never silently passing what they do not run. Used by test/route.test.mjs
// (Node) and test/route-edge.test.mjs (Chromium, workerd, Deno), which run the same
// cases with conformance/runner.mjs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { filter, loadVectorFiles, repoRoot } from '../../../conformance/js/vectors.mjs';

const packageDir = join(repoRoot, 'bindings-wasm');

/**
 * The `op`s of conformance/runner.mjs the route build answers (index.d.ts's calls it keeps).
 * `session_source` with every step, of the HTTP kind only: the route build keeps `SourceSession`
 * (src/lib.rs), as it keeps the follower, because `./route/http` follows a topology over it;
 * the etcd and ZooKeeper kinds are the core's `etcd` and `zookeeper` features, which only the
 * full package (`full-api`) has (`NOT_BUILT_SOURCES`).
 */
const OPS = new Set(['load', 'route', 'replicas', 'route_many', 'route_read', 'route_write', 'read_replica',
  'shard_owner', 'replace', 'decode_dictionary', 'migration', 'migration_salted', 'topology_follower', 'migration_session',
  'session_source']);
/** The source session kinds (a case's `config.source`) the route build leaves out. */
const NOT_BUILT_SOURCES = new Set(['etcd', 'zookeeper']);
/** The steps of a follower scenario it answers (no `publish`). */
const FOLLOWER_CALLS = new Set(['offer', 'offer_dictionary', 'offer_bytes', 'disconnected', 'connected', 'state', 'stats']);
/** The steps of a migration session scenario it answers (no `copy_batch` nor `actions`, the
 * copy job's and the operator's; the consistency check, op `misplaced`, is left out as
 * well: a check, not routing). */
const MIGRATION_CALLS = new Set(['fence_epoch', 'read_plan', 'write_plan', 'lazy_steps', 'fenced', 'read_plan_at',
  'next_deadline']);
/** What a case names its topologies by (ids of the file's `topologies`). */
const TOPOLOGY_FIELDS = ['topology', 'next', 'old', 'new', 'before', 'after', 'dictionary'];
/** The first bytes of a binary vbucket dictionary (docs/dictionary-format.md). */
const DICTIONARY_MAGIC = '53525642'; // "SRVB"

/** Every strategy type of the core (Cargo.toml's `all-strategies`). */
export function allStrategies() {
  const manifest = readFileSync(join(repoRoot, 'core', 'Cargo.toml'), 'utf8');
  const list = /^all-strategies = \[([^\]]*)\]/m.exec(manifest)?.[1];
  if (!list) throw new Error('core/Cargo.toml has no all-strategies list');
  return [...list.matchAll(/"(\w+)"/g)].map((match) => match[1]);
}

/** The strategies built into pkg-route/ (build.sh writes them beside the build). */
export function routeStrategies() {
  return readFileSync(join(packageDir, 'pkg-route', '.strategies'), 'utf8').trim().split(',');
}

/** The pseudo-type of a document with table families or tenants (`typeOf`). */
const TABLES = '(table families)';

/** The strategy `type`s of a document (an object, or JSON text): its strategy's and its
 * indexes' and its table families' (each a strategy of its own); empty when it has none. */
function typeOf(document) {
  let value = document;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return [];
    }
  }
  const specs = [value?.strategy, ...Object.values(value?.indexes ?? {}).map((index) => index?.strategy),
    ...Object.values(value?.table_families ?? {}).map((family) => family?.strategy)];
  const types = specs.map((spec) => spec?.type).filter((type) => typeof type === 'string');
  // Table families and tenants are the core's `tables` feature, which the route build
  // leaves out: a document with any of these sections is refused there as not built in.
  if (value?.node_groups !== undefined || value?.table_families !== undefined || value?.tenants !== undefined) {
    types.push(TABLES);
  }
  return types;
}

/** The strategies of bytes a follower is offered: a dictionary's, or the JSON text's. */
function typeOfHex(hex) {
  if (hex.startsWith(DICTIONARY_MAGIC)) return ['vbucket'];
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(hex.match(/../g) ?? [], (b) => parseInt(b, 16)));
    return typeOf(text);
  } catch {
    return [];
  }
}

/** The strategy types a case's topologies have, whichever way it names them. */
function typesOf(file, kase) {
  const types = [];
  for (const field of TOPOLOGY_FIELDS) {
    if (typeof kase[field] === 'string' && file.topologies?.[kase[field]] !== undefined) types.push(...typeOf(file.topologies[kase[field]]));
  }
  if (kase.topology_json !== undefined) types.push(...typeOf(kase.topology_json));
  if (kase.op === 'decode_dictionary') types.push('vbucket');
  for (const step of kase.steps ?? []) {
    if (step.document !== undefined) types.push(...typeOf(file.topologies[step.document]));
    if (step.document_json !== undefined) types.push(...typeOf(step.document_json));
    if (step.hex !== undefined) types.push(...typeOfHex(step.hex));
    // A source session's HTTP body is the document itself (an etcd answer holds it in base64).
    if (kase.op === 'session_source' && typeof step.body === 'string') types.push(...typeOf(step.body));
  }
  return types.filter((type) => type !== undefined);
}

/** Why the route build does not run `kase`, or null when it does. */
function skipReason(file, kase, built, known) {
  if (!OPS.has(kase.op)) return `${kase.op}: a call the route build leaves out`;
  if (kase.op === 'session_source' && NOT_BUILT_SOURCES.has(kase.config?.source)) {
    return `the ${kase.config.source} session: not built into the route build`;
  }
  const calls = new Set((kase.steps ?? []).map((step) => step.call));
  const allowed = kase.op === 'topology_follower' ? FOLLOWER_CALLS : kase.op === 'migration_session' ? MIGRATION_CALLS : null;
  const missing = allowed ? [...calls].filter((call) => !allowed.has(call)) : [];
  if (missing.length) return `${kase.op} step ${missing.join(', ')}: a call the route build leaves out`;
  if (typesOf(file, kase).includes(TABLES)) return 'table families and tenants: not built into the route build';
  // A type the core has but the route build does not: refused as not built in. An unknown
  // or malformed one is refused the same way by both builds, so it runs.
  const absent = typesOf(file, kase).filter((type) => known.has(type) && !built.has(type));
  if (absent.length) return `strategy ${[...new Set(absent)].join(', ')}: not built into the route build`;
  return null;
}

/**
 * The route build's share of the vectors: `files` (each vector file with only the cases it
 * runs, those matching SHARDROUTE_VECTORS_FILTER too) and `skipped` (`[{ name, reason }]`
 * for every other case the filter selects).
 */
export function routeSubset(strategies = routeStrategies()) {
  const built = new Set(strategies);
  const known = new Set(allStrategies());
  const skipped = [];
  const files = loadVectorFiles().map((file) => {
    const cases = [];
    for (const kase of file.cases) {
      if (filter && !kase.name.includes(filter)) continue;
      const reason = skipReason(file, kase, built, known);
      if (reason === null) cases.push(kase);
      else skipped.push({ name: kase.name, reason });
    }
    return { ...file, cases };
  });
  return { files, skipped };
}

/** A run's result with the skipped cases counted in, as the runners report one. */
export function withSkipped(result, skipped) {
  return { ...result, skipped: skipped.length };
}

/** The skip reasons, grouped, most frequent first: one line each, with its count. */
export function skipSummary(skipped) {
  const counts = new Map();
  for (const { reason } of skipped) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).map(([reason, count]) => `  skipped ${count}: ${reason}`);
}
