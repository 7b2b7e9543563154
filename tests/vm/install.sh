#!/bin/bash
# tests/vm/install.sh -- one-time host setup for tests/vm/rdma-guest.sh.
#
# Run as root on Debian 12 (bookworm) with apt reachable. Idempotent: a second run only
# re-checks apt packages (seconds). Nothing is written into the repository; the kernel, qemu
# and siw.ko go into a cache directory:
#     DAT_RDMA_GUEST_HOME   (default /var/tmp/dat-rdma-guest)
#
# What it does, and why:
#  1. apt-get install the host user space. The guest boots with the HOST's root file system,
#     so whatever the tests need inside the guest (rdma-core, providers, perftest, rping,
#     the OFED dapl provider libraries, dapltest/dtest) is installed here, on the host.
#  2. qemu-system-x86_64: used from PATH if present. Otherwise Debian's qemu-system-x86 and
#     qemu-system-data .debs are downloaded and EXTRACTED into the cache. (Pitfall: installing
#     Debian 12's qemu-system-x86 7.2 would remove a newer qemu-utils some images carry,
#     e.g. 10.0 from backports. Extracting needs only the binary's shared libraries.)
#  3. Debian's kernel (the package linux-image-amd64 points at) is downloaded and EXTRACTED
#     into the cache -- not installed: nothing touches /boot or the host's bootloader.
#     Its modules are pruned to what the guest loads (~400 MB -> ~15 MB).
#  4. siw.ko: Debian builds its kernels without CONFIG_RDMA_SIW (6.1 and 6.12), so the module
#     is built out of tree from Debian's linux-source (only drivers/infiniband/sw/siw is
#     unpacked) against linux-headers-<version>, and put in lib/modules/<v>/updates/.
set -euo pipefail

H=${DAT_RDMA_GUEST_HOME:-/var/tmp/dat-rdma-guest}
say() { echo "install.sh: $*"; }
die() { echo "install.sh: ERROR: $*" >&2; exit 1; }
trap 'die "failed at line $LINENO (command: $BASH_COMMAND)"' ERR

# APT::Sandbox::User=root: `apt-get download` into a directory the _apt user cannot write
# otherwise only warns; Lock::Timeout: wait for another apt (e.g. unattended-upgrades).
apt_q() { DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=600 \
            -o APT::Sandbox::User=root "$@"; }

HOST_PKGS="rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest libibverbs-dev
  librdmacm-dev libdapl2 dapl2-utils iproute2 kmod busybox-static cpio gzip
  xz-utils procps coreutils"

# --check: report whether everything is in place (exit 0) or what is missing (exit 1); installs
# nothing and needs no root. `make check` uses it to decide between running, installing and
# skipping the guest part.
if [ "${1:-}" = --check ]; then
  missing=()
  KV=$(cat "$H/kernel-version" 2>/dev/null) || missing+=("cached kernel ($H/kernel-version)")
  if [ -n "${KV:-}" ]; then
    [ -r "$H/kernel/boot/vmlinuz-$KV" ] || missing+=("$H/kernel/boot/vmlinuz-$KV")
    [ -e "$H/kernel/lib/modules/$KV/updates/siw.ko" ] || missing+=("siw.ko for $KV")
  fi
  command -v qemu-system-x86_64 >/dev/null || [ -x "$H/qemu/usr/bin/qemu-system-x86_64" ] \
    || missing+=("qemu-system-x86_64")
  for p in $HOST_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("package $p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install.sh --check: missing: ${missing[*]}"
    exit 1
  fi
  exit 0
fi

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages)"
command -v apt-get >/dev/null || die "needs apt-get (Debian 12)"
mkdir -p "$H/debs" || die "cannot create cache directory $H"

# ---------------------------------------------------------------- 1. host packages
say "apt-get update"
apt_q update >/dev/null || die "apt-get update failed"
say "installing host packages: $(echo $HOST_PKGS)"
# shellcheck disable=SC2086
apt_q install --no-install-recommends $HOST_PKGS >/dev/null || die "apt-get install failed"

# ---------------------------------------------------------------- 2. qemu
QEMU_DIR=$H/qemu
if command -v qemu-system-x86_64 >/dev/null; then
  say "qemu: using $(command -v qemu-system-x86_64) ($(qemu-system-x86_64 --version | head -1))"
elif [ -x "$QEMU_DIR/usr/bin/qemu-system-x86_64" ]; then
  say "qemu: already extracted in $QEMU_DIR"
else
  say "qemu: downloading qemu-system-x86/-common/-data, extracting to $QEMU_DIR"
  rm -f "$H"/debs/qemu-system-*.deb
  (cd "$H/debs" && apt_q download qemu-system-x86 qemu-system-common qemu-system-data >/dev/null) \
    || die "apt-get download qemu-system-x86 failed"
  # Install only the binary's own library dependencies. Pitfall: TCG itself is a loadable
  # module (accel-tcg-x86_64.so) in qemu-system-common; we keep that one and drop the UI,
  # audio and USB modules and helpers whose libraries we do not install. seabios: the BIOS.
  deps=$(dpkg-deb -f "$H"/debs/qemu-system-x86_*.deb Depends | tr ',' '\n' \
         | sed 's/|.*//; s/(.*)//; s/ //g' | grep -v -e '^$' -e '^qemu-' | sort -u)
  # shellcheck disable=SC2086
  apt_q install --no-install-recommends $deps >/dev/null || die "installing qemu's libraries failed"
  rm -rf "$QEMU_DIR.tmp"; mkdir -p "$QEMU_DIR.tmp"
  for d in "$H"/debs/qemu-system-*.deb; do dpkg-deb -x "$d" "$QEMU_DIR.tmp"; done
  find "$QEMU_DIR.tmp/usr/lib" -name '*.so' ! -name 'accel-tcg-*' -delete
  rm -rf "$QEMU_DIR.tmp/usr/share/doc" "$QEMU_DIR.tmp/usr/lib/qemu" "$QEMU_DIR.tmp/usr/libexec"
  rm -rf "$QEMU_DIR"; mv "$QEMU_DIR.tmp" "$QEMU_DIR"; rm -f "$H"/debs/qemu-system-*.deb
  "$QEMU_DIR/usr/bin/qemu-system-x86_64" --version >/dev/null \
    || die "extracted qemu does not run: ldd $QEMU_DIR/usr/bin/qemu-system-x86_64"
