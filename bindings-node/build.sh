#!/usr/bin/env bash
# Builds the Node addon: `cargo build --release -p shardroute-node`, then copies the
# library to bindings-node/shardroute.node, where index.js loads it; and copies what the
# package shares with shardroute-wasm from bindings-js/: index.d.ts as it is, and
# shared.mjs as CommonJS (shared.js). Idempotent, and fast when nothing changed (cargo's
# own check; each copy happens only when it differs).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
cd "$root"

cargo build --release -p shardroute-node

# Copy then rename: a running process that loaded the old file keeps a valid mapping.
install_if_changed() {
  if ! cmp -s "$1" "$2"; then
    cp "$1" "$2.tmp"
    mv -f "$2.tmp" "$2"
  fi
}

target_dir="${CARGO_TARGET_DIR:-$root/target}"
install_if_changed "$target_dir/release/libshardroute_node.so" "$here/shardroute.node"
install_if_changed "$root/bindings-js/index.d.ts" "$here/index.d.ts"

# shared.mjs is written so that removing the `export ` that starts each public declaration
# makes it a script; module.exports then names those declarations. Anything else that
# would need a real module transform (an import, `export {`, `export default`) is refused.
shared="$root/bindings-js/shared.mjs"
if grep -En '^[[:space:]]*(import|export)\b' "$shared" | grep -Ev ':export (class|function|const) [A-Za-z_$]'; then
  echo "build.sh: $shared has an import or export that cannot be made CommonJS (above)" >&2
  exit 1
fi
names="$(sed -nE 's/^export (class|function|const) ([A-Za-z_$][A-Za-z0-9_$]*).*/\2/p' "$shared" | paste -sd, - | sed 's/,/, /g')"
{
  echo "'use strict';"
  echo "// Made by build.sh from bindings-js/shared.mjs (edit that file): the same code as CommonJS."
  sed -E 's/^export (class|function|const) /\1 /' "$shared"
  echo "module.exports = { $names };"
} > "$here/shared.js.new"
install_if_changed "$here/shared.js.new" "$here/shared.js"
rm -f "$here/shared.js.new"
