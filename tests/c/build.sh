#!/bin/sh
# tests/c/build.sh INCLUDE_DIR LIB_DIR OUT_DIR
#
# Builds, against the headers in INCLUDE_DIR and libdat in LIB_DIR (-ldat):
#   OUT_DIR/dat_conformance   the C conformance suite (C99, -Wall -Wextra -Werror)
#   OUT_DIR/cxx_smoke         C++ consumption check of <dat/udat.h>
#   OUT_DIR/pingpong          examples/pingpong.c
# Environment: CC (default cc), CXX (default c++), EXTRA_CFLAGS, EXTRA_LDFLAGS.
# With COMPILE_ONLY=1 only compiles (no link), for use before libdat exists.
set -eu

if [ $# -ne 3 ]; then
    echo "usage: $0 INCLUDE_DIR LIB_DIR OUT_DIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
inc=$(cd "$1" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
lib=$2
[ -d "$lib" ] && lib=$(cd "$lib" && pwd)

CC=${CC:-cc}
CXX=${CXX:-c++}
CWARN="-Wall -Wextra -Werror"
CFLAGS="-std=c99 -O2 -g $CWARN -I$inc ${EXTRA_CFLAGS:-}"
CXXFLAGS="-std=c++11 -O2 -g $CWARN -I$inc ${EXTRA_CFLAGS:-}"
LDFLAGS="-L$lib -Wl,-rpath,$lib ${EXTRA_LDFLAGS:-}"
LIBS="-ldat -lpthread"

if [ "${COMPILE_ONLY:-0}" = 1 ]; then
    objdir="$out/obj"
    mkdir -p "$objdir"
    for f in "$here"/conformance/*.c; do
        $CC $CFLAGS -c "$f" -o "$objdir/$(basename "$f" .c).o"
    done
    $CXX $CXXFLAGS -c "$here/cxx_smoke.cpp" -o "$objdir/cxx_smoke.o"
    $CC $CFLAGS -c "$root/examples/pingpong.c" -o "$objdir/pingpong.o"
    echo "compiled (no link) into $objdir"
    exit 0
fi

echo "  CC   $out/dat_conformance"
$CC $CFLAGS -o "$out/dat_conformance" "$here"/conformance/*.c $LDFLAGS $LIBS
echo "  CXX  $out/cxx_smoke"
$CXX $CXXFLAGS -o "$out/cxx_smoke" "$here/cxx_smoke.cpp" $LDFLAGS $LIBS
echo "  CC   $out/pingpong"
$CC $CFLAGS -o "$out/pingpong" "$root/examples/pingpong.c" $LDFLAGS $LIBS
