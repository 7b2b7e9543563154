#!/bin/sh
# Checks that a shared library exports exactly the functions in a list, each as name@@NODE,
# defines the version node, and carries the expected SONAME.
# usage: check-exports.sh LIB EXPORTS_FILE VERSION_NODE SONAME
set -eu
lib=$1 list=$2 node=$3 soname=$4
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0 pass=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; }

# Defined dynamic symbols (not UND), with their version suffix.
readelf --dyn-syms -W "$lib" | awk '$7 != "UND" && $7 != "ABS" && $8 != "" && ($4 == "FUNC" || $4 == "OBJECT") {print $8}' | sort > "$tmp/defined"
sort "$list" | sed "s/\$/@@$node/" > "$tmp/want"
if diff -u "$tmp/want" "$tmp/defined" > "$tmp/diff"; then ok "exports exactly $(wc -l < "$tmp/want") functions, each @@$node"; else bad "export set differs:"; cat "$tmp/diff"; fi

if readelf -V -W "$lib" | grep -q "Name: $node\$\|Name: $node "; then ok "version node $node defined"; else bad "version node $node missing"; fi
if readelf -d -W "$lib" | grep -q "Library soname: \[$soname\]"; then ok "SONAME $soname"; else bad "SONAME is not $soname"; fi
funcs=$(readelf --dyn-syms -W "$lib" | awk '$7 != "UND" && $4 == "FUNC"' | wc -l)
[ "$funcs" -eq "$(wc -l < "$list")" ] && ok "$funcs defined functions" || bad "$funcs defined functions"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
