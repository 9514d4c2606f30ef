#!/usr/bin/env bash
# The solver's values against tables/MANIFEST (digests of a full international 2..5 run, see
# scripts/manifest.sh): every international table of 2..3 pieces, WLD, DTW, MTC and FMJD rule
# tables, generated afresh, must have its committed digest. The digests are of what the tables
# mean (header fields and values, gen/manifest.h), not of their compressed bytes, so another
# libzstd or compression setting passes; a change of the solver, the index or the value encoding fails until MANIFEST is
# regenerated on purpose (scripts/run.sh compares the whole 2..5 set). That the bytes themselves
# do not depend on threads or interruptions is tested by resume_test and test_build.
#
# Usage: manifest_test.sh PATH/TO/dtbgen PATH/TO/MANIFEST   (ctest passes both)
set -u
dtbgen=${1:?usage: manifest_test.sh PATH/TO/dtbgen PATH/TO/MANIFEST}
manifest=${2:?usage: manifest_test.sh PATH/TO/dtbgen PATH/TO/MANIFEST}
work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_manifest.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

"$dtbgen" --variant international --pieces 3 --out "$work" --threads 2 --quiet \
  --metrics wld,dtw,mtc,rules || {
  echo "manifest_test: dtbgen failed" >&2; exit 1; }
made=$("$dtbgen" --manifest "$work" --variant international --threads 2) || {
  echo "manifest_test: dtbgen --manifest failed" >&2; exit 1; }
count=$(grep -c . <<<"$made")
# Lines made here that MANIFEST does not hold: a table with another digest, or one not listed.
differ=$(awk 'NR == FNR { if (!/^#/ && NF == 2) want[$2] = $1; next }
              !($2 in want) { print $2 ": not in MANIFEST"; next }
              want[$2] != $1 { print $2 ": digest " $1 ", MANIFEST has " want[$2] }' \
         "$manifest" - <<<"$made")
if [ "$count" -eq 0 ] || [ -n "$differ" ]; then
  echo "manifest_test: $count tables made; these differ from tables/MANIFEST:" >&2
  printf '%s\n' "$differ" >&2
  exit 1
fi
echo "manifest_test: $count tables match tables/MANIFEST"
