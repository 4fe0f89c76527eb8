// The migration session of the addon: the suite shared with shardroute-wasm
// (conformance/js/migration-session-suite.mjs), whose messages it compares with this package's.
import * as api from 'shardroute';
import { ADDON } from '../../conformance/js/runtimes.mjs';
import { migrationSessionSuite } from '../../conformance/js/migration-session-suite.mjs';

migrationSessionSuite(api, ADDON);
