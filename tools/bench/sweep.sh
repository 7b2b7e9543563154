#!/bin/bash
# tools/bench/sweep.sh -- `make bench`'s size sweep on shm (run by bench.sh after the host rounds;
# BENCH_SWEEP=0 skips it): latency and bandwidth of datperf from 2 B to 4 MiB against the
# baselines measured beside it, drawn with gnuplot.
#
#   latency (one way, median of each run's iterations): datperf send/recv polling and blocking,
#     RDMA write polling; UCX ucx_perftest tag_lat and libfabric fi_pingpong over shared memory
#     (fi_pingpong reports only its average, at its own sizes); the spin floor (rawperf spin:
#     8 bytes, one cache line each way); one process_vm_writev of the message (rawperf
#     cma_write, time per call).
#   bandwidth (10^6 bytes/s, window 16): datperf RDMA write and read polling, on ordinary and on
#     shared-memory LMRs (-M shm); rawperf process_vm_writev / readv and memcpy; UCX ucp_put_bw.
#
# Every size runs ours and each baseline back to back, BENCH_SWEEP_ROUNDS rounds (default 3); a
# point is the median of its rounds. BENCH_SWEEP_SIZES overrides the sizes (bytes). Writes
# build/bench/sweep.txt (every value), build/bench/sweep/<series>.dat (size, median) and
# build/bench/shm-latency.{png,svg}, build/bench/shm-bandwidth.{png,svg}.
#
# `sweep.sh --guest TYPE` draws a guest's sweep instead (tools/bench/guest-bench.sh's part
# sweep, its values in build/bench/results.txt): datperf2 on our libdat2.so.2 and on OFED's
# against ib_send_lat and ib_write_bw, as build/bench/TYPE-latency.{png,svg} and
# TYPE-bandwidth.{png,svg}.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=$ROOT/build/bench
mkdir -p "$OUT/sweep"
GUEST=""
[ "${1:-}" = --guest ] && GUEST=${2:?usage: sweep.sh [--guest rxe|siw]} BENCH_SWEEP_PLOT_ONLY=1
RESULTS=$OUT/sweep.txt RAWLOG=$OUT/sweep.log
[ -n "$GUEST" ] && RESULTS=$OUT/results.txt RAWLOG=/dev/null
if [ "${BENCH_SWEEP_PLOT_ONLY:-0}" != 1 ]; then # (=1: draw the points of the last sweep again)
    : >"$RESULTS"
    : >"$RAWLOG"
fi
DATPERF=$ROOT/build/bin/datperf RAWPERF=$ROOT/build/bin/rawperf
export RESULTS RAWLOG DATPERF
. "$ROOT/tools/bench/lib.sh"
[ -x "$DATPERF" ] && [ -x "$RAWPERF" ] || { echo "sweep: run make first" >&2; exit 1; }
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/dat-bench-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
ROUNDS=${BENCH_SWEEP_ROUNDS:-3}
export BENCH_SERVER_START=${BENCH_SERVER_START:-0.3} # a baseline's server start (retried once if late)
SIZES=${BENCH_SWEEP_SIZES:-"2 4 16 64 256 1024 4096 16384 65536 262144 1048576 4194304"}
PREFIX=sweep DAT=$OUT/sweep # the results' names: PREFIX.<series>.<size>; the points: DAT/<series>.dat
if [ -n "$GUEST" ]; then
    PREFIX=$GUEST.sweep DAT=$OUT/sweep-$GUEST
    SIZES=$(sed -n "s/^result name=$GUEST\.sweep\.[a-z_.]*\.\([0-9]*\) value=.*/\1/p" "$RESULTS" | sort -n -u | tr '\n' ' ')
    [ -n "$SIZES" ] || { echo "sweep: no $GUEST sweep in $RESULTS" >&2; exit 1; }
fi
mkdir -p "$DAT"
HAVE_UCX=0 HAVE_OFI=0
command -v ucx_perftest >/dev/null && HAVE_UCX=1
command -v fi_pingpong >/dev/null && HAVE_OFI=1

