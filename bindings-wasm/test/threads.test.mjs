// The worker_threads suite shared with the other JavaScript package
// (conformance/js/threads-suite.mjs) against this one, imported by its package name.
import * as api from 'shardroute-wasm';
import { threadsSuite } from '../../conformance/js/threads-suite.mjs';
import { WASM } from '../../conformance/js/runtimes.mjs';

threadsSuite(api, WASM);
