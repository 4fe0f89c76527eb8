// The topology follower of the nodejs build: the suite shared with the Node addon
// (conformance/js/follower-suite.mjs), whose messages it compares with this package's.
import * as api from 'shardroute-wasm';
import { WASM } from '../../conformance/js/runtimes.mjs';
import { followerSuite } from '../../conformance/js/follower-suite.mjs';

followerSuite(api, WASM);
