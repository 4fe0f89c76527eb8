// The Redis Cluster session of the addon: the suite shared with shardroute-wasm
// (conformance/js/session-suite.mjs), whose messages it compares with this package's.
import * as api from 'shardroute';
import { ADDON } from '../../conformance/js/runtimes.mjs';
import { sessionSuite } from '../../conformance/js/session-suite.mjs';

sessionSuite(api, ADDON);
