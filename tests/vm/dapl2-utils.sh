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
# Every process runs under LD_DEBUG=files: afterwards its loader log must show the library the
# stack names (ours from DIR and no libdaplofa, or OFED's with libdaplofa), so a run cannot
# silently test the wrong library. Every program runs under `timeout`; servers are started
# first and a client starts once its server printed its ready line (polled, bounded).
# Prints "figure STACK PROGRAM NAME VALUE" lines (dtest, dtestcm, dapltest -T P) and one
# "PASS|FAIL dapl2-utils.RUN.TEST" line per test; on failure the output tails.
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
work=$(mktemp -d /tmp/dapl2-utils.XXXXXX)
failed=0 passed=0 xfailed=0
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

# in_stack STACK LOG SECS CMD...: runs CMD with STACK's library for at most SECS seconds; stdout
# and stderr line-buffered into LOG, the loader's log into LOG.ld.<pid>
in_stack() {
    local stack=$1 log=$2 secs=$3
    shift 3
    local env=(env -u LD_LIBRARY_PATH -u LD_PRELOAD LD_DEBUG=files "LD_DEBUG_OUTPUT=$log.ld")
    case $stack in
    path) env+=("LD_LIBRARY_PATH=$lib") ;;
    preload) env+=("LD_PRELOAD=$lib/libdat2.so.2") ;;
    esac
    timeout -k 5 "$secs" "${env[@]}" stdbuf -oL -eL "$@" >"$log" 2>&1
}

# loaded_as STACK LOG: the loader logs of LOG's processes show STACK's library and provider
loaded_as() {
    local stack=$1 log=$2 ld
    ld=$(cat "$log".ld.* 2>/dev/null | grep 'calling init:')
    [ -n "$ld" ] || { echo "no loader log for $log"; return 1; }
    case $stack in
    ofed)
        echo "$ld" | grep -q '/libdaplofa\.so\.2$' || { echo "$log: OFED's libdaplofa.so.2 was not loaded"; return 1; }
        ! echo "$ld" | grep -qF "$lib/libdat2.so.2" || { echo "$log: our libdat2.so.2 was loaded"; return 1; }
        ;;
    *)
        echo "$ld" | grep -qF "$lib/libdat2.so.2" || { echo "$log: $lib/libdat2.so.2 was not loaded"; return 1; }
        ! echo "$ld" | grep -q 'libdaplofa\.so' || { echo "$log: OFED's libdaplofa was loaded"; return 1; }
        ;;
    esac
}

# start_server NAME STACK SECS READY_REGEX CMD...: starts a server in the background (pid in
# server_pid, output in $work/NAME.server) and waits, bounded, until its output matches READY_REGEX
start_server() {
    local name=$1 stack=$2 secs=$3 ready=$4 i
    shift 4
    in_stack "$stack" "$work/$name.server" "$secs" "$@" &
    server_pid=$!
    for i in $(seq 600); do
        grep -Eq "$ready" "$work/$name.server" 2>/dev/null && return 0
        kill -0 $server_pid 2>/dev/null || break
        sleep 0.1
    done
    echo "$name: the server did not print /$ready/ within 60 s"
    return 1
}

# report NAME OK LOGS...: one PASS/FAIL line; on failure each log's tail
# DAPL2_UTILS_XFAIL="run.test ...": known failures of our library (each documented where the list
# is set, tests/vm/check.sh), reported as XFAIL and not counted as failed.
report() {
    local name=$1 ok=$2 f
    shift 2
    if [ "$ok" = 0 ]; then
        echo "PASS dapl2-utils.$name"
        passed=$((passed + 1))
    elif [[ " ${DAPL2_UTILS_XFAIL:-} " == *" $name "* ]]; then
        echo "XFAIL dapl2-utils.$name (known failure, see tests/vm/check.sh)"
        xfailed=$((xfailed + 1))
    else
        echo "FAIL dapl2-utils.$name"
        failed=$((failed + 1))
        for f in "$@"; do
            [ -f "$f" ] && { echo "  --- tail of ${f##*/}"; tail -n 25 "$f" | sed 's/^/  | /'; }
        done
    fi
}

