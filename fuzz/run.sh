#!/bin/bash
# fuzz/run.sh -- builds the fuzz targets (fuzz/targets, libFuzzer through libfuzzer-sys) with
# the stable compiler's SanitizerCoverage flags, replays each target's corpus (fuzz/corpus/T),
# then runs each target SECONDS seconds (one process per target, one after the other) and
# prints one line per target: executions, rate, corpus size, and FAIL with the input that
# crashed. New inputs go to build/fuzz/corpus/T (the committed seeds are only read); a crash,
# timeout or out-of-memory input to build/fuzz/artifacts/T.
#
#   fuzz/run.sh SECONDS [TARGET...]      (`make check-fuzz`: 5 s each; `make fuzz`: FUZZ_SECONDS)
#   fuzz/run.sh --build                  only build
set -u
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
triple=$(rustc -vV | sed -n 's/^host: //p')
target_dir=${FUZZ_TARGET_DIR:-$PWD/build/fuzz/target}
out=$PWD/build/fuzz
# Coverage instrumentation as cargo-fuzz asks for it, all of it stable codegen options; given
# with --target so that build scripts and proc macros are built without it.
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions -Coverflow-checks"

all_targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^libdat-fuzz$')

echo "fuzz: building the targets (libfuzzer-sys, $triple, release with overflow checks)"
$CARGO build --release --manifest-path fuzz/Cargo.toml --target "$triple" --target-dir "$target_dir" ||
    { echo "FAIL fuzz: the targets did not build"; exit 1; }
[ "${1:-}" = --build ] && exit 0

seconds=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
targets=${*:-$all_targets}
bin=$target_dir/$triple/release
failed=
for t in $targets; do
    mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$out/logs"
    log=$out/logs/$t.log
    # Replay: every committed seed and every input found before, once.
    if ! "$bin/$t" -runs=0 "fuzz/corpus/$t" "$out/corpus/$t" >"$log.replay" 2>&1; then
        echo "FAIL fuzz $t: an input of the corpus fails (log: $log.replay)"
        tail -n 30 "$log.replay"
        failed="$failed $t"
        continue
    fi
    "$bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/artifacts/$t/" "$out/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    corpus=$(ls "$out/corpus/$t" | wc -l)
    if [ $rc != 0 ]; then
        echo "FAIL fuzz $t: exit $rc after ${runs:-?} executions (log: $log)"
        grep -m1 -A40 -E '^(==[0-9]+== ERROR|thread .* panicked)' "$log" | head -n 40
        ls "$out/artifacts/$t"
        failed="$failed $t"
        continue
    fi
    printf 'fuzz %-20s %10s executions in %s s (%s/s), corpus %s (+%s seeds)\n' \
        "$t" "$runs" "$seconds" "$rate" "$corpus" "$(ls "fuzz/corpus/$t" | wc -l)"
done
[ -z "$failed" ] || { echo "FAIL fuzz:$failed"; exit 1; }
