// The playground in headless Chromium, checked against the Node addon: the page loads
// shardroute-wasm through its `./web` entry, a topology is edited (first into an error the
// page must show with the core's code and path, then into a valid document), keys are
// routed, a node is added, and the moved count the page shows must equal what the addon
// computes for the same document, operations and sample keys. Saves docs/playground.png
// (the screenshot of docs/guide.md). Run by `make test-playground` (in `make test`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { launchChromium, openPage, startServer } from '../../bindings-wasm/test/chromium.mjs';

const require = createRequire(import.meta.url);
const addon = require('../../bindings-node/index.js');

const TIMEOUT_MS = 60_000;
const SCREENSHOT = fileURLToPath(new URL('../../docs/playground.png', import.meta.url));
const SAMPLE = 4000;
/** The strategies a document can name: the schema's list (itself checked against the core by make test-schema). */
const SCHEMA = JSON.parse(readFileSync(new URL('../../docs/topology.schema.json', import.meta.url), 'utf8'));

let server, browser, page;
const pageErrors = [];

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  page = await openPage(browser, TIMEOUT_MS);
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.setViewportSize({ width: 1400, height: 1150 });
  await page.goto(`http://127.0.0.1:${server.address().port}/playground/`, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]');
});

after(async () => {
  await browser?.close();
  server?.close();
});

/** Runs `action`, then waits until the page has read the document again (the status's revision grows). */
async function rereads(action) {
  const revision = Number(await page.getAttribute('#status', 'data-revision'));
  await action();
  await page.waitForFunction((last) => Number(document.getElementById('status').dataset.revision) > last, revision);
}

/** Replaces the editor's text as typing would (an `input` event), then waits for the page to re-read it. */
async function editDocument(text, expectedState) {
  await rereads(() => page.fill('#editor', text));
  assert.equal(await page.getAttribute('#status', 'data-state'), expectedState, await page.textContent('#status'));
}

/** The text keys of the page's sample: prefix + i, as the page makes them. */
const textSample = (prefix, count) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

/** Sets the sample size and waits for the load chart to be redrawn (an unchanged value triggers nothing to wait for). */
async function setSample(count) {
  if (await page.inputValue('#sample-count') === String(count)) return;
  await page.fill('#sample-count', String(count));
  await page.waitForFunction((n) => document.getElementById('load-stats').textContent.startsWith(`${n} keys`), count);
}

async function shownMoves() {
  await page.waitForSelector('#change-result:not([hidden]) #moved-count[data-moved], #change-error:not([hidden])');
  assert.equal(await page.isHidden('#change-error'), true, await page.textContent('#change-error'));
  return page.$eval('#moved-count', (el) => ({ moved: Number(el.dataset.moved), total: Number(el.dataset.total), text: el.textContent }));
}

test('an invalid edit shows the core\'s code and JSON path inline', async () => {
  const original = await page.inputValue('#editor');
  assert.match(original, /"type": "ring"/);
  const broken = original.replace('"type": "ring"', '"type": "rign"');
  await editDocument(broken, 'error');
  let expected;
  assert.throws(() => new addon.Router(broken), (err) => (expected = err, true));
  const [path] = expected.message.split(': ');
  assert.equal(await page.textContent('#status .code'), expected.code);
  assert.equal(await page.textContent('#status .path'), path);
  assert.equal(expected.code, 'invalid_topology');
  await editDocument(original, 'ok');
});

