#!/bin/bash
# tools/bench/guest-poll-starvation.sh -- run inside one soft-RDMA guest (tests/vm/rdma-guest.sh):
# one datperf2 binary, polling (both processes spin in dat_evd_dequeue on the guest's vCPUs), on
# our libdat2.so.2 and on OFED's (libdat2 + libdaplofa, by LD_LIBRARY_PATH), interleaved:
# message rate (send_bw -s 8 -w 32) and send latency (send_lat -s 8), ROUNDS rounds; each test's
# softirq counts (TIMER, NET_RX, TASKLET) before and after, to see whether the device's work
# leaves the posting system call for softirq context (where ksoftirqd would have to win a CPU
# from the spinners). With FIFO_ROUNDS > 0, as many rounds again with every ksoftirqd at
# SCHED_FIFO 1. LIBS picks the libraries (default "ours ofed"; ofed-noinline is OFED's with
# DAPL_MAX_INLINE=0, its sends not inline). Results of a run: BENCHMARKS.md at commit 3c41a42,
# "rxe polling starvation".
#   flock /tmp/dat-vm.lock tests/vm/rdma-guest.sh --rxe -- tools/bench/guest-poll-starvation.sh
set -u
cd "$(dirname "$0")/../.."
D=build/bin/datperf2 LIBS=${LIBS:-ours ofed} ROUNDS=${ROUNDS:-3} FIFO_ROUNDS=${FIFO_ROUNDS:-3} N=${N:-1000}
OFED=$(dpkg -L libdapl2 2>/dev/null | sed -n 's|^\(/.*\)/libdat2.so.2$|\1|p' | head -1)
q=20000
softirqs() { awk '/TASKLET|TIMER|NET_RX/ { s = 0; for (i = 2; i <= NF; i++) s += $i; printf "%s%d ", $1, s }' /proc/softirqs; }
# run LABEL LIB(ours|ofed|ofed-noinline) DATPERF-ARGS...: one server/client pair; prints the client's figures
run() {
    local label=$1 lib=$2 before ia=ofa-v2-$RDMA_NETDEV libpath= inline=
    shift 2
    q=$((q + 1))
    [ "$lib" != ours ] && ia=ofa-v2-$RDMA_TYPE libpath=$OFED
    [ "$lib" = ofed-noinline ] && inline=0
    before=$(softirqs)
    env ${inline:+DAPL_MAX_INLINE=$inline} LD_LIBRARY_PATH=$libpath timeout 100 $D -P "$ia" -q $q >/dev/null 2>&1 &
    sleep 2
    env ${inline:+DAPL_MAX_INLINE=$inline} LD_LIBRARY_PATH=$libpath timeout 100 $D -P "$ia" -q $q -h "$RDMA_IP" -m "$@" 2>/dev/null | grep '^datperf ' |
        tail -1 | awk -v l="$label $lib" '{ o = l; for (i = 2; i <= NF; i++)
            if ($i ~ /^(test|msg_rate_Mps|lat_median_us|lat_p99_us|lat_max_us|lat_avg_us|cpu_us_per_op)=/) o = o " " $i
            print o }'
    wait
    echo "   softirqs before: $before after: $(softirqs)"
}
rounds() { # LABEL COUNT
    local r lib
    for r in $(seq "$2"); do
        for lib in $LIBS; do
            run "$1.r$r" $lib -t send_bw -s 8 -n "$N" -w 32 -p
            run "$1.r$r" $lib -t send_lat -s 8 -n "$N" -p
        done
    done
}
[ -n "$OFED" ] || { echo "OFED's libdat2 (libdapl2) is not installed" >&2; exit 1; }
rounds default "$ROUNDS"
if [ "$FIFO_ROUNDS" -gt 0 ]; then
    for p in $(ps -eo pid,comm | awk '$2 ~ /^ksoftirqd/ { print $1 }'); do chrt -f -p 1 "$p"; done
    rounds ksoftirqd-fifo "$FIFO_ROUNDS"
fi
