#!/bin/sh
# Builds examples/pingpong.c the way a user would against an installed libdat, then runs its
# two-process send/recv + RDMA write/read exchange over shm (data verified by the example),
# and runs the installed datperf briefly over shm.
#   check.sh staged STAGE_DIR PREFIX   # after make install DESTDIR=STAGE_DIR: pkg-config build
#   check.sh system                    # after make install into /usr/local: plain `cc app.c -ldat`
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
CC=${CC:-cc}
case "$1" in
staged)
    stage=$2 prefix=$3
    export PKG_CONFIG_PATH="$stage$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
    flags=$(pkg-config --cflags --libs dat)
    echo "pkg-config --cflags --libs dat: $flags"
    # shellcheck disable=SC2086
    $CC -std=c99 -Wall -Wextra -Werror "$root/examples/pingpong.c" $flags -o "$out/pingpong"
    libdir="$stage$prefix/lib"
    bindir="$stage$prefix/bin"
    ;;
system)
    ldconfig 2>/dev/null || true
    $CC -std=c99 -Wall -Wextra -Werror "$root/examples/pingpong.c" -ldat -o "$out/pingpong"
    libdir=""
    bindir=/usr/local/bin
    ;;
*) echo "usage: $0 staged STAGE PREFIX | system" >&2; exit 2 ;;
esac
readelf -d "$out/pingpong" | grep -q 'NEEDED.*libdat.so.1' && echo "ok   the program needs libdat.so.1"
PINGPONG="$out/pingpong" DAT_LIB_DIR="$libdir" sh "$root/examples/run-pingpong.sh" shm
# the installed datperf finds the installed libdat.so.1 by itself ($ORIGIN/../lib)
readelf -d "$bindir/datperf" | grep -q 'NEEDED.*libdat.so.1' && echo "ok   datperf needs libdat.so.1"
DATPERF_SMOKE_TESTS=send_lat sh "$root/tests/tools/datperf-smoke.sh" "$bindir"
echo "2 passed, 0 failed"
