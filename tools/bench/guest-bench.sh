#!/bin/bash
# tools/bench/guest-bench.sh -- the verbs half of `make bench`, run inside one soft-RDMA guest
# (tests/vm/rdma-guest.sh, which sets RDMA_TYPE RDMA_DEV RDMA_NETDEV RDMA_IP RDMA_GID_INDEX and
# DAT_OVERRIDE with the OFED uDAPL entry ofa-v2-<type>). Server and client share the guest.
# BENCH_ROUNDS interleaved rounds of: datperf on our verbs IA ofa-v2-<netdev>, and on the same
# device perftest (-R: rdma_cm, as DAT connects) and OFED dapltest -T P (OFED's libdat2 and
# libdaplofa), and one datperf2 binary (datperf built against include/dat2) run on our
# libdat2.so.2 and on OFED's libdat2.so.2 + libdaplofa, chosen by LD_LIBRARY_PATH; Debian's
# unmodified dtestcm (connection setup rate) on OFED's libdat2 and on ours, each run's loader log
# checked. Prints every result line at the end ("result name=<type>.<tool>.<figure> value=").
# BENCH_GUEST_PARTS picks parts (default all): data (datperf, perftest, datperf2, dapltest -T P),
# dtestcm, callgrind, reg (datperf -t lmr_reg against rawperf reg_mr), impi (Intel MPI 2018's
# ping-pong, tools/bench/impi-bench.sh: dapl:dapl on our libdat2 and on OFED's, and Intel's tcp
# fabric; BENCH_GUEST_IMPI_ARGS are pingpong's arguments), sweep (by message size, 2 B to 4 MiB:
# datperf2 on ours and on OFED's libdat2 against ib_send_lat / ib_write_bw at each size,
# BENCH_GUEST_SWEEP_ROUNDS rounds, default 2, BENCH_GUEST_SWEEP_SIZES; drawn on the host by
# tools/bench/sweep.sh --guest <type>).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
# raw output collects in a file, printed to stderr at the end (a guest's stderr is a virtio
# port that cannot be opened a second time, so not /dev/stderr)
RESULTS=$(mktemp) RAWLOG=$(mktemp) DATPERF=$ROOT/build/bin/datperf
DATPERF2=$ROOT/build/bin/datperf2
export RESULTS RAWLOG DATPERF
. "$ROOT/tools/bench/lib.sh"
# tests/dapl2/lib.sh runs Debian's dapl2-utils on a stack with its loader log checked (dtestcm
# below); it needs these variables
lib=$ROOT/build/lib work=$(mktemp -d) time_div=1 transport=$RDMA_TYPE xfail_doc=tools/bench/guest-bench.sh
# shellcheck source=../../tests/dapl2/lib.sh
. "$ROOT/tests/dapl2/lib.sh"
# OFED's libdat2.so.2 (Debian's libdapl2; tests/dapl2/lib.sh finds it): its directory first on
# LD_LIBRARY_PATH makes datperf2 load it instead of ours (datperf2's RUNPATH, $ORIGIN/../lib, comes
# after LD_LIBRARY_PATH). Found through the package, not the loader cache: where ours is installed
# (/usr/local/lib) the cache names ours first, and OFED's dapltest would load ours too without it.
OFED_LIBDIR=$ofed_libdir
BENCH_SERVER_START=2 # servers start slowly under emulation
ROUNDS=${BENCH_ROUNDS:-3} N=${BENCH_GUEST_LAT_ITERS:-2000} BWN=${BENCH_GUEST_BW_ITERS:-200}
# The message rate's messages: 2000 of them pass in 50 ms on rxe, so that one host stall of a vCPU
# decided the figure (0.0056-0.0445 M/s round to round); 20000 (0.5 s) average over the stalls
# (0.0395-0.0455; the measurement: BENCHMARKS.md at commit 5365b89)
RATEN=${BENCH_GUEST_RATE_ITERS:-20000}
REGN=${BENCH_GUEST_REG_ITERS:-2000}
t=$RDMA_TYPE ia=ofa-v2-$RDMA_NETDEV ip=$RDMA_IP dapl_ia=ofa-v2-$RDMA_TYPE
gid=""
[ -n "${RDMA_GID_INDEX:-}" ] && gid="-x $RDMA_GID_INDEX"

