#!/usr/bin/env bash
# Measures dtb's speed and compression and prints one table (never run by the tests).
#
# usage: scripts/bench.sh [--quick] [--threads T] [--set DIR [--compact-set CDIR]
#                         [--threats-set TDIR]] [--cache MIB] [--spread N]
#   --quick   a few minutes: perft depth 8, index, generation of 2..4 pieces, probes, server
#   default   perft depth 9, generation of 2..4 and 2..5 pieces (long), probes
#   --set     no generation: the bytes and probes of an existing international full set in DIR
#             (e.g. 2..6, which takes more than an hour to make), of its compact set in CDIR
#             and of its compact set with threat positions left to the probe in TDIR
#   --cache   the probes' block cache in MiB (default 1024; 2..6's WLD tables need 12 GB)
#   --spread  random positions of the rows that spread over the tables (default 1000000; each
#             costs a block read when the tables do not fit the cache)
#   --serve   only this: the HTTP server on the set in DIR (international 2..4 at least), with and
#             without keep-alive; $DTBPROBE names another dtbprobe to measure (an older build)
#   --mpi     only this: generation of 2..5 (2..4 with --quick) by mpirun -np 2 with one thread
#             a rank against one process with two threads, one after the other: the time ratio,
#             bytes exchanged per position, and that the tables are the same bytes; then the
#             peak resident memory of the largest rank under -np 1, 2 and 4, one thread a rank
#             (docs/CLUSTER.md; needs dtbgen built with MPI)
# Generated tables go to build/bench-tables (deleted first), never to tables/; their compact sets
# to build/bench-tables-compact and (--threats) build/bench-tables-threats.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 mpi=0 serve_dir="" set_dir="" compact_dir="" threats_dir="" cache=1024 spread=1000000
threads=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
  case "$1" in
    --threads|--set|--compact-set|--threats-set|--cache|--spread|--serve)
      [ $# -ge 2 ] || { echo "bench.sh: $1 needs a value" >&2; exit 2; } ;;
  esac
  case "$1" in
    --quick) quick=1; shift ;;
    --mpi) mpi=1; shift ;;
    --threads) threads=$2; shift 2 ;;
    --set) set_dir=$2; shift 2 ;;
    --serve) serve_dir=$2; shift 2 ;;
    --compact-set) compact_dir=$2; shift 2 ;;
    --threats-set) threats_dir=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --spread) spread=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

for n in "$cache" "$spread"; do
  case "$n" in ''|*[!0-9]*|0) echo "bench.sh: --cache and --spread need a positive number" >&2; exit 2 ;; esac
done
if [ -n "$compact_dir$threats_dir" ] && [ -z "$set_dir" ]; then
  echo "bench.sh: --compact-set and --threats-set need --set (the full set they were made from)" >&2; exit 2
fi
for d in $set_dir $compact_dir $threats_dir; do
  if [ ! -d "$d/international" ]; then echo "bench.sh: $d/international: no such directory" >&2; exit 2; fi
done

scripts/setup.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$threads" >/dev/null
bin=build/release
out=build/bench-tables
rows=()
row() { rows+=("$(printf '| %-52s | %28s |' "$1" "$2")"); echo "$1: $2" >&2; }

