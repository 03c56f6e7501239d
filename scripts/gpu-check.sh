#!/usr/bin/env bash
# One call on a GPU machine that has a PyTorch 2.11 install (no network needed): builds the
# engine, kernels, distributed, CLI and tests without the UI against that PyTorch's
# LibTorch, runs the tests labelled `gpu`, and prints a short benchmark table.
#   scripts/gpu-check.sh [tests] [e2e] [attention] [profile] [memory] [distributed] [compiled] [all]
#                                                                  (default: tests e2e)
# Logs and full results go to $OUT (or build/gpu-out).
#   GPU_ARCHS   CUDA architectures to build (default "80;90")
#   CMAKE_ARGS  extra CMake arguments;  GPU_TESTS  a ctest -R regex to run only some GPU tests
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUTDIR="${OUT:-$ROOT/build/gpu-out}"
mkdir -p "$OUTDIR"
BUILD="$ROOT/build/gpu"
sections=("$@"); [ ${#sections[@]} -eq 0 ] && sections=(tests e2e)
want() { for s in "${sections[@]}"; do [ "$s" = "$1" ] || [ "$s" = all ] && return 0; done; return 1; }
say() { printf '\n== %s\n' "$*"; }

# Small build dependencies the GPU machine may lack, carried as Debian packages (.deps/debs,
# made by scripts/gpu-deps.sh) and unpacked into .deps/root.
PREFIXES="$(bash scripts/find-libtorch.sh --no-install)" || exit 1
if [ -d .deps/debs ]; then
    mkdir -p .deps/root
    for d in .deps/debs/*.deb; do dpkg -x "$d" .deps/root; done
    PREFIXES="$PREFIXES;$ROOT/.deps/root/usr"
    export LD_LIBRARY_PATH="$ROOT/.deps/root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi

# Without a git checkout the build takes the commit from .deps/commit (scripts/gpu-deps.sh).
# The commit gpu-deps.sh recorded where the tree was copied from (a copied .git may be stale).
if [ -z "${TRAINSCOPE_GIT_COMMIT:-}" ] && [ -f .deps/commit ]; then
    export TRAINSCOPE_GIT_COMMIT="$(cat .deps/commit)"
fi

say "build ($(nproc) cores)"
t0=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINSCOPE_UI=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="${GPU_ARCHS:-80;90}" -DCMAKE_PREFIX_PATH="$PREFIXES" ${CMAKE_ARGS:-} \
    > "$OUTDIR/configure.log" 2>&1 || { tail -40 "$OUTDIR/configure.log"; exit 1; }
# -k 0: one broken test target should not hide the results of everything else.
if ! cmake --build "$BUILD" --parallel "$(nproc)" -- -k 0 > "$OUTDIR/build.log" 2>&1; then
    echo "BUILD ERRORS:"; grep -E 'error|FAILED' "$OUTDIR/build.log" | head -30
    [ -x "$BUILD/app/trainscope-cli" ] || exit 1
fi
echo "built in $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

status=0
if want tests; then
    say "GPU tests (ctest -L gpu)"
    ctest --test-dir "$BUILD" -L gpu ${GPU_TESTS:+-R "$GPU_TESTS"} --output-on-failure --timeout 600 > "$OUTDIR/ctest-gpu.log" 2>&1 || status=1
    grep -E 'Test +#|tests passed|tests failed|Failed|Passed|SKIPPED|Not Run' "$OUTDIR/ctest-gpu.log" | tail -40
fi
if want e2e; then
    say "end-to-end: TrainScope vs the PyTorch reference"
    bash scripts/bench-e2e.sh "$BUILD/app/trainscope-cli" "$OUTDIR" || status=1
fi
if want attention && [ -x scripts/bench-attention.sh ]; then
    say "attention benchmark"
    bash scripts/bench-attention.sh "$BUILD/app/trainscope-cli" "$OUTDIR" || status=1
fi
if want profile; then
    say "profiler: the course's questions, overhead, NVTX"
    # Its many reports travel back as one archive (the device tool returns few files).
    rm -rf "$ROOT/build/gpu-profile"
    bash scripts/profile-evidence.sh "$BUILD/app/trainscope-cli" "$ROOT/build/gpu-profile" || status=1
    tar czf "$OUTDIR/profile-evidence.tgz" --exclude='*.db' -C "$ROOT/build" gpu-profile
fi
if want memory; then
    say "memory: peaks, predicted against measured, frontier, memory_viz"
    rm -rf "$ROOT/build/gpu-memory"
    bash scripts/memory-evidence.sh "$BUILD/app/trainscope-cli" "$ROOT/build/gpu-memory" || status=1
    tar czf "$OUTDIR/memory-evidence.tgz" --exclude='*.db' --exclude='*.pickle' -C "$ROOT/build" gpu-memory
fi
if want distributed; then
    say "distributed: TrainScope beside torch.distributed, PyTorch DDP and ZeroRedundancyOptimizer"
    # The ranks inherit this environment as it is (NCCL_NVLS_ENABLE=0 and the like). Its outputs
    # travel back as one archive. PARTS (see the script) splits it over several calls: the
    # directory is only emptied when every part runs.
    [ -z "${PARTS:-}" ] && rm -rf "$ROOT/build/gpu-distributed"
    bash scripts/distributed-evidence.sh "$BUILD/app/trainscope-cli" "$ROOT/build/gpu-distributed" || status=1
    tar czf "$OUTDIR/distributed-evidence.tgz" -C "$ROOT/build" gpu-distributed
fi
if want compiled; then
    say "compiled mode: TrainScope eager and compiled beside PyTorch eager and torch.compile"
    # SIZES, PRECISIONS, ATTENTIONS, REFERENCE_MODES, STEPS: see scripts/compiled-evidence.sh.
    bash scripts/compiled-evidence.sh "$BUILD/app/trainscope-cli" "$OUTDIR" || status=1
fi
exit $status
