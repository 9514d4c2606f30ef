#!/usr/bin/env bash
# The installed headers (dtb.h, dtb_status.h) compile without a warning as C11 (gcc, clang) and
# as C++11, C++17 and C++20 (g++, clang++) under -Wall -Wextra -pedantic-errors -Werror (no C99
# compound literal, no designated initializer in C++, no GNU extension), and the C++ example
# tests/engine_example.cpp, built with each, runs on 2..3-piece tables against libdtb.so.
#
# usage: cxx_header.sh SOURCE_DIR INCLUDE_DIR LIBDTB_SO DTBGEN
set -euo pipefail
src=$1 inc=$2 lib=$3 dtbgen=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "cxx_header: $*" >&2; exit 1; }
flags=(-Wall -Wextra -pedantic-errors -Werror -I"$inc")
export OMP_WAIT_POLICY=passive

for cxx in g++ clang++; do
  command -v "$cxx" >/dev/null || fail "$cxx not found (scripts/setup.sh installs it)"
done
"$dtbgen" --variant international --pieces 3 --out "$tmp/tables" --quiet

# C: the header alone, with its inline functions and initializers used.
cat >"$tmp/header.c" <<'C'
#include <dtb.h>
static dtb_options options = DTB_OPTIONS_INIT; /* a static object: a constant initializer */
int main(void)
{
    dtb_cache_stats st = DTB_CACHE_STATS_INIT;
    dtb_position p;
    dtb_position_clear(&p, DTB_SIDE_WHITE);
    return (int)dtb_position_put(&p, DTB_SIDE_BLACK, true, 5) + (int)(st.struct_size == 0) +
           (int)(options.struct_size == 0);
}
C
for cc in gcc clang; do
  "$cc" -std=c11 "${flags[@]}" -c "$tmp/header.c" -o "$tmp/header.o" ||
    fail "dtb.h does not compile cleanly as C11 with $cc"
done

for cxx in g++ clang++; do
  for std in c++11 c++17 c++20; do
    "$cxx" -std=$std "${flags[@]}" "$src/tests/engine_example.cpp" "$lib" \
      -Wl,-rpath,"$(dirname "$lib")" -o "$tmp/example" ||
      fail "tests/engine_example.cpp does not compile cleanly with $cxx -std=$std"
    out=$("$tmp/example" "$tmp/tables") || fail "the example ($cxx -std=$std) failed: $out"
    grep -q '^engine move 46-41 ranked [0-9]* of [0-9]*$' <<<"$out" || fail "no matched move: $out"
  done
done
echo "$out"
echo "cxx_header: ok"
