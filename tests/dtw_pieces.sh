#!/usr/bin/env bash
# dtbgen --dtw-pieces N (issue #42, Kingsrow's choice): DTW tables only up to N pieces, WLD only
# above, and WLD files byte for byte those of the full set, however the build gets there: in
# one run, resumed after the WLD-only tables were written (they are read back with stand-in
# distances, gen/solved.h), and resumed reading finished tables from their files; --check checks
# every table (test_build's test_dtw_pieces has the mutation). Then the plan:
# --list projects table bytes within 15% of what the full set holds, the smaller plan's DTW
# bytes are those of the piece counts it keeps, and a complete set has nothing left to write.
#
# Usage: dtw_pieces.sh PATH/TO/dtbgen
set -u
dtbgen=${1:?usage: dtw_pieces.sh PATH/TO/dtbgen}
work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_dtw_pieces.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() {
  echo "dtw_pieces: FAIL: $*" >&2
  exit 1
}
v=english
"$dtbgen" --variant $v --pieces 4 --out "$work/full" --threads 2 --quiet || fail "full build"
"$dtbgen" --variant $v --pieces 4 --dtw-pieces 3 --out "$work/kr" --threads 2 --quiet ||
  fail "--dtw-pieces build"
same_wld() { # when
  local n=0 f
  for f in "$work/full/$v"/*.wld; do
    cmp -s "$f" "$work/kr/$v/${f##*/}" || n=$((n + 1))
  done
  [ "$n" -eq 0 ] || fail "$1: $n WLD files differ from the full set's"
}
same_wld "one run"
[ "$(ls "$work/kr/$v"/*.dtw | wc -l)" -eq 16 ] || fail "not exactly the 16 DTW tables of 2..3 pieces"
[ "$(ls "$work/kr/$v"/*.wld | wc -l)" -eq 41 ] || fail "not the 41 WLD tables of 2..4 pieces"
for mode in "" --from-files; do
  # The 4-piece tables whose men lead to the others: removed, solved again from WLD-only ones.
  for m in KKMvK KvKKM KMMvK KvKMM MMMvM MvMMM MMvMM; do rm -f "$work/kr/$v/$m".*; done
  "$dtbgen" --variant $v --pieces 4 --dtw-pieces 3 --out "$work/kr" --threads 2 --quiet $mode ||
    fail "resumed build $mode"
  same_wld "resumed $mode"
  [ ! -e "$work/kr/$v/KKMvK.dtw" ] || fail "resumed $mode: a DTW table above 3 pieces"
done

# --check re-derives the DTW tables, and the WLD-only ones by their results.
out=$("$dtbgen" --check "$work/kr" --variant $v --threads 2 2>&1) || fail "--check exits $?: $out"
grep -q '^checked 41 tables, [0-9]* positions, 0 mismatches' <<<"$out" ||
  fail "--check did not check the 41 tables: $out"
grep -q 'check KKMvK (WLD only: results)' <<<"$out" || fail "--check: KKMvK not checked by results"

# The plan: the projection of an empty directory against the full set's bytes (2..4 measured,
# so this checks the wiring; MEASUREMENTS.md checks the extrapolation).
json() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
plan=$("$dtbgen" --list --variant $v --pieces 4 --json) || fail "--list exits $?"
projected=$(json table_file_bytes <<<"$plan")
actual=$(cat "$work/full/$v"/*.wld "$work/full/$v"/*.dtw | wc -c)
[ -n "$projected" ] && [ $((projected * 100)) -ge $((actual * 85)) ] &&
  [ $((projected * 100)) -le $((actual * 115)) ] ||
  fail "projected $projected bytes of table files, the set holds $actual"
small=$("$dtbgen" --list --variant $v --pieces 4 --dtw-pieces 3 --json) || fail "--list --dtw-pieces"
wld=$(json wld_bytes <<<"$small")
dtw=$(json dtw_bytes <<<"$small")
full_wld=$(json wld_bytes <<<"$plan")
dtw23=$(cat "$work/kr/$v"/*.dtw | wc -c)
[ "$wld" = "$full_wld" ] || fail "--dtw-pieces 3 projects $wld WLD bytes, the full plan $full_wld"
[ $((dtw * 100)) -ge $((dtw23 * 85)) ] && [ $((dtw * 100)) -le $((dtw23 * 115)) ] ||
  fail "--dtw-pieces 3 projects $dtw DTW bytes, its 2..3-piece DTW tables hold $dtw23"
done_plan=$("$dtbgen" --list --variant $v --pieces 4 --out "$work/full" --json) ||
  fail "--list of a complete set exits $?"
[ "$(json table_file_bytes <<<"$done_plan")" = 0 ] || fail "a complete set projects table files"
echo "dtw_pieces: ok (projected $projected bytes of table files, the set holds $actual)"
