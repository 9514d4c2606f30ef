#!/usr/bin/env bash
# Regenerates tables/MANIFEST: one line "<digest>  international/<file>" for each of the 340
# international 2..5 table files (.wld, .dtw, .mtc and the FMJD rule tables .fmjd), the digest
# that `dtbgen --manifest` prints (gen/manifest.h):
# XXH64 of the header fields that say what a table means (variant, material, metric, index
# version, value encoding, positions, don't-care kind and count, flags) and of every value in
# index order, don't-care positions as 0; a DTW table as its losses view (its wins and draws as 0
# too), so --dtw-store full and losses give one digest. It does not see how the table was
# encoded: zstd's version and level, block size, tiling, packing, dictionary.
#
# When to regenerate: when the solver, the index or the value encoding changes a value (or one of
# those header fields) on purpose; the diff of MANIFEST then shows which tables changed, and that
# is the review. Never for a zstd upgrade or a compression setting: digests do not depend on
# them, so a digest that changes then is a bug to find, not a MANIFEST to refresh.
# scripts/run.sh and the manifest_test test compare tables with MANIFEST.
#
# usage: scripts/manifest.sh [DIR]
#   DIR: a complete international 2..5 set with MTC and rule tables (DIR/international/); without
#   it the set is built into a temporary directory first (dtbgen --pieces 5 --metrics
#   wld,dtw,mtc,rules, about ten minutes on 2 cores).
#   DTBGEN=path: the dtbgen to use (default: build/release's, built if missing).
#   THREADS=T: threads for building and digesting (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -le 1 ] || { echo "manifest.sh: one directory at most (see --help)" >&2; exit 2; }
threads=${THREADS:-$(nproc 2>/dev/null || echo 2)}
gen=${DTBGEN:-}
if [ -z "$gen" ]; then
  cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/release -j "$threads" --target dtbgen >/dev/null
  gen=build/release/gen/dtbgen
fi

work=
trap 'rm -f tables/MANIFEST.new; [ -z "$work" ] || rm -rf "$work"' EXIT
if [ $# -eq 1 ]; then
  dir=$1
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_manifest_set.XXXXXX")
  dir=$work
  echo "manifest.sh: building international 2..5 into $dir" >&2
  "$gen" --variant international --pieces 5 --out "$dir" --threads "$threads" --quiet \
    --metrics wld,dtw,mtc,rules
fi

# The set must be complete: a MANIFEST of part of it would pass a build that lost tables.
materials=$("$gen" --list --variant international --pieces 5 --json |
  sed -n 's/.*"count":\([0-9]*\).*/\1/p')
tables=$(ls "$dir"/international/*.{wld,dtw,mtc,fmjd} 2>/dev/null | wc -l)
if [ "$tables" -ne $((4 * materials)) ] || ls "$dir"/international/*.tmp >/dev/null 2>&1; then
  echo "manifest.sh: $dir/international holds $tables tables (or .tmp files), not the $((4 * materials)) of a complete 2..5 set with MTC and rule tables" >&2
  exit 1
fi

new=tables/MANIFEST.new
{
  echo "# Digests of every international 2..5 table, WLD, DTW, MTC and FMJD rule tables (dtbgen --manifest; gen/manifest.h): what each table means, not its zstd bytes."
  echo "# Regenerate with scripts/manifest.sh when the solver, index or value encoding changes values, never for zstd or compression settings."
  "$gen" --manifest "$dir" --variant international --threads "$threads"
} >"$new"
mv "$new" tables/MANIFEST
echo "manifest.sh: tables/MANIFEST: $(grep -vc '^#' tables/MANIFEST) tables" >&2
