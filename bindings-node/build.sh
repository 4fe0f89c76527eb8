#!/usr/bin/env bash
# Builds the Node addon: `cargo build --release -p shardroute-node`, then copies the
# library to bindings-node/shardroute.node, where index.js loads it; and copies what the
# package shares with shardroute-wasm from bindings-js/: index.d.ts, http.d.ts and etcd.d.ts
# as they are, and shared.mjs, http.mjs and etcd.mjs as CommonJS (shared.js, http.js, etcd.js). Idempotent, and fast
# when nothing changed (cargo's own check; each copy happens only when it differs).
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

# shared.mjs, http.mjs and etcd.mjs are written so that removing the `export ` that starts
# each public declaration makes them scripts; module.exports then names those declarations.
# http.mjs and etcd.mjs also import the package's main entry by name (`from
# 'shardroute-wasm'`, the way the WASM package ships it), which becomes
# `require('./index.js')`, and shared.mjs (`require('./shared.js')`); shared.mjs, which
# index.js requires, imports nothing. Anything else that would need a real module transform (another
# import, `export {`, `export default`) is refused.
to_commonjs() { # source target [the import line it may have, an ERE]
  local source="$1" target="$2" keep=':export (class|function|const) [A-Za-z_$]' names
  if [ -n "${3:-}" ]; then keep="$keep|:$3"; fi
  if grep -En '^[[:space:]]*(import|export)\b' "$source" | grep -Ev "$keep"; then
    echo "build.sh: $source has an import or export that cannot be made CommonJS (above)" >&2
    exit 1
  fi
  names="$(sed -nE 's/^export (class|function|const) ([A-Za-z_$][A-Za-z0-9_$]*).*/\2/p' "$source" | paste -sd, - | sed 's/,/, /g')"
  {
    echo "'use strict';"
    echo "// Made by build.sh from bindings-js/$(basename "$source") (edit that file): the same code as CommonJS."
    sed -E -e 's/^export (class|function|const) /\1 /' \
      -e "s/^import \{ ([A-Za-z_\$, ]+) \} from 'shardroute-wasm';\$/const { \1 } = require('.\/index.js');/" \
      -e "s/^import \{ ([A-Za-z_\$, ]+) \} from '\.\/shared\.mjs';\$/const { \1 } = require('.\/shared.js');/" "$source"
    echo "module.exports = { $names };"
  } > "$target.new"
  install_if_changed "$target.new" "$target"
  rm -f "$target.new"
}
to_commonjs "$root/bindings-js/shared.mjs" "$here/shared.js"
# http.mjs and etcd.mjs import the main entry by name and shared.mjs's source driver
# (`./shared.js` here).
to_commonjs "$root/bindings-js/http.mjs" "$here/http.js" "import \{ [A-Za-z_\$, ]+ \} from '(shardroute-wasm|\./shared\.mjs)';\$"
install_if_changed "$root/bindings-js/http.d.ts" "$here/http.d.ts"
to_commonjs "$root/bindings-js/etcd.mjs" "$here/etcd.js" "import \{ [A-Za-z_\$, ]+ \} from '(shardroute-wasm|\./shared\.mjs)';\$"
install_if_changed "$root/bindings-js/etcd.d.ts" "$here/etcd.d.ts"
