// The API suite shared with the Node addon (conformance/js/api-suite.mjs) against the
// nodejs build, imported through the package's own `exports` as a user imports it. Where
// the WASM package differs from the addon: conformance/js/runtimes.mjs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as api from 'shardroute-wasm';
import { apiSuite } from '../../conformance/js/api-suite.mjs';
import { doc } from '../../conformance/js/documents.mjs';
import { WASM } from '../../conformance/js/runtimes.mjs';

apiSuite(api, WASM);

// The package's limits are the core's own, exported by the native module rather than held
// in JavaScript: a document of exactly MAX_DOCUMENT_BYTES loads and one byte more is
// refused in the core's words naming the same number; nesting of MAX_JSON_NESTING levels
// is refused naming it, one level less is not. Objects (serialized by shared.mjs, within
// the limits the package gives it) stop at the same numbers.
describe('limits', () => {
  const { MAX_DOCUMENT_BYTES: limit, MAX_JSON_NESTING: depth, Router, ShardrouteError } = api;
  const document = doc({ nodes: 3, strategy: 'jump', epoch: 7 });
  const text = JSON.stringify(document);
  const refused = (fn) => assert.throws(fn, (err) => err instanceof ShardrouteError && err.code === 'limit_exceeded');
  /** `levels` arrays, one inside the other. */
  const nested = (levels) => Array.from({ length: levels - 1 }).reduce((inner) => [inner], []);

  test('MAX_DOCUMENT_BYTES is the core\'s document limit', () => {
    assert.ok(Number.isSafeInteger(limit) && limit > 0);
    assert.equal(new Router(text + ' '.repeat(limit - text.length)).epoch, 7n);
    refused(() => new Router(text + ' '.repeat(limit + 1 - text.length)));
    assert.throws(() => new Router(text + ' '.repeat(limit + 1 - text.length)),
      { message: `the document is ${limit + 1} bytes; the limit is ${limit}` });
    assert.throws(() => new Router({ ...document, extra: 'x'.repeat(limit) }),
      { code: 'limit_exceeded', message: `topology is more than ${limit} bytes of JSON; the limit is ${limit}` });
  });

  test('MAX_JSON_NESTING is the core\'s nesting limit', () => {
    assert.ok(Number.isSafeInteger(depth) && depth > 0);
    const deep = (levels) => `${text.slice(0, -1)},"extra":${'['.repeat(levels)}${']'.repeat(levels)}}`;
    refused(() => new Router(deep(depth)));
    assert.throws(() => new Router(deep(depth)), { message: new RegExp(`nested in ${depth} arrays and objects; the limit is ${depth} `) });
    refused(() => new Router({ ...document, extra: nested(depth) }));
    assert.throws(() => new Router({ ...document, extra: nested(depth) }), { message: new RegExp(`the limit is ${depth} `) });
    for (const below of [deep(depth - 1), { ...document, extra: nested(depth - 1) }]) {
      try {
        new Router(below);
      } catch (err) {
        assert.notEqual(err.code, 'limit_exceeded', err.message);
      }
    }
  });
});

test('the route build exports the same limits, its core\'s (its HTTP follower reads within them)', async () => {
  const route = await import('shardroute-wasm/route');
  const limit = route.MAX_DOCUMENT_BYTES;
  assert.ok(Number.isSafeInteger(limit) && Number.isSafeInteger(route.MAX_JSON_NESTING));
  assert.deepEqual([limit, route.MAX_JSON_NESTING], [api.MAX_DOCUMENT_BYTES, api.MAX_JSON_NESTING]);
  const text = JSON.stringify(doc({ nodes: 3, strategy: 'jump' }));
  assert.throws(() => new route.Router(text + ' '.repeat(limit + 1 - text.length)),
    { code: 'limit_exceeded', message: `the document is ${limit + 1} bytes; the limit is ${limit}` });
});
