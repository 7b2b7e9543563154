#!/bin/sh
# Runs inside a soft-RDMA guest (rdma-guest.sh): OFED's own DAT 2.0 provider library,
# libdaplofa.so.2, loaded as a third-party provider under our libdat2.so.2 through a dat.conf
# line `... dlopen:libdaplofa.so.2 ...`, driving Debian's unmodified dapl2-utils:
#   - dtest, server and client in this guest (it exits 0 even when it fails: PASSED is required)
#   - dapltest -T S (server), -T T with data validation (client), -T Q (quit); dapltest exits 0
#     even when it cannot open the IA, so its statistics and the server's log are checked too
# Each program's /proc/PID/maps must show our libdat2.so.2 (from build/lib) and OFED's
# libdaplofa.so.2 both loaded, and no other libdat2.
# usage: thirdparty-ofa-guest.sh        (from tests/vm/check.sh, or by hand:
#   flock /tmp/dat-vm.lock tests/vm/rdma-guest.sh --rxe -- tests/vm/thirdparty-ofa-guest.sh)
# Environment from the harness: RDMA_TYPE RDMA_NETDEV RDMA_IP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
ours=$root/build/lib/libdat2.so.2
[ -f "$ours" ] || { echo "FAIL: $ours missing (run make)"; exit 1; }
ia="ofa-dlopen-$RDMA_NETDEV"
work=$(mktemp -d)
echo "$ia u2.0 nonthreadsafe default dlopen:libdaplofa.so.2 dapl.2.0 \"$RDMA_NETDEV 0\" \"\"" >"$work/dat.conf"
export DAT_OVERRIDE="$work/dat.conf" LD_LIBRARY_PATH="$root/build/lib"
fail=0
step() { echo; echo "=== [$RDMA_TYPE, OFED libdaplofa under our libdat2] $*"; }
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# check_maps PID WHAT: the process has our libdat2 and OFED's provider mapped, no other libdat2.
check_maps() {
    i=0
    while [ $i -lt 100 ]; do # the provider is loaded at dat_ia_open, a moment after exec
        grep -q 'libdaplofa\.so\.2' "/proc/$1/maps" 2>/dev/null && break
        sleep 0.2; i=$((i + 1))
    done
    libs=$(awk '$6 ~ /libdat2|libdaplofa/ {print $6}' "/proc/$1/maps" 2>/dev/null | sort -u)
    if echo "$libs" | grep -qx "$(readlink -f "$ours")" && echo "$libs" | grep -q 'libdaplofa\.so\.2' &&
        [ "$(echo "$libs" | grep -c libdat2)" = 1 ]; then
        ok "$2 runs with $(readlink -f "$ours") and $(echo "$libs" | grep libdaplofa)"
    else
        bad "$2: expected our libdat2.so.2 and libdaplofa.so.2 mapped, found: $(echo $libs)"
    fi
}

step "dtest -s / dtest -h $RDMA_IP on $ia"
dtest -P "$ia" -s -b 65536 >"$work/dtest-server.log" 2>&1 &
spid=$!
check_maps $spid "dtest server"
client=1
for try in 1 2 3 4 5 6 7 8 9 10; do
    timeout 300 dtest -P "$ia" -h "$RDMA_IP" -b 65536 >"$work/dtest-client.log" 2>&1
    grep -q PASSED "$work/dtest-client.log" && { client=0; break; }
    kill -0 $spid 2>/dev/null || break # the server is gone: no point retrying
    sleep 3
done
( sleep 120; kill $spid 2>/dev/null ) & watchdog=$!
wait $spid; kill $watchdog 2>/dev/null
sed 's/^/  server: /' "$work/dtest-server.log"
sed 's/^/  client: /' "$work/dtest-client.log"
if [ $client = 0 ] && grep -q PASSED "$work/dtest-server.log"; then
    ok "dtest server and client PASSED"
else
    bad "dtest: server or client did not print PASSED"
fi

step "dapltest -T S; -T T -V (send/recv, RDMA read and write); -T Q on $ia"
dapltest -T S -D "$ia" >"$work/dapltest-server.log" 2>&1 &
spid=$!
check_maps $spid "dapltest server"
tt=1
for try in 1 2 3 4 5 6 7 8 9 10; do
    timeout 600 dapltest -T T -s "$RDMA_IP" -D "$ia" -i 20 -t 1 -w 1 -V \
        client SR 4096 server SR 4096 client RR 4096 client RW 4096 >"$work/dapltest-t.log" 2>&1
    st=$?
    # the statistics are printed only after a completed test
    [ $st = 0 ] && grep -q 'Total WQE' "$work/dapltest-t.log" &&
        ! grep -qi 'error\|fail\|could not' "$work/dapltest-t.log" && { tt=0; break; }
    kill -0 $spid 2>/dev/null || break
    sleep 3
done
sed 's/^/  client: /' "$work/dapltest-t.log"
[ $tt = 0 ] && ok "dapltest -T T -V passed (statistics, no error reported)" ||
    bad "dapltest -T T: exit $st, no statistics, or errors reported"
alive=0
kill -0 $spid 2>/dev/null && alive=1
timeout 120 dapltest -T Q -s "$RDMA_IP" -D "$ia" >"$work/dapltest-q.log" 2>&1; qs=$?
( sleep 120; kill $spid 2>/dev/null ) & watchdog=$!
wait $spid; ss=$?; kill $watchdog 2>/dev/null
sed 's/^/  quit: /' "$work/dapltest-q.log"
sed 's/^/  server: /' "$work/dapltest-server.log"
if [ $alive = 1 ] && [ $qs = 0 ] && [ $ss = 0 ] && ! grep -qi 'could not' "$work/dapltest-q.log" &&
    grep -q 'Transaction Test Finished' "$work/dapltest-server.log"; then
    ok "dapltest -T Q stopped the server, which had served the transaction test"
else
    bad "dapltest -T Q: server alive before it $alive, quit exit $qs, server exit $ss, or the server served no test"
fi

rm -rf "$work"
echo
echo "OFED libdaplofa under our libdat2 on $RDMA_TYPE: $([ $fail = 0 ] && echo PASSED || echo FAILED)"
exit $fail
