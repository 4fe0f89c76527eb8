// The conformance runner of the Node addon: every case of every vector file, through the
// shared JavaScript runner (conformance/runner.mjs), against the package as a user
// imports it.
import * as api from 'shardroute';
import { conformanceTest } from '../../conformance/js/vectors.mjs';

conformanceTest(api, 'node');
