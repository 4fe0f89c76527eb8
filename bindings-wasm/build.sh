#!/usr/bin/env bash
# Builds the npm package shardroute-wasm: the core + this shell for wasm32-unknown-unknown
# (Debian's rustc with -Z build-std, so std itself is built with panic=immediate-abort),
# then wasm-bindgen for browsers (pkg/web) and Node.js (pkg/node). Idempotent: cargo skips
# an up-to-date build and wasm-bindgen runs only when the .wasm or this script changed.
#
# Needs: Debian packages rustc-web cargo-web rust-web-src rust-web-llvm lld-22 binaryen, and
# `cargo install wasm-bindgen-cli --version 0.2.130` (the exact version of the crate).
# scripts/setup.sh installs them all.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$here"

# Debian's toolchain, in its own target dir so it and rustup's never invalidate each other.
export RUSTC="${SHARDROUTE_WASM_RUSTC:-/usr/bin/rustc}"
cargo="${SHARDROUTE_WASM_CARGO:-/usr/bin/cargo}"
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$root/target/wasm"
# Since Rust 1.91 immediate-abort is a panic strategy, not a std feature: a panic (there
# is none on any input, see the core's docs) is a bare `unreachable`, with no formatting code.
export RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort"

# `optimize_for_size`: std's size-optimized paths. The one that matters is sorting: the
# default driftsort/ipnsort instantiate ~1 KB of code per element type and comparator (the
# core sorts some 50 types); the small variants a few hundred bytes. Stable sorts give the
# same order; unstable ones become heapsort, so the core never lets an unstable sort order
# elements that compare equal but differ (every such sort key is a total order). Measured:
# 570 KB -> 475 KB raw, 208 KB -> 184 KB gzipped. The cost: building a ring of 160,000
# points takes ~1.6x as long (26 -> 43 ms, heapsort); routing is unchanged.
#
# SHARDROUTE_WASM_FEATURES (say `jump,redis_cluster,vbucket`): a slim package in place of
# the full one, with only the strategies named (the core's cargo features of the same
# names: every other `type` is refused as not built in), and the topology operations only
# when `operations` is named too (Cargo.toml). Each set has its own copy of the .wasm
# here, so switching back and forth re-runs neither wasm-opt nor wasm-bindgen for nothing.
wanted="${SHARDROUTE_WASM_FEATURES:-}"
features=()
variant=full
if [ -n "$wanted" ]; then
  if ! [[ "$wanted" =~ ^[a-z_]+(,[a-z_]+)*$ ]]; then
    echo "build.sh: SHARDROUTE_WASM_FEATURES is a comma-separated list of strategy types and operations, not '$wanted'" >&2
    exit 1
  fi
  list=()
  for name in ${wanted//,/ }; do
    if [ "$name" = operations ]; then list+=(operations); else list+=("shardroute/$name"); fi
  done
  features=(--no-default-features --features "$(IFS=,; echo "${list[*]}")")
  variant="slim-${wanted//,/-}"
fi
"$cargo" build --quiet --profile wasm-release --target wasm32-unknown-unknown -p shardroute-wasm \
  -Z build-std=std,panic_abort -Z build-std-features=optimize_for_size "${features[@]}"
built="$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-release/shardroute_wasm.wasm"
wasm="${built%.wasm}.$variant.wasm"
if ! cmp -s "$built" "$wasm"; then
  cp "$built" "$wasm.tmp"
  mv -f "$wasm.tmp" "$wasm"
fi

# Binaryen's size optimizer, before wasm-bindgen: Debian's binaryen (108) cannot read the
# `table.fill` of wasm-bindgen's externref glue, so it runs on rustc's output (features
# from its target_features section, which it keeps for wasm-bindgen). It takes ~20 KB
# (4%) off the raw size; the gzipped size stays within 0.3% (LLVM's opt-level "z" did
# the rest already).
wasm_opt="${WASM_OPT:-wasm-opt}"
if ! command -v "$wasm_opt" >/dev/null; then
  echo "build.sh: need wasm-opt (Debian package binaryen); run: scripts/setup.sh" >&2
  exit 1
fi
optimized="${wasm%.wasm}.opt.wasm"
if [ ! -f "$optimized" ] || [ "$wasm" -nt "$optimized" ] || [ "$here/build.sh" -nt "$optimized" ]; then
  "$wasm_opt" -Oz "$wasm" -o "$optimized"
fi
wasm="$optimized"

bindgen="${WASM_BINDGEN:-$(command -v wasm-bindgen || echo "$HOME/.cargo/bin/wasm-bindgen")}"
want="wasm-bindgen 0.2.130"
have="$("$bindgen" --version 2>/dev/null || true)"
if [ "$have" != "$want" ]; then
  echo "build.sh: need $want (found: ${have:-none}); run: cargo install wasm-bindgen-cli --version 0.2.130" >&2
  exit 1
fi

# Copy then rename, and only when the file differs (a running process keeps its copy).
install_if_changed() {
  if ! cmp -s "$1" "$2"; then
    cp "$1" "$2.tmp"
    mv -f "$2.tmp" "$2"
  fi
}

# Replaces the one occurrence of $2 in the generated glue $1 by $3, or fails: a new
# wasm-bindgen that writes it differently must be looked at, not silently shipped.
patch_glue() {
  local count
  count="$(grep -cF -- "$2" "$1" || true)"
  if [ "$count" != 1 ]; then
    echo "build.sh: expected one \`$2\` in $1, found $count" >&2
    exit 1
  fi
  FROM="$2" TO="$3" perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$1"
}

stamp="pkg/.stamp"
if ! { [ -f "$stamp" ] && [ "$stamp" -nt "$wasm" ] && [ "$stamp" -nt "$here/build.sh" ] && [ "$(cat "$stamp")" = "$variant" ]; }; then
  rm -rf pkg
  # `--out-name`: the input is the optimized copy, the outputs keep the crate's name.
  flags=(--no-typescript --remove-name-section --remove-producers-section --out-name shardroute_wasm)
  "$bindgen" --target web --out-dir pkg/web "${flags[@]}" "$wasm"
  "$bindgen" --target nodejs --out-dir pkg/node "${flags[@]}" "$wasm"
  # wasm-bindgen cannot give an exported class a JavaScript method: one line appended to each
  # glue installs the JavaScript fast paths of Router.route and Router.node
  # (`installFastPaths` in js/support.mjs, the snippet wasm-bindgen copied next to the glue).
  # Without that line the package is still whole, only slower.
  for target in node web; do
    glue="pkg/$target/shardroute_wasm.js"
    snippet=(pkg/"$target"/snippets/*/js/support.mjs)
    if [ "${#snippet[@]}" != 1 ] || [ ! -f "${snippet[0]}" ] || ! grep -Eq '^(export )?class Router \{' "$glue"; then
      echo "build.sh: $glue has no class Router or no single support.mjs snippet" >&2
      exit 1
    fi
    snippet="./${snippet[0]#pkg/"$target"/}"
    if [ "$target" = node ]; then
      printf '\nrequire(String.raw`%s`).installFastPaths(Router);\n' "$snippet" >> "$glue"
    else
      printf '\nimport { installFastPaths } from "%s";\ninstallFastPaths(Router);\n' "$snippet" >> "$glue"
    fi
  done
  # The .wasm ships once, in pkg/web: the nodejs glue reads that copy. The web glue's
  # default URL gets a `./`, the form webpack and Vite resolve as a file beside the glue
  # (and emit with the bundle) rather than as a package name.
  rm pkg/node/shardroute_wasm_bg.wasm
  patch_glue pkg/node/shardroute_wasm.js '${__dirname}/shardroute_wasm_bg.wasm' '${__dirname}/../web/shardroute_wasm_bg.wasm'
  patch_glue pkg/web/shardroute_wasm.js "new URL('shardroute_wasm_bg.wasm', import.meta.url)" \
    "new URL('./shardroute_wasm_bg.wasm', import.meta.url)"
  # The web glue is an ES module in a .js file: say so to Node-based bundlers and tools
  # (this package's own type is CommonJS, for the nodejs glue).
  echo '{"type": "module"}' > pkg/web/package.json
  echo "$variant" > "$stamp"
fi

# What the package shares with the Node addon, from bindings-js/: the code js/support.mjs
# imports (`./shared.mjs`, beside the snippet wasm-bindgen copied), index.d.ts, and the
# `./http` entry and its types (http.mjs imports the package's main entry by name, so each
# runtime's condition picks the entry that loads the module there).
for target in node web; do
  snippet=(pkg/"$target"/snippets/*/js/support.mjs)
  install_if_changed "$root/bindings-js/shared.mjs" "$(dirname "${snippet[0]}")/shared.mjs"
done
install_if_changed "$root/bindings-js/index.d.ts" "$here/index.d.ts"
install_if_changed "$root/bindings-js/http.mjs" "$here/http.mjs"
install_if_changed "$root/bindings-js/http.d.ts" "$here/http.d.ts"
