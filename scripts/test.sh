#!/usr/bin/env bash
# Installs what is needed, builds, and runs the whole test suite (GPU tests report SKIPPED
# where there is no GPU). Needs no display: Qt runs offscreen.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=setup.sh
source "$ROOT/scripts/setup.sh"
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"

# Holistic Trace Analysis, for the test that reads Kineto's trace with it (tst_profiler_hta):
# its parser alone, with --no-deps (the package asks for JupyterLab, Plotly, pydot and pytest,
# which the parser does not import), into LibTorch's venv where set-up made one (numpy is
# there), else into a small venv of its own. About 100 MB (pandas), a few seconds from pip's
# cache. The test then fails, rather than skips, without it.
install_hta() {
    local venv="${TRAINSCOPE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/trainscope/venv-torch-2.11.0}"
    [ -x "$venv/bin/python" ] || venv="${XDG_CACHE_HOME:-$HOME/.cache}/trainscope/venv-hta-0.5.0"
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    if ! "$venv/bin/python" -c "import hta.common.trace" 2>/dev/null; then
        say "installing HolisticTraceAnalysis 0.5.0 (its parser) into $venv"
        "$venv/bin/python" -m pip install -q numpy pandas psutil pyyaml
        "$venv/bin/python" -m pip install -q --no-deps "HolisticTraceAnalysis==0.5.0" 2>&1 |
            grep -v "requires\|dependency resolver" >&2 || true
        "$venv/bin/python" -c "import hta.common.trace"
    fi
    export TRAINSCOPE_HTA_PYTHON="$venv/bin/python" TRAINSCOPE_REQUIRE_HTA=1
}
install_hta
say "running the tests"
ctest --test-dir "$TRAINSCOPE_BUILD_DIR" --output-on-failure --parallel "${TRAINSCOPE_TEST_JOBS:-2}" "$@"
