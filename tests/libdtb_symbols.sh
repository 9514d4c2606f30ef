#!/usr/bin/env bash
# libdtb.so exports exactly the functions probe/dtb.h declares, and carries none of the code that
# engines never call (the claims verifier, the generator, the command lines' parser).
#
# The expected list is read from the header with a pattern of its own (a declaration at the start
# of a line, returning a type, naming a dtb_ function, not static inline), independent of the
# version script the build makes.
#
# Usage: libdtb_symbols.sh PATH/TO/libdtb.so PATH/TO/dtb.h   (ctest passes both)
set -u
lib=${1:?usage: libdtb_symbols.sh LIBDTB DTB_H}
header=${2:?usage: libdtb_symbols.sh LIBDTB DTB_H}
fail() { echo "libdtb_symbols: $*" >&2; exit 1; }

declared=$(grep -E '^(const )?[a-z0-9_]+( \*| )+dtb_[a-z0-9_]+\(' "$header" | grep -v '^static' |
           sed -E 's/^.*[ *](dtb_[a-z0-9_]+)\(.*/\1/' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWDRB]$/ {print $3}' | sed 's/@.*//' | sort -u)
[ -n "$declared" ] || fail "no declarations found in $header"
[ -n "$exported" ] || fail "no symbols exported by $lib"

extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$extra" ] || fail "exported but not in dtb.h: $(echo $extra)"
[ -z "$missing" ] || fail "declared in dtb.h but not exported: $(echo $missing)"

# Not even as local symbols: code of other layers linked in by mistake.
inside=$(nm "$lib" 2>/dev/null | awk '{print $NF}' | grep -E '^dtb_(claims|build|solve|cli|compact|table_write)' | head -5)
[ -z "$inside" ] || fail "carries code of other layers: $(echo $inside)"
echo "libdtb_symbols: $(echo "$exported" | wc -l) functions exported, all of them in dtb.h"
