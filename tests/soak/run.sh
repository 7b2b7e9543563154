#!/bin/sh
# tests/soak/run.sh [--build-only] [SOAK_OPTIONS...]
# Builds tests/soak/soak.c, a DAT 2.0 program (<dat2/udat.h>), against include/ and the
# libdat2.so.2 in build/lib into build/tests/soak/soak, then runs it with SOAK_OPTIONS (see the
# top of soak.c: -P ia, -h address, -n processes, -d seconds, -s seed, ...). Every dat_evd_wait
# sleeps rather than spins (DAT_EVD_SPIN_US=0 unless set), so the processes share the CPUs.
# `make soak-shm` runs it on the host, tests/vm/soak-guest.sh in a soft-RDMA guest.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/tests/soak
mkdir -p "$out"
${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -Werror -I"$root/include" "$root/tests/soak/soak.c" \
    "$root/build/lib/libdat2.so.2" -Wl,-rpath,"$root/build/lib" -lpthread -o "$out/soak"
[ "${1:-}" = --build-only ] && exit 0
DAT_EVD_SPIN_US=${DAT_EVD_SPIN_US:-0} exec "$out/soak" "$@"
