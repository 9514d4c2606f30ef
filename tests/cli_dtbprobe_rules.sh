#!/bin/bash
# dtbprobe under the move-count draw rules (issue 37), on international KKvK and MvK with the FMJD limits
# lowered to 6,6,4 plies (dtbgen --rule-limits), where the rules bite: KKvK is a 6.4 ending
# (limit 4 here), and W:WK46,K47:BK5 wins in 3 plies (47-41 5-x 41x5, the capture of the last
# piece resetting the count). So at clock 0 and 1 it is a win, at clock 2 a cursed win (3 plies
# do not fit in the 2 left); black to move after 47-41 at clock 3 a blessed loss. The clock comes
# from the FEN's H field unless --clock says otherwise; --rules none, and a set without rule
# tables, give the output of before byte for byte; bad H values and rule names are one-line
# errors with the documented exit status. Then english under the WCDF's 40-move rule.
# usage: cli_dtbprobe_rules.sh DTBPROBE DTBGEN
set -u
# python3 is the one ctest names (DTB_PYTHON, the system's): a pyenv shim first on PATH
# costs 0.4 s a start, and these checks start it many times.
python3() { command "${DTB_PYTHON:-python3}" "$@"; }
probe=$(realpath "$1")
gen=$(realpath "$2")
tmp=$(mktemp -d /tmp/dtb_rules_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Only the materials used (and what they need): a second, not the seconds of all of 2..3.
mats=(--material KKvK --material MvK)
"$gen" --variant international --pieces 3 "${mats[@]}" --out "$tmp/rules" \
  --metrics wld,dtw,rules --rule-limits 6,6,4 --quiet --threads 2 || fail "dtbgen with rules"
"$gen" --variant international --pieces 3 "${mats[@]}" --out "$tmp/plain" --quiet --threads 2 ||
  fail "dtbgen"
run() { "$probe" --tables "$tmp/rules" "$@"; }

# Text: the value under the rules beside the unlimited one, in plain words.
out=$(run "W:WK46,K47:BK5") || fail "text, clock 0"
grep -qx "value: win, DTW 3 plies" <<<"$out" || fail "the unlimited value is gone: $out"
grep -qx "under the rules: win, 3 plies to the next reset of the 5-move count (fmjd, clock 0 of 4)" \
  <<<"$out" || fail "win under the rules at clock 0: $out"
grep -qx "line under the rules: 47-41 5-10 41x5" <<<"$out" || fail "the line under the rules: $out"
out=$(run "W:WK46,K47:BK5:H2") || fail "text, H2"
grep -qx "under the rules: cursed win: won in unlimited play, drawn by the 5-move rule (fmjd, clock 2 of 4)" \
  <<<"$out" || fail "cursed win at H2: $out"
# the moves grouped by category, with the clock after each: 47-x keeps the win (cursed now)
grep -A1 -x "  cursed win" <<<"$out" | grep -qE "^    47-[0-9]+ +clock 3$" || fail "cursed moves: $out"
grep -A1 -x "  draw" <<<"$out" | grep -qE "^    46-[0-9]+ +clock 3$" || fail "drawing moves: $out"
out=$(run "B:WK41,K46:BK5:H3") || fail "text, blessed loss"
grep -qx "under the rules: blessed loss: lost in unlimited play, drawn by the 5-move rule (fmjd, clock 3 of 4)" \
  <<<"$out" || fail "blessed loss at H3: $out"

# JSON: the rules object; --clock overrides H. (One python3 for every check: it starts slowly.)
run --json --clock 2 "W:WK46,K47:BK5:H0" >"$tmp/clock2.json" || fail "json --clock 2"
run --json "W:WK46,K47:BK5:H1" >"$tmp/h1.json" || fail "json H1"
"$probe" --tables "$tmp/plain" --json --rules fmjd "W:WK46,K47:BK5" >"$tmp/missing.json" 2>/dev/null
python3 - "$tmp" <<'PY' || fail "JSON under the rules"
import json, sys
d = json.load(open(sys.argv[1] + "/clock2.json"))
r = d["rules"]
got = tuple(r[k] for k in ("name", "rule", "category", "wdl", "unlimited", "plies", "limit", "clock"))
assert got == ("fmjd", "5-move", "cursed-win", "draw", "win", 3, 4, 2), got
assert (d["wdl"], d["dtw"]) == ("win", 3), "the unlimited keys changed"
m = r["moves"][0]
assert (m["move"], m["category"], m["plies"], m["clock"]) == ("47-41", "cursed-win", None, 3), m
d = json.load(open(sys.argv[1] + "/h1.json"))
r = d["rules"]
assert (r["category"], r["clock"], r["moves"][0]["plies"]) == ("win", 1, 3), r
# the line under the rules ends the game: its last move takes the last piece
assert r["line"] == ["47-41", "5-10", "41x5"] and len(r["line"]) == r["plies"], r["line"]
d = json.load(open(sys.argv[1] + "/missing.json"))
assert "no rule tables" in d["error"], d
PY

# Unchanged without rules: --rules none on this set is the plain set's output, text and JSON.
for fen in "W:WK46,K47:BK5:H2" "B:WK41,K46:BK5" "W:W28:BK5"; do
  for form in "" --json; do
    a=$(run $form --rules none "$fen") || fail "--rules none $form $fen"
    b=$("$probe" --tables "$tmp/plain" $form "$fen") || fail "plain set $form $fen"
    [ "$a" = "$b" ] || fail "--rules none $form differs from a set without rules: $a // $b"
  done
done

# Errors: one line, exit 1 for the input, 2 for usage.
expect_error() { # status words... -- arguments
  local want=$1; shift
  local words=()
  while [ "$1" != "--" ]; do words+=("$1"); shift; done
  shift
  err=$("$probe" "$@" 2>&1 >/dev/null); rc=$?
  [ "$rc" = "$want" ] || fail "$*: exit $rc, not $want ($err)"
  [ "$(wc -l <<<"$err")" -le 2 ] || fail "$*: more than a line: $err"
  for w in "${words[@]}"; do grep -qF -- "$w" <<<"$err" || fail "$*: '$err' lacks '$w'"; done
}
expect_error 1 "bad FEN" "H field" "not a clock" -- --tables "$tmp/rules" "W:WK46,K47:BK5:Hx"
expect_error 1 "second H field" -- --tables "$tmp/rules" "W:WK46,K47:BK5:H1:H2"
expect_error 2 "--rules is fmjd, wcdf, fmjd64 or none" -- --tables "$tmp/rules" --rules fide "W:WK46:BK5"
expect_error 2 "--clock" -- --tables "$tmp/rules" --clock -3 "W:WK46:BK5"
expect_error 1 "no rule tables" "KKvK.fmjd" "--metrics wld,dtw,rules" -- --tables "$tmp/plain" \
  --rules fmjd "W:WK46,K47:BK5"
# English under the WCDF's 40-move rule (80 plies, the real limit): two kings need 33 plies
# against the king in the double corner, so from clock 48 the win is cursed; the international
# rule set is refused there.
"$gen" --variant english --pieces 3 --material KKvK --out "$tmp/english" --metrics wld,dtw,rules \
  --quiet --threads 2 || fail "dtbgen english with rules"
out=$("$probe" --tables "$tmp/english" "W:WK1,K2:BK14:H47") || fail "english, H47"
grep -qx "under the rules: win, 33 plies to the next reset of the 40-move count (wcdf, clock 47 of 80)" \
  <<<"$out" || fail "english win at H47: $out"
out=$("$probe" --tables "$tmp/english" "W:WK1,K2:BK14:H48") || fail "english, H48"
grep -qx "under the rules: cursed win: won in unlimited play, drawn by the 40-move rule (wcdf, clock 48 of 80)" \
  <<<"$out" || fail "english cursed win at H48: $out"
expect_error 1 "answered under wcdf" -- --tables "$tmp/english" --rules fmjd "W:WK1,K2:BK14"
echo "cli_dtbprobe_rules: ok"