# iterations: about the same time per size (latency 100-2000, bandwidth 200-20000 operations)
clamp() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { v = int(v); print v < lo ? lo : (v > hi ? hi : v) }'; }
ucx_port() { BENCH_QUAL=$((BENCH_QUAL + 1)); echo $((BENCH_QUAL % 20000 + 20000)); }

sweep_round() {
    local s n w out port
    record sweep.raw.spin.8 "$("$RAWPERF" spin -n 100000 | kv lat_median_us)"
    for s in $SIZES; do
        n=$(clamp $((67108864 / s)) 100 2000) w=$(clamp $((n / 10)) 10 500)
        datperf_run sweep.send_lat.poll.$s lat_median_us shm 127.0.0.1 -t send_lat -s "$s" -n "$n" -W "$w" -p
        datperf_run sweep.send_lat.block.$s lat_median_us shm 127.0.0.1 -t send_lat -s "$s" -n "$n" -W "$w" -b
        datperf_run sweep.write_lat.poll.$s lat_median_us shm 127.0.0.1 -t write_lat -s "$s" -n "$n" -W "$w" -p
        if [ $HAVE_UCX = 1 ]; then
            port=$(ucx_port)
            out=$(server_client ucx.tag_lat "ucx_perftest -p $port" "ucx_perftest -p $port 127.0.0.1 -t tag_lat -s $s -n $n")
            record sweep.ucx.tag_lat.$s "$(echo "$out" | awk '/^Final:/ { print $3 }')"
        fi
        if [ $HAVE_OFI = 1 ]; then # fi_pingpong prints its average only (time / transfers, one way)
            port=$(ucx_port)
            out=$(server_client ofi.pingpong "fi_pingpong -p shm -e rdm -B $port -S $s -I $n" \
                  "fi_pingpong -p shm -e rdm -P $port -S $s -I $n 127.0.0.1")
            record sweep.ofi.pingpong.$s "$(echo "$out" | awk -v s="$s" 'NF >= 8 { b = $1; m = 1
                if (b ~ /k$/) m = 1024; if (b ~ /m$/) m = 1048576; sub(/[km]$/, "", b)
                if (b * m == s) print $7 }' | tail -1)"
        fi
        n=$(clamp $((1073741824 / s)) 200 20000)
        record sweep.raw.cma_write.$s "$("$RAWPERF" cma_write -s "$s" -n "$n" | kv bw_MBps)"
        datperf_run sweep.write_bw.poll.$s bw_MBps shm 127.0.0.1 -t write_bw -s "$s" -n "$n" -w 16 -p
        record sweep.raw.cma_read.$s "$("$RAWPERF" cma_read -s "$s" -n "$n" | kv bw_MBps)"
        datperf_run sweep.read_bw.poll.$s bw_MBps shm 127.0.0.1 -t read_bw -s "$s" -n "$n" -w 16 -p
        datperf_run sweep.write_bw.poll.shm.$s bw_MBps shm 127.0.0.1 -t write_bw -s "$s" -n "$n" -w 16 -p -M shm
        record sweep.raw.memcpy.$s "$("$RAWPERF" memcpy -s "$s" -n "$n" | kv bw_MBps)"
        if [ $HAVE_UCX = 1 ]; then
            port=$(ucx_port)
            out=$(server_client ucx.put_bw "ucx_perftest -p $port" "ucx_perftest -p $port 127.0.0.1 -t ucp_put_bw -s $s -n $n")
            record sweep.ucx.put_bw.$s "$(echo "$out" | awk '/^Final:/ { printf "%.1f", $6 * 1.048576 }')"
        fi
    done
}

LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
[ "${BENCH_SWEEP_PLOT_ONLY:-0}" = 1 ] && ROUNDS=0
for r in $(seq 1 "$ROUNDS"); do
    echo "bench: shm size sweep, round $r of $ROUNDS" >&2
    sweep_round
done

