#!/bin/sh
# tests/c/run.sh [IA_NAME] [extra dat_conformance args...]
#
# Runs the C conformance suite (and the C++ smoke test) against IA_NAME (default "shm").
# Uses $DAT_CONFORMANCE_BIN_DIR (default build/tests/c) and builds it there with build.sh
# if the binaries are missing.  Library: $DAT_LIB_DIR (default build/lib).
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

if [ ! -x "$bindir/dat_conformance" ] || [ ! -x "$bindir/cxx_smoke" ]; then
    "$here/build.sh" "$root/include" "$libdir" "$bindir"
fi

LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH

"$bindir/cxx_smoke"

if [ "${VALGRIND:-0}" = 1 ]; then
    DAT_CONFORMANCE_TIMEOUT_SCALE=${DAT_CONFORMANCE_TIMEOUT_SCALE:-10}
    export DAT_CONFORMANCE_TIMEOUT_SCALE
    exec valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
        "$bindir/dat_conformance" -P "$ia" "$@"
fi
exec "$bindir/dat_conformance" -P "$ia" "$@"
