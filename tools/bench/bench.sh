#!/bin/bash
# tools/bench/bench.sh -- `make bench`: datperf against raw baselines, side by side.
#
#   1. shm on this host: datperf (send/recv latency 8 B polling and blocking, RDMA write latency,
#      RDMA write and read 1 MiB bandwidth, on ordinary and on shared-memory LMRs, -M shm;
#      dat_lmr_create + dat_lmr_free of 64 KiB per second, heap and memfd memory)
#      against rawperf's floors (two-process spin ping-pong, process_vm_writev/readv, memcpy),
#      the same without cross-memory attach (DAT_SHM_NO_CMA=1: the Yama fallback), and, when installable, UCX's ucx_perftest and libfabric's fi_pingpong over shared memory;
#      Intel MPI 2018's ping-pong with I_MPI_FABRICS=dapl:dapl on our libdat2.so.2 against its own
#      shm:shm (tools/bench/impi-bench.sh; BENCH_IMPI=0 skips it);
#   2. verbs in ONE rxe guest and ONE siw guest (tests/vm/rdma-guest.sh, under
#      flock /tmp/dat-vm.lock): tools/bench/guest-bench.sh, datperf against perftest and OFED
#      dapltest -T P, one datperf2 binary and Debian's dtestcm on our libdat2 and on OFED's,
#      datperf -t lmr_reg against rawperf reg_mr (ibv_reg_mr + ibv_dereg_mr), and Intel MPI 2018
#      (dapl:dapl on ours and on OFED's libdat2, tcp:tcp)
#      and a size sweep, datperf2 on both libraries against perftest from 2 B to 4 MiB, drawn as
#      build/bench/<type>-latency.png and -bandwidth.png by tools/bench/sweep.sh --guest <type>
#      (BENCH_GUEST_PARTS="data dtestcm callgrind reg impi sweep" picks parts; BENCH_GUEST_CM_CONNS is dtestcm's
#      -c, BENCH_GUEST_CM_PAIRS its runs per library and round, BENCH_GUEST_RATE_ITERS the
#      message rate's messages, default 20000, BENCH_GUEST_REG_ITERS lmr_reg's pairs, default
#      2000; on the host BENCH_REG_ITERS, default 20000).
# Runs are INTERLEAVED (ours, baseline, ours, ... in every round) over BENCH_ROUNDS rounds
# (default 5; guests BENCH_VM_ROUNDS, default 3) and the MEDIAN of the rounds is reported:
# tables (figure, ours, baseline, ratio, target), one section per part with the part's run line
# (date, commit, rounds, machine) and datperf's cost per operation, on stdout and in
# build/bench/table.md, which BENCHMARKS.md shows as it is; every run's output in
# build/bench/raw.log, every value in build/bench/results.txt. After the host rounds,
# tools/bench/sweep.sh sweeps shm from 2 B to 4 MiB and draws build/bench/shm-*.png (BENCH_SWEEP=0 skips it).
# After them the ofi provider (IA ofi-tcp-lo) against libfabric's fi_pingpong and
# tools/baselines/fi_rma_bw.c on the same tcp provider (BENCH_OFI=0 skips it; BENCH_SHM=0 skips
# the shm rounds and their sweep).
# BENCH_VM=0 skips the guests (BENCH_VM_DEVICES="rxe" runs one kind only); BENCH_NATIVE=0 skips the host part (then the table is made
# from the guests alone); BENCH_TABLE_ONLY=1 only makes the table from build/bench/results.txt;
# BENCH_APPEND=1 adds to build/bench/results.txt and raw.log instead of starting them afresh, so
# one table can be made from several shorter runs (the host part, then each guest, each guest
# part: every guest run holds /tmp/dat-vm.lock, which other people wait for).
# BENCH_VM_ACCEL=icount runs the guests with one vCPU whose clock counts instructions
# (tests/vm/rdma-guest.sh --accel icount): their figures repeat from run to run, but two spinning
# processes there take turns at the scheduler's tick, so guest-bench.sh leaves out the two-process
# polling latencies and message rate (the one-process loop figures, datperf -l, stay); such a guest is
# slower, so give it fewer 1 MiB operations (BENCH_GUEST_BW_ITERS=60) and BENCH_VM_TIMEOUT=3000.
# Its latencies and message rates repeat to a few tenths of a percent; a 1 MiB bandwidth run
# there lands in one of siw's two modes or takes rxe's timed retransmissions as they fall
# (BENCHMARKS.md, "What moves the figures"), so compare bandwidths over more rounds than 2.
# BENCH_GUEST_KEEP=DIR keeps the guests' callgrind profiles in DIR/<device>-<library>/ (shared
# read-write with the guest), for callgrind_annotate on the host.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=$ROOT/build/bench
mkdir -p "$OUT"
RESULTS=$OUT/results.txt RAWLOG=$OUT/raw.log
if [ "${BENCH_TABLE_ONLY:-0}" = 1 ]; then # the table again, from the results already there
    BENCH_NATIVE=0 BENCH_VM=0