# MPI: the same build by one process with two threads and by two ranks of one thread each, one
# after the other (so on this 2-core machine both use two cores); the tables must be the same
# bytes.
# The table files of $out that $1 holds otherwise (or not at all): their count.
differing() {
  local n=0 f
  for f in "$out"/international/*.dtw "$out"/international/*.wld; do
    cmp -s "$f" "$1/international/${f##*/}" || n=$((n + 1))
  done
  echo "$n"
}
mpi_rows() {
  local pieces=$([ "$quick" = 1 ] && echo 4 || echo 5) log
  log=$(mktemp)
  rm -rf "$out" "$out-mpi"
  /usr/bin/time -f '%e' -o "$log" "$bin/gen/dtbgen" --variant international --pieces "$pieces" \
    --out "$out" --threads 2 --quiet
  local single
  single=$(cat "$log")
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 /usr/bin/time -f '%e' -o "$log" \
    mpirun -np 2 "$bin/gen/dtbgen" --variant international --pieces "$pieces" --out "$out-mpi" \
    --threads 1 2>"$log.err" >/dev/null
  local ranks summary
  ranks=$(cat "$log")
  summary=$(grep '^dtbgen: MPI job:' "$log.err" | tail -1)
  [ -n "$summary" ] || { echo "bench.sh: no MPI job summary (dtbgen built without MPI?)" >&2; tail -3 "$log.err" >&2; exit 1; }
  local differ
  differ=$(differing "$out-mpi")
  rm -f "$log.err"
  row "generate 2..$pieces, one process, 2 threads" "$single s"
  row "generate 2..$pieces, mpirun -np 2, 1 thread a rank" "$ranks s"
  row "  MPI time / single-process time" "$(awk -v a="$ranks" -v b="$single" 'BEGIN{printf "%.3f", a/b}')"
  row "  bytes exchanged a position" "$(sed -E 's/.*\(([0-9.]+) bytes a position\).*/\1/' <<<"$summary")"
  row "  MB exchanged, rank 0's share of positions" "$(sed -E 's/.*\(rank 0 solved ([0-9]+%)\), ([0-9.]+) MB.*/\2 MB, \1/' <<<"$summary")"
  row "  table files that differ from the single process's" "$differ"
  rm -rf "$out-mpi"
  # Peak resident memory of each rank (GNU time around each rank), one thread a rank, under
  # -np 1, 2 and 4 (oversubscribed here): what a node needs, and how it falls as ranks are
  # added (issue 40: the largest rank at -np 4 at most 40% of -np 1's).
  local np peak1=0 peak
  for np in 1 2 4; do
    rm -rf "$out-mpi" "$log".rank.*
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np "$np" --oversubscribe \
      sh -c '/usr/bin/time -f %M -o "$0.rank.$OMPI_COMM_WORLD_RANK" "$@"' "$log" \
      "$bin/gen/dtbgen" --variant international --pieces "$pieces" --out "$out-mpi" --threads 1 \
      >/dev/null 2>"$log.err" ||
      { echo "bench.sh: mpirun -np $np failed:" >&2; tail -3 "$log.err" >&2; exit 1; }
    peak=$(cat "$log".rank.* | sort -n | tail -1)
    [ "$np" = 1 ] && peak1=$peak
    row "  peak resident of the largest rank, -np $np" "$(awk -v k="$peak" 'BEGIN{printf "%.0f MiB", k/1024}')"
    row "  table files that differ, -np $np" "$(differing "$out-mpi")"
  done
  row "  largest rank at -np 4 / -np 1" "$(awk -v a="$peak" -v b="$peak1" 'BEGIN{printf "%.3f", a/b}')"
  rm -rf "$out-mpi" "$log".rank.* "$log" "$log.err"
}
# The HTTP server (dtbprobe serve) under load on localhost: 20,000 requests from 16 concurrent
# clients (ab, Apache's benchmark tool), with keep-alive (-k, as browsers and bots do) or a new
# connection each ("off"), over four positions of the tables in $out, 5,000 each. Rows: requests per second, the median and 99th percentile latency (the worst
# of the four runs), failed requests (connection errors and non-200 answers).
serve_rows() { # keep-alive: on or off
  local keep=$1 kflag=""
  [ "$keep" = on ] && kflag="-k"
  local prog=${DTBPROBE:-$bin/probe/dtbprobe}
  if ! command -v ab >/dev/null; then
    echo "bench.sh: installing apache2-utils (ab) for the server load test" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends apache2-utils >/dev/null
  fi
  local urlfile
  urlfile=$(mktemp)
  "$prog" serve --tables "$out" --port 0 --quiet --threads "$threads" >"$urlfile" &
  local pid=$!
  local url="" tries=0
  while [ -z "$url" ] && [ $tries -lt 50 ]; do sleep 0.1; url=$(head -1 "$urlfile"); tries=$((tries + 1)); done
  [ -n "$url" ] || { echo "bench.sh: dtbprobe serve did not start" >&2; kill "$pid"; return 1; }
  local rps=0 p50=0 p99=0 failed=0
  for fen in "W:W28,K46:BK5" "W:WK46,K47:BK5,K10" "W:W31,32:B19,20" "B:W28,K46:BK5,K10"; do
    local csv report
    csv=$(mktemp)
    report=$(ab -q $kflag -n 5000 -c 16 -e "$csv" "${url}api/international?fen=$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))" "$fen")" 2>&1)
    rps=$(awk -v a="$rps" -v b="$(echo "$report" | awk '/^Requests per second/{print $4}')" 'BEGIN{print a + b / 4}')
    failed=$((failed + $(echo "$report" | awk '/^Failed requests/{print $3}') + $(echo "$report" | awk '/^Non-2xx responses/{print $3} END{print 0}' | head -1)))
    p50=$(awk -F, -v m="$p50" '$1 == 50 {print ($2 > m ? $2 : m)}' "$csv")
    p99=$(awk -F, -v m="$p99" '$1 == 99 {print ($2 > m ? $2 : m)}' "$csv")
    rm -f "$csv"
  done
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -f "$urlfile"
  row "server: 20000 requests, 16 clients, $threads threads, keep-alive $keep" "$(awk -v r="$rps" 'BEGIN{printf "%.0f requests/s", r}')"
  row "  latency p50 / p99" "$(awk -v a="$p50" -v b="$p99" 'BEGIN{printf "%.2f ms / %.2f ms", a, b}')"
  row "  failed requests" "$failed"
}
if [ -n "$serve_dir" ]; then
  out=$serve_dir
  serve_rows on
  serve_rows off
  echo
  echo "dtb server benchmark, $(date -u +%Y-%m-%d), ${DTBPROBE:-$bin/probe/dtbprobe}, $(nproc) cores"
  printf '%s\n' "${rows[@]}"
  exit 0
