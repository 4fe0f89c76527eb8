// Every ```js block of the README.md of both JavaScript packages (this one, and
// shardroute-wasm, whose API is the same) and of docs/guide.md (run as this package's)
// runs, as a user would paste it: each block is a module of its own, run by `node
// --input-type=module --eval` from its package's directory (so `import ... from
// 'shardroute'` is that package), with the document's line numbers in its stack traces.
// (bindings-node/test.sh builds both packages first.)
//
// A block's fence is ```js and one word: `run` (needs nothing), or the one server it
// needs, `redis`, `etcd`, `zookeeper` or `http`. Those run against the project's own
// servers, started by the fixtures the Python tests use (examples/redis-cluster/cluster.py
// and examples/harness.py, through the project's venv), with the placeholder address the
// block shows (PLACEHOLDERS) replaced by the server's; `SHARDROUTE_TIER=check` (`make
// check`) skips them, but for `http`, whose server is a thread. A package README's first
// example, a bare ```js block, is conformance/js/examples-suite.mjs's (which checks what
// it prints); a block fenced ```js not-run is listed in NOT_RUN with the reason (none
// today), and the test fails when the two disagree, or when a fence names anything else.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** The documents whose blocks this runs: the package directory they run from, the
 * servers their blocks may need, and how many bare ```js blocks they have (the packages'
 * first example) and at least how many ```js run blocks. */
const PACKAGES = {
  shardroute: { dir: join(root, 'bindings-node'), servers: ['http', 'redis', 'etcd', 'zookeeper'], first: 1, runs: 6 },
  'shardroute-wasm': { dir: join(root, 'bindings-wasm'), servers: ['http', 'etcd'], first: 1, runs: 6 },
  'docs/guide.md': { dir: join(root, 'bindings-node'), file: join(root, 'docs', 'guide.md'), servers: ['redis', 'etcd'], first: 0, runs: 0 },
};
const python = join(process.env.SHARDROUTE_VENV ?? join(root, '.venv'), 'bin', 'python');

/** The address each server's blocks show, replaced by the running server's. */
const PLACEHOLDERS = {
  redis: '127.0.0.1:7000',
  etcd: 'http://127.0.0.1:2379',
  zookeeper: '127.0.0.1:2181',
  http: 'http://127.0.0.1:8080/topology.json',
};
/** Blocks fenced ```js not-run, per package: [their first line, why they are not run]. */
const NOT_RUN = { shardroute: [], 'shardroute-wasm': [], 'docs/guide.md': [] };
const LIVE = process.env.SHARDROUTE_TIER !== 'check';

/** The ```js blocks of a package's README: { name, line (of the first line of code,
 * 1-based), tag, code }. */
function blocks(name) {
  const found = [];
  let open = null;
  readFileSync(PACKAGES[name].file ?? join(PACKAGES[name].dir, 'README.md'), 'utf8').split('\n').forEach((line, index) => {
    if (!line.startsWith('```')) {
      if (open) open.lines.push(line);
      return;
    }
    if (open) {
      if (open.js) found.push({ name, line: open.line, tag: open.tag, code: `${open.lines.join('\n')}\n` });
      open = null;
      return;
    }
    const info = line.slice(3).trim().split(/\s+/).filter(Boolean);
    assert.ok(info[0] !== 'js' || info.length <= 2, `${where(name, index + 1)}: one word after js`);
    open = { line: index + 2, js: info[0] === 'js', tag: info[1] ?? 'first', lines: [] };
  });
  assert.equal(open, null, `${name} ends inside a code block`);
  return found;
}

/** A line of a document, as an error names it. */
const where = (name, line) => (PACKAGES[name].file ? `${name}:${line}` : `${name} README.md:${line}`);

const of = (name, tag) => blocks(name).filter((block) => block.tag === tag);