elif [ "${BENCH_APPEND:-0}" != 1 ]; then
    : >"$RESULTS"
    : >"$RAWLOG"
fi
DATPERF=$ROOT/build/bin/datperf RAWPERF=$ROOT/build/bin/rawperf
export RESULTS RAWLOG DATPERF
. "$ROOT/tools/bench/lib.sh"
ROUNDS=${BENCH_ROUNDS:-5} VM_ROUNDS=${BENCH_VM_ROUNDS:-3}
# when, what and where a part ran (a "run part=..." line in results.txt; the table prints the
# latest of each part above its rows); machine= is last, it holds spaces
run_stamp() { # [START]: START the part's start (date -u +%Y-%m-%dT%H:%MZ), else now
    local commit
    commit=$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)
    [ -n "$(git status --porcelain -uno 2>/dev/null)" ] && commit="$commit+changes"
    echo "date=${1:-$(date -u +%Y-%m-%dT%H:%MZ)} commit=$commit machine=$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r)"
}
[ -x "$DATPERF" ] && [ -x "$RAWPERF" ] || { echo "bench: run make first" >&2; exit 1; }
# shm rendezvous sockets in a directory of our own (see README, the shm provider)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/dat-bench-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"

# ------------------------------------------------------------------ optional baselines
# UCX and libfabric come from Debian (ucx-utils, libfabric-bin): installed here if we are root
# with apt, else those rows are skipped.
want_pkg() { # COMMAND PACKAGE
    command -v "$1" >/dev/null && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "bench: installing $2 for $1" >&2
        { apt-get install -y -qq "$2" || { apt-get update -qq && apt-get install -y -qq "$2"; }; } >>"$RAWLOG" 2>&1
    fi
    command -v "$1" >/dev/null || { echo "bench: $1 not available ($2 not installed, not root+apt): skipped" >&2; return 1; }
}
HAVE_UCX=0 HAVE_OFI=0
if [ "${BENCH_NATIVE:-1}" = 1 ]; then
    want_pkg ucx_perftest ucx-utils && HAVE_UCX=1
    want_pkg fi_pingpong libfabric-bin && HAVE_OFI=1
fi