# one .dat per series: "size median" (sizes in order)
med() { sed -n "s/^result name=$1 value=//p" "$RESULTS" | grep -E '^[0-9]+(\.[0-9]+)?$' | median; }
series() { # SERIES [per_op]: the medians of PREFIX.SERIES.<size>; per_op turns MB/s into us per call
    local s v
    for s in $(sed -n "s/^result name=$PREFIX\.$1\.\([0-9]*\) value=.*/\1/p" "$RESULTS" | sort -n -u); do
        v=$(med "$PREFIX\.$1\.$s")
        [ -n "$v" ] || continue
        if [ "${2:-}" = per_op ]; then awk -v s="$s" -v v="$v" 'BEGIN { printf "%d %.4f\n", s, s / v }'; else echo "$s $v"; fi
    done
}
if [ -n "$GUEST" ]; then
    for name in ours.send_lat ofed.send_lat perftest.send_lat ours.write_bw ofed.write_bw perftest.write_bw; do
        series "$name" >"$DAT/$name.dat"
    done
    SPIN=""
else
    for name in send_lat.poll send_lat.block write_lat.poll ucx.tag_lat ofi.pingpong write_bw.poll read_bw.poll write_bw.poll.shm \
        raw.cma_write raw.cma_read raw.memcpy ucx.put_bw; do
        series "$name" >"$DAT/$name.dat"
    done
    series raw.cma_write per_op >"$DAT/raw.cma_write.per_op.dat"
    SPIN=$(med 'sweep\.raw\.spin\.8')
fi

if ! command -v gnuplot >/dev/null; then
    echo "sweep: gnuplot not installed (tests/deps.sh installs it): no pictures; the points are in $DAT" >&2
    exit 0
fi
if [ -n "$GUEST" ]; then # the guest part's run line (bench.sh): "run part=TYPE rounds=.. accel=.. date=.. commit=.. machine=.."
    WHEN=$(grep "^run part=$GUEST " "$RESULTS" | tail -1 | sed 's/^run part=[^ ]* //; s/rounds=[^ ]* //; s/machine=//')
    WHEN="one $GUEST guest: $WHEN, median of ${BENCH_GUEST_SWEEP_ROUNDS:-2} rounds"
elif [ "${BENCH_SWEEP_PLOT_ONLY:-0}" != 1 ]; then # what the title says of the run, kept for a redraw
    WHEN="$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short=7 HEAD 2>/dev/null || echo '?')$( [ -n "$(git status --porcelain -uno 2>/dev/null)" ] && echo '+changes'), $(nproc) CPUs (load average $LOAD_START at the start, $(cut -d' ' -f1 /proc/loadavg) at the end), median of $ROUNDS rounds"
    echo "$WHEN" >"$DAT/run.txt"
fi
[ -n "$GUEST" ] || WHEN=$(cat "$DAT/run.txt" 2>/dev/null)
XTICS=$(for s in $SIZES; do echo "$s"; done | awk '{ l = $1 " B"; if ($1 >= 1048576) l = $1 / 1048576 " MiB"; else if ($1 >= 1024) l = $1 / 1024 " KiB"
                                              printf "%s\"%s\" %d", (NR > 1 ? ", " : ""), l, $1 }')
