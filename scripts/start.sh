#!/usr/bin/env bash
# Installs what is needed, builds, and starts TrainScope: the window where there is a display,
# otherwise a short benchmark with the CLI (on the GPU when there is one, else the CPU).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup.sh
source "$ROOT/scripts/setup.sh"
BIN="$TRAINSCOPE_BUILD_DIR/app"
if [ -x "$BIN/trainscope" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
    say "starting the TrainScope window"
    exec "$BIN/trainscope" "$@"
fi
if [ -x "$BIN/trainscope" ]; then
    say "no display found (DISPLAY is unset): running a short benchmark with trainscope-cli instead."
    say "With a display, run $BIN/trainscope — or see it headless: xvfb-run -a $BIN/trainscope"
else
    say "the window was not built (Qt 6 missing?): running a short benchmark with trainscope-cli."
fi
"$BIN/trainscope-cli" info
exec "$BIN/trainscope-cli" bench --size tiny --context-length 64 --warmup 2 --steps 5 --mode forward,train "$@"