# figure STACK PROGRAM NAME VALUE
figure() { [ -n "$4" ] && echo "figure $1 $2 $3 $4"; }

# client_server NAME SSTACK CSTACK READY SERVER_ARGS -- CLIENT_ARGS: PROGRAM is the first
# server argument; both must exit 0 and load their stack; further checks by the caller on
# $work/NAME.server and $work/NAME.client
client_server() {
    local name=$1 sstack=$2 cstack=$3 ready=$4 sargs=() cargs=() st=0 cst sst
    shift 4
    while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
    shift
    cargs=("$@")
    rm -f "$work/$name".*
    start_server "$name" "$sstack" 300 "$ready" "${sargs[@]}" || st=1
    if [ $st = 0 ]; then
        in_stack "$cstack" "$work/$name.client" 120 "${cargs[@]}"
        cst=$?
        [ $cst = 0 ] || { echo "$name: client exit status $cst"; st=1; }
    fi
    [ $st = 0 ] || kill "$server_pid" 2>/dev/null
    wait "$server_pid"
    sst=$?
    [ $sst = 0 ] || { echo "$name: server exit status $sst"; st=1; }
    loaded_as "$sstack" "$work/$name.server" || st=1
    [ ! -f "$work/$name.client" ] || loaded_as "$cstack" "$work/$name.client" || st=1
    return $st
}

both_print() { # NAME REGEX: server and client output both match
    grep -Eq "$2" "$work/$1.server" && grep -Eq "$2" "$work/$1.client" || { echo "$1: /$2/ missing"; return 1; }
}
none_print() { # NAME REGEX: neither output matches
    ! grep -Eq "$2" "$work/$1".server "$work/$1".client 2>/dev/null || { echo "$1: /$2/ printed"; return 1; }
}

run_dtest() { # RUN SSTACK CSTACK: dtest exits 0 even when it fails: PASSED is required
    local n=$1.dtest ok=0
    # -b 65536: the default 4 MB buffers take minutes under emulation
    client_server "$n" "$2" "$3" 'waiting for client connection' \
        dtest -s -P "$(ia_of "$2")" -b 65536 -- dtest -h "$ip" -P "$(ia_of "$3")" -b 65536 || ok=1
    both_print "$n" 'DAPL Test Complete\. PASSED' || ok=1
    report "$n" $ok "$work/$n.server" "$work/$n.client"
    # "Message PingPong: (100 x 65536) Total ... us: latency 1713.52 us, BW 38.25 MB/s"
    # "RDMA write (bi-direction): Total=... usec, itime=602.65 us, poll=0, 2000 x 65536, 108.75 MB/sec"
    figure "$1" dtest pingpong_64K_latency_us "$(sed -n 's/.*Message PingPong:.* latency \([0-9.]*\) us.*/\1/p' "$work/$n.client")"
    figure "$1" dtest pingpong_64K_MBps "$(sed -n 's/.*Message PingPong:.* BW \([0-9.]*\) MB.*/\1/p' "$work/$n.client")"
    figure "$1" dtest rdma_write_bidir_64K_MBps "$(sed -n 's/.*RDMA write (bi-direction):.* \([0-9.]*\) MB\/sec.*/\1/p' "$work/$n.client")"
}

run_dtestx() { # RUN STACK: RDMA write with immediate data, compare-and-swap, fetch-and-add
    local n=$1.dtestx ok=0 ia
    ia=$(ia_of "$2")
    if [ "$RDMA_TYPE" = siw ]; then
        # iWARP has neither atomics nor immediate data: the IA must not advertise the IB
        # extensions, and the server stops at once saying so (as it does on OFED's provider)
        rm -f "$work/$n".*
        in_stack "$2" "$work/$n.server" 60 dtestx -s -P "$ia"
        grep -q 'IB extension not supported' "$work/$n.server" || { echo "$n: IB extensions offered on iWARP"; ok=1; }
        loaded_as "$2" "$work/$n.server" || ok=1
        report "$n" $ok "$work/$n.server"
        return
    fi
    client_server "$n" "$2" "$2" 'waiting to snd addr' dtestx -s -P "$ia" -- dtestx -c -h "$ip" -P "$ia" || ok=1
    for t in 'RDMA_WRITE_WITH_IMMEDIATE_DATA test - ' 'CMP_SWAP test - ' 'FETCH_ADD test - ' 'immed/atomic test '; do
        both_print "$n" "$t""PASSED" || ok=1
    done
    none_print "$n" FAIL || ok=1
    report "$n" $ok "$work/$n.server" "$work/$n.client"
    run_dtestx_ud "$1" "$2"
}

