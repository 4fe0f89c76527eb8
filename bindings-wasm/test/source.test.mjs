// The source session of the nodejs build: the suite shared with the addon
// (conformance/js/source-suite.mjs), whose messages it compares with this package's.
import * as api from 'shardroute-wasm';
import { WASM } from '../../conformance/js/runtimes.mjs';
import { sourceSuite } from '../../conformance/js/source-suite.mjs';

sourceSuite(api, WASM);
