// The worker_threads suite shared with the other JavaScript package
// (conformance/js/threads-suite.mjs) against this one, imported by its package name.
import * as api from 'shardroute';
import { threadsSuite } from '../../conformance/js/threads-suite.mjs';
import { ADDON } from '../../conformance/js/runtimes.mjs';

threadsSuite(api, ADDON);
