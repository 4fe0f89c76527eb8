#!/usr/bin/env bash
# Installs whatever is missing to build and test every part of shardroute on a fresh
# Debian (bookworm) machine with rustup, Python 3 and Node.js. Idempotent: each step
# checks before it installs, so a second run takes a few seconds.
#
#   apt     g++                                      libFuzzer's C++ source (fuzz/, built by
#                                                    libfuzzer-sys)
#           rustc-web cargo-web rust-web-src lld-22  Debian's Rust 1.96 with the wasm32 std
#                                                    sources (rustup here has only the host target)
#           rust-web-llvm                            /usr/bin/rust-lld, the linker rustc-web's
#                                                    wasm32 target calls (only a Recommends of
#                                                    rustc-web, which --no-install-recommends skips)
#           binaryen                                 wasm-opt, the WASM package's size optimizer
#           chromium                                 the headless browser runner
#           postgresql etcd-server                   examples/postgres-messages: the shards and the
#                                                    topology store
#   cargo   wasm-bindgen-cli, exactly the wasm-bindgen version in Cargo.lock
#           cargo-fuzz 0.13.2, exactly: the fuzz targets of fuzz/ (scripts/fuzz.sh; it runs
#           on stable with RUSTC_BOOTSTRAP=1; libfuzzer-sys builds libFuzzer with g++)
#   pip     bindings-py/requirements-dev.txt into .venv (maturin, pytest, mypy, hypothesis), and
#           conformance/requirements-dev.txt (jsonschema, for the dictionary schema test),
#           conformance/requirements-oracles.txt (the real client libraries the profiles match),
#           examples/postgres-messages/requirements.txt (psycopg 3, the example's Python service)
#   npm     also conformance/oracles (npm clients: cluster-key-slot, kafkajs, cassandra-driver, hashring)
#   npm     bindings-node and bindings-wasm devDependencies (npm ci), examples/redis-cluster
#           (its Node service: shardroute linked from bindings-node, and ioredis) and
#           examples/postgres-messages (its Node service: shardroute linked, and pg)
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

say() { printf '[setup] %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# The oracles of the compatibility profiles (conformance/oracles): a real Redis
# server, libmemcached for the ketama harness, Tarantool for vshard's digest.crc32.
apt_packages=(g++ rustc-web cargo-web rust-web-src rust-web-llvm lld-22 binaryen chromium redis-server libmemcached-dev tarantool)
missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  as_root apt-get update -qq
  as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# wasm-bindgen's CLI must equal the wasm-bindgen crate version exactly.
wanted=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ -n "$wanted" ] && [ "$have" != "$wanted" ]; then
  say "cargo install wasm-bindgen-cli $wanted (a few minutes, once)"
  cargo install -q wasm-bindgen-cli --version "$wanted" --force
fi

# cargo-fuzz, pinned: `make fuzz-smoke` (part of `make test`) and `make fuzz`.
cargo_fuzz=0.13.2
if [ "$(cargo fuzz --version 2>/dev/null | awk '{print $2}')" != "$cargo_fuzz" ]; then
  say "cargo install cargo-fuzz $cargo_fuzz (a minute or two, once)"
  cargo install -q cargo-fuzz --version "$cargo_fuzz" --locked --force
fi

if [ ! -x .venv/bin/python ]; then
  say "python venv .venv"
  python3 -m venv .venv
fi
stamp=.venv/.requirements-dev.sha
requirements=(bindings-py/requirements-dev.txt conformance/requirements-dev.txt conformance/requirements-oracles.txt examples/postgres-messages/requirements.txt)
sum=$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
  say "pip install -r ${requirements[*]}"
  .venv/bin/pip install -q --disable-pip-version-check "${requirements[@]/#/-r}"
  echo "$sum" > "$stamp"
fi

for dir in bindings-node bindings-wasm conformance/oracles examples/redis-cluster examples/postgres-messages; do
  stamp="$dir/node_modules/.package-lock.sha"
  sum=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
    say "npm ci in $dir"
    (cd "$dir" && npm ci --silent --no-audit --no-fund)
    echo "$sum" > "$stamp"
  fi
done
say "ready"
