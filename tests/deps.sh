#!/bin/bash
# tests/deps.sh -- `make check-deps`, first of `make check`: the Debian packages the tests and
# `make bench` use beyond what building needs. Run as root on a system with apt, it installs the
# missing ones with one apt-get line (printed); otherwise it prints that line and fails.
# (The soft-RDMA guests install themselves on first use: tests/vm/install.sh, check-vm-auto.)
#
#   tests/deps.sh           install what is missing (root + apt), else fail naming it
#   tests/deps.sh --check   only say what is missing (exit 1 if anything is)
set -u
export DEBIAN_FRONTEND=noninteractive

# package  probe (a command on PATH, or an absolute path that must exist)  what uses it
deps=(
    "gcc            cc                               C conformance suite, tools, examples"
    "g++            c++                              the headers' C++ checks (check-abi), libFuzzer (check-fuzz)"
    "make           make                             the build"
    "binutils       readelf                          the ELF export check (check-elf)"
    "pkg-config     pkg-config                       the install check (check-install)"
    "valgrind       valgrind                         check-valgrind, make bench-callgrind"
    "groff-base     groff                            the man page check (check-man)"
    "libdapl-dev    /usr/include/dat2/udat.h         OFED's DAT 2.0 headers, compared with ours (check-abi)"
    "dapl2-utils    dtest                            Debian's dtest, dtestx, dtestcm, dtestsrq, dapltest (check-dapl2-shm)"
    "iproute2       ip                               check-dapl2-shm's private network namespace"
    "util-linux     unshare                          check-dapl2-shm's private network namespace"
    "libfabric1     /usr/lib/x86_64-linux-gnu/libfabric.so.1  libfabric: the ofi provider (check-ofi), a make bench baseline"
    "libfabric-bin  fi_pingpong                      libfabric's fi_pingpong (make bench)"
    "libfabric-dev  /usr/include/rdma/fabric.h       libfabric's headers: the ofi binding's layout check (check-rust)"
    "libmpich-dev   /usr/include/x86_64-linux-gnu/mpich/mpi.h  MPI test programs' mpi.h"
    "python3-pip    pip3                             fetches MPI packages for the MPI tests"
    "gnuplot-nox    gnuplot                          make bench's pictures (gnuplot without X)"
)

present() { # PROBE
    case $1 in
    /*) [ -e "$1" ] ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
    esac
}

missing=()
for d in "${deps[@]}"; do
    read -r pkg probe _ <<<"$d"
    if command -v dpkg-query >/dev/null 2>&1; then
        # Debian: ask dpkg (a probe could be satisfied by something else on PATH)
        [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" = "install ok installed" ] && continue
    elif present "$probe"; then
        continue
    fi
    missing+=("$pkg")
done

if [ ${#missing[@]} = 0 ]; then
    echo "check-deps: every package the tests use is installed (${#deps[@]})"
    exit 0
fi
line="apt-get install -y --no-install-recommends ${missing[*]}"
for d in "${deps[@]}"; do
    read -r pkg _ why <<<"$d"
    [[ " ${missing[*]} " == *" $pkg "* ]] && printf 'check-deps: missing %-14s %s\n' "$pkg" "$why"
done
if [ "${1:-}" != --check ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "check-deps: $line"
    if ! apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
        echo "check-deps: apt-get update -qq (the package lists were stale), then again"
        apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
            { echo "FAIL check-deps: $line failed"; exit 1; }
    fi
    exec "$0" --check
fi
echo "FAIL check-deps: install them (as root): $line"
exit 1
