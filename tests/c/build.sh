#!/bin/sh
# tests/c/build.sh INCLUDE_DIR LIB_DIR OUT_DIR [dat|dat2]
#
# Builds one face's C consumers against the headers in INCLUDE_DIR and the library in LIB_DIR.
# dat (default), the DAT 1.2 face: <dat/udat.h>, -ldat (libdat.so.1):
#   OUT_DIR/dat_conformance   the C conformance suite (C99, -Wall -Wextra -Werror)
#   OUT_DIR/dat_apirand       random call sequences (tests/c/apirand, run by apirand/run.sh)
#   OUT_DIR/cxx_smoke         C++ consumption check of <dat/udat.h>
#   OUT_DIR/pingpong          examples/pingpong.c
# dat2, the DAT 2.0 face: the same sources with -DDCT_DAT2, <dat2/udat.h>, -ldat2 (libdat2.so.2):
#   OUT_DIR/dat2_conformance  the same suite plus its DAT 2.0 cases
#   OUT_DIR/dat2_apirand      the same random call sequences plus dat_extension_op
#   OUT_DIR/cxx_smoke2        C++ consumption check of <dat2/udat.h>
# INCLUDE_DIR holds dat/ or dat2/ (our include/, or /usr/include for OFED's libdapl-dev headers);
# LIB_DIR holds the library (build/lib, or /usr/lib/x86_64-linux-gnu for OFED's libdat2.so).
# Environment: CC (default cc), CXX (default c++), EXTRA_CFLAGS, EXTRA_LDFLAGS.
# With COMPILE_ONLY=1 only compiles (no link), for use before the library exists.
set -eu

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
    echo "usage: $0 INCLUDE_DIR LIB_DIR OUT_DIR [dat|dat2]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
inc=$(cd "$1" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
lib=$2
[ -d "$lib" ] && lib=$(cd "$lib" && pwd)
face=${4:-dat}

CC=${CC:-cc}
CXX=${CXX:-c++}
CWARN="-Wall -Wextra -Werror"
case $face in
dat)  FACEFLAGS="" LIBS="-ldat -lpthread" suite=dat_conformance cxx=cxx_smoke apirand=dat_apirand ;;
dat2) FACEFLAGS="-DDCT_DAT2" LIBS="-ldat2 -lpthread" suite=dat2_conformance cxx=cxx_smoke2 apirand=dat2_apirand ;;
*) echo "$0: face must be dat or dat2, not $face" >&2; exit 2 ;;
esac
CFLAGS="-std=c99 -O2 -g $CWARN $FACEFLAGS -I$inc ${EXTRA_CFLAGS:-}"
CXXFLAGS="-std=c++11 -O2 -g $CWARN $FACEFLAGS -I$inc ${EXTRA_CFLAGS:-}"
LDFLAGS="-L$lib -Wl,-rpath,$lib ${EXTRA_LDFLAGS:-}"

if [ "${COMPILE_ONLY:-0}" = 1 ]; then
    objdir="$out/obj-$face"
    mkdir -p "$objdir"
    for f in "$here"/conformance/*.c; do
        $CC $CFLAGS -c "$f" -o "$objdir/$(basename "$f" .c).o"
    done
    $CXX $CXXFLAGS -c "$here/cxx_smoke.cpp" -o "$objdir/cxx_smoke.o"
    $CC $CFLAGS -c "$here/apirand/apirand.c" -o "$objdir/apirand.o"
    [ "$face" = dat ] && $CC $CFLAGS -c "$root/examples/pingpong.c" -o "$objdir/pingpong.o"
    echo "compiled (no link) into $objdir"
    exit 0
fi

# -l would quietly take the system's library (OFED's libdat2.so from libdapl-dev) when LIB_DIR
# lacks ours: refuse instead.
libname=${LIBS%% *}
if [ ! -e "$lib/lib${libname#-l}.so" ]; then
    echo "$0: no lib${libname#-l}.so in $lib" >&2
    exit 1
fi

echo "  CC   $out/$suite"
$CC $CFLAGS -o "$out/$suite" "$here"/conformance/*.c $LDFLAGS $LIBS
echo "  CC   $out/$apirand"
$CC $CFLAGS -o "$out/$apirand" "$here/apirand/apirand.c" $LDFLAGS $LIBS
echo "  CXX  $out/$cxx"
$CXX $CXXFLAGS -o "$out/$cxx" "$here/cxx_smoke.cpp" $LDFLAGS $LIBS
if [ "$face" = dat ]; then
    echo "  CC   $out/pingpong"
    $CC $CFLAGS -o "$out/pingpong" "$root/examples/pingpong.c" $LDFLAGS $LIBS
fi
