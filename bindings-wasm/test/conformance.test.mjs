// The conformance vectors (../../conformance/vectors) against the nodejs build, loaded the
// way a user loads it: through the package's own `exports` (the `node` condition).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as api from 'shardroute-wasm';
import { runVectors } from '../../conformance/runner.mjs';
import { filter, loadVectorFiles, report } from './support.mjs';

test('every conformance vector passes (wasm-node)', () => {
  const result = runVectors(api, loadVectorFiles(), filter);
  const ok = report('wasm-node', result);
  assert.equal(result.failed, 0, `${result.failed} case(s) failed: ${result.failures.map((f) => f.name).join(', ')}`);
  assert.ok(ok && result.passed > 0, 'no case ran');
});
