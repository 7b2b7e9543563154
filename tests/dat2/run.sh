#!/bin/sh
# tests/dat2/run.sh INCLUDE_DIR LIB_DIR OUT_DIR [IA_NAME]
# Builds tests/dat2/smoke.c, a DAT 2.0 program (<dat2/udat.h>, -ldat2), against INCLUDE_DIR and
# the libdat2.so.2 in LIB_DIR, and runs it on IA_NAME (default shm): server and client processes,
# reject with private data, send/recv, RDMA write/read, DAT 2.0 events and return codes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
inc=$1 lib=$(cd "$2" && pwd) out=$3 ia=${4:-shm}
mkdir -p "$out"
${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -Werror -I"$inc" "$here/smoke.c" -L"$lib" -Wl,-rpath,"$lib" -ldat2 \
    -o "$out/smoke"
readelf -d "$out/smoke" | grep -q 'NEEDED.*libdat2.so.2' || { echo "FAIL smoke does not need libdat2.so.2"; exit 1; }
if "$out/smoke" -P "$ia"; then
    echo "1 passed, 0 failed"
else
    echo "FAIL tests/dat2/smoke.c on $ia"; echo "0 passed, 1 failed"; exit 1
fi
