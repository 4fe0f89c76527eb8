// The API suite shared with the Node addon (conformance/js/api-suite.mjs) against the
// nodejs build, imported through the package's own `exports` as a user imports it. Where
// the WASM package differs from the addon: conformance/js/runtimes.mjs.
import * as api from 'shardroute-wasm';
import { apiSuite } from '../../conformance/js/api-suite.mjs';
import { WASM } from '../../conformance/js/runtimes.mjs';

apiSuite(api, WASM);
