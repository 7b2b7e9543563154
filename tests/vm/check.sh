#!/bin/bash
# tests/vm/check.sh -- the verbs part of `make check`: runs, inside soft-RDMA QEMU guests,
#   1. rxe (Soft-RoCE), one guest: tests/vm/guest-suite.sh (verbs Rust tests, C conformance
#      suite on ofa-v2-rdma0 on both faces, the ping-pong example, OFED's libdaplofa.so.2
#      loaded under our libdat2.so.2 with dtest/dapltest, perftest for comparison)
#   2. siw (soft-iWARP), one guest: the same
#   3. siw, two guests joined by a virtual link: the ping-pong example, then the conformance
#      suite's e2e cases in two-host mode (dat_conformance --role server|client), server sides
#      in guest a, client sides in guest b (rxe cannot span two hosts' namespaces on Debian's
#      kernels; siw can)
#   4. rxe and siw, one guest each: Debian's unmodified dapl2-utils (tests/vm/dapl2-utils.sh)
#      against our libdat2.so.2 by LD_LIBRARY_PATH and by LD_PRELOAD, dtest and dapltest -T T
#      between OFED's stack and ours in both directions, and the rdma_cm private data each sends
#   5. rxe and siw, one guest each, then two siw guests: Intel MPI 2018 (tests/vm/impi-guest.sh:
#      a checked ping-pong and collectives, I_MPI_FABRICS dapl:dapl (and with I_MPI_DAPL_UD=on on
#      rxe) and shm:dapl) on our libdat2.so.2 and, as the reference column, on OFED's libdat2.so.2
#      + libdaplofa.so.2 (SKIPPED when Intel MPI's wheel cannot be had: tests/impi/run.sh)
#   6. two guests with no RDMA at all (rdma-guest.sh --tcp), joined by a virtual link: the ofi
#      provider over libfabric's tcp (tests/vm/ofi-two-guests.sh: the ping-pong example, the
#      conformance suite's e2e cases in two-host mode, Debian's dtest and dapltest), then Intel
#      MPI 2018 across the two (impi-guest.sh -2 on IA ofi-tcp-rdma0)
# Exits non-zero if anything failed inside a guest. Needs tests/vm/install.sh (root) first and
# `make` (build/lib/libdat.so.1, build/lib/libdat2.so.2).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
G=$HERE/rdma-guest.sh
cd "$ROOT"
FAILED=0
T0=$(date +%s)

[ -f build/lib/libdat.so.1 ] && [ -f build/lib/libdat2.so.2 ] || { echo "vm check: run make first"; exit 1; }
sh tests/c/build.sh include build/lib build/tests/c >/dev/null || exit 1
sh tests/c/build.sh include build/lib build/tests/c dat2 >/dev/null || exit 1

# The verbs provider's Rust integration tests, built on the host, run in the guest.
VERBS_TEST=$(cargo test --release -p datcore --test verbs_core --no-run --message-format=json 2>/dev/null |
             grep -o '"executable":"[^"]*verbs_core[^"]*"' | tail -1 | sed 's/.*:"//; s/"$//')
[ -x "$VERBS_TEST" ] || { echo "vm check: could not build the verbs_core test binary"; exit 1; }

# One attempt per section: a failure fails the gate. The one exception is a section running an
# outside program with a race of its own that the library cannot close (tests/vm/README.md,
# "Known intermittent failures"): it names the race and gets a second attempt, and a pass on
# that attempt is reported loudly: a "FLAKY: <section>" line right there, the list again at the
# end, and a count in the summary line.
PASSES=0
FLAKY=()
section() { # NAME FUNCTION [WHY A SECOND ATTEMPT]
  local name=$1 fn=$2 why=${3:-} try tries=1
  [ -z "$why" ] || tries=2
  for try in $(seq $tries); do
    echo "=== vm check: $name (attempt $try of $tries)"
    if "$fn"; then
      if [ $try = 2 ]; then
        echo "FLAKY: $name failed once (passed on the second attempt, given for: $why; the first attempt's failure is above)"
        FLAKY+=("$name")
      fi
      echo "PASS vm.$name"
      PASSES=$((PASSES + 1))
      return 0
    fi
    echo "vm check: $name attempt $try failed"
  done
  echo "FAIL vm.$name"
  FAILED=$((FAILED + 1))
}

