// The JavaScript conformance runner, shared by the Node addon, the WASM package under
// Node and the WASM package in a browser page. It has no Node-only imports: the caller
// reads the vector files and passes their parsed contents.
//
// `api` is the binding's public module: { Router, Migration, hashKey, jump, apply,
// moduloMoves, diff, encodeDictionary, decodeDictionary, parseRedirect, ClusterSession,
// TopologyFollower, Offered, MigrationSession, SourceSession, ShardrouteError }. The
// runner converts each vector into the binding's input types (see conformance/README.md)
// and compares results; it contains no routing logic, and no session decision.

const textDecoderHex = (hex) => {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
};

/** Converts a vector key ({utf8}|{hex}|{u64}|{utf16}) to the JS value a user would pass. */
export function toKey(key) {
  const forms = Object.keys(key);
  if (forms.length !== 1) throw new Error(`key must have exactly one form: ${JSON.stringify(key)}`);
  const [form] = forms;
  const value = key[form];
  switch (form) {
    case 'utf8':
      return value;
    case 'hex':
      return textDecoderHex(value);
    case 'u64':
      return BigInt(value);
    case 'utf16':
      return String.fromCharCode(...value);
    default:
      throw new Error(`unknown key form ${form}`);
  }
}

/** JSON text with object fields sorted: the comparison ignores field order, as the spec says. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function sameJson(a, b) {
  return canonical(a) === canonical(b);
}

/** A key returned by the binding (salting) in the vector form of the key it came from. */
function keyForm(source, key) {
  if (typeof key === 'bigint') return { u64: key.toString() };
  if (typeof key === 'string') return { utf8: key };
  if (key instanceof Uint8Array) return { hex: Array.from(key, (b) => b.toString(16).padStart(2, '0')).join('') };
  throw new Error(`salted key of unexpected type ${typeof key} for ${JSON.stringify(source)}`);
}

/** A session Action as the vectors write it, from the fields a user reads. */
function actionJson(action) {
  switch (action.kind) {
    case 'send':
      return { send: { address: action.address, host: action.host, port: action.port, asking: action.asking,
        readonly: action.readonly } };
    case 'wait':
      if (typeof action.untilMs !== 'bigint') throw new Error(`untilMs is ${typeof action.untilMs}, not bigint`);
      return { wait: { until_ms: String(action.untilMs), delay_ms: action.delayMs } };
    case 'fail':
      return { fail: { code: action.code } };
    default:
      return { [action.kind]: {} };
  }
}

/**
 * A u64 counter of a session's or a follower's stats as the vectors write it: a bigint,
 * compared by value (as a number; a counter past 2^53 would not compare equal, as it must
 * not).
 */
function counterJson(value, name) {
  if (typeof value !== 'bigint') throw new Error(`stats ${name} is ${typeof value}, not bigint`);
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : String(value);
}

/** The counters of `counts` (name to bigint) as the vectors write them; `prefix` names them in errors. */
function countersJson(counts, prefix = '') {
  return Object.fromEntries(Object.entries(counts).map(([name, value]) => [name, counterJson(value, `${prefix}${name}`)]));
}

/** A u64 result (a bigint, or null) as the vectors write it: its decimal text. */
function u64Json(value, name) {
  if (value === null) return null;
  if (typeof value !== 'bigint') throw new Error(`${name} is ${typeof value}, not bigint`);
  return String(value);
}

/**
 * A record the packages return, its camelCase fields (docs/api.md, "The rule") named as the
 * vectors write them (the core's snake_case), at every depth: only for records whose
 * every key is a field name (`diff`, `Router.stats`), never a map keyed by data.
 */
function snakeFields(value) {
  if (Array.isArray(value)) return value.map(snakeFields);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snakeFields(item)]));
}

/** A session's stats as the vectors write them (counterJson), the longest chain a number. */
function statsJson(stats) {
  const { errors, longestRedirectChain: longest, ...counters } = stats;
  return { ...countersJson(snakeFields(counters)), longest_redirect_chain: longest, errors: countersJson(errors, 'errors.') };
}

