#!/bin/sh
# examples/run-pingpong.sh [IA_NAME] [extra pingpong args...]
# Starts the pingpong server and client on this host with IA_NAME (default "shm") and a
# connection qualifier derived from this shell's pid; fails if either side fails.
# Binary: $PINGPONG (default build/tests/c/pingpong); library: $DAT_LIB_DIR (default build/lib).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
ia=${1:-shm}
[ $# -gt 0 ] && shift
bin=${PINGPONG:-$root/build/tests/c/pingpong}
libdir=${DAT_LIB_DIR:-$root/build/lib}
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
if [ ! -x "$bin" ]; then
    "$root/tests/c/build.sh" "$root/include" "$libdir" "$(dirname "$bin")" || exit 1
fi
qual=$((20000 + $$ % 20000))
log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$bin" -s -P "$ia" -q "$qual" "$@" >"$log" 2>&1 &
spid=$!
# wait until the server listens (at most 10 s)
i=0
until grep -q "listening" "$log" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 100 ] || ! kill -0 $spid 2>/dev/null; then
        echo "run-pingpong: server did not start:" >&2
        sed -e '/^server: /!s/^/server: /' -e 's/^/  /' "$log" >&2
        kill $spid 2>/dev/null
        exit 1
    fi
    sleep 0.1
done

"$bin" -h 127.0.0.1 -P "$ia" -q "$qual" "$@"
crc=$?
wait $spid
src=$?
sed -e '/^server: /!s/^/server: /' -e 's/^/  /' "$log"
if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
    echo "run-pingpong: FAILED (client exit $crc, server exit $src)" >&2
    exit 1
fi
echo "run-pingpong: OK"