# run_dtestx_ud RUN STACK: dtestx's UD mode (-u: four address exchanges each way, a datagram each
# way, AH and CM frees) where the IA lists DAT_IB_UD "TRUE" (dtestx -q prints the provider
# attributes); elsewhere a SKIP line (our verbs provider has no UD endpoints yet, README)
run_dtestx_ud() {
    local n=$1.dtestx_ud ok=0 ia
    ia=$(ia_of "$2")
    rm -f "$work/$n".*
    in_stack "$2" "$work/$n.query" 60 dtestx -q -P "$ia"
    if ! grep -q 'DAT_IB_UD=TRUE' "$work/$n.query"; then
        echo "SKIP dapl2-utils.$n ($ia lists no DAT_IB_UD)"
        return
    fi
    client_server "$n" "$2" "$2" 'waiting to snd addr' dtestx -s -u -P "$ia" -- dtestx -c -u -h "$ip" -P "$ia" || ok=1
    both_print "$n" 'UD test PASSED' || ok=1
    none_print "$n" FAIL || ok=1
    report "$n" $ok "$work/$n.server" "$work/$n.client"
}

run_dtestcm() { # RUN STACK: connection setup rate
    local n=$1.dtestcm ok=0 ia c=100
    ia=$(ia_of "$2")
    client_server "$n" "$2" "$2" 'server waiting for client' \
        dtestcm -s -P "$ia" -c $c -- dtestcm -h "$ip" -P "$ia" -c $c || ok=1
    grep -q "ALL $c CONNECTED on Server" "$work/$n.server" || { echo "$n: server: not all $c connected"; ok=1; }
    grep -q "ALL $c CONNECTED on Client" "$work/$n.client" || { echo "$n: client: not all $c connected"; ok=1; }
    report "$n" $ok "$work/$n.server" "$work/$n.client"
    # " Connections:  2176.33 usec, CPS  459.49 Total 0.22 secs, poll_cnt=2578, Num=100"
    figure "$1" dtestcm connections_per_s "$(sed -n 's/.*Connections:.*CPS *\([0-9.]*\).*/\1/p' "$work/$n.client")"
    figure "$1" dtestcm connect_us "$(sed -n 's/.*Connections: *\([0-9.]*\) usec.*/\1/p' "$work/$n.client")"
}

run_dtestsrq() { # RUN STACK: RC endpoints sharing a receive queue
    local n=$1.dtestsrq ok=0 ia
    ia=$(ia_of "$2")
    client_server "$n" "$2" "$2" 'server ready on port' \
        dtestsrq -s -v -P "$ia" -c 2 -- dtestsrq -v -h "$ip" -P "$ia" -c 2 || ok=1
    none_print "$n" 'FAIL|ERR' || ok=1
    report "$n" $ok "$work/$n.server" "$work/$n.client"
}

# lines that mean a dapltest client or server failed (its exit status is 0 after most failures)
dapltest_errors='Test Error|FAIL|failed|Segmentation'

# dapltest_server RUN SSTACK: starts `dapltest -T S` (output $work/RUN.dapltest.server)
dapltest_server() {
    start_server "$1.dapltest" "$2" 400 'Service Point Ready' dapltest -T S -D "$(ia_of "$2")"
}

