#!/usr/bin/env bash
# Installs what is needed, builds, and runs the whole test suite (GPU tests report SKIPPED
# where there is no GPU). Needs no display: Qt runs offscreen.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup.sh
source "$ROOT/scripts/setup.sh"
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
say "running the tests"
ctest --test-dir "$TRAINSCOPE_BUILD_DIR" --output-on-failure --parallel "${TRAINSCOPE_TEST_JOBS:-2}" "$@"
