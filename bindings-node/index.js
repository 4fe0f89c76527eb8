'use strict';
// shardroute for Node.js: the public module over the native addon (shardroute.node,
// built from src/ by build.sh). Everything here is conversion: object documents become
// JSON text, a session's actions become Actions, a follower's outcomes become Offereds,
// a MigrationSession is given its Migration's native one, and errors the addon throws with
// a shardroute code become ShardrouteError.
// Every routing and hashing decision is made by the Rust core. What this file shares with
// the WASM package (the error class, document serialization, string packing) is
// shared.js, copied by build.sh from bindings-js/shared.mjs.

/** Whether `err` says that `request` itself (not something it requires) cannot be found. */
function notFound(err, request) {
  return Boolean(err) && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(`'${request}'`);
}

/** Loads a file build.sh makes, saying how to make it when it is missing. */
function load(file) {
  try {
    return require(file);
  } catch (err) {
    if (notFound(err, file)) {
      throw new Error(`shardroute: ${file} is missing; build it with bindings-node/build.sh`, { cause: err });
    }
    throw err;
  }
}

/**
 * Whether this Linux runs on musl rather than glibc: glibc's ldd script names itself,
 * musl's names musl; where there is no ldd, Node's report gives the glibc version it runs
 * on, and none on musl (the test napi-rs' loaders make).
 */
function isMusl() {
  try {
    const ldd = require('node:fs').readFileSync('/usr/bin/ldd', 'latin1');
    if (ldd.includes('musl')) return true;
    if (ldd.includes('GNU C Library') || ldd.includes('GLIBC')) return false;
  } catch {
    // no /usr/bin/ldd: ask the report
  }
  const report = process.report && typeof process.report.getReport === 'function' ? process.report.getReport() : null;
  return !(report && report.header && report.header.glibcVersionRuntime);
}

/**
 * The npm package that holds this platform's addon, napi-rs' way: `shardroute-<platform>-<arch>`,
 * and `-gnu` or `-musl` on Linux (scripts/platforms.py builds one per row of its table, and
 * `make dist` lists them all as optionalDependencies of this package, so npm installs the
 * one that fits).
 */
function platformPackage() {
  const libc = process.platform === 'linux' ? (isMusl() ? '-musl' : '-gnu') : '';
  return `shardroute-${process.platform}-${process.arch}${libc}`;
}

/**
 * The native addon: `./shardroute.node` where build.sh made one (a checkout), else the
 * platform package npm installed beside this one. Anything but a missing file or package
 * (a binary that fails to load, say) is thrown as it is.
 */
function loadAddon() {
  try {
    return require('./shardroute.node');
  } catch (err) {
    if (!notFound(err, './shardroute.node')) throw err;
  }
  const name = platformPackage();
  try {
    return require(name);
  } catch (err) {
    if (!notFound(err, name)) throw err;
    throw new Error(
      `shardroute: no native addon for ${name.slice('shardroute-'.length)}: the npm package ${name} is not ` +
        'installed (npm installs it with shardroute where one is published: README.md lists the platforms; ' +
        'an install with --no-optional or --omit=optional leaves it out), and there is no ./shardroute.node ' +
        'built by bindings-node/build.sh. Elsewhere, shardroute-wasm runs the same core on any platform.',
      { cause: err },
    );
  }
}

const addon = loadAddon();
const { isUint8Array } = require('node:util').types;
const { Action, Offered, ShardrouteError, documentToJson, groupsOf, nodesOf, packStrings, planOf } = load('./shared.js');

/** The core's limits on JSON text (`limits::MAX_DOCUMENT_BYTES`, `limits::MAX_JSON_NESTING`), as the addon exports them. */
const { MAX_DOCUMENT_BYTES, MAX_JSON_NESTING } = addon;
const LIMITS = Object.freeze({ MAX_DOCUMENT_BYTES, MAX_JSON_NESTING });

/** The codes of shardroute's errors, from the core (`ErrorKind::ALL`). */
const ERROR_CODES = new Set(addon.errorCodes());

/** Rethrows an error from the addon: as a ShardrouteError when it carries a shardroute code. */
function rethrow(err) {
  if (err instanceof Error && !(err instanceof ShardrouteError) && ERROR_CODES.has(err.code)) {
    const error = new ShardrouteError(err.code, err.message);
    Error.captureStackTrace(error, rethrow); // the stack starts at the method the user called
    throw error;
  }
  throw err;
}

