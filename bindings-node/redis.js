'use strict';
// shardroute/redis: a Redis Cluster client over ioredis whose every decision is
// shardroute's core.
//
// It keeps one plain ioredis connection per node and sends each command straight to the
// node that owns its slot. A command that finds its node's connection idle is written at
// once, alone; commands issued together (in one turn of the event loop, or while the
// node's connection has a write in flight) go to that node as one write: the
// session's auto-pipelining (`auto_pipeline`, `pipeline_max_commands`,
// `pipeline_max_writes`) says when a node's queue is written and how much of it; each
// command still gets its own reply, redirect and deadline. What to do when the cluster changes under it (MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN, a failover, a lost connection) is decided by the core's sans-IO
// session (`ClusterSession`): this shell only connects, sends, sleeps and throws. The
// rules, the one table of what each error means and the defaults (`sessionDefaults()`)
// are the core's, the same as Python's `shardroute.redis`, and checked by the
// conformance scenarios (conformance/vectors/session_redis.json).

const { isUtf8 } = require('node:buffer');
const shardroute = require('./index.js');

/** ioredis, an optional peer dependency: a project that lacks it is told how to add it. */
function loadIoredis() {
  try {
    return require('ioredis');
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes("'ioredis'")) {
      throw new Error('shardroute/redis needs ioredis, an optional peer dependency of shardroute: npm install ioredis',
        { cause: err });
    }
    throw err;
  }
}

const ioredis = loadIoredis();
const Redis = ioredis.Redis || ioredis;

/** A command was redirected more than `max_redirects` times (code `too_many_redirects`). */
class TooManyRedirects extends Error {}
Object.defineProperty(TooManyRedirects.prototype, 'name', { value: 'TooManyRedirects', writable: true, configurable: true });

/** No node served a command within the retry budget (code `unavailable`); `cause` is the last error. */
class ConnectionError extends Error {}
Object.defineProperty(ConnectionError.prototype, 'name', { value: 'ConnectionError', writable: true, configurable: true });

const FAILURES = { too_many_redirects: TooManyRedirects, unavailable: ConnectionError };

const now = () => Math.floor(performance.now());
const noop = () => {};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The names the core's table reads: the socket error code, then the class chain. */
function names(err) {
  const found = typeof err.code === 'string' ? [err.code] : [];
  for (let proto = Object.getPrototypeOf(err); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    if (proto.constructor && proto.constructor.name) found.push(proto.constructor.name);
  }
  return found;
}

/** The error of a 'fail' action: of this module's classes where it has one, else the core's ShardrouteError. */
function failure(action, cause) {
  const Class = FAILURES[action.code];
  const error = Class ? new Class(action.message, cause ? { cause } : undefined) : action.error();
  if (Class) error.code = action.code;
  else if (cause) error.cause = cause;
  return error;
}