fi
if [ "$mpi" = 1 ]; then
  mpi_rows
  echo
  echo "dtb MPI benchmark, $(date -u +%Y-%m-%d), $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
  printf '| %-52s | %28s |\n' "measure" "result"
  printf '|%s|%s|\n' "$(printf -- '-%.0s' {1..54})" "$(printf -- '-%.0s' {1..30})"
  printf '%s\n' "${rows[@]}"
  exit 0
fi

# perft: international start position, one core.
depth=$([ "$quick" = 1 ] && echo 8 || echo 9)
line=$("$bin/probe/dtbprobe" perft --variant international --depth "$depth" | tail -1)
nodes=$(echo "$line" | awk '{print $3}') secs=$(echo "$line" | awk '{print $4}')
row "perft international start, depth $depth" "$(awk -v n="$nodes" -v s="$secs" 'BEGIN{printf "%.1f M nodes/s", n/s/1e6}')"

# Index operations (10x10, 5 and 6 pieces), one core.
idx=$("$bin/tests/dtb_bench_index" 0.2 2>/dev/null)
row "index (position -> number), one core" "$(echo "$idx" | awk '/^index_ops_per_s/{printf "%.1f M/s", $2/1e6}')"
row "unindex (number -> position), one core" "$(echo "$idx" | awk '/^unindex_ops_per_s/{printf "%.1f M/s", $2/1e6}')"

