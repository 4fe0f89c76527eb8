// The migration session of the nodejs build: the suite shared with the Node addon
// (conformance/js/migration-session-suite.mjs), whose messages it compares with this package's.
import * as api from 'shardroute-wasm';
import { WASM } from '../../conformance/js/runtimes.mjs';
import { migrationSessionSuite } from '../../conformance/js/migration-session-suite.mjs';

migrationSessionSuite(api, WASM);
