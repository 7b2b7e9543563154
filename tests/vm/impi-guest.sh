#!/bin/bash
# Runs inside a soft-RDMA guest (tests/vm/rdma-guest.sh): Intel MPI 2018 Update 3
# (tests/impi/run.sh, from build/impi, which the host prepared with `tests/impi/run.sh -p`) over
# our libdat2.so.2 and, as the reference column of the same run, over OFED's:
#   ours   DIR/libdat2.so.2 by LD_LIBRARY_PATH (-L, default build/lib), IA ofa-v2-$RDMA_NETDEV (our
#          built-in verbs provider's name for the port on that netdev)
#   ofed   the system's libdat2.so.2 (libdapl2) and libdaplofa.so.2, IA ofa-v2-$RDMA_TYPE (the
#          harness's dat.conf line); its failures are reported as REFFAIL, the reference's, and
#          do not fail the run
# In a guest without RDMA (rdma-guest.sh --tcp) ours runs on the ofi provider over libfabric's
# tcp, IA ofi-tcp-$RDMA_NETDEV, and OFED's library, which has no provider for plain TCP, is left
# out.
# usage: impi-guest.sh [-L DIR] [-s "ours ofed"] [-2 a|b] [CONFIG...]
#   CONFIG  tests/impi/run.sh's fabric configurations (default: dapl dapl-ud shm:dapl on rxe;
#           dapl shm:dapl on siw and tcp: iWARP has no datagram service, so neither provider
#           offers the IB UD extension there and Intel MPI refuses I_MPI_DAPL_UD; nor does ofi)
#   -2 a    two guests (rdma-guest.sh --link NAME:a and NAME:b): this guest runs mpirun, the ranks
#           alternate between the two guests (-ppn 1), so every ping-pong message and the
#           collectives' neighbours cross the link; hydra starts its proxy on the peer through
#           tests/impi/remote-exec.py (the guests have no ssh)
#   -2 b    the peer of -2 a: serves those launches until a has finished
# Guests are slow (TCG): unless set, IMPI_PINGPONG_ARGS is "-n 200 -N 20 -M 5", IMPI_COLL_ITERS 1
# and IMPI_TIMEOUT 300 (seconds per case). Exit status: 0 when every case on ours passed.
# Environment from the harness: RDMA_TYPE RDMA_NETDEV RDMA_IP (RDMA_PEER_IP with -2).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
lib=$root/build/lib stacks="ours ofed" two=
ours_ia=ofa-v2-$RDMA_NETDEV
[ "$RDMA_TYPE" = tcp ] && stacks=ours ours_ia=ofi-tcp-$RDMA_NETDEV
while getopts L:s:2: opt; do
    case $opt in
    L) lib=$OPTARG ;;
    s) stacks=$OPTARG ;;
    2) two=$OPTARG ;;
    *) sed -n '10,20p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
case $RDMA_TYPE in
siw | tcp) configs=${*:-dapl shm:dapl} ;;
*) configs=${*:-dapl dapl-ud shm:dapl} ;;
esac
export IMPI_PINGPONG_ARGS=${IMPI_PINGPONG_ARGS:--n 200 -N 20 -M 5} IMPI_COLL_ITERS=${IMPI_COLL_ITERS:-1}
export IMPI_TIMEOUT=${IMPI_TIMEOUT:-300}

# hydra resolves this host's name (and, with two guests, the peer's): the guest's names go into
# its /etc/hosts (the guest's writes vanish with it)
remote=$root/tests/impi/remote-exec.py
case $two in
'') echo "$RDMA_IP $(hostname)" >>/etc/hosts ;;
a | b)
    hostname "impi-$two"
    printf '%s impi-a\n%s impi-b\n' "$([ "$two" = a ] && echo "$RDMA_IP" || echo "$RDMA_PEER_IP")" \
        "$([ "$two" = b ] && echo "$RDMA_IP" || echo "$RDMA_PEER_IP")" >>/etc/hosts
    ;;
*) echo "impi-guest: -2 a or -2 b" >&2; exit 2 ;;
esac
if [ "$two" = b ]; then
    echo "impi-guest [$RDMA_TYPE, b]: serving hydra's launches from impi-a"
    exec python3 "$remote" --serve "$RDMA_IP" "${IMPI_REMOTE_PORT:-7519}"
fi
if [ "$two" = a ]; then
    export IMPI_HOSTS=impi-a,impi-b IMPI_PPN=1 IMPI_BOOTSTRAP_EXEC=$remote
    # the peer guest may still be booting: wait (bounded) until its launcher answers
    python3 "$remote" impi-b true || { echo "FAIL impi: the peer guest's launcher did not answer"; exit 1; }
    trap 'python3 "$remote" --quit impi-b' EXIT
fi

failed=0
for stack in $stacks; do
    case $stack in
    ours) bash tests/impi/run.sh -n -L "$lib" -P "$ours_ia" -l "ours-$RDMA_TYPE${two:+-2}" $configs || failed=1 ;;
    ofed) bash tests/impi/run.sh -n -L system -P "ofa-v2-$RDMA_TYPE" -l "ofed-$RDMA_TYPE${two:+-2}" -r $configs ;;
    *) echo "impi-guest: unknown stack $stack" >&2; exit 2 ;;
    esac
done
exit $failed
