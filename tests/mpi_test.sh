#!/usr/bin/env bash
# dtbgen under MPI (gen/mpi_build.h, docs/CLUSTER.md): the tables of a job of several ranks are
# the single process's, and a job whose worker rank dies stops naming it and resumes.
#
#   same:   international 2..3, then 2..4, under `mpirun -np 3` (one thread a rank), the ranks
#           other than 0 reading the finished tables from their copies in a directory of their
#           own (--node-tables, as on a node's own disk), one copy damaged and one removed
#           between the two runs; every table's digest (dtbgen --manifest) must be
#           tables/MANIFEST's, every 2..4 line of MANIFEST made, and every copy the same bytes
#           as rank 0's file, the damaged and the removed one again; the two kings-only pairs
#           over 2^20 positions are split between the ranks, and every shared pair's tables
#           are compressed by all the ranks, each its own range's blocks. A build with long lists
#           (--dtw-byte-max 5) stops, saying why.
#           (Pairs with men and kings are solved in slices on every rank, as under MPI by default.)
#   killed: international 2..4 under `mpirun -np 2`, every rank reading the table directory and
#           rank 0 holding each pair whole (--slices never), rank 1 killed with kill -9 halfway:
#           the job must stop (non-zero status) with a message naming rank 1; the same command
#           again must finish, keeping the materials the killed run completed, with MANIFEST's
#           digests.
#
# Usage: mpi_test.sh same|killed PATH/TO/dtbgen PATH/TO/MANIFEST MPIEXEC
#        mpi_test.sh skip REASON      (exits 77, which ctest reports as skipped)
set -u
if [ "${1:-}" = skip ]; then
  echo "mpi_test: skipped: ${2:-no reason given}"
  exit 77
fi
mode=${1:?usage: mpi_test.sh same|killed DTBGEN MANIFEST MPIEXEC}
dtbgen=${2:?usage} manifest=${3:?usage} mpiexec=${4:?usage}
work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_mpi.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# Open MPI refuses root without these, and 3 ranks on 2 cores without --oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_WAIT_POLICY=passive
build=(--variant international --pieces 4 --threads 1 --zstd-level 1)

fail() {
  echo "mpi_test: FAIL: $*" >&2
  exit 1
}