fi

# ---------------------------------------------------------------- 3. kernel
KPKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$KPKG" ] || die "cannot resolve linux-image-amd64 to a kernel package"
KV=${KPKG#linux-image-}                      # e.g. 6.1.0-56-amd64
KDIR=$H/kernel
MDIR=$KDIR/lib/modules/$KV
if [ -e "$KDIR/boot/vmlinuz-$KV" ] && [ -e "$KDIR/.pruned" ]; then
  say "kernel: $KV already in $KDIR"
else
  say "kernel: downloading $KPKG, extracting to $KDIR"
  rm -f "$H"/debs/linux-image-*.deb
  (cd "$H/debs" && apt_q download "$KPKG" >/dev/null) || die "apt-get download $KPKG failed"
  rm -rf "$KDIR"; mkdir -p "$KDIR"
  dpkg-deb -x "$H"/debs/"$KPKG"_*.deb "$KDIR"
  dpkg-deb -f "$H"/debs/"$KPKG"_*.deb Version > "$KDIR/.deb-version"
  rm -f "$H"/debs/"$KPKG"_*.deb
  [ -e "$MDIR/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko" ] || die "kernel $KV has no rdma_rxe.ko"
  depmod -b "$KDIR" "$KV"             # the .deb ships no modules.dep (its postinst makes it)

  # Prune: keep the dependency closure of the modules the guest loads, plus all of crypto/,
  # lib/ and arch/ (pitfall: siw asks for "crc32c" through the crypto API at run time, a
  # dependency modprobe --show-depends cannot see).
  WANT="virtio_pci virtio_console virtio_net 9pnet_virtio 9p overlay dummy veth ib_uverbs
        rdma_ucm ib_umad rdma_rxe"
  keep=$(mktemp)
  for m in $WANT; do
    modprobe -d "$KDIR" -S "$KV" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
  done > "$keep" || die "modprobe --show-depends failed"
  (cd "$KDIR" && find "lib/modules/$KV/kernel/crypto" "lib/modules/$KV/kernel/lib" \
     "lib/modules/$KV/kernel/arch" "lib/modules/$KV/kernel/drivers/infiniband" -name '*.ko*') \
     | sed "s|^|$KDIR/|" >> "$keep"
  find "$MDIR/kernel" -name '*.ko*' | grep -vxFf "$keep" | xargs rm -f
  find "$MDIR/kernel" -type d -empty -delete
  rm -f "$keep"; rm -rf "$KDIR/usr/share/doc"
  touch "$KDIR/.pruned"
fi

# ---------------------------------------------------------------- 4. siw.ko
if [ -e "$MDIR/updates/siw.ko" ]; then
  say "siw: $MDIR/updates/siw.ko already built"
else
  SRCPKG=linux-source-$(echo "$KV" | cut -d. -f1,2)          # linux-source-6.1
  KVER=$(cat "$KDIR/.deb-version")                          # e.g. 6.1.192-2
  say "siw: building out of tree from $SRCPKG=$KVER against linux-headers-$KV"
  apt_q install --no-install-recommends "linux-headers-$KV" gcc make >/dev/null \
    || die "cannot install linux-headers-$KV (needed to build siw.ko)"
  B=$H/siw-build; rm -rf "$B"; mkdir -p "$B"
  # The source should be the kernel's exact version; if the archive no longer has it, the
  # current one (same series) builds a siw.ko that loads just as well.
  (cd "$B" && { apt_q download "$SRCPKG=$KVER" >/dev/null 2>&1 || {
      say "siw: $SRCPKG=$KVER not available, using the current $SRCPKG"
      apt_q download "$SRCPKG" >/dev/null; }; }) || die "apt-get download $SRCPKG failed"
  # The .deb holds /usr/src/linux-source-6.1.tar.xz; unpack just the siw directory from it.
  dpkg-deb --fsys-tarfile "$B"/"$SRCPKG"_*.deb | tar -xO "./usr/src/$SRCPKG.tar.xz" | xz -dc \
    | tar -x -C "$B" --wildcards "$SRCPKG/drivers/infiniband/sw/siw/*" \
    || die "cannot unpack drivers/infiniband/sw/siw from $SRCPKG"
  SRC=$B/$SRCPKG/drivers/infiniband/sw/siw
  make -C "/usr/src/linux-headers-$KV" M="$SRC" CONFIG_RDMA_SIW=m modules > "$B/build.log" 2>&1 \
    || { tail -30 "$B/build.log" >&2; die "siw.ko build failed (log: $B/build.log)"; }
  mkdir -p "$MDIR/updates"
  strip --strip-debug -o "$MDIR/updates/siw.ko" "$SRC/siw.ko"
  rm -rf "$B"
fi
depmod -b "$KDIR" "$KV" || die "depmod failed"
modprobe -d "$KDIR" -S "$KV" --show-depends siw >/dev/null || die "siw not resolvable after depmod"
echo "$KV" > "$H/kernel-version"

say "done: kernel $KV, cache $H ($(du -sh "$H" | cut -f1))"
say "try: tests/vm/rdma-guest.sh -- ibv_devinfo     (or tests/vm/selftest.sh)"
