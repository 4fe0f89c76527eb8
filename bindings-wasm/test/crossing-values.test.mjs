// The shared table of values crossing into a binding (conformance/js/crossing-suite.mjs,
// conformance/hostile/crossing.json) against the WASM package's nodejs build, imported by its package name.
import * as api from 'shardroute-wasm';
import { crossingSuite } from '../../conformance/js/crossing-suite.mjs';

crossingSuite(api);
