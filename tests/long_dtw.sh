#!/usr/bin/env bash
# Distances beyond the DTW byte through every interface (docs/FORMAT.md §8.4): a russian 2..3 set
# with one synthetic listed win in 301 plies (tests/long_table.h) probed by dtbprobe (text and
# JSON), the HTTP server and the Python package; and a set built with --dtw-byte-max 5, whose
# long lists hold most distances, checked by dtbgen --check and equal to the plain set by
# manifest digest and by dtbprobe's answers.
#
# Usage: long_dtw.sh DTBGEN DTBPROBE MAKE_LONG_TABLE LIBDTB|- PYTHONPATH   (ctest passes them;
#        - leaves Python out)
set -u
# python3 is the one ctest names (DTB_PYTHON, the system's): a pyenv shim first on PATH
# costs 0.4 s a start, and these checks start it many times.
python3() { command "${DTB_PYTHON:-python3}" "$@"; }
dtbgen=$1 dtbprobe=$2 make_long=$3 libdtb=$4 pypath=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_long.XXXXXX") || exit 1
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "long_dtw: $*" >&2; exit 1; }

"$dtbgen" --variant russian --pieces 3 --out "$work/plain" --threads 2 --quiet || fail "dtbgen"
"$dtbgen" --variant russian --pieces 3 --out "$work/low" --threads 2 --quiet --dtw-byte-max 5 ||
  fail "dtbgen --dtw-byte-max 5"

# the lowered set: checked from its long lists, and the plain set's meaning
"$dtbgen" --check "$work/low" --variant russian --threads 2 --quiet >"$work/check" ||
  fail "dtbgen --check of the listed set: $(tail -1 "$work/check")"
grep -q ", 0 mismatches" "$work/check" || fail "check: $(tail -1 "$work/check")"
"$dtbgen" --manifest "$work/plain" --variant russian | sed "s#$work/plain##" >"$work/m1"
"$dtbgen" --manifest "$work/low" --variant russian | sed "s#$work/low##" >"$work/m2"
[ -s "$work/m1" ] && cmp -s "$work/m1" "$work/m2" || fail "digests differ: $(diff "$work/m1" "$work/m2" | head -3)"
fens="W:WK1,K2:BK30
B:WK1,K2:BK30
W:WK5,13:BK32
W:W22,K4:BK18
B:W22:BK1,K3"
a=$(printf '%s\n' "$fens" | "$dtbprobe" --tables "$work/plain" --variant russian --json) || fail "dtbprobe plain"
b=$(printf '%s\n' "$fens" | "$dtbprobe" --tables "$work/low" --variant russian --json) || fail "dtbprobe low"
[ "$a" = "$b" ] || fail "dtbprobe answers differ between the plain and the listed set"

# the synthetic win in 301 plies, in a set whose DTW tables store every value (a losses-only
# table lists no win, and its wins are answered through the .wld, which the synthetic set has not)
"$dtbgen" --variant russian --pieces 3 --out "$work/full" --threads 2 --quiet --dtw-store full ||
  fail "dtbgen --dtw-store full"
mkdir -p "$work/synth/russian" && cp "$work/full/russian/"*.dtw "$work/synth/russian/" || fail "copy"
fen=$("$make_long" "$work/full" "$work/synth" russian KKvK 301) || fail "dtb_make_long_table"
json=$("$dtbprobe" --tables "$work/synth" --variant russian --json "$fen") || fail "dtbprobe --json $fen"
grep -q '"dtw": *301' <<<"$json" && grep -q '"wdl": *"win"' <<<"$json" ||
  fail "dtbprobe --json does not say win in 301: $json"
"$dtbprobe" --tables "$work/synth" --variant russian "$fen" | grep -q "301" ||
  fail "dtbprobe's text does not say 301"

if [ "$libdtb" = - ]; then # the sanitizer tree (tests/CMakeLists.txt); the Release tree runs it
  echo "long_dtw: Python left out of this build tree"
else
  PYTHONPATH=$pypath DTB_LIBRARY=$libdtb python3 - "$work/synth" "$fen" <<'PY' || fail "python"
import sys
import dtb
tb = dtb.open_tablebase(sys.argv[1], variant="russian")
got = tb.probe_dtw(sys.argv[2])
assert tuple(got) == (1, 301), got  # (win, plies)
PY
fi

"$dtbprobe" serve --tables "$work/synth" --port 0 >"$work/url" 2>"$work/serve.err" &
server=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(head -1 "$work/url")
[ -n "$url" ] || fail "the server did not start: $(cat "$work/serve.err")"
enc=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$fen")
answer=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
         "${url}api/russian?fen=$enc") || fail "GET /api/russian"
grep -q '"dtw": *301' <<<"$answer" || fail "the server does not say 301: $answer"
echo "long_dtw: listed set = plain set (check, digests, answers); a win in 301 plies through dtbprobe, Python and HTTP"
