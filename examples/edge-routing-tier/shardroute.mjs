// The one place the edge worker takes shardroute from. Today the full build of
// shardroute-wasm; once the route-only entry exists, `'shardroute-wasm'` below becomes
// `'shardroute-wasm/route'` and nothing else in the example changes. `HttpFollower`
// (`shardroute-wasm/http`) loads the package's main entry itself.
export { Migration, MigrationSession } from 'shardroute-wasm';
export { HttpFollower } from 'shardroute-wasm/http';