/**
 * A document argument as the addon takes it: an object becomes its JSON text
 * (shared.js's documentToJson, strict: a NaN, a function or a cycle throws a
 * ShardrouteError of `code`); other values pass unchanged, for the addon to read or refuse.
 */
function documentText(value, what, code = 'invalid_topology') {
  return typeof value === 'object' && value !== null ? documentToJson(value, what, code, LIMITS) : value;
}

/**
 * A Uint16Array or Uint8Array of `length` elements whose contents are not cleared
 * (packStrings writes every unit it passes on before the addon reads it, so zeroing would
 * be wasted work). allocUnsafeSlow: a fresh ArrayBuffer of its own (never the shared
 * pool), at offset 0.
 */
function scratch(Type, length) {
  return new Type(Buffer.allocUnsafeSlow(length * Type.BYTES_PER_ELEMENT).buffer, 0, length);
}

/** The keys of routeMany / nodeMany as `[units, offsets]` for the addon's UTF-16 calls, or undefined. */
function packed(keys) {
  return packStrings(keys, false, scratch);
}

/**
 * Passed as the first argument by `replace`, `moved` and Migration (module-private): the
 * constructor's second argument is then a native router or migration the addon made,
 * which the new Router or Migration holds as it is.
 */
const WRAP = Symbol('shardroute.wrap');

/**
 * The native router of a public Router, any other value unchanged (module-private; set in
 * Router's static block).
 */
let nativeOf;

/**
 * The native migration of a public Migration, any other value unchanged (module-private;
 * set in Migration's static block).
 */
let nativeMigrationOf;

/**
 * `call` as the public method or function `name`: the same arguments, and an error the
 * addon throws with a shardroute code rethrown as a ShardrouteError.
 */
function exported(name, call) {
  return {
    [name](first, second, third, fourth) {
      try {
        return call(this, first, second, third, fourth);
      } catch (err) {
        rethrow(err);
      }
    },
  }[name];
}

/** Defines each of `methods` on `Class.prototype` as an `exported` call, with the attributes of a class body's methods. */
function defineMethods(Class, methods) {
  for (const [name, call] of Object.entries(methods)) {
    Object.defineProperty(Class.prototype, name, { value: exported(name, call), writable: true, configurable: true });
  }
}

/** A router: a topology document compiled for lookups. index.d.ts documents the methods. */
class Router {
  #inner;
  /**
   * The hot single-key calls over #inner: plain N-API functions, much cheaper to call than
   * methods. #nodeIndex gives the index of the owner in #ids, the node ids in document
   * order, made once (returning an existing string is cheaper than making one per call).
   */
  #route;
  #nodeIndex;
  #ids;

