// The topology follower of the addon: the suite shared with shardroute-wasm
// (conformance/js/follower-suite.mjs), whose messages it compares with this package's.
import * as api from 'shardroute';
import { ADDON } from '../../conformance/js/runtimes.mjs';
import { followerSuite } from '../../conformance/js/follower-suite.mjs';

followerSuite(api, ADDON);
