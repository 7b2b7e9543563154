#!/bin/sh
# tests/perf/run-shm-path.sh [shm_path args...]
# Builds tests/perf/shm_path.c against include/ and build/lib (run `make` first) and runs it:
# the shm data path next to the machine's floor (see the header of shm_path.c). Not part of
# `make check`: timings depend on the machine and its load.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/tests/perf
mkdir -p "$out"
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -I"$root/include" "$root/tests/perf/shm_path.c" \
    -L"$root/build/lib" -Wl,-rpath,"$root/build/lib" -ldat -o "$out/shm_path"
exec "$out/shm_path" "$@"
