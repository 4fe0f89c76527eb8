// The shared table of values crossing into a binding (conformance/js/crossing-suite.mjs,
// conformance/hostile/crossing.json) against the Node addon, imported by its package name.
import * as api from 'shardroute';
import { crossingSuite } from '../../conformance/js/crossing-suite.mjs';

crossingSuite(api);
