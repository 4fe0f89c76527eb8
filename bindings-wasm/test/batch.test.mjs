// Batch calls of the WASM package (nodejs build): the shared suite in conformance/js/batch-suite.mjs.
import * as api from 'shardroute-wasm';
import { batchSuite } from '../../conformance/js/batch-suite.mjs';

batchSuite(api);
