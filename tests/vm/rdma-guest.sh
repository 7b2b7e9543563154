#!/bin/bash
# tests/vm/rdma-guest.sh -- run a command inside a throw-away QEMU guest that has a soft RDMA
# device (Soft-RoCE "rxe", or soft-iWARP "siw" with --siw), or none (--tcp: no RDMA module
# loaded, plain TCP/IP only). Setup: tests/vm/install.sh (root).
#
#   tests/vm/rdma-guest.sh [options] -- CMD [ARGS...]
#
# The guest boots Debian's kernel (cached by install.sh) with the HOST's root file system as
# its root (read-only virtio 9p + tmpfs overlay): host binaries, libraries and this work tree
# are all there, guest writes vanish with the guest (except --rw directories). CMD runs as
# root, in the current directory, stdin /dev/null; its stdout and stderr are streamed here.
# Environment CMD sees:
#   RDMA_TYPE rxe|siw|tcp   RDMA_DEV rxe0|siw0 (none with --tcp)   RDMA_NETDEV rdma0
#   RDMA_IP 10.77.0.1 (or .2)
#   RDMA_PEER_IP (--link only)   RDMA_GID_INDEX (rxe: GID index of RDMA_IP, for perftest -x)
#   RDMA_DAT_CONF, DAT_OVERRIDE: a dat.conf with "ofa-v2-<type>" (OFED libdaplofa on rdma0)
#   PATH HOME USER LANG TERM TMPDIR LD_LIBRARY_PATH and DAT_* DAPL_* RUST_* CARGO_* RDMAV_*
#   IBV_* from the host, plus --env ones.
# Options:
#   --siw | --rxe | --tcp  soft device type (default rxe); --tcp: no RDMA device, no DAT
#                        dat.conf entry of OFED's (the netdev is still rdma0)
#   --timeout S          hard limit for the whole run, boot included (default 1800)
#   --link NAME:a|b      two guests joined by a virtual wire (host unix datagram sockets
#                        /tmp/dat-rdma-link.NAME.{a,b} -- no IP traffic on the host). Side a is
#                        10.77.0.1, side b 10.77.0.2. Start both at once:
#                          rdma-guest.sh --siw --link t:a -- server & \
#                          rdma-guest.sh --siw --link t:b -- client; wait
#   --rw DIR             share host DIR read-write at the same path (repeatable)
#   --env NAME[=VALUE]   pass a variable into the guest (repeatable)
#   --mem SIZE           guest memory (default 2G)       --smp N  vCPUs (default nproc, max 4)
#   --accel auto|kvm|tcg|icount
#                        default auto: KVM only if a probe boot shows it works (cached per
#                        host boot), else TCG emulation (pitfall: a PVM /dev/kvm exists but
#                        cannot run a stock kernel). icount: TCG on one vCPU whose clock counts
#                        the guest's instructions (32 ns each, idle time skipped), so the
#                        guest's times repeat from run to run whatever the host's load (for
#                        benchmarks; pitfall: with two vCPUs the kernel hangs bringing up the
#                        second, so --smp is 1; two spinning processes then share one CPU)
#   --timing             print boot/command/total seconds to stderr
#   --verbose            stream the guest console (kernel + init log) to stderr
#   --keep               keep the run directory
# Exit status: CMD's; 124 on timeout; 125 if the harness or the guest setup failed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
H=${DAT_RDMA_GUEST_HOME:-/var/tmp/dat-rdma-guest}
die() { echo "rdma-guest: $*" >&2; exit 125; }
note() { echo "rdma-guest: $*" >&2; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

TYPE=rxe TIMEOUT=1800 LINK= MEM=2G SMP= ACCEL=auto TIMING=0 VERBOSE=0 KEEP=0 RW=() ENVS=()
while [ $# -gt 0 ]; do
  case $1 in
    --siw|--rxe|--tcp) TYPE=${1#--};;
    --timeout) TIMEOUT=$2; shift;;
    --link) LINK=$2; shift;;
    --rw) [ -d "$2" ] || die "--rw $2: not a directory"; RW+=("$(cd "$2" && pwd -P)"); shift;;
    --env) ENVS+=("$2"); shift;;
    --mem) MEM=$2; shift;;
    --smp) SMP=$2; shift;;
    --accel) ACCEL=$2; shift;;
    --timing) TIMING=1;;
    --verbose) VERBOSE=1;;
    --keep) KEEP=1;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    --) shift; break;;
    *) die "unknown option $1 (see --help)";;
  esac
  shift
