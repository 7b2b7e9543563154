#!/bin/sh
# Runs inside a soft-RDMA guest: perftest and our DAT measurement (tests/vm/datlat.c) on the
# same device in one run, so the ratios compare like with like.
#   flock /tmp/dat-vm.lock tests/vm/rdma-guest.sh --rxe -- tests/vm/measure.sh   (or --siw)
# Needs `make` (build/lib) first; builds build/tests/vm/datlat.
# Prints: ib_send_lat 8 B (polling, -R over rdma_cm, -R -e completion events), ib_write_bw -R
# 1 MiB (iWARP needs rdma_cm, so siw runs only the -R ones);
# datlat 8 B polling and waiting (default spin budget), each with every send signaled and every
# 100th (as ib_send_lat), waiting with DAT_EVD_SPIN_US=200 and =0, and the
# 1 MiB RDMA write bandwidth. Environment from the harness: RDMA_DEV RDMA_IP RDMA_NETDEV.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
mkdir -p build/tests/vm
cc -std=c11 -O2 -Wall -Iinclude tests/vm/datlat.c -Lbuild/lib -ldat -o build/tests/vm/datlat || exit 1
export LD_LIBRARY_PATH=$root/build/lib
ia="ofa-v2-$RDMA_NETDEV"
gid=""
[ -n "${RDMA_GID_INDEX:-}" ] && gid="-x $RDMA_GID_INDEX"
n=${MEASURE_ITERS:-2000}

perf() { # perftest command line (server and client)
    # shellcheck disable=SC2086
    timeout 120 "$@" -d "$RDMA_DEV" $gid >/tmp/perf-srv.log 2>&1 &
    sleep 1
    # shellcheck disable=SC2086
    timeout 120 "$@" -d "$RDMA_DEV" $gid "$RDMA_IP" 2>&1 | grep -E '^ *[0-9]+ +[0-9]+' | sed "s/^/$*: /"
    wait
}

q=18600
dat() { # datlat options; server and client
    q=$((q + 1))
    build/tests/vm/datlat -s -P "$ia" -q $q "$@" >/tmp/datlat-srv.log 2>&1 &
    i=0
    until grep -q listening /tmp/datlat-srv.log 2>/dev/null; do
        i=$((i + 1)); [ $i -gt 300 ] && { echo "datlat server did not start"; cat /tmp/datlat-srv.log; return 1; }
        sleep 0.1
    done
    build/tests/vm/datlat -h "$RDMA_IP" -P "$ia" -q $q "$@" || echo "datlat client FAILED"
    wait
    sed 's/^/  server: /' /tmp/datlat-srv.log | grep -v listening
}

rounds=${MEASURE_ROUNDS:-3}
log=/tmp/measure.log
: >$log
echo "== $RDMA_TYPE $RDMA_DEV, $(nproc) CPUs, $rounds rounds of $n round trips"
for round in $(seq "$rounds"); do
    echo "-- round $round"
    {
        perf ib_send_lat -n "$n" -s 8
        perf ib_send_lat -R -n "$n" -s 8
        perf ib_send_lat -R -e -n "$n" -s 8
        dat -p -n "$n" -N 200
        dat -p -c 100 -n "$n" -N 20
        dat -n "$n" -N 20
        DAT_EVD_SPIN_US=200 dat -n "$n" -N 20
        DAT_EVD_SPIN_US=0 dat -n "$n" -N 20
        perf ib_write_bw -R -n 200 -s 1048576
    } 2>&1 | tee -a $log
done
# The best round of each (a loaded host only ever makes a round slower): typical one-way
# latency in us, bandwidth in MB/s (ib_write_bw: BW average).
echo "-- best of $rounds rounds"
awk '
function keep(k, v, higher) { if (!(k in best) || (higher ? v + 0 > best[k] + 0 : v + 0 < best[k] + 0)) best[k] = v }
/^ib_send_lat/ { k = $0; sub(/:.*/, "", k); sub(/ -n [0-9]+/, "", k); r = $0; sub(/^[^:]*:/, "", r); split(r, f, " "); keep(k " (typical us)", f[5], 0) }
/^datlat poll|^datlat wait/ { k = $0; sub(/ 8 B x [0-9]+/, "", k); sub(/: one-way.*/, "", k); v = $0; sub(/.*typical /, "", v); sub(/ us.*/, "", v); keep(k " (typical us)", v, 0) }
/^datlat RDMA write 1048576 B x 200/ { v = $0; sub(/.*: /, "", v); sub(/ MB.*/, "", v); keep("datlat RDMA write 1 MiB (MB/s)", v, 1) }
/^ib_write_bw/ { r = $0; sub(/^[^:]*:/, "", r); split(r, f, " "); keep("ib_write_bw -R 1 MiB (BW average MB/s)", f[4], 1) }
END { for (k in best) printf "%-80s %s\n", k, best[k] }' $log | sort
