#!/usr/bin/env bash
# Builds the Python binding into the repository's venv (`.venv` at the repo root, or
# $SHARDROUTE_VENV): `maturin develop --release` compiles `shardroute._native` and
# installs the package in editable mode. Idempotent; with nothing changed it takes a few
# seconds. The venv and its dev dependencies come from scripts/setup.sh
# (`pip install -r bindings-py/requirements-dev.txt`).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
venv="${SHARDROUTE_VENV:-$root/.venv}"
if [[ ! -x "$venv/bin/maturin" ]]; then
    echo "bindings-py/build.sh: $venv has no maturin; run scripts/setup.sh or" >&2
    echo "  python3 -m venv $venv && $venv/bin/pip install -r bindings-py/requirements-dev.txt" >&2
    exit 1
fi
cd "$here"
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --release --quiet
