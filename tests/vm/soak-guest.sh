#!/bin/sh
# Runs inside a soft-RDMA guest (make soak-vm, through rdma-guest.sh): the soak
# (tests/soak/soak.c, built on the host by tests/soak/run.sh --build-only) on the verbs IA of
# RDMA_NETDEV at RDMA_IP, with waits bounded at 60 s (soft RDMA under emulation is slow).
# usage: soak-guest.sh [SOAK_OPTIONS...]   (e.g. -d 1200 -n 8 -s SEED; later options win)
# Environment from the harness: RDMA_NETDEV RDMA_IP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$root/build/tests/soak/soak" ] || { echo "soak-guest: build/tests/soak/soak missing: run tests/soak/run.sh --build-only"; exit 1; }
DAT_EVD_SPIN_US=${DAT_EVD_SPIN_US:-0} "$root/build/tests/soak/soak" -P "ofa-v2-$RDMA_NETDEV" -h "$RDMA_IP" -w 60 "$@"
rc=$?
# what the soft RDMA device said meanwhile (a QP terminated, a CQ overflow, ...)
echo "soak-guest: the kernel's RDMA messages:"
dmesg | grep -iE 'siw|rxe|rdma|infiniband' | grep -v 'speed is unknown' | tail -60 | sed 's/^/  dmesg: /'
exit $rc
