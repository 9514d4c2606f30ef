#!/usr/bin/env bash
# The C example of docs/ENGINES.md (the README points engine authors there), built the way an
# engine author builds it: install this build tree into a temporary prefix (cmake --install --prefix), take the ```c program and the ```cmake project
# from docs/ENGINES.md's "## Installing libdtb and a first program" section, compile the program with
# `cc $(pkg-config --cflags --libs dtb)` and again through find_package(dtb) + dtb::dtb, make the
# 2-piece international tables with the installed dtbgen, and check both programs' answers
# against tests/data/endgames.md (W:WK10:BK5 is a win in 3 plies) and the board geometry (the
# king on 10 has 10 moves). Also checks the error paths and that libdtb.so exports exactly the
# functions dtb.h declares.
#
# Sanitized build trees (DTB_SANITIZE=ON) hold a libdtb.so built with ASan + UBSan, whose runtime
# must be loaded first: there the example is compiled with the same -fsanitize flags (an engine
# linking a sanitized libdtb would do the same), so the test runs in both trees of
# scripts/test.sh. The compiler is the build tree's.
#
# usage: readme_example.sh SOURCE_DIR BUILD_DIR CMAKE_COMMAND
set -euo pipefail
src=$1 build=$2 cmake=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "readme_example: $*" >&2; exit 1; }

cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cc=$(cache_value CMAKE_C_COMPILER)
flags=()
case "$(cache_value DTB_SANITIZE)" in
  ON|on|TRUE|true|YES|yes|Y|1) flags=(-fsanitize=address,undefined -fno-omit-frame-pointer) ;;
esac
export OMP_WAIT_POLICY=passive

# 1. Install.
prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name dtb.pc)
[ -n "$pc" ] || fail "no dtb.pc installed"
libdir=$(dirname "$(dirname "$pc")")
for f in include/dtb.h bin/dtbgen bin/dtbprobe; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
[ -e "$libdir/cmake/dtb/dtbConfig.cmake" ] || fail "no CMake package installed"

# The shared library exports the functions declared in dtb.h and no other dtb_ symbol.
declared=$(grep -E '^[A-Za-z].*[ *]dtb_[a-z0-9_]+\(' "$prefix/include/dtb.h" |
           grep -vE '^(static|typedef)' | grep -oE 'dtb_[a-z0-9_]+\(' | tr -d '(' | sort)
exported=$(nm -D --defined-only "$libdir/libdtb.so" | awk '{print $3}' | grep '^dtb_' | sort)
[ -n "$declared" ] || fail "no functions found in dtb.h"
[ "$declared" = "$exported" ] ||
  fail "libdtb.so exports differ from dtb.h: $(diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' | tr '\n' ' ')"

# 2. ENGINES.md's program and CMake project (the first block of each kind in its section).
section() { # language: the first ```language block after "## Installing libdtb and a first program"
  awk -v lang="$1" '/^## /{in_s = ($0 == "## Installing libdtb and a first program")}
                    in_s && $0 == "```" lang {f = 1; next}
                    f && /^```$/ {exit}
                    f' "$src/docs/ENGINES.md"
}
section c >"$tmp/probe_example.c"
grep -q 'int main' "$tmp/probe_example.c" || fail "no \`\`\`c program in ENGINES.md's first-program section"
mkdir "$tmp/cm"
section cmake >"$tmp/cm/CMakeLists.txt"
grep -q 'dtb::dtb' "$tmp/cm/CMakeLists.txt" || fail "no \`\`\`cmake project in ENGINES.md's first-program section"
cp "$tmp/probe_example.c" "$tmp/cm/"

# 3a. pkg-config (this prefix only; the rpath finds libdtb.so outside the loader's path).
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --variable=prefix dtb)" = "$prefix" ] || fail "dtb.pc does not name the prefix"
# shellcheck disable=SC2046  # pkg-config's output is meant to be split into words
"$cc" -std=c11 -Wall -Wextra -Werror "${flags[@]}" "$tmp/probe_example.c" \
  $(pkg-config --cflags --libs dtb) -Wl,-rpath,"$libdir" -o "$tmp/ex_pkgconfig" ||
  fail "ENGINES.md's program does not compile with pkg-config"

# 3b. find_package(dtb).
"$cmake" -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="${flags[*]:-}" >"$tmp/cm.log" 2>&1 ||
  { cat "$tmp/cm.log" >&2; fail "ENGINES.md's CMake project does not configure"; }
grep -q "^dtb_DIR:PATH=$libdir/cmake/dtb\$" "$tmp/cm/build/CMakeCache.txt" ||
  fail "find_package(dtb) did not use the installed package"
"$cmake" --build "$tmp/cm/build" >"$tmp/cm.log" 2>&1 ||
  { cat "$tmp/cm.log" >&2; fail "ENGINES.md's CMake project does not build"; }

# 4. Run both on tables made by the installed dtbgen.
"$prefix/bin/dtbgen" --variant international --pieces 2 --out "$tmp/tables" --quiet
for ex in "$tmp/ex_pkgconfig" "$tmp/cm/build/probe_example"; do
  name=$(basename "$ex")
  out=$("$ex" "$tmp/tables" W:WK10:BK5) || fail "$name failed on W:WK10:BK5"
  [ "$(sed -n 1p <<<"$out")" = "international: win, dtw 3" ] ||
    fail "$name: expected 'international: win, dtw 3', got: $(sed -n 1p <<<"$out")"
  # King on 10: one step to 4 (5 is taken, nothing to capture), one to 15, eight squares to 46.
  [ "$(sed -n '2,$p' <<<"$out" | wc -l)" -eq 10 ] || fail "$name: expected 10 moves: $out"
  sed -n 2p <<<"$out" | grep -Eq '^ +[0-9]+-[0-9]+ +win +3$' ||
    fail "$name: the first move is not a win in 3: $out"

  # Every status is checked: a bad FEN, a missing directory, a missing table fail with a message.
  if err=$("$ex" "$tmp/tables" W:W10:BK5x 2>&1); then fail "$name accepted a bad FEN"; fi
  grep -q "stray" <<<"$err" || fail "$name: no reason for a bad FEN: $err"
  if err=$("$ex" "$tmp/none" W:WK10:BK5 2>&1); then fail "$name opened a missing directory"; fi
  grep -q "none" <<<"$err" || fail "$name: missing directory not named: $err"
  if err=$("$ex" "$tmp/tables" W:WK10,K20:BK5 2>&1); then fail "$name probed a missing table"; fi
  grep -q "KKvK" <<<"$err" || fail "$name: missing material not named: $err"
done
echo "readme_example: ok (pkg-config and find_package builds, $cc ${flags[*]:-})"
