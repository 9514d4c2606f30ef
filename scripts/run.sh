#!/usr/bin/env bash
# The main job: install what is missing, build, generate the tables (with the rule tables of
# the variants that have a move-count rule set in dtb: international, english; russian and
# brazilian up to 4 pieces), verify them,
# check the textbook claims, and print a summary. Re-running it redoes nothing that is complete.
#
# usage: scripts/run.sh [--variant V] [--pieces N] [--threads T] [--serve [--port P]]
#   default: international 2..5 pieces into tables/international/, plus english and russian
#   2..4 pieces (small; most shipped claims about those variants need no more).
#   --variant V: only V (international, english, russian, brazilian, canadian), 2..N pieces
#   (default N: 5, canadian 4). Claims whose tables are absent are reported as not checked.
#   --serve: afterwards, serve the tables over HTTP (dtbprobe serve) until Ctrl-C, with the
#   address of the web explorer printed; --port P (default 8428).
set -euo pipefail
cd "$(dirname "$0")/.."

variant=international
pieces=
threads=$(nproc 2>/dev/null || echo 2)
custom=0
serve=0
port=8428
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --variant) [ $# -ge 2 ] || usage; variant=$2; custom=1; shift 2 ;;
    --pieces) [ $# -ge 2 ] || usage; pieces=$2; shift 2 ;;
    --threads) [ $# -ge 2 ] || usage; threads=$2; shift 2 ;;
    --serve) serve=1; shift ;;
    --port) [ $# -ge 2 ] || usage; port=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown option $1" >&2; usage ;;
  esac
done
case "$variant" in
  international|english|russian|brazilian) default_pieces=5 ;;
  canadian) default_pieces=4 ;; # 2..5 on 12x12 solves 1.1e10 positions in 5 GiB
  *) echo "run.sh: unknown variant '$variant' (international, english, russian, brazilian, canadian)" >&2; exit 2 ;;
esac
pieces=${pieces:-$default_pieces}
case "$pieces" in ''|*[!0-9]*) echo "run.sh: --pieces needs a number" >&2; exit 2 ;; esac
# The re-derivation (dtbgen --check) covers the small tables: 2..4 pieces, 2..3 on 12x12 (its
# 4-piece tables take six minutes to re-derive on two cores).
check_pieces() { case "$1" in canadian) echo 3 ;; *) echo 4 ;; esac; }
# The tables made besides WLD and DTW: the rule tables where dtb has the variant's rules
# (docs/RULES.md; FMJD-64's up to 4 pieces, §2.4), so that claims under the rules (a clock) are
# checked too.
metrics() { # variant pieces
  case "$1" in
    international|english) echo wld,dtw,rules ;;
    russian|brazilian) if [ "$2" -le 4 ]; then echo wld,dtw,rules; else echo wld,dtw; fi ;;
    *) echo wld,dtw ;;
  esac
}

started=$(date +%s)
scripts/setup.sh
echo "== building (Release)" >&2
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$threads" >/dev/null
gen=build/release/gen/dtbgen
probe=build/release/probe/dtbprobe

jobs=("$variant:$pieces")
if [ "$custom" = 0 ]; then
  jobs+=("english:4" "russian:4")
fi

for job in "${jobs[@]}"; do
  v=${job%%:*} n=${job##*:}
  echo "== generating $v 2..$n pieces into tables/$v" >&2
  "$gen" --variant "$v" --pieces "$n" --out tables --threads "$threads" --metrics "$(metrics "$v" "$n")"
done

echo "== checking every value of the small tables against its successors" >&2
for job in "${jobs[@]}"; do
  v=${job%%:*} n=${job##*:}
  limit=$(check_pieces "$v")
  small=$(( n < limit ? n : limit ))
  "$gen" --check tables --variant "$v" --pieces "$small" --threads "$threads" --quiet
done

manifest_result="no MANIFEST entries for these tables"
if [ -f tables/MANIFEST ]; then
  echo "== comparing table digests with tables/MANIFEST" >&2
  # Only the entries whose files were generated here (a smaller --pieces builds fewer), and only
  # those digested (a 2..6 set's 6-piece tables would take half an hour): links to them in a
  # directory of their own. The digests are of values and header fields (scripts/manifest.sh),
  # so files of another libzstd or compression setting match too.
  listed=$(mktemp -d)
  mkdir "$listed/international"
  awk '!/^#/ && NF == 2 { print $2 }' tables/MANIFEST | while read -r f; do
    if [ -f "tables/$f" ]; then ln -s "$PWD/tables/$f" "$listed/$f"; fi
  done
  if ls "$listed"/international/* >/dev/null 2>&1; then
    made=$("$gen" --manifest "$listed" --variant international --threads "$threads") ||
      { rm -rf "$listed"; exit 1; }
    differ=$(awk 'NR == FNR { if (!/^#/ && NF == 2) want[$2] = $1; next }
                  want[$2] != $1 { print $2 }' tables/MANIFEST - <<<"$made")
    if [ -z "$differ" ]; then
      manifest_result="$(grep -c . <<<"$made") files match tables/MANIFEST"
    else
      rm -rf "$listed"
      echo "run.sh: these tables' values differ from tables/MANIFEST (a solver, index or value encoding change; if on purpose, scripts/manifest.sh regenerates it):" $differ >&2
      exit 1
    fi
  fi
  rm -rf "$listed"
fi

claims_status=0
claims_out=$(mktemp)
if [ -d tables/claims ] && ls tables/claims/*.claims >/dev/null 2>&1; then
  echo "== checking the textbook claims (tables/claims)" >&2
  # Claims about tables not built here (another variant, more pieces) are "not checked".
  "$probe" verify --tables tables --skip-absent tables/claims/*.claims \
    --html tables/claims-report.html | tee "$claims_out" || claims_status=$?
fi

elapsed=$(( $(date +%s) - started ))
echo
echo "== summary"
for job in "${jobs[@]}"; do
  v=${job%%:*}
  if [ -f "tables/$v/STATS" ]; then
    python3 - "tables/$v" "$v" <<'EOF'
import json, os, sys
d, v = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(os.path.join(d, "STATS")) if l.strip()]
pos = sum(r["positions"] for r in rows)
wld = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".wld"))
dtw = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".dtw"))
rule = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)
           if f.endswith((".fmjd", ".wcdf", ".fmjd64")))
secs = sum(r["seconds"] + r.get("rules_seconds", 0) for r in rows)
print(f"{v}: {len(rows)} materials, {pos:,} positions, WLD {wld:,} bytes "
      f"({pos / max(wld, 1):.0f} positions/byte), DTW {dtw:,} bytes, solved in {secs:.0f} s")
ruled = [r for r in rows if "rules" in r]
if ruled:
    print(f"  under the {ruled[0]['rules']} rules: rule tables {rule:,} bytes; at a fresh count "
          f"{sum(r['cursed_wins'] for r in ruled):,} cursed wins, "
          f"{sum(r['blessed_losses'] for r in ruled):,} blessed losses")
EOF
  fi
done
echo "digests: $manifest_result"
if [ -s "$claims_out" ]; then
  echo "claims: $(grep -E '^[0-9]+ claims:' "$claims_out" | tail -1 | sed 's/^[0-9]* claims: //')"
fi
rm -f "$claims_out"
echo "time: ${elapsed} s"
if [ "$serve" = 1 ]; then
  echo "== serving the tables (Ctrl-C stops); open the address below in a browser" >&2
  exec "$probe" serve --tables tables --port "$port" --threads "$threads"
fi
exit "$claims_status"
