#!/bin/sh
# tests/abi/compare-ofed-objects.sh DAPL_SOURCE_DIR [OFED_INCLUDE]
#
# Manual check of the DAT 2.0 headers against real consumers: compiles OFED
# dapl 2.x's own test programs (dtest, dtestx, dtestcm, dtestsrq and the
# dapltest units, from a dapl source tree you supply: DAPL_SOURCE_DIR/test)
# once against OFED's headers (OFED_INCLUDE/dat2, default /usr/include,
# package libdapl-dev) and once against our include/dat2, and requires the
# machine code and data of each pair of objects to be identical.  Not part
# of `make check`: the dapl sources are not in this repository.
# Exits non-zero if a program does not compile or any pair differs.

set -u

if [ $# -lt 1 ] || [ ! -d "$1/test/dtest" ]; then
    echo "usage: $0 DAPL_SOURCE_DIR [OFED_INCLUDE]   (DAPL_SOURCE_DIR/test/dtest must exist)" >&2
    exit 2
fi
SRC=$(cd "$1" && pwd)
OFED=${2:-/usr/include}
OURS=$(cd "$(dirname "$0")/../../include" && pwd)
CC=${CC:-cc}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofedobj.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

DT="$SRC/test/dapltest"
UNITS="$SRC/test/dtest/dtest.c $SRC/test/dtest/dtestx.c $SRC/test/dtest/dtestcm.c $SRC/test/dtest/dtestsrq.c
$DT/dt_cmd.c $DT/dt_common.c $DT/dt_test.c $DT/dt_udapl.c $DT/mdep/linux/dapl_mdep_user.c"

# contents FILE.o: disassembly and initialised data, without the file name line
contents() {
    objdump -d -s -j .text -j .rodata -j .data "$1" | tail -n +4
}

fail=0
for unit in $UNITS; do
    name=${unit#"$SRC"/}
    for side in ofed ours; do
        if [ $side = ofed ]; then inc=$OFED; else inc=$OURS; fi
        if ! $CC -std=gnu99 -w -O2 -DDAT_EXTENSIONS -I"$inc" -I"$DT/include" -I"$DT/mdep/linux" \
            -c "$unit" -o "$TMP/$side.o" 2>"$TMP/log"; then
            echo "FAIL $name does not compile against the $side headers"
            sed 's/^/    /' "$TMP/log" | head -n 10
            fail=$((fail + 1))
            continue 2
        fi
        contents "$TMP/$side.o" >"$TMP/$side.txt"
    done
    if cmp -s "$TMP/ofed.txt" "$TMP/ours.txt"; then
        echo "PASS $name: identical code and data with OFED's and our headers"
    else
        echo "FAIL $name: code or data differ"
        diff "$TMP/ofed.txt" "$TMP/ours.txt" | head -n 10 | sed 's/^/    /'
        fail=$((fail + 1))
    fi
done
[ "$fail" -eq 0 ]
