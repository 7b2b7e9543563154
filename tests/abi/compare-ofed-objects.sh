#!/bin/sh
# tests/abi/compare-ofed-objects.sh dat|dat2 TEST_SOURCE_DIR OFED_INCLUDE
#
# Manual check of our headers against real consumers: compiles every C file
# of OFED's own test programs (dtest and friends, dapltest) under
# TEST_SOURCE_DIR once against OFED's headers (OFED_INCLUDE/dat or
# OFED_INCLUDE/dat2) and once against ours (include/dat or include/dat2),
# and requires the machine code and data of each pair of objects to be
# identical.
#   dat:  TEST_SOURCE_DIR = compat-dapl 1.2.19's src/test, OFED_INCLUDE = its
#         src/dat/include
#   dat2: TEST_SOURCE_DIR = dapl 2.x's test, OFED_INCLUDE = /usr/include
#         (Debian's libdapl-dev) or dapl's dat/include
# Not part of `make check`: those sources are not in this repository.
# Windows and kernel (kdapl) files are skipped.  Exits non-zero if a file
# compiles against one header set only or any pair differs.

set -u

if [ $# -ne 3 ] || { [ "$1" != dat ] && [ "$1" != dat2 ]; } || [ ! -d "$2" ] || [ ! -f "$3/$1/udat.h" ]; then
    echo "usage: $0 dat|dat2 TEST_SOURCE_DIR OFED_INCLUDE   (OFED_INCLUDE/<face>/udat.h must exist)" >&2
    exit 2
fi
FACE=$1
SRC=$(cd "$2" && pwd)
OFED=$(cd "$3" && pwd)
OURS=$(cd "$(dirname "$0")/../../include" && pwd)
CC=${CC:-cc}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofedobj.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

# dapltest's own headers
DT_INC=$(find "$SRC" -type d \( -path '*/dapltest/include' -o -path '*/dapltest/mdep/linux' \) | sed 's/^/-I/' | tr '\n' ' ')

# contents FILE.o: disassembly and initialised data, without the file name line
contents() {
    objdump -d -s -j .text -j .rodata -j .data "$1" 2>/dev/null | tail -n +4
}

# compile SIDE INCLUDE_DIR UNIT: 0 if it compiled
compile() {
    # shellcheck disable=SC2086
    $CC -std=gnu99 -w -O2 -I"$2" $DT_INC -c "$3" -o "$TMP/$1.o" 2>"$TMP/$1.log"
}

pass=0
fail=0
skip=0
for unit in $(find "$SRC" -name '*.c' ! -path '*windows*' ! -path '*kdapl*' | LC_ALL=C sort); do
    name=${unit#"$SRC"/}
    compile ofed "$OFED" "$unit"
    ofed_rc=$?
    compile ours "$OURS" "$unit"
    ours_rc=$?
    if [ $ofed_rc -ne 0 ] && [ $ours_rc -ne 0 ]; then
        skip=$((skip + 1))      # not a stand-alone unit (included by another file)
        continue
    fi
    if [ $ofed_rc -ne $ours_rc ]; then
        echo "FAIL $name compiles against one header set only"
        sed 's/^/    /' "$TMP/ours.log" | head -n 10
        fail=$((fail + 1))
        continue
    fi
    contents "$TMP/ofed.o" >"$TMP/ofed.txt"
    contents "$TMP/ours.o" >"$TMP/ours.txt"
    if cmp -s "$TMP/ofed.txt" "$TMP/ours.txt"; then
        pass=$((pass + 1))
    else
        echo "FAIL $name: code or data differ"
        diff "$TMP/ofed.txt" "$TMP/ours.txt" | head -n 10 | sed 's/^/    /'
        fail=$((fail + 1))
    fi
done
echo "$FACE: $pass files with identical code and data, $fail failed, $skip not stand-alone (skipped by both)"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
