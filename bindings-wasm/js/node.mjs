// The `./web` subpath under Node: the Node build (instantiated on load, the same module
// `shardroute-wasm` gives) with the web entry's `init` and `initSync` as no-ops, so code
// written for the web entry runs unchanged in Node.
export {
  MAX_DOCUMENT_BYTES, MAX_JSON_NESTING, Action, ClusterSession, Command, Migration, MigrationSession, Offered, Router, RoutingService,
  ShardrouteError, SourceSession, TopologyFollower, apply, decodeDictionary, diff, encodeDictionary, followerDefaults, hashKey, jump,
  moduloMoves, parseAddress, parseRedirect, sessionDefaults,
} from '../pkg/node/shardroute_wasm.js';

/** Nothing to load: the Node build instantiated the module when it was first imported. */
export async function init(_input) {}

/** Nothing to load: the Node build instantiated the module when it was first imported. */
export function initSync(_module) {}
