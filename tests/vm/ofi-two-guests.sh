#!/bin/bash
# tests/vm/ofi-two-guests.sh a|b -- runs in each of two guests that have no RDMA at all
# (tests/vm/rdma-guest.sh --tcp --link NAME:a and NAME:b): DAT programs on our ofi provider over
# libfabric's tcp, IA ofi-tcp-$RDMA_NETDEV, each server side in guest a, each client in guest b:
#   1. the ping-pong example (DAT 1.2 face; sends, RDMA write, payloads checked)
#   2. the conformance suite's end-to-end cases in two-host mode (dat_conformance --role)
#   3. Debian's unmodified dtest (DAT 2.0, our libdat2.so.2 by LD_LIBRARY_PATH): both sides
#      must print PASSED
#   4. Debian's unmodified dapltest: the server (-T S) in a; from b the transaction test with
#      data validation (-T T -V: sends both ways, RDMA read and write, 2 threads of 2
#      endpoints), the performance test (-T P, RDMA write), then -T Q
# Every dapl2-utils process runs with LD_DEBUG=files: its loader log must show build/lib's
# libdat2.so.2 (the guest has no RDMA device and an empty dat.conf, so nothing else could
# carry it anyway). Clients retry while their server is not up yet. Exit status 0: all passed.
set -u
side=${1:?usage: ofi-two-guests.sh a|b}
root=$(cd "$(dirname "$0")/../.." && pwd)
ia=ofi-tcp-$RDMA_NETDEV peer=${RDMA_PEER_IP:?needs --link} lib=$root/build/lib
pp=$root/build/tests/c/pingpong dc=$root/build/tests/c/dat_conformance
export LD_LIBRARY_PATH=$lib
work=$(mktemp -d)
failed=0
result() { # NAME STATUS LOG
    if [ "$2" = 0 ]; then echo "PASS ofi-two-guests.$side.$1"; else
        echo "FAIL ofi-two-guests.$side.$1"; sed 's/^/    /' "$3" | tail -40; failed=1; fi
}
# ours_loaded LOG: the loader log shows our libdat2.so.2 and no other, and no libdaplofa
ours_loaded() {
    local ld
    ld=$(cat "$1".ld.* 2>/dev/null | grep 'calling init:')
    echo "$ld" | grep -qF "init: $lib/libdat2.so.2" && ! echo "$ld" | grep -q 'libdaplofa\.so' &&
        ! echo "$ld" | grep 'libdat2\.so\.2' | grep -vqF "$lib/libdat2.so.2"
}
# dapl NAME CMD...: one dapl2-utils program with its loader log; passes on exit 0, no error line
# (as tests/dapl2/lib.sh judges dapltest's) and our library loaded
dapl() {
    local name=$1 log=$work/$1 st=0
    shift
    rm -f "$log" "$log".ld.*
    LD_DEBUG=files LD_DEBUG_OUTPUT=$log.ld timeout 300 "$@" >"$log" 2>&1 || st=$?
    grep -Eq 'Test Error|FAIL|failed|Segmentation' "$log" && [ $st = 0 ] && st=1
    ours_loaded "$log" || { echo "  $name: our libdat2.so.2 not loaded" >>"$log"; [ $st = 0 ] && st=1; }
    return $st
}
# retry N CMD...: CMD until it succeeds, N tries 3 s apart (the other guest's server may not be
# listening yet)
retry() {
    local n=$1 i
    shift
    for i in $(seq "$n"); do "$@" && return 0; [ "$i" = "$n" ] || sleep 3; done
    return 1
}

q=23456 dport=47123
if [ "$side" = a ]; then
    timeout 300 "$pp" -s -P "$ia" -q $q >"$work/pingpong" 2>&1; result pingpong $? "$work/pingpong"
    timeout 900 "$dc" -P "$ia" --role server >"$work/e2e" 2>&1; result e2e $? "$work/e2e"
    dapl dtest dtest -s -P "$ia" -b 65536; st=$?
    grep -q PASSED "$work/dtest" || st=1
    result dtest $st "$work/dtest"
    dapl dapltest-server dapltest -T S -D "$ia" -n $dport; st=$?
    grep -q Exiting "$work/dapltest-server" || st=1
    result dapltest-server $st "$work/dapltest-server"
else
    retry 20 timeout 300 "$pp" -h "$peer" -P "$ia" -q $q >"$work/pingpong" 2>&1; result pingpong $? "$work/pingpong"
    timeout 900 "$dc" -P "$ia" --role client --peer "$peer" >"$work/e2e" 2>&1; result e2e $? "$work/e2e"
    retry 20 dapl dtest dtest -h "$peer" -P "$ia" -b 65536; st=$?
    grep -q PASSED "$work/dtest" || st=1
    result dtest $st "$work/dtest"
    retry 20 dapl dapltest-T dapltest -T T -V -s "$peer" -D "$ia" -n $dport -t 2 -w 2 -i 50 \
        client SR 4096 2 server SR 1024 3 client RW 8192 1 server RR 4096 2 client RR 2048 1 server RW 4096 1
    result dapltest-T $? "$work/dapltest-T"
    dapl dapltest-P dapltest -T P -s "$peer" -D "$ia" -n $dport -i 100 RW 65536 2; result dapltest-P $? "$work/dapltest-P"
    dapl dapltest-Q dapltest -T Q -s "$peer" -D "$ia" -n $dport; result dapltest-Q $? "$work/dapltest-Q"
fi
rm -rf "$work"
exit $failed