/** One step of a session scenario (conformance/README.md, "Session scenarios"). */
function sessionStep(api, session, current, step) {
  const now = step.now_ms ?? 0;
  // `current`: the commands begun, in order; a step's `command` (an index) picks one, else the last.
  const picked = step.command ?? current.length - 1;
  try {
    switch (step.call) {
      case 'command':
        current.push(session.command(step.keys.map(toKey), step.access, now));
        return { slot: current[current.length - 1].slot };
      case 'pipeline_queued':
        return { queued: session.pipelineQueued(step.address, step.readonly) };
      case 'pipeline_take':
        return { write: session.pipelineTake(step.address, step.readonly) };
      case 'pipeline_done':
        return { write: session.pipelineDone(step.address, step.readonly) };
      case 'pipeline_withdrawn':
        session.pipelineWithdrawn(step.address, step.readonly, step.count);
        return { ok: true };
      case 'pipeline_pending': {
        const [queued, writes, ...rest] = session.pipelinePending(step.address, step.readonly);
        if (rest.length) throw new Error('pipelinePending returned more than [queued, writes]');
        return { queued, writes };
      }
      case 'poll':
        return actionJson(session.poll(current[picked], now));
      case 'succeeded':
        return actionJson(session.succeeded(current[picked], now));
      case 'failed':
        return actionJson(session.failed(current[picked], step.text, step.names, now));
      case 'stalled':
        return actionJson(session.stalled(current[picked], now));
      case 'unreachable':
        return actionJson(session.unreachable(current[picked], step.why, now));
      case 'deadline':
        return { deadline_ms: u64Json(session.deadline(current[picked]), 'deadline') };
      case 'on_deadline':
        return actionJson(session.onDeadline(current[picked], now));
      case 'refresh_sent':
        return { deadline_ms: u64Json(session.refreshSent(step.address, now), 'refreshSent') };
      case 'next_deadline':
        return { deadline_ms: u64Json(session.nextDeadline(), 'nextDeadline') };
      case 'batch_deadline':
        return { deadline_ms: u64Json(session.batchDeadline(now), 'batchDeadline') };
      case 'timeout':
        return { timed_out: session.timeout(now) };
      case 'refreshed':
        session.refreshed(step.reply, now);
        return { ok: true };
      case 'refresh_failed':
        session.refreshFailed(now);
        return { ok: true };
      case 'candidates':
        return { addresses: session.refreshCandidates() };
      case 'stats':
        return statsJson(session.stats);
      case 'plan':
        return { groups: session.plan(step.keys.map(toKey), step.access).map(({ address, readonly, slots, ...rest }) => {
          if (Object.keys(rest).length) throw new Error(`plan returned extra fields ${Object.keys(rest)}`);
          return { address, readonly, slots };
        }) };
      default:
        throw new Error(`unknown session call ${step.call}`);
    }
  } catch (err) {
    if (err instanceof api.ShardrouteError) return { error: err.code };
    throw err;
  }
}

/** A `redis_session` case: `{ results }`, or `{ error }` when the session cannot be made. */
function runSession(api, kase) {
  let session;
  try {
    session = new api.ClusterSession(kase.seeds, kase.config);
  } catch (err) {
    if (err instanceof api.ShardrouteError) return { error: err.code };
    throw err;
  }
  const current = [];
  return { results: kase.steps.map((step) => sessionStep(api, session, current, step)) };
}

