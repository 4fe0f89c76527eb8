#!/usr/bin/env bash
# Runs the redis_cluster oracle tests: the Python one (which starts its own
# redis-server processes on reserved 127.0.0.1 ports in a temp dir and stops them by PID)
# and the Node one. Fails, never skips, when an oracle is missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$(dirname "$here")")"
command -v redis-server >/dev/null || { echo "redis_cluster.sh: needs redis-server: apt-get install -y redis-server" >&2; exit 1; }
timeout 600 "$root/.venv/bin/python" -m pytest -q "$here/test_redis_cluster.py"
cd "$here"
[[ -d node_modules/cluster-key-slot ]] || { echo "redis_cluster.sh: run npm install in conformance/oracles" >&2; exit 1; }
timeout 300 node --test redis_cluster.test.mjs
