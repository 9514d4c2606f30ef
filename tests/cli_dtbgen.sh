#!/usr/bin/env bash
# The dtbgen command line (docs/DESIGN.md §9): exit 2 with a message for usage errors, 1 for bad input
# or data (unknown variant, bad material, a directory that cannot be made, a memory budget too
# small, a full disk, a damaged or wrong table for --check), 0 for --help, --version and work done.
#
# Usage: cli_dtbgen.sh PATH/TO/dtbgen   (ctest passes $<TARGET_FILE:dtbgen>)
set -u
dtbgen=${1:?usage: cli_dtbgen.sh PATH/TO/dtbgen}
work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_cli.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
failures=0

# expect STATUS PATTERN ARGS...: dtbgen ARGS exits STATUS and its stdout+stderr match the
# extended regular expression PATTERN (case-insensitive).
expect() {
  local want=$1 pattern=$2 out rc
  shift 2
  out=$("$dtbgen" "$@" 2>&1)
  rc=$?
  if [ $rc -ne "$want" ]; then
    echo "FAIL: dtbgen $* exits $rc, not $want: $out" >&2
    failures=$((failures + 1))
  elif ! grep -q -i -E -- "$pattern" <<<"$out"; then
    echo "FAIL: dtbgen $*: output does not match /$pattern/: $out" >&2
    failures=$((failures + 1))
  fi
}

# Usage errors: 2.
expect 2 'no command' 
expect 2 'unknown option --bogus' --bogus
expect 2 'unexpected argument' --variant international --pieces 2 --out "$work/a" stray
expect 2 '--variant needs a value' --list --pieces 2 --variant
expect 2 '--out needs a value' --variant international --pieces 2 --out
expect 2 'only one command' --list --check "$work/a" --variant international --pieces 2
expect 2 'needs --pieces or --material' --variant international --out "$work/a"
expect 2 'variant is needed|needs --variant' --pieces 2 --out "$work/a"
expect 2 'not a number' --variant international --pieces two --out "$work/a"
expect 2 'not a positive number' --variant international --pieces 2 --out "$work/a" --threads 0
expect 2 'not a positive number of GiB' --variant international --pieces 2 --out "$work/a" --memory lots
expect 2 'takes no value' --help=yes
expect 2 '--manifest needs a value' --manifest
expect 2 'only one command' --manifest "$work/a" --out "$work/a" --variant international --pieces 2
expect 2 '--pieces is not for --manifest' --manifest "$work/a" --pieces 3
expect 2 '--material is not for --manifest' --manifest "$work/a" --material KvK
expect 2 '--block-positions is for --compact' --manifest "$work/a" --block-positions 4096
# An option's value out of its range is a usage error like one that is no number (issue 39).
expect 2 'dtbgen builds 2..8 pieces' --variant international --pieces 30 --out "$work/a"
expect 2 'russian materials have 2..24 pieces' --list --variant russian --pieces 40
[ ! -e "$work/a" ] || { echo "FAIL: a usage error created $work/a" >&2; failures=$((failures + 1)); }

# Help and version: 0, on stdout.
expect 0 '^usage: dtbgen' --help
expect 0 '^dtbgen [0-9]+\.[0-9]+' --version
[ -z "$("$dtbgen" --help 2>&1 >/dev/null)" ] || { echo "FAIL: --help writes to stderr" >&2; failures=$((failures + 1)); }

# Bad input: 1.
expect 1 "unknown variant 'checkers'" --variant checkers --pieces 2 --out "$work/a"
expect 1 '--material KXvK' --variant international --material KXvK --out "$work/a"
expect 2 'dtbgen builds 2..8 pieces' --variant international --pieces 1 --out "$work/a"
: >"$work/file"
expect 1 "cannot create directory $work/file/sub" --variant international --pieces 2 --out "$work/file/sub"
# A budget far too small: refused before anything is written, saying how much is needed.
expect 1 'needs at least [0-9.]+ [KMG]iB of memory \([0-9]+ bytes: its largest step.s working memory\), more than the' \
  --variant international --pieces 3 --out "$work/a" --memory 0.000001