# Bytes of a set's files of one metric (dir, extension); find, not a glob: a set may hold one
# metric only (e.g. a compact WLD set made on its own), and then this is 0.
set_bytes() { find "$1/international" -name "*.$2" -exec cat {} + | wc -c; }
# Generation, per piece count, from scratch.
gen_run() { # pieces
  local log
  log=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$log" "$bin/gen/dtbgen" --variant international --pieces "$1" \
    --out "$out" --threads "$threads" --quiet
  read -r wall kb <"$log"
  rm -f "$log"
  local pos
  pos=$(python3 -c "import json,sys; print(sum(json.loads(l)['positions'] for l in open('$out/international/STATS')))")
  row "generate international 2..$1 ($threads threads)" "$(awk -v w="$wall" -v p="$pos" 'BEGIN{printf "%.1f s, %.2f M pos/s", w, p/w/1e6}')"
  row "  peak memory, positions" "$(awk -v k="$kb" -v p="$pos" 'BEGIN{printf "%.2f GiB, %.3g", k/1048576, p}')"
  from_files_rows "$1" "$wall"
  local wld dtw
  wld=$(set_bytes "$out" wld) dtw=$(set_bytes "$out" dtw)
  row "  WLD bytes, positions per byte" "$(awk -v b="$wld" -v p="$pos" 'BEGIN{printf "%.0f, %.0f", b, p/b}')"
  row "  DTW bytes, positions per byte" "$(awk -v b="$dtw" -v p="$pos" 'BEGIN{printf "%.0f, %.1f", b, p/b}')"
  # The same tables as a compact set (dtbgen --compact: of each pair one table derived).
  rm -rf "$out-compact"
  "$bin/gen/dtbgen" --compact "$out" --out "$out-compact" --variant international --quiet >/dev/null
  wld=$(set_bytes "$out-compact" wld) dtw=$(set_bytes "$out-compact" dtw)
  row "  compact set: WLD bytes, positions per byte" "$(awk -v b="$wld" -v p="$pos" 'BEGIN{printf "%.0f, %.0f", b, p/b}')"
  row "  compact set: DTW bytes, positions per byte" "$(awk -v b="$dtw" -v p="$pos" 'BEGIN{printf "%.0f, %.1f", b, p/b}')"
  # The smallest WLD set: the WLD tables alone (hard links), compact with threat positions left
  # to the probe, at zstd level 19 (docs/FORMAT.md, "Threat positions").
  rm -rf "$out-wld" "$out-threats"
  mkdir -p "$out-wld/international"
  ln "$out"/international/*.wld "$out"/international/STATS "$out-wld/international/"
  local t0 t1
  t0=$(date +%s)
  "$bin/gen/dtbgen" --compact "$out-wld" --out "$out-threats" --threats --zstd-level 19 \
    --variant international --threads "$threads" --quiet >/dev/null
  t1=$(date +%s)
  rm -rf "$out-wld"
  wld=$(set_bytes "$out-threats" wld)
  row "  compact --threats, level 19: WLD bytes, pos/byte" "$(awk -v b="$wld" -v p="$pos" 'BEGIN{printf "%.0f, %.1f", b, p/b}')"
  row "  compact --threats, level 19: making it" "$((t1 - t0)) s"
}
# The lean solve of kings-only pairs (gen/solve.c) against the node state, one after the other:
# the pair KKKvKK (2 x 2.1e7 positions) onto copies of the 2..4 tables just made, once with the
# default budget (node state) and once under --memory 0.25 (below its node state: lean). The
# files must be the same bytes.
lean_rows() {
  local mode log wall kb secs=() rss=()
  for mode in node lean; do
    rm -rf "$out-$mode"
    cp -r "$out" "$out-$mode"
    local budget=()
    [ "$mode" = lean ] && budget=(--memory 0.25)
    log=$(mktemp)
    /usr/bin/time -f '%e %M' -o "$log" "$bin/gen/dtbgen" --variant international --pieces 5 \
      --material KKKvKK --out "$out-$mode" --threads "$threads" --quiet "${budget[@]}"
    read -r wall kb <"$log"
    rm -f "$log"
    secs+=("$wall") rss+=("$kb")
  done
  local same=yes
  cmp -s "$out-node/international/KKKvKK.dtw" "$out-lean/international/KKKvKK.dtw" || same=NO
  rm -rf "$out-node" "$out-lean"
  row "solve KKKvKK pair ($threads threads): node / lean state" "$(awk -v a="${secs[0]}" -v b="${secs[1]}" 'BEGIN{printf "%.1f s / %.1f s (%.2fx)", a, b, b/a}')"
  row "  peak memory node / lean, same bytes" "$(awk -v a="${rss[0]}" -v b="${rss[1]}" -v s="$same" 'BEGIN{printf "%.0f MiB / %.0f MiB, %s", a/1024, b/1024, s}')"
}

# The same set built with finished tables read from their files (--from-files: decoded on
# demand, capture positions searched) instead of kept uncompressed, after gen_run's build: the
# cost of the disk that saves, as a ratio; the files must be the same bytes.
from_files_rows() { # pieces, gen_run's wall seconds
  local log wall kb same=yes f
  rm -rf "$out-ff" "$out-ffw"
  log=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$log" "$bin/gen/dtbgen" --variant international --pieces "$1" \
    --out "$out-ff" --work "$out-ffw" --from-files --threads "$threads" --quiet
  read -r wall kb <"$log"
  rm -f "$log"
  for f in "$out"/international/*.dtw "$out"/international/*.wld; do
    cmp -s "$f" "$out-ff/international/${f##*/}" || same=NO
  done
  rm -rf "$out-ff" "$out-ffw"
  row "  --from-files: time (ratio), peak memory, same bytes" "$(awk -v w="$wall" -v a="$2" -v k="$kb" -v s="$same" 'BEGIN{printf "%.1f s (%.2fx), %.2f GiB, %s", w, w/a, k/1048576, s}')"
}

