#!/bin/bash
# tools/bench/callgrind.sh -- `make bench-callgrind`: instructions per steady-state operation.
# For each datperf configuration below, the client runs under valgrind --tool=callgrind (all
# its threads, the library's included) for N and for 2N measured iterations, the server
# natively; (Ir(2N) - Ir(N)) / N is the cost of one operation with set-up and tear-down
# cancelled out, and the same difference per function shows where the instructions go.
# A latency iteration is one message each way (post send, its completion, the peer's message's
# receive completion, the receive re-posted); a bandwidth op is one post and its completion.
# Polling runs count the empty dat_evd_dequeue spins too, so they vary from run to run.
# Each configuration also gets the inclusive instructions per call of every DAT data-path call
# the client made (post, dequeue, wait), from the 2N profile. First, tools/bench/opcost.c (one
# process, two endpoints connected over shm: no peer's timing in the count) gives the cost of
# an empty dat_evd_dequeue and of one message's full cycle, each counted alone
# (--toggle-collect on its function).
# CALLGRIND_ITERS sets N (default 2000); CALLGRIND_REUSE=1 re-reads the profiles of an earlier
# run instead of running again. Report: build/bench/callgrind.md; its summary (one row per count,
# the table BENCHMARKS.md shows) also in build/bench/callgrind-table.md.
# tools/bench/guest-bench.sh runs it on verbs in a guest, for both DAT 2.0 libraries, with
# DATPERF (the datperf binary), CALLGRIND_IA / CALLGRIND_HOST (IA name and server address),
# CALLGRIND_OUT (directory of the report and profiles) and CALLGRIND_CONFIGS (';'-separated).
# CALLGRIND_OPCOST_FACES picks the faces opcost counts (default "dat dat2"; empty: none).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${CALLGRIND_OUT:-$ROOT/build/bench}
mkdir -p "$OUT"
DATPERF=${DATPERF:-$ROOT/build/bin/datperf}
IA=${CALLGRIND_IA:-shm} HOST=${CALLGRIND_HOST:-127.0.0.1}
RAWLOG=$OUT/callgrind.log
: >"$RAWLOG"
N=${CALLGRIND_ITERS:-2000}
TOP=${CALLGRIND_TOP:-12}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/dat-bench-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
    { echo "bench-callgrind: valgrind (callgrind_annotate) not installed" >&2; exit 1; }
QUAL=$((50000 + $$ % 10000))
SUMMARY=$OUT/callgrind-table.md
: >"$SUMMARY"
face_name() { [ "$1" = dat2 ] && echo "DAT 2.0 face" || echo "DAT 1.2 face"; }

configs=(
    "send_lat -b -s 8"
    "send_lat -p -s 8"
    "write_bw -b -s 64 -w 16"
    "send_bw -b -s 64 -w 16"
)
[ -n "${CALLGRIND_CONFIGS:-}" ] && IFS=';' read -r -a configs <<<"$CALLGRIND_CONFIGS"

# profile TAG ITERS ARGS...: one client run under callgrind; prints the profile's path
profile() {
    local tag=$1 iters=$2 file
    shift 2
    file=$OUT/callgrind.$tag.$iters.out
    if [ "${CALLGRIND_REUSE:-0}" = 1 ] && [ -s "$file" ]; then # re-annotate the profiles there
        echo "$file"
        return
    fi
    QUAL=$((QUAL + 1))
    timeout 600 "$DATPERF" -P "$IA" -q "$QUAL" >>"$RAWLOG" 2>&1 &
    local spid=$!
    timeout 600 valgrind -q --tool=callgrind --callgrind-out-file="$file" \
        "$DATPERF" -P "$IA" -q "$QUAL" -h "$HOST" -m -n "$iters" -W 20 "$@" >>"$RAWLOG" 2>&1 ||
        echo "bench-callgrind: client run failed ($tag, $iters)" >&2
    wait $spid
    echo "$file"
}

# per-function exclusive instruction counts: "count<TAB>function", one line per function name
functions() {
    callgrind_annotate --inclusive=no --tree=none --auto=no --threshold=100 "$1" 2>/dev/null |
        awk '/^ *[0-9,]+ +\( *[0-9.]+%\) +[^ =]/ && !/PROGRAM TOTALS/ {
            n = $1; gsub(",", "", n); sub(/^ *[0-9,]+ +\([^)]*\) +/, "")
            sub(/^[^:]*:/, "")                 # drop the source file
            sub(/\[[^]]*\/([^]\/]*)\]$/, "")  # drop the object path (kept: the function)
            sub(/ +$/, "")
            print n "\t" $0 }' |
        awk -F '\t' '{ sum[$2] += $1 } END { for (f in sum) print sum[f] "\t" f }' # inlined copies: one row
}
total() { sed -n 's/^summary: *//p; s/^totals: *//p' "$1" | head -1 | awk '{ print $1 }'; }

