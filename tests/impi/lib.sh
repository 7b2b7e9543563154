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
impi_repo=$(cd "$impi_src/../.." && pwd -P)
# OFED's libdat2.so.2 (Debian's libdapl2), which a run on the `system` library must load
impi_ofed_libdir=$(dpkg -L libdapl2 2>/dev/null | sed -n 's|^\(/.*\)/libdat2.so.2$|\1|p' | head -1)
[ -z "$impi_ofed_libdir" ] || impi_ofed_libdir=$(cd "$impi_ofed_libdir" && pwd -P)
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

# impi_fabric CONFIG IA: the settings of a fabric configuration for every rank, one NAME=VALUE
# per word (tests/impi/run.sh lists the configurations). Fallback to another fabric is off and
# I_MPI_DEBUG=2 makes each rank print its data transfer mode, which impi_check reads.
impi_fabric() {
    local common="I_MPI_FALLBACK=0 I_MPI_DEBUG=2"
    case $1 in
    dapl) echo "I_MPI_FABRICS=dapl:dapl I_MPI_DAPL_PROVIDER=$2 $common" ;;
    dapl-ud) echo "I_MPI_FABRICS=dapl:dapl I_MPI_DAPL_UD=on I_MPI_DAPL_UD_PROVIDER=$2 I_MPI_DAPL_PROVIDER=$2 $common" ;;
    shm:dapl) echo "I_MPI_FABRICS=shm:dapl I_MPI_DAPL_PROVIDER=$2 $common" ;;
    shm:dapl-ud) echo "I_MPI_FABRICS=shm:dapl I_MPI_DAPL_UD=on I_MPI_DAPL_UD_PROVIDER=$2 I_MPI_DAPL_PROVIDER=$2 $common" ;;
    shm) echo "I_MPI_FABRICS=shm:shm $common" ;;
    tcp) echo "I_MPI_FABRICS=tcp:tcp $common" ;;
    *) return 1 ;;
    esac
}

# impi_check LOG CONFIG LIBDIR PROGRAM NP: prints why the run in LOG does not count (nothing when
# it does): PROGRAM's "passed" line missing; a rank without the data transfer mode CONFIG asks
# for; a -ud config's rank without the IB UD extension, or another config's rank with it; a rank
# that loaded another libdat2.so.2 than LIBDIR's (`system`: OFED's, with its libdaplofa.so.2), or
# any provider library with ours, or DAT at all without DAPL
impi_check() {
    local log=$1 config=$2 libdir=$3 prog=$4 np=$5 want n lines bad
    grep -qE "^$prog passed" "$log" || { echo "no '$prog passed' line"; return; }
    case $config in
    dapl | dapl-ud) want='dapl data transfer mode' ;;
    shm:dapl | shm:dapl-ud) want='shm and dapl data transfer modes' ;;
    shm) want='shm data transfer mode' ;;
    tcp) want='tcp data transfer mode' ;;
    esac
    n=$(grep -cE "^\[[0-9]+\] MPI startup\(\): $want\$" "$log")
    [ "$n" = "$np" ] || { echo "$np ranks but $n printed /$want/"; return; }
    # UD: each rank names its provider "with IB UD extension" (RC: without)
    n=$(grep -cE "^\[[0-9]+\] MPI startup\(\): DAPL provider [^ ]+ with IB UD extension\$" "$log")
    case $config in
    *-ud) [ "$n" = "$np" ] || { echo "$np ranks but $n opened their DAPL provider with the IB UD extension"; return; } ;;
    *) [ "$n" = 0 ] || { echo "$n ranks opened their DAPL provider with the IB UD extension"; return; } ;;
    esac
    lines=$(grep -E "^$prog rank=[0-9]+ libdat2=" "$log")
    n=$(echo "$lines" | grep -c .)
    [ "$n" = "$np" ] || { echo "$np ranks but $n reported their libraries"; return; }
    case $config in
    shm | tcp) bad=$(echo "$lines" | grep -v ' libdat2=none provider=none$') ;;
    *)
        if [ "$libdir" = system ]; then
            bad=$(echo "$lines" | grep -vE " libdat2=${impi_ofed_libdir:-/[^ ]*}/libdat2\.so\.2[.0-9]* provider=[^ ]*/libdaplofa\.so\.2[.0-9]*\$")
            [ -n "$bad" ] || bad=$(echo "$lines" | grep -F " libdat2=$impi_repo/")
        else
            bad=$(echo "$lines" | grep -vxE "$prog rank=[0-9]+ libdat2=$libdir/libdat2\.so\.2 provider=none")
        fi
        ;;
    esac
    [ -z "$bad" ] || { echo "unexpected libraries loaded: $bad"; return; }
}