/** How many bytes the well-formed UTF-8 sequence at `bytes[i]` takes; 0 when there is none. */
function sequenceLength(bytes, i) {
  const first = bytes[i];
  if (first < 0x80) return 1;
  const length = first >= 0xc2 && first <= 0xdf ? 2 : first >= 0xe0 && first <= 0xef ? 3 : first >= 0xf0 && first <= 0xf4 ? 4 : 0;
  if (length === 0 || i + length > bytes.length) return 0;
  for (let k = 1; k < length; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return 0;
  const second = bytes[i + 1];
  // Overlong forms, surrogates and code points past U+10FFFF.
  if ((first === 0xe0 && second < 0xa0) || (first === 0xed && second > 0x9f)
    || (first === 0xf0 && second < 0x90) || (first === 0xf4 && second > 0x8f)) return 0;
  return length;
}

/**
 * A Buffer as text, never with U+FFFD in it: bytes that are not UTF-8 become lone
 * surrogates, each byte b as U+DC00 + b (Python's `surrogateescape`), which the session
 * refuses as it refuses any text that is not Unicode (`invalid_argument`, as the Python
 * client does).
 */
function escapedText(bytes) {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  let text = '';
  let start = 0;
  for (let i = 0; i < bytes.length;) {
    const length = sequenceLength(bytes, i);
    if (length > 0) {
      i += length;
      continue;
    }
    text += bytes.toString('utf8', start, i) + String.fromCharCode(0xdc00 + bytes[i]);
    i += 1;
    start = i;
  }
  return text + bytes.toString('utf8', start);
}

/** A raw reply with Buffers decoded: CLUSTER SHARDS as the core reads it (invalid UTF-8 refused, never replaced). */
function text(value) {
  if (Buffer.isBuffer(value)) return escapedText(value);
  if (Array.isArray(value)) return value.map(text);
  return value;
}

/** `"host:port"` of a startup node given as that string or as `{ host, port }`. */
function seedAddress(node) {
  if (typeof node === 'string') return node;
  if (node !== null && typeof node === 'object' && typeof node.host === 'string' && node.port !== undefined) {
    return `${node.host}:${node.port}`;
  }
  throw new TypeError(`startupNodes: expected "host:port" or { host, port }, got ${JSON.stringify(node)}`);
}

/** `commands` on one connection (after `ASKING` when asking): the last reply; the first error thrown. */
async function once(connection, asking, commands) {
  if (!asking && commands.length === 1) return connection.call(...commands[0]);
  const pipeline = connection.pipeline();
  if (asking) pipeline.call('ASKING');
  for (const command of commands) pipeline.call(...command);
  const replies = await pipeline.exec();
  for (const [err] of replies) if (err) throw err;
  return replies.at(-1)[1];
}

/**
 * Where an entry is: in its node's queue; taken for a write (written once its connection is
 * ready); answered (its last reply read, or its connection lost); or taken out of the queue
 * unwritten.
 */
const QUEUED = 0;
const WRITTEN = 1;
const ANSWERED = 2;
const WITHDRAWN = 3;

/**
 * One attempt of one command in the queue of a node's connection (`queue`): `commands`
 * (after `ASKING` when `asking`), settled with the last reply or the first error, as
 * `once` would.
 */
class Entry {
  state = QUEUED;
  /** Its caller gave it up (`#abandon`) after it was taken for a write. */
  abandoned = false;
  /** The connection record (`#connect`) it was written on. */
  connection = null;
  /** The wait of `steady` on the client's Deadlines while it runs, and those Deadlines. */
  wait = null;
  deadlines = null;
  /**
   * On the client's steady path (`steady`): the client's `{ failed, stalled }`, which take
   * what is not a reply on to the session; the command's keys, access and time sent.
   */
  otherwise = null;
  keys = null;
  access = null;
  sentMs = 0;

  constructor(queue, asking, commands) {
    this.address = queue.address;
    this.readonly = queue.readonly;
    this.asking = asking;
    this.commands = commands;
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /**
   * The steady path: `promise`, which its caller gets, is the reply; what is not (an
   * error, or no reply by `at`, a number on `now()`'s clock, on the client's one timer
   * `deadlines`; null: no deadline) goes to `otherwise.failed(entry, err)` or
   * `otherwise.stalled(entry)` in a microtask of its own, whose outcome `promise` takes.
   * After the deadline, a new `promise` awaits the reply (the one `stalled` follows).
   */
  steady(otherwise, deadlines, at) {
    this.otherwise = otherwise;
    if (at === null) return;
    this.deadlines = deadlines;
    this.wait = deadlines.add(at, () => {
      this.wait = null;
      const outcome = this.resolve;
      this.otherwise = null;
      this.promise = new Promise((resolve, reject) => {
        this.resolve = resolve;
        this.reject = reject;
      });
      queueMicrotask(() => outcome(otherwise.stalled(this)));
    });
  }

  /**
   * Writes its commands on `connection` (a plain ioredis connection: each command written
   * at once, its reply matched in order): settled by its own replies as they come, whatever
   * follows it in the same write; counted unanswered on `connection` until then; `over`
   * (when given) called once it is settled. The promise of its last command's reply.
   */
  write(connection, over = null) {
    const { redis } = connection;
    this.connection = connection;
    connection.unanswered += 1;
    const { commands } = this;
    if (!this.asking && commands.length === 1) {
      const reply = redis.call(...commands[0]);
      reply.then((value) => {
        this.settle(null, value);
        if (over !== null) over();
      }, (err) => {
        this.settle(err);
        if (over !== null) over();
      });
      return reply;
    }
    const replies = this.asking ? [redis.call('ASKING')] : [];
    for (const command of commands) replies.push(redis.call(...command));
    Promise.allSettled(replies).then((outcomes) => {
      const failed = outcomes.find(({ status }) => status === 'rejected');
      this.settle(failed ? failed.reason : null, outcomes.at(-1).value);
      if (over !== null) over();
    });
    return replies.at(-1);
  }

  /** Its replies are read (or its connection lost): `err`, else `value`. */
  settle(err, value) {
    this.connection.unanswered -= 1;
    if (this.abandoned) this.connection.abandoned -= 1;
    this.answer(err, value);
  }

  /** Answered: `err`, else `value` (the wait of `steady` ends; on the steady path, an error goes on to the session). */
  answer(err, value) {
    this.state = ANSWERED;
    if (this.wait !== null) {
      this.deadlines.end(this.wait);
      this.wait = null;
    }
    if (!err) this.resolve(value);
    else if (this.otherwise === null) this.reject(err);
    else {
      // After the write's end (`over`, called after this in the same reaction), as when the
      // caller's await resumed.
      const outcome = this.resolve;
      const { otherwise } = this;
      this.otherwise = null;
      queueMicrotask(() => outcome(otherwise.failed(this, err)));
    }
  }
}

/**
 * One node's queue (`address` or `address readonly`): the entries waiting for a write, in
 * order. When one joins, when the queue is written and how much of it goes in one write
 * are the session's answers (pipelineQueued, pipelineTake, pipelineDone); the queue keeps
 * no count of its own.
 */
class NodeQueue {
  entries = [];
  head = 0;
  /** The last write's last reply (null before the first write). */
  last = null;

  /** `over`: called when one of its writes is over (its last reply read, or its connection lost). */
  constructor(name, address, readonly, over) {
    this.name = name;
    this.address = address;
    this.readonly = readonly;
    this.over = () => over(this);
  }

  /** Whether an entry is in the queue (or one withdrawn and not yet passed over). */
  get waiting() {
    return this.head < this.entries.length;
  }

  /** The first `n` entries not withdrawn, out of the queue and marked written. */
  take(n) {
    const batch = [];
    const { entries } = this;
    while (batch.length < n && this.head < entries.length) {
      const entry = entries[this.head];
      entries[this.head++] = undefined;
      if (entry.state === WITHDRAWN) continue;
      entry.state = WRITTEN;
      batch.push(entry);
    }
    if (this.head === entries.length) {
      entries.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > entries.length) {
      // The array's own housekeeping under steady load: the written front half is cut off.
      entries.splice(0, this.head);
      this.head = 0;
    }
    return batch;
  }
}

/** The session's counters as numbers (ClusterStats in redis.d.ts), read when asked. */
const STATS = {
  commands: (s) => Number(s.commands), moved: (s) => Number(s.moved), ask: (s) => Number(s.ask),
  refreshes: (s) => Number(s.refreshes), longestRedirectChain: (s) => s.longestRedirectChain,
  stalls: (s) => Number(s.stalls), stallResends: (s) => Number(s.stallResends),
  errorKinds: (s) => Object.fromEntries(Object.entries(s.errors).map(([kind, n]) => [kind, Number(n)])),
  errors: (s) => Object.values(s.errors).reduce((sum, n) => sum + Number(n), 0) + Number(s.failed),
};

/** What the client has seen since it was made (or since `reset`). */
class ClusterStats {
  constructor(session) {
    for (const [name, read] of Object.entries(STATS)) {
      Object.defineProperty(this, name, { get: () => read(session.stats), enumerable: true });
    }
    Object.defineProperty(this, 'reset', { value: () => session.resetStats() });
  }
}

/** How long until `deadline` (a bigint or number on `now()`'s clock, from the session), never negative. */
const left = (deadline) => Math.max(0, Number(deadline) - now());

/**
 * The one timer of a client for every wait on a session deadline (`within`, `Entry.steady`),
 * in place of a timer per command: the waits in the order of their deadlines, the timer
 * set for the first. A wait that ends first leaves the list (at once when it is at the
 * front, else when the timer passes it); the timer, when it fires, calls the waits that
 * are due and is set for the next. It is unreferenced: every wait is for a connection (its
 * socket, referenced, keeps the process alive), and a client with none waiting holds
 * nothing open.
 */
class Deadlines {
  #waits = [];
  #head = 0;
  #timer = null;
  /** When #timer fires (Infinity: not set). */
  #at = Infinity;
  #fire = () => {
    const due = Math.max(this.#at, now());
    this.#timer = null;
    this.#at = Infinity;
    const waits = this.#waits;
    while (this.#head < waits.length) {
      const wait = waits[this.#head];
      if (wait.call !== null && wait.at > due) break;
      waits[this.#head++] = undefined;
      const { call } = wait;
      wait.call = null;
      if (call !== null) call();
    }
    // Those that ended behind the front go too; the next due sets the timer.
    this.#waits = waits.slice(this.#head).filter((wait) => wait.call !== null);
    this.#head = 0;
    if (this.#waits.length > 0) this.#arm(this.#waits[0].at);
  };

  /** `call()` at `at` (a number on `now()`'s clock) unless `end(wait)` comes first: the wait. */
  add(at, call) {
    const wait = { at, call };
    const waits = this.#waits;
    let i = waits.length;
    while (i > this.#head && waits[i - 1].at > at) i -= 1;
    if (i === waits.length) waits.push(wait);
    else waits.splice(i, 0, wait);
    if (at < this.#at) this.#arm(at);
    return wait;
  }

  /** `wait` ended before its deadline: it will not be called. */
  end(wait) {
    wait.call = null;
    const waits = this.#waits;
    while (this.#head < waits.length && waits[this.#head].call === null) waits[this.#head++] = undefined;
    if (this.#head === waits.length) {
      waits.length = 0;
      this.#head = 0;
    }
  }

  #arm(at) {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#at = at;
    this.#timer = setTimeout(this.#fire, left(at));
    this.#timer.unref();
  }
}

/** What `within` gives when the session's deadline came first. */
const STALLED = Symbol('stalled');

/** `promise`'s value, or STALLED at the session's `deadline` (null: none), by the client's one timer (`deadlines`). */
function within(deadlines, promise, deadline) {
  if (deadline === null) return promise;
  return new Promise((resolve, reject) => {
    const wait = deadlines.add(Number(deadline), () => resolve(STALLED));
    promise.then((value) => {
      deadlines.end(wait);
      resolve(value);
    }, (err) => {
      deadlines.end(wait);
      reject(err);
    });
  });
}

/** A Redis Cluster client routed by shardroute (see the top of this file; redis.d.ts documents the API). */
class ClusterClient {
  #session;
  #connectionOptions;
  /** The session's steady path (index.js, ClusterSession's fast path). */
  #fast;
  /** `address` or `address readonly` -> { redis, ready: Promise<Redis>, live: Redis once connected }. */
  #connections = new Map();
  /** `address` or `address readonly` -> its NodeQueue; null when the session's `auto_pipeline` is off. */
  #queues;
  #refreshing = null;
  /** The one timer of every wait on a session deadline. */
  #deadlines = new Deadlines();
  /** The flush the session asked for (`pipelineQueued` 1): the writes it says (none once the queue is empty), each of the queue's first entries. */
  #flush = (queue) => {
    this.#tellEnded();
    let n;
    do {
      n = this.#session.pipelineTake(queue.address, queue.readonly);
      this.#write(queue, n);
    } while (n > 0 && queue.waiting);
  };
  /** One write of a queue is over (replied, failed or abandoned): the next, when the session says. */
  #written = (queue) => {
    this.#tellEnded();
    if (queue.waiting) this.#write(queue, this.#session.pipelineDone(queue.address, queue.readonly));
    else this.#ended = queue;
  };
  /**
   * A queue whose write ended with no entry left in it, its `pipelineDone` not called yet
   * (null: none): the steady path's next send calls it first, in the same native call
   * (`#run`); any other call about the queues calls it before (`#tellEnded`). The session
   * gets the same calls in the same order, one native call fewer per command.
   */
  #ended = null;

  /** `pipelineDone` of the write that ended (`#ended`), and the write it says. */
  #tellEnded() {
    const queue = this.#ended;
    if (queue === null) return;
    this.#ended = null;
    this.#write(queue, this.#session.pipelineDone(queue.address, queue.readonly));
  }

  /** The steady path's send told the session of `queue`'s ended write: the write it says (`answer` -1: it was not told). */
  #toldEnded(queue, answer) {
    if (answer < 0) {
      this.#ended = queue;
      this.#tellEnded();
    } else this.#write(queue, answer);
  }

  constructor(startupNodes, options = {}) {
    const { readFromReplicas = false, config = {}, ...redisOptions } = options;
    const seeds = [...(startupNodes ?? [])].map(seedAddress);
    this.#session = new shardroute.ClusterSession(seeds, { ...config, ...(readFromReplicas ? { read_from_replicas: true } : {}) });
    this.#fast = this.#session[Symbol.for('shardroute.ClusterSession.fastPath')];
    const { connect_timeout_ms: connectTimeout, auto_pipeline: autoPipeline } = this.#session.config;
    this.#queues = autoPipeline ? new Map() : null;
    // One connection per node that fails fast: no offline queue, no reconnection and no
    // command timeout of its own; every failure reaches the session, every wait is its.
    this.#connectionOptions = {
      connectTimeout: Number(connectTimeout), ...redisOptions,
      // decisions: ok (0: ioredis retries nothing itself; the session decides every retry)
      lazyConnect: true, enableOfflineQueue: false, enableReadyCheck: false, maxRetriesPerRequest: 0,
      retryStrategy: null, autoResubscribe: false,
    };
    this.stats = new ClusterStats(this.#session);
  }

  /** A client whose table has been read. */
  static async connect(startupNodes, options) {
    const client = new ClusterClient(startupNodes, options);
    await client.ready();
    return client;
  }

  /** Reads the first table under the session's rules (refresh, backoff, budget). */
  async ready() {
    if (this.#session.router === null) await this.#run(['table'], 'read', null);
  }

  /** The current router (a `redis_cluster` topology), or null before the first table. */
  get router() {
    return this.#session.router;
  }

  /** The connection (an ioredis `Redis`, connected) to `address`; with `readonly`, one that sent `READONLY`. */
  connection(address, { readonly = false } = {}) {
    return this.#connect(readonly ? `${address} readonly` : address, address, readonly).ready;
  }

  /** The connection entry `name` (`address` or `address readonly`), made and connecting on first use. */
  #connect(name, address, readonly) {
    const known = this.#connections.get(name);
    // One whose socket closed (its 'end' still to come) is replaced.
    if (known !== undefined && known.redis.status !== 'close' && known.redis.status !== 'end') return known;
    const { host, port } = shardroute.parseAddress(address);
    const redis = new Redis({ ...this.#connectionOptions, host, port });
    // Failures reach the caller through the commands.
    redis.on('error', () => {});
    // unanswered: entries written on it whose replies are not all read; abandoned: those of them given up.
    const entry = { redis, ready: null, live: null, unanswered: 0, abandoned: 0 };
    const forget = () => {
      entry.live = null;
      if (this.#connections.get(name) === entry) this.#connections.delete(name);
    };
    redis.once('end', forget);
    entry.ready = redis.connect().then(async () => {
      if (readonly) await redis.call('READONLY');
      if (this.#connections.get(name) === entry) entry.live = redis;
      return redis;
    });
    entry.ready.catch(() => {
      forget();
      redis.disconnect();
    });
    this.#connections.set(name, entry);
    return entry;
  }

  /** The `host:port` of a node id of the current router. */
  addressOf(node) {
    const found = this.#session.addressOf(node);
    if (found === null) throw new Error(`shardroute/redis: no node ${JSON.stringify(node)}`);
    return found;
  }

  /**
   * Closes the connection to `address` (a request on it was abandoned: its late reply must
   * not be read); `redis`: that connection, when known (an older one is closed alone).
   */
  #drop(address, readonly, redis = null) {
    const name = readonly ? `${address} readonly` : address;
    const entry = this.#connections.get(name);
    if (redis !== null && entry?.redis !== redis) {
      redis.disconnect();
      return;
    }
    if (entry === undefined) return;
    this.#connections.delete(name);
    entry.live = null;
    entry.redis.disconnect();
  }

  /**
   * One attempt of `commands` (after `ASKING` when `asking`) on the node at `address`: what
   * `#follow` awaits and abandons. With auto-pipelining, an Entry in the node's queue,
   * written when the session says (`queued`: what `pipelineQueued` answered for it, when
   * the steady path's send already asked); without, the commands written at once.
   */
  #send(address, readonly, asking, commands, queued = -1) {
    if (this.#queues === null || commands === null) {
      const promise = this.connection(address, { readonly }).then((c) => (commands === null ? null : once(c, asking, commands)));
      return { state: WRITTEN, promise, address, readonly };
    }
    const name = readonly ? `${address} readonly` : address;
    let queue = this.#queues.get(name);
    if (queue === undefined) {
      queue = new NodeQueue(name, address, readonly, this.#written);
      this.#queues.set(name, queue);
    }
    const entry = new Entry(queue, asking, commands);
    queue.entries.push(entry);
    // 2: an idle connection, this entry written now, alone (one write, no flush); 1: a
    // flush at the end of the turn; 0: it waits (a flush or a write's end will take it).
    if (queued < 0) {
      this.#tellEnded();
      queued = this.#session.pipelineQueued(address, readonly);
    }
    if (queued === 2) this.#write(queue, 1);
    else if (queued === 1) process.nextTick(this.#flush, queue);
    return entry;
  }

  /**
   * Gives up the attempt `sent`: a queued entry leaves its queue unwritten (the session
   * counts it out); a written one's reply is no longer awaited, and its connection is closed
   * once nothing written on it is awaited (without auto-pipelining: at once, its late reply
   * must not be read).
   */
  #abandon(sent) {
    if (sent.state === QUEUED) {
      sent.state = WITHDRAWN;
      this.#tellEnded();
      this.#session.pipelineWithdrawn(sent.address, sent.readonly, 1);
    } else if (!(sent instanceof Entry)) {
      this.#drop(sent.address, sent.readonly);
    } else if (sent.state === WRITTEN && !sent.abandoned) {
      // Its reply, if it comes, is read in turn and dropped; the connection is closed once
      // every command written on it and unanswered is given up.
      sent.abandoned = true;
      const { connection } = sent;
      if (connection === null) return; // not written yet: it never will be (`#exec`)
      connection.abandoned += 1;
      if (connection.abandoned === connection.unanswered) this.#drop(sent.address, sent.readonly, connection.redis);
    }
  }

  /** Writes the first `n` entries of `queue` (0: none) as one write, once its connection is ready. */
  #write(queue, n) {
    if (n === 0) return;
    const batch = queue.take(n);
    if (batch.length === 0) {
      queue.over(); // none left to write (the session counted more): this write is over
      return;
    }
    const connection = this.#connect(queue.name, queue.address, queue.readonly);
    if (connection.live !== null) this.#exec(queue, batch, connection);
    else {
      queue.last = connection.ready.then(() => this.#exec(queue, batch, connection), (err) => {
        for (const entry of batch) entry.answer(err);
        queue.over();
      });
    }
  }

  /**
   * `batch` written on `connection` as one write (the socket corked while its commands are
   * written; those given up meanwhile left out), each entry settled by its own replies; the
   * write is over at its last reply.
   */
  #exec(queue, batch, connection) {
    if (batch.length === 1) {
      // One entry (the steady path's): the write is over when it is settled, in the same reaction.
      const [entry] = batch;
      if (!entry.abandoned) {
        try {
          queue.last = entry.write(connection, queue.over);
          return;
        } catch (err) {
          entry.settle(err); // refused before it was written (ioredis' own argument checks)
        }
      }
      queue.over();
      return;
    }
    const { stream } = connection.redis;
    const many = batch.length > 1;
    if (many) stream.cork();
    let last = null;
    for (const entry of batch) {
      if (entry.abandoned) continue;
      try {
        last = entry.write(connection);
      } catch (err) {
        entry.settle(err); // refused before it was written (ioredis' own argument checks)
      }
    }
    if (many) stream.uncork();
    if (last === null) queue.over();
    else {
      queue.last = last;
      last.then(queue.over, queue.over);
    }
  }

  /** Reads the table from the first candidate that answers `CLUSTER SHARDS` with a whole table; one at a time. */
  refresh() {
    this.#refreshing ??= this.#refreshOnce().finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  /**
   * Each candidate in turn: connected and answered by the session's deadline for it (ioredis
   * cannot tell a reply begun from none, so the whole request is held to that deadline, as
   * the asyncio client does; a paused node that kept its connection is left then).
   */
  async #refreshOnce() {
    const session = this.#session;
    for (const address of session.refreshCandidates()) {
      try {
        const deadline = session.refreshSent(address, now());
        const connection = await within(this.#deadlines, this.connection(address), deadline);
        const reply = connection === STALLED ? STALLED : await within(this.#deadlines, connection.callBuffer('CLUSTER', 'SHARDS'), deadline);
        if (reply !== STALLED) {
          session.refreshed(text(reply), now());
          return true;
        }
        this.#drop(address, false);
      } catch {
        // The next candidate.
      }
      session.timeout(now()); // a silent candidate: given up at its deadline
    }
    session.refreshFailed(now());
    return false;
  }

  /**
   * Runs `commands` (null: none, a connection only) where the session says, until it is
   * done; `error`: what the command already got. The attempt in flight (its connection,
   * handshake and place in its node's queue included) is awaited until the session's
   * deadline, then the session says: keep waiting, refresh, send elsewhere (a stall), or
   * give it up (its timeout).
   */
  #run(keys, access, commands, error = null) {
    if (error === null) {
      // The steady path: one call into the core (the target and the attempt's deadline;
      // with auto-pipelining, the command joins its node's queue in the same call, after
      // the `pipelineDone` of a write that ended, `#ended`), no
      // timer of its own (the client's one, `#deadlines`), and no call after the reply.
      // With auto-pipelining the caller gets the Entry's own promise (`Entry.steady`). Its
      // Command is made only for what else comes (an error, the deadline), as `poll` at
      // `sentMs` would have left it.
      let target;
      let sentMs;
      let queued;
      const fast = this.#fast;
      const ended = this.#ended;
      this.#ended = null;
      try {
        sentMs = now();
        queued = this.#queues !== null && commands !== null;
        target = ended === null ? fast.send(keys, access, sentMs, queued) : fast.send(keys, access, sentMs, queued, ended.address, ended.readonly);
      } catch (err) {
        if (ended !== null) this.#toldEnded(ended, fast.done);
        return Promise.reject(err);
      }
      if (ended !== null) this.#toldEnded(ended, fast.done);
      if (target !== null) return this.#steady(keys, access, commands, target, fast.deadline, queued ? fast.queued : -1, sentMs);
    }
    return this.#general(keys, access, commands, error);
  }

  /** The steady path's attempt (`#run`), sent to `target` at `sentMs`: its reply, or what the session makes of the rest. */
  #steady(keys, access, commands, { address, readonly }, deadline, queued, sentMs) {
    let sent;
    try {
      sent = this.#send(address, readonly, false, commands, queued);
    } catch (err) {
      return this.#steadyFailed(keys, access, address, sentMs, commands, err);
    }
    if (!(sent instanceof Entry) || sent.state === ANSWERED) return this.#steadyWait(keys, access, address, sentMs, commands, sent, deadline);
    sent.keys = keys;
    sent.access = access;
    sent.sentMs = sentMs;
    sent.steady(this.#otherwise, this.#deadlines, deadline);
    return sent.promise;
  }

  /** The steady path's attempt `sent` awaited until `deadline` (without auto-pipelining, or an entry refused at once). */
  async #steadyWait(keys, access, address, sentMs, commands, sent, deadline) {
    let reply;
    try {
      reply = await within(this.#deadlines, sent.promise, deadline);
    } catch (err) {
      return this.#steadyFailed(keys, access, address, sentMs, commands, err);
    }
    if (reply !== STALLED) return reply;
    return this.#steadyStalled(keys, access, address, sentMs, commands, sent);
  }

  /** The steady path's attempt to `address` failed with `err`: the session's path from there. */
  async #steadyFailed(keys, access, address, sentMs, commands, err) {
    if (!(err instanceof Error) || err instanceof shardroute.ShardrouteError) throw err;
    const command = this.#fast.command(keys, access, address, sentMs);
    return this.#follow(command, this.#session.failed(command, err.message, names(err), now()), commands, err, null);
  }

  /** The steady path's attempt `sent` had no reply by its deadline: the session's path from there. */
  async #steadyStalled(keys, access, address, sentMs, commands, sent) {
    sent.promise.catch(noop); // unread while a refresh runs, or once abandoned
    const command = this.#fast.command(keys, access, address, sentMs);
    return this.#follow(command, this.#session.onDeadline(command, now()), commands, null, sent);
  }

  /** What the steady path's Entry hands on (`Entry.steady`): an error, the deadline. */
  #otherwise = {
    failed: (entry, err) => this.#steadyFailed(entry.keys, entry.access, entry.address, entry.sentMs, entry.commands, err),
    stalled: (entry) => this.#steadyStalled(entry.keys, entry.access, entry.address, entry.sentMs, entry.commands, entry),
  };

  /** `#run` off the steady path: `command` + `poll` (or `failed`, from `error`), then `#follow`. */
  async #general(keys, access, commands, error) {
    const session = this.#session;
    const command = session.command(keys, access, now());
    const action = error === null ? session.poll(command, now()) : session.failed(command, error.message, names(error), now());
    return this.#follow(command, action, commands, error, null);
  }

  /** Carries out `action` for `command` until the session is done; `error`: the last error it got; `sent`: the attempt in flight. */
  async #follow(command, action, commands, error, sent) {
    const session = this.#session;
    for (;;) {
      if (sent !== null && (action.kind === 'send' || !command.inFlight)) {
        this.#abandon(sent);
        sent = null;
      }
      if (action.kind === 'done') throw error;
      if (action.kind === 'fail') throw failure(action, error);
      try {
        if (action.kind === 'send') {
          sent = this.#send(action.address, action.readonly, action.asking, commands);
          sent.promise.catch(() => {}); // read by `within`; unread while a refresh runs, or once abandoned
        }
        if (action.kind === 'refresh') {
          const refreshing = this.refresh();
          if (sent === null) {
            // Once a refresh runs, the session holds only what must wait for it (no table,
            // a refresh asked for at once): a MOVED's refresh runs on in the background.
            const next = session.poll(command, now());
            if (next.kind !== 'refresh') {
              refreshing.catch(noop); // awaited by whoever needs it (close, a stall)
              action = next;
              continue;
            }
          }
          await refreshing; // the attempt in flight (a stall's) runs on meanwhile
        } else if (sent !== null) {
          const reply = await within(this.#deadlines, sent.promise, session.deadline(command));
          if (reply !== STALLED) {
            session.succeeded(command, now());
            return reply;
          }
        } else {
          await sleep(left(session.deadline(command)));
        }
      } catch (err) {
        if (!(err instanceof Error) || err instanceof shardroute.ShardrouteError) throw err;
        sent = null;
        error = err;
        action = session.failed(command, err.message, names(err), now());
        continue;
      }
      action = session.onDeadline(command, now());
    }
  }

  /** Runs one command (`[name, ...arguments]`) for `key` where the session says. */
  execute(command, { key, read = false } = {}) {
    return this.#run([key], read ? 'read' : 'write', [command]);
  }

  // `execute` without its options object.
  get(key) {
    return this.#run([key], 'read', [['GET', key]]);
  }

  set(key, value) {
    return this.#run([key], 'write', [['SET', key, value]]);
  }

  del(key) {
    return this.#run([key], 'write', [['DEL', key]]);
  }

  /** `SET` then `WAIT replicas timeoutMs` (the session's `wait_timeout_ms` when omitted) on one connection: how many replicas acknowledged the write. */
  async setAndWait(key, value, replicas = 1, timeoutMs = this.#session.config.wait_timeout_ms) {
    return Number(await this.#run([key], 'write', [['SET', key, value], ['WAIT', replicas, timeoutMs]]));
  }

  /** `MSET` of keys that share a slot (a hash tag); `cross_slot` otherwise. */
  mset(mapping) {
    const entries = mapping instanceof Map ? [...mapping] : Object.entries(mapping);
    return this.#run(entries.map(([key]) => key), 'write', [['MSET', ...entries.flat()]]);
  }

  /** Values of `keys` in order: one `MGET` per slot, those of a node pipelined, every node at once. */
  async mget(keys) {
    keys = [...keys];
    const values = new Array(keys.length).fill(null);
    await Promise.all((await this.#plan(keys, 'read')).map(async ({ address, readonly, indices, starts }) => {
      const commands = new Array(starts.length - 1);
      for (let j = 0; j < commands.length; j += 1) {
        const start = starts[j];
        const command = new Array(starts[j + 1] - start + 1);
        command[0] = 'MGET';
        for (let k = 1; k < command.length; k += 1) command[k] = keys[indices[start + k - 1]];
        commands[j] = command;
      }
      const replies = await this.#pipeline(address, readonly, commands);
      // The replies placed at once; only an MGET that got an error is awaited (the session's path).
      const place = (j, got) => {
        for (let k = starts[j]; k < starts[j + 1]; k += 1) values[indices[k]] = got[k - starts[j]];
      };
      const retried = [];
      for (let j = 0; j < commands.length; j += 1) {
        const [err, got] = replies[j];
        if (!err) place(j, got);
        else retried.push(this.#run(commands[j].slice(1), 'read', [commands[j]], err).then((value) => place(j, value)));
      }
      if (retried.length > 0) await Promise.all(retried);
    }));
    return values;
  }

  /** `GET` of every key, one pipeline per node. */
  pipelineGet(keys) {
    keys = [...keys];
    return this.#pipelined(keys.map((key) => ['GET', key]), keys, 'read');
  }

  /** `SET` of every `[key, value]` pair, one pipeline per node. */
  pipelineSet(pairs) {
    pairs = [...pairs];
    return this.#pipelined(pairs.map(([key, value]) => ['SET', key, value]), pairs.map(([key]) => key), 'write');
  }

  /** The batch's groups, flat (the session's fast path: `{ address, readonly, indices, starts }`). */
  async #plan(keys, access) {
    await this.ready();
    return this.#fast.plan(keys, access);
  }

  async #pipelined(commands, keys, access) {
    const results = new Array(commands.length).fill(null);
    await Promise.all((await this.#plan(keys, access)).map(async ({ address, readonly, indices }) => {
      const batch = new Array(indices.length);
      for (let j = 0; j < indices.length; j += 1) batch[j] = commands[indices[j]];
      const replies = await this.#pipeline(address, readonly, batch);
      // The replies placed at once; that command alone takes the session's path, from the error it got.
      const retried = [];
      for (let j = 0; j < indices.length; j += 1) {
        const [err, value] = replies[j];
        const index = indices[j];
        if (!err) results[index] = value;
        else {
          retried.push(this.#run([keys[index]], access, [commands[index]], err).then((got) => {
            results[index] = got;
          }));
        }
      }
      if (retried.length > 0) await Promise.all(retried);
    }));
    return results;
  }

  /** One node's pipeline, one request until the session's batch deadline (a reply past it: every entry a TimeoutError). */
  async #pipeline(address, readonly, commands) {
    const deadline = this.#session.batchDeadline(now());
    try {
      const replies = await within(this.#deadlines, (async () => {
        const pipeline = (await this.connection(address, { readonly })).pipeline();
        for (const command of commands) pipeline.call(...command);
        return pipeline.exec();
      })(), deadline);
      if (replies !== STALLED) return replies;
      this.#drop(address, readonly);
      const timedOut = new Error(`Command timed out: no reply from ${address}`);
      timedOut.code = 'ETIMEDOUT';
      return commands.map(() => [timedOut, null]);
    } catch (err) {
      return commands.map(() => [err, null]);
    }
  }

  /** Closes every connection (waiting for the replies of commands already sent, and for a refresh that runs). */
  async close() {
    // Commands issued before: those queued are written at the end of this turn; each
    // queue's writes, until its last, are answered first.
    await new Promise((resolve) => process.nextTick(resolve));
    // A refresh that runs in the background (a MOVED's) ends first: it opens no
    // connection once they are closed.
    if (this.#refreshing !== null) await this.#refreshing;
    for (const queue of this.#queues?.values() ?? []) {
      for (let last = queue.last; last !== null; last = queue.last === last ? null : queue.last) await last.then(noop, noop);
    }
    const entries = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(entries.map(({ redis }) => redis.quit().catch(() => redis.disconnect())));
  }
}

// Shorthand properties only: Node's ES module loader finds the names of a CommonJS
// module's exports by reading this statement (cjs-module-lexer), for `import { ClusterClient }`.
module.exports = {
  ClusterClient,
  ClusterStats,
  TooManyRedirects,
  ConnectionError,
};
