#!/bin/bash
# tools/bench/guest-vs-ofed.sh -- run inside one soft-RDMA guest (tests/vm/rdma-guest.sh): chosen
# datperf2 figures of `make bench` (tools/bench/guest-bench.sh, same arguments) on our
# libdat2.so.2 and on OFED's (libdat2 + libdaplofa, by LD_LIBRARY_PATH), ROUNDS interleaved
# rounds, the library that goes first alternating from round to round. Ends with one line per
# figure and library: every round's value, the median, min and max, and the medians of the
# client's and server's CPU us per operation and of the context switches of all their threads,
# then one line per figure with ours / OFED's in each round where both have a value.
# FIGURES picks figures (default all of: msg_rate send_lat write_lat write_bw read_bw; also
# loop_send_lat, loop_write_lat and loop_msg_rate: both ends in one datperf -l process, one
# thread polling, whatever MODE says);
# STRACE=1 adds one `strace -f -c` client run of each library per figure (STRACE_FIGURES, default
# FIGURES) after the rounds (system calls per operation; connection setup included). N, BWN and
# RATEN are the iterations of the 8 B latency, the 1 MiB and the message rate tests
# (guest-bench.sh's defaults, 2000, 200 and 20000). MODE=block waits in dat_evd_wait instead of
# polling (datperf -b for -p; in a one-vCPU guest, `rdma-guest.sh --accel icount`, two polling
# processes take turns at the scheduler's tick: there the loop_ figures are the polling ones).
# OPCOST=1 adds instructions per empty dequeue and per message cycle on each library (below).
#   flock /tmp/dat-vm.lock tests/vm/rdma-guest.sh --rxe --env ROUNDS=7 --env FIGURES="msg_rate read_bw" \
#       -- tools/bench/guest-vs-ofed.sh
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
RESULTS=$(mktemp) RAWLOG=$(mktemp) DATPERF=$ROOT/build/bin/datperf2
export RESULTS RAWLOG DATPERF
. "$ROOT/tools/bench/lib.sh"
OFED_LIBDIR=$(dpkg -L libdapl2 2>/dev/null | sed -n 's|^\(/.*\)/libdat2.so.2$|\1|p' | head -1)
[ -n "$OFED_LIBDIR" ] || { echo "guest-vs-ofed: OFED's libdat2 (libdapl2) is not installed" >&2; exit 1; }
ROUNDS=${ROUNDS:-7} FIGURES=${FIGURES:-msg_rate send_lat write_lat write_bw read_bw}
N=${N:-2000} BWN=${BWN:-200} RATEN=${RATEN:-20000}
t=$RDMA_TYPE ip=$RDMA_IP
case ${MODE:-poll} in poll) mode=-p ;; block) mode=-b ;; *) echo "guest-vs-ofed: MODE=poll|block" >&2; exit 2 ;; esac

# args FIGURE: the figure's result key and datperf arguments, as guest-bench.sh runs it
args() {
    case $1 in
    msg_rate) echo msg_rate_Mps -t send_bw -s 8 -n "$RATEN" -w 32 "$mode" ;;
    send_lat) echo lat_median_us -t send_lat -s 8 -n "$N" "$mode" ;;
    write_lat) echo lat_median_us -t write_lat -s 8 -n "$N" "$mode" ;;
    loop_send_lat) echo lat_median_us -t send_lat -s 8 -n "$N" -p ;;
    loop_write_lat) echo lat_median_us -t write_lat -s 8 -n "$N" -p ;;
    loop_msg_rate) echo msg_rate_Mps -t send_bw -s 8 -n "$RATEN" -w 32 -p ;;
    write_bw) echo bw_MBps -t write_bw -s 1M -n "$BWN" -w 16 "$mode" ;;
    read_bw) echo bw_MBps -t read_bw -s 1M -n "$BWN" -w 16 "$mode" ;;
    *) echo "guest-vs-ofed: unknown figure $1" >&2; exit 2 ;;
    esac
}
# ia_of LIBRARY: the IA datperf2 opens on that library
ia_of() { if [ "$1" = ofed ]; then echo "ofa-v2-$t"; else echo "ofa-v2-$RDMA_NETDEV"; fi; }
# libpath_of LIBRARY: the LD_LIBRARY_PATH that makes datperf2 load that library (its RUNPATH,
# $ORIGIN/../lib, names ours)
libpath_of() { if [ "$1" = ofed ]; then echo "$OFED_LIBDIR"; fi; }
# run FIGURE LIBRARY ROUND: one server/client pair, recorded as <type>.<library>.<figure>.r<round>
run() {
    local a
    read -r -a a <<<"$(args "$1")"
    local host=$ip
    case $1 in loop_*) host=loopback ;; esac
    LD_LIBRARY_PATH=$(libpath_of "$2") datperf_run "$t.$2.$1.r$3" "${a[0]}" "$(ia_of "$2")" "$host" "${a[@]:1}"
}

for r in $(seq 1 "$ROUNDS"); do
    echo "guest-vs-ofed: $t round $r of $ROUNDS" >&2
    order="ours ofed"
    [ $((r % 2)) = 0 ] && order="ofed ours"
    for f in $FIGURES; do
        for library in $order; do run "$f" "$library" "$r"; done
    done
done