# perftest NAME COLUMN FACTOR CMD...: one perftest server/client pair on RDMA_DEV; records the
# client's data row's COLUMN times FACTOR. Latency rows: bytes iterations t_min t_max t_typical
# t_avg t_stdev p99 p99.9 (one-way us); bandwidth rows: bytes iterations BW_peak BW_average
# MsgRate (MB = 2^20 bytes: FACTOR 1.048576 gives 10^6 bytes). A value that is not a number is
# no result: under emulation perftest sometimes fails to measure its clock and prints "inf".
perftest() {
    local name=$1 col=$2 factor=$3 out
    shift 3
    out=$(server_client "$name" "$* -d $RDMA_DEV $gid" "$* -d $RDMA_DEV $gid $ip")
    record "$name" "$(echo "$out" | awk -v c="$col" -v f="$factor" \
        '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= c && $c ~ /^[0-9]+(\.[0-9]+)?$/ { v = sprintf("%.3f", $c * f) }
         END { if (v != "") print v }')"
}

PARTS=" ${BENCH_GUEST_PARTS:-data dtestcm callgrind reg impi sweep} "
# With one CPU (`rdma-guest.sh --accel icount`, whose times repeat run to run) two spinning
# processes take turns at the scheduler's tick, and a polling ping-pong between them measures
# the tick: the two-process polling latencies and message rate are left out there, and the
# one-process loop figures (datperf -l) are the polling ones.
ONE_CPU=$([ "$(nproc)" = 1 ] && echo 1 || echo 0)
# host_of: where run2's datperf2 client connects: the server's address, or (LOOP=1) loopback
host_of() { if [ "${LOOP:-0}" = 1 ]; then echo loopback; else echo "$ip"; fi; }
part() { [[ $PARTS == *" $1 "* ]]; }

# Connection setup rate: Debian's dtestcm, server and client in this guest, both on one stack
# (tests/dapl2/lib.sh: `ofed` is OFED's libdat2 + libdaplofa, `path` ours by LD_LIBRARY_PATH;
# client_server fails unless every process's loader log shows that stack's library). The client
# prints " Connections: <us> usec, CPS <connections/s> Total ..." (the connect phase only). On siw
# OFED's stack gets no QP past about 70 in one process (docs/testing.md, libsiw's mmap key), so siw gets fewer.
ia_of() { if [ "$1" = ofed ]; then echo "$dapl_ia"; else echo "$ia"; fi; }
CM_CONNS=${BENCH_GUEST_CM_CONNS:-$([ "$t" = siw ] && echo 50 || echo 100)} CM_PAIRS=${BENCH_GUEST_CM_PAIRS:-3}
dtestcm_rate() { # LIBRARY(ours|ofed) STACK(path|ofed)
    local name=$t.$1-dtestcm.conn_rate stack_ia ok=0
    stack_ia=$(ia_of "$2")
    echo "== $name: dtestcm -c $CM_CONNS on stack $2" >>"$RAWLOG"
    client_server "$name" "$2" "$2" 'server waiting for client' \
        dtestcm -s -P "$stack_ia" -c "$CM_CONNS" -- dtestcm -h "$ip" -P "$stack_ia" -c "$CM_CONNS" >>"$RAWLOG" 2>&1 || ok=1
    grep -q "ALL $CM_CONNS CONNECTED on Client" "$work/$name.client" 2>/dev/null || ok=1
    cat "$work/$name.server" "$work/$name.client" >>"$RAWLOG" 2>/dev/null
    [ $ok = 0 ] || { record "$name" ""; return; }
    record "$name" "$(sed -n 's/.*Connections:.*CPS *\([0-9.]*\).*/\1/p' "$work/$name.client")"
}

# OFED's dapltest server stays up for all rounds (dapltest -T Q stops it)
DAPL_OK=0
if part data && command -v dapltest >/dev/null; then
    LD_LIBRARY_PATH=$OFED_LIBDIR dapltest -T S -D "$dapl_ia" >>"$RAWLOG" 2>&1 &
    DAPL_PID=$!
    sleep 3
    kill -0 $DAPL_PID 2>/dev/null && DAPL_OK=1
