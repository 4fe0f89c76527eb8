// The playground's page: it reads the form, asks shardroute-wasm, and draws the answers.
// It decides nothing about placement: owners, replicas, shard owners, the new document
// after a change and what moves all come from the package (Router, apply, diff,
// Migration), so the page shows exactly what an application using the package would get.
// What the page itself computes is presentation: colours, counts per node of the package's
// answers, and the summary statistics of the load chart.
import { Migration, Router, apply, diff, hashKey, init } from 'shardroute-wasm/web';

import { EXAMPLES, exampleText, parseDocument, pretty } from './examples.mjs';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
/** Above this many sample keys the circle draws only the first ones: more dots add no information. */
const CIRCLE_KEYS = 3000;
/** The most keys a per-key diff lists (the core's limits::MAX_DIFF_LISTED_KEYS). */
const LISTED_KEYS = 65536;
/** The strategies of the hashed family (core/src/strategy/hashed/) that hash keys with the document's `hashing` section, so `hashKey` gives the point a key lands on. */
const HASH_CIRCLE = new Set(['ring', 'jump', 'modulo', 'rendezvous', 'maglev']);
/** Distinct colours, in order of nodes in the document; beyond them, hues around the wheel. */
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/** The state the panels draw from: the editor's document and router, the sample, the last change. */
const state = { text: '', document: null, router: null, sample: [], change: null };

const paletteColour = (slot) => (slot < PALETTE.length ? PALETTE[slot] : `hsl(${(slot * 137) % 360} 55% 50%)`);

/** A node's colour: its place in the document's node list (grey for a node it does not list). */
function colour(nodeId) {
  const index = (state.document?.nodes ?? []).findIndex((node) => node.id === nodeId);
  return index < 0 ? '#7f7f7f' : paletteColour(index);
}

/** A node's colour before or after a change: a node the change added takes the next free slot. */
function colourAfter(nodeId, after) {
  const known = (state.document?.nodes ?? []).some((node) => node.id === nodeId);
  const added = (after?.nodes ?? []).filter((node) => !(state.document?.nodes ?? []).some((n) => n.id === node.id));
  const index = added.findIndex((node) => node.id === nodeId);
  return known || index < 0 ? colour(nodeId) : paletteColour(state.document.nodes.length + index);
}