# ------------------------------------------------------------------ shm on this host
LAT_N=${BENCH_LAT_ITERS:-5000} BW_N=${BENCH_BW_ITERS:-1000} REG_N=${BENCH_REG_ITERS:-20000}
native_round() {
    record raw.spin.8 "$("$RAWPERF" spin -n 100000 | kv lat_median_us)"
    datperf_run shm.datperf.send_lat.8.poll lat_median_us shm 127.0.0.1 -t send_lat -s 8 -n "$LAT_N" -W 500 -p
    # the same run's average, for fi_pingpong, which reports only an average (time / transfers)
    record shm.datperf.send_lat.8.poll.avg "$(grep '^datperf name=shm.datperf.send_lat.8.poll ' "$RESULTS" | tail -1 | kv lat_avg_us)"
    datperf_run shm.datperf.send_lat.8.block lat_median_us shm 127.0.0.1 -t send_lat -s 8 -n "$LAT_N" -W 500 -b
    datperf_run shm.datperf.write_lat.8.poll lat_median_us shm 127.0.0.1 -t write_lat -s 8 -n "$LAT_N" -W 500 -p
    record raw.cma_write.1M "$("$RAWPERF" cma_write -s 1048576 -n "$BW_N" | kv bw_MBps)"
    datperf_run shm.datperf.write_bw.1M.poll bw_MBps shm 127.0.0.1 -t write_bw -s 1M -n "$BW_N" -w 16 -p
    datperf_run shm.datperf.write_bw.1M.block bw_MBps shm 127.0.0.1 -t write_bw -s 1M -n "$BW_N" -w 16 -b
    record raw.cma_read.1M "$("$RAWPERF" cma_read -s 1048576 -n "$BW_N" | kv bw_MBps)"
    datperf_run shm.datperf.read_bw.1M.poll bw_MBps shm 127.0.0.1 -t read_bw -s 1M -n "$BW_N" -w 16 -p
    datperf_run shm.datperf.read_bw.1M.block bw_MBps shm 127.0.0.1 -t read_bw -s 1M -n "$BW_N" -w 16 -b
    # shared-memory LMRs (memfd, DAT_MEM_TYPE_SHARED_VIRTUAL): the initiator memcpy's into its own mapping
    datperf_run shm.datperf.write_bw.1M.poll.shm bw_MBps shm 127.0.0.1 -t write_bw -s 1M -n "$BW_N" -w 16 -p -M shm
    datperf_run shm.datperf.read_bw.1M.poll.shm bw_MBps shm 127.0.0.1 -t read_bw -s 1M -n "$BW_N" -w 16 -p -M shm
    record raw.memcpy.1M "$("$RAWPERF" memcpy -s 1048576 -n "$BW_N" | kv bw_MBps)"
    # registration per message: LMR create + free pairs per second, heap and memfd (-M shm: the
    # memory is also published for peers to map)
    datperf_run shm.datperf.lmr_reg.64K reg_per_s shm local -t lmr_reg -s 64K -n "$REG_N"
    datperf_run shm.datperf.lmr_reg.64K.shm reg_per_s shm local -t lmr_reg -s 64K -n "$REG_N" -M shm
    # Without cross-memory attach (what Yama's ptrace_scope >= 1 does between unrelated
    # processes; DAT_SHM_NO_CMA=1 makes the provider behave as if the probe were refused):
    # payloads travel through the rings and the target executes RDMA on ordinary LMRs
    DAT_SHM_NO_CMA=1 datperf_run shm.datperf.send_lat.8.poll.nocma lat_median_us shm 127.0.0.1 -t send_lat -s 8 -n "$LAT_N" -W 500 -p
    DAT_SHM_NO_CMA=1 datperf_run shm.datperf.write_bw.1M.poll.nocma bw_MBps shm 127.0.0.1 -t write_bw -s 1M -n "$BW_N" -w 16 -p
    DAT_SHM_NO_CMA=1 datperf_run shm.datperf.read_bw.1M.poll.nocma bw_MBps shm 127.0.0.1 -t read_bw -s 1M -n "$BW_N" -w 16 -p
    if [ $HAVE_UCX = 1 ]; then
        local port=$((BENCH_QUAL % 20000 + 20000)) out
        BENCH_QUAL=$((BENCH_QUAL + 1))
        # "Final:" row: iterations, latency 50%ile/average/overall (one-way, us), bandwidth
        # average/overall (MiB/s), message rate average/overall
        out=$(server_client ucx.tag_lat "ucx_perftest -p $port" "ucx_perftest -p $port 127.0.0.1 -t tag_lat -s 8 -n $LAT_N")
        record ucx.tag_lat.8 "$(echo "$out" | awk '/^Final:/ { print $3 }')"
        out=$(server_client ucx.put_bw "ucx_perftest -p $((port + 1))" \
              "ucx_perftest -p $((port + 1)) 127.0.0.1 -t ucp_put_bw -s 1048576 -n $BW_N")
        record ucx.put_bw.1M "$(echo "$out" | awk '/^Final:/ { printf "%.1f", $6 * 1.048576 }')"
    fi
    if [ $HAVE_OFI = 1 ]; then
        local port=$((BENCH_QUAL % 20000 + 20000))
        BENCH_QUAL=$((BENCH_QUAL + 1))
        # columns: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec (usec/xfer is one way:
        # the run's time over its transfers, an average, so the table sets datperf's average beside it)
        out=$(server_client ofi.pingpong "fi_pingpong -p shm -e rdm -B $port -S 8 -I $LAT_N" \
              "fi_pingpong -p shm -e rdm -P $port -S 8 -I $LAT_N 127.0.0.1")
        record ofi.pingpong.8 "$(echo "$out" | awk '$1 == 8 && NF >= 8 { print $7 }' | tail -1)"
    fi
}

if [ "${BENCH_NATIVE:-1}" = 1 ] && [ "${BENCH_SHM:-1}" = 1 ]; then
    start=$(date -u +%Y-%m-%dT%H:%MZ)
    for r in $(seq 1 "$ROUNDS"); do
        echo "bench: shm round $r of $ROUNDS" >&2
        native_round
    done
    echo "run part=shm rounds=$ROUNDS $(run_stamp "$start")" >>"$RESULTS"
    # latency and bandwidth from 2 B to 4 MiB against the baselines, drawn (tools/bench/sweep.sh)
    [ "${BENCH_SWEEP:-1}" = 1 ] && bash tools/bench/sweep.sh
fi