[ ! -e "$work/a" ] || { echo "FAIL: a refused build created $work/a" >&2; failures=$((failures + 1)); }
expect 1 "no international tables" --check "$work/nothing" --variant international
expect 1 "$work/nothing holds no variant directory" --manifest "$work/nothing"
expect 1 "unknown variant 'checkers'" --manifest "$work/nothing" --variant checkers
expect 1 "$work/nothing/english: no such directory" --manifest "$work/nothing" --variant english
# International 2..6 (4.8e10 positions): under its planned peak the solved values go to work
# files, but below the working memory of its largest step it is refused, before writing
# anything; the plan, which drops tables once nothing reads them, fits the 20 GiB that keeping
# every table (about 45 GiB of values alone: a byte per position) does not. english 2..8, its
# finished tables read from their files, still needs more disk than /dev/shm has.
expect 1 'needs at least [0-9.]+ [MG]iB of memory \([0-9]+ bytes: .*more than the 512.0 MiB allowed' \
  --variant international --pieces 6 --out "$work/six" --memory 0.5
expect 0 'within 10.00 GiB \(--memory\): solved values in work files in .*/six/international \([0-9.]+ GiB of disk at the peak\)' \
  --list --variant international --pieces 6 --out "$work/six" --memory 10
# english 2..8 is planned once (its 406 materials take seconds in the sanitizer build); the
# smaller plan is checked on the same output below
english8=$("$dtbgen" --list --variant english --pieces 8 --memory 20 --work /dev/shm 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q -E -- 'the plan does not fit: it needs [0-9.]+ GiB of disk \(table files [0-9.]+ GiB, work files [0-9.]+ GiB\)' <<<"$english8" ||
  { echo "FAIL: english 2..8 plan (exit $rc): $english8" >&2; failures=$((failures + 1)); }
# The plan tells the truth in its exit status (issue #42): a plan that fits exits 0, one whose
# memory or disk does not fit exits 1 with the reason on one line; the table files are projected
# from measured compression even into an empty directory, and with DTW up to fewer pieces when
# the full plan does not fit the disk.
expect 0 'disk: [0-9.]+ GiB of table files \(WLD [0-9.]+ GiB, DTW [0-9.]+ GiB for losses only, every table' \
  --list --variant international --pieces 4 --out "$work/plan"
expect 1 'the plan does not fit: its largest step alone works with' \
  --list --variant international --pieces 4 --out "$work/plan" --memory 0.000001
# (7 pieces, or 6 where /dev/shm is too small even for that: slicing for the disk sets the work
# files by the room the table files leave)
grep -q -E -- 'with --dtw-pieces ([67]) \(DTW up to \1 pieces, WLD only above\)' <<<"$english8" ||
  { echo "FAIL: no --dtw-pieces 7 or 6 plan for english 2..8: $english8" >&2; failures=$((failures + 1)); }
expect 0 'DTW [0-9.]+ GiB for losses only, up to 3 pieces \(--dtw-pieces\)' \
  --list --variant english --pieces 4 --dtw-pieces 3
expect 2 '--dtw-pieces is for a build' --check "$work/plan" --variant english --dtw-pieces 3
# Pairs solved in slices: the option's values, where it applies, and the plan that says so.
expect 2 '--slices: auto, always or never' --variant english --pieces 3 --out "$work/a" --slices sometimes
expect 2 '--slices is for a build' --check "$work/plan" --variant english --slices always
expect 0 '5 pairs \([0-9.e+]+ positions\) solved in slices' --list --variant english --pieces 3 --slices always
expect 0 'every solved value stays in memory' --list --variant english --pieces 3 --slices never
expect 1 'to be solved in slices.*a build with MTC tables' --variant english --pieces 3 --out "$work/sm" --slices always --metrics wld,dtw,mtc
[ ! -e "$work/plan" ] || { echo "FAIL: --list created $work/plan" >&2; failures=$((failures + 1)); }
[ ! -e "$work/six" ] || { echo "FAIL: a refused build created $work/six" >&2; failures=$((failures + 1)); }
json=$("$dtbgen" --list --variant international --pieces 6 --json)
peak=$(sed -n 's/.*"memory_peak":\([0-9]*\).*/\1/p' <<<"$json")
keep=$(sed -n 's/.*"memory_keep_all":\([0-9]*\).*/\1/p' <<<"$json")
if [ -z "$peak" ] || [ -z "$keep" ] || [ "$peak" -ge $((20 << 30)) ] || [ "$keep" -le $((45 << 30)) ]; then
  echo "FAIL: --list --json of 2..6 pieces: peak '$peak', keeping everything '$keep'" >&2
  failures=$((failures + 1))
fi
# The plan of each rank of an MPI job (--ranks): finished tables read from their files and
# pairs in slices make it smaller than one process's; said in words and in JSON.
expect 0 'memory of each of 4 MPI ranks \(--ranks\): [0-9.]+ GiB' --list --variant international --pieces 6 --ranks 4
expect 2 "--ranks: '0' is not a number" --list --variant international --pieces 6 --ranks 0
json4=$("$dtbgen" --list --variant international --pieces 6 --json --ranks 4)
peak4=$(sed -n 's/.*"memory_peak":\([0-9]*\).*/\1/p' <<<"$json4")
if [ -z "$peak4" ] || [ "$peak4" -ge "$peak" ] || ! grep -q '"ranks":4' <<<"$json4"; then
  echo "FAIL: --list --ranks 4 of 2..6 pieces: a rank's peak '$peak4', one process's '$peak'" >&2
  failures=$((failures + 1))
fi

# At most N pieces a side (--side-max): 2..4 with at most 2 a side is 4 materials of 1v1, 12 of
# 2v1 and 1v2 (3 sides of two x 2 of one, both ways) and 9 of 2v2; a build makes only those.
expect 0 '^total .*\(25 materials\)' --list --variant international --pieces 4 --side-max 2
expect 0 '2..4 pieces, at most 2 a side' --list --variant international --pieces 4 --side-max 2
if "$dtbgen" --list --variant international --pieces 4 --side-max 2 | grep -q -E '^(KKKvK|KvKKK|KKMvM) '; then
  echo "FAIL: --side-max 2 lists a material with three pieces a side" >&2
  failures=$((failures + 1))
fi
expect 2 "--side-max: '0' is not a number" --list --variant international --pieces 4 --side-max 0
"$dtbgen" --variant english --pieces 3 --side-max 1 --threads 1 --out "$work/side" >/dev/null 2>&1
made=$(cd "$work/side/english" 2>/dev/null && ls ./*.wld 2>/dev/null | tr '\n' ' ')
if [ "$made" != "./KvK.wld ./KvM.wld ./MvK.wld ./MvM.wld " ]; then
  echo "FAIL: --pieces 3 --side-max 1 made '$made', not the four 1v1 tables" >&2
  failures=$((failures + 1))
fi

# A full disk: the table's .tmp is a link to /dev/full (no privileges needed).
if [ -c /dev/full ]; then
  mkdir -p "$work/full/international"
  ln -s /dev/full "$work/full/international/KvK.dtw.tmp"
  expect 1 'KvK.dtw.tmp: cannot write: No space left on device' \
    --variant international --pieces 2 --out "$work/full" --quiet
  [ ! -e "$work/full/international/KvK.dtw" ] && [ ! -L "$work/full/international/KvK.dtw.tmp" ] ||
    { echo "FAIL: a failed write left KvK.dtw or its .tmp behind" >&2; failures=$((failures + 1)); }
  expect 0 '' --variant international --pieces 2 --out "$work/full" --quiet
else
  echo "FAIL: /dev/full is needed to simulate a full disk and is not a device here" >&2
  failures=$((failures + 1))
fi

# A good build, then --check on it and on damaged copies: 0, then 1 naming the file.
expect 0 'international 2..2 pieces complete' --variant international --pieces 2 --out "$work/g"
# A complete set: said even with --quiet; variant names in any case.
expect 0 'international 2..2 pieces already complete in .*: nothing to build' \
  --variant International --pieces 2 --out "$work/g" --quiet
expect 0 '^checked 4 tables, [0-9]+ positions, 0 mismatches' --check "$work/g" --variant international
# Its manifest: one line per file, by name, the digest in 16 hex digits; the same with and
# without --variant (the only variant directory).
expect 0 '^[0-9a-f]{16}  international/KvK\.dtw$' --manifest "$work/g" --variant international
manifest=$("$dtbgen" --manifest "$work/g" --threads 1)
if [ "$(grep -c -E '^[0-9a-f]{16}  international/[KM]v[KM]\.(wld|dtw)$' <<<"$manifest")" -ne 8 ] ||
  [ "$manifest" != "$(LC_ALL=C sort -k2 <<<"$manifest")" ] ||
  [ "$manifest" != "$("$dtbgen" --manifest "$work/g" --variant international)" ]; then
  echo "FAIL: --manifest of 2 pieces: $manifest" >&2
  failures=$((failures + 1))
fi
# Its compact set (KvM and MvK: one derived per metric; KvK and MvM are their own flips), made
# again without change, refused where it cannot be: 0, then 2 or 1.
expect 0 'compact international set in .*: 8 files, 2 derived' --compact "$work/g" --out "$work/c"
expect 0 'already there' --compact "$work/g" --out "$work/c" --variant international
expect 2 '--compact needs --out' --compact "$work/g"
# With threat positions left to the probe: a set of its own; never over the plain one.
expect 0 'threat positions left to the probe: [0-9]+' --compact "$work/g" --out "$work/ct" --threats
expect 1 'exists with other bytes: not overwritten' --compact "$work/g" --out "$work/c" --threats
expect 2 '--threats is for --compact' --variant international --pieces 2 --out "$work/x" --threats
expect 1 'no such directory' --compact "$work/nothing" --out "$work/c2" --variant international
expect 1 "derived table; the input must be a full set" --compact "$work/c" --out "$work/c2"
expect 1 'derived table; building and checking need the full set' --check "$work/c" --variant international
t=$work/g/international
cp "$t/KvM.dtw" "$work/KvM.good"
printf '\x55' | dd of="$t/KvM.dtw" bs=1 seek=200 conv=notrunc status=none
expect 1 'KvM.dtw' --check "$work/g" --variant international
expect 1 'KvM.dtw' --manifest "$work/g"
cp "$t/MvK.dtw" "$t/KvM.dtw" # a sound table of another material under this name
expect 1 'KvM.dtw' --check "$work/g" --variant international
head -c 100 "$work/KvM.good" >"$t/KvM.dtw"
expect 1 'KvM.dtw' --check "$work/g" --variant international
# A table whose partner is missing is left out, not crashed on, not failed.
cp "$work/KvM.good" "$t/KvM.dtw"
rm "$t/MvK.dtw"
expect 0 'check KvM: not checked, it needs MvK, which is missing' --check "$work/g" --variant international

# MTC tables (--metrics): made with each pair, re-derived by --check (4 .dtw and 4 .mtc tables),
# a damaged one named; a set without them is not complete for a build that asks for them.
expect 2 '--metrics: a comma-separated list' --variant international --pieces 2 --out "$work/m" --metrics wld,dtz
expect 2 '--metrics is for builds' --check "$work/m" --variant international --metrics mtc
expect 0 'international 2..2 pieces complete' --variant international --pieces 2 --out "$work/m" --metrics wld,dtw,mtc
expect 0 '^checked 8 tables, [0-9]+ positions, 0 mismatches' --check "$work/m" --variant international
expect 0 'check KvM.mtc: [0-9]+ positions, 0 mismatches' --check "$work/m" --variant international
printf '\x55' | dd of="$work/m/international/KvM.mtc" bs=1 seek=300 conv=notrunc status=none
expect 1 'KvM.mtc' --check "$work/m" --variant international
expect 0 "" --variant international --pieces 2 --out "$work/g2" --quiet
expect 0 'international 2..2 pieces complete' --variant international --pieces 2 --out "$work/g2" --metrics mtc
[ -f "$work/g2/international/KvK.mtc" ] || { echo "FAIL: --metrics mtc did not add KvK.mtc" >&2; failures=$((failures + 1)); }
# The same bytes with 1 and 2 threads (.mtc too), and .wld / .dtw the same with and without MTC.
# The Release tree checks it; the sanitizer tree (DTB_TEST_SMALL) leaves these three builds out
# (4.6 s of its 23 s): they compare bytes, and under the sanitizers test_build already runs the
# solver with 1 and 2 threads, test_mtc the MTC solver (with OpenMP's threads).
if [ "${DTB_TEST_SMALL:-}" = 1 ]; then
  [ $failures -eq 0 ] || { echo "cli_dtbgen: $failures failures" >&2; exit 1; }
  echo "cli_dtbgen: all passed (the thread comparison is the Release tree's)"
  exit 0
fi
expect 0 '' --variant international --pieces 3 --out "$work/t1" --metrics wld,dtw,mtc --threads 1 --quiet
expect 0 '' --variant international --pieces 3 --out "$work/t2" --metrics wld,dtw,mtc --threads 2 --quiet
expect 0 '' --variant international --pieces 3 --out "$work/t0" --threads 2 --quiet
n=0
for f in "$work"/t1/international/*.mtc "$work"/t1/international/*.wld "$work"/t1/international/*.dtw; do
  b=$(basename "$f")
  n=$((n + 1))
  cmp -s "$f" "$work/t2/international/$b" || { echo "FAIL: $b differs between 1 and 2 threads" >&2; failures=$((failures + 1)); }
  case $b in *.mtc) continue ;; esac
  cmp -s "$f" "$work/t0/international/$b" || { echo "FAIL: $b differs with MTC" >&2; failures=$((failures + 1)); }
done
[ $n -eq 48 ] || { echo "FAIL: $n tables of 2..3 pieces with MTC, not 48" >&2; failures=$((failures + 1)); }

# --convert: a full set's DTW tables rewritten losses-only are the bytes a losses-only build
# (t0 above) writes; every other file is the input's (a hard link); a second run leaves them;
# an output file with other bytes is refused, not overwritten.
expect 0 '' --variant international --pieces 3 --out "$work/fullform" --dtw-store full --quiet --threads 1
expect 0 'DTW losses only: 49 files, 16 rewritten' --convert "$work/fullform" --out "$work/conv" --quiet
for f in "$work"/t0/international/*.dtw "$work"/t0/international/*.wld; do
  b=$(basename "$f")
  cmp -s "$f" "$work/conv/international/$b" || { echo "FAIL: converted $b differs from the losses-only build's" >&2; failures=$((failures + 1)); }
  case $b in *.dtw) cmp -s "$f" "$work/fullform/international/$b" && { echo "FAIL: $b of the full build is losses-only already" >&2; failures=$((failures + 1)); } ;; esac
done
[ "$work/fullform/international/KKvK.wld" -ef "$work/conv/international/KKvK.wld" ] || { echo "FAIL: KKvK.wld was not linked" >&2; failures=$((failures + 1)); }
expect 0 "49 files, 0 rewritten" --convert "$work/fullform" --out "$work/conv" --quiet
cp "$work/fullform/international/KvK.dtw" "$work/conv/international/KvK.dtw"
expect 1 'KvK.dtw exists with other bytes: not overwritten' --convert "$work/fullform" --out "$work/conv" --quiet
cmp -s "$work/fullform/international/KvK.dtw" "$work/conv/international/KvK.dtw" || { echo "FAIL: the refused output was changed" >&2; failures=$((failures + 1)); }
expect 2 '--convert needs --out' --convert "$work/fullform"

if [ $failures -ne 0 ]; then
  echo "cli_dtbgen: $failures failures" >&2
  exit 1
fi
echo "cli_dtbgen: all passed"
