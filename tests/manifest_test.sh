#!/usr/bin/env bash
# The writer's bytes against tables/MANIFEST (checksums of a full international 2..5 run): every
# international table of 2..3 pieces, generated afresh, must have its committed checksum. Fails when
# the solver, the index or the writer's compression settings change a byte without MANIFEST being
# regenerated (scripts/run.sh compares the whole 2..5 set).
#
# Usage: manifest_test.sh PATH/TO/dtbgen PATH/TO/MANIFEST   (ctest passes both)
set -u
dtbgen=${1:?usage: manifest_test.sh PATH/TO/dtbgen PATH/TO/MANIFEST}
manifest=${2:?usage: manifest_test.sh PATH/TO/dtbgen PATH/TO/MANIFEST}
manifest=$(cd "$(dirname "$manifest")" && pwd)/$(basename "$manifest") # read after the cd below
work=$(mktemp -d "${TMPDIR:-/tmp}/dtb_manifest.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

"$dtbgen" --variant international --pieces 3 --out "$work" --threads 2 --quiet || {
  echo "manifest_test: dtbgen failed" >&2; exit 1; }
cd "$work" || exit 1
made=$(ls international/*.wld international/*.dtw 2>/dev/null | wc -l)
listed=$(awk '!/^#/ && NF == 2' "$manifest" | while read -r sum f; do
  if [ -f "$f" ]; then echo "$sum  $f"; fi
done)
count=$(printf '%s\n' "$listed" | grep -c .)
if [ "$made" -eq 0 ] || [ "$count" -ne "$made" ]; then
  echo "manifest_test: $made tables made, $count of them listed in MANIFEST" >&2
  exit 1
fi
if ! printf '%s\n' "$listed" | sha256sum --quiet -c -; then
  echo "manifest_test: table bytes differ from tables/MANIFEST" >&2
  exit 1
fi
echo "manifest_test: $count tables match tables/MANIFEST"
