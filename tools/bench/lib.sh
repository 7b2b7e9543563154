# tools/bench/lib.sh -- shell functions shared by bench.sh (host) and guest-bench.sh (guest).
# Every measurement is appended to $RESULTS as one line "result name=<figure> value=<number>";
# the raw output of every run goes to $RAWLOG.

BENCH_QUAL=${BENCH_QUAL:-$((40000 + $$ % 10000))}

# kv KEY < lines: the value of KEY= in each "word key=value ..." line
kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# record NAME VALUE: one result line (nothing if VALUE is empty: that run failed)
record() {
    if [ -n "$2" ]; then
        echo "result name=$1 value=$2" >>"$RESULTS"
        echo "  $1 = $2" >&2
    else
        echo "bench: no value for $1 (see $RAWLOG)" | tee -a "$RAWLOG" >&2
    fi
}

# datperf_run NAME KEY IA HOST ARGS...: a datperf server and client on this machine (HOST
# "loopback": one datperf -l process holding both ends; "local": one datperf process without a
# connection, -t lmr_reg); records the client's KEY as NAME and
# keeps the whole -m line (CPU, context switches, threads) in $RESULTS as "datperf name=NAME ..."
datperf_run() {
    local name=$1 key=$2 ia=$3 host=$4 line
    shift 4
    BENCH_QUAL=$((BENCH_QUAL + 1))
    if [ "$host" = loopback ] || [ "$host" = local ]; then
        local loop=-l
        [ "$host" = local ] && loop=
        # shellcheck disable=SC2086
        line=$(timeout 300 "$DATPERF" -P "$ia" -q "$BENCH_QUAL" $loop -m "$@" 2>>"$RAWLOG" | tee -a "$RAWLOG" |
               grep '^datperf ' | tail -1)
    else
        timeout 300 "$DATPERF" -P "$ia" -q "$BENCH_QUAL" >>"$RAWLOG" 2>&1 &
        local spid=$!
        line=$(timeout 300 "$DATPERF" -P "$ia" -q "$BENCH_QUAL" -h "$host" -m "$@" 2>>"$RAWLOG" | tee -a "$RAWLOG" |
               grep '^datperf ' | tail -1)
        wait $spid || echo "bench: datperf server for $name failed" >>"$RAWLOG"
    fi
    [ -n "$line" ] && echo "datperf name=$name ${line#datperf }" >>"$RESULTS"
    record "$name" "$(echo "$line" | kv "$key")"
}

# server_client NAME SERVER-CMD CLIENT-CMD: a baseline's server in the background, then its
# client (retried once if the server was not listening yet); the client's output on stdout
server_client() {
    local name=$1 server=$2 client=$3 out try
    for try in 1 2; do
        echo "== $name: $server / $client" >>"$RAWLOG"
        sh -c "exec timeout 300 $server" >>"$RAWLOG" 2>&1 &
        local spid=$!
        sleep "${BENCH_SERVER_START:-1}"
        out=$(sh -c "exec timeout 300 $client" 2>&1)
        local rc=$?
        echo "$out" >>"$RAWLOG"
        [ $rc = 0 ] || kill $spid 2>/dev/null
        wait $spid 2>/dev/null
        if [ $rc = 0 ]; then
            echo "$out"
            return 0
        fi
        sleep 1
    done
    return 1
}

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit; if (NR % 2) print v[(NR + 1) / 2]; else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
