#!/bin/bash
# tools/bench/impi-bench.sh -- Intel MPI 2018 Update 3's one-way latency and bandwidth
# (tests/impi/pingpong.c: 8 B, 64 KiB and 1 MiB, every byte checked, the median of each run's
# iterations) over DAPL on our libdat2.so.2 against baselines, in interleaved rounds: each round
# runs one mpirun per variant, the variant that goes first rotating from round to round. A run
# counts only when tests/impi/lib.sh's impi_check accepts it (the program's data check passed,
# every rank on the fabric and the libdat2.so.2 its variant names).
#
# usage: impi-bench.sh [-n] PREFIX VARIANT...
#   VARIANT  NAME=LIBDIR,IA,CONFIG: LIBDIR as tests/impi/run.sh -L (a directory, or `system` for
#            the dynamic linker's choice, OFED's libdat2.so.2), IA the IA name, CONFIG a fabric
#            configuration of tests/impi/run.sh (dapl, dapl-ud, shm, tcp, ...)
#   -n       never fetch the wheel (inside a guest: the host prepared build/impi)
#   e.g. tools/bench/impi-bench.sh shm ours-dapl=build/lib,shm,dapl intel-shm=system,-,shm
# Appends to $RESULTS (tools/bench/lib.sh's format, the median of the rounds is bench.sh's):
#   result name=PREFIX.impi.NAME.lat.SIZE value=<one-way us>     SIZE: 8, 64K, 1M
#   result name=PREFIX.impi.NAME.bw.SIZE value=<MB/s, 10^6 bytes>
# and every run's output to $RAWLOG; without them (standalone) both are temporary files, the
# raw output goes to stderr and the results to stdout at the end.
# BENCH_ROUNDS (default 5), BENCH_IMPI_ARGS (pingpong's: default "-n 10000 -N 1000 -M 200"),
# BENCH_IMPI_TIMEOUT (seconds per run, default 300); IMPI_* as in tests/impi/lib.sh.
# Exit status 0; 0 with "SKIPPED impi: <command>" when Intel MPI cannot be had.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
fetch=fetch
[ "${1:-}" = -n ] && { fetch=nofetch; shift; }
[ $# -ge 2 ] || { sed -n '9,16p' "$0" >&2; exit 2; }
prefix=$1
shift
standalone=0
if [ -z "${RESULTS:-}" ]; then
    standalone=1 RESULTS=$(mktemp) RAWLOG=$(mktemp)
fi
. "$ROOT/tools/bench/lib.sh"
# shellcheck source=../../tests/impi/lib.sh
. "$ROOT/tests/impi/lib.sh"
impi_prepare "$ROOT/build/impi" "$fetch"
case $? in
0) ;;
1) echo "SKIPPED impi: $impi_skip"; exit 0 ;;
*) echo "impi-bench: preparing Intel MPI or building the test programs failed" >&2; exit 2 ;;
esac
read -r -a pp_args <<<"${BENCH_IMPI_ARGS:--n 10000 -N 1000 -M 200}"
rounds=${BENCH_ROUNDS:-5}

# run NAME LIBDIR IA CONFIG: one pingpong mpirun, its figures recorded
run() {
    local name=$1 libdir=$2 ia=$3 config=$4 log settings why size key
    [ "$libdir" = system ] || libdir=$(cd "$libdir" && pwd -P)
    log=$(mktemp)
    read -r -a settings <<<"$(impi_fabric "$config" "$ia") ${IMPI_ENV:-}"
    impi_mpirun "${BENCH_IMPI_TIMEOUT:-300}" "$log" "$libdir" 2 "${settings[@]}" -- "$impi_bin/pingpong" "${pp_args[@]}"
    local rc=$?
    { echo "== impi $prefix.$name: $config over $libdir, IA $ia (exit $rc)"; cat "$log"; } >>"$RAWLOG"
    why=$(impi_check "$log" "$config" "$libdir" pingpong 2)
    [ $rc = 0 ] || why="mpirun exit status $rc"
    if [ -n "$why" ]; then
        echo "impi-bench: no figures from $prefix.$name in this round: $why" | tee -a "$RAWLOG" >&2
    else
        for size in 8:8 65536:64K 1048576:1M; do
            for key in lat:lat_us bw:bw_MBps; do
                record "$prefix.impi.$name.${key%%:*}.${size#*:}" "$(grep "^pingpong size=${size%%:*} " "$log" | kv "${key#*:}")"
            done
        done
    fi
    rm -f "$log"
}

variants=("$@")
for r in $(seq 1 "$rounds"); do
    echo "impi-bench: $prefix round $r of $rounds" >&2
    n=${#variants[@]}
    for k in $(seq 0 $((n - 1))); do
        v=${variants[$(((k + r - 1) % n))]}
        IFS=, read -r libdir ia config <<<"${v#*=}"
        run "${v%%=*}" "$libdir" "$ia" "$config"
    done
done
if [ $standalone = 1 ]; then
    cat "$RAWLOG" >&2
    cat "$RESULTS"
    rm -f "$RESULTS" "$RAWLOG"
fi
