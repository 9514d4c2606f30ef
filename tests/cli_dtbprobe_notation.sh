#!/bin/bash
# dtbprobe and the notations of russian and brazilian, end to end through libdtb: a FEN given in
# names and in numbers is the same position and probes identically; the answer is written in
# names by default (and reads back as itself), in numbers with --notation numeric; a square the
# board does not have (i9, a light square, a square of the 10x10 board) is a one-line error
# naming the token, exit status 1. The squares' names are fixed by PDN GameType 25/26 (a1 = 29,
# c1 = 30, c3 = 22, e3 = 23, h8 = 4, b8 = 1), not taken from the code under test.
# usage: cli_dtbprobe_notation.sh DTBPROBE DTBGEN
set -u
# python3 is the one ctest names (DTB_PYTHON, the system's): a pyenv shim first on PATH
# costs 0.4 s a start, and these checks start it many times.
python3() { command "${DTB_PYTHON:-python3}" "$@"; }
probe=$(realpath "$1")
gen=$(realpath "$2")
tmp=$(mktemp -d /tmp/dtb_notation_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for vp in russian:3 brazilian:3 international:2; do
  "$gen" --variant "${vp%:*}" --pieces "${vp#*:}" --out "$tmp/t" --quiet --threads 1 || fail "dtbgen $vp"
done
run() { "$probe" --tables "$tmp/t" --variant "$@"; }

for v in russian brazilian; do
  named=$(run "$v" --json "W:WKc1,e3:BKh8") || fail "$v: named FEN"
  numbered=$(run "$v" --json "W:WK30,23:BK4") || fail "$v: numbered FEN"
  [ "$named" = "$numbered" ] || fail "$v: the same position in names and numbers probes differently"
  python3 - "$named" <<'PY' || fail "$v: JSON in names"
import json, re, sys
a = json.loads(sys.argv[1])
assert a["fen"] == "W:We3,Kc1:BKh8", a["fen"]   # canonical: by square number, men first
assert a["moves"] and all(re.fullmatch(r"(c1|e3)[-:][a-h][1-8](:[a-h][1-8])*", m["move"])
                          for m in a["moves"]), a["moves"]
for m in a["moves"]:
    for part in m["fen"].split(":")[1:]:
        assert all(re.fullmatch(r"K?[a-h][1-8]", t) for t in part[1:].split(",") if t), m["fen"]
PY
  # the canonical FEN written in names reads back as itself; each move's FEN reads back too
  fen=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["fen"])' "$named")
  again=$(run "$v" --json "$fen") || fail "$v: $fen does not read back"
  [ "$again" = "$named" ] || fail "$v: $fen reads back as another position"
  for f in $(python3 -c 'import json,sys; print(" ".join(m["fen"] for m in json.loads(sys.argv[1])["moves"]))' "$named"); do
    back=$(run "$v" --json "$f") || fail "$v: move FEN $f does not read back"
    [ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["fen"])' "$back")" = "$f" ] \
      || fail "$v: move FEN $f is not canonical"
  done
  # numbers on request, equal square by square to the names
  plain=$(run "$v" --json --notation numeric "W:WKc1,e3:BKh8") || fail "$v: --notation numeric"
  python3 - "$named" "$plain" <<'PY' || fail "$v: numbers and names disagree"
import json, re, sys
a, n = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert n["fen"] == "W:W23,K30:BK4", n["fen"]
name = {}
for r in range(8):
    for c in range(8):
        if (r + c) % 2 == 1:
            name[len(name) + 1] = "abcdefgh"[c] + str(8 - r)
conv = lambda t: re.sub(r"[0-9]+", lambda m: name[int(m.group())], t).replace("x", ":")
assert [conv(m["move"]) for m in n["moves"]] == [m["move"] for m in a["moves"]]
assert [conv(m) for m in n["line"]] == a["line"]
PY
  # the text report too
  run "$v" "W:WKc1,e3:BKh8" | head -1 | grep -qx "W:We3,Kc1:BKh8" || fail "$v: text report not in names"
  run "$v" --notation numeric "W:WKc1,e3:BKh8" | head -1 | grep -qx "W:W23,K30:BK4" || fail "$v: text in numbers"
  # bad squares: one line naming the token, exit 1
  for bad in "i9:not a square" "a8:light square" "j10:not a square"; do
    tok=${bad%%:*}
    run "$v" "W:WKc1:BK$tok" > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "$v: $tok is not exit 1"
    [ "$(wc -l < "$tmp/err")" = 1 ] || fail "$v: $tok: not one line: $(cat "$tmp/err")"
    grep -q "'$tok'.*${bad#*:}" "$tmp/err" || fail "$v: $tok not named: $(cat "$tmp/err")"
  done
done
# the 10x10 board has no names: one line naming the token
run international "W:Wc3:B1" > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "international name is not exit 1"
grep -q "'c3'" "$tmp/err" && [ "$(wc -l < "$tmp/err")" = 1 ] || fail "international name: $(cat "$tmp/err")"
run russian --notation chess "W:WKc1:BKh8" > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad --notation is not exit 2"
# Errors about squares name them in the variant's notation (b8, c3), never by number.
run russian "W:Wb8:BKh8" > /dev/null 2> "$tmp/err"
grep -q "promotion row (square b8)" "$tmp/err" || fail "russian promotion-row error: $(cat "$tmp/err")"
run international "W:W3:BK45" > /dev/null 2> "$tmp/err"
grep -q "promotion row (square 3)" "$tmp/err" || fail "international promotion-row error: $(cat "$tmp/err")"
# Variant names in any case.
"$probe" --tables "$tmp/t" --variant Russian "W:WKc1:BKh8" > /dev/null || fail "--variant Russian"
# A table of another variant (russian files under english/): its error printed once.
mkdir -p "$tmp/wrong" && cp -r "$tmp/t/russian" "$tmp/wrong/english"
"$probe" --tables "$tmp/wrong" --variant english "W:W21,22:B1" > /dev/null 2> "$tmp/err"
[ "$(grep -c "variant russian, expected english" "$tmp/err")" = 1 ] || fail "wrong variant said other than once: $(cat "$tmp/err")"
echo ok
