#!/usr/bin/env bash
# The long fuzz run: every target in tests/fuzz for SECONDS each (default 600), one after the
# other, with a fresh random seed each time (printed, so a failure can be replayed with
# --seed). A failing input is saved as build/default/tests/fuzz/<target>-crash.bin.
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
seconds=${1:-600}
build=${2:-build/default}
root=$(cd "$(dirname "$0")/.." && pwd)
ninja -C "$build" fuzz_sweep fuzz_result fuzz_attention fuzz_cli_lists fuzz_stored_run
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# fuzz_stored_run opens the window offscreen, with glibc's heap checks.
export QT_QPA_PLATFORM=offscreen MALLOC_CHECK_=3
seeds=$root/tests/fuzz/seeds
declare -A corpus=(
    [fuzz_sweep]="$root/resources/sweeps $root/resources/presets $seeds/sweep"
    [fuzz_result]="$seeds/result"
    [fuzz_attention]="$seeds/attention"
    [fuzz_cli_lists]="$seeds/cli"
    [fuzz_stored_run]="$seeds/stored-inputs"
)
for target in fuzz_sweep fuzz_result fuzz_attention fuzz_cli_lists fuzz_stored_run; do
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    echo "$target: --seed $seed for ${seconds}s"
    # shellcheck disable=SC2086  # the corpus is a list of folders
    "$build/tests/fuzz/$target" --seconds "$seconds" --seed "$seed" \
        --crash-file "$build/tests/fuzz/$target-crash.bin" ${corpus[$target]}
done
