#!/usr/bin/env bash
# The floor of the route build (`shardroute-wasm/route`): its size and cold start with
# the core's JSON document reader and writer cut off (bench/edge/floor.patch), measured
# by bench/edge/bench.mjs exactly as the route build itself. It answers "how small and
# how fast to start could the route build be if its topology came in some other form
# (a binary one) and nothing else changed": issue 24's targets are checked against it in
# bench/targets-not-met.md.
#
#   bench/edge/floor.sh          (after bindings-wasm/build.sh and npm ci in bindings-wasm)
#
# Works on a fresh clone of HEAD (committed work only) in a temporary directory, removed
# at the end; shares this checkout's target/ (so std is not built again) and
# bindings-wasm/node_modules. Its build replaces target/wasm's copies of the route and
# full .wasm; this checkout's next bindings-wasm/build.sh puts its own back. Writes
# target/bench/wasm-edge-floor.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [ ! -d "$root/bindings-wasm/node_modules" ]; then
  echo "floor.sh: needs bindings-wasm's npm dependencies (make setup)" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/clone"
git -C "$work/clone" apply "$here/floor.patch"
mkdir -p "$root/target"
ln -s "$root/target" "$work/clone/target"
ln -s "$root/bindings-wasm/node_modules" "$work/clone/bindings-wasm/node_modules"
(cd "$work/clone" && EDGE_BUILDS=route BATCH_RUNS=0 node bench/edge/bench.mjs >/dev/null)
mv "$root/target/bench/wasm-edge-partial.md" "$root/target/bench/wasm-edge-floor.md"
cat "$root/target/bench/wasm-edge-floor.md"
