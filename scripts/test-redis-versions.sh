#!/usr/bin/env bash
# The Redis Cluster clients (`shardroute.redis`) on the redis-py versions the package
# supports, installed the way users install them: the Python wheel is built once (as
# `make dist` builds it) and installed into two throwaway venvs under
# target/redis-versions/:
#
#   oldest   the wheel + the floor of the `redis` extra (bindings-py/pyproject.toml,
#            `redis[hiredis]>=X`) pinned, without hiredis: replies parsed in Python
#   newest   the wheel with its extra, unpinned (`shardroute-*.whl[redis]`, as a new user
#            gets it today): the newest redis-py, with hiredis
#
# In each, the live tests of the shells (bindings-py/tests/test_redis.py: a real Redis
# Cluster started by examples/redis-cluster/cluster.py; test_redis_pipeline.py: the asyncio
# auto-pipeline on that cluster; test_hostile_redis.py: fake
# hostile nodes) run with `-W error::UserWarning`: a warning redis-py prints on use (as
# 8.2 does for a synchronous retry object given to an asyncio client) is a failure.
# Prints one line per venv: redis-py and hiredis versions, tests passed.
#
#   scripts/test-redis-versions.sh
#
# SHARDROUTE_REDIS_NEWEST: the requirement of the newest venv instead of the extra's
# (e.g. 'redis[hiredis]==8.2.0' to reproduce a run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$root/target/redis-versions"
py="$root/.venv/bin/python"
say() { printf '[test-redis-versions] %s\n' "$*"; }

# The floor: the extra must be `redis[hiredis]>=X`.
floor="$("$py" - "$root/bindings-py/pyproject.toml" <<'EOF'
import re, sys, tomllib
extra = tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["redis"]
match = re.fullmatch(r"redis\[hiredis\]>=([0-9.]+)", extra[0]) if len(extra) == 1 else None
if not match:
    sys.exit(f"test-redis-versions: the redis extra is {extra}, not ['redis[hiredis]>=X']")
print(match.group(1))
EOF
)"
pytest_pin="$(grep -E '^pytest==' "$root/bindings-py/requirements-dev.txt")"

# The wheel, as `make dist` builds it (Makefile, target dist).
rm -rf "$work/wheel"
(cd "$root/bindings-py" && "$root/.venv/bin/maturin" build --release --quiet --out "$work/wheel")
wheels=("$work"/wheel/shardroute-*.whl)
[ ${#wheels[@]} -eq 1 ] || { echo "test-redis-versions: expected one wheel, found: ${wheels[*]}" >&2; exit 1; }
wheel="${wheels[0]}"

run() {  # run NAME HIREDIS(yes|no) REQUIREMENT...
  local name="$1" want_hiredis="$2" venv="$work/$1" log="$work/$1.log"
  shift 2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "$@" "$pytest_pin"
  local versions
  versions="$(cd "$work" && "$venv/bin/python" -c '
import sys, redis, redis.utils, shardroute
assert shardroute.__file__.startswith(sys.prefix), f"shardroute from {shardroute.__file__}, not the venv"
hiredis = "no"
if redis.utils.HIREDIS_AVAILABLE:
    import hiredis as h
    hiredis = h.__version__
print(f"redis-py {redis.__version__}, hiredis {hiredis}")
')"
  local has_hiredis=yes
  [[ "$versions" != *"hiredis no" ]] || has_hiredis=no
  [ "$has_hiredis" = "$want_hiredis" ] || {
    echo "test-redis-versions: $name has $versions; hiredis wanted: $want_hiredis" >&2; exit 1; }
  local status=0
  (cd "$root/bindings-py" && "$venv/bin/python" -m pytest -q -p no:cacheprovider -W error::UserWarning \
    tests/test_redis.py tests/test_hostile_redis.py tests/test_redis_pipeline.py) > "$log" 2>&1 || status=$?
  local summary
  summary="$(tail -n 1 "$log")"
  if [ "$status" -ne 0 ]; then
    cat "$log" >&2
    echo "test-redis-versions: $name ($versions): $summary" >&2
    exit 1
  fi
  say "$name: $versions, python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'): $(grep -oE '[0-9]+ passed' <<< "$summary"), 0 failed"
}

run oldest no "$wheel" "redis==$floor"
run newest yes "$wheel[redis]" ${SHARDROUTE_REDIS_NEWEST:+"$SHARDROUTE_REDIS_NEWEST"}
