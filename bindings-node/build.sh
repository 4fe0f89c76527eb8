#!/usr/bin/env bash
# Builds the Node addon: `cargo build --release -p shardroute-node`, then copies the
# library to bindings-node/shardroute.node, where index.js loads it. Idempotent, and
# fast when nothing changed (cargo's own check; the copy happens only when it differs).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
cd "$root"

cargo build --release -p shardroute-node

target_dir="${CARGO_TARGET_DIR:-$root/target}"
library="$target_dir/release/libshardroute_node.so"
addon="$here/shardroute.node"
if ! cmp -s "$library" "$addon"; then
  # Copy then rename: a running process that loaded the old file keeps a valid mapping.
  cp "$library" "$addon.tmp"
  mv -f "$addon.tmp" "$addon"
fi
