#!/bin/sh
# Builds examples/pingpong.c the way a user would against an installed libdat, then runs its
# two-process send/recv + RDMA write/read exchange over shm (data verified by the example),
# and checks that the installed bin/datinfo opens the shm IA.
# Also checks the installed man pages: one per exported function (or a `.so` link whose target
# is installed too), dat.conf(5) and libdat(7), and that man(1) renders one.
# Runs the installed datperf and datperf2 (DAT 2.0) briefly over shm.
# The DAT 2.0 face too: tests/dat2/smoke.c built against the installed <dat2/udat.h> and
# libdat2.so.2 (pkg-config dat2 / -ldat2), run over shm.
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
    flags2=$(pkg-config --cflags --libs dat2)
    echo "pkg-config --cflags --libs dat2: $flags2"
    # shellcheck disable=SC2086
    $CC -std=c11 -Wall -Wextra -Werror "$root/tests/dat2/smoke.c" $flags2 -o "$out/smoke2"
    libdir="$stage$prefix/lib"
    bindir="$stage$prefix/bin"
    ;;
system)
    ldconfig 2>/dev/null || true
    $CC -std=c99 -Wall -Wextra -Werror "$root/examples/pingpong.c" -ldat -o "$out/pingpong"
    $CC -std=c11 -Wall -Wextra -Werror "$root/tests/dat2/smoke.c" -ldat2 -o "$out/smoke2"
    libdir=""
    bindir=/usr/local/bin
    ;;
*) echo "usage: $0 staged STAGE PREFIX | system" >&2; exit 2 ;;
esac

# The man pages under MANDIR (the installed tree, so `.so man3/x.3` resolves against it).
check_man() {
    mandir=$1 missing=0
    for f in $(cat "$root/crates/dat12/exports.txt"); do
        page="$mandir/man3/$f.3"
        if [ ! -f "$page" ]; then
            echo "FAIL no installed man page $page"; missing=$((missing + 1)); continue
        fi
        target=$(sed -n '1s/^\.so //p' "$page")
        if [ -n "$target" ] && [ ! -f "$mandir/$target" ]; then
            echo "FAIL $page links to $target, which is not installed"; missing=$((missing + 1))
        fi
    done
    for p in man5/dat.conf.5 man7/libdat.7; do
        [ -f "$mandir/$p" ] || { echo "FAIL no installed man page $mandir/$p"; missing=$((missing + 1)); }
    done
    [ "$missing" -eq 0 ] || exit 1
    echo "ok   man pages installed in $mandir for all $(wc -w <"$root/crates/dat12/exports.txt") functions, dat.conf(5), libdat(7)"
    if command -v man >/dev/null 2>&1; then
        (cd "$mandir" && man -l man3/dat_lmr_free.3 2>/dev/null) | grep -q "dat_lmr_free" ||
            { echo "FAIL man -l cannot render the installed dat_lmr_free(3) (a .so link to dat_lmr_create(3))"; exit 1; }
        echo "ok   man -l renders the installed dat_lmr_free(3) through its .so link"
    fi
}
case "$1" in
staged) check_man "$stage$prefix/share/man" ;;
system) check_man "${PREFIX:-/usr/local}/share/man" ;;
esac
readelf -d "$out/pingpong" | grep -q 'NEEDED.*libdat.so.1' && echo "ok   the program needs libdat.so.1"
PINGPONG="$out/pingpong" DAT_LIB_DIR="$libdir" sh "$root/examples/run-pingpong.sh" shm
# The installed datinfo opens the shm IA (exit status 0 only when it opens).
datinfo="$bindir/datinfo"
if "$datinfo" -v shm | grep -q '^status: *usable$'; then
    echo "ok   $datinfo -v shm: usable"
else
    echo "FAIL $datinfo -v shm: not usable (or not installed)"; exit 1
fi
# the installed datperf finds the installed libdat.so.1 by itself ($ORIGIN/../lib)
readelf -d "$bindir/datperf" | grep -q 'NEEDED.*libdat.so.1' && echo "ok   datperf needs libdat.so.1"
DATPERF_SMOKE_TESTS=send_lat sh "$root/tests/tools/datperf-smoke.sh" "$bindir"
# datperf2 (datperf on the DAT 2.0 face) likewise finds the installed libdat2.so.2
readelf -d "$bindir/datperf2" | grep -q 'NEEDED.*libdat2.so.2' ||
    { echo "FAIL the installed datperf2 does not need libdat2.so.2"; exit 1; }
echo "ok   datperf2 needs libdat2.so.2"
DATPERF=datperf2 DATPERF_SMOKE_TESTS=send_lat sh "$root/tests/tools/datperf-smoke.sh" "$bindir" || exit 1
# The DAT 2.0 program runs on the installed libdat2.so.2.
readelf -d "$out/smoke2" | grep -q 'NEEDED.*libdat2.so.2' ||
    { echo "FAIL the DAT 2.0 program does not need libdat2.so.2"; exit 1; }
echo "ok   the DAT 2.0 program needs libdat2.so.2"
if ! LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/smoke2" -P shm >"$out/smoke2.log" 2>&1; then
    sed 's/^/  /' "$out/smoke2.log"; echo "FAIL the DAT 2.0 program on the installed libdat2.so.2"; exit 1
fi
sed 's/^/  /' "$out/smoke2.log"
[ -f "${stage:-}${prefix:-${PREFIX:-/usr/local}}/include/dat2/udat.h" ] ||
    { echo "FAIL include/dat2 not installed"; exit 1; }
echo "ok   include/dat2 installed beside include/dat"
echo "5 passed, 0 failed"
