#!/usr/bin/env bash
# Builds the npm package shardroute-wasm: the core + this shell for wasm32-unknown-unknown
# (Debian's rustc with -Z build-std, so std itself is built with panic=immediate-abort),
# then wasm-bindgen for browsers (web/) and Node.js (node/), twice: the package's main
# build into pkg/, and the route build (`shardroute-wasm/route`) into pkg-route/.
# Idempotent: cargo skips an up-to-date build and wasm-opt and wasm-bindgen run only when
# the .wasm or this script changed.
#
# Needs: Debian packages rustc-web cargo-web rust-web-src rust-web-llvm lld-22 binaryen, and
# `cargo install wasm-bindgen-cli --version 0.2.130` (the exact version of the crate).
# scripts/setup.sh installs them all.
set -euo pipefail
# A failure inside `$(compile ...)` stops the script too (bash clears -e in a command
# substitution otherwise, and a failed build would bind the .wasm of the last good one).
shopt -s inherit_errexit

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
# SHARDROUTE_WASM_FEATURES (say `jump,redis_cluster,vbucket`): a slim package in pkg/ in
# place of the full one, with only the strategies named (the core's cargo features of the
# same names: every other `type` is refused as not built in, and none of its code is in
# the module; `redis_cluster` is in every build, see Cargo.toml), and the topology
# operations only when `operations` is named too (Cargo.toml). Each set has its own copy
# of the .wasm here, so switching back and forth re-runs neither wasm-opt nor wasm-bindgen
# for nothing.
#
# The route build (pkg-route/, `shardroute-wasm/route`, typed by route.d.ts) is built
# whatever pkg/ holds: the calls an edge routing tier makes (no `full-api`, no
# `operations`; src/lib.rs's "Crate features") over the strategies of
# SHARDROUTE_WASM_ROUTE_STRATEGIES (default below; the bench and the size budget are of the
# default).
strategy_list='^[a-z_]+(,[a-z_]+)*$'
wanted="${SHARDROUTE_WASM_FEATURES:-}"
features=()
variant=full
if [ -n "$wanted" ]; then
  if ! [[ "$wanted" =~ $strategy_list ]]; then
    echo "build.sh: SHARDROUTE_WASM_FEATURES is a comma-separated list of strategy types and operations, not '$wanted'" >&2
    exit 1
  fi
  list=(full-api)
  for name in ${wanted//,/ }; do
    if [ "$name" = operations ]; then list+=(operations); else list+=("shardroute/$name"); fi
  done
  features=(--no-default-features --features "$(IFS=,; echo "${list[*]}")")
  variant="slim-${wanted//,/-}"
fi

route_default=modulo,jump,vbucket,redis_cluster
route_strategies="${SHARDROUTE_WASM_ROUTE_STRATEGIES:-$route_default}"
if ! [[ "$route_strategies" =~ $strategy_list ]] || [[ ",$route_strategies," == *,operations,* ]]; then
  echo "build.sh: SHARDROUTE_WASM_ROUTE_STRATEGIES is a comma-separated list of strategy types, not '$route_strategies'" >&2
  exit 1
fi
route_list=()
for name in ${route_strategies//,/ }; do route_list+=("shardroute/$name"); done
route_features=(--no-default-features --features "$(IFS=,; echo "${route_list[*]}")")
route_variant=route
if [ "$route_strategies" != "$route_default" ]; then route_variant="route-${route_strategies//,/-}"; fi

wasm_opt="${WASM_OPT:-wasm-opt}"
if ! command -v "$wasm_opt" >/dev/null; then
  echo "build.sh: need wasm-opt (Debian package binaryen); run: scripts/setup.sh" >&2
  exit 1
fi
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

# Replaces the one occurrence of $2 in the file $1 by $3 (the $4 occurrences, each on a
# line of its own, when $4 is given), or fails: a new wasm-bindgen (or a shared file) that
# writes it differently must be looked at, not silently shipped.
patch_glue() {
  local count want="${4:-1}"
  count="$(grep -cF -- "$2" "$1" || true)"
  if [ "$count" != "$want" ]; then
    echo "build.sh: expected $want \`$2\` in $1, found $count" >&2
    exit 1
  fi
  FROM="$2" TO="$3" perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/g' "$1"
}

# compile VARIANT CARGO-ARGS...: rustc's .wasm of the variant (a copy per variant, kept
# beside cargo's output for bench/edge/wasm-sizes.mjs, which reads its `name` section),
# then Binaryen's size optimizer; prints the optimized file's path. cargo's
# `--artifact-dir` gives each build its own output, so two builds in a row (or two
# build.sh at once) never take each other's file.
#
# wasm-opt runs before wasm-bindgen: Debian's binaryen (108) cannot read the `table.fill`
# of wasm-bindgen's externref glue, so it runs on rustc's output (features from its
# target_features section, which it keeps for wasm-bindgen). It takes ~20 KB (4%) off
# the raw size of the full build; the gzipped size stays within 0.3% (LLVM's opt-level
# "z" did the rest already).
compile() {
  local variant="$1"
  shift
  local out="$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-release"
  "$cargo" build --quiet --profile wasm-release --target wasm32-unknown-unknown -p shardroute-wasm \
    -Z build-std=std,panic_abort -Z build-std-features=optimize_for_size \
    -Z unstable-options --artifact-dir "$out/variants/$variant" "$@" >&2
  local wasm="$out/shardroute_wasm.$variant.wasm"
  install_if_changed "$out/variants/$variant/shardroute_wasm.wasm" "$wasm"
  local optimized="${wasm%.wasm}.opt.wasm"
  if [ ! -f "$optimized" ] || [ "$wasm" -nt "$optimized" ] || [ "$here/build.sh" -nt "$optimized" ]; then
    "$wasm_opt" -Oz "$wasm" -o "$optimized" >&2
  fi
  echo "$optimized"
}

# bind OPTIMIZED DIR NAME VARIANT ENTRY [STRATEGIES]: wasm-bindgen into DIR/web and
# DIR/node, the modules named NAME (NAME.js, NAME_bg.wasm), unless DIR/.stamp says they are
# up to date. ENTRY is the package entry that loads them (its name in the web glue's
# error before `init`); STRATEGIES, the route build's (see `routeBuild` below).
bind() {
  local wasm="$1" dir="$2" name="$3" variant="$4" entry="$5" strategies="${6:-}"
  local stamp="$dir/.stamp"
  if [ -f "$stamp" ] && [ "$stamp" -nt "$wasm" ] && [ "$stamp" -nt "$here/build.sh" ] && [ "$(cat "$stamp")" = "$variant" ]; then
    return
  fi
  rm -rf "$dir"
  # `--out-name`: the input is the optimized copy, the outputs keep their names.
  local flags=(--no-typescript --remove-name-section --remove-producers-section --out-name "$name")
  "$bindgen" --target web --out-dir "$dir/web" "${flags[@]}" "$wasm"
  "$bindgen" --target nodejs --out-dir "$dir/node" "${flags[@]}" "$wasm"
  # The core's limits (`__limits()`, src/lib.rs), read from the module just built: the
  # nodejs glue instantiates it on load, with shared.mjs beside its snippet (copied again
  # below, with the other shared files). Written into both glues as the package's constants
  # MAX_DOCUMENT_BYTES and MAX_JSON_NESTING, so no file of the package holds its own copy:
  # wasm-bindgen exports no constants, and the web glue's module is not instantiated until
  # `init` (the constants are there before it, as the addon's are).
  local target glue snippet limits
  for target in node web; do
    snippet=("$dir/$target"/snippets/*/js/support.mjs)
    cp "$root/bindings-js/shared.mjs" "$(dirname "${snippet[0]}")/shared.mjs"
  done
  limits="$(node -e 'process.stdout.write(Array.from(require(process.argv[1]).__limits()).join(" "))' "$here/$dir/node/$name.js")"
  if ! [[ "$limits" =~ ^[0-9]+\ [0-9]+$ ]]; then
    echo "build.sh: cannot read the core's limits from $dir/node/$name.js (got '$limits')" >&2
    exit 1
  fi
  # wasm-bindgen cannot give an exported class a JavaScript method: one line appended to each
  # glue installs the JavaScript fast paths of Router.route and Router.node
  # (`installFastPaths` in js/support.mjs, the snippet wasm-bindgen copied next to the glue).
  # Without that line the package is still whole, only slower.
  for target in node web; do
    glue="$dir/$target/$name.js"
    snippet=("$dir/$target"/snippets/*/js/support.mjs)
    if [ "${#snippet[@]}" != 1 ] || [ ! -f "${snippet[0]}" ] || ! grep -Eq '^(export )?class Router \{' "$glue"; then
      echo "build.sh: $glue has no class Router or no single support.mjs snippet" >&2
      exit 1
    fi
    snippet="./${snippet[0]#"$dir/$target"/}"
    if [ "$target" = node ]; then
      printf '\nrequire(String.raw`%s`).installFastPaths(Router);\n' "$snippet" >> "$glue"
      patch_glue "$glue" 'exports.__limits = __limits;' ''
      printf '/** %s */\nexports.%s = %s;\n' \
        "The core's limit on a document's JSON text, in bytes (limits::MAX_DOCUMENT_BYTES)." MAX_DOCUMENT_BYTES "${limits% *}" \
        "The deepest nesting of arrays and objects in JSON text (limits::MAX_JSON_NESTING)." MAX_JSON_NESTING "${limits#* }" \
        >> "$glue"
    else
      printf '\nimport { installFastPaths, notLoaded } from "%s";\ninstallFastPaths(Router);\n' "$snippet" >> "$glue"
      # Until `init` or `initSync` loads the module, the glue's `wasm` (which every export
      # reads first) is `notLoaded`'s stand-in (js/support.mjs): a call before `init` throws
      # a ShardrouteError `not_initialized` that says to call it, not a TypeError about
      # `router_new`. The glue's "already loaded?" checks compare with the stand-in.
      local init_from="$entry"
      if [ "$entry" = shardroute-wasm ]; then init_from=shardroute-wasm/web; fi
      patch_glue "$glue" 'let wasmModule, wasmInstance, wasm;' \
        "const wasmNotLoaded = notLoaded('$entry', '$init_from');"$'\n''let wasmModule, wasmInstance, wasm = wasmNotLoaded;'
      patch_glue "$glue" 'if (wasm !== undefined) return wasm;' 'if (wasm !== wasmNotLoaded) return wasm;' 2
      patch_glue "$glue" 'export function __limits() {' 'function __limits() {'
      printf '/** %s */\nexport const %s = %s;\n' \
        "The core's limit on a document's JSON text, in bytes (limits::MAX_DOCUMENT_BYTES)." MAX_DOCUMENT_BYTES "${limits% *}" \
        "The deepest nesting of arrays and objects in JSON text (limits::MAX_JSON_NESTING)." MAX_JSON_NESTING "${limits#* }" \
        >> "$glue"
    fi
    # The route build's refusals of a strategy or source it leaves out name the package
    # that has it, and list what it has (`routeBuild` and `refusal` in js/support.mjs).
    if [ -n "$strategies" ]; then
      if [ "$target" = node ]; then
        printf 'require(String.raw`%s`).routeBuild('"'%s'"');\n' "$snippet" "${strategies//,/, }" >> "$glue"
      else
        printf 'import { routeBuild } from "%s";\nrouteBuild('"'%s'"');\n' "$snippet" "${strategies//,/, }" >> "$glue"
      fi
    fi
  done
  # The .wasm ships once, in DIR/web: the nodejs glue reads that copy. The web glue's
  # default URL gets a `./`, the form webpack and Vite resolve as a file beside the glue
  # (and emit with the bundle) rather than as a package name.
  rm "$dir/node/${name}_bg.wasm"
  patch_glue "$dir/node/$name.js" "\${__dirname}/${name}_bg.wasm" "\${__dirname}/../web/${name}_bg.wasm"
  patch_glue "$dir/web/$name.js" "new URL('${name}_bg.wasm', import.meta.url)" \
    "new URL('./${name}_bg.wasm', import.meta.url)"
  # The web glue is an ES module in a .js file: say so to Node-based bundlers and tools
  # (this package's own type is CommonJS, for the nodejs glue).
  echo '{"type": "module"}' > "$dir/web/package.json"
  echo "$variant" > "$stamp"
}

optimized="$(compile "$variant" "${features[@]}")"
bind "$optimized" pkg shardroute_wasm "$variant" shardroute-wasm
optimized="$(compile "$route_variant" "${route_features[@]}")"
bind "$optimized" pkg-route shardroute_route "$route_variant" shardroute-wasm/route "$route_strategies"
# The strategies built in, for the tests that pick the vectors the route build runs.
echo "$route_strategies" > pkg-route/.strategies
# The route build's one entry serves every runtime, Node's too (route.d.ts declares
# `init` and `initSync` for all of them): in Node, where the glue instantiates the module
# on load, both are no-ops, as in js/node.mjs.
node_glue=pkg-route/node/shardroute_route.js
if ! grep -q '^exports.initSync = ' "$node_glue"; then
  printf '%s\n' '' '/** Nothing to load: this glue instantiated the module when it was loaded. */' \
    'exports.init = async function init(_input) {};' 'exports.initSync = function initSync(_module) {};' >> "$node_glue"
fi

# What the package shares with the Node addon, from bindings-js/: the code js/support.mjs
# imports (`./shared.mjs`, beside the snippet wasm-bindgen copied), index.d.ts, and the
# `./http` entry and its types (http.mjs imports the package's main entry by name, so each
# runtime's condition picks the entry that loads the module there, and the source driver
# of `./shared.mjs`, the copy of bindings-js/shared.mjs beside it, which holds no import
# and nothing of Node's that an edge bundle would pull in). The `./route/http` entry is
# the same follower over the route build: http.mjs with its import of the main entry
# naming `shardroute-wasm/route`, its types those of route.d.ts.
for dir in pkg pkg-route; do
  for target in node web; do
    snippet=("$dir/$target"/snippets/*/js/support.mjs)
    install_if_changed "$root/bindings-js/shared.mjs" "$(dirname "${snippet[0]}")/shared.mjs"
  done
done
install_if_changed "$root/bindings-js/index.d.ts" "$here/index.d.ts"
install_if_changed "$root/bindings-js/http.mjs" "$here/http.mjs"
install_if_changed "$root/bindings-js/http.d.ts" "$here/http.d.ts"
# The `./etcd` entry: etcd.mjs as it is (it imports the main entry by name and
# `./shared.mjs`, as http.mjs does; its classes are the main entry's, never that copy's),
# and its types.
install_if_changed "$root/bindings-js/etcd.mjs" "$here/etcd.mjs"
install_if_changed "$root/bindings-js/etcd.d.ts" "$here/etcd.d.ts"
install_if_changed "$root/bindings-js/shared.mjs" "$here/shared.mjs"
for ext in mjs d.ts; do
  made="$here/route-http.$ext.made"
  cp "$root/bindings-js/http.$ext" "$made"
  if [ "$ext" = mjs ]; then
    patch_glue "$made" "from 'shardroute-wasm';" "from 'shardroute-wasm/route';"
  else
    patch_glue "$made" "from './index.js';" "from './route.js';"
  fi
  install_if_changed "$made" "$here/route-http.$ext"
  rm -f "$made"
done