function element(tag, attributes = {}, ...children) {
  const node = tag.startsWith('svg:') ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

const swatch = (nodeId, after) => element('span', { class: 'swatch', style: `background:${colourAfter(nodeId, after)}` });

/** `42n` is the integer key 42 (a BigInt, as the package takes integer keys); any other line is a text key. */
export function parseKey(line) {
  return /^\d+n$/.test(line) ? BigInt(line.slice(0, -1)) : line;
}
const showKey = (key) => (typeof key === 'bigint' ? `${key}n` : key);

/** The load sample: `prefix + i`, or the integers `i × step`, for i in 0..count. The test builds the same keys. */
function sampleKeys() {
  const count = Math.max(1, Math.min(200_000, Number($('sample-count').value) || 1));
  if ($('sample-kind').value === 'integers') {
    const step = BigInt($('sample-step').value || '1');
    return Array.from({ length: count }, (_, i) => BigInt(i) * step);
  }
  const prefix = $('sample-prefix').value;
  return Array.from({ length: count }, (_, i) => `${prefix}${i}`);
}

/** A JSON path as the core writes it at the start of a message: a document or operation field, then `.field` and `[index]` steps. */
const PATH = /^((?:\$schema|format|epoch|hashing|nodes|strategy|placement|hot_keys|checksum|operation)(?:\.[\w$]+|\[\d+\])*): ([\s\S]*)$/;

/**
 * A core error as code, JSON path and message: the core's messages start with the path of
 * the field at fault (`strategy.ranges[0]: names node "x", ...`); an operation's error on
 * a document it carries nests one path in another (`operation.to: nodes[0].weight: ...`).
 */
export function describeError(err) {
  let message = String(err?.message ?? err);
  const steps = [];
  for (let match = PATH.exec(message); match; match = PATH.exec(message)) {
    steps.push(match[1]);
    message = match[2];
  }
  return { code: err?.code ?? 'error', path: steps.length ? steps.join('.') : null, message };
}

function showError(target, err) {
  const { code, path, message } = describeError(err);
  target.replaceChildren(
    element('span', { class: 'code' }, code),
    ...(path ? [' at ', element('span', { class: 'path' }, path)] : []),
    `: ${message}`,
  );
}

// ---- the document ----------------------------------------------------------------------

/** Rebuilds the router from the editor; every panel redraws from it. */
function readDocument() {
  state.text = $('editor').value;
  clearChange();
  $('change-error').hidden = true;
  const status = $('status');
  // Counts the documents read, so that a test (or a curious reader) can tell a fresh answer from the last one.
  status.dataset.revision = String(Number(status.dataset.revision ?? 0) + 1);
  try {
    state.router = new Router(state.text); // the core parses and validates: its error names the path
    state.document = parseDocument(state.text);
    status.dataset.state = 'ok';
    status.textContent = `valid: ${state.document.strategy.type}, ${state.document.nodes.length} nodes, epoch ${state.router.epoch}`;
  } catch (err) {
    state.router = null;
    status.dataset.state = 'error';
    showError(status, err);
  }
  $('change-node').replaceChildren(...(state.document?.nodes ?? []).map((node) => element('option', { value: node.id }, node.id)));
  redraw();
}

/** Forgets the last change: it no longer describes the document or the sample. */
function clearChange() {
  state.change = null;
  $('change-result').hidden = true;
  delete $('moved-count').dataset.moved;
  delete $('moved-count').dataset.total;
}

function redraw() {
  if (!state.router) return;
  try {
    state.sample = sampleKeys();
  } catch (err) {
    showError($('load-stats'), new Error(`the sample's step must be an integer: ${err.message}`));
    return;
  }
  drawKeys();
  drawPicture();
  drawLoad();
}

// ---- keys ------------------------------------------------------------------------------

function drawKeys() {
  const count = Number($('replica-count').value) || 1;
  const rows = $('keys').value.split('\n').map((line) => line.trim()).filter(Boolean).map((line) => {
    const key = parseKey(line);
    try {
      const replicas = state.router.replicas(key, Math.min(count, state.document.nodes.length));
      const owner = state.router.node(key);
      return element('tr', {}, element('td', {}, line), element('td', {}, String(state.router.route(key))),
        element('td', {}, swatch(owner), owner), element('td', {}, replicas.join(', ')));
    } catch (err) {
      const { code, message } = describeError(err);
      return element('tr', {}, element('td', {}, line), element('td', { class: 'error', colspan: 3 }, `${code}: ${message}`));
    }
  });
  $('key-table').tBodies[0].replaceChildren(...rows);
}

// ---- the picture -----------------------------------------------------------------------

/** Each shard's owner, from the package: `shardsForRange` over the whole key space, then `shardOwner`. */
function shardOwners(router) {
  const start = typeof state.sample[0] === 'bigint' ? 0n : '';
  return router.shardsForRange(start, null).map((shard) => {
    try {
      return { shard, owner: router.shardOwner(shard) };
    } catch {
      return { shard, owner: null }; // a Couchbase vbucket with no active copy
    }
  });
}

function drawPicture() {
  try {
    drawPictureOf(state.document.strategy.type);
  } catch (err) {
    $('picture').replaceChildren();
    showError($('picture-caption'), err); // an integer-only strategy with text sample keys, say
  }
}

function drawPictureOf(type) {
  const picture = $('picture');
  const change = state.change;
  if (HASH_CIRCLE.has(type)) {
    $('picture-title').textContent = `${type}: the hash circle`;
    $('picture-caption').textContent = 'Sample keys at their 64-bit hash (hashKey under the document\'s hashing), clockwise from the top, '
      + 'coloured by the node the router gives: each node\'s arcs. After a change, the outer ring marks the keys that move, in their new node\'s colour.';
    picture.replaceChildren(hashCircle(change));
  } else {
    const owners = shardOwners(state.router);
    const moving = new Map((change?.movingShards ?? []).map((move) => [move.shard, move]));
    $('picture-title').textContent = `${type}: ${owners.length} shards by owner`;
    $('picture-caption').textContent = 'Each cell is a shard (a vbucket, slot, partition, bucket, or a range: ranges are in key order), '
      + 'coloured by its owner (shardOwner).'
      + (change ? ` After the change, ${moving.size} shards change owner (Migration.movingShards): outlined, in the new owner's colour.` : '');
    picture.replaceChildren(shardGrid(owners, moving, change?.after));
  }
  const nodes = [...(state.document.nodes ?? []), ...(change?.added ?? [])];
  $('legend').replaceChildren(...nodes.map((node) => element('span', {}, swatch(node.id, change?.after), node.id)));
}

function hashCircle(change) {
  const size = 300, centre = size / 2, radius = 120;
  const svg = element('svg:svg', { width: size, height: size, viewBox: `0 0 ${size} ${size}`, role: 'img', 'aria-label': 'hash circle' });
  svg.append(element('svg:circle', { cx: centre, cy: centre, r: radius, fill: 'none', stroke: '#d8dde3', 'stroke-width': 14 }));
  const keys = state.sample.slice(0, CIRCLE_KEYS);
  const owners = state.router.nodeMany(keys);
  const moved = change?.diff.keys;
  keys.forEach((key, i) => {
    // The top 53 bits of the hash as a fraction of the circle: exact in a double.
    const turn = Number(hashKey(key, state.document.hashing ?? null) >> 11n) / 2 ** 53;
    const angle = turn * 2 * Math.PI;
    const tick = (inner, outer, stroke) => element('svg:line', {
      x1: centre + inner * Math.sin(angle), y1: centre - inner * Math.cos(angle),
      x2: centre + outer * Math.sin(angle), y2: centre - outer * Math.cos(angle), stroke, 'stroke-width': 1.2,
    });
    svg.append(tick(radius - 7, radius + 7, colour(owners[i])));
    if (moved?.[i]?.moved) svg.append(tick(radius + 10, radius + 22, colourAfter(moved[i].newNode, change.after)));
  });
  return svg;
}

/** Many shards (vbuckets, slots) as a square grid; a few (ranges, partitions) as a labelled bar in shard order. */
function shardGrid(owners, moving, after) {
  const few = owners.length <= 64;
  const columns = few ? Math.min(owners.length, 16) : Math.ceil(Math.sqrt(owners.length * 2));
  const width = few ? Math.min(140, Math.floor(560 / columns)) : Math.max(2, Math.floor(560 / columns));
  const height = few ? 36 : width;
  const gap = width > 4 ? 1 : 0;
  const rows = Math.ceil(owners.length / columns);
  const svg = element('svg:svg', { width: columns * width, height: rows * height, role: 'img', 'aria-label': 'shards by owner' });
  owners.forEach(({ shard, owner }, i) => {
    const x = (i % columns) * width, y = Math.floor(i / columns) * height;
    const move = moving.get(shard);
    const fill = move ? colourAfter(move.to, after) : owner === null ? '#ffffff' : colour(owner);
    const rect = element('svg:rect', { x, y, width: width - gap, height: height - gap, fill });
    if (move) rect.setAttribute('stroke', '#1d232a'), rect.setAttribute('stroke-width', width > 8 ? 2 : 0.6);
    rect.append(element('svg:title', {}, `shard ${shard}: ${owner ?? 'no owner'}${move ? ` → ${move.to}` : ''}`));
    svg.append(rect);
    const label = width >= 80 ? `${shard}: ${move ? move.to : owner ?? '–'}` : String(shard);
    if (few) svg.append(element('svg:text', { x: x + 4, y: y + height - 12, 'font-size': 11, fill: '#fff' }, label));
  });
  return svg;
}

// ---- load ------------------------------------------------------------------------------

function drawLoad() {
  const chart = $('load-chart');
  let groups;
  try {
    groups = state.router.groupByNode(state.sample);
  } catch (err) {
    chart.replaceChildren();
    showError($('load-stats'), err);
    return;
  }
  const counts = new Map(state.document.nodes.map((node) => [node.id, 0]));
  for (const group of groups) counts.set(group.node, group.indices.length);
  const entries = [...counts];
  const mean = state.sample.length / entries.length;
  const max = Math.max(...entries.map(([, n]) => n));
  const sd = Math.sqrt(entries.reduce((sum, [, n]) => sum + (n - mean) ** 2, 0) / entries.length);
  const bar = 18, width = 560, label = 110, scale = (width - label - 60) / Math.max(max, mean, 1);
  const svg = element('svg:svg', { width, height: entries.length * bar + 4, role: 'img', 'aria-label': 'keys per node' });
  entries.forEach(([node, n], i) => {
    const y = i * bar + 2;
    svg.append(
      element('svg:text', { x: label - 6, y: y + 12, 'text-anchor': 'end', 'font-size': 11 }, node),
      element('svg:rect', { x: label, y, width: Math.max(n * scale, 0.5), height: bar - 4, fill: colour(node) }),
      element('svg:text', { x: label + n * scale + 4, y: y + 12, 'font-size': 11 }, String(n)),
    );
  });
  svg.append(element('svg:line', { x1: label + mean * scale, x2: label + mean * scale, y1: 0, y2: entries.length * bar + 4, stroke: '#1d232a', 'stroke-dasharray': '3 3' }));
  chart.replaceChildren(svg);
  $('load-stats').textContent = `${state.sample.length} keys over ${entries.length} nodes: mean ${mean.toFixed(1)} (dashed), `
    + `max/mean ${(max / mean).toFixed(3)}, coefficient of variation ${(sd / mean).toFixed(3)}. Weighted nodes are meant to differ.`;
}

// ---- changes ---------------------------------------------------------------------------

/**
 * The core operations for a change to the nodes. A vbucket dictionary plans the move
 * (plan_rebalance) and completes it (complete_moves), as an operator would; other
 * strategies add or remove a node with add_node / remove_node. A re-weight outside a
 * dictionary is the document with the node's new weight, applied as a `disruption`
 * (the core replaces the topology and reports how much of the key space changes owner).
 * A strategy whose placement is a table refuses add_node and says which operation to use.
 * `complete` finishes a dictionary's running rebalance (its forward_map) alone.
 */
export function operationsFor(document, change) {
  if (change.kind === 'complete') return [{ op: 'complete_moves' }];
  const node = { id: change.id, ...(change.weight !== undefined && change.weight !== 1 ? { weight: change.weight } : {}) };
  if (document.strategy.type === 'vbucket') {
    const plan = change.kind === 'add' ? { add: [node] } : change.kind === 'remove' ? { remove: [change.id] } : { weights: { [change.id]: change.weight } };
    return [{ op: 'plan_rebalance', ...plan }, { op: 'complete_moves' }];
  }
  if (change.kind === 'add') return [{ op: 'add_node', node }];
  if (change.kind === 'remove') return [{ op: 'remove_node', id: change.id }];
  const to = structuredClone(document);
  to.nodes = to.nodes.map((n) => (n.id === change.id ? { ...n, weight: change.weight } : n));
  return [{ op: 'disruption', to }];
}

/**
 * The shards that change owner, or null when the two routers' shards are not the same
 * fixed partitions (a ring's shard is a node: only keys move, not shards).
 */
function movingShards(before, after) {
  try {
    return new Migration(before, after).movingShards();
  } catch (err) {
    if (err.code === 'invalid_argument') return null;
    throw err;
  }
}

function runChange(change) {
  if (!state.router) return;
  $('change-error').hidden = true;
  try {
    const operations = operationsFor(state.document, change);
    let topology = state.text; // the editor's text as typed: the core reads every integer exactly
    const reports = [];
    for (const operation of operations) {
      const { topology: next, ...report } = apply(topology, operation);
      reports.push({ op: operation.op, ...report });
      topology = next;
    }
    const after = new Router(topology);
    // Counts and flows over the whole sample; each key's move (the circle, the first moved
    // keys) for the first LISTED_KEYS only, the most a per-key diff lists.
    const moved = {
      ...diff(state.router, after, state.sample),
      keys: diff(state.router, after, state.sample.slice(0, LISTED_KEYS), { perKey: true }).keys,
    };
    state.change = {
      operations, reports, after: topology, afterRouter: after, diff: moved,
      added: topology.nodes.filter((n) => !state.document.nodes.some((m) => m.id === n.id)),
      movingShards: movingShards(state.router, after),
    };
    showChange();
  } catch (err) {
    clearChange();
    $('change-error').hidden = false;
    showError($('change-error'), err);
  }
  drawPicture();
}

function showChange() {
  const { diff: moved, movingShards, reports, operations, after } = state.change;
  const result = $('change-result');
  result.hidden = false;
  const count = $('moved-count');
  count.dataset.moved = String(moved.moved);
  count.dataset.total = String(moved.total);
  count.textContent = `${moved.moved} of ${moved.total} sample keys move (${(moved.movedPpm / 10_000).toFixed(2)}%)`;
  const disruption = reports.find((report) => report.disruption !== undefined)?.disruption;
  $('disruption').textContent = disruption === undefined ? '' : `The core's estimate over the whole key space: ${JSON.stringify(disruption)}.`;
  $('change-operations').textContent = operations.map((op) => JSON.stringify(op.op === 'disruption' ? { ...op, to: '…' } : op)).join('\n')
    + `\n\nreports: ${JSON.stringify(reports, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`;
  $('flows').tBodies[0].replaceChildren(...moved.flows.map((flow) => element('tr', {},
    element('td', {}, swatch(flow.from, after), flow.from), element('td', {}, swatch(flow.to, after), flow.to), element('td', {}, String(flow.keys)))));
  $('moving-shards').textContent = movingShards === null
    ? 'This strategy\'s shards are its nodes, not fixed partitions: keys move, shards do not (Migration.movingShards refuses).'
    : movingShards.length === 0 ? 'No shard changes owner.'
    : `${movingShards.length} shards change owner: ${movingShards.slice(0, 40).map((m) => `${m.shard} ${m.from}→${m.to}`).join(', ')}${movingShards.length > 40 ? ', …' : ''}`;
  const movedKeys = [];
  moved.keys.forEach((move, i) => move.moved && movedKeys.length < 20 && movedKeys.push([state.sample[i], move]));
  $('moved-keys').tBodies[0].replaceChildren(...movedKeys.map(([key, move]) => element('tr', {},
    element('td', {}, showKey(key)), element('td', {}, swatch(move.oldNode, after), move.oldNode), element('td', {}, swatch(move.newNode, after), move.newNode))));
}

// ---- wiring ----------------------------------------------------------------------------

async function loadExample(index) {
  const example = EXAMPLES[index];
  $('editor').value = await exampleText(example);
  $('sample-kind').value = example.sample?.kind ?? 'text';
  if (example.sample?.step) $('sample-step').value = example.sample.step;
  if (example.keys) $('keys').value = example.keys.join('\n');
  readDocument();
}

function debounce(fn, ms) {
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}

async function main() {
  await init(); // fetches and instantiates the .wasm beside the package's glue
  $('example').replaceChildren(...EXAMPLES.map((example, i) => element('option', { value: i }, example.label)));
  $('example').addEventListener('change', () => loadExample(Number($('example').value)));
  $('editor').addEventListener('input', debounce(readDocument, 300));
  for (const id of ['keys', 'replica-count']) $(id).addEventListener('input', debounce(() => state.router && drawKeys(), 200));
  for (const id of ['sample-kind', 'sample-prefix', 'sample-step', 'sample-count']) {
    $(id).addEventListener('input', debounce(() => { clearChange(); redraw(); }, 300));
  }
  const weightOf = (input) => Number($(input).value);
  $('add-button').addEventListener('click', () => runChange({ kind: 'add', id: $('add-id').value.trim(), weight: weightOf('add-weight') }));
  $('remove-button').addEventListener('click', () => runChange({ kind: 'remove', id: $('change-node').value }));
  $('complete-button').addEventListener('click', () => runChange({ kind: 'complete' }));
  $('reweight-button').addEventListener('click', () => runChange({ kind: 'reweight', id: $('change-node').value, weight: weightOf('reweight') }));
  $('adopt-button').addEventListener('click', () => {
    $('editor').value = pretty(state.change.after);
    readDocument();
  });
  await loadExample(0);
  $('loading').textContent = '';
  document.body.dataset.ready = 'true'; // the test waits for this
}

main().catch((err) => {
  $('loading').textContent = `could not start: ${err.message}`;
  $('loading').className = 'error';
});
