#!/bin/bash
# tools/bench/cno-vs-wait.sh IA [HOST] -- the cost of waking a CNO's waiter: datperf send_lat
# (8 B) with every wait in dat_evd_wait (-b) against the same ping-pong with the receives waited
# for in dat_cno_wait (-C, a CNO attached to each side's receive EVD), interleaved over
# CNO_ROUNDS rounds (default 5), the median of each configuration's per-run median one-way
# latency reported with every run's value.
#   CNO_BUILDS="label=BINDIR ..." (default "this=build/bin") runs the datperf of each build in
#     the same rounds (e.g. a build from before a change against one from after it); each
#     binary finds its own library beside it (../lib).
#   DATPERF=datperf2 the DAT 2.0 face. CNO_ITERS measured iterations per run (default 2000).
#   DAT_EVD_SPIN_US and the other libdat(7) variables pass through (0: every wait sleeps).
# HOST is the server's address the client connects to (default 127.0.0.1; a verbs IA needs its
# netdev's address). Prints "cno label=L mode=M median_us=X runs=a,b,..." lines, then the
# ratio of -C to -b for each build.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ia=${1:?usage: cno-vs-wait.sh IA [HOST]}
host=${2:-127.0.0.1}
prog=${DATPERF:-datperf}
rounds=${CNO_ROUNDS:-5}
iters=${CNO_ITERS:-2000}
builds=${CNO_BUILDS:-this=$ROOT/build/bin}
RESULTS=$(mktemp) RAWLOG=$(mktemp)
trap 'rm -f "$RESULTS" "$RAWLOG"' EXIT
# shellcheck source=tools/bench/lib.sh
. "$ROOT/tools/bench/lib.sh"

for r in $(seq "$rounds"); do
    for b in $builds; do
        DATPERF=${b#*=}/$prog
        for mode in -b -C; do
            datperf_run "$r.${b%%=*}$mode" lat_median_us "$ia" "$host" -t send_lat -s 8 -n "$iters" "$mode"
        done
    done
done 2>/dev/null

for b in $builds; do
    label=${b%%=*}
    for mode in -b -C; do
        vals=$(sed -n "s/^result name=[0-9]*\.$label$mode value=//p" "$RESULTS")
        med=$(echo "$vals" | median)
        echo "cno label=$label mode=${mode#-} median_us=$med runs=$(echo $vals | tr ' ' ,)"
        eval "med_${label//[^a-zA-Z0-9]/_}_${mode#-}=\$med"
    done
    b_med=$(eval echo "\$med_${label//[^a-zA-Z0-9]/_}_b") c_med=$(eval echo "\$med_${label//[^a-zA-Z0-9]/_}_C")
    awk -v l="$label" -v b="$b_med" -v c="$c_med" \
        'BEGIN { if (b > 0) printf "cno label=%s ratio_cno_to_evd_wait=%.3f\n", l, c / b }'
done
if grep -q "^bench: no value" "$RAWLOG"; then
    echo "cno-vs-wait: some runs failed:" >&2
    cat "$RAWLOG" >&2
    exit 1
fi