# The files of an existing set: bytes and positions per byte (positions from its STATS records,
# the last one of each material).
set_rows() { # label, directory
  local pos wld dtw
  pos=$(python3 -c "
import json
last = {}
for l in open('$2/international/STATS'):
    r = json.loads(l); last[r['material']] = r['positions']
print(sum(last.values()))")
  wld=$(set_bytes "$2" wld) dtw=$(set_bytes "$2" dtw)
  row "$1: positions" "$(awk -v p="$pos" 'BEGIN{printf "%.4g", p}')"
  row "  WLD bytes, positions per byte" "$(awk -v b="$wld" -v p="$pos" 'BEGIN{printf "%.0f, %.1f", b, p/b}')"
  [ "$dtw" -gt 0 ] && row "  DTW bytes, positions per byte" "$(awk -v b="$dtw" -v p="$pos" 'BEGIN{printf "%.0f, %.1f", b, p/b}')"
  return 0
}
if [ -n "$set_dir" ]; then
  out=$set_dir
  set_rows "full set $set_dir" "$set_dir"
  if [ -n "$compact_dir" ]; then set_rows "compact set $compact_dir" "$compact_dir"; fi
  if [ -n "$threats_dir" ]; then set_rows "compact set --threats $threats_dir" "$threats_dir"; fi
else
  pieces_list=$([ "$quick" = 1 ] && echo 4 || echo "4 5")
  for n in $pieces_list; do
    rm -rf "$out"
    gen_run "$n"
  done
  compact_dir=$out-compact threats_dir=$out-threats
  lean_rows
fi

# Probes on the tables just generated (the largest complete piece count): cached WDL on one and
# two threads, cached DTW, uncached WDL, with the cache --cache gives. per_cpu_second is the
# per-core rate. The spread rows' random positions (--spread, 1M by default) cover the whole
# tables and measure memory latency as much as code (and block reads where the tables do not fit
# the cache); 4096 positions (a working set that stays in the CPU caches) measure the probe's
# code. Batches (dtb_probe_wdl_many) let the cache misses of 64 probes overlap. The compact set's
# rows probe the same positions' kind through its derived tables (a search over the moves for half
# of them).
probe_row() { # label, options... (--tables DIR among them overrides the full set)
  local label=$1; shift
  "$bin/tests/dtb_bench_probe" --variant international --tables "$out" --cache "$cache" "$@" 2>/dev/null |
  while read -r line; do
    set -- $line
    # probe <metric> <cached> pieces N threads T probes P seconds S per_second R ... per_cpu_second C
    echo "$label, $7 thread(s), $5 pieces|$(awk -v r="${13}" -v c="${17}" 'BEGIN{if (r < 1e5) printf "%.1f k/s (%.1f k/s per core)", r/1e3, c/1e3; else printf "%.2f M/s (%.2f M/s per core)", r/1e6, c/1e6}')"
  done
}
sp=$(awk -v n="$spread" 'BEGIN{if (n % 1000000 == 0) printf "%dM", n/1e6; else if (n % 1000 == 0) printf "%dk", n/1e3; else printf "%d", n}')
while IFS='|' read -r label value; do
  row "$label" "$value"
done < <(probe_row "probe WDL cached, $sp positions" --positions "$spread" --threads 1 --threads 2;
         probe_row "probe WDL cached, 4096 positions" --positions 4096 --rounds 200 --threads 1 --threads 2;
         probe_row "probe WDL cached, 4096 quiet positions, DTB_QUIET_POSITION" --positions 4096 --rounds 200 --quiet --threads 1;
         probe_row "probe WDL cached, $sp positions, batches of 64" --positions "$spread" --batch 64 --threads 1 --threads 2;
         probe_row "probe DTW cached, $sp positions" --positions "$spread" --dtw --threads 1;
         probe_row "probe DTW cached, $sp positions, batches of 64" --positions "$spread" --dtw --batch 64 --threads 1;
         probe_row "probe WDL uncached (20000 positions)" --uncached --positions 20000 --rounds 1 --threads 1 --threads 2;
         if [ -n "$compact_dir" ]; then
           probe_row "probe WDL cached, compact set, $sp positions" --tables "$compact_dir" --positions "$spread" --threads 1 --threads 2
           probe_row "probe WDL uncached, compact set (2000 positions)" --tables "$compact_dir" --uncached --positions 2000 --rounds 1 --threads 1
         fi
         if [ -n "$threats_dir" ]; then
           probe_row "probe WDL cached, compact --threats, $sp positions" --tables "$threats_dir" --positions "$spread" --threads 1 --threads 2
           probe_row "probe WDL uncached, compact --threats (2000 positions)" --tables "$threats_dir" --uncached --positions 2000 --rounds 1 --threads 1
         fi)

# An engine's probe pattern (tests/bench_probe.c --engine): 10,000 roots (random quiet positions
# of the largest complete piece count), 64 random descents of up to 12 plies from each, every
# node below the root probed cache-only (DTB_QUIET_POSITION where it has no capture). With one
# loader thread the misses are read in the background: the hit rate of the first 1,000 roots and
# of every root after the first tenth; without loader threads nothing fills the cache but the
# roots' own probes; a 64 MiB cache is too small for 2..5's 381 MB working set.
#
# Then the same search on two threads (issue #38): with dtb_open's defaults (a cache sized for
# the tables found, one loader thread), with and without dtb_warm of every piece count; and with
# a 512 MiB cache and one loader, where the misses are many and the loader's queue is busy. Each
# row gives the cache-only hit rate after warm-up (and of the last tenth of the roots) and the
# latency of the probes that hit and of those that missed (p50 / p99 / p99.9, and the mean),
# clock reads included: a miss must cost no more than a hit.
engine_row() { # label, options...
  local label=$1; shift
  "$bin/tests/dtb_bench_probe" --variant international --tables "$out" --positions 20000 \
    --engine 10000 --window 1000 "$@" 2>/dev/null |
  awk -v l="$label" '/^engine summary/ {
      for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
      printf "%s|first %.1f %%, after warm-up %.1f %%\n", l, 100 * v["hit_rate_first_window"], 100 * v["hit_rate_after_warmup"] }'
}
while IFS='|' read -r label value; do
  row "$label" "$value"