/** One step of a follower scenario (conformance/README.md, "Session scenarios"). */
function followerStep(api, file, follower, step) {
  const now = step.now_ms ?? 0;
  // A topology id gives the document as the object a user's JSON.parse gives (the package
  // serializes it); document_json is text, as it comes.
  const document = () => {
    if (step.document === undefined) return step.document_json;
    if (file.topologies[step.document] === undefined) throw new Error(`unknown topology id ${step.document}`);
    return file.topologies[step.document];
  };
  try {
    switch (step.call) {
      case 'offer':
        return offeredJson(api, follower.offer(document(), step.revision, now));
      case 'offer_dictionary':
        return offeredJson(api, follower.offerDictionary(textDecoderHex(step.hex), step.revision, now));
      case 'offer_bytes':
        return offeredJson(api, follower.offerBytes(textDecoderHex(step.hex), step.revision, now));
      case 'disconnected':
        return { reconnect_at_ms: u64Json(follower.disconnected(now), 'disconnected') };
      case 'connected':
        follower.connected();
        return { ok: true };
      case 'next_deadline':
        return { deadline_ms: u64Json(follower.nextDeadline(), 'nextDeadline') };
      case 'publish': {
        const { expectedRevision: revision, epoch, document: text, ...rest } = follower.publish(document());
        if (Object.keys(rest).length) throw new Error(`publish returned extra fields ${Object.keys(rest)}`);
        return { expected_revision: u64Json(revision, 'expected_revision'), epoch: u64Json(epoch, 'epoch'), document: text };
      }
      case 'state': {
        const router = follower.router;
        return { epoch: router === null ? null : u64Json(router.epoch, 'epoch'), revision: u64Json(follower.revision, 'revision') };
      }
      case 'stats': {
        const { refused, ...counters } = follower.stats;
        return { ...countersJson(counters), refused: countersJson(refused, 'refused.') };
      }
      default:
        throw new Error(`unknown follower call ${step.call}`);
    }
  } catch (err) {
    if (err instanceof api.ShardrouteError) return { error: err.code };
    throw err;
  }
}

/** An Offered as the vectors write it, from the fields a user reads. */
function offeredJson(api, offered) {
  if (!(offered instanceof api.Offered)) throw new Error('the follower did not return an Offered');
  switch (offered.kind) {
    case 'installed':
      return { installed: { epoch: u64Json(offered.epoch, 'epoch') } };
    case 'refused':
      return { refused: { code: offered.code } };
    default:
      return { [offered.kind]: {} };
  }
}

/** A `topology_follower` case: `{ results }`, or `{ error }` when the follower cannot be made. */
function runFollower(api, file, kase) {
  let follower;
  try {
    follower = new api.TopologyFollower(kase.config);
  } catch (err) {
    if (err instanceof api.ShardrouteError) return { error: err.code };
    throw err;
  }
  return { results: kase.steps.map((step) => followerStep(api, file, follower, step)) };
}

