#!/bin/sh
# tests/c/run.sh [IA_NAME] [extra conformance-suite args...]
#
# Runs the C conformance suite (and the C++ smoke test) against IA_NAME (default "shm").
# DAT_FACE selects the face: dat (default, DAT 1.2: dat_conformance, cxx_smoke, libdat.so.1) or
# dat2 (DAT 2.0: dat2_conformance, cxx_smoke2, libdat2.so.2).
# Uses $DAT_CONFORMANCE_BIN_DIR (default build/tests/c) and builds it there with build.sh
# if the binaries are missing.  Library: $DAT_LIB_DIR (default build/lib), put first on
# LD_LIBRARY_PATH (so DAT_LIB_DIR=/usr/lib/x86_64-linux-gnu runs OFED's library instead).
# VALGRIND=1 runs the suite under
#   valgrind --error-exitcode=1 --leak-check=full
# (every case runs in a forked child, so a valgrind error fails that case) and scales the
# per-case watchdogs by 10.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ia=${1:-shm}
[ $# -gt 0 ] && shift
bindir=${DAT_CONFORMANCE_BIN_DIR:-$root/build/tests/c}
libdir=${DAT_LIB_DIR:-$root/build/lib}
face=${DAT_FACE:-dat}
case $face in
dat)  suite=dat_conformance cxx=cxx_smoke label="DAT 1.2 face (libdat.so.1)" ;;
dat2) suite=dat2_conformance cxx=cxx_smoke2 label="DAT 2.0 face (libdat2.so.2)" ;;
*) echo "$0: DAT_FACE must be dat or dat2, not $face" >&2; exit 2 ;;
esac

if [ ! -x "$bindir/$suite" ] || [ ! -x "$bindir/$cxx" ]; then
    "$here/build.sh" "$root/include" "$libdir" "$bindir" "$face"
fi

LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH

[ "${VALGRIND:-0}" = 1 ] && label="$label under valgrind"
echo "=== C conformance suite, $label, IA $ia"
"$bindir/$cxx"

if [ "${VALGRIND:-0}" = 1 ]; then
    DAT_CONFORMANCE_TIMEOUT_SCALE=${DAT_CONFORMANCE_TIMEOUT_SCALE:-10}
    export DAT_CONFORMANCE_TIMEOUT_SCALE
    exec valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
        "$bindir/$suite" -P "$ia" "$@"
fi
exec "$bindir/$suite" -P "$ia" "$@"