# The directory's digests against MANIFEST's 2..4 lines (materials of at most 4 pieces).
same_as_manifest() { # dir
  local made differ want count
  made=$("$dtbgen" --manifest "$1" --variant international) || fail "dtbgen --manifest $1 failed"
  differ=$(awk 'NR == FNR { if (!/^#/ && NF == 2) want[$2] = $1; next }
                !($2 in want) { print $2 ": not in MANIFEST"; next }
                want[$2] != $1 { print $2 ": digest " $1 ", MANIFEST has " want[$2] }' \
           "$manifest" - <<<"$made")
  [ -z "$differ" ] || fail "tables of $1 differ from tables/MANIFEST: $differ"
  # MANIFEST's WLD and DTW lines (it also lists MTC and rule tables, which MPI builds do not make)
  want=$(awk '!/^#/ && NF == 2 && $2 ~ /\.(wld|dtw)$/ {
                m = $2; sub(/^.*\//, "", m); sub(/\..*$/, "", m);
                gsub(/v/, "", m); if (length(m) <= 4) n++ } END { print n }' "$manifest")
  count=$(grep -c . <<<"$made")
  [ "$count" -eq "$want" ] || fail "$1 has $count tables, MANIFEST $want of 2..4 pieces"
  echo "mpi_test: $count tables match tables/MANIFEST's 2..4 lines"
}

# The pid of rank 1 of the job writing to dir (its environment says its rank).
rank1_pid() { # dir
  local p
  for p in /proc/[0-9]*; do
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "--out $1 " || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -q -x -E 'OMPI_COMM_WORLD_RANK=1|PMI_RANK=1' &&
      echo "${p#/proc/}" && return 0
  done
  return 1
}

case $mode in
same)
  c=$work/copies/international
  "$mpiexec" -np 3 "$dtbgen" "${build[@]}" --pieces 3 --out "$work/t" --node-tables "$work/copies" \
    >"$work/log" 2>&1 || fail "mpirun -np 3 dtbgen --pieces 3 failed: $(tail -5 "$work/log")"
  # Every 3-piece table is read again by the 4-piece pairs: the ranks must get these two again.
  [ -f "$c/KKvK.dtw" ] && [ -f "$c/KMvK.wld" ] || fail "no copies in $c: $(ls "$c" 2>&1 | head -3)"
  printf '\377\377\377\377' | dd of="$c/KKvK.dtw" bs=1 seek=200 conv=notrunc status=none
  rm "$c/KMvK.wld"
  "$mpiexec" -np 3 "$dtbgen" "${build[@]}" --out "$work/t" --node-tables "$work/copies" \
    >"$work/log" 2>&1 || fail "mpirun -np 3 dtbgen failed: $(tail -5 "$work/log")"
  grep -q "MPI job: 3 ranks" "$work/log" || fail "no MPI job summary: $(tail -3 "$work/log")"
  # The kings-only pairs over 2^20 positions, KKKvK (2 x 921,200) and KKvKK (1,381,800), are
  # each one unit, split between the three ranks (each a range of it).
  grep -q "MPI job: .* 2 kings-only units split" "$work/log" ||
    fail "KKKvK and KKvKK were not split between the ranks: $(grep "MPI job:" "$work/log")"
  # No rank gathers a pair the ranks share: each keeps what it solved (a kings-only pair's
  # range; the units of a pair with men, the blocks its range of the files touches moved to it
  # afterwards) and compresses its range's blocks of the tables, rank 0 writing the files from
  # the frames (the digests below are MANIFEST's): at least those two and KKMvK, KMMvK, KKMvM,
  # KKMvKM, KMvKM ... (every pair of 2^20 positions and more with kings).
  summary=$(grep "MPI job:" "$work/log")
  pairs=$(sed -n 's/.* \([0-9]*\) pairs written by every rank.*/\1/p' <<<"$summary")
  [ "${pairs:-0}" -ge 8 ] || fail "$pairs pairs written by every rank, not 8 or more: $summary"
  grep -q "pairs written by every rank ([0-9.]*[1-9][0-9.]* MB of their tables compressed by other ranks)" \
    <<<"$summary" || fail "the other ranks made no blocks of the shared pairs' tables: $summary"
  same_as_manifest "$work/t"
  n=0
  for f in "$c"/*; do
    cmp -s "$f" "$work/t/international/${f##*/}" || fail "the copy ${f##*/} differs from rank 0's file"
    n=$((n + 1))
  done
  [ -f "$c/KMvK.wld" ] && [ "$n" -ge 40 ] || fail "the ranks have $n copies, KMvK.wld among them?"
  echo "mpi_test: the ranks' $n copies are rank 0's files, the damaged and the removed one again"
  # Long lists (distances beyond the byte, here beyond 5 plies) are not shared between ranks:
  # a pair the ranks share stops the job with that reason, rather than losing the distances.
  if "$mpiexec" -np 2 "$dtbgen" "${build[@]}" --dtw-byte-max 5 --out "$work/l" >"$work/log" 2>&1; then
    fail "a build with long lists finished under MPI"
  fi
  grep -q "do not share long lists" "$work/log" || fail "no reason given: $(tail -3 "$work/log")"
  echo "mpi_test: long lists refused under MPI, with the reason"
  ;;
killed)
  d=$work/k
  "$mpiexec" -np 2 "$dtbgen" "${build[@]}" --slices never --out "$d" >"$work/log" 2>&1 &
  job=$!
  # Halfway: 20 of the 41 materials complete (the larger pairs, shared by both ranks, follow).
  for _ in $(seq 600); do
    [ "$(compgen -G "$d/international/*.stats" | wc -l)" -ge 20 ] && break
    kill -0 $job 2>/dev/null || break
    sleep 0.1
  done
  pid=$(rank1_pid "$d") || fail "rank 1 not found (the run ended first?): $(tail -3 "$work/log")"
  kill -9 "$pid"
  wait $job
  rc=$?
  [ $rc -ne 0 ] || fail "the job whose rank 1 was killed exits 0"
  grep -q -w "rank 1" "$work/log" || fail "no message names rank 1: $(tail -5 "$work/log")"
  echo "mpi_test: killed rank 1, the job stopped (status $rc): $(grep -w -m1 "rank 1" "$work/log")"
  before=$(compgen -G "$d/international/*.stats" | wc -l)
  "$mpiexec" -np 2 "$dtbgen" "${build[@]}" --slices never --out "$d" >"$work/log2" 2>&1 ||
    fail "the rerun failed: $(tail -5 "$work/log2")"
  kept=$(grep -c "already complete" "$work/log2")
  # A pair's two stats records are written one after the other: a kill between them leaves
  # one record of a pair that is not complete.
  [ "$kept" -ge $((before - 1)) ] && [ "$kept" -gt 0 ] ||
    fail "the rerun kept $kept materials, the killed run had completed $before"
  echo "mpi_test: the rerun kept the $kept materials complete before the kill"
  same_as_manifest "$d"
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac
