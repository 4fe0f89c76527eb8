#!/usr/bin/env bash
# `make test-c`: libshardroute (capi/build.sh: release library, header, pkg-config file),
# the header's freshness, the C conformance runner over every vector (its count file
# target/conformance/c.json), the same runner under valgrind (leaks and invalid accesses
# are failures), the hostile-argument suite, and docs/c.md's example program built with
# pkg-config and run. SHARDROUTE_C_VALGRIND=0 skips the valgrind run.
set -euo pipefail
cd "$(dirname "$0")/../.."
capi/header.sh --check
capi/build.sh
export PKG_CONFIG_PATH="$PWD/target/capi/lib/pkgconfig"
bin=target/capi/bin
mkdir -p "$bin" target/conformance
CFLAGS=(-std=c11 -D_DEFAULT_SOURCE -O1 -g -Wall -Wextra -Werror -Wno-unused-parameter)
# The runner links the static library (no LD_LIBRARY_PATH needed under valgrind).
static=(target/capi/lib/libshardroute.a $(pkg-config --static --libs-only-l shardroute | sed 's/-lshardroute//'))
cc "${CFLAGS[@]}" $(pkg-config --cflags shardroute) conformance/c/runner.c conformance/c/sessions.c \
  -o "$bin/runner" "${static[@]}" -ljansson
cc "${CFLAGS[@]}" $(pkg-config --cflags shardroute) conformance/c/hostile.c -o "$bin/hostile" "${static[@]}"
"$bin/runner" conformance/vectors target/conformance/c.json
"$bin/hostile"
if [ "${SHARDROUTE_C_VALGRIND:-1}" != 0 ]; then
  valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible \
    "$bin/runner" conformance/vectors target/capi/c-valgrind.json
  valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
    "$bin/hostile"
  echo "valgrind: no leak, no invalid access (runner and hostile suite)"
fi
# docs/c.md's example, as a user builds it: the shared library through pkg-config.
sed -n '/^```c example/,/^```$/p' docs/c.md | sed '1d;$d' > "$bin/example.c"
cc "${CFLAGS[@]}" "$bin/example.c" -o "$bin/example" $(pkg-config --cflags --libs shardroute) \
  -Wl,-rpath,"$PWD/target/capi/lib"
"$bin/example" | tee "$bin/example.out"
diff <(sed -n '/^```text example-output/,/^```$/p' docs/c.md | sed '1d;$d') "$bin/example.out"
echo "docs/c.md example: output as documented"
