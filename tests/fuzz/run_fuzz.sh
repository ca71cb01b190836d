#!/bin/sh
# run_fuzz.sh — one bounded pass of a libFuzzer target, as `meson test --suite fuzz` and CI
# run it: replay every committed input of its corpus once, then fuzz from them for
# $PARLEY_FUZZ_SECONDS (default 10) with a fixed seed. Any crash, sanitizer report, leak,
# input slower than 10 s or memory over 2 GiB fails (exit 1), naming the input that did it.
# It does not minimize or commit anything: see tests/fuzz/README.md for that.
# With `replay` last it only replays: a known/ input, as a test that must fail.
#
#   usage: run_fuzz.sh FUZZER CORPUS_DIR WORK_DIR MAX_LEN [replay]
#          run_fuzz.sh FUZZER INPUT_FILE WORK_DIR MAX_LEN replay
set -u
bin=$1 corpus=$2 work=$3 max_len=$4 mode=${5:-fuzz}
secs=${PARLEY_FUZZ_SECONDS:-10}
name=$(basename "$bin")
limits="-timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1"

fail() {
    echo "$name: FAILED while $1"
    for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
        [ -f "$a" ] || continue
        echo "$name: the input is $a ($(wc -c <"$a") bytes); reproduce with: $bin $a"
        echo "$name: once fixed, commit it as corpus/<target>/regress-<what> (tests/fuzz/README.md)"
    done
    exit 1
}

rm -rf "$work" || exit 1
mkdir -p "$work/new" "$work/tmp" || exit 1
# Harnesses whose entry point reads a path write their input under here (fuzz_input.h).
PARLEY_FUZZ_TMP=$work/tmp
export PARLEY_FUZZ_TMP
if [ -f "$corpus" ]; then set -- "$corpus"; else set -- "$corpus"/*; fi
[ -f "$1" ] || { echo "$name: no committed inputs in $corpus"; exit 1; }
echo "$name: replaying the $# committed inputs of $corpus"
"$bin" $limits -artifact_prefix="$work/" "$@" >"$work/replay.log" 2>&1 || {
    cat "$work/replay.log"
    fail "replaying committed inputs"
}
[ "$mode" = replay ] && { echo "$name: ok, replayed"; exit 0; }
echo "$name: fuzzing for ${secs}s (seed 1, inputs up to $max_len bytes)"
"$bin" $limits -seed=1 -max_total_time="$secs" -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/new" "$corpus" || fail "fuzzing"
for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -f "$a" ] && fail "fuzzing (an artifact was left)"
done
echo "$name: ok, $(ls "$work/new" | wc -l) new inputs in $work/new (not committed)"
exit 0
