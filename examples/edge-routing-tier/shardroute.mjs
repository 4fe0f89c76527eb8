// The one place the edge worker takes shardroute from: the route-only build of
// shardroute-wasm (`shardroute-wasm/route`: read a topology, route, follow epochs, the
// migration's read and write plans; no planner, no operations, no diff), and the HTTP
// follower over that same build (`shardroute-wasm/route/http`), so that the routers it
// hands out and the Migration built from them come from one WebAssembly instance.
export { Migration, MigrationSession } from 'shardroute-wasm/route';
export { HttpFollower } from 'shardroute-wasm/route/http';
