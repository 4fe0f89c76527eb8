// How every JavaScript test of shardroute builds topology documents: `doc`, the twin of
// `doc` in conformance/python/shardroute_testing.py. Pure JavaScript with no imports, so
// that a browser page can load it as well as Node.

/**
 * A topology document, as `JSON.parse` would give it.
 *
 * `nodes` is a count (ids `n0`, `n1`, ...) or an array of node ids and node objects
 * (`{ id, address, weight, ... }`) in order. `strategy` is a strategy object, or the bare
 * type name of a strategy without parameters. `epoch` is 1 unless given (a number, a
 * bigint or a decimal string); `hashing` is left out when undefined; `fields` are further
 * top-level fields (`placement`, `hot_keys`, ...), after `strategy`.
 *
 *     doc({ nodes: 3, strategy: 'jump' })
 *     // { format: 'shardroute/1', epoch: 1, nodes: [{ id: 'n0' }, { id: 'n1' }, { id: 'n2' }],
 *     //   strategy: { type: 'jump' } }
 */
export function doc({ nodes, strategy, epoch = 1, hashing, ...fields }) {
  let list = nodes;
  if (typeof nodes === 'number') {
    list = Array.from({ length: nodes }, (_, i) => `n${i}`);
  } else if (!Array.isArray(nodes)) {
    throw new TypeError(`nodes: a count or an array of ids and node objects, not ${typeof nodes}`);
  }
  if (strategy === undefined) throw new TypeError('strategy: a strategy object or a type name');
  const document = { format: 'shardroute/1', epoch };
  if (hashing !== undefined) document.hashing = { ...hashing };
  document.nodes = list.map((node) => (typeof node === 'string' ? { id: node } : { ...node }));
  document.strategy = typeof strategy === 'string' ? { type: strategy } : { ...strategy };
  return Object.assign(document, fields);
}
