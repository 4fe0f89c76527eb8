// The API suite shared with the Node addon (conformance/js/api-suite.mjs) against the
// nodejs build, imported through the package's own `exports` as a user imports it. Where
// the WASM package differs from the addon: conformance/js/runtimes.mjs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as api from 'shardroute-wasm';
import { apiSuite } from '../../conformance/js/api-suite.mjs';
import { doc } from '../../conformance/js/documents.mjs';
import { WASM } from '../../conformance/js/runtimes.mjs';

apiSuite(api, WASM);

test('the route build exports the same limits, its core\'s (its HTTP follower reads within them)', async () => {
  const route = await import('shardroute-wasm/route');
  const limit = route.MAX_DOCUMENT_BYTES;
  assert.ok(Number.isSafeInteger(limit) && Number.isSafeInteger(route.MAX_JSON_NESTING));
  assert.deepEqual([limit, route.MAX_JSON_NESTING], [api.MAX_DOCUMENT_BYTES, api.MAX_JSON_NESTING]);
  const text = JSON.stringify(doc({ nodes: 3, strategy: 'jump' }));
  assert.throws(() => new route.Router(text + ' '.repeat(limit + 1 - text.length)),
    { code: 'limit_exceeded', message: `the document is ${limit + 1} bytes; the limit is ${limit}` });
});
