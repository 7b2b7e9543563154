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

# retry SECONDS CMD...: run CMD until it succeeds, 1 s apart, giving up after SECONDS.
retry() {
  local end=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -lt "$end" ] || return 1; echo "(retrying: $1)"; sleep 1; done
}
step() { echo "== $*"; }
# perftest prints its result table to stdout; keep the header and the numbers (errors: stderr).
# Every attempt is bounded too. Pitfall: rping -c can hang after "connect error" (refused).
lat() { timeout 90 ib_send_lat -R -d "$RDMA_DEV" -n "$ITERS" "$@" | grep -E '^ *(#bytes|[0-9])'; return "${PIPESTATUS[0]}"; }
ping_srv() { timeout 90 rping -s -a "$RDMA_IP" -C 5; }
ping_cli() { timeout 30 rping -c -a "$1" -C 5 -v | tail -1; return "${PIPESTATUS[0]}"; }

case ${1:-} in
  loopback)
    step "ibv_devices";  ibv_devices || exit 1
    step "ibv_devinfo -d $RDMA_DEV"; ibv_devinfo -d "$RDMA_DEV" | grep -E 'hca_id|transport|state|active_mtu|link_layer' || exit 1
    step "rping loopback on $RDMA_IP"
    ping_srv & srv=$!
    retry 30 ping_cli "$RDMA_IP" || { kill $srv; exit 1; }
    wait $srv || exit 1
    step "ib_send_lat -R loopback on $RDMA_IP"
    lat > /dev/null & srv=$!
    retry 30 lat "$RDMA_IP" || { kill $srv; exit 1; }
    wait $srv || exit 1
    ;;
  server)
    # (a server whose client gave up mid-handshake exits with an error: serve again)
    step "ib_send_lat -R server on $RDMA_IP"; retry 120 lat || exit 1
    step "rping server on $RDMA_IP"; retry 60 ping_srv || exit 1
    ;;
  client)
    : "${RDMA_PEER_IP:?needs --link}"
    # First the wire itself: the other guest may still be booting.
    step "ping $RDMA_PEER_IP"; retry 120 busybox ping -c 1 -W 2 "$RDMA_PEER_IP" | grep -m1 'bytes from' || exit 1
    step "ib_send_lat -R client -> $RDMA_PEER_IP"; retry 120 lat "$RDMA_PEER_IP" || exit 1
    step "rping client -> $RDMA_PEER_IP"; retry 60 ping_cli "$RDMA_PEER_IP" || exit 1
    ;;
  *) echo "usage: $0 loopback|server|client" >&2; exit 2;;
esac
echo "== OK ($RDMA_TYPE, $RDMA_DEV)"
