#!/usr/bin/env bash
# Installs each artifact of `make dist` the way a user would, on this machine, and routes
# one key with it: the wheel into a clean venv, the sdist into another (pip builds it from
# source with maturin and cargo), the command line's wheel into a third (its `shardroute`
# on the venv's PATH), the addon's and the WASM package's npm tarballs into scratch npm
# projects (the addon with the platform package npm picks for this machine). Every one
# must name the same node, and the Python and addon packages must carry both license
# texts. The other platforms' packages are scripts/check-artifacts.py's and
# scripts/test-dist-emulated.py's (`make test-dist` runs all three).
#
#   scripts/test-dist.sh [DIST]      (default: dist/)
#
# The sdist's Rust build goes to target/dist-sdist, kept between runs so that a second
# run compiles nothing (the build is still pip's, from the unpacked sdist).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dist="$(cd "${1:-$root/dist}" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

say() { printf '[test-dist] %s\n' "$*"; }
only() {
  local matches=("$dist"/$1)
  if [ ${#matches[@]} -ne 1 ] || [ ! -f "${matches[0]}" ]; then
    echo "test-dist: expected exactly one $1 in $dist, found: ${matches[*]}" >&2
    exit 1
  fi
  echo "${matches[0]}"
}
wheel="$(only 'shardroute-*-manylinux_*_x86_64.whl')"
cli_wheel="$(only 'shardroute_cli-*.whl')"
sdist="$(only 'shardroute-*.tar.gz')"
addon="$(only 'shardroute-[0-9]*.tgz')"
wasm="$(only 'shardroute-wasm-*.tgz')"

# The key and the document every artifact routes; the answer is the Rust core's.
document='{"format": "shardroute/1", "epoch": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}], "strategy": {"type": "rendezvous"}}'
printf '%s' "$document" > "$scratch/document.json"
expected="$(cd "$root" && cargo run -q -p shardroute-cli -- route "$scratch/document.json" user:42 | cut -f3)"
say "the core routes user:42 to $expected"

check() {  # check WHAT ANSWER
  if [ "$2" != "$expected" ]; then
    echo "test-dist: $1 routes user:42 to '$2', the core to '$expected'" >&2
    exit 1
  fi
  say "$1: user:42 -> $2"
}

python_route='
import json, sys, shardroute
router = shardroute.Router(json.loads(sys.argv[1]))
print(router.node("user:42"))
'
licenses_in_wheel='
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
missing = [n for n in ("LICENSE-MIT", "LICENSE-APACHE") if not any(p.endswith("licenses/" + n) for p in names)]
so = [p for p in names if p.endswith(".so")]
assert not missing, f"the wheel lacks {missing}"
assert len(so) == 1 and so[0].endswith(".abi3.so"), so
'

say "wheel $(basename "$wheel")"
python3 -m venv "$scratch/wheel"
"$scratch/wheel/bin/pip" install -q --disable-pip-version-check "$wheel"
"$scratch/wheel/bin/python" -c "$licenses_in_wheel" "$wheel"
check "wheel" "$("$scratch/wheel/bin/python" -c "$python_route" "$document")"

say "sdist $(basename "$sdist") (pip builds it from source)"
tar -tzf "$sdist" > "$scratch/sdist.list"
for license in LICENSE-MIT LICENSE-APACHE; do
  grep -qx "shardroute-[0-9.]*/$license" "$scratch/sdist.list" || { echo "test-dist: the sdist lacks $license" >&2; exit 1; }
done
python3 -m venv "$scratch/sdist"
CARGO_TARGET_DIR="$root/target/dist-sdist" "$scratch/sdist/bin/pip" install -q --disable-pip-version-check \
  --no-binary shardroute "$sdist"
check "sdist" "$("$scratch/sdist/bin/python" -c "$python_route" "$document")"

say "command-line wheel $(basename "$cli_wheel") (what pipx and uvx install)"
python3 -m venv "$scratch/cli"
"$scratch/cli/bin/pip" install -q --disable-pip-version-check "$cli_wheel"
"$scratch/cli/bin/python" -c '
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert any(n.endswith(".data/scripts/shardroute") for n in names), names
assert [n for n in names if n.endswith("licenses/LICENSE-MIT")] and [n for n in names if n.endswith("licenses/LICENSE-APACHE")], names
' "$cli_wheel"
check "shardroute-cli (pip)" "$("$scratch/cli/bin/shardroute" route "$scratch/document.json" user:42 | cut -f3)"

js_route='
const shardroute = require(process.argv[1]);
const router = new shardroute.Router(JSON.parse(process.argv[2]));
console.log(router.node("user:42"));
'
# The addon: `shardroute` carries no binary; npm installs the platform package that fits
# this machine (shardroute-linux-x64-gnu) from its optionalDependencies, each read from
# dist/ (scripts/platforms.py npm-project), and index.js loads it.
say "npm $(basename "$addon") (npm picks the platform package among its optionalDependencies)"
python3 "$root/scripts/platforms.py" npm-project "$scratch/npm-addon" "$dist"
installed="$(cd "$scratch/npm-addon/node_modules" && ls -d shardroute-*-* | paste -sd' ' -)"
[ "$installed" = "shardroute-linux-x64-gnu" ] || { echo "test-dist: npm installed the platform packages '$installed', not shardroute-linux-x64-gnu alone" >&2; exit 1; }
for name in shardroute shardroute-linux-x64-gnu; do
  for license in LICENSE-MIT LICENSE-APACHE; do
    [ -f "$scratch/npm-addon/node_modules/$name/$license" ] || { echo "test-dist: $name lacks $license" >&2; exit 1; }
  done
done
check "shardroute + $installed (npm)" "$(cd "$scratch/npm-addon" && node -e "$js_route" shardroute "$document")"
# Without its platform package (--omit=optional), require('shardroute') must say which package it needs.
rm -rf "$scratch/npm-addon/node_modules/shardroute-linux-x64-gnu"
message="$(cd "$scratch/npm-addon" && node -e "try { require('shardroute'); } catch (err) { console.log(err.message); }")"
[[ "$message" == *"the npm package shardroute-linux-x64-gnu is not installed"* ]] || {
  echo "test-dist: without its platform package, require('shardroute') said: '$message'" >&2; exit 1; }
say "shardroute without shardroute-linux-x64-gnu: the error names the package"

say "npm $(basename "$wasm")"
project="$scratch/npm-wasm"
mkdir -p "$project"
(cd "$project" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "$wasm")
check "shardroute-wasm (npm)" "$(cd "$project" && node -e "$js_route" shardroute-wasm "$document")"

for license in LICENSE-MIT LICENSE-APACHE; do
  [ -f "$project/node_modules/shardroute-wasm/$license" ] || { echo "test-dist: shardroute-wasm lacks $license" >&2; exit 1; }
done
say "5 passed, 0 failed"
