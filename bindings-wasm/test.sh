#!/usr/bin/env bash
# Builds shardroute-wasm if needed, then runs everything that checks it: the size budget of
# both builds of the .wasm (test/size-budget.mjs, size-budget.json), the core built
# alone for wasm32 without std (the no_std proof), the TypeScript declarations (tsc over
# conformance/js/types.ts and http-types.ts, test/edge/web-types.ts for `shardroute-wasm/web`,
# test/http-web-types.ts, and test/route-types.ts for `shardroute-wasm/route`), the Node
# tests (the suites shared with the addon in
# conformance/js/: API with the hostile arguments, whose messages are compared with the
# addon's, built too; batches, worker_threads, examples, `shardroute-wasm/http` against an
# in-process HTTP server; the conformance vectors as `wasm-node`; test/edge.test.mjs, the
# packed package in Node, Deno, workerd, and Chromium's service and web workers and bundled
# pages; test/edge-http.test.mjs, `shardroute-wasm/http` in workerd and Deno;
# test/init-order.test.mjs, both web entries' `not_initialized` before `init`;
# test/route.test.mjs and test/route-edge.test.mjs, the route build `shardroute-wasm/route`
# and its share of the vectors in Node, workerd, Deno and Chromium), the conformance vectors
# in headless Chromium (`wasm-chromium`), and a slim package's (test/slim.mjs). Exits
# non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$here"

./build.sh
# The hostile-argument suite compares this package's messages with the addon's.
"$root/bindings-node/build.sh"

echo "== size budget (size-budget.json): the full and route builds' .wasm, raw and gzip -9"
node test/size-budget.mjs

echo "== no_std: the core alone for wasm32-unknown-unknown, core + alloc only"
RUSTC="${SHARDROUTE_WASM_RUSTC:-/usr/bin/rustc}" RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$root/target/wasm" \
  "${SHARDROUTE_WASM_CARGO:-/usr/bin/cargo}" build --quiet -p shardroute --no-default-features \
  --features all-strategies --target wasm32-unknown-unknown -Z build-std=core,alloc

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi

echo "== tsc --noEmit (index.d.ts, http.d.ts, conformance/js/types.ts, http-types.ts; web.d.ts, test/edge/web-types.ts, test/http-web-types.ts; route.d.ts, route-http.d.ts, test/route-types.ts)"
./node_modules/.bin/tsc --noEmit -p tsconfig.json
./node_modules/.bin/tsc --noEmit -p tsconfig.web.json

# SHARDROUTE_TIER=check (`make check`): Node only; the edge runtimes, the browser, the
# slim package and the tests against a live etcd are `make test`'s.
if [ "${SHARDROUTE_TIER:-}" = check ]; then
  echo "== node --test (check tier: no edge runtimes, browser or slim package)"
  node --test $(ls test/*.test.mjs | grep -Ev '^test/(edge(-http|-service)?|route-edge|etcd|etcd-secure)\.test\.mjs$')
  exit 0
fi
echo "== node --test"
node --test test/*.test.mjs

echo "== headless Chromium"
node test/browser.mjs

for wasm in pkg/web/shardroute_wasm_bg.wasm pkg-route/web/shardroute_route_bg.wasm; do
  echo "shardroute-wasm: $wasm is $(stat -c %s "$wasm") bytes, $(gzip -9c "$wasm" | wc -c) gzipped"
done

# Last, as it replaces pkg/ until the full package is built again (build.sh rebuilds it on
# the next run whatever stops this one).
echo "== a slim package: SHARDROUTE_WASM_FEATURES=jump,redis_cluster,vbucket (no operations)"
SHARDROUTE_WASM_FEATURES=jump,redis_cluster,vbucket ./build.sh
node test/slim.mjs
./build.sh
