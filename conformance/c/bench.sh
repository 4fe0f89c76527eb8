#!/usr/bin/env bash
# The C ABI's bench (docs/c.md, "Performance"): single-key route from Rust (the core, and
# the ABI's entry point called from Rust) and from C through libshardroute.so, and the
# packed batch. Release builds; the C side is built with pkg-config as a user would.
set -euo pipefail
cd "$(dirname "$0")/../.."
capi/build.sh >/dev/null
export PKG_CONFIG_PATH="$PWD/target/capi/lib/pkgconfig"
mkdir -p target/capi/bin
cc -std=c11 -D_DEFAULT_SOURCE -O2 conformance/c/bench.c -o target/capi/bin/bench \
  $(pkg-config --cflags --libs shardroute) -Wl,-rpath,"$PWD/target/capi/lib"
cargo run -q --release -p shardroute-c --bin bench-route
target/capi/bin/bench
