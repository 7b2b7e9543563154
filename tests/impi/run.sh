#!/bin/bash
# tests/impi/run.sh -- Intel MPI 2018 Update 3 (an unmodified, frozen DAT 2.0 consumer: it opens
# libdat2.so.2 with dlopen, then dat_ia_openv and the DAT_<CALL> macros of dat_redirection.h)
# over a given libdat2.so.2 and IA name, running tests/impi/pingpong.c (data-checked, 8 B, 64 KiB,
# 1 MiB) and tests/impi/collectives.c (checked MPI_Bcast, MPI_Allreduce, MPI_Alltoall).
#
# usage: run.sh [-L DIR|system] [-P IA] [-l LABEL] [-r] [-B BUILD] [-n] [-p] [CONFIG...]
#   -L DIR    the directory holding the libdat2.so.2 under test, first on the ranks'
#             LD_LIBRARY_PATH (default build/lib); `system`: the dynamic linker's choice
#             (OFED's libdat2.so.2 from libdapl2)
#   -P IA     the IA name Intel MPI opens (I_MPI_DAPL_PROVIDER, I_MPI_DAPL_UD_PROVIDER; default
#             shm, our built-in provider's name, which needs no dat.conf)
#   -l LABEL  the second word of each case's name (default ours)
#   -r        the library is a reference (OFED's): a case that fails is reported as REFFAIL, the
#             reference's failure, and does not fail the run
#   -B BUILD  where the wheel is unpacked and the programs built (default build/impi)
#   -n        never fetch the wheel (inside a guest: the host prepared BUILD)
#   -p        prepare only (fetch, unpack, build), run nothing
#   CONFIG    the fabrics to run (default: dapl dapl-ud shm:dapl shm:dapl-ud)
#     dapl          I_MPI_FABRICS=dapl:dapl (RC): every message between ranks over DAPL
#     dapl-ud       the same with I_MPI_DAPL_UD=on (Intel MPI's UD transport over DAT_IB_UD EPs)
#     shm:dapl      I_MPI_FABRICS=shm:dapl: ranks of one host talk through Intel's shared memory,
#                   ranks on different hosts over DAPL (on one host DAPL only starts and stops)
#     shm:dapl-ud   the same with I_MPI_DAPL_UD=on
#     shm, tcp      I_MPI_FABRICS=shm:shm or tcp:tcp: Intel MPI without DAT (controls, baselines)
# Each config runs pingpong on 2 ranks and collectives on 2 and 4 ranks (IMPI_CASES, default
# "pingpong.2 collectives.2 collectives.4"). A case passes when mpirun exits 0 within
# IMPI_TIMEOUT seconds (default 180; a hang is a FAIL), the program printed its "passed" line,
# every rank reported the expected data transfer mode (I_MPI_DEBUG=2) and, for a DAPL config,
# loaded libdat2.so.2 from DIR (-L system: not from build/lib) and no other provider library than
# OFED's libdaplofa (-L system) or none (ours).
# Environment: IMPI_CACHE (where the wheel is kept, default /var/tmp/impi), IMPI_PINGPONG_ARGS
# (default "-n 1000 -N 200 -M 50": iterations at 8 B, 64 KiB, 1 MiB), IMPI_COLL_ITERS (default
# 5), IMPI_ENV (more NAME=VALUE for every rank), IMPI_HOSTS / IMPI_PPN / IMPI_BOOTSTRAP_EXEC
# (ranks on several hosts, lib.sh), IMPI_XFAIL ("LABEL.CONFIG.CASE ...": known failures, each
# documented where the list is set; one that fails is reported XFAIL and not counted, one that
# passes XPASS; they run under IMPI_XFAIL_TIMEOUT, default 60 s).
# Output: "PASS|FAIL|XFAIL|XPASS|REFFAIL impi.LABEL.CONFIG.CASE (secs)" per case (a failure with
# the log's tail),
# "figure impi.LABEL.CONFIG size=... lat_us=... bw_MBps=..." per ping-pong size, a summary line.
# Exit status: 0 when no case failed; 0 with "SKIPPED impi: <command>" when the wheel or MPICH's
# mpi.h cannot be had; 2 on a usage or build error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
libdir=$root/build/lib ia=shm label=ours reference=0 build=$root/build/impi fetch=fetch prepare_only=0
while getopts L:P:l:rB:np opt; do
    case $opt in
    L) libdir=$OPTARG ;;
    P) ia=$OPTARG ;;
    l) label=$OPTARG ;;
    r) reference=1 ;;
    B) build=$OPTARG ;;
    n) fetch=nofetch ;;
    p) prepare_only=1 ;;
    *) sed -n '7,24p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
