#!/usr/bin/env bash
# Builds the Python binding if needed, then tests the installed package from the
# outside: pytest (conformance vectors, API, README example, demo), mypy --strict over
# the tests and the demo (against the committed stubs), and `mypy.stubtest` (the stubs
# against the compiled module). Exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
venv="${SHARDROUTE_VENV:-$root/.venv}"
"$here/build.sh"
cd "$here"
# SHARDROUTE_TIER=check (`make check`): everything but the tests that start live servers.
live=()
[ "${SHARDROUTE_TIER:-}" = check ] && live=(--ignore tests/test_redis.py --ignore tests/test_etcd.py --ignore tests/test_zookeeper.py)
"$venv/bin/python" -m pytest -p no:cacheprovider tests "${live[@]}"
"$venv/bin/python" -m mypy --no-incremental
"$venv/bin/python" -m mypy.stubtest shardroute
