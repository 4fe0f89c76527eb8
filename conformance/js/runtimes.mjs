// Every way the two JavaScript packages differ, side by side: `field: [addon, wasm]`. The
// API suite (api-suite.mjs) takes one column as its `runtime` and asserts each package's
// own value; anything not listed here must be the same in both.
import { join } from 'node:path';

import { repoRoot } from './vectors.mjs';

const DIFFERENCES = {
  // The package, which the suite loads by name from its directory, as a user's code would.
  packageName: ['shardroute', 'shardroute-wasm'],
  packageDir: [join(repoRoot, 'bindings-node'), join(repoRoot, 'bindings-wasm')],
  // The file `require(packageName)` resolves to, relative to packageDir.
  main: ['index.js', 'pkg/node/shardroute_wasm.js'],
  // Names on the prototypes and constructors of Router and Migration beyond the API's:
  // wasm-bindgen's memory management (`free`, and `__destroy_into_raw` and `__wrap`, its
  // glue). The addon's classes are JavaScript classes over the native ones with nothing of
  // their own.
  classExtras: [{ methods: [], statics: [] }, { methods: ['__destroy_into_raw', 'free'], statics: ['__wrap'] }],
  // Whether a router or a migration can be released by hand (`router.free()`; every call
  // on it then throws). Otherwise only the garbage collector releases one (both have that).
  free: [false, true],
  // Whether a Proxy of a Router, a Command or a Migration passes as one (`diff`,
  // `ClusterSession.poll`, `new MigrationSession`): wasm-bindgen's glue checks
  // `instanceof` and reads the object's pointer through the proxy; N-API cannot unwrap a
  // proxy, so the addon refuses it (invalid_argument).
  proxiesPass: [false, true],
  // The order of the properties of locate's result: as index.d.ts declares them (the
  // addon), or sorted (the WASM build parses the core's JSON, whose keys are sorted).
  locateKeys: [['shard', 'node', 'address', 'zone', 'names'], ['address', 'names', 'node', 'shard', 'zone']],
};

/** One column of DIFFERENCES: 0 for the addon, 1 for the WASM package. */
function column(index) {
  return Object.fromEntries(Object.entries(DIFFERENCES).map(([field, values]) => [field, values[index]]));
}

export const ADDON = column(0);
export const WASM = column(1);
