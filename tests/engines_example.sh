#!/usr/bin/env bash
# docs/ENGINES.md's C example, compiled against this build's libdtb.so and probe/dtb.h, run on
# 2..3-piece international tables made by this build's dtbgen: it must rank the root moves and
# get cache-only hits in its toy search (the loader thread and dtb_warm at work).
#
# Sanitized build trees (DTB_SANITIZE=ON) hold a libdtb.so built with ASan + UBSan; the example
# is compiled with the same flags there, as readme_example.sh does.
#
# usage: engines_example.sh SOURCE_DIR LIBDTB_SO DTBGEN CC SANITIZE
set -euo pipefail
src=$1 lib=$2 dtbgen=$3 cc=$4 sanitize=${5:-OFF}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "engines_example: $*" >&2; exit 1; }
flags=()
case "$sanitize" in
  ON|on|TRUE|true|YES|yes|Y|1) flags=(-fsanitize=address,undefined -fno-omit-frame-pointer) ;;
esac
export OMP_WAIT_POLICY=passive

awk '$0 == "```c" {f = 1; next} f && /^```$/ {exit} f' "$src/docs/ENGINES.md" >"$tmp/engine_example.c"
grep -q 'int main' "$tmp/engine_example.c" || fail "no \`\`\`c program in docs/ENGINES.md"
"$cc" -std=c11 -Wall -Wextra -Werror "${flags[@]}" -I"$src/probe" -I"$src/core" \
  "$tmp/engine_example.c" "$lib" -Wl,-rpath,"$(dirname "$lib")" -o "$tmp/engine_example" ||
  fail "docs/ENGINES.md's program does not compile"

"$dtbgen" --variant international --pieces 3 --out "$tmp/tables" --quiet
out=$("$tmp/engine_example" "$tmp/tables" W:WK46,K47:BK5) || fail "the example failed: $out"
echo "$out"
grep -Eq '^best [0-9]+-[0-9]+: win in [0-9]+ plies$' <<<"$out" || fail "no root ranking: $out"
probes=$(sed -n 's/^search probes \([0-9]*\), hits \([0-9]*\),.*/\1/p' <<<"$out")
hits=$(sed -n 's/^search probes \([0-9]*\), hits \([0-9]*\),.*/\2/p' <<<"$out")
[ -n "$probes" ] && [ "$probes" -gt 0 ] || fail "no search probes: $out"
# every 2..3-piece block is warm (dtb_warm(db, 4)): every cache-only probe hits
[ "$hits" -eq "$probes" ] || fail "cache-only probes missed after dtb_warm: $out"
echo "engines_example: ok"
