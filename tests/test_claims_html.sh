#!/bin/bash
# dtbprobe verify end to end: exit statuses, text, JSON and the HTML report.
# Builds the english 2-piece tables with dtbgen in a temporary directory, verifies a small claims
# file (claims that hold, a false one, an "exactly" claim, an exception, a missing table), and
# checks with python3 that the HTML is well-formed (balanced tags; every <svg> parses as XML) and
# holds one diagram per position the JSON report lists, each with one disc per piece.
# usage: test_claims_html.sh DTBPROBE DTBGEN
set -u
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
grep -q "^MISSING DATA missing-table" "$tmp/report.txt" || fail "no missing-data line"
grep -q "KKKvKK\|KKvKKK" "$tmp/report.txt" || fail "the missing table is not named"
grep -q "^5 claims: 3 hold, 1 fail, 1 missing data" "$tmp/report.txt" || fail "summary: $(tail -1 "$tmp/report.txt")"

"$probe" verify --tables "$tmp/tables" --examples 3 --json --html "$tmp/r.html" "$tmp/a.claims" > "$tmp/r.json"
[ $? -eq 1 ] || fail "--json --html: not exit 1"

python3 - "$tmp/r.json" "$tmp/r.html" <<'EOF' || exit 1
import json, re, sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

report = json.load(open(sys.argv[1]))
claims = report["claims"]
assert [c["verdict"] for c in claims] == ["holds", "fails", "holds", "holds", "missing data"], claims
assert (report["holds"], report["fails"], report["missing_data"]) == (3, 1, 1)
false = claims[1]
assert false["examples_total"] == 338 and len(false["examples"]) == 3, false
assert claims[2]["examples_are"] == "instances" and claims[2]["examples_total"] == 230

# positions the report lists, in order: subject, longest win, exceptions, examples; a claim
# without data shows its position when it has one
expected = []
for c in claims:
    if c["verdict"] == "missing data":
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
print("html: %d diagrams, well-formed" % len(svgs))
EOF
echo "ok"
