# tests/dapl2/lib.sh -- shell functions shared by the drivers that run Debian's unmodified
# dapl2-utils (dtest, dtestx, dtestcm, dtestsrq, dapltest) against a DAT 2.0 library: on soft
# RDMA in a guest (tests/vm/dapl2-utils.sh) and natively over shm (tests/dapl2/shm.sh).
# Sourced (bash). The driver sets, before calling anything here:
#   lib        the directory holding the libdat2.so.2 under test
#   work       a scratch directory for the logs
#   ip         the address the clients connect to
#   transport  rxe|siw|shm (dtestx on siw expects no IB extensions)
#   xfail_doc  where the known failures (DAPL2_UTILS_XFAIL) are documented
#   time_div   the time limits below (sized for a guest under TCG emulation) are divided by it
#   in_stack_wrapper  (optional array) a command every program runs under, such as valgrind
# and defines `ia_of STACK` (the IA name the programs get for a stack). A STACK is
#   ofed     OFED's libdat2.so.2 and its cma provider libdaplofa.so.2
#   path     $lib/libdat2.so.2 by LD_LIBRARY_PATH=$lib
#   preload  $lib/libdat2.so.2 by LD_PRELOAD, in front of OFED's library
# Every process runs under LD_DEBUG=files: afterwards its loader log must show the library the
# stack names (ours from $lib and no libdaplofa, or OFED's with libdaplofa), so a run cannot
# silently test the wrong library. Every program runs under `timeout`; servers are started
# first and a client starts once its server printed its ready line (polled, bounded).
# Results: "figure STACK PROGRAM NAME VALUE" lines (dtest, dtestcm, dapltest -T P) and one
# "PASS|FAIL|XFAIL dapl2-utils.RUN.TEST" line per test (counted in passed, failed, xfailed); on
# failure the output tails.
failed=0 passed=0 xfailed=0
in_stack_wrapper=()
t0=$(date +%s)

# OFED's libdat2.so.2 (package libdapl2), named by its directory: where ours is installed too
# (/usr/local/lib after `make install`), the loader cache finds ours first, so the ofed stack
# puts this directory first on LD_LIBRARY_PATH rather than trusting the cache
ofed_libdir=$(dpkg -L libdapl2 2>/dev/null | sed -n 's|^\(/.*\)/libdat2.so.2$|\1|p' | head -1)

# in_stack STACK LOG SECS CMD...: runs CMD with STACK's library for at most SECS seconds; stdout
# and stderr line-buffered into LOG, the loader's log into LOG.ld.<pid>
in_stack() {
    local stack=$1 log=$2 secs=$3
    shift 3
    local env=(env -u LD_LIBRARY_PATH -u LD_PRELOAD LD_DEBUG=files "LD_DEBUG_OUTPUT=$log.ld")
    case $stack in
    path) env+=("LD_LIBRARY_PATH=$lib") ;;
    preload) env+=("LD_PRELOAD=$lib/libdat2.so.2") ;;
    ofed) [ -z "$ofed_libdir" ] || env+=("LD_LIBRARY_PATH=$ofed_libdir") ;;
    esac
    timeout -k 5 "$secs" "${env[@]}" stdbuf -oL -eL "${in_stack_wrapper[@]}" "$@" >"$log" 2>&1
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
        [ -z "$ofed_libdir" ] || echo "$ld" | grep -qF "init: $ofed_libdir/libdat2.so.2" ||
            { echo "$log: OFED's $ofed_libdir/libdat2.so.2 was not loaded"; return 1; }
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

# stop_server: ends the server started last and its `timeout` (server_pid is the background
# shell running in_stack: killing it alone would leave the program holding its connection
# qualifier for the programs after it). Fails when it had already exited.
stop_server() {
    kill -0 "$server_pid" 2>/dev/null || return 1
    pkill -TERM -P "$server_pid"
    kill "$server_pid" 2>/dev/null
    return 0
}

