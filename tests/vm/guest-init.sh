#!/bin/bash
# Stage 2: PID 1 of the guest, on the host's root (read-only 9p + tmpfs overlay).
# rdma-guest.sh copies this file into the per-run directory RUN (shared read-write with the
# host) next to: config (variables, sourced below), cmd (the command), and it expects back:
# booted (guest uptime when this script started) and status ("RC T0 T1" or "setup-failed MSG").
RUN=$(dirname "$(readlink -f "$0")")
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "guest [$(up)]: $*"; }
# Power off (sysrq "o" = ACPI poweroff; qemu then exits). If PID 1 ever exits instead, the
# kernel panics and, with panic=-1 and qemu -no-reboot, qemu exits just the same.
poweroff_now() { sync; echo o > /proc/sysrq-trigger; sleep 10; }
trap poweroff_now EXIT
setup_fail() { log "SETUP FAILED: $*"; echo "setup-failed $*" > "$RUN/status"; exit; }

up > "$RUN/booted"
# shellcheck disable=SC1091
. "$RUN/config"      # RDMA_TYPE RDMA_IP RDMA_PEER_IP LINK_MAC KMODDIR CWD GUEST_TIMEOUT VERBOSE RW_DIRS apply_env
log "stage 2, kernel $(uname -r), $RDMA_TYPE"
# --verbose: trace every setup step with the guest uptime (on the console).
[ "$VERBOSE" = 1 ] && { PS4='+ [$(cut -d" " -f1 /proc/uptime)] '; set -x; }

mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts && ln -sf pts/ptmx /dev/ptmx
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=0755 run /run        # the host's /run (pid files, sockets) is not ours
ln -sf /proc/self/fd /dev/fd
i=0
for rw in "${RW_DIRS[@]}"; do                # --rw directories: tags rw0, rw1, ...
  mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 "rw$i" "$rw" \
    || setup_fail "cannot mount --rw $rw"
  i=$((i + 1))
done
# The host has no /lib/modules/<guest kernel>: show the cached kernel's modules there.
KV=$(uname -r)
mkdir -p "/lib/modules/$KV" && mount --bind "$KMODDIR" "/lib/modules/$KV" || setup_fail "bind $KMODDIR"
hostname dat-rdma-guest
ip link set lo up
ulimit -l unlimited                          # verbs pin memory (memlock)
ulimit -n 65536

# stdout/stderr of the command go to two virtio-serial ports the host streams (names are set
# by rdma-guest.sh). No udev: find them by name in sysfs; devtmpfs made the /dev nodes.
modprobe virtio_console || setup_fail "modprobe virtio_console"
OUT= ERR=
for _ in $(seq 200); do
  for p in /sys/class/virtio-ports/*; do
    case $(cat "$p/name" 2>/dev/null) in
      dat.stdout) OUT=/dev/${p##*/};; dat.stderr) ERR=/dev/${p##*/};;
    esac
  done
  [ -c "$OUT" ] && [ -c "$ERR" ] && break; sleep 0.05
done
[ -c "$OUT" ] && [ -c "$ERR" ] || setup_fail "virtio-serial ports not found"

# RDMA: core + user-space access, then the soft driver (none for a plain TCP guest).
if [ "$RDMA_TYPE" != tcp ]; then
  modprobe ib_uverbs && modprobe rdma_ucm && modprobe ib_umad || setup_fail "modprobe ib_uverbs/rdma_ucm"
  modprobe "$( [ "$RDMA_TYPE" = siw ] && echo siw || echo rdma_rxe )" || setup_fail "modprobe $RDMA_TYPE"
fi
RDMA_DEV=${RDMA_TYPE}0 RDMA_NETDEV=rdma0
[ "$RDMA_TYPE" = tcp ] && RDMA_DEV=
if [ -n "$LINK_MAC" ]; then
  # Two-guest mode: the virtio NIC joined to the other guest. Rename it to rdma0.
  modprobe virtio_net || setup_fail "modprobe virtio_net"
  nic=
  for _ in $(seq 100); do
    for n in /sys/class/net/*; do [ "$(cat "$n/address")" = "$LINK_MAC" ] && nic=${n##*/}; done
    [ -n "$nic" ] && break; sleep 0.05
  done
  [ -n "$nic" ] && ip link set "$nic" name "$RDMA_NETDEV" || setup_fail "virtio NIC $LINK_MAC not found"
