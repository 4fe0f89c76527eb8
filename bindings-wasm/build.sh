#!/usr/bin/env bash
# Builds the npm package shardroute-wasm: the core + this shell for wasm32-unknown-unknown
# (Debian's rustc with -Z build-std, so std itself is built with panic=immediate-abort),
# then wasm-bindgen for browsers (pkg/web) and Node.js (pkg/node). Idempotent: cargo skips
# an up-to-date build and wasm-bindgen runs only when the .wasm or this script changed.
#
# Needs: Debian packages rustc-web cargo-web rust-web-src lld-22, and
# `cargo install wasm-bindgen-cli --version 0.2.130` (the exact version of the crate).
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

"$cargo" build --quiet --profile wasm-release --target wasm32-unknown-unknown -p shardroute-wasm \
  -Z build-std=std,panic_abort
wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-release/shardroute_wasm.wasm"

bindgen="${WASM_BINDGEN:-$(command -v wasm-bindgen || echo "$HOME/.cargo/bin/wasm-bindgen")}"
want="wasm-bindgen 0.2.130"
have="$("$bindgen" --version 2>/dev/null || true)"
if [ "$have" != "$want" ]; then
  echo "build.sh: need $want (found: ${have:-none}); run: cargo install wasm-bindgen-cli --version 0.2.130" >&2
  exit 1
fi

stamp="pkg/.stamp"
if [ -f "$stamp" ] && [ "$stamp" -nt "$wasm" ] && [ "$stamp" -nt "$here/build.sh" ]; then
  exit 0
fi
rm -rf pkg
flags=(--no-typescript --remove-name-section --remove-producers-section)
"$bindgen" --target web --out-dir pkg/web "${flags[@]}" "$wasm"
"$bindgen" --target nodejs --out-dir pkg/node "${flags[@]}" "$wasm"
# The web glue is an ES module in a .js file: say so to Node-based bundlers and tools
# (this package's own type is CommonJS, for the nodejs glue).
echo '{"type": "module"}' > pkg/web/package.json
touch "$stamp"
