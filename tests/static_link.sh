#!/usr/bin/env bash
# libdtb.a as an engine that ships one binary links it: installed beside libdtb.so, a program
# linked statically against it through `pkg-config --static --libs dtb` (with -static: no shared
# library at all) and through the CMake package's dtb::dtb_static (no libdtb.so in the binary's
# needs), each run on 2-piece tables from the installed dtbgen.
#
# usage: static_link.sh SOURCE_DIR BUILD_DIR CMAKE
set -euo pipefail
# python3 is the one ctest names (DTB_PYTHON, the system's): a pyenv shim first on PATH
# costs 0.4 s a start, and these checks start it many times.
python3() { command "${DTB_PYTHON:-python3}" "$@"; }
src=$1 build=$2 cmake=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "static_link: $*" >&2; exit 1; }
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
export OMP_WAIT_POLICY=passive

prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name dtb.pc)
libdir=$(dirname "$(dirname "$pc")")
[ -f "$libdir/libdtb.a" ] || fail "no libdtb.a installed beside libdtb.so"
"$prefix/bin/dtbgen" --variant international --pieces 2 --out "$tmp/tables" --quiet

cat >"$tmp/engine.c" <<'C'
#include <stdio.h>
#include <dtb.h>
int main(int argc, char **argv)
{
    const char *dirs[] = {argv[argc - 1]};
    dtb_options o = DTB_OPTIONS_INIT;
    o.paths = dirs, o.npaths = 1;
    dtb_db *db;
    dtb_position p;
    dtb_wdl w;
    int d;
    if (dtb_open(&o, &db) != DTB_OK ||
        dtb_position_from_fen(db, "W:WK46:BK5", &p, NULL, 0) != DTB_OK ||
        dtb_probe_dtw(db, &p, 0, &w, &d) != DTB_OK)
        return 1;
    printf("%s %d\n", w == DTB_DRAW ? "draw" : "decided", d);
    dtb_close(db);
    return 0;
}
C

# pkg-config, fully static: libdtb.a, libzstd.a and the C library's archives.
export PKG_CONFIG_PATH="$(dirname "$pc")"
libs=$(pkg-config --static --libs dtb) || fail "pkg-config --static --libs dtb failed"
grep -q -- '-lzstd' <<<"$libs" || fail "pkg-config --static gives no -lzstd: $libs"
"$cc" -std=c11 $(pkg-config --cflags dtb) "$tmp/engine.c" -static $libs -o "$tmp/engine_pc" ||
  fail "a program does not link statically with: -static $libs"
file "$tmp/engine_pc" | grep -q 'statically linked' || fail "not a static binary: $(file "$tmp/engine_pc")"
out=$("$tmp/engine_pc" "$tmp/tables") || fail "the static program failed: $out"
# the same answer as the installed dtbprobe (libdtb.so) gives
want=$("$prefix/bin/dtbprobe" --tables "$tmp/tables" --json W:WK46:BK5 |
       python3 -c 'import json, sys; a = json.load(sys.stdin); print(("draw" if a["wdl"] == "draw" else "decided"), a.get("dtw", 0))')
[ "$out" = "$want" ] || fail "the static program says '$out', dtbprobe '$want'"

# The CMake package: dtb::dtb_static.
mkdir "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(engine C)
find_package(dtb REQUIRED)
add_executable(engine engine.c)
target_link_libraries(engine PRIVATE dtb::dtb_static)
CM
cp "$tmp/engine.c" "$tmp/cm/"
"$cmake" -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  >/dev/null || fail "find_package(dtb) failed"
"$cmake" --build "$tmp/cm/build" >/dev/null || fail "dtb::dtb_static does not link"
if readelf -d "$tmp/cm/build/engine" | grep -q 'libdtb'; then
  fail "the dtb::dtb_static program needs libdtb.so"
fi
out=$("$tmp/cm/build/engine" "$tmp/tables") || fail "the dtb::dtb_static program failed: $out"
[ "$out" = "$want" ] || fail "the dtb::dtb_static program says '$out', dtbprobe '$want'"
echo "static_link: ok"
