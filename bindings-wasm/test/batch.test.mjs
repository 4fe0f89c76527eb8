// Batch calls of the WASM package (nodejs build): the shared suite in conformance/batch-suite.mjs.
import * as api from 'shardroute-wasm';
import { batchSuite } from '../../conformance/batch-suite.mjs';

batchSuite(api);
