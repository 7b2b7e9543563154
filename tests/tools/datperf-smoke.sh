#!/bin/sh
# tests/tools/datperf-smoke.sh BIN_DIR [IA_NAME]
#
# Runs BIN_DIR/datperf (DATPERF=datperf2: the DAT 2.0 build, on libdat2.so.2) server and client pairs on this host (IA default "shm") for a few
# iterations of every test in polling, blocking and CNO mode with payload checks (-c), and -a over
# small sizes, and the one-process lmr_reg; each pair must exit 0 and the client must print every expected key=value
# field. BIN_DIR/rawperf, if there, runs each baseline briefly the same way (not with DATPERF=datperf2).
# Not a timed test: no threshold on any number. DATPERF_SMOKE_TESTS limits the tests run.
set -u
bin=$1
ia=${2:-shm}
tests=${DATPERF_SMOKE_TESTS:-send_lat write_lat write_bw read_bw send_bw lmr_reg}
prog=${DATPERF:-datperf}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
qual=$((30000 + $$ % 20000))
pass=0 failed=0

ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
echo "=== $prog smoke test on $ia"

# has_fields FILE FIELD...: every FIELD= appears on every datperf line of FILE, with a number
has_fields() {
    f=$1
    shift
    grep -q '^datperf ' "$f" || return 1
    for k in "$@"; do
        if grep '^datperf ' "$f" | grep -Ev " $k=-?[0-9.]+( |\$)" | grep -q .; then
            echo "     missing or not a number: $k" >&2
            return 1
        fi
    done
}

# pair NAME CLIENT-ARGS...: server and client, both must exit 0; client output in $out/NAME
pair() {
    name=$1
    shift
    qual=$((qual + 1))
    timeout 120 "$bin/$prog" -P "$ia" -q "$qual" >"$out/$name.srv" 2>&1 &
    spid=$!
    timeout 120 "$bin/$prog" -P "$ia" -q "$qual" -h 127.0.0.1 -m "$@" >"$out/$name" 2>&1
    crc=$?
    wait $spid
    src=$?
    if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
        bad "$name: client exit $crc, server exit $src"
        sed 's/^/     client: /' "$out/$name"
        sed 's/^/     server: /' "$out/$name.srv"
        return 1
    fi
}

common="cpu_us_per_op vcsw_per_op ivcsw_per_op threads srv_cpu_us_per_op srv_vcsw_per_op srv_ivcsw_per_op srv_threads
        other_cs_per_op srv_other_cs_per_op"
lat="lat_min_us lat_median_us lat_p99_us lat_max_us lat_avg_us"
bw="bw_MBps msg_rate_Mps window"

for t in $tests; do
    [ "$t" = lmr_reg ] && continue # one process, below
    case $t in *_lat) keys="$lat" ;; *) keys="$bw" ;; esac
    for mode in -p -b -C; do
        name="$t$mode"
        if pair "$name" -t "$t" "$mode" -c -n 20 -W 2 -s 4096 -w 4; then
            case $mode in -p) m=poll ;; -b) m=block ;; -C) m=cno ;; esac
            # shellcheck disable=SC2086
            if has_fields "$out/$name" $keys $common size iters && grep -q "^datperf .* mode=$m " "$out/$name"; then
                ok "$name"
            else
                bad "$name: fields"
                cat "$out/$name"
            fi
        fi
    done
done

# -u: send_lat with only every 4th send signaled (the rest suppressed), both modes, payloads
# checked; the client reports signal_every
case " $tests " in *" send_lat "*)
    for mode in -p -b; do
        name="send_lat-u4$mode"
        if pair "$name" -t send_lat "$mode" -u 4 -c -n 21 -W 3; then
            # shellcheck disable=SC2086
            if has_fields "$out/$name" $lat $common signal_every; then ok "$name"; else bad "$name: fields"; cat "$out/$name"; fi
        fi
    done
    ;;
esac

# -M shm: both sides' buffers in a memfd, registered as DAT_MEM_TYPE_SHARED_VIRTUAL (on shm the
# RDMA then copies through the initiator's own mapping); payloads checked, mem=shm reported
for t in write_bw read_bw write_lat; do
    case " $tests " in *" $t "*) ;; *) continue ;; esac
    case $t in *_lat) keys="$lat" ;; *) keys="$bw" ;; esac
    name="$t-Mshm"
    if pair "$name" -t "$t" -M shm -c -n 20 -W 2 -s 65536 -w 4; then
        # shellcheck disable=SC2086
        if has_fields "$out/$name" $keys $common && grep -q '^datperf .* mem=shm ' "$out/$name"; then ok "$name"; else
            bad "$name: fields"
            cat "$out/$name"
        fi
    fi
