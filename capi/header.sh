#!/usr/bin/env bash
# Writes capi/include/shardroute.h from capi/src with cbindgen (capi/cbindgen.toml), with
# SHARDROUTE_VERSION set to the workspace version. `capi/header.sh --check` writes it to a
# temporary file instead and fails unless the committed header is the same, byte for byte
# (`make test-c`).
set -euo pipefail
cd "$(dirname "$0")"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' ../Cargo.toml)
generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
cbindgen --quiet --config cbindgen.toml --crate shardroute-c --output "$generated"
sed -i "s/@VERSION@/$version/" "$generated"
if [ "${1:-}" = "--check" ]; then
  if ! cmp -s "$generated" include/shardroute.h; then
    diff -u include/shardroute.h "$generated" | head -40 || true
    echo "capi/include/shardroute.h is stale: run capi/header.sh and commit the result" >&2
    exit 1
  fi
  # Every function carries its doc comment (what it borrows, what the caller frees).
  undocumented=$(awk '/^[a-z].*[ *]sr_[a-z0-9_]+\(/ && previous != " */" { print $0 } { previous = $0 }' include/shardroute.h)
  if [ -n "$undocumented" ]; then
    echo "capi/include/shardroute.h: functions without a doc comment:" >&2
    echo "$undocumented" >&2
    exit 1
  fi
  echo "capi/include/shardroute.h: current, every function documented"
else
  cp "$generated" include/shardroute.h
  echo "wrote capi/include/shardroute.h"
fi