# per_call FILE FUNC: "calls<TAB>inclusive instructions per call" of FUNC, from the call records
# of its callers (cfn= / calls= lines; names are given once per id, then the id alone)
per_call() {
    awk -v want="$2" '
        /^c?fn=\(/ { s = $0; sub(/^c?fn=/, "", s); p = index(s, ")"); id = substr(s, 1, p)
                     if (length(s) > p + 1) name[id] = substr(s, p + 2)
                     if ($0 ~ /^cfn=/) callee = id; next }
        /^calls=/ { split($0, c, /[= ]/); n = c[2]; getline; split($0, d, " ")
                    if (name[callee] == want) { calls += n; cost += d[2] }; next }
        END { if (calls) printf "%d\t%.0f\n", calls, cost / calls }' "$1"
}

# inclusive FILE FUNC: FUNC's inclusive instruction count (its own symbol's record, inlined
# copies' records aside; per_call's call records count some inlined calls twice). Run from /:
# under the source tree callgrind_annotate shortens paths and puts the object on another record.
inclusive() {
    (cd / && callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null) | grep -F ":$2 [" | head -1 |
        awk '{ gsub(",", "", $1); print $1 }'
}

# opcost FACE FUNCTION: instructions per op of opcost's FUNCTION on FACE (dat: libdat.so.1,
# dat2: libdat2.so.2), the inclusive cost per call of each DAT call in it, then its top functions
OPCOST_N=${CALLGRIND_OPCOST_OPS:-10000}
opcost() {
    local file=$OUT/callgrind.opcost.$1.$2.out t
    if [ "${CALLGRIND_REUSE:-0}" != 1 ] || [ ! -s "$file" ]; then
        QUAL=$((QUAL + 1))
        timeout 600 valgrind -q --tool=callgrind --collect-atstart=no --toggle-collect="$2" \
            --callgrind-out-file="$file" "$OUT/opcost-$1" -q "$QUAL" -n "$OPCOST_N" >>"$RAWLOG" 2>&1 ||
            { echo "### opcost ($1) $2: run failed (see $RAWLOG)"; return; }
    fi
    t=$(total "$file")
    echo "### opcost ($1) $2: $((t / OPCOST_N)) instructions per op"
    local what="an empty \`dat_evd_dequeue\`"
    [ "$2" = message_cycles ] && what="a message cycle (post receive, post 8 B send, dequeue both completions)"
    [ "$2" = waited_cycles ] && what="the same cycle, \`dat_evd_wait\` taking the completions"
    echo "| opcost, $(face_name "$1"): $what | $((t / OPCOST_N)) |" >>"$SUMMARY"
    echo
    echo "| DAT call | instructions per call |"
    echo "|---|---:|"
    # calls per op: empty_polls one dequeue; message_cycles (waited_cycles) one post of each
    # kind, two dequeues (waits)
    local takes="dat_evd_dequeue:2"
    [ "$2" = empty_polls ] && takes="dat_evd_dequeue:1"
    [ "$2" = waited_cycles ] && takes="dat_evd_wait:2"
    local per_call
    for f in dat_ep_post_send:1 dat_ep_post_recv:1 $takes; do
        per_call=$(inclusive "$file" "${f%:*}" | awk -v n=$((OPCOST_N * ${f#*:})) '$1 > 0 { printf "%.1f", $1 / n }')
        [ -n "$per_call" ] || continue
        echo "| \`${f%:*}\` | $per_call |"
        # the summary keeps each post's cost in the message cycle, and the empty dequeue's
        [ "$2" = message_cycles ] && [ "${f%:*}" != dat_evd_dequeue ] &&
            echo "| opcost, $(face_name "$1"): one \`${f%:*}\` of the cycle | $per_call |" >>"$SUMMARY"
        [ "$2" = empty_polls ] &&
            echo "| opcost, $(face_name "$1"): one empty \`${f%:*}\`, the call alone | $per_call |" >>"$SUMMARY"
    done
    echo
    echo "| instructions per op | function |"
    echo "|---:|---|"
    functions "$file" | awk -F '\t' -v n="$OPCOST_N" '{ d = $1 / n; if (d >= 1) printf "%.1f\t%s\n", d, $2 }' |
        sort -t "$(printf '\t')" -k1,1gr | head -"$TOP" | awk -F '\t' '{ printf "| %s | `%s` |\n", $1, $2 }'
    echo
}
# opcost-dat against include/dat and -ldat, opcost-dat2 against include/dat2 and -ldat2
for face in dat dat2; do
    flags=-ldat
    [ $face = dat2 ] && flags="-DDATPERF_DAT2 -ldat2"
    # shellcheck disable=SC2086
    ${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -Werror -I"$ROOT/include" -o "$OUT/opcost-$face" \
        "$ROOT/tools/bench/opcost.c" -L"$ROOT/build/lib" -Wl,-rpath,"$ROOT/build/lib" $flags ||
        { echo "bench-callgrind: opcost ($face) does not build" >&2; exit 1; }
done

{
    echo "Instructions per operation (valgrind callgrind), shm IA on this host."
    echo
    echo "One process, two endpoints connected over shm (tools/bench/opcost.c, $OPCOST_N ops each):"
    echo "an empty dat_evd_dequeue, and one message's cycle (post receive, post 8-byte send, dequeue"
    echo "both completions: the work of both sides), and the same cycle with dat_evd_wait taking the"
    echo "completions (already there when waited for)."
    echo
    for face in ${CALLGRIND_OPCOST_FACES-dat dat2}; do
        opcost "$face" empty_polls
        opcost "$face" message_cycles
        opcost "$face" waited_cycles
    done
    echo "Instructions per steady-state operation (valgrind callgrind, client process, all threads;"
    echo "(Ir(2N) - Ir(N)) / N with N = $N; IA $IA, $(basename "$DATPERF"))"
    echo
    for c in "${configs[@]}"; do
        tag=$(echo "$c" | tr -d ' -')
        # shellcheck disable=SC2086
        one=$(profile "$tag" "$N" -t $c)
        # shellcheck disable=SC2086
        two=$(profile "$tag" $((2 * N)) -t $c)
        t1=$(total "$one") t2=$(total "$two")
        if [ -z "$t1" ] || [ -z "$t2" ]; then
            echo "### datperf -t $c: no profile (see $RAWLOG)"
            continue
        fi
        echo "### datperf -t $c: $(( (t2 - t1) / N )) instructions per operation"
        # (a polling run's count follows how many empty polls the timing gave: not in the summary)
        [[ " $c " == *" -p "* ]] ||
            echo "| \`$(basename "$DATPERF") -t $c\`, client, per operation | $(( (t2 - t1) / N )) |" >>"$SUMMARY"
        echo
        # Inclusive cost of each DAT call the client made (2N run; polling counts empty polls
        # and the successful ones together).
        echo "| DAT call | calls | instructions per call |"
        echo "|---|---:|---:|"
        for f in dat_ep_post_send dat_ep_post_recv dat_ep_post_rdma_write dat_ep_post_rdma_read dat_evd_dequeue dat_evd_wait \
            dat_lmr_sync_rdma_write dat_lmr_sync_rdma_read; do
            per_call "$two" "$f" | awk -F '\t' -v f="$f" '{ printf "| `%s` | %s | %s |\n", f, $1, $2 }'
        done
        echo
        echo "| instructions per op | function |"
        echo "|---:|---|"
        join -t "$(printf '\t')" -1 2 -2 2 -a 2 -e 0 -o 0,1.1,2.1 \
            <(functions "$one" | sort -t "$(printf '\t')" -k2,2) <(functions "$two" | sort -t "$(printf '\t')" -k2,2) |
            awk -F '\t' -v n="$N" '{ d = ($3 - $2) / n; if (d > 0) printf "%.1f\t%s\n", d, $1 }' |
            sort -t "$(printf '\t')" -k1,1gr | head -"$TOP" |
            awk -F '\t' '{ printf "| %s | `%s` |\n", $1, $2 }'
        echo
    done
} | tee "$OUT/callgrind.md"
{
    commit=$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)
    [ -n "$(git status --porcelain -uno 2>/dev/null)" ] && commit="$commit+changes"
    echo "run: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, IA $IA, $N and $((2 * N)) datperf iterations;" \
        "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r)"
    echo
    echo "| counted | instructions |"
    echo "|---|---:|"
    cat "$SUMMARY"
} >"$SUMMARY.tmp" && mv "$SUMMARY.tmp" "$SUMMARY"
cat "$SUMMARY"
