#!/bin/sh
# Builds examples/pingpong.c the way a user would against an installed libdat, then runs its
# two-process send/recv + RDMA write/read exchange over shm (data verified by the example),
# and checks that the installed bin/datinfo opens the shm IA.
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
    ;;
system)
    ldconfig 2>/dev/null || true
    $CC -std=c99 -Wall -Wextra -Werror "$root/examples/pingpong.c" -ldat -o "$out/pingpong"
    libdir=""
    ;;
*) echo "usage: $0 staged STAGE PREFIX | system" >&2; exit 2 ;;
esac
readelf -d "$out/pingpong" | grep -q 'NEEDED.*libdat.so.1' && echo "ok   the program needs libdat.so.1"
PINGPONG="$out/pingpong" DAT_LIB_DIR="$libdir" sh "$root/examples/run-pingpong.sh" shm
# The installed datinfo opens the shm IA (exit status 0 only when it opens).
case "$1" in
staged) datinfo="$stage$prefix/bin/datinfo" ;;
*) datinfo=datinfo ;;
esac
if "$datinfo" -v shm | grep -q '^status: *usable$'; then
    echo "ok   $datinfo -v shm: usable"
else
    echo "FAIL $datinfo -v shm: not usable (or not installed)"; exit 1
fi
echo "2 passed, 0 failed"