fi

for r in $(seq 1 "$ROUNDS"); do
    echo "guest-bench: $t round $r of $ROUNDS" >&2
    # a connect phase lasts well under a second here, so each round runs CM_PAIRS pairs, the
    # library that goes first alternating
    if part dtestcm && command -v dtestcm >/dev/null; then
        for k in $(seq 1 "$CM_PAIRS"); do
            [ $((k % 2)) = 1 ] && dtestcm_rate ours path
            [ -n "$OFED_LIBDIR" ] && dtestcm_rate ofed ofed
            [ $((k % 2)) = 0 ] && dtestcm_rate ours path
        done
    fi
    # registration per message: our LMR create + free against the verbs pair under it, one
    # buffer of 64 KiB (access local write, remote write, remote read) on the same device
    if part reg; then
        datperf_run "$t.datperf.lmr_reg.64K" reg_per_s "$ia" local -t lmr_reg -s 64K -n "$REGN"
        out=$("$ROOT/build/bin/rawperf" reg_mr -d "$RDMA_DEV" -s 65536 -n "$REGN" 2>&1)
        echo "$out" >>"$RAWLOG"
        record "$t.raw.reg_mr.64K" "$(echo "$out" | kv reg_per_s)"
    fi
    part data || continue
    if [ $ONE_CPU = 0 ]; then
        datperf_run "$t.datperf.send_lat.8.poll" lat_median_us "$ia" "$ip" -t send_lat -s 8 -n "$N" -p
        perftest "$t.perftest.send_lat.8.poll" 5 1 ib_send_lat -R -s 8 -n "$N"
    fi
    datperf_run "$t.datperf.send_lat.8.block" lat_median_us "$ia" "$ip" -t send_lat -s 8 -n "$N" -b
    perftest "$t.perftest.send_lat.8.block" 5 1 ib_send_lat -R -e -s 8 -n "$N"
    if [ $ONE_CPU = 0 ]; then
        datperf_run "$t.datperf.write_lat.8.poll" lat_median_us "$ia" "$ip" -t write_lat -s 8 -n "$N" -p
        perftest "$t.perftest.write_lat.8" 5 1 ib_write_lat -R -s 8 -n "$N"
    fi
    datperf_run "$t.datperf.write_bw.1M.poll" bw_MBps "$ia" "$ip" -t write_bw -s 1M -n "$BWN" -w 16 -p
    perftest "$t.perftest.write_bw.1M" 4 1.048576 ib_write_bw -R -s 1048576 -n "$BWN" -t 16
    datperf_run "$t.datperf.read_bw.1M.poll" bw_MBps "$ia" "$ip" -t read_bw -s 1M -n "$BWN" -w 16 -p
    perftest "$t.perftest.read_bw.1M" 4 1.048576 ib_read_bw -R -s 1048576 -n "$BWN" -t 16
    # The same datperf2 binary on both DAT 2.0 libraries: ours (built-in verbs provider, IA
    # ofa-v2-<netdev>) and OFED's (libdaplofa through the guest's dat.conf, IA ofa-v2-<type>)
    if [ -x "$DATPERF2" ]; then
        for library in ours ofed; do
            if [ $library = ours ]; then
                run2() { DATPERF=$DATPERF2 datperf_run "$1" "$2" "$ia" "$(host_of)" "${@:3}"; }
            elif [ -n "$OFED_LIBDIR" ]; then
                run2() { LD_LIBRARY_PATH=$OFED_LIBDIR DATPERF=$DATPERF2 datperf_run "$1" "$2" "$dapl_ia" "$(host_of)" "${@:3}"; }
            else
                continue
            fi
            if [ $ONE_CPU = 0 ]; then
                run2 "$t.$library-datperf2.send_lat.8.poll" lat_median_us -t send_lat -s 8 -n "$N" -p
                run2 "$t.$library-datperf2.write_lat.8.poll" lat_median_us -t write_lat -s 8 -n "$N" -p
                run2 "$t.$library-datperf2.msg_rate.8.poll" msg_rate_Mps -t send_bw -s 8 -n "$RATEN" -w 32 -p
            fi
            run2 "$t.$library-datperf2.send_lat.8.block" lat_median_us -t send_lat -s 8 -n "$N" -b
            run2 "$t.$library-datperf2.msg_rate.8.block" msg_rate_Mps -t send_bw -s 8 -n "$RATEN" -w 32 -b
            # both ends in one datperf2 -l process, one thread polling: the polling latencies and
            # message rate without a second spinning process (the only ones with ONE_CPU)
            LOOP=1 run2 "$t.$library-datperf2.send_lat.8.loop" lat_median_us -t send_lat -s 8 -n "$N"
            LOOP=1 run2 "$t.$library-datperf2.write_lat.8.loop" lat_median_us -t write_lat -s 8 -n "$N"
            LOOP=1 run2 "$t.$library-datperf2.msg_rate.8.loop" msg_rate_Mps -t send_bw -s 8 -n "$RATEN" -w 32
            run2 "$t.$library-datperf2.write_bw.1M.poll" bw_MBps -t write_bw -s 1M -n "$BWN" -w 16 -p
            run2 "$t.$library-datperf2.read_bw.1M.poll" bw_MBps -t read_bw -s 1M -n "$BWN" -w 16 -p
        done
    fi
    if [ $DAPL_OK = 1 ]; then
        out=$(LD_LIBRARY_PATH=$OFED_LIBDIR timeout 300 dapltest -T P -s "$ip" -D "$dapl_ia" -m p -i "$BWN" -p 16 RW 1048576 1 2>&1)
        echo "$out" >>"$RAWLOG"
        # "raw: RW, ops, segment size, segments, pipeline, cpu %, ops/s, MB/s (2^20), ..."
        record "$t.dapltest.write_bw.1M" "$(echo "$out" | awk -F', *' '/raw: RW/ { printf "%.1f", $8 * 1.048576 }')"
    fi
