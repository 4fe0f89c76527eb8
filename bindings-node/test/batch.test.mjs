// Batch calls of the addon: the shared suite in conformance/batch-suite.mjs.
import * as api from '../index.js';
import { batchSuite } from '../../conformance/batch-suite.mjs';

batchSuite(api);