  static {
    nativeOf = (value) => (typeof value === 'object' && value !== null && #inner in value ? value.#inner : value);
    // Every other method: the native router's, its arguments and result converted. One
    // arrow per method, so that each call site calls one native method (a call site that
    // saw them all would take V8's generic path, 10-20% slower a call).
    const methods = {
      replicas: (router, key, count) => router.#inner.replicas(key, count),
      routeMany: (router, keys) => {
        const units = packed(keys);
        return units === undefined ? router.#inner.routeMany(keys) : router.#inner.routeManyUtf16(units[0], units[1]);
      },
      routeU64s: (router, keys) => router.#inner.routeU64s(keys),
      routePacked: (router, data, offsets) => router.#inner.routePacked(data, offsets),
      nodeMany: (router, keys) => {
        const units = packed(keys);
        const inner = router.#inner;
        const indices = units === undefined ? inner.nodeIndexMany(keys) : inner.nodeIndexManyUtf16(units[0], units[1]);
        return nodesOf(indices, router.#ids);
      },
      shardsForRange: (router, start, end) => router.#inner.shardsForRange(start, end),
      scatterEvery: (router, readFrom, turn, zone) => planOf(router.#inner.scatterEvery(readFrom, turn, zone), router.#ids),
      scatterRange: (router, start, end, readFrom, turn, zone) =>
        planOf(router.#inner.scatterRange(start, end, readFrom, turn, zone), router.#ids),
      scatterKeys: (router, keys, readFrom, turn, zone) => planOf(router.#inner.scatterKeys(keys, readFrom, turn, zone), router.#ids),
      decodeId: (router, id) => {
        const { shard, fields } = router.#inner.decodeId(id);
        return { shard, fields: Object.fromEntries(fields) };
      },
      locate: (router, key) => {
        const { shard, node, address, zone, names } = router.#inner.locate(key);
        return { shard, node, address, zone, names: Object.fromEntries(names) };
      },
      fanout: (router, key) => router.#inner.fanout(key),
      saltedKey: (router, key, salt) => router.#inner.saltedKey(key, salt),
      saltedKeys: (router, key) => router.#inner.saltedKeys(key),
      routeRead: (router, key) => router.#inner.routeRead(key),
      routeWrite: (router, key) => router.#inner.routeWrite(key),
      replace: (router, topology) => new Router(WRAP, router.#inner.replace(documentText(topology, 'topology'))),
      index: (router, name) => new Router(WRAP, router.#inner.index(name)),
      indexNames: (router) => router.#inner.indexNames(),
      table: (router, name) => new Router(WRAP, router.#inner.table(name)),
      readNear: (router, key, zone) => router.#inner.readNear(key, zone),
      indexWritePlan: (router, key, terms) => JSON.parse(router.#inner.indexWritePlan(key, terms)),
      readReplica: (router, key, turn) => router.#inner.readReplica(key, turn),
      sameSlot: (router, keys) => router.#inner.sameSlot(keys),
      stats: (router, keys) => JSON.parse(router.#inner.stats(keys)),
      groupByNode: (router, keys) => {
        const units = packed(keys);
        const inner = router.#inner;
        const flat = units === undefined ? inner.groupByNode(keys) : inner.groupByNodeUtf16(units[0], units[1]);
        return groupsOf(flat, router.#ids);
      },
      moved: (router, slot, address) => new Router(WRAP, router.#inner.moved(slot, address)),
      ask: (router, slot, address) => router.#inner.ask(slot, address),
      shardOwner: (router, shard) => router.#inner.shardOwner(shard),
    };
    defineMethods(this, methods);
  }

  /** @param {string | object} topology the topology document, as JSON text or as an object */
  constructor(topology) {
    if (topology === WRAP) {
      this.#inner = arguments[1];
    } else {
      const text = documentText(topology, 'topology');
      try {
        this.#inner = new addon.Router(text);
      } catch (err) {
        rethrow(err);
      }
    }
    [this.#route, this.#nodeIndex] = this.#inner.hotFunctions();
    this.#ids = this.#inner.nodeIds();
  }

  route(key) {
    try {
      return this.#route(key);
    } catch (err) {
      rethrow(err);
    }
  }

  node(key) {
    try {
      return this.#ids[this.#nodeIndex(key)];
    } catch (err) {
      rethrow(err);
    }
  }

  get epoch() {
    return this.#inner.epoch;
  }

  toJson() {
    return this.#inner.toJson();
  }
}

/**
 * A migration from one router to another: where keys go, where reads and writes go, what
 * a copy job moves. index.d.ts documents the methods.
 */
class Migration {
  #inner;
  /**
   * The public Routers `before` and `after` give: those passed to the constructor, or,
   * for `ofDictionary`, the native migration's own, wrapped on first use.
   */
  #before;
  #after;

  static {
    nativeMigrationOf = (value) => (typeof value === 'object' && value !== null && #inner in value ? value.#inner : value);
    // One arrow per method, as for Router.
    defineMethods(this, {
      moves: (migration, key) => migration.#inner.moves(key),
      writeTarget: (migration, key) => migration.#inner.writeTarget(key),
      readTargets: (migration, key, moved) => migration.#inner.readTargets(key, moved),
      readKeys: (migration, key) => migration.#inner.readKeys(key),
      writeKey: (migration, key, salt) => migration.#inner.writeKey(key, salt),
      movingShards: (migration) => migration.#inner.movingShards(),
      scanNodes: (migration) => migration.#inner.scanNodes(),
      movingKeys: (migration, keys) => migration.#inner.movingKeys(keys),
    });
  }

  /**
   * @param {Router} before the router data moves from
   * @param {Router} after the router data moves to
   */
  constructor(before, after) {
    if (before === WRAP) {
      this.#inner = after;
      return;
    }
    try {
      // Anything but a Router goes to the addon as it is, which refuses it (invalid_argument).
      this.#inner = new addon.Migration(nativeOf(before), nativeOf(after));
    } catch (err) {
      rethrow(err);
    }
    this.#before = before;
    this.#after = after;
  }

  static ofDictionary(router) {
    try {
      return new Migration(WRAP, addon.Migration.ofDictionary(nativeOf(router)));
    } catch (err) {
      rethrow(err);
    }
  }

  get before() {
    return (this.#before ??= new Router(WRAP, this.#inner.before));
  }

  get after() {
    return (this.#after ??= new Router(WRAP, this.#inner.after));
  }
}

/** `read()`, an error the addon throws with a shardroute code rethrown as a ShardrouteError (for getters). */
function guarded(read) {
  try {
    return read();
  } catch (err) {
    return rethrow(err);
  }
}

/**
 * The native command of a public Command, any other value unchanged (module-private; set
 * in Command's static block).
 */
let nativeCommandOf;

/** One command's progress, made by ClusterSession.command: a native command. index.d.ts documents it. */
class Command {
  #inner;

  static {
    // A Command made by `new` holds none: the addon refuses it as the object it is.
    nativeCommandOf = (value) => (typeof value === 'object' && value !== null && #inner in value ? value.#inner ?? value : value);
  }

  constructor(wrap, inner) {
    if (wrap === WRAP) this.#inner = inner;
  }

  get slot() {
    return guarded(() => this.#inner.slot);
  }

  get redirects() {
    return guarded(() => this.#inner.redirects);
  }

  get inFlight() {
    return guarded(() => this.#inner.inFlight);
  }
}

/** The package's Action of the fields a native session call returns (bindings-js/session.rs's FlatAction). */
function actionOf(fields) {
  return new Action(...fields);
}

/** JavaScript data (a config, a CLUSTER SHARDS reply) as the JSON text the addon reads: strict, invalid_argument. */
function dataText(value, what) {
  return documentToJson(value, what, 'invalid_argument', LIMITS);
}

/** The key of ClusterSession's steady path for shardroute/redis (not public API). */
const FAST_PATH = Symbol.for('shardroute.ClusterSession.fastPath');

/**
 * A Redis Cluster client's decisions, without I/O: the core's session, over the native
 * one. index.d.ts documents the methods.
 */
class ClusterSession {
  #inner;
  /** The native `sendNow` (a plain N-API function: hotSendNow), made once. */
  #sendNow;
  /**
   * `{ address, readonly }` of each node of the table, at `2 * node + readonly` (what
   * `sendNow` returns), made when first needed after the table's nodes changed: `refreshed`
   * drops it, and after a call that can change them (`failed`, `stalled`, `unreachable`,
   * `onDeadline`) the next send compares the core's `endpointsVersion` with the one it was
   * made at. A MOVED to a node of the table leaves the nodes: nothing is converted again.
   */
  #targets = null;
  /** The core's `endpointsVersion` when `#targets` was made. */
  #targetsVersion = -1;
  /** A call since the last send may have changed the table's nodes. */
  #recheck = false;
  /** The native `[pipelineQueued, pipelineTake, pipelineDone, pipelineWithdrawn]` (plain N-API functions: hotPipeline), made when first used. */
  #pipeline = null;

  static {
    // One arrow per method, as for Router.
    defineMethods(this, {
      command: (session, keys, access, nowMs) => new Command(WRAP, session.#inner.command(keys, access, nowMs)),
      poll: (session, command, nowMs) => actionOf(session.#inner.poll(nativeCommandOf(command), nowMs)),
      succeeded: (session, command, nowMs) => actionOf(session.#inner.succeeded(nativeCommandOf(command), nowMs)),
      failed: (session, command, text, names, nowMs) => {
        session.#recheck = true;
        return actionOf(session.#inner.failed(nativeCommandOf(command), text, names, nowMs));
      },
      stalled: (session, command, nowMs) => {
        session.#recheck = true;
        return actionOf(session.#inner.stalled(nativeCommandOf(command), nowMs));
      },
      unreachable: (session, command, why, nowMs) => {
        session.#recheck = true;
        return actionOf(session.#inner.unreachable(nativeCommandOf(command), why, nowMs));
      },
      deadline: (session, command) => session.#inner.deadline(nativeCommandOf(command)),
      replyDeadline: (session, command) => session.#inner.replyDeadline(nativeCommandOf(command)),
      onDeadline: (session, command, nowMs) => {
        session.#recheck = true;
        return actionOf(session.#inner.onDeadline(nativeCommandOf(command), nowMs));
      },
      refreshSent: (session, address, nowMs) => session.#inner.refreshSent(address, nowMs),
      refreshReplyDeadline: (session) => session.#inner.refreshReplyDeadline(),
      nextDeadline: (session) => session.#inner.nextDeadline(),
      batchDeadline: (session, nowMs) => session.#inner.batchDeadline(nowMs),
      // Called by shardroute/redis off its steady path (whose `send` asks pipelineQueued and
      // pipelineDone in its own native call): the hot functions (hotPipeline), made once.
      pipelineQueued: (session, address, readonly) => (session.#pipeline ??= session.#inner.hotPipeline())[0](address, readonly),
      pipelineTake: (session, address, readonly) => (session.#pipeline ??= session.#inner.hotPipeline())[1](address, readonly),
      pipelineDone: (session, address, readonly) => (session.#pipeline ??= session.#inner.hotPipeline())[2](address, readonly),
      pipelineWithdrawn: (session, address, readonly, count) =>
        (session.#pipeline ??= session.#inner.hotPipeline())[3](address, readonly, count),
      pipelinePending: (session, address, readonly) => session.#inner.pipelinePending(address, readonly),
      timeout: (session, nowMs) => session.#inner.timeout(nowMs),
      addressOf: (session, node) => session.#inner.addressOf(node),
      refreshCandidates: (session) => session.#inner.refreshCandidates(),
      refreshed: (session, reply, nowMs) => {
        session.#targets = null;
        return session.#inner.refreshed(dataText(reply, 'reply'), nowMs);
      },
      refreshFailed: (session, nowMs) => session.#inner.refreshFailed(nowMs),
      wantsRefresh: (session, nowMs) => session.#inner.wantsRefresh(nowMs),
      plan: (session, keys, access) => session.#inner.plan(keys, access),
      resetStats: (session) => session.#inner.resetStats(),
    });
  }

  /**
   * @param {string[]} seeds startup nodes, 'host:port'
   * @param {object} [config] fields of sessionDefaults() to change
   */
  constructor(seeds, config) {
    try {
      this.#inner = new addon.ClusterSession(seeds, config === undefined || config === null ? config : dataText(config, 'config'));
    } catch (err) {
      rethrow(err);
    }
    this.#sendNow = this.#inner.hotSendNow();
  }

  /**
   * The steady path of shardroute/redis, not public API (index.d.ts leaves it out), under
   * a registered symbol: `send(keys, access, nowMs, queued)` is `command` + `poll` in one
   * native call (the core's `ClusterSession::send_now_timed`): the `{ address, readonly }`
   * of a command sent at once, or null (take `command` and `poll`). After a send,
   * `deadline` is that attempt's deadline (a number on the `nowMs` clock, or null): the
   * one `deadline(command)` gives after `command` + `poll`, computed by the core. With
   * `queued` true (auto-pipelining), a command sent also joined its connection's queue in
   * the same native call: `queued` is then what `pipelineQueued(address, readonly)`
   * answered (-1: not asked). With `doneAddress` (not null), a write on the connection
   * `doneAddress`, `doneReadonly` ended before: `pipelineDone` of it goes first in the same
   * native call, and `done` is its answer (-1: not asked), even when `send` throws. A reply
   * before it ends such a command; anything else (an error, the deadline) goes on with
   * `command(keys, access, address, sentMs)`, its Command as `poll` at `sentMs` would
   * have left it (the core's `command_sent_at`). `plan` is `plan` for the client's batches,
   * flat (the core's `plan_flat`).
   */
  get [FAST_PATH]() {
    const session = this;
    const out = [-1, -1, -1];
    return {
      deadline: null,
      queued: -1,
      done: -1,
      send(keys, access, nowMs, queued = false, doneAddress = null, doneReadonly = false) {
        let sent;
        out[2] = -1;
        try {
          sent = session.#sendNow(keys, access, nowMs, out, queued, doneAddress, doneReadonly);
        } catch (err) {
          this.done = out[2];
          rethrow(err);
        }
        this.done = out[2];
        if (sent < 0) return null;
        this.deadline = out[0] < 0 ? null : out[0];
        this.queued = queued ? out[1] : -1;
        if (session.#recheck) {
          session.#recheck = false;
          if (session.#targets !== null && guarded(() => session.#inner.endpointsVersion()) !== session.#targetsVersion) {
            session.#targets = null;
          }
        }
        if (session.#targets === null) {
          session.#targetsVersion = guarded(() => session.#inner.endpointsVersion());
          session.#targets = guarded(() => session.#inner.endpoints()).flatMap((address) =>
            [Object.freeze({ address, readonly: false }), Object.freeze({ address, readonly: true })]);
        }
        return session.#targets[sent];
      },
      command: (keys, access, address, sentMs) =>
        new Command(WRAP, guarded(() => session.#inner.commandSent(keys, access, address, sentMs))),
      /**
       * `plan(keys, access)`'s groups flat: `{ address, readonly, indices, starts }`, slot
       * `i`'s key indices `indices[starts[i]..starts[i + 1]]` (two Uint32Arrays a node in
       * place of two arrays a slot).
       */
      plan: (keys, access) => guarded(() => session.#inner.planFlat(keys, access)),
    };
  }

  get stats() {
    return guarded(() => this.#inner.stats);
  }

  get config() {
    return guarded(() => JSON.parse(this.#inner.config));
  }

  get router() {
    const router = guarded(() => this.#inner.router);
    return router === null ? null : new Router(WRAP, router);
  }
}

/** The package's Offered of the fields a native follower call returns (bindings-js/follower.rs's FlatOffered). */
function offeredOf(fields) {
  return new Offered(...fields);
}

/**
 * Follows a topology from a source (etcd, ZooKeeper, an HTTP endpoint), without I/O: the
 * core's follower, over the native one. index.d.ts documents the methods.
 */
class TopologyFollower {
  #inner;

  static {
    // One arrow per method, as for Router. Object documents become JSON text here, as for
    // `new Router`; the native follower reads the text, the revision and the time.
    defineMethods(this, {
      offer: (follower, document, revision, nowMs) =>
        offeredOf(follower.#inner.offer(documentText(document, 'document'), revision, nowMs)),
      offerDictionary: (follower, bytes, revision, nowMs) => offeredOf(follower.#inner.offerDictionary(bytes, revision, nowMs)),
      offerBytes: (follower, bytes, revision, nowMs) => offeredOf(follower.#inner.offerBytes(bytes, revision, nowMs)),
      disconnected: (follower, nowMs) => follower.#inner.disconnected(nowMs),
      connected: (follower) => follower.#inner.connected(),
      nextDeadline: (follower) => follower.#inner.nextDeadline(),
      publish: (follower, document) => follower.#inner.publish(documentText(document, 'document')),
    });
  }

  /** @param {object} [config] fields of followerDefaults() to change */
  constructor(config) {
    try {
      this.#inner = new addon.TopologyFollower(config === undefined || config === null ? config : dataText(config, 'config'));
    } catch (err) {
      rethrow(err);
    }
  }

  get router() {
    const router = guarded(() => this.#inner.router);
    return router === null ? null : new Router(WRAP, router);
  }

  get revision() {
    return guarded(() => this.#inner.revision);
  }

  get stats() {
    return guarded(() => this.#inner.stats);
  }

  get config() {
    return guarded(() => JSON.parse(this.#inner.config));
  }
}

/**
 * What services and a copy job do while data moves: the core's migration session, over
 * the native one. index.d.ts documents the methods.
 */
class MigrationSession {
  #inner;

  static {
    // One arrow per method, as for Router.
    defineMethods(this, {
      readPlan: (session, key, moved) => session.#inner.readPlan(key, moved),
      readPlanAt: (session, key, nowMs, moved) => session.#inner.readPlanAt(key, nowMs, moved),
      nextDeadline: (session, nowMs) => session.#inner.nextDeadline(nowMs),
      actions: (session, nowMs, moved) => session.#inner.actions(nowMs, moved),
      writePlan: (session, key) => session.#inner.writePlan(key),
      lazySteps: (session, key) => session.#inner.lazySteps(key),
      lazyGroups: (session, keys) => session.#inner.lazyGroups(keys),
      resumeAt: (session, startedMs, finishedMs, dutyPerMille, minPauseMs) =>
        session.#inner.resumeAt(startedMs, finishedMs, dutyPerMille, minPauseMs),
      copyBatch: (session, cursor, max) => session.#inner.copyBatch(cursor, max),
      fenced: (session, minEpoch) => session.#inner.fenced(minEpoch),
      scanNodes: (session) => session.#inner.scanNodes(),
    });
  }

  /**
   * @param {Migration} migration the migration
   * @param {'background' | 'lazy' | 'expiration'} mode how the data moves
   * @param {number | bigint} [untilMs] the deadline of an expiration session
   */
  constructor(migration, mode, untilMs) {
    if (migration === WRAP) {
      this.#inner = mode;
      return;
    }
    try {
      // Anything but a Migration goes to the addon as it is, which refuses it (invalid_argument).
      this.#inner = new addon.MigrationSession(nativeMigrationOf(migration), mode, untilMs);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The routing a service uses; the core decides its mode. */
  static ofTopology(topology, previous = null, held = null) {
    try {
      return new MigrationSession(WRAP, addon.MigrationSession.ofTopology(nativeOf(topology), nativeOf(previous), nativeOf(held)));
    } catch (err) {
      rethrow(err);
    }
  }

  /** The consistency check: the keys found on a node or shard that it does not own. */
  static misplaced(router, holder, keys) {
    try {
      return addon.MigrationSession.misplaced(nativeOf(router), holder, keys);
    } catch (err) {
      rethrow(err);
    }
  }

  get mode() {
    return this.#inner.mode;
  }

  get untilMs() {
    return this.#inner.untilMs;
  }

  get fenceEpoch() {
    return this.#inner.fenceEpoch;
  }
}

/**
 * A topology source (etcd, an HTTP endpoint, ZooKeeper) as a protocol, without I/O: the
 * core's source session, over the native one. Objects in (config, op, headers) become JSON
 * text here, as for `new TopologyFollower`; the actions, state and config come back as JSON
 * text, parsed here. index.d.ts documents the methods.
 */
class SourceSession {
  #inner;

  static {
    // One arrow per method, as for Router.
    defineMethods(this, {
      start: (session, nowMs) => JSON.parse(session.#inner.start(nowMs)),
      call: (session, op, nowMs) => JSON.parse(session.#inner.call(dataText(op, 'op'), nowMs)),
      opened: (session, id, nowMs) => JSON.parse(session.#inner.opened(id, nowMs)),
      chunk: (session, id, nowMs, data) => JSON.parse(session.#inner.chunk(id, nowMs, data)),
      failed: (session, id, nowMs, code, message) => JSON.parse(session.#inner.failed(id, nowMs, code, message)),
      timer: (session, nowMs) => JSON.parse(session.#inner.timer(nowMs)),
      close: (session, nowMs) => JSON.parse(session.#inner.close(nowMs)),
    });
  }

  /** @param {object} config `{ source: 'etcd', ... }` or `{ source: 'http', ... }` */
  constructor(config) {
    try {
      this.#inner = new addon.SourceSession(dataText(config, 'config'));
    } catch (err) {
      rethrow(err);
    }
  }

  /** The answer to request `id` (five arguments: one more than `exported` passes on). */
  response(id, nowMs, status, headers, body) {
    try {
      return JSON.parse(this.#inner.response(id, nowMs, status, dataText(headers, 'headers'), body));
    } catch (err) {
      return rethrow(err);
    }
  }

  get deadline() {
    return guarded(() => this.#inner.deadline);
  }

  get state() {
    return guarded(() => JSON.parse(this.#inner.state));
  }

  get stats() {
    return guarded(() => JSON.parse(this.#inner.stats));
  }

  get config() {
    return guarded(() => JSON.parse(this.#inner.config));
  }

  get router() {
    const router = guarded(() => this.#inner.router);
    return router === null ? null : new Router(WRAP, router);
  }
}

const sessionDefaults = exported('sessionDefaults', () => JSON.parse(addon.sessionDefaults()));
const followerDefaults = exported('followerDefaults', () => JSON.parse(addon.followerDefaults()));
const hashKey = exported('hashKey', (_, key, hashing) => addon.hashKey(key, documentText(hashing, 'hashing')));
const jump = exported('jump', (_, hash, buckets) => addon.jump(hash, buckets));
const apply = exported('apply', (_, topology, operation) => {
  const topologyText = documentText(topology, 'topology');
  return JSON.parse(addon.apply(topologyText, documentText(operation, 'operation', 'invalid_argument')));
});
const moduloMoves = exported('moduloMoves', (_, oldCount, newCount) => addon.moduloMoves(oldCount, newCount));
// Anything but a Router goes to the addon as it is, which refuses it (invalid_argument).
const diff = exported('diff', (_, oldRouter, newRouter, keys, options) => JSON.parse(addon.diff(nativeOf(oldRouter), nativeOf(newRouter), keys, options)));
const encodeDictionary = exported('encodeDictionary', (_, topology) => addon.encodeDictionary(documentText(topology, 'topology')));
const decodeDictionary = exported('decodeDictionary', (_, bytes) => addon.decodeDictionary(bytes));
const parseRedirect = exported('parseRedirect', (_, line) => addon.parseRedirect(line));
const parseAddress = exported('parseAddress', (_, address) => addon.parseAddress(address));

/** A core service answer (`{status, headers, body}`) as the package returns it. */
function serviceAnswer(native) {
  return { status: native.status, headers: native.headers.map(([name, value]) => [name, value]), body: native.body };
}

/**
 * The routing service of one router (`GET /route?key=...`, `POST /route`), the core's
 * `shardroute::service` (index.d.ts). `shardroute/service` mounts it in node:http; the
 * WASM package's `shardroute-wasm/service` as a `fetch` handler.
 */
class RoutingService {
  #inner;

  constructor(router) {
    this.#inner = guarded(() => new addon.RoutingService(nativeOf(router)));
  }

  get etag() {
    return guarded(() => this.#inner.etag);
  }

  answer(method, target, ifNoneMatch = null, body = null) {
    text(method, 'method');
    text(target, 'target');
    if (ifNoneMatch !== null && ifNoneMatch !== undefined) text(ifNoneMatch, 'ifNoneMatch');
    // isUint8Array, not instanceof: a body made in another realm (a vm context, a worker's
    // transfer) is a Uint8Array all the same, as the WASM package takes it.
    if (body !== null && body !== undefined && !isUint8Array(body)) {
      throw new ShardrouteError('invalid_argument', `body must be a Uint8Array, not ${typeof body}`);
    }
    return serviceAnswer(guarded(() => this.#inner.answer(method, target, ifNoneMatch ?? null, body ?? null)));
  }

  static handles(target) {
    return guarded(() => addon.serviceHandles(text(target, 'target')));
  }

  static bodyTooLarge(length) {
    if (typeof length !== 'number') throw new ShardrouteError('invalid_argument', 'length must be a number of bytes');
    return serviceAnswer(guarded(() => addon.serviceBodyTooLarge(length)));
  }

  static bodyTimedOut() {
    return serviceAnswer(guarded(() => addon.serviceBodyTimedOut()));
  }

  static unavailable() {
    return serviceAnswer(guarded(() => addon.serviceUnavailable()));
  }

  static limits() {
    return guarded(() => addon.serviceLimits());
  }
}

/** `value` when it is a string of valid Unicode (a lone surrogate is refused, never replaced), else `invalid_argument` naming `what`. */
function text(value, what) {
  if (typeof value !== 'string') throw new ShardrouteError('invalid_argument', `${what} must be a string, not ${value === null ? 'null' : typeof value}`);
  if (!value.isWellFormed()) throw new ShardrouteError('invalid_argument', `${what} is not valid Unicode (a lone surrogate)`);
  return value;
}

// Shorthand properties only: Node's ES module loader finds the names of a CommonJS
// module's exports by reading this statement (cjs-module-lexer), for `import { Router }`.
module.exports = {
  Router,
  Migration,
  ClusterSession,
  Command,
  Action,
  sessionDefaults,
  TopologyFollower,
  Offered,
  followerDefaults,
  MigrationSession,
  SourceSession,
  RoutingService,
  hashKey,
  jump,
  apply,
  moduloMoves,
  diff,
  encodeDictionary,
  decodeDictionary,
  parseRedirect,
  parseAddress,
  ShardrouteError,
  MAX_DOCUMENT_BYTES,
  MAX_JSON_NESTING,
};

