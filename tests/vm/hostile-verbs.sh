#!/bin/sh
# Runs inside a soft-RDMA guest (tests/vm/check.sh through rdma-guest.sh): a hostile plain
# rdma_cm / verbs peer (hostile/cm-hostile.c: random private data, vanishing peers, garbage
# sends, RDMA with forged keys, half-made connections, idle connections) against a DAT server
# on our libdat.so.1 (hostile/dat-victim.c) on the verbs IA of RDMA_NETDEV, while one good
# connection of the same peer must keep answering pings. Passes when the server survives,
# every call on its own objects succeeds, no forged RDMA succeeds, and every ping is answered.
# usage: hostile-verbs.sh [ROUNDS] [SEED]   (defaults 60 and a seed from the clock, printed)
# Environment from the harness: RDMA_TYPE RDMA_NETDEV RDMA_IP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-60} seed=${2:-$(date +%s)}
work=$(mktemp -d)
cc -std=c99 -O2 -Wall -Werror -I"$root/include" -o "$work/dat-victim" "$root/tests/vm/hostile/dat-victim.c" \
    -L"$root/build/lib" -Wl,-rpath,"$root/build/lib" -ldat || exit 1
cc -O2 -Wall -Werror -o "$work/cm-hostile" "$root/tests/vm/hostile/cm-hostile.c" -lrdmacm -libverbs || exit 1
port=$((47000 + seed % 1000))
"$work/dat-victim" -P "ofa-v2-$RDMA_NETDEV" -q "$port" -t 300 >"$work/victim.log" 2>&1 &
vpid=$!
sleep 2
timeout 320 "$work/cm-hostile" "$RDMA_IP" "$port" "$rounds" "$seed" "$([ "$RDMA_TYPE" = siw ] && echo iwarp)"; pst=$?
wait $vpid; vst=$?
sed 's/^/  victim: /' "$work/victim.log"
echo "hostile-verbs [$RDMA_TYPE]: seed $seed, peer exit $pst, victim exit $vst"
rm -rf "$work"
[ $pst = 0 ] && [ $vst = 0 ]
