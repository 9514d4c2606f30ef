#!/usr/bin/env bash
# Crash safety of dtbgen (docs/DESIGN.md §7): kill -9 the generator again and again, at growing delays, each
# time rerunning the same command, until a run completes; then the tables must be the same bytes
# as an uninterrupted run's. After every kill, each file that does not end in .tmp must be whole
# (byte-identical to the uninterrupted run's: the build is deterministic), and `dtbgen --check` on
# the killed directory must pass, leaving out only tables whose partner is missing.
#
# Usage: resume_test.sh PATH/TO/dtbgen [--work-files | --slices]   (ctest passes $<TARGET_FILE:dtbgen>)
#   --work-files: the killed builds keep their solved values in work files (--work) under a
#   --memory so small that the kings-only pair KKvK is solved lean; the uninterrupted one keeps
#   them in memory with the node state, so the bytes compared are also those of the two ways.
#   --slices: the killed builds solve every pair with men and kings in slices (--slices always:
#   levels stored compressed, tables written from the store); the uninterrupted one solves
#   them whole, so the bytes compared are also those of the two ways.
set -u
dtbgen=${1:?usage: resume_test.sh PATH/TO/dtbgen [--work-files | --slices]}
work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_resume.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
build=(--variant international --pieces 3 --threads 2 --quiet)
killed=()
if [ "${2:-}" = --work-files ]; then
  killed=(--work "$work/wk" --memory 0.1)
elif [ "${2:-}" = --slices ]; then
  killed=(--slices always)
fi

fail() {
  echo "resume_test: FAIL: $*" >&2
  exit 1
}
if [ "${2:-}" = --slices ]; then
  "$dtbgen" --list "${build[@]}" "${killed[@]}" --out "$work/plan" 2>/dev/null |
    grep -q "solved in slices" || fail "the plan under ${killed[*]} solves no pair in slices"
elif [ ${#killed[@]} -gt 0 ]; then
  "$dtbgen" --list "${build[@]}" "${killed[@]}" --out "$work/plan" 2>/dev/null | grep -q "lean state" ||
    fail "the plan under ${killed[*]} solves no pair lean"
fi
now() { date +%s.%N; }
# Stats records and STATS carry wall-clock figures (the last two fields); the rest must match.
untimed() { sed -e 's/,"seconds":[^}]*}/}/' "$1"; }

# A file after a kill is whole when it equals the uninterrupted run's.
verify_files() { # dir, when
  local d=$1/international f b
  [ -d "$d" ] || return 0
  for f in "$d"/*; do
    [ -e "$f" ] || continue
    b=${f##*/}
    case $b in
      *.tmp) ;;
      *.dtw | *.wld)
        cmp -s "$f" "$ref/$b" || fail "$b $2 differs from the uninterrupted run's" ;;
      *.stats | STATS)
        [ "$(untimed "$f")" = "$(untimed "$ref/$b")" ] ||
          fail "$b $2 differs from the uninterrupted run's: $(cat "$f")" ;;
      *) fail "unexpected file $b $2" ;;
    esac
  done
}

# --check on a killed directory: it passes; the only notes allowed are per-table results with no
# mismatch and tables left out because a table they need is missing. A table is complete once
# its stats record is written (last, DESIGN.md §7): before the first one there is nothing to
# check, and --check rightly says so and fails.
verify_check() { # dir, when
  compgen -G "$1/international/*.stats" >/dev/null || return 0
  local out rc
  out=$("$dtbgen" --check "$1" --variant international --pieces 3 2>&1)
  rc=$?
  [ $rc -eq 0 ] || fail "dtbgen --check $2 exits $rc: $out"
  local other
  other=$(grep -v -E '^dtbgen: check [KMv]+: ([0-9]+ positions, 0 mismatches|not checked, it needs [KMv]+, which is missing)$' <<<"$out" |
    grep -v -E '^checked [0-9]+ tables, [0-9]+ positions, 0 mismatches')
  [ -z "$other" ] || fail "dtbgen --check $2 says: $other"
}

# The uninterrupted run.
t0=$(now)
"$dtbgen" "${build[@]}" --out "$work/ref" || fail "the uninterrupted build failed"
t1=$(now)
ref=$work/ref/international
[ "$(compgen -G "$ref/*.dtw" | wc -l)" -eq 16 ] || fail "the uninterrupted build has not 16 .dtw tables"

# Kill at growing delays from a tenth of the uninterrupted run's time: the first kills land while
# small materials are being solved and written, later ones during loading, solving and writing of
# larger ones; each rerun must pick up where the last stopped. Should the machine speed up so
# that fewer than 3 kills land, the whole sequence starts again in a new directory with shorter
# delays (the timing is adaptive; what is tested does not depend on it).
first=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 10 }')
kills=0
for attempt in 1 2 3; do
  k=$work/k$attempt
  delay=$first
  done_ok=0
  for round in $(seq 1 40); do
    "$dtbgen" "${build[@]}" "${killed[@]}" --out "$k" &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    { wait "$pid"; } 2>/dev/null # no "Killed" note from the shell
    rc=$?
    if [ $rc -eq 0 ]; then
      done_ok=1
      break
    fi
    [ $rc -eq 137 ] || fail "the generator exited with status $rc (round $round)"
    kills=$((kills + 1))
    echo "kill $kills at ${delay}s: $(compgen -G "$k/international/*.dtw" | wc -l) .dtw," \
      "$(compgen -G "$k/international/*.tmp" | wc -l) .tmp"
    verify_files "$k" "after kill $kills (at ${delay}s)"
    verify_check "$k" "after kill $kills (at ${delay}s)"
    delay=$(awk -v d="$delay" 'BEGIN { printf "%.3f", d * 1.25 }')
  done
  [ $done_ok -eq 1 ] || fail "no run completed in 40 rounds"
  [ $kills -ge 3 ] && break
  first=$(awk -v d="$first" 'BEGIN { printf "%.3f", d / 3 }')
done
[ $kills -ge 3 ] || fail "only $kills kills landed before the builds completed"

# The completed directory: no .tmp left, the same files, the same bytes.
leftover=$(compgen -G "$k/international/*.tmp")
[ -z "$leftover" ] || fail "left behind: $leftover"
[ "$(cd "$ref" && ls)" = "$(cd "$k/international" && ls)" ] ||
  fail "the resumed directory does not hold the same files"
sums_ref=$(cd "$ref" && sha256sum -- *.dtw *.wld)
sums_k=$(cd "$k/international" && sha256sum -- *.dtw *.wld)
[ "$sums_ref" = "$sums_k" ] || fail "checksums differ: $(diff <(echo "$sums_ref") <(echo "$sums_k"))"
verify_files "$k" "after completion"
# Work files are unlinked as they are made: none is left by the kills.
if [ ${#killed[@]} -gt 0 ] && [ -d "$work/wk" ] && [ -n "$(ls -A "$work/wk")" ]; then
  fail "work files left behind: $(ls -A "$work/wk")"
fi

echo "resume_test: $kills kills, resumed to the same $(wc -l <<<"$sums_ref") table files"
