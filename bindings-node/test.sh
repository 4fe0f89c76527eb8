#!/usr/bin/env bash
# Builds the addon if needed, then runs every check of the Node package: the type checks
# (conformance/js/types.ts and http-types.ts against index.d.ts and http.d.ts,
# test/{redis,etcd,zookeeper}.types.ts against redis.d.ts, etcd.d.ts and zookeeper.d.ts),
# and `node --test`: the conformance vectors and the suites shared with shardroute-wasm
# (conformance/js/: API with the hostile arguments, which needs shardroute-wasm built too,
# batches, worker_threads, README example and demo, and shardroute/http against the HTTP
# server of conformance/js/http-server.mjs on 127.0.0.1), the addon's own panic tests,
# shardroute/redis against a real 3-node Redis Cluster it starts (redis-server,
# redis-cli), shardroute/etcd against a real etcd member it starts (etcd), and
# shardroute/zookeeper against a real ZooKeeper it starts (java, Debian's zookeeper).
# Exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

"$here/build.sh"
# The hostile-argument suite compares the addon's messages with the WASM package's.
"$here/../bindings-wasm/build.sh"

cd "$here"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund
fi
npx tsc --noEmit -p tsconfig.json
# SHARDROUTE_TIER=check (`make check`): everything but the tests that start live servers
# (the HTTP follower's server is in-process: its tests run here too).
if [ "${SHARDROUTE_TIER:-}" = check ]; then
  node --test $(ls test/*.test.mjs | grep -Ev '^test/(redis|etcd|etcd-secure|zookeeper)\.test\.mjs$')
else
  node --test test/
fi
