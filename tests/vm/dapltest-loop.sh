#!/bin/bash
# Runs inside a soft-RDMA guest (tests/vm/rdma-guest.sh): repeats one dapltest server/client
# exchange to count an intermittent failure, on OFED's library or ours, and keeps the logs of
# every failed round (with our library's provider log, DAT_LOG=debug).
#
# usage: dapltest-loop.sh [-L DIR] [-n ROUNDS] [-s SECONDS] STACK CLIENT_ARGS...
#   STACK        ofed (OFED's libdat2.so.2 + libdaplofa.so.2) or path (DIR/libdat2.so.2 by
#                LD_LIBRARY_PATH, default DIR build/lib)
#   CLIENT_ARGS  the dapltest client's `-T LETTER` and test arguments (-s, -D and -n are put
#                after -T LETTER), e.g. `-T Q` or
#                `-T P -m p -i 200 -p 16 RW 65536 1`; every round runs them, then `-T Q`
#   -n ROUNDS    rounds at most (default 20); -s SECONDS: stop starting rounds after this long
# A round fails when a client or the server prints an error line or the server does not exit.
# Prints one line per round and a summary: `loop: STACK ARGS: F failed of N`.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$root/build/lib
rounds=20
seconds=480
while getopts L:n:s: opt; do
    case $opt in
    L) lib=$(cd "$OPTARG" && pwd) || exit 2 ;;
    n) rounds=$OPTARG ;;
    s) seconds=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { sed -n '6,15p' "$0" >&2; exit 2; }
stack=$1
shift
case $stack in
ofed) ia=ofa-v2-$RDMA_TYPE env=() ;;
path)
    ia=ofa-v2-$RDMA_NETDEV env=(LD_LIBRARY_PATH="$lib" DAT_LOG=debug)
    # our built-in provider needs no dat.conf line; OFED's library does for this name
    ;;
*) echo "unknown stack '$stack'" >&2; exit 2 ;;
esac
work=$(mktemp -d /tmp/dapltest-loop.XXXXXX)
errors='Test Error|FAIL|failed|Segmentation'
provider_log='^[0-9-]+T[0-9:.]+Z +(TRACE|DEBUG|INFO|WARN|ERROR) '
port=48000
failed=0
n=0
start=$(date +%s)
while [ $n -lt "$rounds" ] && [ $(($(date +%s) - start)) -lt "$seconds" ]; do
    n=$((n + 1))
    port=$((port + 1))
    srv=$work/$n.server cli=$work/$n.client quit=$work/$n.quit
    env "${env[@]}" timeout 300 dapltest -T S -D "$ia" -n $port >"$srv" 2>&1 &
    pid=$!
    for _ in $(seq 300); do grep -q 'Service Point Ready' "$srv" && break; sleep 0.1; done
    ok=0
    env "${env[@]}" timeout 200 dapltest "$1" "$2" -s "$RDMA_IP" -D "$ia" -n $port "${@:3}" >"$cli" 2>&1 || { echo "round $n: client exit status $?"; ok=1; }
    [ "$1" = -T ] && [ "$2" = Q ] || env "${env[@]}" timeout 60 dapltest -T Q -s "$RDMA_IP" -D "$ia" -n $port >"$quit" 2>&1 || ok=1
    wait $pid || { echo "round $n: server exit status $?"; ok=1; }
    # the provider's own log lines (DAT_LOG) are not the program's error lines
    cat "$srv" "$cli" "$quit" 2>/dev/null | grep -Ev "$provider_log" | grep -Eq "$errors" && ok=1
    grep -q Exiting "$srv" || ok=1
    if [ $ok = 0 ]; then
        echo "round $n: ok"
        rm -f "$srv" "$cli" "$quit"
    else
        failed=$((failed + 1))
        echo "round $n: FAILED"
        for f in "$srv" "$cli" "$quit"; do
            [ -f "$f" ] || continue
            echo "--- ${f##*/}: the program's last lines, the provider's warnings and connection events"
            grep -Ev "$provider_log" "$f" | tail -12
            grep -E "WARN|ERROR|work request failed|cm event|asynchronous" "$f" | head -30
        done
    fi
done
echo "loop: $stack $*: $failed failed of $n ($(($(date +%s) - start)) s; logs of failed rounds in $work)"