done < <(engine_row "engine descents, cache-only hits, 512 MiB, loader" --cache 512 --loaders 1;
         engine_row "engine descents, 512 MiB, loader, dtb_warm 2..4" --cache 512 --loaders 1 --warm 4;
         engine_row "engine descents, 512 MiB, no loader" --cache 512 --loaders -1;
         engine_row "engine descents, 64 MiB, loader, dtb_warm 2..4" --cache 64 --loaders 1 --warm 4)
engine2_row() { # label, options...
  local label=$1; shift
  nice "$bin/tests/dtb_bench_probe" --variant international --tables "$out" --positions 20000 \
    --engine 20000 --window 2000 --engine-threads 2 "$@" 2>/dev/null |
  awk -v l="$label" '/^engine window/ {last = $11}
    /^engine summary/ {
      for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
      miss = v["miss_p50_ns"] < 0 ? "none" : sprintf("%s / %s / %s ns, mean %s", v["miss_p50_ns"], v["miss_p99_ns"], v["miss_p999_ns"], v["miss_mean_ns"])
      printf "%s|hits %.2f %% (last tenth %.2f %%); hit %s / %s / %s ns, mean %s; miss %s\n", l, 100 * v["hit_rate_after_warmup"], 100 * last, v["hit_p50_ns"], v["hit_p99_ns"], v["hit_p999_ns"], v["hit_mean_ns"], miss }'
}
while IFS='|' read -r label value; do
  row "$label" "$value"
done < <(engine2_row "engine search, 2 threads, defaults, dtb_warm 2..5" --defaults --warm 5;
         engine2_row "engine search, 2 threads, defaults, no dtb_warm" --defaults;
         engine2_row "engine search, 2 threads, 512 MiB, loader (miss latency)" --cache 512 --loaders 1)

if "$bin/probe/dtbprobe" serve --help >/dev/null 2>&1; then
  serve_rows on
  serve_rows off
fi

echo
echo "dtb benchmark, $(date -u +%Y-%m-%d), $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, probe cache $cache MiB"
printf '| %-52s | %28s |\n' "measure" "result"
printf '|%s|%s|\n' "$(printf -- '-%.0s' {1..54})" "$(printf -- '-%.0s' {1..30})"
printf '%s\n' "${rows[@]}"
