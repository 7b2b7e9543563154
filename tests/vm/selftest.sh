#!/bin/bash
# tests/vm/selftest.sh -- checks the soft-RDMA guest harness end to end:
#   rxe one guest:  ibv_devices, ibv_devinfo, rping + ib_send_lat loopback
#   siw one guest:  the same
#   siw two guests: ib_send_lat + rping, server in guest a, client in guest b (--link)
#   (--rxe-link also tries rxe across two guests)
# Prints PASS/FAIL with boot-to-command and total seconds per guest; exits 1 if any failed.
# Needs tests/vm/install.sh to have run. Takes ~1-2 minutes under TCG.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
G=$HERE/rdma-guest.sh T=$HERE/selftest-guest.sh
LOG=$(mktemp -d "${TMPDIR:-/tmp}/dat-rdma-selftest.XXXXXX")
FAILED=0

# report NAME RC LOGFILE: one line with the timings rdma-guest.sh --timing printed.
report() {
  local t
  t=$(sed -n 's/.*timing ([^)]*): boot-to-command \([0-9.]*\)s.*total \([0-9.]*\)s/boot-to-command \1s, total \2s/p' "$3")
  if [ "$2" = 0 ]; then echo "PASS  $1  (${t:-no timing})"
  else echo "FAIL  $1  (exit $2)"; FAILED=1; fi
  sed 's/^/    | /' "$3"          # what the guest printed (short)
}
one() { # NAME rdma-guest-options...
  local name=$1; shift
  "$G" --timing --timeout 300 "$@" -- "$T" loopback > "$LOG/$name" 2>&1
  report "$name" $? "$LOG/$name"
}
two() { # NAME TYPE: server in guest a, client in guest b
  local name=$1 link="selftest$$-$2" ra rb
  "$G" --"$2" --timing --timeout 400 --link "$link:a" -- "$T" server > "$LOG/$name.a" 2>&1 & local pa=$!
  "$G" --"$2" --timing --timeout 400 --link "$link:b" -- "$T" client > "$LOG/$name.b" 2>&1; rb=$?
  wait $pa; ra=$?
  report "$name (a: server)" $ra "$LOG/$name.a"
  report "$name (b: client)" $rb "$LOG/$name.b"
}

T0=$(date +%s)
one rxe-loopback --rxe
one siw-loopback --siw
two siw-two-guests siw
[ "${1:-}" = --rxe-link ] && two rxe-two-guests rxe
echo "selftest: $(( $(date +%s) - T0 ))s total"
if [ "$FAILED" = 0 ]; then rm -rf "$LOG"; else echo "selftest: FAILED (logs in $LOG)"; fi
exit $FAILED