# ------------------------------------------------------------------ ofi on this host
# The ofi provider on libfabric's tcp over the loopback (IA ofi-tcp-lo) against libfabric itself
# on the same provider and endpoint type (FI_EP_MSG), interleaved: fi_pingpong (Debian's
# libfabric-bin; it reports an average, so datperf's average stands beside it) and
# tools/baselines/fi_rma_bw.c (RDMA write bandwidth, window 16, built here against
# libfabric-dev). BENCH_OFI=0 skips it; skipped where either is missing.
OFI_IA=${BENCH_OFI_IA:-ofi-tcp-lo}
ofi_round() {
    local port=$((BENCH_QUAL % 20000 + 20000)) out
    BENCH_QUAL=$((BENCH_QUAL + 2))
    datperf_run ofi.datperf.send_lat.8.poll lat_median_us "$OFI_IA" 127.0.0.1 -t send_lat -s 8 -n "$LAT_N" -W 500 -p
    record ofi.datperf.send_lat.8.poll.avg "$(grep '^datperf name=ofi.datperf.send_lat.8.poll ' "$RESULTS" | tail -1 | kv lat_avg_us)"
    out=$(server_client ofi.tcp.pingpong "fi_pingpong -p tcp -e msg -B $port -S 8 -I $LAT_N" \
          "fi_pingpong -p tcp -e msg -P $port -S 8 -I $LAT_N 127.0.0.1")
    record ofi.tcp.pingpong.8 "$(echo "$out" | awk '$1 == 8 && NF >= 8 { print $7 }' | tail -1)"
    datperf_run ofi.datperf.write_bw.1M.poll bw_MBps "$OFI_IA" 127.0.0.1 -t write_bw -s 1M -n "$BW_N" -w 16 -p
    out=$(server_client ofi.tcp.rma_bw "$OUT/fi_rma_bw -p $((port + 1)) -s 1048576 -n $BW_N -w 16" \
          "$OUT/fi_rma_bw -p $((port + 1)) -s 1048576 -n $BW_N -w 16 127.0.0.1")
    record ofi.tcp.rma_bw.1M "$(echo "$out" | kv bw_MBps)"
}
if [ "${BENCH_NATIVE:-1}" = 1 ] && [ "${BENCH_OFI:-1}" = 1 ] && [ $HAVE_OFI = 1 ]; then
    if ${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$OUT/fi_rma_bw" tools/baselines/fi_rma_bw.c -lfabric >>"$RAWLOG" 2>&1 &&
        "$ROOT/build/bin/datinfo" 2>/dev/null | grep -q "^$OFI_IA .* usable$"; then
        start=$(date -u +%Y-%m-%dT%H:%MZ)
        for r in $(seq 1 "$ROUNDS"); do
            echo "bench: ofi round $r of $ROUNDS" >&2
            ofi_round
        done
        echo "run part=ofi rounds=$ROUNDS $(run_stamp "$start")" >>"$RESULTS"
    else
        echo "bench: ofi part skipped (fi_rma_bw does not build against libfabric-dev, or no IA $OFI_IA: see $RAWLOG)" >&2
    fi
fi

# ------------------------------------------------------------------ Intel MPI on this host
# Intel MPI 2018's ping-pong (tests/impi/pingpong.c) over DAPL on our libdat2.so.2 (IA shm)
# against Intel's own shared-memory fabric, interleaved rounds (tools/bench/impi-bench.sh);
# BENCH_IMPI=0 skips it, SKIPPED when Intel MPI's wheel cannot be had
if [ "${BENCH_NATIVE:-1}" = 1 ] && [ "${BENCH_IMPI:-1}" = 1 ]; then
    BENCH_ROUNDS=$ROUNDS bash tools/bench/impi-bench.sh shm ours-dapl=build/lib,shm,dapl intel-shm=system,-,shm >&2
fi

# ------------------------------------------------------------------ verbs in guests
if [ "${BENCH_VM:-1}" = 1 ]; then
    # the guests' Intel MPI part runs from build/impi, prepared here (a guest cannot fetch)
    [[ " ${BENCH_GUEST_PARTS:-impi} " == *" impi "* ]] && bash tests/impi/run.sh -p >&2
    for t in ${BENCH_VM_DEVICES:-rxe siw}; do
        echo "bench: verbs in one $t guest ($VM_ROUNDS rounds; waiting for /tmp/dat-vm.lock)" >&2
        start=$(date -u +%Y-%m-%dT%H:%MZ) # (the lock's wait included)
        envs=(--env BENCH_ROUNDS="$VM_ROUNDS")
        for v in BENCH_GUEST_PARTS BENCH_GUEST_CM_CONNS BENCH_GUEST_CM_PAIRS BENCH_GUEST_RATE_ITERS BENCH_GUEST_REG_ITERS BENCH_GUEST_LAT_ITERS \
            BENCH_GUEST_BW_ITERS BENCH_GUEST_IMPI_ARGS BENCH_GUEST_SWEEP_ROUNDS BENCH_GUEST_SWEEP_SIZES; do [ -z "${!v:-}" ] || envs+=(--env "$v=${!v}"); done
        if [ -n "${BENCH_GUEST_KEEP:-}" ]; then # keep the guest's callgrind profiles there
            mkdir -p "$BENCH_GUEST_KEEP" && BENCH_GUEST_KEEP=$(cd "$BENCH_GUEST_KEEP" && pwd -P)
            envs+=(--rw "$BENCH_GUEST_KEEP" --env "BENCH_GUEST_KEEP=$BENCH_GUEST_KEEP")
        fi
        flock /tmp/dat-vm.lock tests/vm/rdma-guest.sh --"$t" --accel "${BENCH_VM_ACCEL:-auto}" --timeout "${BENCH_VM_TIMEOUT:-2700}" "${envs[@]}" \
            -- bash tools/bench/guest-bench.sh >"$OUT/guest-$t.log" 2>&1
        echo "bench: $t guest exit $?" >&2
        cat "$OUT/guest-$t.log" >>"$RAWLOG"
        grep -E '^(result|datperf) name=' "$OUT/guest-$t.log" >>"$RESULTS"
        echo "run part=$t rounds=$VM_ROUNDS accel=${BENCH_VM_ACCEL:-auto} $(run_stamp "$start")" >>"$RESULTS"
        # the guest's size sweep, drawn (build/bench/<type>-latency.png, -bandwidth.png)
        grep -q "^result name=$t\.sweep\." "$RESULTS" && bash tools/bench/sweep.sh --guest "$t"
    done
fi

# ------------------------------------------------------------------ the table
# the median of a figure's rounds; a value that is not a number (perftest's "inf" when it could
# not measure its clock) is no result
med() { sed -n "s/^result name=$1 value=//p" "$RESULTS" | grep -E '^[0-9]+(\.[0-9]+)?$' | median; }
rows=(
    # label | ours | baseline | lat (ours/base <= target) or bw (ours/base >= target) | target
    "shm send/recv 8 B one-way latency, polling [us] vs spin floor|shm.datperf.send_lat.8.poll|raw.spin.8|lat|1.5"
    "shm send/recv 8 B one-way latency, blocking [us] vs spin floor|shm.datperf.send_lat.8.block|raw.spin.8|lat|3"
    "shm RDMA write 8 B one-way latency, polling [us] vs spin floor|shm.datperf.write_lat.8.poll|raw.spin.8|lat|"
    "shm RDMA write 1 MiB, polling [MB/s] vs process_vm_writev|shm.datperf.write_bw.1M.poll|raw.cma_write.1M|bw|0.95"
    "shm RDMA write 1 MiB, blocking [MB/s] vs process_vm_writev|shm.datperf.write_bw.1M.block|raw.cma_write.1M|bw|0.95"
    "shm RDMA read 1 MiB, polling [MB/s] vs process_vm_readv|shm.datperf.read_bw.1M.poll|raw.cma_read.1M|bw|0.95"
    "shm RDMA read 1 MiB, blocking [MB/s] vs process_vm_readv|shm.datperf.read_bw.1M.block|raw.cma_read.1M|bw|0.95"
    "shm RDMA write 1 MiB, shared-memory LMRs, polling [MB/s] vs process_vm_writev|shm.datperf.write_bw.1M.poll.shm|raw.cma_write.1M|bw|1.5"
    "shm RDMA read 1 MiB, shared-memory LMRs, polling [MB/s] vs process_vm_readv|shm.datperf.read_bw.1M.poll.shm|raw.cma_read.1M|bw|1.5"
    "shm RDMA write 1 MiB, shared-memory LMRs, polling [MB/s] vs memcpy|shm.datperf.write_bw.1M.poll.shm|raw.memcpy.1M|bw|"
    "shm RDMA write 1 MiB, blocking [MB/s] vs memcpy|shm.datperf.write_bw.1M.block|raw.memcpy.1M|bw|"
    "shm send/recv 8 B one-way latency, polling, no cross-memory attach (Yama) [us] vs spin floor|shm.datperf.send_lat.8.poll.nocma|raw.spin.8|lat|"
    "shm send/recv 8 B one-way latency, polling: no cross-memory attach (Yama) vs with it [us]|shm.datperf.send_lat.8.poll.nocma|shm.datperf.send_lat.8.poll|lat|"
    "shm RDMA write 1 MiB, polling, no cross-memory attach (Yama) [MB/s] vs process_vm_writev|shm.datperf.write_bw.1M.poll.nocma|raw.cma_write.1M|bw|"
    "shm RDMA read 1 MiB, polling, no cross-memory attach (Yama) [MB/s] vs process_vm_readv|shm.datperf.read_bw.1M.poll.nocma|raw.cma_read.1M|bw|"
    "shm send/recv 8 B latency, polling [us] vs UCX tag_lat|shm.datperf.send_lat.8.poll|ucx.tag_lat.8|lat|"
    "shm RDMA write 1 MiB, polling [MB/s] vs UCX ucp_put_bw|shm.datperf.write_bw.1M.poll|ucx.put_bw.1M|bw|"
    "shm send/recv 8 B latency, polling, average [us] vs libfabric fi_pingpong shm (its average)|shm.datperf.send_lat.8.poll.avg|ofi.pingpong.8|lat|"
    "shm LMR create + free 64 KiB, heap [pairs/s] (no raw floor: shm registers with no kernel)|shm.datperf.lmr_reg.64K||bw|"
    "shm LMR create + free 64 KiB [pairs/s]: shared-memory (memfd) LMRs vs heap|shm.datperf.lmr_reg.64K.shm|shm.datperf.lmr_reg.64K|bw|"
    # the ofi provider on libfabric's tcp against libfabric on the same provider
    "ofi-tcp-lo send/recv 8 B latency, polling, average [us] vs fi_pingpong -p tcp -e msg (its average)|ofi.datperf.send_lat.8.poll.avg|ofi.tcp.pingpong.8|lat|1.1"
    "ofi-tcp-lo send/recv 8 B latency, polling, median [us] vs fi_pingpong (its average)|ofi.datperf.send_lat.8.poll|ofi.tcp.pingpong.8|lat|"
    "ofi-tcp-lo RDMA write 1 MiB, polling [MB/s] vs fi_rma_bw (libfabric tcp, FI_EP_MSG)|ofi.datperf.write_bw.1M.poll|ofi.tcp.rma_bw.1M|bw|0.95"
    # Intel MPI 2018 (tests/impi/pingpong.c, one-way, the median of each run's iterations)
    "Intel MPI 8 B one-way latency [us]: dapl:dapl on ours (shm) vs Intel shm:shm|shm.impi.ours-dapl.lat.8|shm.impi.intel-shm.lat.8|lat|1.5"
    "Intel MPI 64 KiB bandwidth [MB/s]: dapl:dapl on ours (shm) vs Intel shm:shm|shm.impi.ours-dapl.bw.64K|shm.impi.intel-shm.bw.64K|bw|"
    "Intel MPI 1 MiB bandwidth [MB/s]: dapl:dapl on ours (shm) vs Intel shm:shm|shm.impi.ours-dapl.bw.1M|shm.impi.intel-shm.bw.1M|bw|0.8"
)
for t in rxe siw; do
    rows+=(
        "$t send 8 B latency, polling [us] vs ib_send_lat|$t.datperf.send_lat.8.poll|$t.perftest.send_lat.8.poll|lat|1.05"
        "$t send 8 B latency, blocking [us] vs ib_send_lat -e|$t.datperf.send_lat.8.block|$t.perftest.send_lat.8.block|lat|1.2"
        "$t RDMA write 8 B latency, polling [us] vs ib_write_lat|$t.datperf.write_lat.8.poll|$t.perftest.write_lat.8|lat|"
        "$t RDMA write 1 MiB, polling [MB/s] vs ib_write_bw|$t.datperf.write_bw.1M.poll|$t.perftest.write_bw.1M|bw|0.98"
        "$t RDMA read 1 MiB, polling [MB/s] vs ib_read_bw|$t.datperf.read_bw.1M.poll|$t.perftest.read_bw.1M|bw|"
        "$t RDMA write 1 MiB, polling [MB/s] vs OFED dapltest -T P RW|$t.datperf.write_bw.1M.poll|$t.dapltest.write_bw.1M|bw|"
        # one datperf2 binary, our libdat2.so.2 vs OFED's libdat2.so.2 + libdaplofa (target: at or
        # ahead of OFED dapl on every figure)
        "$t DAT 2.0 send 8 B latency, polling [us]: ours vs OFED libdat2|$t.ours-datperf2.send_lat.8.poll|$t.ofed-datperf2.send_lat.8.poll|lat|1"
        "$t DAT 2.0 send 8 B latency, blocking [us]: ours vs OFED libdat2|$t.ours-datperf2.send_lat.8.block|$t.ofed-datperf2.send_lat.8.block|lat|1"
        "$t DAT 2.0 RDMA write 8 B latency, polling [us]: ours vs OFED libdat2|$t.ours-datperf2.write_lat.8.poll|$t.ofed-datperf2.write_lat.8.poll|lat|1"
        "$t DAT 2.0 send 8 B latency, polling, both ends in one thread [us]: ours vs OFED libdat2|$t.ours-datperf2.send_lat.8.loop|$t.ofed-datperf2.send_lat.8.loop|lat|1"
        "$t DAT 2.0 RDMA write 8 B latency, polling, both ends in one thread [us]: ours vs OFED libdat2|$t.ours-datperf2.write_lat.8.loop|$t.ofed-datperf2.write_lat.8.loop|lat|1"
        "$t DAT 2.0 RDMA write 1 MiB, polling [MB/s]: ours vs OFED libdat2|$t.ours-datperf2.write_bw.1M.poll|$t.ofed-datperf2.write_bw.1M.poll|bw|1"
        "$t DAT 2.0 RDMA read 1 MiB, polling [MB/s]: ours vs OFED libdat2|$t.ours-datperf2.read_bw.1M.poll|$t.ofed-datperf2.read_bw.1M.poll|bw|1"
        "$t DAT 2.0 send 8 B message rate, polling [M/s]: ours vs OFED libdat2|$t.ours-datperf2.msg_rate.8.poll|$t.ofed-datperf2.msg_rate.8.poll|bw|1"
        "$t DAT 2.0 send 8 B message rate, blocking [M/s]: ours vs OFED libdat2|$t.ours-datperf2.msg_rate.8.block|$t.ofed-datperf2.msg_rate.8.block|bw|1"
        "$t DAT 2.0 send 8 B message rate, polling, both ends in one thread [M/s]: ours vs OFED libdat2|$t.ours-datperf2.msg_rate.8.loop|$t.ofed-datperf2.msg_rate.8.loop|bw|1"
        "$t connection setup rate [conn/s]: ours vs OFED (dtestcm)|$t.ours-dtestcm.conn_rate|$t.ofed-dtestcm.conn_rate|bw|1"
        "$t LMR create + free 64 KiB [pairs/s] vs ibv_reg_mr + ibv_dereg_mr|$t.datperf.lmr_reg.64K|$t.raw.reg_mr.64K|bw|"
        # Intel MPI 2018 with I_MPI_FABRICS=dapl:dapl on our libdat2 and on OFED's, and with its tcp fabric
        "$t Intel MPI 8 B one-way latency [us]: dapl:dapl on ours vs on OFED libdat2|$t.impi.ours-dapl.lat.8|$t.impi.ofed-dapl.lat.8|lat|1"
        "$t Intel MPI 64 KiB bandwidth [MB/s]: dapl:dapl on ours vs on OFED libdat2|$t.impi.ours-dapl.bw.64K|$t.impi.ofed-dapl.bw.64K|bw|1"
        "$t Intel MPI 1 MiB bandwidth [MB/s]: dapl:dapl on ours vs on OFED libdat2|$t.impi.ours-dapl.bw.1M|$t.impi.ofed-dapl.bw.1M|bw|1"
        "$t Intel MPI 8 B one-way latency [us]: dapl:dapl on ours vs Intel tcp:tcp|$t.impi.ours-dapl.lat.8|$t.impi.tcp.lat.8|lat|1"
        "$t Intel MPI 1 MiB bandwidth [MB/s]: dapl:dapl on ours vs Intel tcp:tcp|$t.impi.ours-dapl.bw.1M|$t.impi.tcp.bw.1M|bw|1"
        "$t DAT 2.0 instructions per send/recv round trip, blocking: ours vs OFED libdat2|$t.ours-datperf2.instr.send_lat.8.block|$t.ofed-datperf2.instr.send_lat.8.block|lat|1"
        "$t DAT 2.0 instructions per 64 B send + completion, blocking: ours vs OFED libdat2|$t.ours-datperf2.instr.send_bw.64.block|$t.ofed-datperf2.instr.send_bw.64.block|lat|1"
    )
done
# One section per part that has values: its run line, its figures, the datperf cost per operation.
# A row's part is its figure's first name component (shm, rxe, siw); Intel MPI rows (".impi.") get
# sections of their own. BENCHMARKS.md shows these sections as they are.
area_of() { # FIGURE-NAME: the section key
    case $1 in *.impi.*) echo "${1%%.*}.impi" ;; *) echo "${1%%.*}" ;; esac
}
area_title() {
    case $1 in
    shm) echo "shm on this host" ;;
    ofi) echo "ofi (libfabric tcp) on this host" ;;
    shm.impi) echo "Intel MPI 2018 on this host" ;;
    *.impi) echo "Intel MPI 2018 in the ${1%.impi} guest" ;;
    *) echo "verbs in the $1 guest" ;;
    esac
}
run_line() { # PART: its latest run line, as a sentence
    sed -n "s/^run part=$1 //p" "$RESULTS" | tail -1 | awk '{
        m = $0; sub(/.*machine=/, "", m); r = a = d = c = ""
        for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "rounds") r = kv[2]; if (kv[1] == "accel") a = kv[2]
                                    if (kv[1] == "date") d = kv[2]; if (kv[1] == "commit") c = kv[2] }
        sub(/T/, " ", d); sub(/Z$/, " UTC", d)
        printf "run: %s, commit %s, %s round%s%s; %s\n", d, c, r, (r == 1 ? "" : "s"), (a != "" ? " in one guest (accel " a ")" : ""), m }'
}
table_row() { # LABEL|OURS|BASE|KIND|TARGET
    local label ours base kind target o b ratio verdict
    IFS='|' read -r label ours base kind target <<<"$1"
    o=$(med "$ours") b=$(med "$base")
    [ -n "$o" ] || [ -n "$b" ] || return 0
    ratio="" verdict="-"
    if [ -n "$o" ] && [ -n "$b" ]; then
        ratio=$(awk -v o="$o" -v b="$b" 'BEGIN { printf "%#.4g", o / b }')
        if [ -n "$target" ]; then
            # judged on the unrounded ratio (0.999 is not "1.00: met")
            verdict=$(awk -v o="$o" -v b="$b" -v t="$target" -v k="$kind" 'BEGIN { r = o / b
                if (k == "lat") { if (r <= t) print "<= " t "x: met"; else printf "<= %sx: missed, %.2fx the target\n", t, r / t }
                else { if (r >= t) print ">= " t "x: met"; else { s = (1 - r / t) * 100; printf ">= %sx: missed, %." (s < 1 ? 2 : 1) "f%% short\n", t, s } } }')
        fi
    fi
    echo "| $label | ${o:-n/a} | ${b:-n/a} | ${ratio:-n/a} | $verdict |"
}
cost_table() { # PART: datperf's cost per operation of the part's runs
    local names name
    names=$(sed -n "s/^datperf name=\($1\.[^ ]*\) .*/\1/p" "$RESULTS" | awk '!seen[$0]++')
    [ -n "$names" ] || return 0
    echo
    echo "datperf cost per operation (median of rounds): user+sys CPU us, voluntary/involuntary context switches, threads,"
    echo "and the context switches of the library's other threads (a message handed to another thread wakes it: >= 1 per message)"
    echo
    echo "| datperf run | client cpu | client cs v/i | client threads | client other threads' cs | server cpu | server cs v/i | server threads | server other threads' cs |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for name in $names; do
        f() { grep "^datperf name=$name " "$RESULTS" | kv "$1" | median; }
        echo "| $name | $(f cpu_us_per_op) | $(f vcsw_per_op)/$(f ivcsw_per_op) | $(f threads) | $(f other_cs_per_op) |" \
             "$(f srv_cpu_us_per_op) | $(f srv_vcsw_per_op)/$(f srv_ivcsw_per_op) | $(f srv_threads) | $(f srv_other_cs_per_op) |"
    done
}
{
    areas=$(for row in "${rows[@]}"; do IFS='|' read -r _ ours _ <<<"$row"; area_of "$ours"; done | awk '!seen[$0]++')
    for area in $areas; do
        body=$(for row in "${rows[@]}"; do
            IFS='|' read -r _ ours _ <<<"$row"
            [ "$(area_of "$ours")" = "$area" ] && table_row "$row"
        done)
        [ -n "$body" ] || continue
        echo "### $(area_title "$area")"
        echo
        run_line "${area%.impi}"
        echo
        echo "| figure (median of rounds) | ours | baseline | ratio | target |"
        echo "|---|---:|---:|---:|---|"
        echo "$body"
        [ "$area" = "${area%.impi}" ] && cost_table "$area"
        echo
    done
} >"$OUT/table.md"
echo
cat "$OUT/table.md"
