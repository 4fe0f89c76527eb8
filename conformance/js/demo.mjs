// The demo keys (conformance/demo/keys.json) routed through the demo topology
// (conformance/demo/topology.json) with a package's Router: what each package's
// examples/demo.mjs prints, and what `make demo` (scripts/demo.py) compares across
// languages.
import { readFileSync } from 'node:fs';

const demoDir = new URL('../demo/', import.meta.url);

/** The demo keys, as strings. */
export function demoKeys() {
  return JSON.parse(readFileSync(new URL('keys.json', demoDir), 'utf8'));
}

/** `[{ key, shard, node, replicas }, ...]` for every demo key, two replicas each. */
export function demoRows(Router) {
  const router = new Router(readFileSync(new URL('topology.json', demoDir), 'utf8'));
  return demoKeys().map((key) => ({
    key,
    shard: router.route(key),
    node: router.node(key),
    replicas: router.replicas(key, 2),
  }));
}