done
[ $# -gt 0 ] || die "usage: rdma-guest.sh [options] -- CMD [ARGS...]"
case $TIMEOUT in ''|*[!0-9]*|0) die "--timeout wants whole seconds";; esac

# ---------------------------------------------------------------- what install.sh cached
KV=$(cat "$H/kernel-version" 2>/dev/null) || die "no cached kernel in $H: run tests/vm/install.sh as root"
KDIR=$H/kernel VMLINUZ=$H/kernel/boot/vmlinuz-$KV KMODDIR=$H/kernel/lib/modules/$KV
[ -r "$VMLINUZ" ] || die "$VMLINUZ missing or unreadable: run tests/vm/install.sh"
[ "$TYPE" != siw ] || [ -e "$KMODDIR/updates/siw.ko" ] || die "no siw.ko for $KV: run tests/vm/install.sh"
QEMU=(qemu-system-x86_64) QEMU_DATA=()
if ! command -v qemu-system-x86_64 >/dev/null; then
  # install.sh extracted Debian's qemu here (see there why it is not installed). Its firmware
  # (linuxboot_dma.bin, ...) is in the extracted share/qemu, the BIOS in the host's seabios.
  QEMU=(env "QEMU_MODULE_DIR=$H/qemu/usr/lib/x86_64-linux-gnu/qemu" "$H/qemu/usr/bin/qemu-system-x86_64")
  QEMU_DATA=(-L "$H/qemu/usr/share/qemu" -L /usr/share/seabios)
  [ -x "${QEMU[2]}" ] || die "no qemu-system-x86_64: run tests/vm/install.sh"
fi
[ -n "$SMP" ] || { SMP=$(nproc); [ "$SMP" -gt 4 ] && SMP=4; }
[ "$ACCEL" = icount ] && SMP=1   # (see --accel)

RUN=$(mktemp -d "${TMPDIR:-/tmp}/dat-rdma-guest.XXXXXX") || die "mktemp failed"
QPID= PIDS=() LINK_SOCK=
cleanup() {
  [ -n "$QPID" ] && kill "$QPID" 2>/dev/null
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  [ -n "$LINK_SOCK" ] && rm -f "$LINK_SOCK"
  if [ "$KEEP" = 1 ]; then note "run directory kept: $RUN"; else rm -rf "$RUN"; fi
}
trap cleanup EXIT
trap 'note "interrupted"; exit 130' INT TERM HUP

# ---------------------------------------------------------------- initramfs (~0.1 s, per run)
# busybox-static (pitfall: Debian's plain "busybox" is dynamically linked, useless here) +
# the modules needed to mount 9p and overlay, in dependency order.
mkdir -p "$RUN/initrd/bin" "$RUN/initrd/mods"
cp /bin/busybox "$RUN/initrd/bin/busybox" 2>/dev/null || die "no /bin/busybox (busybox-static): run tests/vm/install.sh"
cp "$HERE/initramfs-init" "$RUN/initrd/init" && chmod +x "$RUN/initrd/init" || die "cannot copy initramfs-init"
MODPROBE=$(command -v modprobe || echo /sbin/modprobe)     # (not on a plain user's PATH)
for m in virtio_pci 9pnet_virtio 9p overlay; do
  "$MODPROBE" -d "$KDIR" -S "$KV" --show-depends "$m"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
  cp "$ko" "$RUN/initrd/mods/" && echo "${ko##*/}"
done > "$RUN/initrd/modules.list"
grep -q '^overlay.ko' "$RUN/initrd/modules.list" || die "cannot collect initramfs modules from $KDIR"
(cd "$RUN/initrd" && find . | cpio -o -H newc --quiet | gzip -1) > "$RUN/initrd.gz" || die "cpio failed"
rm -rf "$RUN/initrd"

# Common qemu arguments. Pitfalls: -nodefaults drops the default NIC (no guest network unless
# --link), "romfile=" keeps virtio-net from wanting an iPXE ROM.
BASE=(-nodefaults -no-user-config -display none -no-reboot -machine pc -m "$MEM" -smp "$SMP"
      -kernel "$VMLINUZ" -initrd "$RUN/initrd.gz" "${QEMU_DATA[@]}"
      -fsdev local,id=hostroot,path=/,readonly=on,security_model=none,multidevs=remap
      -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot)
APPEND="console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off"