test('an edited ring routes as the addon does, and adding a node moves what the addon says', async () => {
  const document = JSON.parse(await page.inputValue('#editor'));
  document.nodes.push({ id: 'cache-x', weight: 2 });
  const edited = JSON.stringify(document, null, 2);
  await editDocument(edited, 'ok');
  const router = new addon.Router(edited);

  // The key table: each key's owner and replicas are the addon's.
  const rows = await page.$$eval('#key-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  assert.ok(rows.length >= 3);
  for (const [line, shard, owner, replicas] of rows) {
    const key = /^\d+n$/.test(line) ? BigInt(line.slice(0, -1)) : line;
    assert.equal(Number(shard), router.route(key), line);
    assert.equal(owner, router.node(key), line);
    assert.equal(replicas, router.replicas(key, 2).join(', '), line);
  }

  await setSample(SAMPLE);
  await page.fill('#add-id', 'cache-new');
  await page.fill('#add-weight', '1');
  await page.click('#add-button');
  const shown = await shownMoves();

  const applied = addon.apply(edited, { op: 'add_node', node: { id: 'cache-new' } });
  const expected = addon.diff(router, new addon.Router(applied.topology), textSample('user:', SAMPLE));
  assert.equal(shown.total, SAMPLE);
  assert.equal(shown.moved, expected.moved, shown.text);
  assert.ok(expected.moved > 0 && expected.moved < SAMPLE, `a fifth node takes some keys, not all: ${expected.moved}`);
  const flows = await page.$$eval('#flows tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  assert.deepEqual(flows, expected.flows.map((flow) => [flow.from, flow.to, String(flow.keys)]));

  await page.screenshot({ path: SCREENSHOT }); // the first screen: the document, the circle, keys, load, the moved count
});

test('a vbucket dictionary: the moved keys and moving vbuckets are the addon\'s plan_rebalance + complete_moves', async () => {
  const option = await page.$$eval('#example option', (options) => options.find((o) => o.textContent.startsWith('vbucket: 1024')).value);
  await rereads(() => page.selectOption('#example', option));
  assert.match(await page.textContent('#status'), /^valid: vbucket/);
  const text = await page.inputValue('#editor');
  await setSample(SAMPLE);
  await page.fill('#add-id', 'v-new');
  await page.click('#add-button');
  const shown = await shownMoves();

  const planned = addon.apply(text, { op: 'plan_rebalance', add: [{ id: 'v-new' }] });
  const completed = addon.apply(planned.topology, { op: 'complete_moves' });
  const [before, afterRouter] = [new addon.Router(text), new addon.Router(completed.topology)];
  const expected = addon.diff(before, afterRouter, textSample('user:', SAMPLE));
  assert.equal(shown.moved, expected.moved, shown.text);
  assert.ok(expected.moved > 0);
  const moving = new addon.Migration(before, afterRouter).movingShards();
  assert.ok(moving.length > 0);
  assert.match(await page.textContent('#moving-shards'), new RegExp(`^${moving.length} shards change owner`));
});

test('a dictionary in the middle of a rebalance: completing its moves moves what the addon says', async () => {
  const option = await page.$$eval('#example option', (options) => options.find((o) => o.textContent.includes('middle of a rebalance')).value);
  await rereads(() => page.selectOption('#example', option));
  const text = await page.inputValue('#editor');
  await setSample(SAMPLE);
  await page.click('#complete-button');
  const shown = await shownMoves();

  const before = new addon.Router(text);
  const afterRouter = new addon.Router(addon.apply(text, { op: 'complete_moves' }).topology);
  const expected = addon.diff(before, afterRouter, textSample('user:', SAMPLE));
  assert.equal(shown.moved, expected.moved, shown.text);
  assert.ok(expected.moved > 0);
  const moving = new addon.Migration(before, afterRouter).movingShards();
  assert.match(await page.textContent('#moving-shards'), new RegExp(`^${moving.length} shards change owner`));
});

test('an example of every strategy is preloaded, valid, and drawn', async () => {
  const labels = await page.$$eval('#example option', (options) => options.map((o) => o.textContent));
  const types = new Set();
  for (const [index, label] of labels.entries()) {
    await rereads(() => page.selectOption('#example', String(index)));
    assert.equal(await page.getAttribute('#status', 'data-state'), 'ok', `${label}: ${await page.textContent('#status')}`);
    assert.equal(await page.locator('#picture svg').count(), 1, `${label}: ${await page.textContent('#picture-caption')}`);
    types.add(JSON.parse(await page.inputValue('#editor')).strategy.type);
  }
  assert.deepEqual([...types].sort(), [...SCHEMA.$defs.strategy.properties.type.enum].sort());
});

test('no uncaught page error', () => {
  assert.deepEqual(pageErrors, []);
});