configs=${*:-dapl dapl-ud shm:dapl shm:dapl-ud}
if [ "$prepare_only" = 0 ] && [ "$libdir" != system ]; then
    libdir=$(cd "$libdir" 2>/dev/null && pwd -P) && [ -f "$libdir/libdat2.so.2" ] ||
        { echo "impi: no libdat2.so.2 in ${libdir:-the -L directory} (run make first)" >&2; exit 2; }
fi
impi_prepare "$build" "$fetch"
case $? in
0) ;;
1) echo "SKIPPED impi: $impi_skip"; exit 0 ;;
*) echo "impi: preparing Intel MPI or building the test programs failed" >&2; exit 2 ;;
esac
[ "$prepare_only" = 1 ] && { echo "impi: prepared in $build"; exit 0; }
logs=$build/logs
mkdir -p "$logs"
passed=0 failed=0 reffailed=0 xfailed=0
t0=$(date +%s)

# run_case CONFIG CASE: one mpirun, checked and reported
run_case() {
    local config=$1 case=$2 prog=${2%.*} np=${2##*.} name="impi.$label.$1.$2" log settings args why=
    log=$logs/${name//:/-}.log
    read -r -a settings <<<"$(impi_fabric "$config" "$ia") ${IMPI_ENV:-}"
    case $prog in
    pingpong) read -r -a args <<<"${IMPI_PINGPONG_ARGS:--n 1000 -N 200 -M 50}" ;;
    collectives) args=(-i "${IMPI_COLL_ITERS:-5}") ;;
    *) echo "impi: unknown case $case" >&2; exit 2 ;;
    esac
    local ts=$SECONDS limit=${IMPI_TIMEOUT:-180} known=0
    if [[ " ${IMPI_XFAIL:-} " == *" $label.$config.$case "* ]]; then
        known=1 limit=${IMPI_XFAIL_TIMEOUT:-60}
    fi
    impi_mpirun "$limit" "$log" "$libdir" "$np" "${settings[@]}" -- "$impi_bin/$prog" "${args[@]}"
    local rc=$? secs=$((SECONDS - ts))
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        why="timed out after $limit s"
    elif [ $rc != 0 ]; then
        why="mpirun exit status $rc"
    else
        why=$(impi_check "$log" "$config" "$libdir" "$prog" "$np")
    fi
    if [ -z "$why" ]; then
        echo "$([ $known = 1 ] && echo "XPASS" || echo PASS) $name (${secs} s)$([ $known = 1 ] && echo ": listed in IMPI_XFAIL, passes now")"
        passed=$((passed + 1))
        [ "$prog" = pingpong ] && sed -n "s/^pingpong \(size=.*\)/figure impi.$label.$config \1/p" "$log"
    elif [ $known = 1 ]; then
        echo "XFAIL $name (${secs} s): $why (known failure, see IMPI_XFAIL where it is set)"
        xfailed=$((xfailed + 1))
        grep -E 'error|[Ff]atal' "$log" | head -3 | sed 's/^/  | /'
    else
        if [ "$reference" = 1 ]; then
            echo "REFFAIL $name (${secs} s): $why (the reference library's failure)"
            reffailed=$((reffailed + 1))
        else
            echo "FAIL $name (${secs} s): $why"
            failed=$((failed + 1))
        fi
        echo "  --- tail of $log"
        tail -n 30 "$log" | sed 's/^/  | /'
    fi
}

for config in $configs; do
    impi_fabric "$config" "$ia" >/dev/null || { echo "impi: unknown config '$config'" >&2; exit 2; }
    echo "=== impi [$label] $config: $(impi_fabric "$config" "$ia"), libdat2.so.2 from $libdir"
    for case in ${IMPI_CASES:-pingpong.2 collectives.2 collectives.4}; do
        run_case "$config" "$case"
    done
done
echo "impi [$label]: $passed passed, $failed failed$([ "$reference" = 1 ] && echo ", $reffailed failed on the reference")$([ $xfailed = 0 ] || echo ", $xfailed known failures") ($(($(date +%s) - t0)) s)"
[ $failed = 0 ]
