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

# pytorch.org/memory_viz's own MemoryViz.js, for tst_memory_viz_js (a million-entry snapshot
# through the viewer's unpickler under Node). The torch wheels do not ship it; Debian's archive
# has PyTorch's source (trixie's 2.6.0, 27 MB, checked by its SHA-256): the one file is taken out
# of it into the cache, beside the venv. The test then fails, rather than skips, without it.
install_memory_viz() {
    local dir="${XDG_CACHE_HOME:-$HOME/.cache}/trainscope/memory-viz-2.6.0"
    local js="$dir/MemoryViz.js"
    if [ ! -s "$js" ]; then
        local url="http://deb.debian.org/debian/pool/main/p/pytorch/pytorch_2.6.0+dfsg.orig.tar.xz"
        local sha="099a9601bc40d67656e75735c44abedb0fbe92d08817852ab7472eebb7e6ddff"
        say "fetching memory_viz's MemoryViz.js from Debian's PyTorch 2.6.0 source"
        mkdir -p "$dir"
        local tmp
        tmp="$(mktemp -d)"
        curl -fsSL --retry 3 -o "$tmp/src.tar.xz" "$url"
        echo "$sha  $tmp/src.tar.xz" | sha256sum --check --quiet
        tar -xJf "$tmp/src.tar.xz" -C "$tmp" --wildcards '*/torch/utils/viz/MemoryViz.js'
        mv "$(find "$tmp" -name MemoryViz.js | head -n 1)" "$js.part" && mv "$js.part" "$js"
        rm -rf "$tmp"
    fi
    export TRAINSCOPE_MEMORY_VIZ_JS="$js"
}
install_memory_viz
# torch.compile's compiled graphs (the tests that compile on the CPU: the user's model, FSDP2
# with --compile) kept beside the venv, so a second run of the suite reuses them (about half
# of those tests' time); a fresh machine compiles them once.
export TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/trainscope/torchinductor-2.11.0}"
# Inductor probes the CPU's vector instruction sets once per compiling process, by building a
# small library for each and loading it in a fresh `import torch` subprocess (2 s each on CI's
# cores; six of them in every test process that compiles, two ranks' worth in FSDP2's). The
# answer is the machine's and does not change between tests: trusting the CPU's flags skips
# three of the six probes (the AVX-512 extensions' probes still run). What is compiled and
# tested is the same.
export TORCHINDUCTOR_VEC_ISA_OK="${TORCHINDUCTOR_VEC_ISA_OK:-1}"
say "running the tests"
started=$SECONDS
rc=0
ctest --test-dir "$TRAINSCOPE_BUILD_DIR" --output-on-failure --parallel "${TRAINSCOPE_TEST_JOBS:-2}" "$@" || rc=$?
say "the tests took $((SECONDS - started)) s (exit $rc)"
exit "$rc"
