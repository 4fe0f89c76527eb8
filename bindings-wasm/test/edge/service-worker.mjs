// A module worker serving the routing service with `shardroute-wasm/service`'s `fetch`
// handler over a document built in: test/edge-service.test.mjs serves it in workerd
// (bundled as wrangler bundles it) and in Deno (`deno serve`), and asks both over HTTP.
import { Router } from 'shardroute-wasm';
import { handler } from 'shardroute-wasm/service';

export const DOCUMENT = {
  format: 'shardroute/1',
  epoch: 21,
  nodes: [{ id: 'a', address: '10.0.0.1:5432' }, { id: 'b' }, { id: 'c', address: '10.0.0.3:5432' }],
  strategy: { type: 'jump' },
};

export default { fetch: handler(new Router(DOCUMENT)) };
