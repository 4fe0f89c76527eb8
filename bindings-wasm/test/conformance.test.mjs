// The conformance vectors (../../conformance/vectors) against the nodejs build, loaded the
// way a user loads it: through the package's own `exports` (the `node` condition).
import * as api from 'shardroute-wasm';
import { conformanceTest } from '../../conformance/js/vectors.mjs';

conformanceTest(api, 'wasm-node');