done
[ $DAPL_OK = 1 ] && { LD_LIBRARY_PATH=$OFED_LIBDIR timeout 60 dapltest -T Q -s "$ip" -D "$dapl_ia" >>"$RAWLOG" 2>&1; wait $DAPL_PID; }

# Intel MPI 2018's one-way latency and bandwidth: its dapl:dapl fabric on our libdat2.so.2 (IA
# ofa-v2-<netdev>) and on OFED's (libdaplofa, IA ofa-v2-<type>), and its tcp:tcp fabric, ROUNDS
# interleaved rounds (build/impi prepared on the host: make bench does)
if part impi; then
    # hydra resolves this host's name: the guest's goes into its /etc/hosts (gone with the guest)
    getent hosts "$(hostname)" >/dev/null || echo "$ip $(hostname)" >>/etc/hosts
    BENCH_ROUNDS=$ROUNDS BENCH_IMPI_ARGS=${BENCH_GUEST_IMPI_ARGS:--n 1000 -N 100 -M 20} bash tools/bench/impi-bench.sh -n "$t" \
        ours-dapl=build/lib,"$ia",dapl ofed-dapl=system,"$dapl_ia",dapl tcp=system,-,tcp >>"$RAWLOG" 2>&1
fi

# By message size: at each size the same datperf2 binary on our libdat2.so.2 and on OFED's, and
# perftest on the device, back to back; two processes polling (with one vCPU, where they would
# take turns at the tick, datperf2 -l holds both ends and perftest's latency is left out).
# Iterations: latency about 400 at every size, bandwidth about 16 MiB moved (16 to 2000 posts).
if part sweep && [ -x "$DATPERF2" ]; then
    SWEEP_ROUNDS=${BENCH_GUEST_SWEEP_ROUNDS:-2}
    for r in $(seq 1 "$SWEEP_ROUNDS"); do
        echo "guest-bench: $t size sweep, round $r of $SWEEP_ROUNDS" >&2
        for s in ${BENCH_GUEST_SWEEP_SIZES:-2 16 256 4096 65536 1048576 4194304}; do
            bwn=$((16777216 / s))
            [ $bwn -lt 16 ] && bwn=16
            [ $bwn -gt 2000 ] && bwn=2000
            for library in ours ofed; do
                if [ $library = ours ]; then
                    run2() { DATPERF=$DATPERF2 datperf_run "$1" "$2" "$ia" "${@:3}"; }
                elif [ -n "$OFED_LIBDIR" ]; then
                    run2() { LD_LIBRARY_PATH=$OFED_LIBDIR DATPERF=$DATPERF2 datperf_run "$1" "$2" "$dapl_ia" "${@:3}"; }
                else
                    continue
                fi
                run2 "$t.sweep.$library.send_lat.$s" lat_median_us "$(LOOP=$ONE_CPU host_of)" -t send_lat -s "$s" -n 400 -p
                run2 "$t.sweep.$library.write_bw.$s" bw_MBps "$ip" -t write_bw -s "$s" -n "$bwn" -w 16 -p
            done
            [ $ONE_CPU = 1 ] || perftest "$t.sweep.perftest.send_lat.$s" 5 1 ib_send_lat -R -s "$s" -n 400
            perftest "$t.sweep.perftest.write_bw.$s" 4 1.048576 ib_write_bw -R -s "$s" -n "$bwn" -t 16
        done
    done
