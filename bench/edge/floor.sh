#!/usr/bin/env bash
# The floor of the route build (`shardroute-wasm/route`): the route build with the core's
# JSON document reader and writer cut off (bench/edge/floor.patch), measured beside the
# route build itself in one run of bench/edge/bench.mjs (EDGE_FLOOR: its cold-start
# worker, cold-workerd-route-floor.mjs, is started in turn with the route build's and the
# parts'). It answers "how small and how fast to start could the route build be if its
# topology came in some other form (a binary one) and nothing else changed": issue 24's
# targets are weighed against it in bench/targets-not-met.md.
#
#   bench/edge/floor.sh          (after make setup; builds bindings-wasm as it goes)
#
# Builds the floor on a fresh clone of HEAD (committed work only) in a temporary
# directory, removed at the end, with a target directory of its own that stays for the
# next run (target/floor: the first run builds std for it, some minutes). Never this
# checkout's target/wasm: cargo names a crate's output the same whatever its source, so a
# shared one can leave the floor's .wasm where this checkout's build.sh takes its own.
# Then this checkout's bindings-wasm/build.sh and the bench run here. Writes
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
mkdir -p "$root/target/floor"
ln -s "$root/target/floor" "$work/clone/target"
"$work/clone/bindings-wasm/build.sh"
"$root/bindings-wasm/build.sh"
# The floor's worker loads the route build's glue: the two builds export the same calls,
# so wasm-bindgen must have written the same glue for both.
if ! cmp -s "$work/clone/bindings-wasm/pkg-route/web/shardroute_route.js" "$root/bindings-wasm/pkg-route/web/shardroute_route.js"; then
  echo "floor.sh: the floor's glue differs from the route build's; cold-workerd-route-floor.mjs cannot load it" >&2
  exit 1
fi
mkdir -p "$root/target/bench/wasm-edge/floor"
cp "$work/clone/bindings-wasm/pkg-route/web/shardroute_route_bg.wasm" "$root/target/bench/wasm-edge/floor/"
(cd "$root" && EDGE_BUILDS=route EDGE_FLOOR=1 BATCH_RUNS=0 node bench/edge/bench.mjs >/dev/null)
mv "$root/target/bench/wasm-edge-partial.md" "$root/target/bench/wasm-edge-floor.md"
cat "$root/target/bench/wasm-edge-floor.md"