done

# -l: both ends in one process and one thread (latency tests and send_bw, polling), payloads
# checked, every size of -a up to 4 KiB; the client's line says loopback=1
for t in send_lat write_lat send_bw; do
    case " $tests " in *" $t "*) ;; *) continue ;; esac
    case $t in *_lat) keys="$lat" ;; *) keys="$bw" ;; esac
    name="$t-loopback"
    qual=$((qual + 1))
    if timeout 120 "$bin/$prog" -P "$ia" -q "$qual" -l -m -t "$t" -a -s 4096 -c -n 20 -W 2 -w 4 >"$out/$name" 2>&1; then
        n=$(grep -c '^datperf .* loopback=1 ' "$out/$name")
        # shellcheck disable=SC2086
        if [ "$n" = 12 ] && has_fields "$out/$name" $keys $common; then ok "$name"; else
            bad "$name: $n lines with loopback=1, or fields"
            cat "$out/$name"
        fi
    else
        bad "$name: exit $?"
        cat "$out/$name"
    fi
done

# -t lmr_reg: no connection, one process registering and freeing one buffer; heap and -M shm
# memory, every size of -a up to 4 KiB (12 lines each), the rate and its inverse reported
for mem in heap shm; do
    case " $tests " in *" lmr_reg "*) ;; *) continue ;; esac
    name="lmr_reg-M$mem"
    if timeout 120 "$bin/$prog" -P "$ia" -t lmr_reg -M "$mem" -a -s 4096 -n 20 -W 2 -m >"$out/$name" 2>&1; then
        n=$(grep -c "^datperf test=lmr_reg .* mem=$mem " "$out/$name")
        # shellcheck disable=SC2086
        if [ "$n" = 12 ] && has_fields "$out/$name" reg_per_s reg_us $common size iters; then ok "$name"; else
            bad "$name: $n lines with mem=$mem, or fields"
            cat "$out/$name"
        fi
    else
        bad "$name: exit $?"
        cat "$out/$name"
    fi
done

# -a: one line per size, 2 B up to the -s bound (2, 4, ..., 1024: 10 lines)
first=${tests%% *}
if pair all -t "$first" -a -s 1024 -c -n 5 -W 1 -w 2; then
    n=$(grep -c '^datperf ' "$out/all")
    sizes=$(sed -n 's/.* size=\([0-9]*\) .*/\1/p' "$out/all" | tr '\n' ' ')
    if [ "$n" = 10 ] && [ "$sizes" = "2 4 8 16 32 64 128 256 512 1024 " ]; then ok "-a $first: sizes $sizes"; else
        bad "-a $first: $n lines, sizes $sizes"
    fi
fi

# bad usage: exit status 2, no connection attempted
if "$bin/$prog" -t no_such_test >/dev/null 2>&1; then bad "unknown test accepted"; else
    [ $? = 2 ] && ok "unknown test: usage, exit 2" || bad "unknown test: wrong exit status"
fi
if "$bin/$prog" -M no_such_memory >/dev/null 2>&1; then bad "unknown -M accepted"; else
    [ $? = 2 ] && ok "unknown -M: usage, exit 2" || bad "unknown -M: wrong exit status"
fi
for args in "-t write_bw" "-t send_lat -b" "-t lmr_reg" "-t send_lat -C"; do
    # shellcheck disable=SC2086
    if "$bin/$prog" -l $args >/dev/null 2>&1; then bad "-l $args accepted"; else
        [ $? = 2 ] && ok "-l $args: usage, exit 2" || bad "-l $args: wrong exit status"
    fi
done
if "$bin/$prog" -t lmr_reg -h 127.0.0.1 >/dev/null 2>&1; then bad "-t lmr_reg -h accepted"; else
    [ $? = 2 ] && ok "-t lmr_reg -h: usage, exit 2" || bad "-t lmr_reg -h: wrong exit status"
fi

if [ "$prog" = datperf ] && [ -x "$bin/rawperf" ]; then
    for t in spin memcpy cma_write cma_read; do
        case $t in spin) keys="$lat" args="-n 1000" ;; *) keys="bw_MBps msg_rate_Mps" args="-n 10" ;; esac
        # shellcheck disable=SC2086
        if "$bin/rawperf" $t $args >"$out/raw" 2>&1 && sed -i 's/^rawperf /datperf /' "$out/raw" &&
            has_fields "$out/raw" $keys; then ok "rawperf $t"; else bad "rawperf $t"; cat "$out/raw"; fi
    done
fi

echo "$prog: $pass passed, $failed failed"
[ $failed = 0 ]