/** Runs one block as a module; a failure names its README line. */
async function run(block, code = block.code) {
  try {
    await promisify(execFile)(process.execPath, ['--input-type=module', '--eval', '\n'.repeat(block.line - 1) + code], {
      cwd: PACKAGES[block.name].dir,
      timeout: 120_000,
    });
  } catch (err) {
    assert.fail(`${where(block.name, block.line)} (\`\`\`js ${block.tag}) failed:\n${err.stderr || err.message}`);
  }
}

/** The Python side: starts one server with the project's fixtures, prints `READY <address>`,
 * and stops it when its stdin closes (when this test ends, or dies). */
const SERVER = String.raw`
import json, os, shutil, sys, tempfile
root, kind = sys.argv[1], sys.argv[2]
sys.path[:0] = [os.path.join(root, "examples"), os.path.join(root, "examples", "redis-cluster")]

def ready(address):
    print("READY " + address, flush=True)
    sys.stdin.read()

scratch = tempfile.mkdtemp(prefix="shardroute-readme-js-")
try:
    if kind == "redis":
        from cluster import Cluster
        with Cluster() as cluster:
            ready(cluster.seed().address)
    else:
        from harness import EtcdServer, TopologyHttpServer, ZooKeeperServer
        if kind == "etcd":
            server = EtcdServer(scratch, name="readme")
        elif kind == "zookeeper":
            server = ZooKeeperServer(scratch, name="readme")
        else:
            server = TopologyHttpServer()
            server.set(json.dumps({"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}], "strategy": {"type": "jump"}}))
        try:
            ready(server.hosts if kind == "zookeeper" else server.url)
        finally:
            server.stop()
finally:
    shutil.rmtree(scratch, ignore_errors=True)
`;

async function withServer(kind, use) {
  const child = spawn(python, ['-c', SERVER, root, kind], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    let address = null;
    for await (const line of createInterface({ input: child.stdout })) {
      if (line.startsWith('READY ')) {
        address = line.slice('READY '.length);
        break;
      }
    }
    assert.ok(address, `the ${kind} server did not start`);
    await use(address);
  } finally {
    child.stdin.end();
    await exited;
  }
}

async function runLive(name, tag, address) {
  const chosen = of(name, tag);
  assert.ok(chosen.length > 0, `${name} has no \`\`\`js ${tag} block`);
  for (const block of chosen) {
    assert.ok(block.code.includes(PLACEHOLDERS[tag]), `${where(name, block.line)}: the block shows no ${PLACEHOLDERS[tag]}`);
    await run(block, block.code.replaceAll(PLACEHOLDERS[tag], address));
  }
}

for (const [name, { servers, first, runs }] of Object.entries(PACKAGES)) {
  test(`${name}: every fence is known, and the not-run list is the document's`, () => {
    for (const block of blocks(name)) {
      assert.ok(['first', 'run', 'not-run', ...servers].includes(block.tag), `${name}:${block.line}: ${block.tag}`);
    }
    assert.equal(of(name, 'first').length, first, 'bare ```js blocks: a package README\'s first example, run by examples-suite.mjs');
    assert.deepEqual(of(name, 'not-run').map((block) => block.code.split('\n')[0]), NOT_RUN[name].map(([line]) => line));
    assert.ok(of(name, 'run').length >= runs, 'the sections without a server');
  });

  test(`${name}: the blocks that need no server run`, async () => {
    for (const block of of(name, 'run')) await run(block);
  });
}

// One server per kind, for the blocks of every package that needs it.
for (const tag of Object.keys(PLACEHOLDERS)) {
  const skip = LIVE || tag === 'http' ? false : 'SHARDROUTE_TIER=check starts no server (make test runs these)';
  test(`the ${tag} blocks run against ${tag === 'http' ? 'an HTTP server' : tag}`, { skip }, () =>
    withServer(tag, async (address) => {
      for (const [name, { servers }] of Object.entries(PACKAGES)) {
        if (servers.includes(tag)) await runLive(name, tag, address);
      }
    }));
}
