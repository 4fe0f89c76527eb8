#!/usr/bin/env bash
# Installs whatever is missing to build and test every part of shardroute on a fresh
# Debian (bookworm) machine with rustup, Python 3 and Node.js. Idempotent: each step
# checks before it installs, so a second run takes a few seconds.
#
#   apt     every package of the table below (SYSTEM_PACKAGES)
#   cargo   wasm-bindgen-cli, exactly the wasm-bindgen version in Cargo.lock
#           cargo-fuzz 0.13.2, exactly: the fuzz targets of fuzz/ (scripts/fuzz.sh; it runs
#           on stable with RUSTC_BOOTSTRAP=1; libfuzzer-sys builds libFuzzer with g++)
#   dpkg    arm64 as a foreign architecture, so that `make test-dist` can `apt-get download`
#           Debian's arm64 CPython (unpacked under target/emulation, never installed)
#   pip     bindings-py/requirements-dev.txt into .venv (maturin, pytest, mypy, hypothesis),
#           scripts/requirements-dist.txt (ziglang, cargo-zigbuild, auditwheel: `make dist`'s cross builds), and
#           conformance/requirements-dev.txt (jsonschema, for the dictionary schema test),
#           conformance/requirements-oracles.txt (the real client libraries the profiles match),
#           examples/postgres-messages/requirements.txt (psycopg 3, the example's Python service)
#   npm     also conformance/oracles (npm clients: cluster-key-slot, kafkajs, cassandra-driver, hashring)
#   npm     bindings-node and bindings-wasm devDependencies (npm ci), examples/redis-cluster
#           (its Node service: shardroute linked from bindings-node, and ioredis) and
#           examples/postgres-messages (its Node service: shardroute linked, and pg),
#           examples/topology-distribution (its Node follower: shardroute linked),
#           examples/edge-routing-tier (its edge worker: shardroute-wasm linked)
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

say() { printf '[setup] %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# The one table of the Debian packages setup installs. Columns: the package; the programs a
# test, example or benchmark starts from it (a bare name is looked up on PATH, a path is
# checked as it is; `-` where no test starts one); why the project needs it.
# docs/development.md's "System packages" says the same, and scripts/check-servers.py (run first by `make test`)
# fails early when a test starts a program that is in no row, or a row's program is missing.
SYSTEM_PACKAGES=$(cat <<'TABLE'
g++              | -                                                                     | libFuzzer's C++ source, built by libfuzzer-sys for the fuzz targets (fuzz/)
rustc-web        | /usr/bin/rustc                                                        | Debian's Rust with a wasm32 std (rustup here has only the host target): the WASM build, and the cross builds of `make dist` (std built from source for each target)
cargo-web        | /usr/bin/cargo                                                        | the cargo that goes with rustc-web
rust-web-src     | -                                                                     | the std sources that `-Z build-std` compiles for wasm32 and the cross targets
rust-web-llvm    | -                                                                     | /usr/bin/rust-lld, the linker rustc-web's wasm32 target calls
lld-22           | -                                                                     | the LLVM linker behind rust-lld
binaryen         | wasm-opt                                                              | wasm-opt, the WASM package's size optimizer
chromium         | chromium                                                              | the headless browser: the wasm-chromium conformance runner, the playground, browser benchmarks
redis-server     | redis-server,redis-cli                                                | Redis Cluster: the redis_cluster oracle, the Redis shells' tests, examples/redis-cluster
libmemcached-dev | -                                                                     | libmemcached, the ketama oracle's C harness links it
tarantool        | tarantool                                                             | Tarantool, the vshard oracle (digest.crc32)
postgresql       | /usr/lib/postgresql/15/bin/postgres,/usr/lib/postgresql/15/bin/initdb | PostgreSQL 15, the shards of examples/postgres-messages
etcd-server      | etcd                                                                  | etcd 3.4 (v3 JSON gateway): the tests of shardroute.etcd, shardroute/etcd and the CLI, examples/topology-distribution, and the topology store of examples/postgres-messages
openssl          | openssl                                                               | makes the throwaway CA and the server and client certificates of the TLS + auth etcd (scripts/etcd_secure.py) that the etcd tests of every binding and the CLI use
zookeeper        | java,/usr/share/java/zookeeper.jar                                    | ZooKeeper 3.8 and its JRE: the tests of shardroute.zookeeper, shardroute/zookeeper and the CLI, examples/topology-distribution
nftables         | nft                                                                   | nftables: examples/topology-distribution cuts a member off from its peers (rules by the members' user ids, as root)
gcc-aarch64-linux-gnu | aarch64-linux-gnu-gcc                                            | the linker of the Linux aarch64 (glibc) wheel and addon of `make dist` (scripts/platforms.py)
libc6-dev-arm64-cross | -                                                                | glibc 2.36 for arm64, what the aarch64 wheel and addon link against (only recommended by gcc-aarch64-linux-gnu)
qemu-user-static | qemu-aarch64-static                                                   | runs Debian's arm64 CPython and Node's arm64 build on the aarch64 packages of `make test-dist`, and the aarch64 musl runner of `make test-dist-full` (scripts/test-dist-emulated.py)
file             | file                                                                  | names each artifact's format and machine for scripts/check-artifacts.py
cbindgen         | cbindgen                                                              | generates the C ABI's header capi/include/shardroute.h (capi/build.sh; the freshness check of `make test-c`)
libjansson-dev   | -                                                                     | Jansson, the JSON reader of the C conformance runner (conformance/c/)
valgrind         | valgrind                                                              | runs the C conformance runner with leak and invalid-access checks (`make test-c`)
pkg-config       | pkg-config                                                            | finds libshardroute (target/capi/lib/pkgconfig/shardroute.pc) for the C runner, the example of docs/c.md and the C bench
openjdk-17-jdk-headless | javac,jar                                                        | the JDK that compiles the Java package and its conformance runner (bindings-java/test.sh)
libjna-java      | /usr/share/java/jna.jar                                               | JNA, through which the Java package (bindings-java/) calls libshardroute
golang-go        | go                                                                    | Go with cgo (standard library only): the Go package over libshardroute and its conformance runner (bindings-go/test.sh)
TABLE
)
mapfile -t apt_packages < <(cut -d'|' -f1 <<<"$SYSTEM_PACKAGES" | tr -d ' ')
missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
# arm64 as a foreign architecture: only so that `apt-get download` can fetch Debian's arm64
# CPython for `make test-dist` (scripts/test-dist-emulated.py unpacks it; nothing arm64 is installed).
update=false
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  say "dpkg --add-architecture arm64 (for apt-get download of Debian's arm64 CPython)"
  as_root dpkg --add-architecture arm64
  update=true
fi
if [ ${#missing[@]} -gt 0 ] || $update; then
  as_root apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
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
requirements=(bindings-py/requirements-dev.txt scripts/requirements-dist.txt conformance/requirements-dev.txt conformance/requirements-oracles.txt examples/postgres-messages/requirements.txt)
sum=$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
  say "pip install -r ${requirements[*]}"
  .venv/bin/pip install -q --disable-pip-version-check "${requirements[@]/#/-r}"
  echo "$sum" > "$stamp"
fi

for dir in bindings-node bindings-wasm conformance/oracles examples/redis-cluster examples/postgres-messages examples/topology-distribution examples/edge-routing-tier; do
  stamp="$dir/node_modules/.package-lock.sha"
  sum=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
    say "npm ci in $dir"
    (cd "$dir" && npm ci --silent --no-audit --no-fund)
    echo "$sum" > "$stamp"
  fi
done
say "ready"