else
  # One guest: a dummy netdev. Pitfall: rdma_cm cannot use 127.0.0.1 / lo, it needs a real
  # address on the device the soft RDMA driver is bound to.
  modprobe dummy numdummies=0 && ip link add "$RDMA_NETDEV" type dummy || setup_fail "dummy netdev"
fi
# Pitfall: at MTU 1500 rxe's active path MTU is only 1024; 9000 gives 4096.
ip link set "$RDMA_NETDEV" mtu 9000 && ip addr add "$RDMA_IP/24" dev "$RDMA_NETDEV" &&
  ip link set "$RDMA_NETDEV" up || setup_fail "configuring $RDMA_NETDEV"
if [ -n "$RDMA_DEV" ]; then
  rdma link add "$RDMA_DEV" type "$RDMA_TYPE" netdev "$RDMA_NETDEV" || setup_fail "rdma link add $RDMA_DEV"
  state=/sys/class/infiniband/$RDMA_DEV/ports/1/state
  for _ in $(seq 100); do grep -q ACTIVE "$state" 2>/dev/null && break; sleep 0.05; done
  grep -q ACTIVE "$state" || setup_fail "$RDMA_DEV port is not ACTIVE"
fi

# RoCE (rxe) tools that do not use rdma_cm (ibv_rc_pingpong -g, perftest -x) need the GID
# index of the IPv4-mapped GID; iWARP (siw) has no GID table to speak of.
RDMA_GID_INDEX=
if [ "$RDMA_TYPE" = rxe ]; then
  want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${RDMA_IP//./ })
  for _ in $(seq 100); do
    for g in "/sys/class/infiniband/$RDMA_DEV/ports/1/gids/"*; do
      # (break early: the table has 1024 entries and each read is slow under emulation)
      [ "$(cat "$g" 2>/dev/null)" = "$want" ] && { RDMA_GID_INDEX=${g##*/}; break; }
    done
    [ -n "$RDMA_GID_INDEX" ] && break; sleep 0.05
  done
fi

# A dat.conf for the OFED uDAPL provider (libdaplofa, rdma_cm) on this device, for running
# the reference dapltest/dtest or loading the OFED provider through our registry.
mkdir -p /run/dat
if [ -n "$RDMA_DEV" ]; then
  echo "ofa-v2-$RDMA_TYPE u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"$RDMA_NETDEV 0\" \"\"" \
    > /run/dat/dat.conf
else
  : >/run/dat/dat.conf
fi
export RDMA_TYPE RDMA_DEV RDMA_NETDEV RDMA_IP RDMA_GID_INDEX RDMA_DAT_CONF=/run/dat/dat.conf
[ -n "$RDMA_PEER_IP" ] && export RDMA_PEER_IP
export DAT_OVERRIDE=$RDMA_DAT_CONF
apply_env                                    # host variables (may override DAT_OVERRIDE)
log "${RDMA_DEV:-no RDMA device,} on $RDMA_NETDEV $RDMA_IP${RDMA_PEER_IP:+ (peer $RDMA_PEER_IP)}${RDMA_GID_INDEX:+ gid $RDMA_GID_INDEX}"

set +x
cd "$CWD" 2>/dev/null || cd /
T0=$(up)
echo "$T0" > "$RUN/started"
timeout -k 5 "$GUEST_TIMEOUT" /bin/bash "$RUN/cmd" < /dev/null > "$OUT" 2> "$ERR"
RC=$?
echo "$RC $T0 $(up)" > "$RUN/status.tmp" && mv "$RUN/status.tmp" "$RUN/status"