# ---------------------------------------------------------------- accelerator
# Detect, don't assume: /dev/kvm may be PVM (kvm_pvm), where qemu aborts on MSR writes or a
# stock kernel hangs. So boot this kernel once with KVM to a "probe OK" line (a few seconds
# when KVM works) and remember the verdict for this host boot.
kvm_works() {
  [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
  local cache=${TMPDIR:-/tmp}/dat-rdma-guest-kvm.$(id -u) boot
  boot=$(cat /proc/sys/kernel/random/boot_id)
  if [ -r "$cache" ] && [ "$(cut -d' ' -f1 "$cache")" = "$boot" ]; then
    [ "$(cut -d' ' -f2 "$cache")" = yes ]; return
  fi
  ( timeout -k 2 30 "${QEMU[@]}" "${BASE[@]}" -accel kvm -cpu host -serial "file:$RUN/probe.log" \
      -append "$APPEND dat.probe=1" ) </dev/null >/dev/null 2>&1   # (subshell: no "Aborted")
  local v=no; grep -q DAT-GUEST-PROBE-OK "$RUN/probe.log" 2>/dev/null && v=yes
  echo "$boot $v" > "$cache"
  [ "$v" = yes ]
}
case $ACCEL in
  auto) if kvm_works; then ACCEL=kvm; else ACCEL=tcg; fi;;
  kvm|tcg|icount) ;;
  *) die "--accel auto|kvm|tcg|icount";;
esac
case $ACCEL in
  kvm) ACCEL_ARGS=(-accel kvm -cpu host) BOOT_TIMEOUT=60;;
  tcg) ACCEL_ARGS=(-accel tcg,thread=multi,tb-size=256 -cpu max) BOOT_TIMEOUT=300;;
  icount) ACCEL_ARGS=(-accel tcg,thread=single,tb-size=256 -cpu max -icount shift=5,align=off,sleep=off -rtc clock=vm)
          BOOT_TIMEOUT=300;;
esac
[ "$BOOT_TIMEOUT" -lt "$TIMEOUT" ] || BOOT_TIMEOUT=$TIMEOUT

