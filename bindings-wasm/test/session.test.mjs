// The Redis Cluster session of the nodejs build: the suite shared with the Node addon
// (conformance/js/session-suite.mjs), whose messages it compares with this package's.
import * as api from 'shardroute-wasm';
import { WASM } from '../../conformance/js/runtimes.mjs';
import { sessionSuite } from '../../conformance/js/session-suite.mjs';

sessionSuite(api, WASM);