fi

# Instructions per operation of the same datperf2 binary on both DAT 2.0 libraries (callgrind,
# client process; tools/bench/callgrind.sh), on the devices in BENCH_GUEST_CALLGRIND (default rxe)
if part callgrind && [[ " ${BENCH_GUEST_CALLGRIND-rxe} " == *" $t "* ]] && [ -x "$DATPERF2" ] && command -v valgrind >/dev/null; then
    for library in ours ofed; do
        echo "guest-bench: $t callgrind, $library libdat2" >&2
        libdir="" lib_ia=$ia
        if [ $library = ofed ]; then
            [ -n "$OFED_LIBDIR" ] || continue
            libdir=$OFED_LIBDIR lib_ia=$dapl_ia
        fi
        out=$(mktemp -d)
        # No opcost here: it counts the shm IA, which the host part measures (and OFED's
        # libdat2, first on LD_LIBRARY_PATH in its pass, has no shm IA).
        CALLGRIND_OPCOST_FACES="" LD_LIBRARY_PATH=$libdir DATPERF=$DATPERF2 CALLGRIND_IA=$lib_ia CALLGRIND_HOST=$ip CALLGRIND_OUT=$out \
            CALLGRIND_ITERS=${BENCH_GUEST_CALLGRIND_ITERS:-500} CALLGRIND_TOP=8 \
            CALLGRIND_CONFIGS="send_lat -b -s 8;send_bw -b -s 64 -w 16" \
            bash tools/bench/callgrind.sh >>"$RAWLOG" 2>&1
        cat "$out/callgrind.log" >>"$RAWLOG" 2>/dev/null
        # "### datperf -t send_lat -b -s 8: 5045 instructions per operation"
        record "$t.$library-datperf2.instr.send_lat.8.block" \
            "$(sed -n 's/^### datperf -t send_lat -b -s 8: \([0-9]*\) instructions.*/\1/p' "$out/callgrind.md")"
        record "$t.$library-datperf2.instr.send_bw.64.block" \
            "$(sed -n 's/^### datperf -t send_bw -b -s 64 -w 16: \([0-9]*\) instructions.*/\1/p' "$out/callgrind.md")"
        sed 's/^/callgrind: /' "$out/callgrind.md" >>"$RAWLOG"
        if [ -n "${BENCH_GUEST_KEEP:-}" ]; then # the profiles, for callgrind_annotate on the host
            mkdir -p "$BENCH_GUEST_KEEP/$t-$library" && cp "$out"/* "$BENCH_GUEST_KEEP/$t-$library/"
        fi
        rm -rf "$out"
    done
fi
echo "guest-bench: $t parts${PARTS% } took ${SECONDS} s" >&2
sed 's/^/raw: /' "$RAWLOG" >&2
rm -rf "$work"
cat "$RESULTS"
