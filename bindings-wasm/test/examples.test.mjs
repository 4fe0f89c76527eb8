// The README's Node.js example and examples/demo.mjs, run as a user would run them:
// the shared suite in conformance/js/examples-suite.mjs.
import { fileURLToPath } from 'node:url';

import * as api from 'shardroute-wasm';
import { examplesSuite } from '../../conformance/js/examples-suite.mjs';

examplesSuite(api, fileURLToPath(new URL('..', import.meta.url)));
