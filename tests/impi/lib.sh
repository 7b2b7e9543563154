# tests/impi/lib.sh -- shell functions shared by tests/impi/run.sh (the test cases) and
# tools/bench/impi-bench.sh (the figures): Intel MPI 2018 Update 3 from its Python wheel, the test
# programs built against it, and one mpirun. Sourced (bash).
#
# The wheel (pip's `impi==2018.0.3`, 17 MB) is fetched once into IMPI_CACHE (default
# /var/tmp/impi) and unpacked under the build directory; nothing is installed. Intel MPI's
# `libmpi.so.12` has the MPICH ABI, so the programs compile against Debian's MPICH <mpi.h>
# (libmpich-dev) and link the wheel's libmpi.
IMPI_VERSION=2018.0.3
impi_wheel=impi-$IMPI_VERSION-py2.py3-none-manylinux1_x86_64.whl
impi_cache=${IMPI_CACHE:-/var/tmp/impi}
impi_fetch_cmd="pip download --no-deps impi==$IMPI_VERSION -d $impi_cache"
impi_src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# set by impi_prepare
impi_root= impi_bin= impi_preload= impi_skip=

# impi_mpi_include: the directory of Debian's MPICH mpi.h (libmpich-dev)
impi_mpi_include() {
    local d
    for d in /usr/include/x86_64-linux-gnu/mpich /usr/include/mpich /usr/lib/x86_64-linux-gnu/mpich/include; do
        [ -f "$d/mpi.h" ] && { echo "$d"; return 0; }
    done
    return 1
}

# impi_prepare BUILD [fetch|nofetch]: the wheel (fetched unless nofetch), unpacked into
# BUILD/root, the test programs built into BUILD/bin (again when their sources changed), the
# RLIMIT_MEMLOCK answer (impi_preload). Sets impi_root (Intel MPI's I_MPI_ROOT), impi_bin and
# impi_preload. Returns 1 with impi_skip set to the command that would make it possible.
impi_prepare() {
    local build=$1 fetch=${2:-fetch} inc
    mkdir -p "$build" && build=$(cd "$build" && pwd) || return 2
    if [ ! -s "$impi_cache/$impi_wheel" ]; then
        if [ "$fetch" = fetch ]; then
            echo "impi: fetching the Intel MPI $IMPI_VERSION wheel: $impi_fetch_cmd" >&2
            mkdir -p "$impi_cache" 2>/dev/null
            if command -v pip >/dev/null; then
                pip download -q --no-deps "impi==$IMPI_VERSION" -d "$impi_cache" >&2
            else
                python3 -m pip download -q --no-deps "impi==$IMPI_VERSION" -d "$impi_cache" >&2
            fi
        fi
        [ -s "$impi_cache/$impi_wheel" ] || { impi_skip=$impi_fetch_cmd; return 1; }
    fi
    inc=$(impi_mpi_include) || { impi_skip="apt-get install libmpich-dev (for MPICH's mpi.h)"; return 1; }
    impi_root=$build/root/impi-$IMPI_VERSION.data/data
    if [ ! -f "$build/root/.unpacked" ] || [ "$impi_cache/$impi_wheel" -nt "$build/root/.unpacked" ]; then
        rm -rf "$build/root"
        python3 -m zipfile -e "$impi_cache/$impi_wheel" "$build/root" || return 2
        chmod +x "$impi_root"/bin/* || return 2
        # conda-style placeholders for the installation prefix: mpiexec.conf (read by hydra from
        # I_MPI_ROOT/etc) would put /opt/anaconda1anaconda2anaconda3/lib on every rank's
        # LD_LIBRARY_PATH
        sed -i "s|/opt/anaconda1anaconda2anaconda3|$impi_root|g" "$impi_root/etc/mpiexec.conf" \
            "$impi_root/bin/mpivars.sh" || return 2
        touch "$build/root/.unpacked"
    fi
    impi_bin=$build/bin
    mkdir -p "$impi_bin"
    local p
    for p in pingpong collectives; do
        if [ ! -x "$impi_bin/$p" ] || [ "$impi_src/$p.c" -nt "$impi_bin/$p" ] ||
            [ "$impi_src/dat_library.h" -nt "$impi_bin/$p" ]; then
            cc -std=c11 -O2 -g -Wall -Wextra -Werror -I"$inc" -o "$impi_bin/$p" "$impi_src/$p.c" \
                -L"$impi_root/lib" -Wl,-rpath,"$impi_root/lib" -lmpi || return 2
        fi
    done
    # Intel MPI refuses DAPL when RLIMIT_MEMLOCK is small (hosts running it set it unlimited):
    # raise it for this shell, else answer Intel MPI's query with memlock-shim.so in the ranks
    impi_preload=
    ulimit -l unlimited 2>/dev/null
    if [ "$(ulimit -l)" != unlimited ]; then
        if [ ! -f "$impi_bin/memlock-shim.so" ] || [ "$impi_src/memlock-shim.c" -nt "$impi_bin/memlock-shim.so" ]; then
            cc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$impi_bin/memlock-shim.so" "$impi_src/memlock-shim.c" -ldl ||
                return 2
        fi
        impi_preload=$impi_bin/memlock-shim.so
        echo "impi: RLIMIT_MEMLOCK is $(ulimit -l) KiB and cannot be raised here: the ranks get" \
            "$impi_preload (Intel MPI's getrlimit query answered unlimited)" >&2
    fi
    return 0
}

# impi_mpirun SECS LOG LIBDIR NP [NAME=VALUE...] -- PROGRAM [ARGS...]: Intel MPI's mpirun with NP
# ranks, each NAME=VALUE given to every rank (-genv), LIBDIR first on the ranks' LD_LIBRARY_PATH
# ("system": left to the dynamic linker); stdout and stderr into LOG; killed (exit 124) after
# SECS seconds. IMPI_HOSTS (comma-separated) is hydra's -hosts, IMPI_PPN its -ppn, and
# IMPI_BOOTSTRAP_EXEC its remote launcher (two hosts).
impi_mpirun() {
    local secs=$1 log=$2 libdir=$3 np=$4 args=()
    shift 4
    [ "$libdir" = system ] || args+=(-genv LD_LIBRARY_PATH "$libdir")
    [ -z "$impi_preload" ] || args+=(-genv LD_PRELOAD "$impi_preload")
    # (the QEMU guests' launcher environment makes MPI_Init crash parsing this map)
    args+=(-genv I_MPI_INFO_NUMA_NODE_MAP "")
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        args+=(-genv "${1%%=*}" "${1#*=}")
        shift
    done
    shift
    local where=()
    [ -z "${IMPI_HOSTS:-}" ] || where+=(-hosts "$IMPI_HOSTS")
    [ -z "${IMPI_PPN:-}" ] || where+=(-ppn "$IMPI_PPN")
    [ -z "${IMPI_BOOTSTRAP_EXEC:-}" ] || where+=(-bootstrap rsh -bootstrap-exec "$IMPI_BOOTSTRAP_EXEC")
    env -u LD_LIBRARY_PATH -u LD_PRELOAD I_MPI_ROOT="$impi_root" PATH="$impi_root/bin:$PATH" \
        timeout -k 10 "$secs" "$impi_root/bin/mpirun" "${where[@]}" -n "$np" "${args[@]}" "$@" >"$log" 2>&1
}
