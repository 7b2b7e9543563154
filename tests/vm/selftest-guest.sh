#!/bin/bash
# Runs INSIDE a guest for selftest.sh:  selftest-guest.sh loopback | server | client
#   loopback  ibv_devices, ibv_devinfo, then rping and ib_send_lat (rdma_cm) to our own address
#   server    ib_send_lat then rping servers on RDMA_IP (two-guest, side a)
#   client    ib_send_lat then rping clients to RDMA_PEER_IP (two-guest, side b)
# Pitfall: servers take seconds to listen under emulation, so clients retry (bounded), never
# sleep a fixed time.
set -u -o pipefail
: "${RDMA_DEV:?not in an rdma-guest}" "${RDMA_IP:?}"
ITERS=200

# retry TRIES CMD...: run CMD until it succeeds, at most TRIES times, 1 s apart.
retry() { local n=$1 i; shift; for ((i = 1; i <= n; i++)); do "$@" && return 0; sleep 1; done; return 1; }
step() { echo "== $*"; }
# perftest prints its result table to stdout; keep the header and the numbers.
lat() { ib_send_lat -R -d "$RDMA_DEV" -n "$ITERS" "$@" 2>&1 | grep -E '^ *(#bytes|[0-9])' ; return "${PIPESTATUS[0]}"; }

case ${1:-} in
  loopback)
    step "ibv_devices";  ibv_devices || exit 1
    step "ibv_devinfo -d $RDMA_DEV"; ibv_devinfo -d "$RDMA_DEV" | grep -E 'hca_id|transport|state|active_mtu|link_layer' || exit 1
    step "rping loopback on $RDMA_IP"
    rping -s -a "$RDMA_IP" -C 5 & srv=$!
    retry 20 rping -c -a "$RDMA_IP" -C 5 -v | tail -1 || { kill $srv; exit 1; }
    wait $srv || exit 1
    step "ib_send_lat -R loopback on $RDMA_IP"
    lat > /dev/null & srv=$!
    retry 20 lat "$RDMA_IP" || { kill $srv; exit 1; }
    wait $srv || exit 1
    ;;
  server)
    step "ib_send_lat -R server on $RDMA_IP"; lat || exit 1
    step "rping server on $RDMA_IP"; rping -s -a "$RDMA_IP" -C 5 || exit 1
    ;;
  client)
    : "${RDMA_PEER_IP:?needs --link}"
    step "ib_send_lat -R client -> $RDMA_PEER_IP"; retry 60 lat "$RDMA_PEER_IP" || exit 1
    step "rping client -> $RDMA_PEER_IP"; retry 30 rping -c -a "$RDMA_PEER_IP" -C 5 -v | tail -1 || exit 1
    ;;
  *) echo "usage: $0 loopback|server|client" >&2; exit 2;;
esac
echo "== OK ($RDMA_TYPE, $RDMA_DEV)"
