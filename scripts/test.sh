#!/usr/bin/env bash
# Builds and runs every test: a Release build (with MPI when it is installed: the mpi_* tests);
# the portable Release build a package ships (-DDTB_NATIVE=OFF: no AVX2, BMI2 or popcnt
# instructions, so the scalar code paths run; and -DDTB_MPI=OFF, the build without MPI), its
# tests of the code that -march changes compiled and run (label arch), among them
# same_tables, which checks that it writes the native build's tables byte for byte; then a
# Debug build with AddressSanitizer and UndefinedBehaviorSanitizer (without MPI).
# Usage: scripts/test.sh [--release-only]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

jobs=$(nproc 2>/dev/null || echo 2)
# Each step's wall and CPU time on stderr (the suite has a time budget: docs/MEASUREMENTS.md).
TIMEFORMAT="   %1R s wall, %1U s user + %1S s sys"
run() { # build dir, ctest options, build target ("" for all), cmake options...
  local dir=$1 select=$2 target=$3; shift 3
  # Ninja starts a target's compiles before the libraries it links are done (about 5 s less
  # per build here); a build directory keeps the generator it was first made with.
  local gen=()
  [ -f "$dir/CMakeCache.txt" ] || ! command -v ninja >/dev/null || gen=(-G Ninja)
  echo "  build $dir${target:+ (target $target)}:" >&2
  time {
    cmake -S . -B "$dir" "${gen[@]}" "$@" >/dev/null
    cmake --build "$dir" -j "$jobs" ${target:+--target "$target"} >/dev/null
  }
  echo "  tests of $dir:" >&2
  time (cd "$dir" && ctest --output-on-failure -j "$jobs" $select)
}

echo "== Release build" >&2
run build/release "" "" -DCMAKE_BUILD_TYPE=Release
if [ "${1:-}" != "--release-only" ]; then
  echo "== Portable Release build without MPI (-DDTB_NATIVE=OFF -DDTB_MPI=OFF), its tables against the native build's" >&2
  # Only what the arch tests run (target arch_tests): the rest compiles the same either way.
  run build/portable "-L arch" arch_tests -DCMAKE_BUILD_TYPE=Release -DDTB_NATIVE=OFF -DDTB_MPI=OFF \
    -DDTB_REFERENCE_DTBGEN="$PWD/build/release/gen/dtbgen"
  # Without MPI: its tests cannot run under LeakSanitizer (tests/CMakeLists.txt), so its code
  # need not be compiled there.
  echo "== Debug build with ASan + UBSan, without MPI" >&2
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run build/sanitize "" "" -DCMAKE_BUILD_TYPE=Debug -DDTB_SANITIZE=ON -DDTB_MPI=OFF
fi