# stats FIELD: "v1,v2,... median min max" of FIELD over the lines on stdin
stats() {
    local v
    v=$(kv "$1" | awk 'NF')
    [ -n "$v" ] || { echo "-"; return; }
    printf '%s median %s min %s max %s' "$(echo "$v" | paste -sd, -)" "$(echo "$v" | median)" \
        "$(echo "$v" | sort -g | head -1)" "$(echo "$v" | sort -g | tail -1)"
}
# cs: context switches per operation, all threads of client and server
cs_sum() { awk '{ s = 0; for (i = 1; i <= NF; i++) if ($i ~ /^(srv_)?i?vcsw_per_op=|^(srv_)?other_cs_per_op=/) { split($i, kv, "="); s += kv[2] }
    printf "x cs=%.3f\n", s }'; }
echo "guest-vs-ofed: $t, $ROUNDS rounds; per figure and library: rounds' values, median, min, max"
for f in $FIGURES; do
    key=$(args "$f" | cut -d' ' -f1)
    for library in ours ofed; do
        lines=$(grep "^datperf name=$t\.$library\.$f\.r[0-9]* " "$RESULTS")
        echo "summary $t.$library.$f $key: $(echo "$lines" | stats "$key")"
        echo "  client cpu us/op median $(echo "$lines" | kv cpu_us_per_op | median)," \
            "server cpu us/op median $(echo "$lines" | kv srv_cpu_us_per_op | median)," \
            "context switches/op (all threads, both sides) median $(echo "$lines" | cs_sum | kv cs | median)"
    done
    # ours / OFED's in each round where both have a value
    ratios=$(for r in $(seq 1 "$ROUNDS"); do
        o=$(grep "^datperf name=$t\.ours\.$f\.r$r " "$RESULTS" | kv "$key")
        x=$(grep "^datperf name=$t\.ofed\.$f\.r$r " "$RESULTS" | kv "$key")
        [ -n "$o" ] && [ -n "$x" ] && awk -v o="$o" -v x="$x" 'BEGIN { if (x > 0) printf "x r=%.3f\n", o / x }'
    done)
    echo "ratio $t.$f ours/ofed by round: $(echo "$ratios" | stats r)"
done

if [ "${STRACE:-0}" = 1 ] && command -v strace >/dev/null; then
    for f in ${STRACE_FIGURES:-$FIGURES}; do
        read -r -a a <<<"$(args "$f")"
        # the client's end: -h, with a server beside it; or -l, both ends in the traced process
        where=(-h "$ip") who=client
        case $f in loop_*) where=(-l) who="both ends" ;; esac
        for library in ours ofed; do
            BENCH_QUAL=$((BENCH_QUAL + 1)) spid=
            if [ "$who" = client ]; then
                LD_LIBRARY_PATH=$(libpath_of "$library") timeout 300 "$DATPERF" -P "$(ia_of "$library")" -q "$BENCH_QUAL" >>"$RAWLOG" 2>&1 &
                spid=$!
            fi
            trace=$(mktemp)
            LD_LIBRARY_PATH=$(libpath_of "$library") timeout 300 strace -f -c -o "$trace" \
                "$DATPERF" -P "$(ia_of "$library")" -q "$BENCH_QUAL" "${where[@]}" -m "${a[@]:1}" >>"$RAWLOG" 2>&1
            [ -n "$spid" ] && wait $spid
            echo "strace $t.$library.$f ($who, whole process, ${a[*]:1}):"
            sed 's/^/  /' "$trace"
            rm -f "$trace"
        done
    done
fi
# OPCOST=1: tools/bench/opcost.c's empty dat_evd_dequeue, message cycle (post receive, post 8 B
# send, dequeue both completions) and waited cycle (the same, dat_evd_wait taking them) on each
# library: one process, two endpoints connected to each other over the device, under callgrind;
# instructions per op = the function's inclusive count / OPCOST_N. OPCOST_KEEP=DIR keeps the
# profiles (DIR shared read-write with the guest: rdma-guest.sh --rw DIR).
if [ "${OPCOST:-0}" = 1 ] && command -v valgrind >/dev/null; then
    OPCOST_N=${OPCOST_N:-2000} bin=$(mktemp -d)
    cc -std=c11 -O2 -g -I"$ROOT/include" -o "$bin/opcost-dat2" tools/bench/opcost.c -L"$ROOT/build/lib" \
        -Wl,-rpath,"$ROOT/build/lib" -DDATPERF_DAT2 -ldat2
    for library in ours ofed; do
        BENCH_QUAL=$((BENCH_QUAL + 1)) prof=$bin/callgrind.opcost.$library.out
        LD_LIBRARY_PATH=$(libpath_of "$library") timeout 600 valgrind -q --tool=callgrind --callgrind-out-file="$prof" \
            "$bin/opcost-dat2" -P "$(ia_of "$library")" -h "$ip" -q "$BENCH_QUAL" -n "$OPCOST_N" >>"$RAWLOG" 2>&1 ||
            { echo "opcost $t.$library: run failed"; tail -5 "$RAWLOG"; continue; }
        for fn in empty_polls message_cycles waited_cycles; do
            callgrind_annotate --inclusive=yes "$prof" 2>/dev/null | awk -v f=":$fn " -v n="$OPCOST_N" -v l="$t.$library" \
                'index($0 " ", f) { gsub(",", "", $1); printf "opcost %s %s: %.1f instructions per op\n", l, substr(f, 2, length(f) - 2), $1 / n; exit }'
        done
        [ -n "${OPCOST_KEEP:-}" ] && cp "$prof" "$OPCOST_KEEP/"
    done
    rm -rf "$bin"
fi
echo "guest-vs-ofed: took ${SECONDS} s" >&2
echo "== raw datperf lines"
grep '^datperf ' "$RESULTS"
rm -f "$RESULTS" "$RAWLOG"