# plot LINE...: gnuplot "plot" clauses for the series whose .dat has points
plot_clauses() {
    local first=1 spec file
    for spec in "$@"; do
        file=${spec%%|*}
        [ -s "$DAT/$file.dat" ] || continue
        [ $first = 1 ] || printf ', '
        printf "'%s' using 1:2 %s" "$DAT/$file.dat" "${spec#*|}"
        first=0
    done
}
NAME=shm WHAT="shm" # the pictures' file names and titles
[ -n "$GUEST" ] && NAME=$GUEST WHAT="verbs on $GUEST (QEMU guest, TCG)"
for term in "pngcairo size 960,720 font 'sans,10'|png" "svg size 960,720 dynamic font 'sans,10'|svg"; do
    ext=${term#*|}
    if [ -n "$GUEST" ]; then
        lat=$(plot_clauses \
            "ours.send_lat|with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'ours (libdat2.so.2): send/recv, polling'" \
            "ofed.send_lat|with linespoints lw 1.5 pt 5 dt 2 lc rgb '#d62728' title 'OFED libdat2.so.2 + libdaplofa: the same datperf2'" \
            "perftest.send_lat|with linespoints lw 1.5 pt 1 dt 3 lc rgb '#000000' title 'perftest ib\\_send\\_lat -R (verbs, no DAT)'")
        bw=$(plot_clauses \
            "ours.write_bw|with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'ours (libdat2.so.2): RDMA write, polling'" \
            "ofed.write_bw|with linespoints lw 1.5 pt 5 dt 2 lc rgb '#d62728' title 'OFED libdat2.so.2 + libdaplofa: the same datperf2'" \
            "perftest.write_bw|with linespoints lw 1.5 pt 1 dt 3 lc rgb '#000000' title 'perftest ib\\_write\\_bw -R (verbs, no DAT)'")
    else
        lat=$(plot_clauses \
            "send_lat.poll|with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'ours: send/recv, polling (dat\\_evd\\_dequeue)'" \
            "send_lat.block|with linespoints lw 2 pt 5 lc rgb '#17becf' title 'ours: send/recv, blocking (dat\\_evd\\_wait)'" \
            "write_lat.poll|with linespoints lw 2 pt 9 lc rgb '#2ca02c' title 'ours: RDMA write, polling'" \
            "ucx.tag_lat|with linespoints lw 1.5 pt 6 dt 2 lc rgb '#d62728' title 'UCX ucx\\_perftest tag\\_lat (shared memory)'" \
            "ofi.pingpong|with linespoints lw 1.5 pt 4 dt 2 lc rgb '#ff7f0e' title 'libfabric fi\\_pingpong shm (its average)'" \
            "raw.cma_write.per_op|with linespoints lw 1.5 pt 1 dt 3 lc rgb '#7f7f7f' title 'one process\\_vm\\_writev of the message'")
        [ -n "$SPIN" ] && lat="$lat, $SPIN with lines lw 1.5 dt 4 lc rgb '#000000' title 'spin floor: 8 B, one cache line each way ($SPIN us)'"
        bw=$(plot_clauses \
            "write_bw.poll|with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'ours: RDMA write'" \
            "read_bw.poll|with linespoints lw 2 pt 5 lc rgb '#17becf' title 'ours: RDMA read'" \
            "write_bw.poll.shm|with linespoints lw 2 pt 9 lc rgb '#2ca02c' title 'ours: RDMA write, shared-memory LMRs'" \
            "raw.cma_write|with linespoints lw 1.5 pt 1 dt 3 lc rgb '#7f7f7f' title 'process\\_vm\\_writev, one call per message'" \
            "raw.cma_read|with linespoints lw 1.5 pt 2 dt 3 lc rgb '#9467bd' title 'process\\_vm\\_readv, one call per message'" \
            "raw.memcpy|with linespoints lw 1.5 pt 3 dt 3 lc rgb '#000000' title 'memcpy in one process'" \
            "ucx.put_bw|with linespoints lw 1.5 pt 6 dt 2 lc rgb '#d62728' title 'UCX ucx\\_perftest ucp\\_put\\_bw'")
    fi
    gnuplot <<EOF || echo "sweep: gnuplot failed ($ext)" >&2
set terminal ${term%|*}
set logscale xy 2
set xtics ($XTICS)
set grid xtics ytics mytics
set key below box maxcols 2 width 1 font ',9'
set bmargin 10
set xlabel 'message size [bytes]'
set output '$OUT/$NAME-latency.$ext'
set format y '%g'
set logscale y 10
set ylabel 'one-way latency [us], log scale'
set title "$WHAT: latency by message size, ours and the baselines in one run\n{/*0.8 $WHEN}"
plot $lat
set output '$OUT/$NAME-bandwidth.$ext'
set ylabel 'bandwidth [10^6 bytes/s], window 16, log scale'
set title "$WHAT: bandwidth by message size, ours and the baselines in one run\n{/*0.8 $WHEN}"
plot $bw
EOF
done
echo "bench: $NAME sweep pictures: $OUT/$NAME-latency.png, $OUT/$NAME-bandwidth.png (and .svg)" >&2
