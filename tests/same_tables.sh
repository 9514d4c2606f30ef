#!/usr/bin/env bash
# Two builds write the same tables, byte for byte: this tree's dtbgen against another build's
# (DTB_REFERENCE_DTBGEN; scripts/test.sh passes the native Release build's to the portable tree).
# International MMvMM and what it needs (10x10, flying kings: 25 tables of 2..4 pieces, men and
# kings on both sides), english 2..4 (8x8, other board code paths: half rows of 4, men that do
# not capture backward) and english's compact set with threat positions (the writer's capture
# test of probe/format/capturetest.h and the threat rule); at zstd level 1, as the code that
# -march changes comes before the compression.
#
# What differs between a portable (-DDTB_NATIVE=OFF) and a native build: without -march=native
# there is no AVX2 (probe/format/capturetest.h tests captures with one shift per direction
# instead of four lanes at once; gen/solved.c mirrors positions a set at a time, core/position.h's
# dtb_mirror4 is left out), no BMI2 (capturetest.h spreads a set over its padded layout with
# shifts instead of pdep) and no popcnt instruction (__builtin_popcountll in core/index.h and
# core/movegen.c becomes a library routine). core/index.c picks its code at run time by the CPU,
# so on this machine even a portable build runs its popcnt+BMI2 variant; this tree's dtbgen runs
# with DTB_INDEX_PORTABLE=1, which makes it take the baseline ranking and unranking instead.
#
# Usage: same_tables.sh PATH/TO/dtbgen PATH/TO/reference/dtbgen   (ctest passes both)
set -u
this=${1:?usage: same_tables.sh PATH/TO/dtbgen PATH/TO/reference/dtbgen}
ref=${2:?usage: same_tables.sh PATH/TO/dtbgen PATH/TO/reference/dtbgen}
[ -x "$ref" ] || { echo "same_tables: reference dtbgen $ref is not an executable" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_same.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# build_sets WHO DTBGEN: both sets into $work/WHO, the compact one into $work/WHO-compact.
build_sets() {
  local who=$1 gen=$2
  "$gen" --variant international --pieces 4 --material MMvMM --out "$work/$who" --threads 2 \
    --zstd-level 1 --quiet &&
    "$gen" --variant english --pieces 4 --out "$work/$who" --threads 2 --zstd-level 1 --quiet &&
    "$gen" --compact "$work/$who" --variant english --out "$work/$who-compact" --threats \
      --zstd-level 1 --threads 2 --quiet >/dev/null ||
    { echo "same_tables: $who's dtbgen ($gen) failed" >&2; exit 1; }
}
DTB_INDEX_PORTABLE=1 build_sets this "$this"
build_sets ref "$ref"

# Table files only: STATS and the .stats records hold timings.
list() { (cd "$work/$1" && find . -name '*.wld' -o -name '*.dtw' | LC_ALL=C sort); }
files=0 differ=0
for set in "" "-compact"; do
  if [ "$(list "this$set")" != "$(list "ref$set")" ]; then
    echo "same_tables: the builds wrote different sets of files in $set" >&2
    diff <(list "this$set") <(list "ref$set") >&2
    exit 1
  fi
  for f in $(list "this$set"); do
    files=$((files + 1))
    if ! cmp -s "$work/this$set/$f" "$work/ref$set/$f"; then
      echo "same_tables: ${set:+compact }$f differs between $this and $ref" >&2
      differ=$((differ + 1))
    fi
  done
done
if [ "$files" -eq 0 ] || [ "$differ" -ne 0 ]; then
  echo "same_tables: $differ of $files files differ" >&2
  exit 1
fi
echo "same_tables: $files files identical"
