#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.c, or the NAMEs given: fuzz_NAME) with clang in
# build/fuzz and runs each for SECONDS (default 60) on a fresh copy of its seed corpus
# (tests/fuzz/corpus_NAME/), with its dictionary (tests/fuzz/NAME.dict) when there is one. Prints
# one summary line per target and exits 1 when any target crashed (crash input under
# build/fuzz/artifacts/, log under build/fuzz/logs/), 2 on a usage error. Installs clang and its
# libFuzzer runtime via apt when missing (normal builds do not need them, so setup.sh does not).
#
# usage: scripts/fuzz.sh [SECONDS [NAME...]]    e.g. scripts/fuzz.sh 120 tablefile
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
[ $# -gt 0 ] && shift
case "$seconds" in
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  ''|*[!0-9]*|0) echo "fuzz.sh: SECONDS must be a positive whole number" >&2; exit 2 ;;
esac

scripts/setup.sh

apt_install() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "fuzz.sh: installing $*" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Does clang link a libFuzzer program? (clang alone lacks the runtime on Debian 12: it is in
# libclang-rt-<major>-dev.)
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
links_fuzzer() {
  printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
    > "$probe_dir/probe.c"
  clang -fsanitize=fuzzer,address,undefined "$probe_dir/probe.c" -o "$probe_dir/probe" \
    >/dev/null 2>&1
}
command -v clang >/dev/null || apt_install clang
if ! links_fuzzer; then
  major=$(clang -dumpversion | cut -d. -f1)
  apt_install "libclang-rt-$major-dev"
  links_fuzzer || { echo "fuzz.sh: clang cannot link -fsanitize=fuzzer programs" >&2; exit 1; }
fi

build=build/fuzz
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 2 ] && jobs=2
# Optimised, but with asserts on (no NDEBUG) and symbols for readable crash reports.
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DDTB_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g" >/dev/null

targets=()
if [ $# -gt 0 ]; then
  for name in "$@"; do
    [ -f "tests/fuzz/fuzz_$name.c" ] || { echo "fuzz.sh: no target tests/fuzz/fuzz_$name.c" >&2; exit 2; }
    targets+=("fuzz_$name")
  done
else
  for src in tests/fuzz/fuzz_*.c; do
    targets+=("$(basename "$src" .c)")
  done
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >/dev/null

# UBSan reports are crashes too (by default it prints and goes on, unseen by libFuzzer).
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
mkdir -p "$build/logs" "$build/artifacts"
failed=0
for t in "${targets[@]}"; do
  seeds=tests/fuzz/corpus_${t#fuzz_}
  work=$build/corpus/$t
  rm -rf "$work"
  mkdir -p "$work"
  # Every file of the seed directory but its README is an input.
  [ -d "$seeds" ] && find "$seeds" -maxdepth 1 -type f ! -name 'README*' -exec cp {} "$work"/ \;
  seeds_n=$(find "$work" -type f | wc -l)
  args=(-max_total_time="$seconds" -timeout=25 -print_final_stats=1
        -artifact_prefix="$build/artifacts/$t-")
  dict=tests/fuzz/${t#fuzz_}.dict
  [ -f "$dict" ] && args+=(-dict="$dict")
  log=$build/logs/$t.log
  rc=0
  "$build/tests/fuzz/$t" "${args[@]}" "$work" >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' "$log" | tail -1)
  corpus_n=$(find "$work" -type f | wc -l)
  if [ "$rc" -eq 0 ]; then
    echo "$t: ok, ${runs:-?} runs in ${seconds} s, coverage ${cov:-?} edges, corpus $seeds_n -> $corpus_n inputs"
  else
    failed=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    echo "$t: FAILED (exit $rc); input ${artifact:-none written}; log $log"
  fi
done
exit $failed
