#!/usr/bin/env bash
# dtbgen --disk (docs/DESIGN.md §6): a disk too small for a pair's values in work files beside the
# table files makes the plan solve that pair in slices (its store is a fraction of its values),
# the build does so and writes tables that mean what an unconstrained build's mean (their
# tables/MANIFEST digests); a disk too small even so is refused, by --list's exit status and by
# the build, in one line naming --disk.
#
# Usage: disk_budget.sh PATH/TO/dtbgen PATH/TO/MANIFEST   (ctest passes both)
set -u
dtbgen=${1:?usage: disk_budget.sh PATH/TO/dtbgen PATH/TO/MANIFEST}
manifest=${2:?usage: disk_budget.sh PATH/TO/dtbgen PATH/TO/MANIFEST}
work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_disk.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() {
  echo "disk_budget: FAIL: $*" >&2
  exit 1
}
# International 2..4 with its values in work files (--work): 18 MB of them at the peak, 1.8 MB
# of table files projected. 5 MiB (0.005 GiB) leaves room for neither all tables' values nor the
# largest pair's, which slicing fits; 3 MiB fits nothing.
build=(--variant international --pieces 4 --threads 2 --work "$work/wk")
mkdir -p "$work/wk"
field() { # json, key
  python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"
}
plain=$("$dtbgen" --list "${build[@]}" --out "$work/plan" --json) || fail "--list without --disk exits $?"
[ "$(field "$plain" sliced_pairs)" = 0 ] || fail "without --disk the plan slices: $plain"
tight=$("$dtbgen" --list "${build[@]}" --disk 0.005 --out "$work/plan" --json) ||
  fail "--list --disk 0.005 exits $?: $tight"
sliced=$(field "$tight" sliced_pairs)
[ "$sliced" -gt 0 ] || fail "under --disk 0.005 no pair is sliced: $tight"
[ "$(field "$tight" fits)" = True ] || fail "under --disk 0.005 the plan does not fit: $tight"
[ "$(field "$tight" disk_needed)" -le "$(field "$tight" disk_free)" ] ||
  fail "under --disk 0.005 the plan needs more than allowed: $tight"
[ "$(field "$tight" work_file_bytes)" -lt "$(field "$plain" work_file_bytes)" ] ||
  fail "slicing did not shrink the work files: $plain / $tight"
err=$("$dtbgen" --list "${build[@]}" --disk 0.003 --out "$work/plan" 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] || fail "--list --disk 0.003 exits $rc, not 1"
grep -q "GiB are allowed" <<<"$err" || fail "--list --disk 0.003 does not say why: $err"

# The build under --disk 0.005: the sliced pairs' records name their store, the digests are
# MANIFEST's.
"$dtbgen" "${build[@]}" --disk 0.005 --out "$work/out" --quiet || fail "the build under --disk 0.005 exits $?"
stores=$(grep -l '"slice_store_bytes":[1-9]' "$work"/out/international/*.stats | wc -l)
[ "$stores" -gt 0 ] || fail "no table of the build under --disk 0.005 was solved in slices"
# The plan's store is a measurement (gen/diskplan.c): the largest store the build made is what it
# projected, within 15% (a store that compresses otherwise, say with capture positions kept,
# needs new figures there).
largest=$(sed -n 's/.*"slice_store_bytes":\([0-9]*\).*/\1/p' "$work"/out/international/*.stats | sort -n | tail -1)
planned=$(field "$tight" slice_store_bytes)
[ $((planned * 100)) -ge $((largest * 85)) ] && [ $((planned * 100)) -le $((largest * 115)) ] ||
  fail "the plan projects a store of $planned bytes at most, the build made one of $largest"
made=$("$dtbgen" --manifest "$work/out" --variant international --threads 2) || fail "--manifest exits $?"
[ "$(grep -c . <<<"$made")" -eq 82 ] || fail "the build wrote $(grep -c . <<<"$made") tables, not 82"
differ=$(awk 'NR == FNR { if (!/^#/ && NF == 2) want[$2] = $1; next }
              want[$2] != $1 { print $2 }' "$manifest" - <<<"$made")
[ -z "$differ" ] || fail "digests differ from tables/MANIFEST: $differ"

# Too little disk for the work files even in slices: one line, exit 1, no table written.
err=$("$dtbgen" "${build[@]}" --disk 0.0005 --out "$work/small" --quiet 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "the build under --disk 0.0005 exits $rc, not 1"
[ "$(grep -c . <<<"$err")" -eq 1 ] && grep -q -- "--disk" <<<"$err" ||
  fail "the build under --disk 0.0005 says: $err"
[ -z "$(ls -A "$work/small/international" 2>/dev/null)" ] || fail "the refused build wrote files"
echo "disk_budget: $sliced pairs sliced under --disk 0.005 ($stores tables with a store), 82 digests as MANIFEST's"