one_guest_rxe() { "$G" --timing --rxe --timeout 1500 -- "$HERE/guest-suite.sh" "$VERBS_TEST"; }
one_guest_siw() { "$G" --timing --siw --timeout 1500 -- "$HERE/guest-suite.sh" "$VERBS_TEST"; }

# Two guests: ping-pong across the virtual link, then the conformance suite's e2e cases with
# each case's server side in guest a and its client side in guest b (the suite synchronises
# the two hosts per case itself; its qualifiers are 30000 + 10 * case index + k).
pp=$ROOT/build/tests/c/pingpong
dc="$ROOT/build/tests/c/dat_conformance -P ofa-v2-\$RDMA_NETDEV"
export LD_LIBRARY_PATH=$ROOT/build/lib
two_guests_siw() {
  local link="datcheck$$-$RANDOM" qual=$((20000 + RANDOM % 20000)) spid crc src
  "$G" --siw --timing --timeout 900 --link "$link:a" -- \
    sh -c "$pp -s -P ofa-v2-\$RDMA_NETDEV -q $qual; p=\$?; echo \"pingpong server exit \$p\";
           $dc --role server; c=\$?; [ \$p = 0 ] && [ \$c = 0 ]" > /tmp/dat-vm-server.$$ 2>&1 &
  spid=$!
  "$G" --siw --timing --timeout 900 --link "$link:b" -- \
    sh -c "p=1; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do $pp -h \$RDMA_PEER_IP -P ofa-v2-\$RDMA_NETDEV -q $qual && { p=0; break; }; sleep 4; done
           echo \"pingpong client exit \$p\"; $dc --role client --peer \$RDMA_PEER_IP; c=\$?; [ \$p = 0 ] && [ \$c = 0 ]"
  crc=$?
  wait $spid; src=$?
  sed 's/^/  server: /' /tmp/dat-vm-server.$$; rm -f /tmp/dat-vm-server.$$
  echo "two guests: client exit $crc, server exit $src"
  [ $crc = 0 ] && [ $src = 0 ]
}

# A hostile plain rdma_cm / verbs peer against a DAT server on our library (hostile-verbs.sh;
# the seed is printed: `tests/vm/hostile-verbs.sh ROUNDS SEED` in a guest repeats a run).
hostile_rxe() { "$G" --timing --rxe --timeout 900 -- "$HERE/hostile-verbs.sh" 100; }
hostile_siw() { "$G" --timing --siw --timeout 900 -- "$HERE/hostile-verbs.sh" 100; }

dapl2_utils() { # rxe|siw [known failures]
    "$G" --timing "--$1" --timeout 1500 --env DAPL2_UTILS_XFAIL="${2:-}" -- \
        "$HERE/dapl2-utils.sh" -L "$ROOT/build/lib" -p "dtest dtestx dtestcm dtestsrq dapltest" path preload ofed/path path/ofed wire
}
dapl2_utils_rxe() { dapl2_utils rxe; }
# On siw, too, no known failures: dtestcm's 100 connections and dapltest -T T failed there until
# the verbs provider kept libsiw's colliding mmap key taken (cq.rs, SIW_COLLIDING_PAGE); the
# mixed run with OFED's dapltest server reads into one segment (dapl2-utils.sh, run_mixed).
# Not listed (intermittent, seen once in two runs): dtest, whose client gets UNREACHABLE when
# dtest's server sends before siw's initiator has taken the MPA reply (tests/vm/README.md,
# "Known intermittent failures"); the section's second attempt covers it, with a FLAKY line.
dapl2_utils_siw() { dapl2_utils siw; }
DTEST_RACE="dtest's server sends first, which siw's initiator may refuse"
# dapltest tears a connection down as soon as its last receive completed, so its peer's last
# send may fail though it arrived (tests/vm/README.md); dapltest counts that as an error.
DAPLTEST_RACE="dapltest's abrupt teardown after its last receive"