# ---------------------------------------------------------------- two-guest link
IP=10.77.0.1 PEER_IP= MAC= LINK_ARGS=()
if [ -n "$LINK" ]; then
  NAME=${LINK%:*} SIDE=${LINK##*:}
  [ -n "$NAME" ] && [ "$NAME" != "$LINK" ] || die "--link NAME:a or NAME:b"
  case $SIDE in
    a) OTHER=b IP=10.77.0.1 PEER_IP=10.77.0.2 MAC=52:54:00:77:00:01;;
    b) OTHER=a IP=10.77.0.2 PEER_IP=10.77.0.1 MAC=52:54:00:77:00:02;;
    *) die "--link NAME:a or NAME:b";;
  esac
  case $NAME in */*) SOCK=$NAME;; *) SOCK=${TMPDIR:-/tmp}/dat-rdma-link.$NAME;; esac
  LINK_SOCK=$SOCK.$SIDE; rm -f "$LINK_SOCK"
  # Each qemu binds its own unix datagram socket and sends to the other's. Frames sent
  # before the other side is up are simply lost (ARP/TCP retry), so start order is free.
  LINK_ARGS=(-netdev "dgram,id=wire,local.type=unix,local.path=$LINK_SOCK,remote.type=unix,remote.path=$SOCK.$OTHER"
             -device "virtio-net-pci,netdev=wire,mac=$MAC,host_mtu=9000,romfile=")
  # Two TCG guests on a small host: one vCPU each keeps them from starving each other.
  [ "$ACCEL" = tcg ] && [ "$(nproc)" -le 2 ] && SMP=1
fi

# ---------------------------------------------------------------- the run directory
cp "$HERE/guest-init.sh" "$RUN/init" || die "cannot copy guest-init.sh"   # a copy: editing the
{ printf 'exec'; printf ' %q' "$@"; printf '\n'; } > "$RUN/cmd"          # repo mid-run is safe
GUEST_TIMEOUT=$(( TIMEOUT > 120 ? TIMEOUT - 60 : TIMEOUT / 2 ))
{
  printf 'RDMA_TYPE=%q RDMA_IP=%q RDMA_PEER_IP=%q LINK_MAC=%q\n' "$TYPE" "$IP" "$PEER_IP" "$MAC"
  printf 'KMODDIR=%q CWD=%q GUEST_TIMEOUT=%q VERBOSE=%q\n' "$KMODDIR" "$PWD" "$GUEST_TIMEOUT" "$VERBOSE"
  printf 'RW_DIRS=('; for d in "${RW[@]}"; do printf ' %q' "$d"; done; printf ' )\n'
  echo 'apply_env() {'
  for v in PATH HOME USER LOGNAME LANG LC_ALL TERM TZ TMPDIR LD_LIBRARY_PATH \
           $(compgen -e | grep -E '^(DAT|DAPL|RUST|CARGO|RDMAV|IBV)_'); do
    [ -n "${!v+x}" ] && printf '  export %s=%q\n' "$v" "${!v}"
  done
  for e in "${ENVS[@]}"; do
    case $e in *=*) printf '  export %s=%q\n' "${e%%=*}" "${e#*=}";;
               *) [ -n "${!e+x}" ] && printf '  export %s=%q\n' "$e" "${!e}";; esac
  done
  echo '  :'; echo '}'
} > "$RUN/config"
RW_ARGS=() i=0
for d in "${RW[@]}"; do
  RW_ARGS+=(-fsdev "local,id=rw$i,path=$d,security_model=none" -device "virtio-9p-pci,fsdev=rw$i,mount_tag=rw$i")
  i=$((i + 1))
done

# ---------------------------------------------------------------- output relays
# qemu writes the guest's stdout/stderr/console into FIFOs, cat relays them to ours. This
# works whatever our stdout is (tty, pipe, file, socket). Pitfall: if our reader goes away
# (`... | head`), keep draining, or qemu stalls the port and the guest blocks forever.
mkfifo "$RUN/out" "$RUN/err" "$RUN/con" || die "mkfifo failed"
relay() { cat "$1" || exec cat "$1" > /dev/null; }
relay "$RUN/out" & PIDS+=($!)
relay "$RUN/err" >&2 & PIDS+=($!)
if [ "$VERBOSE" = 1 ]; then relay "$RUN/con" >&2 & PIDS+=($!)
else cat "$RUN/con" > "$RUN/console.log" & PIDS+=($!); fi

# ---------------------------------------------------------------- boot
T_START=$(now)
timeout -k 5 "$TIMEOUT" "${QEMU[@]}" "${BASE[@]}" "${ACCEL_ARGS[@]}" "${LINK_ARGS[@]}" "${RW_ARGS[@]}" \
  -fsdev "local,id=run,path=$RUN,security_model=none" -device virtio-9p-pci,fsdev=run,mount_tag=run \
  -chardev "file,id=con,path=$RUN/con" -serial chardev:con \
  -device virtio-serial-pci,id=vser \
  -chardev "file,id=out,path=$RUN/out" -device virtserialport,bus=vser.0,chardev=out,name=dat.stdout \
  -chardev "file,id=err,path=$RUN/err" -device virtserialport,bus=vser.0,chardev=err,name=dat.stderr \
  -append "$APPEND dat.run=$RUN" < /dev/null > "$RUN/qemu.log" 2>&1 &
QPID=$!
T_CMD= BOOT_FAIL=0
while kill -0 "$QPID" 2>/dev/null; do
  [ -z "$T_CMD" ] && [ -e "$RUN/started" ] && T_CMD=$(now)
  if [ ! -e "$RUN/booted" ] && [ "$(secs "$T_START" "$(now)" | cut -d. -f1)" -ge "$BOOT_TIMEOUT" ]; then
    BOOT_FAIL=1; kill "$QPID"; break
  fi
  sleep 0.2
done
wait "$QPID"; QRC=$?; QPID=
T_END=$(now)
# Release relays whose FIFO qemu never opened (it died early), then let them drain.
for f in out err con; do : <> "$RUN/$f"; done
for p in "${PIDS[@]}"; do for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; done
PIDS=()

fail_logs() { tail -n 15 "$RUN/qemu.log" >&2; [ "$VERBOSE" = 1 ] || tail -n 30 "$RUN/console.log" >&2; }
if [ -s "$RUN/status" ]; then
  read -r RC T0 T1 < "$RUN/status"
  if [ "$RC" = setup-failed ]; then note "guest setup failed: $T0 $T1"; fail_logs; exit 125; fi
  [ "$TIMING" = 1 ] && note "timing ($ACCEL, $TYPE${LINK:+, link $LINK}): boot-to-command $(secs "$T_START" "${T_CMD:-$T_END}")s" \
    "(guest uptime ${T0}s), command $(secs "$T0" "$T1")s, total $(secs "$T_START" "$T_END")s"
  [ "$RC" = 124 ] && note "command timed out (guest limit ${GUEST_TIMEOUT}s)"
  exit "$RC"
fi
if [ "$BOOT_FAIL" = 1 ]; then note "guest did not boot within ${BOOT_TIMEOUT}s ($ACCEL)"; fail_logs; exit 125; fi
if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then note "timeout: guest killed after ${TIMEOUT}s"; fail_logs; exit 124; fi
note "guest stopped without an exit status (qemu exit $QRC)"; fail_logs; exit 125