# dapltest_client RUN STACK TEST -T LETTER ARGS...: one client run (-T must come first); exit 0,
# no error line, its stack loaded.
# The functional groups (TEST F-*) print "failed" lines for the errors their cases provoke: there
# every case's "Result:" must be PASS or UNSUPP (not supported by the provider).
dapltest_client() {
    local run=$1 stack=$2 test=$3 st=0 log
    shift 3
    log=$work/$run.dapltest-$test.client
    rm -f "$log" "$log".ld.*
    in_stack "$stack" "$log" 300 dapltest "$1" "$2" -D "$(ia_of "$stack")" "${@:3}" || { echo "dapltest $test: exit status $?"; st=1; }
    case $test in
    F-*)
        grep -q '^Result: PASS' "$log" || { echo "dapltest $test: no case passed"; st=1; }
        ! grep '^Result:' "$log" | grep -Evq 'Result: (PASS|UNSUPP) *$' || { echo "dapltest $test: a case failed"; st=1; }
        ;;
    *) ! grep -Eq "$dapltest_errors" "$log" || { echo "dapltest $test: an error line"; st=1; } ;;
    esac
    loaded_as "$stack" "$log" || st=1
    report "$run.dapltest-$test" $st "$log"
    return $st
}

# dapltest_stop RUN SSTACK CSTACK: -T Q from the client, then the server must exit 0
dapltest_stop() {
    local st=0 log=$work/$1.dapltest.server
    dapltest_client "$1" "$3" Q -T Q -s "$ip" || st=1
    for _ in $(seq 600); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill "$server_pid" 2>/dev/null && { echo "dapltest server: still running 60 s after -T Q"; st=1; }
    wait "$server_pid" || { echo "dapltest server: exit status $?"; st=1; }
    grep -q 'Exiting' "$log" || { echo "dapltest server: no exit line"; st=1; }
    ! grep -Eq "$dapltest_errors" "$log" || { echo "dapltest server: an error line"; st=1; }
    loaded_as "$2" "$log" || st=1
    report "$1.dapltest-server" $st "$log"
}

# The transaction test with data validation: sends both ways, RDMA read and write, 2 threads of
# 2 endpoints each
dapltest_transaction() { # RUN STACK
    dapltest_client "$1" "$2" T -T T -V -s "$ip" -t 2 -w 2 -i 50 \
        client SR 4096 2 server SR 1024 3 client RW 8192 1 server RR 4096 2 client RR 2048 1 server RW 4096 1
}

run_dapltest() { # RUN STACK
    local run=$1 stack=$2 ia g out
    ia=$(ia_of "$stack")
    # no server needed: the limit test, and the functional groups (whose server-side connection
    # cases listen on dapltest's port themselves)
    dapltest_client "$run" "$stack" L -T L -m 100
    for g in hwconn endpoint pz mem connmgt queryinfo; do
        dapltest_client "$run" "$stack" "F-$g" -T F -s "$ip" -f "$g"
    done
    dapltest_server "$run" "$stack" || { report "$run.dapltest-server" 1 "$work/$run.dapltest.server"; return; }
    dapltest_transaction "$run" "$stack"
    # performance: RDMA write and read, 64 KiB, polling, pipeline 16
    for op in RW RR; do
        dapltest_client "$run" "$stack" "P-$op" -T P -s "$ip" -m p -i 200 -p 16 "$op" 65536 1
        # "raw: RW, ops, segment size, segments, pipeline, cpu %, ops/s, MB/s (2^20), ..."
        out=$(awk -F', *' -v op="$op" '$1 == "raw: " op { print $8 }' "$work/$run.dapltest-P-$op.client" 2>/dev/null)
        figure "$run" dapltest "P_${op}_64K_MiBps" "$out"
    done
    dapltest_stop "$run" "$stack" "$stack"
}

run_mixed() { # RUN SSTACK CSTACK: dtest and dapltest -T T across two libraries
    case " $programs " in *" dtest "*) run_dtest "$@" ;; esac
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

t0=$(date +%s)
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
        for p in $programs; do
            case $p in
            dtest) run_dtest "$run" "$sstack" "$sstack" ;;
            dtestx | dtestcm | dtestsrq | dapltest) "run_$p" "$run" "$sstack" ;;
            *) echo "unknown program '$p'" >&2; exit 2 ;;
            esac
        done
    fi
    echo "=== $run: $(( $(date +%s) - tr )) s"
done
rm -rf "$work"
echo "dapl2-utils on $RDMA_TYPE: $passed passed, $failed failed, $xfailed known failures, $(( $(date +%s) - t0 )) s"
[ $failed = 0 ]
