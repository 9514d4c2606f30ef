#!/bin/bash
# dtbprobe verify end to end: exit statuses, text, JSON and the HTML report.
# Builds the english 2-piece tables with dtbgen in a temporary directory, verifies a small claims
# file (claims that hold, a false one, an "exactly" claim, an exception, a missing table), and
# checks with python3 that the HTML is well-formed (balanced tags; every <svg> parses as XML) and
# holds one diagram per position the JSON report lists, each with one disc per piece.
# usage: test_claims_html.sh DTBPROBE DTBGEN
set -u
# python3 is the one ctest names (DTB_PYTHON, the system's): a pyenv shim first on PATH
# costs 0.4 s a start, and these checks start it many times.
python3() { command "${DTB_PYTHON:-python3}" "$@"; }
probe=$(realpath "$1")
gen=$(realpath "$2")
command -v python3 > /dev/null || { echo "python3 not found: skipped"; exit 77; }
tmp=$(mktemp -d /tmp/dtb_claims_html_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$gen" --variant english --pieces 2 --out "$tmp/tables" --quiet --threads 1 || fail "dtbgen"

cat > "$tmp/a.claims" <<'EOF'
variant english

claim lasker-white
source Lasker, diagram 88
statement White to move wins <and> "quotes" & ampersands are escaped.
position W:WK32:BK26
assert win

claim kvk-all-draw
source a false claim
statement King against king is always a draw.
material KvK
side white
assert all draw

claim kvk-exactly
source tests/data/endgames.md
statement 230 wins.
material KvK
side white
assert exactly 230 win

claim kvk-exception
source by hand
statement The king on 1 takes the king on 6.
material KvK
side white
filter white king on 1
filter black king on 6
except W:WK1:BK6
assert none win

claim missing-table
source endgames.md
statement Three kings against two need 5-piece tables.
position W:WK22,K23,K24:BK31,K32
assert win
EOF

# exit statuses: 2 usage, 1 unreadable claims, 1 a failing claim, 0 all hold
"$probe" verify --frobnicate > /dev/null 2>&1; [ $? -eq 2 ] || fail "unknown option is not exit 2"
"$probe" verify --examples x "$tmp/a.claims" > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad --examples is not exit 2"
"$probe" verify --tables "$tmp/tables" "$tmp/none.claims" > /dev/null 2>&1; [ $? -eq 1 ] || fail "missing file is not exit 1"
printf 'variant english\nclaim x\nsource s\nassert win\n' > "$tmp/bad.claims"
"$probe" verify --tables "$tmp/tables" "$tmp/bad.claims" > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "bad file is not exit 1"
grep -q "bad.claims:2:" "$tmp/err" || fail "parse error without file:line: $(cat "$tmp/err")"
"$probe" verify --tables "$tmp/tables" --claim lasker-white "$tmp/a.claims" > "$tmp/one.txt" || fail "a holding claim is not exit 0"
grep -q "^holds lasker-white" "$tmp/one.txt" || fail "text report: $(cat "$tmp/one.txt")"
"$probe" verify --tables "$tmp/tables" --claim nosuch "$tmp/a.claims" > /dev/null 2>&1; [ $? -eq 1 ] || fail "unknown --claim is not exit 1"
(cd "$tmp" && mkdir -p tables/claims && cp a.claims tables/claims/ && "$probe" verify --claim lasker-white > default.txt) \
    || fail "default claims directory and tables (tables/claims, tables) not used"

"$probe" verify --tables "$tmp/tables" --examples 3 "$tmp/a.claims" > "$tmp/report.txt"
[ $? -eq 1 ] || fail "a failing claim is not exit 1"
grep -q "^FAILS kvk-all-draw" "$tmp/report.txt" || fail "no FAILS line"
grep -q "338 of 992 positions are not a draw" "$tmp/report.txt" || fail "no reason with counts"
grep -q "^not checked missing-table" "$tmp/report.txt" || fail "no not-checked line"
grep -q "not checked: tables absent: .*\(KKKvKK\|KKvKKK\)" "$tmp/report.txt" || fail "the absent table is not named"
grep -q "^5 claims: 3 hold, 1 fail, 0 missing data, 1 not checked (tables absent)" "$tmp/report.txt" \
    || fail "summary: $(tail -1 "$tmp/report.txt")"
# absent tables fail the run unless --skip-absent says to go on (a damaged one always fails)
"$probe" verify --tables "$tmp/tables" --claim missing-table "$tmp/a.claims" > /dev/null
[ $? -eq 1 ] || fail "an absent table is not exit 1 without --skip-absent"
"$probe" verify --tables "$tmp/tables" --claim missing-table --claim lasker-white --skip-absent \
    "$tmp/a.claims" > "$tmp/skip.txt" || fail "--skip-absent: an absent table is not exit 0"
grep -q "^2 claims: 1 hold, 0 fail, 0 missing data, 1 not checked" "$tmp/skip.txt" || fail "skip: $(tail -1 "$tmp/skip.txt")"
"$probe" verify --tables "$tmp/tables" --skip-absent "$tmp/a.claims" > /dev/null
[ $? -eq 1 ] || fail "--skip-absent hides a failing claim"

"$probe" verify --tables "$tmp/tables" --examples 3 --json --html "$tmp/r.html" "$tmp/a.claims" > "$tmp/r.json"
[ $? -eq 1 ] || fail "--json --html: not exit 1"

python3 - "$tmp/r.json" "$tmp/r.html" <<'EOF' || exit 1
import json, re, sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

report = json.load(open(sys.argv[1]))
claims = report["claims"]
assert [c["verdict"] for c in claims] == ["holds", "fails", "holds", "holds", "not checked"], claims
assert (report["holds"], report["fails"], report["missing_data"], report["not_checked"]) == (3, 1, 0, 1)
assert all(c["notation"] == "numeric" for c in claims)
false = claims[1]
assert false["examples_total"] == 338 and len(false["examples"]) == 3, false
assert claims[2]["examples_are"] == "instances" and claims[2]["examples_total"] == 230

# positions the report lists, in order: subject, longest win, exceptions, examples; a claim
# without data shows its position when it has one. The HTML groups the claims by verdict,
# failing first, then missing data, holding, not checked (issue 39): the JSON's claims in that
# order.
rank = {"fails": 0, "missing data": 1, "holds": 2, "not checked": 3}
expected = []
for c in sorted(claims, key=lambda c: rank[c["verdict"]]):
    if c["verdict"] in ("missing data", "not checked"):
        if "position" in c:
            expected.append(c["position"])
        continue
    if c["subject"]:
        expected.append(c["subject"]["fen"])
    if c["longest_win"]:
        expected.append(c["longest_win"]["fen"])
    expected += [p["fen"] for p in c["exceptions"]]
    expected += [p["fen"] for p in c["examples"]]

VOID = {"meta", "br", "hr", "img", "input", "link"}
class Check(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.figures, self.svgs_in_figure = [], [], []
    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        self.stack.append(tag)
        if tag == "figure":
            self.figures.append(dict(attrs)["data-fen"])
            self.svgs_in_figure.append(0)
        if tag == "svg":
            assert "figure" in self.stack, "svg outside a figure"
            self.svgs_in_figure[-1] += 1
    def handle_startendtag(self, tag, attrs):
        pass
    def handle_endtag(self, tag):
        if tag in VOID:
            return
        assert self.stack and self.stack[-1] == tag, "unbalanced </%s> in %s" % (tag, self.stack[-3:])
        self.stack.pop()

text = open(sys.argv[2], encoding="utf-8").read()
assert text.startswith("<!DOCTYPE html>")
p = Check()
p.feed(text)
p.close()
assert p.stack == [], "unclosed: %s" % p.stack
assert p.figures == expected, "figures %s != listed positions %s" % (p.figures, expected)
assert all(n == 1 for n in p.svgs_in_figure), p.svgs_in_figure

svgs = re.findall(r"<svg\b.*?</svg>", text, re.S)
assert len(svgs) == len(expected), (len(svgs), len(expected))
ns = "{http://www.w3.org/2000/svg}"
for fen, s in zip(expected, svgs):
    root = ET.fromstring(s)  # well-formed XML
    pieces = sum(len([x for x in part.split(",") if x.strip()]) for part in fen.split(":")[1:])
    discs = [c for c in root.iter(ns + "circle") if c.get("fill") != "none"]
    assert len(discs) == pieces, (fen, len(discs))
    kings = fen.count("K")
    rings = [c for c in root.iter(ns + "circle") if c.get("fill") == "none"]
    assert len(rings) == kings, (fen, len(rings))
    numbers = [t for t in root.iter(ns + "text") if t.text and t.text.isdigit()]
    assert len(numbers) == 32, len(numbers)
assert "&lt;and&gt; &quot;quotes&quot; &amp; ampersands" in text
# The summary and the contents come before the first claim; the contents link every claim,
# failing ones first; the page fits a narrow screen (viewport, boards that shrink).
summary = text.index('class="summary"')
assert summary < text.index("<nav>") < text.index('<section class="claim"')
assert "5 claims: 3 hold, 1 fail, 0 missing data, 1 not checked" in text[summary:summary + 200]
nav = text[text.index("<nav>"):text.index("</nav>")]
links = re.findall(r'<a href="#([^"]+)">', nav)
assert links == ["kvk-all-draw", "lasker-white", "kvk-exactly", "kvk-exception", "missing-table"], links
sections = re.findall(r'<section class="claim" id="([^"]+)"', text)
assert sections == links, sections
assert 'name="viewport"' in text and "svg.board{max-width:100%" in text
print("html: %d diagrams, well-formed" % len(svgs))
EOF

# Claims under the move-count rules (clock N): the rule set and clock in text, JSON and HTML,
# each position's answer under the rules; on a set without rule tables, not checked (absent).
"$gen" --variant international --pieces 2 --out "$tmp/intl" --metrics wld,dtw,rules --quiet --threads 1 \
    || fail "dtbgen international with rules"
"$gen" --variant international --pieces 2 --out "$tmp/intl-norules" --quiet --threads 1 || fail "dtbgen international"
cat > "$tmp/rules.claims" <<'EOF'
variant international

claim kvk-clock-9
source FMJD 6.4
statement The king on 1 takes the king on 7 at once: won with one ply left of the count.
position W:WK1:BK7
clock 9
assert win

claim kvk-clock-10
source FMJD 6.4
statement At the limit the capture comes too late: a cursed win.
position W:WK1:BK7
clock 10
assert cursed-win
EOF
"$probe" verify --tables "$tmp/intl" "$tmp/rules.claims" > "$tmp/rules.txt" || fail "rule claims: $(cat "$tmp/rules.txt")"
[ "$(grep -c "^  rules: fmjd, clock" "$tmp/rules.txt")" = 2 ] || fail "no rules line: $(cat "$tmp/rules.txt")"
grep -q "under fmjd at clock 10 (5-move rule, limit 10): cursed-win" "$tmp/rules.txt" || fail "no rule answer"
"$probe" verify --tables "$tmp/intl" --json --html "$tmp/rules.html" "$tmp/rules.claims" > "$tmp/rules.json" \
    || fail "rule claims --json --html"
python3 - "$tmp/rules.json" "$tmp/rules.html" "$tmp/r.json" <<'EOF' || exit 1
import json, sys
claims = json.load(open(sys.argv[1]))["claims"]
assert [(c["rules"], c["clock"]) for c in claims] == [("fmjd", 9), ("fmjd", 10)], claims
r = claims[1]["subject"]["rules"]
assert (r["category"], r["limit"], r["clock"], r["rule"]) == ("cursed-win", 10, 10, "5-move"), r
assert claims[0]["subject"]["rules"]["plies"] == 1
# claims without a clock keep their JSON as it was
old = json.load(open(sys.argv[3]))["claims"]
assert all("rules" not in c and "clock" not in c for c in old)
html = open(sys.argv[2]).read()
assert "<dt>rules</dt><dd>fmjd, clock 10" in html and "cursed-win" in html
EOF
"$probe" verify --tables "$tmp/intl-norules" "$tmp/rules.claims" > "$tmp/norules.txt"
[ $? -eq 1 ] || fail "absent rule tables are not exit 1 without --skip-absent"
grep -q "not checked: tables absent: .*KvK.*fmjd" "$tmp/norules.txt" || fail "absent rule table not named: $(cat "$tmp/norules.txt")"
"$probe" verify --tables "$tmp/intl-norules" --skip-absent "$tmp/rules.claims" > /dev/null \
    || fail "--skip-absent: absent rule tables are not exit 0"

# Russian: claims may give squares in either notation; the report is in the variant's (names,
# captures with ':'), or in numbers with --notation numeric, text, JSON and HTML alike.
"$gen" --variant russian --pieces 2 --out "$tmp/ru" --quiet --threads 1 || fail "dtbgen russian"
cat > "$tmp/ru.claims" <<'EOF'
variant russian

claim named
source by hand
statement The king on c1 takes the king on e3 at once.
position W:WKc1:BKe3
assert win within 1 plies

claim numbered
source by hand
statement The same position in numbers.
position W:WK30:BK23
assert win within 1 plies

claim named-filter
source by hand
statement A king on a1 or c1 against one on h8, white to move: only a1 loses (its every move
statement is taken).
material KvK
side white
filter white king on a1,c1
filter black king on h8
assert exactly 1 loss
EOF
"$probe" verify --tables "$tmp/ru" "$tmp/ru.claims" > "$tmp/ru.txt" || fail "russian claims: $(cat "$tmp/ru.txt")"
[ "$(grep -c "^  position: russian W:WKc1:BKe3$" "$tmp/ru.txt")" = 2 ] || fail "positions not shown in names"
grep -q "line: c1:[f-h][4-6]$" "$tmp/ru.txt" || fail "line not in names: $(grep line: "$tmp/ru.txt")"
grep -q "white kings on a1,c1; black kings on h8" "$tmp/ru.txt" || fail "filter not in names"
grep -q "^  matched: 2 positions" "$tmp/ru.txt" || fail "named filter squares: $(grep matched "$tmp/ru.txt")"
"$probe" verify --tables "$tmp/ru" --notation numeric --json --html "$tmp/ru.html" "$tmp/ru.claims" > "$tmp/ru.json" \
    || fail "russian --notation numeric"
python3 - "$tmp/ru.json" "$tmp/ru.html" <<'EOF' || exit 1
import json, re, sys
claims = json.load(open(sys.argv[1]))["claims"]
assert [c["position"] for c in claims[:2]] == ["W:WK30:BK23"] * 2, claims
assert all(c["notation"] == "numeric" for c in claims)
assert re.fullmatch(r"30x(26|19|12)", claims[0]["subject"]["line"]), claims[0]["subject"]
assert claims[2]["filters"][0] == "white kings on 29,30", claims[2]["filters"]
html = open(sys.argv[2]).read()
assert ">29</text>" in html and ">a1</text>" not in html
EOF
"$probe" verify --tables "$tmp/ru" --html "$tmp/ru2.html" "$tmp/ru.claims" > /dev/null || fail "russian html"
grep -q ">a1</text>" "$tmp/ru2.html" || fail "board labels not in names"
"$probe" verify --tables "$tmp/ru" --notation chess "$tmp/ru.claims" > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad --notation is not exit 2"
# bad names: one line naming the token, with file and line
for bad in i9 a8; do
  printf 'variant russian\nclaim x\nsource s\nstatement s\nmaterial KvK\nfilter white king on %s\nassert all draw\n' "$bad" > "$tmp/badname.claims"
  "$probe" verify --tables "$tmp/ru" "$tmp/badname.claims" > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "bad square $bad is not exit 1"
  grep -q "badname.claims:6: '$bad'" "$tmp/err" || fail "bad square $bad: $(cat "$tmp/err")"
  [ "$(wc -l < "$tmp/err")" = 1 ] || fail "bad square $bad: more than one line"
done
printf 'variant russian\nclaim x\nsource s\nstatement s\nposition W:WKi9:BKh8\nassert draw\n' > "$tmp/badfen.claims"
"$probe" verify --tables "$tmp/ru" "$tmp/badfen.claims" > /dev/null 2> "$tmp/err"; [ $? -eq 1 ] || fail "bad FEN square is not exit 1"
grep -q "badfen.claims:5: .*'i9'" "$tmp/err" || fail "bad FEN square: $(cat "$tmp/err")"
echo "ok"