/** The bytes of a vector's base64 text (`body_b64`, `data_b64`), padding optional. */
function base64Bytes(text) {
  const bare = text.replace(/=+$/, '');
  return Uint8Array.from(atob(bare + '='.repeat((4 - (bare.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

/**
 * A step's bytes: `field` (text, as UTF-8) or `field`_b64 (standard base64), never both;
 * neither is `absent` as text (undefined: the step is malformed).
 */
function stepBytes(step, field, absent) {
  const text = step[field];
  const encoded = step[`${field}_b64`];
  if (text !== undefined && encoded !== undefined) throw new Error(`a step has ${field} (text) or ${field}_b64, not both`);
  if (encoded !== undefined) return base64Bytes(encoded);
  if (text === undefined && absent === undefined) throw new Error(`a step has ${field} (text) or ${field}_b64`);
  return new TextEncoder().encode(text ?? absent);
}

/** A source session's deadline as the vectors write it: a number (a safe integer) or null. */
function deadlineJson(session) {
  const deadline = session.deadline;
  if (deadline !== null && !Number.isSafeInteger(deadline)) {
    throw new Error(`deadline is ${typeof deadline} ${deadline}, not a safe integer or null`);
  }
  return deadline;
}

/**
 * One step of a source session scenario (conformance/README.md, "Session scenarios",
 * `session_source`): the actions it returns and the deadline after it.
 */
function sourceStep(api, session, step) {
  const now = step.now ?? 0;
  let actions;
  try {
    switch (step.call) {
      case 'start':
        actions = session.start(now);
        break;
      case 'call': {
        const { call, actions: list, ...rest } = session.call(step.op, now);
        if (Object.keys(rest).length) throw new Error(`call returned extra fields ${Object.keys(rest)}`);
        return { call, actions: list, deadline: deadlineJson(session) };
      }
      case 'response':
        actions = session.response(step.id, now, step.status, step.headers ?? {}, stepBytes(step, 'body', ''));
        break;
      case 'opened':
        actions = session.opened(step.id, now);
        break;
      case 'chunk':
        actions = session.chunk(step.id, now, stepBytes(step, 'data'));
        break;
      case 'failed':
        actions = session.failed(step.id, now, step.code, step.message);
        break;
      case 'timer':
        actions = session.timer(now);
        break;
      case 'close':
        actions = session.close(now);
        break;
      case 'state':
        return session.state;
      default:
        throw new Error(`unknown source session call ${step.call}`);
    }
  } catch (err) {
    if (err instanceof api.ShardrouteError) return { error: { code: err.code }, deadline: deadlineJson(session) };
    throw err;
  }
  if (!Array.isArray(actions)) throw new Error(`${step.call} did not return an array of actions`);
  return { actions, deadline: deadlineJson(session) };
}

/** A `session_source` case: `{ results }`, or `{ error: { code } }` when the session cannot be made. */
function runSource(api, kase) {
  let session;
  try {
    session = new api.SourceSession(kase.config);
  } catch (err) {
    if (err instanceof api.ShardrouteError) return { error: { code: err.code } };
    throw err;
  }
  return { results: kase.steps.map((step) => sourceStep(api, session, step)) };
}

/** One step of a migration session scenario (conformance/README.md, "Session scenarios"). */
function migrationStep(api, session, step) {
  const key = () => toKey(step.key);
  try {
    switch (step.call) {
      case 'fence_epoch':
        return { epoch: u64Json(session.fenceEpoch, 'fenceEpoch') };
      case 'mode':
        return { mode: session.mode };
      case 'scan_nodes':
        return { nodes: session.scanNodes() };
      case 'read_plan':
        return { nodes: session.readPlan(key(), step.moved) };
      case 'read_plan_at':
        // Times as bigints, as a user holds a u64 clock value.
        return { nodes: session.readPlanAt(key(), BigInt(step.now_ms), step.moved) };
      case 'next_deadline': {
        const deadline = session.nextDeadline(BigInt(step.now_ms));
        return { deadline_ms: deadline === null ? null : u64Json(deadline, 'nextDeadline') };
      }
      case 'actions':
        return { actions: session.actions(BigInt(step.now_ms), step.moved) };
      case 'write_plan': {
        const { node, fenceEpoch: epoch, ...rest } = session.writePlan(key());
        if (Object.keys(rest).length) throw new Error(`writePlan returned extra fields ${Object.keys(rest)}`);
        return { node, fence_epoch: u64Json(epoch, 'fence_epoch') };
      }
      case 'lazy_steps': {
        const steps = session.lazySteps(key());
        if (steps === null) return { steps: null };
        const { readFrom, writeTo, retireFrom, fenceEpoch: epoch, ...rest } = steps;
        if (Object.keys(rest).length) throw new Error(`lazySteps returned extra fields ${Object.keys(rest)}`);
        return { steps: { read_from: readFrom, write_to: writeTo, retire_from: retireFrom,
          fence_epoch: u64Json(epoch, 'fence_epoch') } };
      }
      case 'copy_batch': {
        const { units, next, ...rest } = session.copyBatch(step.cursor, step.max);
        if (Object.keys(rest).length) throw new Error(`copyBatch returned extra fields ${Object.keys(rest)}`);
        return { units, next };
      }
      case 'fenced':
        // The decimal text as a bigint, as a user holds a u64 epoch.
        return { [session.fenced(BigInt(step.min_epoch))]: {} };
      case 'lazy_groups':
        return {
          groups: session.lazyGroups(step.keys.map(toKey)).map((group) => {
            const { steps, indices, ...rest } = group;
            if (Object.keys(rest).length) throw new Error(`lazyGroups returned extra fields ${Object.keys(rest)}`);
            const { readFrom, writeTo, retireFrom, fenceEpoch: epoch, ...more } = steps;
            if (Object.keys(more).length) throw new Error(`lazyGroups' steps have extra fields ${Object.keys(more)}`);
            return { steps: { read_from: readFrom, write_to: writeTo, retire_from: retireFrom,
              fence_epoch: u64Json(epoch, 'fence_epoch') }, indices };
          }),
        };
      case 'resume_at': {
        // Times as bigints; the duty and the pause absent (undefined) for the core's defaults.
        const minPause = step.min_pause_ms === undefined ? undefined : BigInt(step.min_pause_ms);
        const resume = session.resumeAt(BigInt(step.started_ms), BigInt(step.finished_ms), step.duty_per_mille, minPause);
        return { resume_ms: u64Json(resume, 'resumeAt') };
      }
      default:
        throw new Error(`unknown migration session call ${step.call}`);
    }
  } catch (err) {
    if (err instanceof api.ShardrouteError) return { error: err.code };
    throw err;
  }
}

/**
 * A `migration_session` case: `{ results }`, or `{ error }` when the migration
 * (`migration()`) or the session cannot be made. A case with `topology` is the routing
 * a service holds (`MigrationSession.ofTopology`, `previous` and `held` or null).
 */
function runMigrationSession(api, kase, migration, routerFor) {
  let session;
  try {
    const optional = (id) => (id === undefined ? null : routerFor(id));
    session = kase.topology !== undefined
      ? api.MigrationSession.ofTopology(routerFor(kase.topology), optional(kase.previous), optional(kase.held))
      : new api.MigrationSession(migration(), kase.mode, kase.until_ms === undefined ? undefined : BigInt(kase.until_ms));
  } catch (err) {
    if (err instanceof api.ShardrouteError) return { error: err.code };
    throw err;
  }
  return { results: kase.steps.map((step) => migrationStep(api, session, step)) };
}

/** Runs one case; returns null when it passed, or a reason string when it failed. */
function runCase(api, file, routers, kase) {
  const routerFor = (id) => {
    if (!routers.has(id)) {
      const doc = file.topologies[id];
      if (doc === undefined) throw new Error(`unknown topology id ${id}`);
      routers.set(id, new api.Router(doc));
    }
    // A case that names a table runs on its family's router.
    return kase.table === undefined ? routers.get(id) : routers.get(id).table(kase.table);
  };
  const migrationFor = () => {
    const sides = ['dictionary', 'before', 'after'].filter((field) => kase[field] !== undefined).join(' ');
    if (sides === 'dictionary') return api.Migration.ofDictionary(routerFor(kase.dictionary));
    if (sides === 'before after') return new api.Migration(routerFor(kase.before), routerFor(kase.after));
    throw new Error('a migration case names before and after, or dictionary');
  };
  let actual;
  try {
    switch (kase.op) {
      case 'load': {
        const source = kase.topology_json !== undefined ? kase.topology_json : file.topologies[kase.topology];
        const router = new api.Router(source);
        actual = { epoch: router.epoch.toString(), to_json: router.toJson() };
        if (typeof router.epoch !== 'bigint') return `epoch is ${typeof router.epoch}, not bigint`;
        break;
      }
      case 'route': {
        const router = routerFor(kase.topology);
        const key = toKey(kase.key);
        actual = { shard: router.route(key), node: router.node(key) };
        break;
      }
      case 'replicas': {
        const router = routerFor(kase.topology);
        actual = { nodes: router.replicas(toKey(kase.key), kase.count) };
        break;
      }
      case 'route_many': {
        const router = routerFor(kase.topology);
        const shards = router.routeMany(kase.keys.map(toKey));
        if (!(shards instanceof Uint32Array)) return 'routeMany did not return a Uint32Array';
        actual = { shards: Array.from(shards) };
        break;
      }
      case 'hash_key': {
        const hash = kase.hashing === undefined ? api.hashKey(toKey(kase.key)) : api.hashKey(toKey(kase.key), kase.hashing);
        if (typeof hash !== 'bigint') return `hashKey returned ${typeof hash}, not bigint`;
        actual = { hash: hash.toString() };
        break;
      }
      case 'jump': {
        actual = { shard: api.jump(BigInt(kase.hash), kase.buckets) };
        break;
      }
      case 'scatter': {
        const router = routerFor(kase.topology);
        const policy = [kase.read_from, kase.turn, kase.zone];
        let plan;
        if (kase.scope === 'every') plan = router.scatterEvery(...policy);
        else if (kase.scope === 'range') {
          plan = router.scatterRange(toKey(kase.start), kase.end === null ? null : toKey(kase.end), ...policy);
        } else plan = router.scatterKeys(kase.keys.map(toKey), ...policy);
        if ((plan.keys === null) !== (kase.scope !== 'keys')) return 'scatter: keys must be null exactly outside scatterKeys';
        const visits = plan.shards.map((shard, i) => ({ shard, node: plan.nodes[i], keys: plan.keys === null ? [] : plan.keys[i] }));
        actual = { gather: plan.gather, visits };
        break;
      }
      case 'shards_for_range': {
        const router = routerFor(kase.topology);
        const end = kase.end === null ? null : toKey(kase.end);
        actual = { shards: router.shardsForRange(toKey(kase.start), end) };
        break;
      }
      case 'decode_id': {
        const router = routerFor(kase.topology);
        // The decimal text as is: the binding parses it exactly as core's parse_u64 does.
        const decoded = router.decodeId(kase.id);
        const fields = Object.entries(decoded.fields).map(([name, value]) => {
          if (typeof value !== 'bigint') throw new Error(`decodeId field ${name} is ${typeof value}, not bigint`);
          return [name, value.toString()];
        });
        actual = { shard: decoded.shard, fields };
        break;
      }
      case 'locate': {
        actual = routerFor(kase.topology).locate(toKey(kase.key));
        break;
      }
      case 'salted_key': {
        actual = { key: keyForm(kase.key, routerFor(kase.topology).saltedKey(toKey(kase.key), kase.salt)) };
        break;
      }
      case 'salted_keys': {
        const pairs = routerFor(kase.topology).saltedKeys(toKey(kase.key));
        actual = { keys: pairs.map(([key, shard]) => [keyForm(kase.key, key), shard]) };
        break;
      }
      case 'apply': {
        const source = kase.topology_json !== undefined ? kase.topology_json : file.topologies[kase.topology];
        actual = { result: api.apply(source, kase.operation) };
        break;
      }
      case 'modulo_moves': {
        actual = { moves: api.moduloMoves(kase.old, kase.new) };
        break;
      }
      case 'route_read': {
        actual = { node: routerFor(kase.topology).routeRead(toKey(kase.key)) };
        break;
      }
      case 'read_near': {
        actual = { node: routerFor(kase.topology).readNear(toKey(kase.key), kase.zone) };
        break;
      }
      case 'route_write': {
        actual = { nodes: routerFor(kase.topology).routeWrite(toKey(kase.key)) };
        break;
      }
      case 'read_replica': {
        actual = { node: routerFor(kase.topology).readReplica(toKey(kase.key), kase.turn) };
        break;
      }
      case 'stats': {
        actual = { result: snakeFields(routerFor(kase.topology).stats(kase.keys.map(toKey))) };
        break;
      }
      case 'same_slot': {
        actual = { shard: routerFor(kase.topology).sameSlot(kase.keys.map(toKey)) };
        break;
      }
      case 'group_by_node': {
        const groups = routerFor(kase.topology).groupByNode(kase.keys.map(toKey));
        actual = { groups: groups.map(({ node, indices }) => [node, indices]) };
        break;
      }
      case 'moved': {
        actual = { to_json: routerFor(kase.topology).moved(kase.slot, kase.address).toJson() };
        break;
      }
      case 'ask': {
        actual = { address: routerFor(kase.topology).ask(kase.slot, kase.address) };
        break;
      }
      case 'parse_redirect': {
        const { kind, slot, address, ...rest } = api.parseRedirect(kase.line);
        if (Object.keys(rest).length) return `parseRedirect returned extra fields ${Object.keys(rest)}`;
        actual = { kind, slot, address };
        break;
      }
      case 'migration': {
        const migration = migrationFor();
        const key = toKey(kase.key);
        const moves = migration.moves(key);
        if (moves !== null) {
          const { from, to, ...rest } = moves;
          if (Object.keys(rest).length) return `moves returned extra fields ${Object.keys(rest)}`;
        }
        actual = {
          moves: moves === null ? null : [moves.from, moves.to],
          write_target: migration.writeTarget(key),
          read_targets: migration.readTargets(key, kase.moved),
        };
        break;
      }
      case 'migration_salted': {
        const migration = migrationFor();
        const key = toKey(kase.key);
        actual = {
          read_keys: migration.readKeys(key).map((read) => keyForm(kase.key, read)),
          write_key: keyForm(kase.key, migration.writeKey(key, kase.salt)),
        };
        break;
      }
      case 'index_route': {
        const index = routerFor(kase.topology).index(kase.index);
        const key = toKey(kase.key);
        actual = { shard: index.route(key), node: index.node(key) };
        break;
      }
      case 'index_write_plan': {
        actual = routerFor(kase.topology).indexWritePlan(toKey(kase.key), kase.terms.map(([name, term]) => [name, toKey(term)]));
        break;
      }
      case 'migration_shards': {
        const shards = migrationFor().movingShards().map(({ shard, from, to, ...rest }) => {
          if (Object.keys(rest).length) throw new Error(`movingShards returned extra fields ${Object.keys(rest)}`);
          return [shard, from, to];
        });
        actual = { shards };
        break;
      }
      case 'migration_scan': {
        const nodes = migrationFor().scanNodes();
        if (!Array.isArray(nodes)) return 'scanNodes did not return an array';
        actual = { nodes };
        break;
      }
      case 'migration_keys': {
        const indices = migrationFor().movingKeys(kase.keys.map(toKey));
        if (!Array.isArray(indices)) return 'movingKeys did not return an array';
        actual = { indices };
        break;
      }
      case 'shard_owner': {
        actual = { node: routerFor(kase.topology).shardOwner(kase.shard) };
        break;
      }
      case 'replace': {
        const next = routerFor(kase.topology).replace(file.topologies[kase.next]);
        if (!(next instanceof api.Router)) return 'replace did not return a Router';
        actual = { epoch: next.epoch.toString() };
        break;
      }
      case 'diff': {
        actual = { result: snakeFields(api.diff(routerFor(kase.old), routerFor(kase.new), kase.keys.map(toKey), { perKey: kase.per_key ?? false })) };
        break;
      }
      case 'encode_dictionary': {
        const bytes = api.encodeDictionary(file.topologies[kase.topology]);
        if (!(bytes instanceof Uint8Array)) return 'encodeDictionary did not return a Uint8Array';
        actual = { hex: Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('') };
        break;
      }
      case 'decode_dictionary': {
        actual = { to_json: api.decodeDictionary(textDecoderHex(kase.hex)) };
        break;
      }
      case 'redis_session': {
        actual = runSession(api, kase);
        break;
      }
      case 'topology_follower': {
        actual = runFollower(api, file, kase);
        break;
      }
      case 'migration_session': {
        actual = runMigrationSession(api, kase, migrationFor, routerFor);
        break;
      }
      case 'misplaced': {
        // The consistency check: a node id (string) or a shard number.
        const holder = kase.node !== undefined ? kase.node : kase.shard;
        actual = api.MigrationSession.misplaced(routerFor(kase.topology), holder, kase.keys.map(toKey));
        break;
      }
      case 'session_source': {
        actual = runSource(api, kase);
        break;
      }
      default:
        return `unknown op ${kase.op}`;
    }
  } catch (err) {
    if (err && typeof err.code === 'string' && err instanceof Error) {
      actual = { error: err.code };
    } else {
      return `threw a non-shardroute error: ${err && err.stack ? err.stack : err}`;
    }
  }
  if (sameJson(actual, kase.expect)) return null;
  return `expected ${JSON.stringify(kase.expect)}, got ${JSON.stringify(actual)}`;
}

/**
 * Runs every case of every file. `files` is an array of parsed vector files.
 * Returns { passed, failed, skipped, failures: [{name, reason}] }.
 */
export function runVectors(api, files, filter = '') {
  const result = { passed: 0, failed: 0, skipped: 0, failures: [] };
  for (const file of files) {
    if (file.format !== 'shardroute-vectors/1') {
      result.failed += 1;
      result.failures.push({ name: file.name, reason: `unknown vector format ${file.format}` });
      continue;
    }
    const routers = new Map();
    for (const kase of file.cases) {
      if (filter && !kase.name.includes(filter)) continue;
      let reason;
      try {
        reason = runCase(api, file, routers, kase);
      } catch (err) {
        reason = `runner error: ${err && err.stack ? err.stack : err}`;
      }
      if (reason === null) {
        result.passed += 1;
      } else {
        result.failed += 1;
        result.failures.push({ name: kase.name, reason });
      }
    }
  }
  return result;
}

/** The line every runner prints: the plain "N passed, M failed" summary. */
export function summaryLine(runner, result) {
  return `conformance ${runner}: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped`;
}
