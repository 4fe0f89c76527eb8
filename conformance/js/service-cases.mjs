// The hostile requests every routing-service shell must refuse with the core's JSON
// answer, shared by the Node addon's node:http handler (bindings-node/test/service.test.mjs)
// and the WASM package's fetch handler (bindings-wasm/test/service.test.mjs): each is
// [method, target, body (null: none), status, code], for a service whose batch limit is
// `maxKeys` (the core's MAX_SERVICE_KEYS).

/** The document both packages' service tests serve: addresses on two of three nodes, a weight. */
export const SERVICE_DOCUMENT = {
  format: 'shardroute/1',
  epoch: 12,
  nodes: [{ id: 'a', address: '10.0.0.1:5432' }, { id: 'b' }, { id: 'c', address: '10.0.0.3:5432', weight: 2 }],
  strategy: { type: 'ring', points_per_node: 64 },
};

/** What the service answers for `key` over `router` (of SERVICE_DOCUMENT), its epoch aside. */
export function expectedAnswer(router, key) {
  const node = router.node(key);
  const address = SERVICE_DOCUMENT.nodes.find(({ id }) => id === node).address;
  return { ...(address === undefined ? {} : { address }), node, shard: router.route(key) };
}

/** The cases, for a service refusing batches of more than `maxKeys` keys. */
export function hostileServiceRequests(maxKeys) {
  return [
    ['GET', '/route?key=%FF', null, 400, 'invalid_key'],
    ['GET', '/route?key=abc&form=hex', null, 400, 'invalid_key'],
    ['GET', '/route?key=-1&form=u64', null, 400, 'invalid_key'],
    ['GET', '/route?key=a&key=b', null, 400, 'invalid_argument'],
    ['GET', '/elsewhere', null, 404, 'invalid_argument'],
    ['PUT', '/route', '{}', 405, 'invalid_argument'],
    ['POST', '/route', '{"keys": ["\\ud800"]}', 400, 'invalid_key'],
    ['POST', '/route', Uint8Array.from('{"keys": ["\xc3\x28"]}', (c) => c.charCodeAt(0)), 400, 'invalid_key'],
    ['POST', '/route', '{"keys": [1.5]}', 400, 'invalid_key'],
    ['POST', '/route', '{"keys": [', 400, 'invalid_argument'],
    ['POST', '/route', JSON.stringify({ keys: Array(maxKeys + 1).fill('k') }), 413, 'limit_exceeded'],
    ['POST', '/route', `{"keys": ${'['.repeat(100)}${']'.repeat(100)}}`, 413, 'limit_exceeded'],
  ];
}