# Intel MPI 2018: build/impi prepared here (the wheel unpacked, the test programs built; a guest
# cannot fetch). OFED's failures are the reference's (REFFAIL lines) and do not fail a section:
# its UD mode does not start on rxe (Intel MPI finds no IB UD extension in libdaplofa's IA and
# gives up with "failed to open DAPL provider"; tests/vm/README.md).
IMPI_SKIP=$(bash tests/impi/run.sh -p 2>&1 | sed -n 's/^SKIPPED impi: /&/p')
impi_rxe() { "$G" --timing --rxe --timeout 1500 -- "$HERE/impi-guest.sh" -L "$ROOT/build/lib"; }
impi_siw() { "$G" --timing --siw --timeout 1500 -- "$HERE/impi-guest.sh" -L "$ROOT/build/lib"; }
# across two guests: the ping-pong and the 4-rank collectives (ranks alternate between the guests)
impi_two_guests_siw() {
  local link="datimpi$$-$RANDOM" crc src type=--${IMPI_TWO_TYPE:-siw}
  "$G" "$type" --timing --timeout 1500 --link "$link:b" -- "$HERE/impi-guest.sh" -2 b > /tmp/dat-vm-impi-b.$$ 2>&1 &
  local bpid=$!
  "$G" "$type" --timing --timeout 1500 --link "$link:a" --env IMPI_CASES="pingpong.2 collectives.4" \
    --env IMPI_XFAIL="${IMPI_TWO_XFAIL:-}" -- \
    "$HERE/impi-guest.sh" -2 a -L "$ROOT/build/lib"
  crc=$?
  # the peer stops when guest a tells it to; should a not have got that far, end it here
  for _ in $(seq 60); do kill -0 $bpid 2>/dev/null || break; sleep 1; done
  kill $bpid 2>/dev/null
  wait $bpid; src=$?
  sed 's/^/  peer: /' /tmp/dat-vm-impi-b.$$; rm -f /tmp/dat-vm-impi-b.$$
  echo "two guests: mpirun guest exit $crc, peer exit $src"
  [ $crc = 0 ] && [ $src = 0 ]
}

# Two guests with nothing but TCP between them: the ofi provider (ofi-two-guests.sh), then Intel MPI
ofi_two_guests_tcp() {
  local link="datofi$$-$RANDOM" crc src
  "$G" --tcp --timing --timeout 1200 --link "$link:a" -- "$HERE/ofi-two-guests.sh" a > /tmp/dat-vm-ofi-a.$$ 2>&1 &
  local apid=$!
  "$G" --tcp --timing --timeout 1200 --link "$link:b" -- "$HERE/ofi-two-guests.sh" b
  crc=$?
  wait $apid; src=$?
  sed 's/^/  server side: /' /tmp/dat-vm-ofi-a.$$; rm -f /tmp/dat-vm-ofi-a.$$
  echo "two guests: client side exit $crc, server side exit $src"
  [ $crc = 0 ] && [ $src = 0 ]
}
# The ping-pong over ofi-tcp is a known failure (XFAIL: run, reported, not counted): Intel MPI's
# 64 KiB messages now and then find a ring slot taken one message early and read stale bytes
# from 33,424 on, or hang; an open fault of the ofi provider (tests/vm/README.md, "Known
# intermittent failures"; docs/ofi.md, "Intel MPI's eager messages"). The collectives count.
impi_two_guests_tcp() {
  IMPI_TWO_TYPE=tcp IMPI_TWO_XFAIL="ours-tcp-2.dapl.pingpong.2 ours-tcp-2.shm:dapl.pingpong.2" impi_two_guests_siw
}

section rxe one_guest_rxe
section siw one_guest_siw
section siw-two-guests two_guests_siw
section hostile-rxe hostile_rxe
section hostile-siw hostile_siw
section dapl2-utils-rxe dapl2_utils_rxe "$DAPLTEST_RACE"
section dapl2-utils-siw dapl2_utils_siw "$DTEST_RACE; $DAPLTEST_RACE"
if [ -z "$IMPI_SKIP" ]; then
  section impi-rxe impi_rxe
  section impi-siw impi_siw
  section impi-siw-two-guests impi_two_guests_siw
fi
section ofi-tcp-two-guests ofi_two_guests_tcp
if [ -z "$IMPI_SKIP" ]; then
  section impi-tcp-two-guests impi_two_guests_tcp
else
  echo "$IMPI_SKIP"
fi

echo "vm check: $(( $(date +%s) - T0 )) s"
for name in "${FLAKY[@]}"; do echo "FLAKY: $name failed once"; done
echo "$PASSES passed (${#FLAKY[@]} of them on a second attempt), $FAILED failed"
[ $FAILED = 0 ]
