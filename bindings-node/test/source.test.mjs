// The source session of the addon: the suite shared with shardroute-wasm
// (conformance/js/source-suite.mjs), whose messages it compares with this package's.
import * as api from 'shardroute';
import { ADDON } from '../../conformance/js/runtimes.mjs';
import { sourceSuite } from '../../conformance/js/source-suite.mjs';

sourceSuite(api, ADDON);
