#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (docs/fuzzing.md) for SECONDS each, two at a time,
# and prints one line per target: seconds, executions, corpus entries, crashes.
#
#   scripts/fuzz.sh 30     the smoke run of `make test` (make fuzz-smoke)
#   scripts/fuzz.sh 600    the campaign (make fuzz)
#
# Toolchain: rustup's stable Rust, with RUSTC_BOOTSTRAP=1 because cargo-fuzz passes
# `-Zsanitizer=address` (stable's rust-std ships the AddressSanitizer runtime, so no
# nightly is needed). Built with `--debug-assertions`, so integer overflow panics too.
# Each target starts from its committed corpus fuzz/corpus/<target> and writes what it
# finds to target/fuzz/corpus/<target>, leaving the tree clean; a crash leaves its input
# in fuzz/artifacts/<target>/ and fails the script. Logs: target/fuzz/<target>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
export RUSTC_BOOTSTRAP=1
# The flags of every build and run: the smoke run and the campaign test the same binary.
export BUILD_FLAGS="--fuzz-dir fuzz --sanitizer address --debug-assertions"
# shellcheck disable=SC2086 # the flags are words
cargo fuzz build $BUILD_FLAGS
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list --fuzz-dir fuzz)
mkdir -p target/fuzz

run_one() {
  local target=$1 seconds=$2 work=target/fuzz/corpus/$1
  mkdir -p "$work" "fuzz/corpus/$target" "fuzz/artifacts/$target"
  # -timeout: an input slower than 10 s is a hang; -rss_limit_mb: 2 GB is an OOM.
  # -len_control=0: inputs of any length (up to 4 KiB or the largest seed) from the
  # start. The structured targets read every choice from their input, and libFuzzer's
  # slow ramp of the length kept the slowest one (apply, ~20 runs/s) at 6 bytes for a
  # whole 10-minute run: too few bytes for any edit.
  # shellcheck disable=SC2086
  if cargo fuzz run $BUILD_FLAGS "$target" "$work" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -len_control=0 -print_final_stats=1 \
    >"target/fuzz/$target.log" 2>&1; then
    echo ok >"target/fuzz/$target.status"
  else
    echo failed >"target/fuzz/$target.status"
  fi
}
export -f run_one
printf '%s\n' "${targets[@]}" | xargs -P 2 -I{} bash -c "run_one {} $seconds"

failed=0
printf '%-18s %8s %12s %12s %8s\n' target seconds executions corpus crashes
for target in "${targets[@]}"; do
  log=target/fuzz/$target.log
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1 || true)
  # The last status line: "#N DONE cov: C ft: F corp: entries/bytes ...".
  corpus=$(grep -o 'corp: [0-9]*/[0-9a-zA-Z]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  crashes=$(find "fuzz/artifacts/$target" -type f | wc -l)
  status=$(cat "target/fuzz/$target.status")
  printf '%-18s %8s %12s %12s %8s %s\n' "$target" "$seconds" "${execs:-?}" "$corpus" "$crashes" "$status"
  if [ "$status" != ok ] || [ "$crashes" != 0 ]; then
    failed=1
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" | head -5 >&2 || true
  fi
done
exit $failed
