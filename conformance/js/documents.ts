// The document types of index.d.ts (made from docs/topology.schema.json by
// scripts/document-types.py): typed documents and operations type-check where the functions
// take them, and wrong ones do not. Type-checked by `tsc --noEmit` in each package
// (test.sh) against the package's own index.d.ts, never run. Each line under a
// `ts-expect-error` directive must stay an error.
import { Router, apply, encodeDictionary, hashKey } from 'shardroute-package';
import type {
  AddNodeOperation, Applied, CouchbaseStrategy, Hashing, IdGroupsStrategy, KeyObject, Operation, RingStrategy,
  Strategy, Topology, TopologyNode, VbucketStrategy,
} from 'shardroute-package';

const ring: Topology = {
  $schema: '../docs/topology.schema.json',
  format: 'shardroute/1',
  epoch: 12n,
  hashing: { function: 'siphash-2-4', hash_tag: 'redis' },
  nodes: [
    { id: 'cache-a', address: '10.0.0.1:6379', zone: 'eu-1a' },
    { id: 'cache-b', address: '10.0.0.2:6379', zone: 'eu-1b', weight: 2 },
  ],
  strategy: { type: 'ring', points_per_node: 160 },
};
const dictionary: VbucketStrategy = {
  type: 'vbucket', vbuckets: 2, map: [['a', 'b'], ['b', 'a']], states: { 1: 'migrating' }, forward_map: [['a'], ['a']],
};
const couchbase: CouchbaseStrategy = { type: 'couchbase', map: [['a', null], ['b', 'a']] };
const groups: IdGroupsStrategy = {
  type: 'id_groups',
  groups: [{ id: 'g1', intervals: [[0, '18446744073709551615']], shards: [{ node: 'a', weight: 2 }], writable: true }],
  tables: { interval: 100n, rule: 'orders_{n}' },
};
const strategies: Strategy[] = [dictionary, couchbase, groups, { type: 'directory', fallback: { type: 'jump' } }];
const key: KeyObject = { u64: 42n };
const hashing: Hashing = { function: 'crc32', integers: 'identity' };
const add: AddNodeOperation = { op: 'add_node', node: { id: 'cache-c', weight: 1.5 } };
const plan: Operation = { op: 'plan_rebalance', add: [{ id: 'c' }], fail: ['b'], weights: { a: 2 } };

// Where documents go in: typed, or as JSON text (and `any`, as JSON.parse gives).
const router: Router = new Router(ring);
const fromText: Router = new Router(JSON.stringify(ring));
const fromParsed: Router = new Router(JSON.parse('{}'));
const next: Router = router.replace({ ...ring, epoch: 13 });
const applied: Applied = apply(ring, add);
const afterApply: Router = new Router(applied.topology);
const report: unknown = applied['added'];
const hashed: bigint = hashKey('k', hashing);
const encoded: Uint8Array = encodeDictionary({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: dictionary });

// Wrong documents.
// @ts-expect-error: a misspelt node field
const misspelt: TopologyNode = { id: 'a', wieght: 2 };
// @ts-expect-error: a field another strategy has
const foreign: RingStrategy = { type: 'ring', vbuckets: 16 };
// @ts-expect-error: points_per_node is a number
const wrongType: RingStrategy = { type: 'ring', points_per_node: '160' };
// @ts-expect-error: no such strategy
const unknownType: Strategy = { type: 'rign' };
// @ts-expect-error: nodes are required
const noNodes: Topology = { format: 'shardroute/1', epoch: 1, strategy: { type: 'jump' } };
// @ts-expect-error: null is absent for the core, but typed documents omit the field
const nullField: TopologyNode = { id: 'a', zone: null };
// @ts-expect-error: a misspelt field inside a document given to the constructor
new Router({ format: 'shardroute/1', epoch: 1, nodes: [{ id: 'a' }], strategy: { type: 'ring', points: 160 } });
// @ts-expect-error: remove_node takes an id, not a node
apply(ring, { op: 'remove_node', node: 'a' });
// @ts-expect-error: no such operation
apply(ring, { op: 'add_nodes', node: { id: 'c' } });
// @ts-expect-error: no such hash function
hashKey('k', { function: 'md5' });

export const used = [strategies, key, plan, fromText, fromParsed, next, afterApply, report, hashed, encoded, misspelt,
  foreign, wrongType, unknownType, noNodes, nullField];
