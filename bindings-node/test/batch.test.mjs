// Batch calls of the addon: the shared suite in conformance/js/batch-suite.mjs.
import * as api from 'shardroute';
import { batchSuite } from '../../conformance/js/batch-suite.mjs';

batchSuite(api);
