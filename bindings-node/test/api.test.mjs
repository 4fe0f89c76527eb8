// The API suite shared with shardroute-wasm (conformance/js/api-suite.mjs) against the
// addon, imported by its package name as a user imports it. Where the addon differs from
// the WASM package: conformance/js/runtimes.mjs.
import * as api from 'shardroute';
import { apiSuite } from '../../conformance/js/api-suite.mjs';
import { ADDON } from '../../conformance/js/runtimes.mjs';

apiSuite(api, ADDON);
