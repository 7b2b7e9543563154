#!/bin/bash
# Runs inside a soft-RDMA guest (tests/vm/rdma-guest.sh): Debian's unmodified dapl2-utils
# (dtest, dtestx, dtestcm, dtestsrq, dapltest), server and client in this one guest over the
# soft device, against a chosen DAT 2.0 library.
#
# usage: dapl2-utils.sh [-L DIR] [-p PROGRAMS] RUN...
#   -L DIR       the directory holding the libdat2.so.2 under test (default: build/lib)
#   -p PROGRAMS  a space-separated subset of: dtest dtestx dtestcm dtestsrq dapltest
#   RUN          STACK (server and client on the same library) or SERVER_STACK/CLIENT_STACK
#                (a mixed run: dtest and dapltest -T T only), or `wire` (the private data each
#                provider sends and answers, see run_wire), where STACK is
#     ofed     OFED's libdat2.so.2 and its cma provider libdaplofa.so.2, IA ofa-v2-$RDMA_TYPE
#              (the harness's DAT_OVERRIDE dat.conf line; ofa-v2-$RDMA_NETDEV is added for it)
#     path     DIR/libdat2.so.2 by LD_LIBRARY_PATH=DIR, IA ofa-v2-$RDMA_NETDEV (our built-in
#              verbs provider's name for the port on that netdev)
#     preload  DIR/libdat2.so.2 by LD_PRELOAD, in front of OFED's library, IA as for path
# How each program runs and is checked (loader log, timeouts, ready lines, PASS/FAIL/XFAIL and
# figure lines): tests/dapl2/lib.sh, shared with the native shm run (tests/dapl2/shm.sh).
# Exit status: 0 when every test passed.
# Environment from the harness: RDMA_TYPE RDMA_NETDEV RDMA_IP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$root/build/lib
programs="dtest dtestx dtestcm dtestsrq dapltest"
while getopts L:p: opt; do
    case $opt in
    L) lib=$(cd "$OPTARG" && pwd) || exit 2 ;;
    p) programs=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n '5,16p' "$0" >&2; exit 2; }
ip=$RDMA_IP
transport=$RDMA_TYPE
time_div=1
xfail_doc=tests/vm/check.sh
work=$(mktemp -d /tmp/dapl2-utils.XXXXXX)
# shellcheck source=../dapl2/lib.sh
. "$root/tests/dapl2/lib.sh"
# OFED's library learns our IA name too (its provider on the same netdev): dtest's client opens
# the IA name its server sends it, so a mixed run hands OFED's side ofa-v2-$RDMA_NETDEV
{ cat "$DAT_OVERRIDE"; echo "ofa-v2-$RDMA_NETDEV u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"$RDMA_NETDEV 0\" \"\""; } >"$work/dat.conf"
export DAT_OVERRIDE=$work/dat.conf

ia_of() { # STACK: the IA name the programs get
    case $1 in
    ofed) echo "ofa-v2-$RDMA_TYPE" ;;
    *) echo "ofa-v2-$RDMA_NETDEV" ;;
    esac
}

run_mixed() { # RUN SSTACK CSTACK: dtest, dtestx -u and dapltest -T T across two libraries
    case " $programs " in *" dtest "*) run_dtest "$@" ;; esac
    case " $programs " in *" dtestx "*) run_dtestx_ud "$@" ;; esac
    case " $programs " in
    *" dapltest "*)
        dapltest_server "$1" "$2" || { report "$1.dapltest-server" 1 "$work/$1.dapltest.server"; return; }
        dapltest_transaction "$1" "$3"
        dapltest_stop "$1" "$2" "$3"
        ;;
    esac
}

# run_wire: what OFED's cma provider and ours put into the rdma_cm private data, each talking
# to tests/vm/cm-probe (plain rdma_cm): the request of `dapltest -T Q` (which passes no private
# data of its own) and the reply of a `dapltest -T S` to the probe's request. Both stacks must
# put the same bytes on the wire.
run_wire() {
    local stack port=46100 ok=0 probe=$work/cm-probe
    cc -O2 -o "$probe" "$root/tests/vm/cm-probe.c" -lrdmacm -libverbs || { report wire 1; return; }
    for stack in ofed path; do
        port=$((port + 1))
        rm -f "$work/probe.server"
        "$probe" listen "$ip" $port >"$work/probe.server" 2>&1 &
        local probe_pid=$! i
        for i in $(seq 100); do grep -q listening "$work/probe.server" && break; sleep 0.1; done
        in_stack "$stack" "$work/wire-$stack.client" 60 dapltest -T Q -s "$ip" -D "$(ia_of "$stack")" -n $port
        wait $probe_pid || ok=1
        grep -A8 'connection request' "$work/probe.server" >"$work/wire-$stack.request"
        echo "$stack: dapltest -T Q's connection request as it arrives:"
        sed 's/^/  /' "$work/wire-$stack.request"
        port=$((port + 1))
        start_server "wire-$stack" "$stack" 120 'Service Point Ready' dapltest -T S -D "$(ia_of "$stack")" -n $port || ok=1
        timeout 60 "$probe" connect "$ip" $port >"$work/wire-$stack.reply" 2>&1 || ok=1
        echo "$stack: dapltest -T S's reply to a request carrying \"cm-probe\":"
        sed 's/^/  /' "$work/wire-$stack.reply"
        in_stack "$stack" "$work/wire-$stack.quit" 60 dapltest -T Q -s "$ip" -D "$(ia_of "$stack")" -n $port
        wait "$server_pid"
    done
    for f in request reply; do
        [ -s "$work/wire-ofed.$f" ] && cmp -s "$work/wire-ofed.$f" "$work/wire-path.$f" ||
            { echo "wire: the $f differs between OFED's provider and ours"; ok=1; }
    done
    report wire $ok "$work/probe.server"
}

for run in "$@"; do
    [ "$run" = wire ] && { run_wire; continue; }
    sstack=${run%/*} cstack=${run#*/}
    for s in "$sstack" "$cstack"; do
        case $s in ofed | path | preload) ;; *) echo "unknown stack '$s' in '$run'" >&2; exit 2 ;; esac
    done
    [ "$sstack" = ofed ] && [ "$cstack" = ofed ] || [ -f "$lib/libdat2.so.2" ] ||
        { echo "FAIL dapl2-utils.$run: no $lib/libdat2.so.2"; failed=$((failed + 1)); continue; }
    echo "=== dapl2-utils [$RDMA_TYPE] $run: server $sstack ($(ia_of "$sstack")), client $cstack ($(ia_of "$cstack"))"
    tr=$(date +%s)
    run=${run/\//-}
    if [ "$sstack" != "$cstack" ]; then
        run_mixed "$run" "$sstack" "$cstack"
    else
        # shellcheck disable=SC2086
        run_programs "$run" "$sstack" $programs || exit 2
    fi
    echo "=== $run: $(( $(date +%s) - tr )) s"
done
finish_run