# report NAME OK LOGS...: one PASS/FAIL line; on failure each log's tail
# DAPL2_UTILS_XFAIL="run.test ...": known failures of our library (each documented where the list
# is set, $xfail_doc), reported as XFAIL and not counted as failed.
report() {
    local name=$1 ok=$2 f
    shift 2
    if [ "$ok" = 0 ]; then
        echo "PASS dapl2-utils.$name"
        passed=$((passed + 1))
    elif [[ " ${DAPL2_UTILS_XFAIL:-} " == *" $name "* ]]; then
        echo "XFAIL dapl2-utils.$name (known failure, see $xfail_doc)"
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
    start_server "$name" "$sstack" $((300 / time_div)) "$ready" "${sargs[@]}" || st=1
    if [ $st = 0 ]; then
        in_stack "$cstack" "$work/$name.client" $((120 / time_div)) "${cargs[@]}"
        cst=$?
        [ $cst = 0 ] || { echo "$name: client exit status $cst"; st=1; }
    fi
    [ $st = 0 ] || stop_server
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
    if [ "$transport" = siw ]; then
        # iWARP has neither atomics nor immediate data: the IA must not advertise the IB
        # extensions, and the server stops at once saying so (as it does on OFED's provider)
        rm -f "$work/$n".*
        in_stack "$2" "$work/$n.server" $((60 / time_div)) dtestx -s -P "$ia"
        grep -q 'IB extension not supported' "$work/$n.server" || { echo "$n: IB extensions offered on iWARP"; ok=1; }
        loaded_as "$2" "$work/$n.server" || ok=1
        report "$n" $ok "$work/$n.server"
        return
    fi
    # -p: counters read and printed at the end, where the IA lists DAT_COUNTERS (ours, counting
    # from the start with DAT_IB_COUNTERS=1; OFED's Debian build lists none and dtestx skips them)
    DAT_IB_COUNTERS=1 client_server "$n" "$2" "$2" 'waiting to snd addr' \
        dtestx -s -p -P "$ia" -- dtestx -c -p -h "$ip" -P "$ia" || ok=1
    for t in 'RDMA_WRITE_WITH_IMMEDIATE_DATA test - ' 'CMP_SWAP test - ' 'FETCH_ADD test - ' 'immed/atomic test '; do
        both_print "$n" "$t""PASSED" || ok=1
    done
    if [ "$2" != ofed ]; then
        # each side posted one write with immediate data, one compare-and-swap, two fetch-and-adds
        # on its EP, created that one EP on its IA and waited on its DTO EVD
        for t in ': DCNT_EP_POST_WRITE_IMM = 1$' ': DCNT_EP_POST_CMP_SWAP = 1$' ': DCNT_EP_POST_FETCH_ADD = 2$' \
            ': DCNT_IA_EP_CREATE = 1$' ': DCNT_EVD_WAIT = [1-9][0-9]*$'; do
            both_print "$n" "$t" || ok=1
        done
    fi
    none_print "$n" FAIL || ok=1
    report "$n" $ok "$work/$n.server" "$work/$n.client"
    run_dtestx_ud "$1" "$2"
}

