// The documents the playground preloads, one or two per strategy: committed documents only
// (docs/examples/, and the topologies of the conformance vectors, which the core's
// generator wrote and every runner loads), read from the checkout the page is served
// from. `sample` sets the load sample for strategies that route integer ids only.

/** `{ type, label, file, id?, sample?, keys? }`: `file` from the repository root, `id` a vector topology. */
export const EXAMPLES = [
  { type: 'ring', label: 'ring: the README\'s cache ring (weights, hash tags)', file: 'docs/examples/ring.json' },
  { type: 'jump', label: 'jump: 10 nodes', file: 'conformance/vectors/jump.json', id: 'jump-10' },
  { type: 'modulo', label: 'modulo: 5 nodes', file: 'conformance/vectors/modulo.json', id: 'modulo-5' },
  { type: 'rendezvous', label: 'rendezvous: 5 weighted nodes', file: 'conformance/vectors/rendezvous.json', id: 'rendezvous-weighted-5' },
  { type: 'maglev', label: 'maglev: 4 weighted nodes, table 1009', file: 'conformance/vectors/maglev.json', id: 'maglev-weighted-4' },
  { type: 'ketama', label: 'ketama: libmemcached, weighted', file: 'conformance/vectors/ketama.json', id: 'libmemcached-weighted' },
  { type: 'token_ring', label: 'token_ring: generated and imported tokens', file: 'conformance/vectors/token_ring.json', id: 'token-ring-mixed-4' },
  { type: 'cassandra', label: 'cassandra: 4 nodes with vnodes', file: 'conformance/vectors/cassandra.json', id: 'cassandra-vnodes-4' },
  { type: 'vbucket', label: 'vbucket: 1024 vbuckets, 2 replicas', file: 'conformance/vectors/vbucket.json', id: 'vbucket-1024-r2' },
  { type: 'vbucket', label: 'vbucket: a dictionary in the middle of a rebalance', file: 'docs/examples/dictionary-rebalancing.json' },
  { type: 'redis_cluster', label: 'redis_cluster: 3 masters with replicas', file: 'conformance/vectors/redis_cluster.json', id: 'cluster6' },
  { type: 'couchbase', label: 'couchbase: a bucket map with its forward map', file: 'conformance/vectors/couchbase.json', id: 'couchbase-rebalance' },
  { type: 'vshard', label: 'vshard: 16 buckets in ranges', file: 'conformance/vectors/vshard.json', id: 'vshard-ranges-16' },
  { type: 'kafka', label: 'kafka: 12 partitions, Java partitioner', file: 'conformance/vectors/kafka.json', id: 'kafka-java-12' },
  { type: 'elasticsearch', label: 'elasticsearch: 12 shards, routing partitions', file: 'conformance/vectors/elasticsearch.json', id: 'es-12-partition-3' },
  { type: 'multilevel', label: 'multilevel: 64 partitions over 2 groups', file: 'conformance/vectors/multilevel.json', id: 'multilevel-weighted-64' },
  { type: 'key_range', label: 'key_range: the alphabet in 3 ranges', file: 'conformance/vectors/key_range.json', id: 'key-range-alphabet' },
  { type: 'hash_range', label: 'hash_range: 4 equal ranges', file: 'conformance/vectors/hash_range.json', id: 'hash-range-4' },
  { type: 'trie', label: 'trie: 3 leaves', file: 'conformance/vectors/trie.json', id: 'trie-3' },
  { type: 'vitess', label: 'vitess: xxhash over uneven keyranges', file: 'conformance/vectors/vitess.json', id: 'vitess-xxhash-uneven' },
  { type: 'directory', label: 'directory: listed tenants, modulo for the rest', file: 'docs/examples/directory.json' },
  {
    type: 'id_bits', label: 'id_bits: shard in the top 8 bits', file: 'conformance/vectors/ids.json', id: 'shard-high-4',
    sample: { kind: 'integers', step: '28823037615171' }, keys: ['1n', '72057594037927937n', '216172782113783808n'],
  },
  {
    type: 'id_groups', label: 'id_groups: orders in two groups', file: 'conformance/vectors/id_groups.json', id: 'orders',
    sample: { kind: 'integers', step: '200' }, keys: ['42n', '1500000n', '5000001n'],
  },
];

/** The example's document, pretty-printed as an editor shows it. */
export async function exampleText(example, fetchText = (path) => fetch(`../${path}`).then((r) => r.text())) {
  const parsed = parseDocument(await fetchText(example.file));
  const document = example.id === undefined ? parsed : parsed.topologies[example.id];
  if (document === undefined) throw new Error(`${example.file} has no topology ${example.id}`);
  return pretty(document);
}

/**
 * JSON text as a value, integers beyond 2^53 as BigInt so that tokens, seeds and ids
 * survive the round trip (the package takes BigInt wherever a document has a u64 or a
 * token). Uses the reviver's `source` (Chromium 114+, Node 21+); without it they stay lossy.
 */
export function parseDocument(text) {
  return JSON.parse(text, (_, value, context) => (
    typeof value === 'number' && !Number.isSafeInteger(value) && /^-?\d+$/.test(context?.source ?? '') ? BigInt(context.source) : value));
}

/**
 * JSON as an editor shows it: what fits on a line stays on one, an object's fields and a
 * list of objects go one a line, and lists of short items (map chains, tokens) are packed
 * several a line.
 */
export function pretty(value, indent = '') {
  const one = flat(value);
  if (indent.length + one.length <= 100 || value === null || typeof value !== 'object') return one;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    const items = value.map(flat);
    if (items.every((item) => item.length <= 40)) return `[\n${packed(items, inner)}\n${indent}]`;
    return `[\n${value.map((item) => inner + pretty(item, inner)).join(',\n')}\n${indent}]`;
  }
  const fields = Object.entries(value).map(([key, item]) => `${inner}${JSON.stringify(key)}: ${pretty(item, inner)}`);
  return `{\n${fields.join(',\n')}\n${indent}}`;
}

/** One line of JSON, with a space after each `:` and `,`. */
function flat(value) {
  if (Array.isArray(value)) return `[${value.map(flat).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${flat(item)}`).join(', ')}}`;
  }
  return typeof value === 'bigint' ? String(value) : JSON.stringify(value);
}

/** Short items, several a line. */
function packed(items, indent) {
  const lines = [];
  let line = '';
  for (const item of items) {
    if (line && indent.length + line.length + item.length > 96) {
      lines.push(`${indent}${line},`);
      line = item;
    } else {
      line = line ? `${line}, ${item}` : item;
    }
  }
  return [...lines, `${indent}${line}`].join('\n');
}
