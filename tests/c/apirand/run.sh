#!/bin/sh
# tests/c/apirand/run.sh [IA_NAME]
#
# Random DAT call sequences (apirand.c) on both faces against IA_NAME (default "shm"): for each
# seed, one thread and then four threads for APIRAND_SECS seconds each; then a short run of one and
# of three threads under valgrind (memcheck: invalid reads and writes, definite leaks after every IA
# is closed). Each failure prints the command that reproduces it.
# Environment: APIRAND_SEEDS (default "1 2"), APIRAND_SECS (default 2), APIRAND_VALGRIND_STEPS
# (default 300; 0 skips valgrind), DAT_CONFORMANCE_BIN_DIR (default build/tests/c, where build.sh
# puts dat_apirand and dat2_apirand), DAT_LIB_DIR (default build/lib).
# The rendezvous directory of the shm provider is a private one (DAT_SHM_DIR), removed at the end.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
ia=${1:-shm}
bindir=${DAT_CONFORMANCE_BIN_DIR:-$root/build/tests/c}
libdir=${DAT_LIB_DIR:-$root/build/lib}
seeds=${APIRAND_SEEDS:-1 2}
secs=${APIRAND_SECS:-2}
vg_steps=${APIRAND_VALGRIND_STEPS:-300}

for face in dat dat2; do
    [ -x "$bindir/${face}_apirand" ] || sh "$root/tests/c/build.sh" "$root/include" "$libdir" "$bindir" "$face"
done

LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
DAT_SHM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/apirand-shm.XXXXXX")
export DAT_SHM_DIR
trap 'rm -rf "$DAT_SHM_DIR"' EXIT

failed=""
run() {
    echo "--- $*"
    if ! "$@"; then
        echo "FAIL apirand: reproduce with: LD_LIBRARY_PATH=$libdir $*"
        failed="$failed
  $*"
    fi
}

for face in dat dat2; do
    bin="$bindir/${face}_apirand"
    for seed in $seeds; do
        run "$bin" -P "$ia" -s "$seed" -n 100000000 -d "$secs" -t 1
        run "$bin" -P "$ia" -s "$seed" -n 100000000 -d "$secs" -t 4
    done
    if [ "$vg_steps" -gt 0 ]; then
        run valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
            --show-leak-kinds=definite "$bin" -P "$ia" -s 1 -n "$vg_steps" -t 1 -w 200
        run valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
            --show-leak-kinds=definite "$bin" -P "$ia" -s 2 -n "$vg_steps" -t 3 -w 200
    fi
done

if [ -n "$failed" ]; then
    echo "FAIL apirand:$failed"
    exit 1
fi
echo "apirand: all runs passed (IA $ia, seeds $seeds, both faces)"
