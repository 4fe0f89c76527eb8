// The slice of the conformance vectors every runtime test of the edge examples routes:
// from each vector file, the route cases of its first topologies whose key JSON can carry
// (text, or an integer up to 2^53 - 1) and whose answer is a shard, grouped into one
// batch per topology. A few hundred keys over every strategy.
import { loadVectorFiles } from '../../../conformance/js/vectors.mjs';

const TOPOLOGIES_PER_FILE = 2;
const KEYS_PER_TOPOLOGY = 12;

/** The key as JSON carries it, or undefined. */
function jsonKey(key) {
  if (typeof key.utf8 === 'string') return key.utf8;
  if (typeof key.u64 === 'string' && /^\d+$/.test(key.u64) && BigInt(key.u64) <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Number(key.u64);
  }
  return undefined;
}

/**
 * `[{ name, topology, keys, expect: { shards, nodes } }]`: the request each example gets
 * (`{ topology, keys }`) and the answer the vectors give for it.
 */
export function vectorSlice() {
  const batches = [];
  for (const file of loadVectorFiles()) {
    const byTopology = new Map();
    for (const kase of file.cases) {
      // A case on a table family's router (`table`) is not the document's own routing,
      // which is what the examples answer.
      if (kase.op !== 'route' || kase.expect.error !== undefined || kase.table !== undefined) continue;
      const key = jsonKey(kase.key);
      if (key === undefined) continue;
      if (!byTopology.has(kase.topology)) {
        if (byTopology.size === TOPOLOGIES_PER_FILE) continue;
        byTopology.set(kase.topology, { keys: [], shards: [], nodes: [] });
      }
      const batch = byTopology.get(kase.topology);
      if (batch.keys.length === KEYS_PER_TOPOLOGY) continue;
      batch.keys.push(key);
      batch.shards.push(kase.expect.shard);
      batch.nodes.push(kase.expect.node);
    }
    for (const [id, { keys, shards, nodes }] of byTopology) {
      batches.push({ name: `${file.name}/${id}`, topology: file.topologies[id], keys, expect: { shards, nodes } });
    }
  }
  return batches;
}

/** How many keys the slice routes, and over how many strategies. */
export function sliceSize(batches) {
  return {
    keys: batches.reduce((sum, batch) => sum + batch.keys.length, 0),
    strategies: new Set(batches.map((batch) => batch.topology.strategy.type)).size,
  };
}