# run_dtestx_ud RUN SSTACK [CSTACK]: dtestx's UD mode (-u: four address exchanges each way on one
# UD endpoint per side, a datagram each way, AH and CM frees), server on SSTACK, client on CSTACK
# (default the same), where both IAs list DAT_IB_UD "TRUE" (dtestx -q prints the provider
# attributes); elsewhere a SKIP line (iWARP has no UD endpoints)
run_dtestx_ud() {
    local n=$1.dtestx_ud ok=0 stack
    rm -f "$work/$n".*
    for stack in "$2" "${3:-$2}"; do
        in_stack "$stack" "$work/$n.query" $((60 / time_div)) dtestx -q -P "$(ia_of "$stack")"
        if ! grep -q 'DAT_IB_UD=TRUE' "$work/$n.query"; then
            echo "SKIP dapl2-utils.$n ($stack: $(ia_of "$stack") lists no DAT_IB_UD)"
            return
        fi
    done
    client_server "$n" "$2" "${3:-$2}" 'waiting to snd addr' dtestx -s -u -P "$(ia_of "$2")" -- \
        dtestx -c -u -h "$ip" -P "$(ia_of "${3:-$2}")" || ok=1
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

# dapltest's port (-n, its connection qualifier): next_dapltest_port gives each dapltest run
# (server, its clients, and the functional groups before it) a port of its own, so a port a
# failed run leaves taken (siw can keep a listening port after its process exited) fails no
# later run
dapltest_port=47000
next_dapltest_port() { dapltest_port=$((dapltest_port + 1)); }

# dapltest_server RUN SSTACK: starts `dapltest -T S` (output $work/RUN.dapltest.server)
dapltest_server() {
    start_server "$1.dapltest" "$2" $((400 / time_div)) 'Service Point Ready' \
        dapltest -T S -D "$(ia_of "$2")" -n "$dapltest_port"
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
    in_stack "$stack" "$log" $((300 / time_div)) dapltest "$1" "$2" -D "$(ia_of "$stack")" -n "$dapltest_port" "${@:3}" || { echo "dapltest $test: exit status $?"; st=1; }
    case $test in
    F-*)
        grep -q '^Result: PASS' "$log" || { echo "dapltest $test: no case passed"; st=1; }
        ! grep '^Result:' "$log" | grep -Evq 'Result: (PASS|UNSUPP) *$' || { echo "dapltest $test: a case failed"; st=1; }
        ;;
    *) ! grep -Eq "$dapltest_errors" "$log" || { echo "dapltest $test: an error line"; st=1; } ;;
    esac
    loaded_as "$stack" "$log" || st=1
    if [ $st != 0 ] && [ "$transport" = siw ] && [[ $test == P-* ]] &&
        grep -q 'conn_event_wait DAT_CONNECTION_EVENT_UNREACHABLE' "$log"; then
        # siw's MPA race (tests/vm/README.md, "Known intermittent failures"): dapltest -T P's
        # server sends at once, before the initiator's first message; when siw's initiator
        # takes the MPA reply late it finds that message behind it and fails the connection.
        # OFED's stack runs the same race. Reported, not counted; the server's error lines of
        # this test are then its consequence (dapltest_stop).
        echo "XFAIL dapl2-utils.$run.dapltest-$test (siw MPA race: the connect failed UNREACHABLE, see tests/vm/README.md)"
        xfailed=$((xfailed + 1))
        dapltest_mpa_race=1
        return 0
    fi
    report "$run.dapltest-$test" $st "$log"
    return $st
}

# dapltest_stop RUN SSTACK CSTACK: -T Q from the client, then the server must exit 0
dapltest_stop() {
    local st=0 log=$work/$1.dapltest.server
    dapltest_client "$1" "$3" Q -T Q -s "$ip" || st=1
    for _ in $(seq 600); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    stop_server && { echo "dapltest server: still running 60 s after -T Q"; st=1; }
    wait "$server_pid" || { echo "dapltest server: exit status $?"; st=1; }
    grep -q 'Exiting' "$log" || { echo "dapltest server: no exit line"; st=1; }
    if [ "${dapltest_mpa_race:-0}" = 1 ]; then
        # only the performance test's connection failed (siw's MPA race, dapltest_client)
        ! grep -Eq "$dapltest_errors" "$log" || echo "dapltest server: error lines of the performance test that hit siw's MPA race (not counted)"
    else
        ! grep -Eq "$dapltest_errors" "$log" || { echo "dapltest server: an error line"; st=1; }
    fi
    dapltest_mpa_race=0
    loaded_as "$2" "$log" || st=1
    report "$1.dapltest-server" $st "$log"
}

# The transaction test with data validation: sends both ways, RDMA read and write, 2 threads of
# 2 endpoints each; the server's RDMA reads go into SERVER_READ_SEGMENTS sink segments (2 unless
# given)
dapltest_transaction() { # RUN STACK [SERVER_READ_SEGMENTS]
    dapltest_client "$1" "$2" T -T T -V -s "$ip" -t 2 -w 2 -i 50 \
        client SR 4096 2 server SR 1024 3 client RW 8192 1 server RR 4096 "${3:-2}" client RR 2048 1 server RW 4096 1
}

run_dapltest() { # RUN STACK
    local run=$1 stack=$2 ia g out
    ia=$(ia_of "$stack")
    next_dapltest_port
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


# run_programs RUN STACK PROGRAMS...: each program with server and client on STACK
run_programs() {
    local run=$1 stack=$2 p
    shift 2
    for p in "$@"; do
        case $p in
        dtest) run_dtest "$run" "$stack" "$stack" ;;
        dtestx | dtestcm | dtestsrq | dapltest) "run_$p" "$run" "$stack" ;;
        *) echo "unknown program '$p'" >&2; return 2 ;;
        esac
    done
}

# finish_run: removes $work, prints the summary line; succeeds when no test failed
finish_run() {
    rm -rf "$work"
    echo "dapl2-utils on $transport: $passed passed, $failed failed, $xfailed known failures, $(($(date +%s) - t0)) s"
    [ "$failed" = 0 ]
}
