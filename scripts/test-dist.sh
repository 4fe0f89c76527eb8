#!/usr/bin/env bash
# Installs each artifact of `make dist` the way a user would, on this machine, and routes
# one key with it: the wheel into a clean venv, the sdist into another (pip builds it from
# source with maturin and cargo), the command line's wheel into a third (its `shardroute`
# on the venv's PATH), the addon's and the WASM package's npm tarballs into scratch npm
# projects. Every one must name the same node, and the Python and addon
# packages must carry both license texts.
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
wheel="$(only 'shardroute-*.whl')"
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
for package in "$addon" "$wasm"; do
  say "npm $(basename "$package")"
  project="$scratch/npm-$(basename "$package" .tgz)"
  mkdir -p "$project"
  (cd "$project" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "$package")
  name="$(tar -xOzf "$package" package/package.json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).name))')"
  check "$name (npm)" "$(cd "$project" && node -e "$js_route" "$name" "$document")"
  for license in LICENSE-MIT LICENSE-APACHE; do
    [ -f "$project/node_modules/$name/$license" ] || { echo "test-dist: $name lacks $license" >&2; exit 1; }
  done
done
say "5 passed, 0 failed"
