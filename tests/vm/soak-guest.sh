#!/bin/sh
# Runs inside a soft-RDMA guest (make soak-vm, through rdma-guest.sh): the soak
# (tests/soak/soak.c, built on the host by tests/soak/run.sh --build-only) on the verbs IA of
# RDMA_NETDEV at RDMA_IP, with waits bounded at 60 s (soft RDMA under emulation is slow).
# usage: soak-guest.sh [SOAK_OPTIONS...]   (e.g. -d 1200 -n 8 -s SEED; later options win)
# Environment from the harness: RDMA_NETDEV RDMA_IP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$root/build/tests/soak/soak" ] || { echo "soak-guest: build/tests/soak/soak missing: run tests/soak/run.sh --build-only"; exit 1; }
# SOAK_SIW_DEBUG=1 (rdma-guest.sh --env): siw's debug messages of its queue pairs (transmit,
# receive, state changes; dynamic debug), which the soak prints the last of at a failed completion
if [ -n "${SOAK_SIW_DEBUG:-}" ]; then
    mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
    for f in siw_qp_tx.c siw_qp_rx.c siw_qp.c; do
        echo "file $f +p" > /sys/kernel/debug/dynamic_debug/control || echo "soak-guest: no dynamic debug for $f"
    done
fi
DAT_EVD_SPIN_US=${DAT_EVD_SPIN_US:-0} "$root/build/tests/soak/soak" -P "ofa-v2-$RDMA_NETDEV" -h "$RDMA_IP" -w 60 "$@"
rc=$?
# what the soft RDMA device said meanwhile (a QP terminated, a CQ overflow, ...)
echo "soak-guest: the kernel's RDMA messages:"
dmesg | grep -iE 'siw|rxe|rdma|infiniband' | grep -v 'speed is unknown' | tail -60 | sed 's/^/  dmesg: /'
exit $rc
